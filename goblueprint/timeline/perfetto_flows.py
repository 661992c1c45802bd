"""The Perfetto export's flows, kept on disk by the lane they start on and the lane they end on.

A lane's track is written window by window (``export_perfetto``), and each window needs
the flows that start on it and those that end on it within its times.  The flows table is
stored by time, not by lane, so one pass over it (``FlowStore``) names every flow and
appends each batch's records, grouped by lane, to two temporary files: one keyed by the
lane a flow starts on, one by the lane it ends on.  A lane then reads its records segment
by segment (``FlowCursor``) as its windows advance: memory is a batch of the flows table
while they are stored, and one segment per lane while they are read, never every flow.

Flow ids are rows + 1 of the flows that end, in the stored (from_time, g) order, and a
lane's records keep that order: within a window the export adds them in id order, as it
did when it held them all.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from typing import IO

import numpy as np
import polars as pl

from goblueprint.errors import GoblueprintError
from goblueprint.timeline.model import NONE, LaneKind
from goblueprint.trace import kernels

# A flow starting on a lane: an instant at its start (ts), with its id and name.
OUT = np.dtype([("ts", "<i8"), ("fid", "<i8"), ("name", "<i4")])
# A flow ending on a lane, at its end (ts): a steal's end is an instant named NAME, a
# wake-up's the slice that starts there.
IN = np.dtype([("ts", "<i8"), ("fid", "<i8"), ("name", "<i4"), ("steal", "u1")])
FOREVER = np.iinfo(np.int64).max


def _stable_order(lane: np.ndarray) -> np.ndarray:
    """The stable argsort of LANE (lane numbers): as 16 bits when they fit, which numpy sorts by
    radix, a tenth of the time of its merge sort of int64."""
    if len(lane) and 0 <= lane.min() and lane.max() < 1 << 16:
        return np.argsort(lane.astype(np.uint16), kind="stable")
    return np.argsort(lane, kind="stable")


class KeyIds:
    """Global name ids of int64 keys (a name's parts packed in one number), made once per key over
    the whole export: a batch's distinct keys are mostly ones an earlier batch named (the same
    goroutines woken, the same states run), and making a name (its text, its dict lookups) cost
    more than finding it among the known keys' sorted array."""

    def __init__(self) -> None:
        self.keys = np.zeros(0, np.int64)  # sorted
        self.ids = np.zeros(0, np.int64)

    def get(self, keys: np.ndarray, make: Callable[[np.ndarray], np.ndarray]) -> np.ndarray:
        """The name id of each of KEYS (distinct); MAKE(new keys) names those not seen before."""
        at = np.minimum(np.searchsorted(self.keys, keys), max(len(self.keys) - 1, 0))
        known = self.keys[at] == keys if len(self.keys) else np.zeros(len(keys), bool)
        out = np.empty(len(keys), np.int64)
        out[known] = self.ids[at[known]]
        if not known.all():
            new = keys[~known]
            ids = np.asarray(make(new), np.int64)
            out[~known] = ids
            keys_all = np.concatenate((self.keys, new))
            order = np.argsort(keys_all, kind="stable")
            self.keys, self.ids = keys_all[order], np.concatenate((self.ids, ids))[order]
        return out


class _Bucketed:
    """Records appended batch by batch to a temporary file, each batch grouped by lane."""

    def __init__(self, dtype: np.dtype) -> None:
        self.dtype = dtype
        self.file: IO[bytes] = tempfile.TemporaryFile(prefix="goblueprint-flows-")
        self.rows = 0
        self.lanes: list[np.ndarray] = []
        self.offsets: list[np.ndarray] = []
        self.counts: list[np.ndarray] = []
        self.starts: list[np.ndarray] = []

    def append(self, lane: np.ndarray, records: np.ndarray, start: int) -> None:
        """RECORDS of flows that start at START or later, each to LANE's bucket."""
        if not len(lane):
            return
        order = _stable_order(lane)  # a lane's records keep the batch's (id) order
        lane = lane[order]
        # np.take, not records[order]: numpy's fancy indexing copies a record dtype field by
        # field, 8 times slower.
        self.file.write(memoryview(np.take(records, order)).cast("B"))
        firsts = np.flatnonzero(np.concatenate(([True], lane[1:] != lane[:-1])))
        self.lanes.append(lane[firsts])
        self.offsets.append(self.rows + firsts)
        self.counts.append(np.diff(np.append(firsts, len(lane))))
        self.starts.append(np.full(len(firsts), start, np.int64))
        self.rows += len(lane)

    def index(self) -> None:
        """Each lane's segments, in the order they were appended (the flows' order)."""
        cat = {
            name: np.concatenate(parts) if parts else np.zeros(0, np.int64)
            for name, parts in (
                ("lane", self.lanes), ("off", self.offsets), ("n", self.counts), ("start", self.starts)
            )
        }  # fmt: skip
        order = _stable_order(cat["lane"])
        self.seg_lane = cat["lane"][order]
        self.seg_off = cat["off"][order]
        self.seg_n = cat["n"][order]
        self.seg_start = cat["start"][order]
        self.lanes = self.offsets = self.counts = self.starts = []
        self.file.flush()

    def cursor(self, lane: int) -> FlowCursor:
        a, b = np.searchsorted(self.seg_lane, [lane, lane + 1])
        return FlowCursor(self, self.seg_off[a:b], self.seg_n[a:b], self.seg_start[a:b])

    def gather(self, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every record of each of LANES (distinct lanes no cursor has read), as their cursors would
        hand them out over all their windows: one lane's after another's, and where each lane's
        begin (len(LANES) + 1 offsets).  The segments are read in file order, those that follow
        one another in one read: a batch of small lanes costs a read per run, not per segment."""
        a = np.searchsorted(self.seg_lane, lanes)
        per = np.searchsorted(self.seg_lane, lanes + 1) - a
        firsts = np.concatenate(([0], np.cumsum(per)))
        segs = np.repeat(a - firsts[:-1], per) + np.arange(firsts[-1])  # the lanes' segments in order
        off, n = self.seg_off[segs], self.seg_n[segs]
        at = np.concatenate(([0], np.cumsum(n)))  # each segment's first record in the result
        offsets = at[firsts]
        if not at[-1]:
            return np.zeros(0, self.dtype), offsets
        order = np.argsort(off, kind="stable")
        so, sn = off[order], n[order]
        runs = np.flatnonzero(so[1:] != so[:-1] + sn[:-1]) + 1
        lo, hi = np.concatenate(([0], runs)).tolist(), np.concatenate((runs, [len(so)])).tolist()
        parts = [
            self.read(int(so[i]), int(so[j - 1] + sn[j - 1] - so[i])) for i, j in zip(lo, hi, strict=True)
        ]
        data = np.concatenate(parts) if len(parts) > 1 else parts[0]
        read_at = np.empty(len(so), np.int64)  # each segment's first record in DATA
        read_at[order] = np.concatenate(([0], np.cumsum(sn)[:-1]))
        return np.take(data, np.repeat(read_at - at[:-1], n) + np.arange(at[-1])), offsets

    def read(self, off: int, n: int) -> np.ndarray:
        # One call, not a seek and a read: a window reads a few segments of each of its lanes.
        data = os.pread(self.file.fileno(), n * self.dtype.itemsize, off * self.dtype.itemsize)
        if len(data) != n * self.dtype.itemsize:
            raise GoblueprintError("the export's temporary flows file was cut short")
        return np.frombuffer(data, self.dtype)

    def close(self) -> None:
        self.file.close()


class FlowCursor:
    """One lane's records, handed out window by window: ``take(limit)`` gives those placed
    before LIMIT, in id order.  Segments are read while the next one's flows start before
    LIMIT: a flow ends no earlier than it starts, so every record placed before LIMIT is in."""

    def __init__(self, store: _Bucketed, offs: np.ndarray, ns: np.ndarray, starts: np.ndarray) -> None:
        self.store = store
        self.segs = list(zip(offs.tolist(), ns.tolist(), strict=True))
        self.starts = starts.tolist()
        self.next = 0
        self.held = np.zeros(0, store.dtype)

    def take(self, limit: int) -> np.ndarray:
        if limit == FOREVER and not len(self.held):
            # A lane's last window (most lanes have one): every record left, no mask.
            parts = [self.store.read(*seg) for seg in self.segs[self.next :]]
            self.next = len(self.segs)
            if not parts:
                return self.held
            return np.concatenate(parts) if len(parts) > 1 else parts[0]
        if self.next < len(self.segs) and self.starts[self.next] < limit:
            parts = [self.held] if len(self.held) else []
            while self.next < len(self.segs) and self.starts[self.next] < limit:
                parts.append(self.store.read(*self.segs[self.next]))
                self.next += 1
            self.held = np.concatenate(parts) if len(parts) > 1 else parts[0]
        if not len(self.held):
            return self.held
        now = self.held["ts"] < limit
        if now.all():
            out, self.held = self.held, self.held[:0]
            return out
        # np.compress, not a mask: see _Bucketed.append.
        out = np.compress(now, self.held)
        self.held = np.compress(~now, self.held)
        return out


class FlowStore:
    """The flows that end, by the lane they start on (``starting``) and end on (``ending``).

    Wake-up flows: an instant on the waker's track starts each (its G's lane, else its
    P's); the woken G's slice that starts when it runs ends it, or where there is none an
    instant "G… runs".  A flow without a goroutine (a steal) goes from the victim P's
    track to an instant on the thief P's.  Names are made per batch from the distinct
    combinations of their parts: no string per flow.
    """

    def __init__(
        self,
        batches: Iterator[pl.DataFrame],
        lane_of: Callable[[LaneKind, np.ndarray], np.ndarray],
        text_ids: Callable[[list[str]], np.ndarray],
        strings: list[str],
        origin: int,
    ) -> None:
        self.text_ids = text_ids
        self.strings = strings
        self.out = _Bucketed(OUT)
        self.into = _Bucketed(IN)
        self.out_names = KeyIds()
        self.steal_names = KeyIds()
        try:
            n = 0
            for df in batches:
                self._add(df, n, lane_of, origin)
                n += df.height
            self.out.index()
            self.into.index()
        except BaseException:
            self.close()
            raise

    def _add(self, df: pl.DataFrame, before: int, lane_of, origin: int) -> None:
        # A flow's id counts every flow that ends, drawn or not.
        fid = np.arange(before + 1, before + df.height + 1, dtype=np.int64)
        from_time, to_time = df["from_time"].to_numpy(), df["to_time"].to_numpy()
        if (to_time < from_time).any():
            raise GoblueprintError("a flow ends before it starts: the timeline's flows are malformed")
        src = lane_of(LaneKind.G, df["from_g"].to_numpy())
        src = np.where(src >= 0, src, lane_of(LaneKind.P, df["from_p"].to_numpy()))
        g = df["g"].to_numpy()
        steal = g == NONE
        to_p = df["to_p"].to_numpy()
        dst = np.where(steal, lane_of(LaneKind.P, to_p), lane_of(LaneKind.G, g))
        keep = (src >= 0) & (dst >= 0)
        steal, label = steal[keep], df["label"].to_numpy()[keep]
        # What a flow's name shows besides its label: the P a steal goes to, else the G.
        to = np.where(steal, to_p[keep], g[keep])
        out = np.empty(int(keep.sum()), OUT)
        out["ts"] = from_time[keep] - origin
        out["fid"] = fid[keep]
        out["name"] = self._names(
            self.out_names, lambda what, s, x: f"{what} → {'P' if s else 'G'}{x}", label, steal, to
        )
        # The batch's first flow starts first (the table is by from_time).
        start = int(from_time[0]) - origin if len(from_time) else 0
        self.out.append(src[keep], out, start)
        into = np.empty(len(out), IN)
        into["ts"] = to_time[keep] - origin
        into["fid"] = out["fid"]
        into["name"] = -1
        into["steal"] = steal
        if steal.any():
            from_p = df["from_p"].to_numpy()[keep][steal]  # only a steal's name shows it
            into["name"][steal] = self._names(
                self.steal_names, lambda what, _s, p: f"{what} from P{p}", label[steal], steal[steal], from_p
            )
        self.into.append(dst[keep], into, start)

    def _names(self, memo: KeyIds, text, label: np.ndarray, steal: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Global name id per row of TEXT(what the label says, steal, x), made once per distinct
        (label, steal, x) over every batch (MEMO): the rows grouped by hashing their key, not by
        sorting them (the order names are numbered in shows nowhere: a sequence interns its names
        by their texts)."""
        if not len(label):
            return np.zeros(0, np.int64)
        strings = max(len(self.strings), 1)
        label = label.astype(np.int64)
        if label.min() < 0 or label.max() >= strings:
            raise GoblueprintError("a flow's label is not one of the trace's strings")
        dense = kernels.get().dense_codes
        x = np.ascontiguousarray(x, np.int64)
        xs = None  # x as itself in the key: the same key in every batch
        if x.min() < 0 or int(x.max()) >= (1 << 62) // (2 * strings):
            # Ids far past any trace's (a malformed table's): x by its rank in the batch, which
            # cannot overflow, and names made for this batch alone.
            x, xs = dense(x)
            memo = KeyIds()
        code, keys = dense((x * 2 + steal.astype(np.int64)) * strings + label)

        def make(new: np.ndarray) -> np.ndarray:
            rest, lab = np.divmod(new, strings)
            what = rest // 2 if xs is None else xs[rest // 2]
            texts = [
                text(self.strings[lb] or "wake-up", bool(st), int(v))
                for lb, st, v in zip(lab.tolist(), (rest % 2).tolist(), what.tolist(), strict=True)
            ]
            return self.text_ids(texts)

        return memo.get(keys, make)[code]

    def starting_all(self, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The flows starting on each of LANES (``_Bucketed.gather``): lanes of one window."""
        return self.out.gather(lanes)

    def ending_all(self, lanes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The flows ending on each of LANES (``_Bucketed.gather``): lanes of one window."""
        return self.into.gather(lanes)

    def starting(self, lane: int) -> FlowCursor:
        return self.out.cursor(lane)

    def ending(self, lane: int) -> FlowCursor:
        return self.into.cursor(lane)

    def close(self) -> None:
        self.out.close()
        self.into.close()
