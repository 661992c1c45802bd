"""The ingest's helpers for its largest tables: raw column spills, code flags, writes behind."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from goblueprint.timeline.spill import ColumnSpill, Seen
from goblueprint.timeline.write_behind import WriteBehind


def test_column_spill_gives_back_rows_and_gathers_across_windows(tmp_path: Path) -> None:
    rng = np.random.default_rng(7)
    cols = {"a": rng.integers(-(2**40), 2**40, 1000), "b": rng.integers(0, 255, 1000)}
    spill = ColumnSpill(tmp_path, "t", {"a": np.int64, "b": np.uint8}, keep_open=False)
    for lo in range(0, 1000, 300):  # appended in uneven parts
        spill.append({k: v[lo : lo + 300] for k, v in cols.items()})
    assert spill.rows == 1000
    assert np.array_equal(spill.read("a"), cols["a"]) and spill.read("b").dtype == np.uint8
    assert np.array_equal(spill.read("b", 290, 610), cols["b"][290:610].astype(np.uint8))
    at = np.sort(rng.choice(1000, 137, replace=False))
    for window in (1, 7, 64, 5000):  # rows in many windows, in one, in a window larger than the file
        assert np.array_equal(spill.gather("a", at, window), cols["a"][at])
    with pytest.raises(ValueError):
        spill.append(cols)  # read already: the files are no longer being written
    spill.remove()
    assert list(tmp_path.iterdir()) == []


def test_column_spill_rows_read_are_the_file_s_own_and_a_short_file_is_an_error(tmp_path: Path) -> None:
    """read() maps the rows (privately: written to, the file stays as it was); a column file
    shorter than the rows it was given raises, never gives back fewer rows."""
    spill = ColumnSpill(tmp_path, "t", {"a": np.int64})
    spill.append({"a": np.arange(5000)})  # rows across more than one page
    rows = spill.read("a", 1000, 4000)
    assert rows.tolist() == list(range(1000, 4000))
    rows[:] = -1
    assert spill.read("a", 999, 1001).tolist() == [999, 1000]
    spill.remove()  # the rows read stay readable
    assert rows[-1] == -1
    spill = ColumnSpill(tmp_path, "u", {"a": np.int64})
    spill.append({"a": np.arange(5000)})
    spill.read("a", 0, 1)  # (closes the file)
    with open(spill.paths["a"], "r+b") as f:
        f.truncate(8 * 4000)
    with pytest.raises(OSError, match="cut short"):
        spill.read("a", 3000, 5000)


def test_seen_flags_every_code_once_in_order() -> None:
    seen = Seen()
    parts = [np.array([5, 3, 5]), np.array([-4, 0]), np.array([1000, 3]), np.array([], np.int64)]
    for p in parts:
        seen.add(p)
    assert seen.values().tolist() == sorted(set(np.concatenate(parts).tolist()))


def test_write_behind_keeps_order_bounds_the_calls_in_flight_and_raises_a_failure() -> None:
    done: list[int] = []

    def write(i: int) -> None:
        threading.Event().wait(0.01)
        done.append(i)

    with WriteBehind() as behind:
        for i in range(5):
            behind.submit(write, i)
            assert len(done) >= i  # one call in flight: the ones before it are done
    assert done == list(range(5))

    def fail() -> None:
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"), WriteBehind(threads=2) as behind:
        behind.submit(fail)
        behind.submit(write, 9)


def test_write_behind_queues_ahead_calls_on_one_thread_in_order() -> None:
    done: list[int] = []
    gate = threading.Event()

    def write(i: int) -> None:
        gate.wait(5)
        done.append(i)

    with WriteBehind(ahead=3) as behind:
        for i in range(3):
            behind.submit(write, i)  # none waited for: three may be in flight
        assert done == []
        gate.set()
        for i in range(3, 6):
            behind.submit(write, i)
    assert done == list(range(6))
