"""Resource ids -> dense slots, as every columnar consumer's loop indexes its state."""

from __future__ import annotations

import numpy as np

from goblueprint.timeline.slots import Slots


def test_slots_of_small_large_and_negative_ids() -> None:
    # Ids become dense slots chunk after chunk: small ids through a direct table, others (huge
    # ids, -1) through sorted keys; an id keeps its slot, also once the direct table grows over it.
    big = 1 << 40
    mid = 1 << 22  # beyond the direct table while few ids are known
    ids = Slots(keep_none=True)
    chunks = [
        np.array([5, -1, big, 5, mid, 0], np.int64),
        np.array([big + 1, 0, mid, 7, big, -1], np.int64),
        np.arange(100, 100 + (1 << 20), dtype=np.int64),  # enough ids that MID joins the table
        np.array([mid, 5], np.int64),
        np.array([big, mid], np.int64),
    ]
    slot_of: dict[int, int] = {}
    for vals in chunks:
        for v, s in zip(vals.tolist(), ids.map(vals).tolist(), strict=True):
            if v == -1:
                assert s == -1
                continue
            assert slot_of.setdefault(v, s) == s and ids.ids[s] == v
    assert len(ids.dense) > mid  # the table did grow over MID
    assert sorted(slot_of.values()) == list(range(ids.n)) and ids.n == len(slot_of)
    tasks = Slots()  # -1 (NoTask, truncated) is an id like any other here
    got = tasks.map(np.array([-1, 3, -1, big], np.int64)).tolist()
    assert got[0] == got[2] >= 0 and len(set(got)) == 3 and tasks.ids[got[0]] == -1
