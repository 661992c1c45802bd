"""A spilled table sorted by two keys a piece at a time (spill_sort): np.lexsort's order exactly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from goblueprint.timeline import spill_sort
from goblueprint.timeline.spill import ColumnSpill
from goblueprint.timeline.spill_sort import sorted_pieces


def _spill(directory: Path, major: np.ndarray, minor: np.ndarray, parts: int = 3) -> ColumnSpill:
    spill = ColumnSpill(directory, "t", {"major": np.int64, "minor": np.int64})
    for part in np.array_split(np.arange(len(major)), parts):
        spill.append({"major": major[part], "minor": minor[part]})
    return spill


def _check(directory: Path, major: np.ndarray, minor: np.ndarray, piece: int) -> list[np.ndarray]:
    spill = _spill(directory, major, minor)
    pieces = list(sorted_pieces(spill, "major", "minor", piece))
    got = np.concatenate(pieces) if pieces else np.zeros(0, np.int64)
    assert got.tolist() == np.lexsort((minor, major)).tolist()
    # Only the table's own files are left: the sort's went with it.
    assert sorted(p.name for p in directory.iterdir()) == ["t-major.bin", "t-minor.bin"]
    spill.remove()
    return pieces


def test_rows_in_buckets_come_back_in_lexsort_order_in_pieces_of_at_most_the_piece(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Flows as the builder makes them: mostly near their sorted place, some far from it (a
    # goroutine blocked long), many equal majors (stable on the minor and then the row).
    monkeypatch.setattr(spill_sort, "_WINDOW", 997)  # many windows, each with many buckets
    rng = np.random.default_rng(3)
    n = 20_000
    major = np.sort(rng.integers(0, 10**9, n)) - rng.integers(0, 10**6, n) * (rng.random(n) < 0.05)
    major[::7] = major[0]  # a value shared by many rows, wherever they lie
    minor = rng.integers(-5, 5, n)
    pieces = _check(tmp_path, major, minor, 500)
    sizes = [len(p) for p in pieces]
    heavy = int((major == major[0]).sum())  # one bin alone: its bucket is held whole
    assert len(pieces) > 30 and all(s <= 500 for s in sizes if s != heavy) and heavy in sizes


def test_a_table_of_one_piece_or_one_key_value_is_one_sort(tmp_path: Path) -> None:
    rng = np.random.default_rng(4)
    assert len(_check(tmp_path, rng.integers(0, 9, 300), rng.integers(0, 9, 300), 300)) == 1
    same = np.full(1000, -(2**62))  # every row in one bin: one bucket, past the piece
    assert len(_check(tmp_path, same, rng.integers(0, 9, 1000), 10)) == 1
    assert _check(tmp_path, np.zeros(0, np.int64), np.zeros(0, np.int64), 10) == []
    extremes = np.array([2**63 - 1, -(2**63), 0, -1, 1, 2**63 - 2, -(2**63) + 1] * 9, np.int64)
    assert len(_check(tmp_path, extremes, np.arange(len(extremes)) % 2, 4)) > 1


@settings(max_examples=60, deadline=None)
@given(
    major=st.lists(st.integers(-(2**63), 2**63 - 1), min_size=1, max_size=400),
    piece=st.integers(1, 50),
    spread=st.sampled_from([1, 3, 2**40, 2**62]),
)
def test_any_keys_any_piece_give_lexsort_s_order(tmp_path_factory: pytest.TempPathFactory, major: list[int],
                                                 piece: int, spread: int) -> None:  # fmt: skip
    keys = np.array(major, np.int64) // spread  # from all distinct to a few values, extremes included
    minor = np.arange(len(keys), dtype=np.int64) % 3
    _check(tmp_path_factory.mktemp("s"), keys, minor, piece)
