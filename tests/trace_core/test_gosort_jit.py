"""The numba-compiled slices.SortFunc leaves equal keys exactly where Go does.

Two oracles: Go itself (a tiny program built here with the bundled toolchain),
and the pure-Python port the compiled version replaced, kept below as a
private copy.  The copy counts which pdqsort paths each input takes, so the
tests can insist that their inputs reach every one of them (heapsort
fallback, breakPatterns, partitionEqual, reverseRange, partialInsertionSort).
"""

from __future__ import annotations

import random
import subprocess
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from goblueprint import toolchain
from goblueprint.trace.gosort import sort_func
from goblueprint.trace.kernels.gosort import sort_by_key

INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1

# ---------------------------------------------------------------------------
# Oracle: the pure-Python port of Go's pdqsort_func (verified against Go before
# this change), plus hit counters on its branches.
# ---------------------------------------------------------------------------

_MASK64 = (1 << 64) - 1
_MAX_INSERTION = 12
_INCREASING, _DECREASING, _UNKNOWN = 1, 2, 0


def oracle_sort(data: list, key, hits: Counter | None = None) -> Counter:
    """Sort ``data`` in place like the old sort_func; returns the paths taken (counted into HITS)."""
    s = _Sorter([key(x) for x in data], data, Counter() if hits is None else hits)
    n = len(data)
    s.pdqsort(0, n, n.bit_length())
    return s.hits


class _Sorter:
    def __init__(self, keys: list, data: list, hits: Counter) -> None:
        self.k = keys
        self.d = data
        self.hits = hits

    def less(self, i: int, j: int) -> bool:
        return self.k[i] < self.k[j]

    def swap(self, i: int, j: int) -> None:
        k, d = self.k, self.d
        k[i], k[j] = k[j], k[i]
        d[i], d[j] = d[j], d[i]

    def insertion_sort(self, a: int, b: int) -> None:
        for i in range(a + 1, b):
            j = i
            while j > a and self.less(j, j - 1):
                self.swap(j, j - 1)
                j -= 1

    def sift_down(self, lo: int, hi: int, first: int) -> None:
        root = lo
        while True:
            child = 2 * root + 1
            if child >= hi:
                return
            if child + 1 < hi and self.less(first + child, first + child + 1):
                child += 1
            if not self.less(first + root, first + child):
                return
            self.swap(first + root, first + child)
            root = child

    def heap_sort(self, a: int, b: int) -> None:
        first, lo, hi = a, 0, b - a
        for i in range((hi - 1) // 2, -1, -1):
            self.sift_down(i, hi, first)
        for i in range(hi - 1, -1, -1):
            self.swap(first, first + i)
            self.sift_down(lo, i, first)

    def pdqsort(self, a: int, b: int, limit: int) -> None:
        was_balanced = True
        was_partitioned = True
        while True:
            length = b - a
            if length <= _MAX_INSERTION:
                self.hits["insertion"] += 1
                self.insertion_sort(a, b)
                return
            if limit == 0:
                self.hits["heapsort"] += 1
                self.heap_sort(a, b)
                return
            if not was_balanced:
                self.hits["break_patterns"] += 1
                self.break_patterns(a, b)
                limit -= 1
            pivot, hint = self.choose_pivot(a, b)
            if hint == _DECREASING:
                self.hits["reverse"] += 1
                self.reverse_range(a, b)
                pivot = (b - 1) - (pivot - a)
                hint = _INCREASING
            if was_balanced and was_partitioned and hint == _INCREASING:
                if self.partial_insertion_sort(a, b):
                    self.hits["partial_sorted"] += 1
                    return
                self.hits["partial_failed"] += 1
            if a > 0 and not self.less(a - 1, pivot):
                self.hits["partition_equal"] += 1
                a = self.partition_equal(a, b, pivot)
                continue
            mid, already = self.partition(a, b, pivot)
            self.hits["partition"] += 1
            was_partitioned = already
            left, right = mid - a, b - mid
            threshold = length // 8
            if left < right:
                was_balanced = left >= threshold
                self.pdqsort(a, mid, limit)
                a = mid + 1
            else:
                was_balanced = right >= threshold
                self.pdqsort(mid + 1, b, limit)
                b = mid

    def partition(self, a: int, b: int, pivot: int) -> tuple[int, bool]:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while i <= j and self.less(i, a):
            i += 1
        while i <= j and not self.less(j, a):
            j -= 1
        if i > j:
            self.swap(j, a)
            return j, True
        self.swap(i, j)
        i += 1
        j -= 1
        while True:
            while i <= j and self.less(i, a):
                i += 1
            while i <= j and not self.less(j, a):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        self.swap(j, a)
        return j, False

    def partition_equal(self, a: int, b: int, pivot: int) -> int:
        self.swap(a, pivot)
        i, j = a + 1, b - 1
        while True:
            while i <= j and not self.less(a, i):
                i += 1
            while i <= j and self.less(a, j):
                j -= 1
            if i > j:
                break
            self.swap(i, j)
            i += 1
            j -= 1
        return i

    def partial_insertion_sort(self, a: int, b: int) -> bool:
        max_steps, shortest_shifting = 5, 50
        i = a + 1
        for _ in range(max_steps):
            while i < b and not self.less(i, i - 1):
                i += 1
            if i == b:
                return True
            if b - a < shortest_shifting:
                return False
            self.swap(i, i - 1)
            if i - a >= 2:
                j = i - 1
                while j >= 1:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j -= 1
            if b - i >= 2:
                j = i + 1
                while j < b:
                    if not self.less(j, j - 1):
                        break
                    self.swap(j, j - 1)
                    j += 1
        return False

    def break_patterns(self, a: int, b: int) -> None:
        length = b - a
        if length >= 8:
            r = length & _MASK64
            modulus = 1 << length.bit_length()
            for idx in range(a + (length // 4) * 2 - 1, a + (length // 4) * 2 + 2):
                r ^= (r << 13) & _MASK64
                r ^= r >> 7
                r ^= (r << 17) & _MASK64
                other = r & (modulus - 1)
                if other >= length:
                    other -= length
                self.swap(idx, a + other)

    def choose_pivot(self, a: int, b: int) -> tuple[int, int]:
        shortest_ninther, max_swaps = 50, 4 * 3
        n = b - a
        swaps = [0]
        i = a + n // 4 * 1
        j = a + n // 4 * 2
        k = a + n // 4 * 3
        if n >= 8:
            if n >= shortest_ninther:
                i = self.median(i - 1, i, i + 1, swaps)
                j = self.median(j - 1, j, j + 1, swaps)
                k = self.median(k - 1, k, k + 1, swaps)
            j = self.median(i, j, k, swaps)
        if swaps[0] == 0:
            return j, _INCREASING
        if swaps[0] == max_swaps:
            return j, _DECREASING
        return j, _UNKNOWN

    def order2(self, a: int, b: int, swaps: list[int]) -> tuple[int, int]:
        if self.less(b, a):
            swaps[0] += 1
            return b, a
        return a, b

    def median(self, a: int, b: int, c: int, swaps: list[int]) -> int:
        a, b = self.order2(a, b, swaps)
        b, c = self.order2(b, c, swaps)
        a, b = self.order2(a, b, swaps)
        return b

    def reverse_range(self, a: int, b: int) -> None:
        i, j = a, b - 1
        while i < j:
            self.swap(i, j)
            i += 1
            j -= 1


# ---------------------------------------------------------------------------
# Inputs
# ---------------------------------------------------------------------------


def oracle_perm(keys: list[int]) -> list[int]:
    items = list(range(len(keys)))
    oracle_sort(items, keys.__getitem__)
    return items


def jit_perm(keys: list[int]) -> list[int]:
    n = len(keys)
    idx = np.arange(n, dtype=np.int64)
    sort_by_key(idx, n, np.array(keys, dtype=np.int64))
    return idx.tolist()


class _Adversary:
    """McIlroy's "killer adversary" for quicksort, run against the oracle.

    Values are decided lazily while the sort compares them: undecided
    elements ("gas") compare below every decided one, and when two gas
    elements meet, the pivot candidate is frozen to the largest value still
    free, so every pivot comes out as bad as possible.  (Freezing to the
    smallest values instead, as McIlroy's paper does, lets pdqsort's
    partialInsertionSort win.)  The values it settles on are an input that
    drives pdqsort to its heapsort fallback.  Once heapsort has started,
    gas elements compare equal, so the heapsorted range keeps ties (heapsort
    is where the order of ties differs most from a stable sort).
    """

    def __init__(self, n: int) -> None:
        self.gas = 0
        self.val = [0] * n
        self.next = n
        self.candidate = -1
        self.hits: Counter = Counter()  # the oracle's path counters, live

    def freeze(self, x: int) -> None:
        self.val[x] = self.next
        self.next -= 1

    def less(self, x: int, y: int) -> bool:
        val, gas = self.val, self.gas
        if val[x] == gas and val[y] == gas:
            if self.hits["heapsort"]:
                return False
            self.freeze(x if x == self.candidate else y)
        if val[x] == gas:
            self.candidate = x
        elif val[y] == gas:
            self.candidate = y
        return val[x] < val[y]


class _Lazy:
    __slots__ = ("adv", "i")

    def __init__(self, adv: _Adversary, i: int) -> None:
        self.adv, self.i = adv, i

    def __lt__(self, other: _Lazy) -> bool:
        return self.adv.less(self.i, other.i)


def killer_input(n: int) -> list[int]:
    adv = _Adversary(n)
    items = [_Lazy(adv, i) for i in range(n)]
    oracle_sort(items, lambda x: x, adv.hits)
    # Never-frozen elements only ever compared below frozen ones: keeping them
    # equal (gas) reproduces every comparison the sort made.
    return list(adv.val)


def corpus() -> list[list[int]]:
    """Deterministic inputs, chosen to reach every path of pdqsort."""
    rng = random.Random(2)
    cases: list[list[int]] = []
    for n in (0, 1, 2, 7, 8, 12, 13, 20, 49, 50, 51, 64, 100, 257, 300, 1000):
        cases.append([rng.randrange(max(n // 8, 1)) for _ in range(n)])  # many ties
        cases.append([rng.randrange(3) for _ in range(n)])
        cases.append(sorted(rng.randrange(10) for _ in range(n)))
        cases.append(sorted((rng.randrange(10) for _ in range(n)), reverse=True))
        cases.append(list(range(n, 0, -1)))
        cases.append([5] * n)
        cases.append([rng.randrange(INT64_MIN, INT64_MAX) for _ in range(n)])
        near = list(range(n))
        for _ in range(3):
            if n:
                i, j = rng.randrange(n), rng.randrange(n)
                near[i], near[j] = near[j], near[i]
        cases.append(near)
        near_ties = [k // 3 for k in near]  # nearly sorted with ties
        cases.append(near_ties)
        cases.append(list(range(n // 2)) + list(range(n - n // 2, 0, -1)))  # organ pipe
        cases.append([i % 7 for i in range(n)])  # sawtooth
    for n in (60, 200, 500, 1000):
        cases.append(killer_input(n))
    for n in (49, 50, 51, 100):
        # One inversion in sorted input with ties: partialInsertionSort fixes it
        # by shifting from length 50 on, below that the range is partitioned.
        for at in (3, n // 2, n - 2):
            one = [k // 3 for k in range(n)]
            one[at - 1], one[at] = one[at] + 1, one[at - 1]
            cases.append(one)
    for n in (20, 50, 64, 100, 300):
        # Strictly descending where choosePivot samples (so the range is reversed),
        # with runs of ties away from the samples (so reversing is visible).
        desc = list(range(n, 0, -1))
        desc[:4] = [n + 1] * 4
        desc[-4:] = [0] * 4
        cases.append(desc)
    cases.append([INT64_MAX, INT64_MIN, 0, -1, 1] * 5)
    return cases


# ---------------------------------------------------------------------------
# Tests against the oracle
# ---------------------------------------------------------------------------


def test_corpus_reaches_every_path_and_matches_oracle():
    seen: Counter = Counter()
    for keys in corpus():
        items = list(range(len(keys)))
        seen += oracle_sort(items, keys.__getitem__)
        assert jit_perm(keys) == items, f"n={len(keys)} keys={keys[:20]}..."
    paths = (
        "insertion",
        "heapsort",
        "break_patterns",
        "reverse",
        "partial_sorted",
        "partial_failed",
        "partition_equal",
        "partition",
    )
    assert {p for p in paths if seen[p] == 0} == set()


def test_killer_input_reaches_heapsort_with_ties():
    # Guards the adversary itself: if it stopped working, the heapsort path would go untested.
    keys = killer_input(1000)
    assert oracle_sort(list(range(1000)), keys.__getitem__)["heapsort"] > 0
    assert keys.count(0) > 1


def _patterned(draw_keys: list[int], shape: str) -> list[int]:
    if shape == "sorted":
        return sorted(draw_keys)
    if shape == "reversed":
        return sorted(draw_keys, reverse=True)
    if shape == "organ":
        s = sorted(draw_keys)
        return s[::2] + s[1::2][::-1]
    if shape == "sawtooth":
        s = sorted(draw_keys)
        h = len(s) // 2
        return s[h:] + s[:h]  # two ascending runs
    return draw_keys


@settings(max_examples=400, deadline=None)
@given(
    keys=st.lists(st.integers(0, 3) | st.integers(0, 20), max_size=300),
    shape=st.sampled_from(["random", "sorted", "reversed", "organ", "sawtooth"]),
)
def test_matches_oracle_on_ties(keys, shape):
    keys = _patterned(keys, shape)
    assert jit_perm(keys) == oracle_perm(keys)


@settings(max_examples=200, deadline=None)
@given(
    keys=st.lists(st.integers(INT64_MIN, INT64_MAX) | st.integers(0, 9), max_size=300),
    swaps=st.lists(st.tuples(st.integers(0, 299), st.integers(0, 299)), max_size=6),
)
def test_matches_oracle_on_nearly_sorted(keys, swaps):
    keys = sorted(keys)
    for i, j in swaps:
        if i < len(keys) and j < len(keys):
            keys[i], keys[j] = keys[j], keys[i]
    assert jit_perm(keys) == oracle_perm(keys)


@settings(max_examples=100, deadline=None)
@given(
    keys=st.lists(st.integers(-5, 5), min_size=1, max_size=120),
    n=st.integers(0, 120),
    seed=st.integers(0, 1 << 32),
)
def test_prefix_of_a_permuted_index_array(keys, n, seed):
    """The engine's use: idx holds arbitrary indices, only idx[:n] is sorted, the rest untouched."""
    m = len(keys)
    n = min(n, m)
    idx = np.random.default_rng(seed).permutation(m).astype(np.int64)
    before = idx.copy()
    sort_by_key(idx, n, np.array(keys, dtype=np.int64))
    want = before[:n].tolist()
    oracle_sort(want, keys.__getitem__)
    assert idx[:n].tolist() == want
    assert idx[n:].tolist() == before[n:].tolist()


@njit(cache=False)
def _caller(idx, n, keys):
    # Compiled code calling sort_by_key, as the compiled reader engine does.
    sort_by_key(idx, n, keys)
    return idx[0] if n else -1


def test_callable_from_njit():
    rng = random.Random(5)
    keys = [rng.randrange(4) for _ in range(90)]
    idx = np.arange(90, dtype=np.int64)
    first = _caller(idx, 90, np.array(keys, dtype=np.int64))
    want = oracle_perm(keys)
    assert idx.tolist() == want
    assert first == want[0]


def test_bad_n_raises():
    with pytest.raises(ValueError, match="n out of range"):
        sort_by_key(np.arange(3, dtype=np.int64), 4, np.zeros(3, dtype=np.int64))


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.integers(0, 6), max_size=200))
def test_sort_func_wrapper_matches_oracle(keys):
    items = [(k, i) for i, k in enumerate(keys)]
    want = list(items)
    oracle_sort(want, lambda it: it[0])
    sort_func(items, key=lambda it: it[0])
    assert items == want


def test_sort_func_key_out_of_int64_range():
    with pytest.raises(OverflowError):
        sort_func([1, 2], key=lambda x: x << 64)


# ---------------------------------------------------------------------------
# Against Go itself
# ---------------------------------------------------------------------------

_GO_PROG = """\
// Reads lines of int64 keys; prints the indices in the order slices.SortFunc
// leaves them when comparing keys only (ties keep Go's unstable order).
package main

import (
	"bufio"
	"cmp"
	"os"
	"slices"
	"strconv"
	"strings"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<26)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		fields := strings.Fields(in.Text())
		keys := make([]int64, len(fields))
		idx := make([]int, len(fields))
		for i, f := range fields {
			k, err := strconv.ParseInt(f, 10, 64)
			if err != nil {
				panic(err)
			}
			keys[i], idx[i] = k, i
		}
		slices.SortFunc(idx, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
		for i, x := range idx {
			if i > 0 {
				out.WriteByte(' ')
			}
			out.WriteString(strconv.Itoa(x))
		}
		out.WriteByte('\\n')
	}
}
"""


@pytest.fixture(scope="session")
def go_sorter(tmp_path_factory) -> Path:
    tc = toolchain.find()
    src = tmp_path_factory.mktemp("gosortjit")
    (src / "go.mod").write_text("module gosortjit\n\ngo 1.21\n")
    (src / "main.go").write_text(_GO_PROG)
    exe = src / "gosortjit"
    tc.run(["build", "-o", str(exe), "."], cwd=src)
    return exe


@pytest.mark.slow
def test_matches_go(go_sorter):
    rng = random.Random(11)
    cases = corpus()
    for _ in range(300):
        n = rng.choice([rng.randrange(0, 13), rng.randrange(13, 60), rng.randrange(60, 400)])
        width = rng.choice([1, 2, 3, 8, n + 1, 1 << 40])
        cases.append([rng.randrange(width) for _ in range(n)])
    stdin = "".join(" ".join(map(str, c)) + "\n" for c in cases)
    proc = subprocess.run(
        [str(go_sorter)], input=stdin, capture_output=True, text=True, check=True, timeout=120
    )
    lines = proc.stdout.split("\n")
    assert len(lines) == len(cases) + 1 and lines[-1] == ""
    for keys, line in zip(cases, lines, strict=False):
        assert jit_perm(keys) == [int(x) for x in line.split()], f"n={len(keys)} keys={keys[:20]}..."
