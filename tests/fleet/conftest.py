"""A small fleet of real traces: two whole ones (Go 1.27 and 1.22), one Go's reader rejects, one that
breaks part-way.  All come from the tests' cached traces, so their ingests are cached too."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent.parent
SMALL = ROOT / "tests" / "trace_check" / "goprogs"
GENS = ROOT / "tests" / "trace_core" / "goprogs"


@pytest.fixture(scope="session")
def fleet_dir(go_trace: Callable[..., Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    from goblueprint.trace.wire import batch_layout

    d = tmp_path_factory.mktemp("fleet")
    whole = {"new.trace": go_trace("small", go="1.27", prog_root=SMALL),
             "old.out": go_trace("small", go="1.22", prog_root=SMALL)}  # fmt: skip
    for name, src in whole.items():
        shutil.copyfile(src, d / name)
    # The same bytes under another name: one stored entry, rows for each name.
    shutil.copyfile(whole["new.trace"], d / "copy.trace")
    # Cut inside the first generation's batches: nothing usable, Go's reader rejects it.
    (d / "cut.trace").write_bytes(whole["new.trace"].read_bytes()[:3000])
    # Cut inside a later generation (as tests/cli's bad_traces, so its ingest is shared):
    # the events before the cut are usable.
    data = go_trace("gens", go="1.27", prog_root=GENS).read_bytes()
    starts = sorted({b.offset for gen, b in batch_layout(data) if gen >= 2})
    (d / "half.trace").write_bytes(data[: (starts[0] + len(data)) // 2])
    (d / "notes.txt").write_text("not a trace: a directory pattern leaves it out")
    return d
