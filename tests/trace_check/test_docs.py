"""docs/trace-events.md is generated from the spec tables and must be current."""

from __future__ import annotations

from goblueprint.trace import docs, spec


def test_committed_doc_is_current():
    assert docs.DOC_PATH.read_text(encoding="utf-8") == docs.render(), (
        "docs/trace-events.md is stale: run python -m goblueprint.trace.docs"
    )


def test_doc_lists_every_named_event_once():
    text = docs.render()
    for typ, es in enumerate(spec.SPECS):
        if es.name:
            assert text.count(f"| {typ} | {es.name} |") == 1


def test_check_flag_detects_a_stale_file(tmp_path):
    out = tmp_path / "events.md"
    assert docs.main(["--output", str(out), "--check"]) == 1
    assert docs.main(["--output", str(out)]) == 0
    assert docs.main(["--output", str(out), "--check"]) == 0
    out.write_text(out.read_text() + "edit\n")
    assert docs.main(["--output", str(out), "--check"]) == 1
