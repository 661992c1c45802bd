"""The fast DIE walker against pyelftools' DIE objects, and the line decoder
against pyelftools' line-program state machine, on DWARF 5 (1.27) and DWARF 4
(1.22) binaries; and the cache returns exactly what a fresh parse does."""

from __future__ import annotations

import json

import pytest

from goblueprint.binary import cache
from goblueprint.binary.dwarf import Dwarf
from goblueprint.binary.elf import open_binary

from .reference_dwarf import ReferenceDwarf

pytestmark = pytest.mark.slow


def plain(value):
    return json.loads(json.dumps(value))


@pytest.mark.parametrize(("go", "arch"), [("1.27", "amd64"), ("1.22", "arm64")])
def test_fast_index_equals_pyelftools(go_binary, go, arch):
    b = open_binary(go_binary("hello", go, arch))
    fast = plain(Dwarf(b)._build())
    ref = plain(ReferenceDwarf(b).build_reference())
    assert fast.keys() == ref.keys()
    for part in ref:
        assert fast[part] == ref[part], part
    assert len(fast["types"]) > 1000 and len(fast["funcs"]) > 1000 and len(fast["consts"]) > 500


@pytest.mark.parametrize(("go", "arch"), [("1.27", "amd64"), ("1.22", "arm64")])
def test_line_decoder_equals_pyelftools(go_binary, go, arch):
    b = open_binary(go_binary("hello", go, arch))
    dw = Dwarf(b)
    info = dw.info
    checked = 0
    for cu in list(info.iter_CUs())[:12]:
        lp = info.line_program_for_CU(cu)
        if lp is None:
            continue
        files = dw._file_table(cu)
        want = []
        for entry in lp.get_entries():
            st = entry.state
            if st is None:
                continue
            if st.end_sequence:
                want.append([st.address, "", 0])
            else:
                want.append([st.address, files[st.file] if st.file < len(files) else "?", st.line])
        want.sort(key=lambda r: (r[0], r[2] != 0))
        assert dw._decode_lines(cu.cu_offset) == want
        checked += len(want)
    assert checked > 1000


def test_cache_round_trip_equals_fresh_parse(go_binary, tmp_path, monkeypatch):
    monkeypatch.setenv("GOBLUEPRINT_CACHE", str(tmp_path))
    b = open_binary(go_binary("hello"))
    first = Dwarf(b)
    fresh = {part: plain(first.index(part)) for part in ("types", "consts", "funcdir", "cus")}
    sched = first.function("runtime.schedule")
    assert sched[3], "runtime.schedule has inlined calls"
    rows = first.lines(sched[2])
    assert any((tmp_path / "binary").rglob("types.json"))
    second = Dwarf(b)  # served from the cache files just written
    for part, value in fresh.items():
        assert second.index(part) == value
    assert cache.load(cache.key_of(b.data), "funcdir") == fresh["funcdir"]
    assert second.function("runtime.schedule") == plain(sched)
    assert second.lines(sched[2]) == rows == first._decode_lines(sched[2])
