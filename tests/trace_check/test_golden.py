"""Go's own golden trace tests through `goblueprint trace check`.

Every ``internal/trace/testdata/tests/*.test`` of Go 1.27.3 (bundled) and of Go
1.22.10 (its folder is ``internal/trace/v2/testdata/tests``): the verdict must meet
the file's expectation.  The text-form encoder is checked byte for byte against
the wire bytes Go's testtrace.ParseFile makes of the same file, and our verdicts
against Go's reader's.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from goblueprint import toolchain
from goblueprint.cli import main
from goblueprint.cli.trace_check import check_file
from goblueprint.trace import textform

GOLDEN_DIRS = {
    "1.27": "src/internal/trace/testdata/tests",
    "1.22": "src/internal/trace/v2/testdata/tests",
}


@pytest.fixture(scope="session")
def golden_files(go_toolchain: Callable[[str], toolchain.Toolchain]) -> Callable[[str], list[Path]]:
    """golden_files("1.22") -> that release's golden tests (its toolchain installed on first use).

    A fixture, not a parametrize list: collecting tests must not install toolchains (parallel
    workers would each install while collecting, and a failed install would break collection).
    """

    def get(go: str) -> list[Path]:
        return sorted((go_toolchain(go).goroot / GOLDEN_DIRS[go]).glob("*.test"))

    return get


def test_golden_sets_are_complete(golden_files):
    # Go 1.27.3 ships 22 golden tests and Go 1.22.10 ships 19: all of them take part.
    assert len(golden_files("1.27")) == 22
    assert len(golden_files("1.22")) == 19


@pytest.mark.parametrize("go", list(GOLDEN_DIRS))
def test_golden_verdict_meets_expectation(go: str, golden_files):
    wrong = []
    for path in golden_files(go):
        line, ok, why = check_file(path)
        golden = textform.parse_test_file(path.read_bytes())
        if not ok or line.startswith("FAILURE") != golden.expect_failure:
            wrong.append(f"{path.name}: {line}; {why}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.slow
def test_encoder_and_verdicts_match_go(gohelper, golden_files, tmp_path: Path):
    for go in GOLDEN_DIRS:
        out = tmp_path / go
        out.mkdir()
        batch = golden_files(go)
        go_verdicts = gohelper.golden(out, batch)
        assert sorted(go_verdicts) == sorted(p.name for p in batch)
        for path in batch:
            golden = textform.parse_test_file(path.read_bytes())
            assert golden.wire == (out / f"{path.name}.wire").read_bytes(), path.name
            ours, _, _ = check_file(path)
            assert ours.split(" ", 1)[0] == go_verdicts[path.name].split(" ", 1)[0], path.name


def test_cli_exit_codes_and_output(golden_files, tmp_path: Path, capsys):
    path = next(p for p in golden_files("1.27") if p.name == "go122-create-syscall-with-p.test")
    assert main(["trace", "check", str(path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith('FAILURE "') and "expected a proc but didn't have one" in out
    # The same trace with the opposite expectation: the verdict no longer meets it.
    flipped = tmp_path / "flipped.test"
    text = path.read_bytes()
    expect_end = text.index(b"-- trace --")
    flipped.write_bytes(b"-- expect --\nSUCCESS\n" + text[expect_end:])
    assert main(["trace", "check", str(flipped)]) == 1
    captured = capsys.readouterr()
    assert captured.out.startswith("FAILURE") and "expected SUCCESS" in captured.err
    # An expectation whose regexp does not match Go's message fails as well.
    wrong = tmp_path / "wrong.test"
    wrong.write_bytes(b'-- expect --\nFAILURE "^no such message$"\n' + text[expect_end:])
    assert main(["trace", "check", str(wrong)]) == 1
    capsys.readouterr()


def test_cli_bad_input_is_one_line(tmp_path: Path, capsys):
    assert main(["trace", "check", str(tmp_path / "missing.test")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such file" in err
    broken = tmp_path / "broken.test"
    broken.write_bytes(b"-- expect --\nSUCCESS\n-- trace --\nTrace Go1.22\nNoSuchEvent x=1\n")
    assert main(["trace", "check", str(broken)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unidentified event: NoSuchEvent" in err and "line 5" in err
