"""Compiled kernels (numba) of the tied scan, used where :func:`embedeval._core.compiled.enabled`.

* :func:`window_pass`: for each row of a chunk of BLAS products (float32, or float64 where the
  float32 bound is of no use), the values v (``norms - 2 P`` or ``-P``, in float64) strictly
  below each window and the members of every window, in one pass over the row (no sort);
* :func:`pair_values`: the float64 value of listed (query, reference) pairs, summed in the
  loop's own order (within :func:`~embedeval._search.deep_exact.error_bounds`' float64 bound of
  the exact formula, never used as the exact formula).

The numpy path of :class:`~embedeval._search.tied_scan.TiedScanner` (sort, binary searches, and
the exact formula in place of :func:`pair_values`) is the reference; the suite requires
identical counts.

Each public function here is a plain Python wrapper that allocates the outputs with numpy and
hands them to a compiled ``_..._into`` loop: numba compiles its own implementation of every
``np.zeros``, ``np.full`` or ``np.empty`` a kernel calls, which together cost about as much
compilation as the loops themselves (``python bench/bench_compile.py --cold --ties`` and
``--routines``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros

from .._core.compiled import kernel_numba
from .._core.intrinsics import prefetch
from .list_kernels import list_between, nonzero_bits
from .primitives import bucket, count_at_most, fill_table, span_inverse

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

# How many pairs ahead :func:`pair_values` prefetches a pair's reference row.
PAIR_AHEAD = 8


class BucketTables(NamedTuple):
    """Per row of a block, the bucket table of its windows' low ends (:func:`bucket_tables`)."""

    table: np.ndarray
    first: np.ndarray
    inverse: np.ndarray


def bucket_tables(low, high, n_windows, n_buckets) -> BucketTables:
    """Per row, the bucket table (:func:`.primitives.fill_table`) of its low ends over
    ``n_buckets`` buckets of [low[i, 0], high[i, n - 1]], the buckets of a window's ends and those
    between them marked (:func:`_marked`: negative; those values are placed one by one, from
    there): ``table`` (b, n_buckets + 1), int16 (int32 for 2**15 windows or more: a row's table
    is read at random for each value within its windows, and the smaller it is, the more of the
    block's stay in cache), -1 in a row without a table; ``first`` and ``inverse`` (b,) give a
    value's bucket (:func:`.primitives.bucket`; ``inverse`` 0: no table, every value of the row
    placed one by one).

    In a bucket t that holds no end, a low end with bucket < t is <= every value in t and one
    with bucket > t is above them (the bucket is monotone), and a window whose ends lie in
    buckets on either side of t marks it.
    """
    b, g = low.shape
    table = np.full((b, n_buckets + 1), -1, dtype=np.int16 if g < 1 << 15 else np.int32)
    first, inverse = np.zeros(b), np.zeros(b)
    _bucket_tables_into(low, high, n_windows, table, first, inverse)
    return BucketTables(table, first, inverse)


@numba.njit(cache=True, nogil=True)
def _bucket_tables_into(low, high, n_windows, table, first, inverse):  # pragma: no cover - compiled
    """:func:`bucket_tables` into ``table`` (b, n_buckets + 1) of -1 and ``first``, ``inverse`` (b,) of 0."""
    top = np.float64(table.shape[1] - 2)
    for i in range(table.shape[0]):
        n = n_windows[i]
        if n == 0:
            continue
        lo_row, hi_row = low[i], high[i]
        first[i], inverse[i] = lo_row[0], span_inverse(lo_row[0], hi_row[n - 1], table.shape[1] - 1)
        if inverse[i] == 0.0:
            continue  # no table: every value placed one by one
        row = table[i]
        fill_table(lo_row[:n], first[i], inverse[i], row)
        for w in range(n):  # the buckets of a window's ends, and those between
            a, z = bucket(lo_row[w], first[i], inverse[i], top), bucket(hi_row[w], first[i], inverse[i], top)
            for t in range(a, z + 1):
                if row[t] >= 0:
                    row[t] = _marked(row[t])


@numba.njit(inline="always")
def _marked(entry):  # pragma: no cover - compiled
    """-1 - ``entry``: a bucket table's count of low ends, marked (negative) where a window end
    falls in its bucket or a window covers it; and, the same map, a marked entry's count."""
    return -1 - np.int64(entry)


def window_pass(products, excluded, norms, euclidean, low, high, n_windows, tables, capacity):
    """Below-window counts and window members of a chunk.

    products (b, m) float32 or float64, overwritten with -inf at the pairs left out; excluded
    (k,) int64, the flat positions (i m + c, increasing) of the pairs not counted (graded,
    counted elsewhere, or ignored: their value is taken as +inf); norms (m,) float64, the
    references' squared norms (euclidean; unused otherwise); each value is
    ``v = norms[c] - 2 products[i, c]`` (euclidean) or ``-products[i, c]``, in float64.
    low, high (b, g) float64, increasing along each row's first ``n_windows[i]`` entries;
    ``tables``: :func:`bucket_tables` of them. Returns ``below`` (b, g) int64, the values
    v < low[i, k]; and (rows, ks, cols, n_members): the (row, window, column) of each value in
    [low[i, k], high[i, k]], the first ``n_members`` of the arrays (n_members > capacity: the
    arrays overflowed, call again with ``capacity = n_members``).
    """
    b, m = products.shape
    g = low.shape[1]
    below = np.zeros((b, g), dtype=np.int64)
    members = np.empty((3, capacity), dtype=np.int64)
    hist = np.empty(g + 2, dtype=np.int64)
    listed = np.empty((3, m), dtype=np.int32)
    norms, scale = (norms, 2.0) if euclidean else (np.zeros(m), 1.0)  # v = 0 - p: -p, or -0 for +0
    window = (low, high, n_windows, tables.table, tables.inverse)
    n = _window_pass_into(products, excluded, norms, scale, *window, below, members, hist, listed)
    return below, members[0], members[1], members[2], n


@numba.njit(cache=True, nogil=True)
def _window_pass_into(
    products, excluded, norms, scale, low, high, n_windows, table, inverses, below, members, hist, listed
):  # pragma: no cover - compiled
    """:func:`window_pass` into ``below`` (b, g) of 0 and ``members`` (3, capacity): rows, ks,
    cols; ``hist`` (g + 2,) and ``listed`` (3, m) int32: scratch.
    Returns n_members."""
    b, m = products.shape
    top = np.float64(table.shape[1] - 2)
    columns, buckets, marked = listed[0], listed[1], listed[2]
    count, x = 0, 0
    for i in range(b):
        n = n_windows[i]
        if n == 0:
            x = _skip(excluded, x, (i + 1) * m)
            continue
        row_products = products[i]
        while x < excluded.size and excluded[x] < (i + 1) * m:  # v = +inf: after every window
            row_products[excluded[x] - i * m] = -np.inf
            x += 1
        if i + 1 < b:  # the next row's table, from memory while this row is listed
            for t in range(0, table.shape[1], 64 // table.itemsize):
                prefetch(table[i + 1], t)
        lo_row, hi_row = low[i], high[i]
        first, last, inverse = lo_row[0], hi_row[n - 1], inverses[i]
        # The values below every window (NaN and +inf after every window), and the columns
        # within [first, last] (a large share in bench_floor.py's tied row) with their
        # buckets, listed 16 at a time (list_between).
        n_inside, n_below = list_between(row_products, norms, scale, first, last, inverse, top, columns, buckets)
        hist[: n + 2] = 0
        hist[0] = n_below
        tabled = inverse > 0.0
        if tabled:  # each value by its bucket (those of marked buckets, a few, listed)
            n_marked = _count_tabled(buckets, n_inside, table[i], hist, marked)
        else:  # no table: every value placed one by one
            for t in range(n_inside):
                marked[t] = t
            n_marked = n_inside
        v_of = (row_products, norms, scale)
        count = _place_marked(i, v_of, listed, n_marked, table[i], tabled, lo_row, hi_row, n, hist, members, count)
        running = 0
        for k in range(n):
            running += hist[k]
            below[i, k] = running
    return count


@numba.njit(cache=True, nogil=True)
def _count_tabled(buckets, n_inside, table, hist, marked):  # pragma: no cover - compiled
    """``hist[p] += 1`` for the first ``n_inside`` ``buckets`` whose ``table`` entry p is not
    :func:`_marked` (those count in the spare ``hist[-1]``, and their places in ``buckets`` are listed in
    ``marked``); returns how many are marked. Without a branch (a branch on the mark
    mispredicts), unsigned indices; a function of its own: the window pass's registers are all
    taken."""
    spare = np.uint64(hist.size - 1)
    n_marked = np.uint64(0)
    for t in range(n_inside):
        p = np.int64(table[np.uint64(buckets[t])])
        marked[n_marked] = t
        n_marked += np.uint64(p < 0)
        hist[np.uint64(p) if p >= 0 else spare] += 1
    return np.int64(n_marked)


@numba.njit(cache=True, nogil=True, inline="always")
def _place_marked(
    i, v_of, listed, n_marked, table, tabled, lo_row, hi_row, n, hist, members, count
):  # pragma: no cover - compiled
    """Row i's marked values (``listed``: columns, buckets, the places of the marked ones in
    them): ``hist[p] += 1`` for each one's place p among the low ends, and (i, k, column) into
    ``members`` from ``count`` on for each window k that holds it (counted past the capacity).
    p: from the number of low ends in earlier buckets (in the marked ``table`` entry) on, those
    of its own bucket (``tabled``), or a binary search. Returns the new count."""
    row_products, norms, scale = v_of
    columns, buckets, marked = listed[0], listed[1], listed[2]
    capacity = members.shape[1]
    for s in range(n_marked):
        c = columns[marked[s]]
        v = norms[c] - scale * row_products[c]
        # p: the windows whose low end is <= v (v is strictly below the windows k >= p)
        if tabled:
            p = _marked(table[buckets[marked[s]]])
            while p < n and lo_row[p] <= v:
                p += 1
        else:
            p = count_at_most(lo_row, 0, n, v)
        hist[p] += 1
        # v lies in the windows k < p whose high end is >= v (the high ends increase)
        k = p - 1
        while k >= 0 and hi_row[k] >= v:
            if count < capacity:
                members[0, count], members[1, count], members[2, count] = i, k, c
            count += 1
            k -= 1
    return count


@numba.njit(cache=True, nogil=True, inline="always")
def _skip(excluded, x, stop):  # pragma: no cover - compiled
    """The first position from x on whose excluded pair lies at or after the flat position stop."""
    while x < excluded.size and excluded[x] < stop:
        x += 1
    return x


def pair_values(queries, reference, norms, euclidean, rows, cols):
    """float64 ``norms[c] - 2 q.r`` (euclidean) or ``-q.r`` of each pair (queries[rows[t]],
    reference[cols[t]]), the products (exact in float64) summed in float64 in any order the
    compiler likes (reassociation and fused multiply-adds allowed: the bound holds for every
    order; no other fast-math liberty is taken)."""
    out = np.empty(rows.size)
    _pair_values_into(queries, reference, norms, euclidean, rows, cols, out)
    return out


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _pair_values_into(queries, reference, norms, euclidean, rows, cols, out):  # pragma: no cover - compiled
    """:func:`pair_values` into ``out`` (rows.size,). The reference row of the pair
    :data:`PAIR_AHEAD` on is prefetched: the rows are read at random from the whole reference
    (beyond L2 once the block's products have passed), and waiting for them was a large part of
    the loop's time (bench/NOTES.md, 'Figures moved from the code (stop 52)')."""
    d = queries.shape[1]
    n = rows.size
    for t in range(n):
        ahead = reference[cols[min(t + PAIR_AHEAD, n - 1)]]
        for j in range(0, d, 64 // reference.itemsize):
            prefetch(ahead, j)
        q, r = queries[rows[t]], reference[cols[t]]
        acc = 0.0
        for j in range(d):
            acc += np.float64(q[j]) * np.float64(r[j])
        out[t] = norms[cols[t]] - 2.0 * acc if euclidean else -acc


def graded_pairs(positive, left_out):
    """(rows, cols) of the pairs of a chunk that are ``positive`` and not ``left_out`` (both
    (b, m) bool; ``left_out`` may be None), row-major, and ``excluded``: the flat positions
    i m + c of those positive or left out, increasing; int64. numpy's ``nonzero`` and
    ``flatnonzero`` of the masks' combinations in one compiled pass (into arrays of numpy's
    counts of each mask, an upper bound) that reads the masks 64 bytes at a time."""
    m = positive.shape[1]
    n = np.count_nonzero(positive)  # bounds on what the pass lists
    k = n + (np.count_nonzero(left_out) if left_out is not None else 0)
    rows, cols, excluded = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(k, dtype=np.int64)
    flat = np.ascontiguousarray(positive).reshape(-1)
    left = flat if left_out is None else np.ascontiguousarray(left_out).reshape(-1)
    n, k = _graded_pairs_into(flat, left, left_out is not None, m, rows, cols, excluded)
    return rows[:n], cols[:n], excluded[:k]


@numba.njit(cache=True, nogil=True)
def _graded_pairs_into(positive, left_out, has_left, m, rows, cols, excluded):  # pragma: no cover - compiled
    """:func:`graded_pairs` into ``rows``, ``cols`` and ``excluded`` (large enough) from the flat
    masks (``left_out`` unread unless ``has_left``); returns how many each holds. Each 64 bytes
    of the masks become two 64-bit words of their set bytes (:func:`.list_kernels.nonzero_bits`),
    whose set bits are visited lowest first (graded pairs are rare)."""
    n, k = 0, 0
    row, row_start = 0, 0  # the row of a flat position, without a division
    whole = positive.size - positive.size % 64
    one = np.uint64(1)
    for base in range(0, whole, 64):
        graded = nonzero_bits(positive, base)
        out = nonzero_bits(left_out, base) if has_left else np.uint64(0)
        bits = graded | out
        graded &= ~out
        while bits:
            j = np.uint64(trailing_zeros(bits))
            bits &= bits - one
            f = base + np.int64(j)
            while f >= row_start + m:
                row, row_start = row + 1, row_start + m
            excluded[k] = f
            k += 1
            if (graded >> j) & one:
                rows[n], cols[n] = row, f - row_start
                n += 1
    for f in range(whole, positive.size):  # the bytes after the last whole 64
        p = positive[f]
        out_f = has_left and left_out[f]
        if p or out_f:
            excluded[k] = f
            k += 1
            if p and not out_f:
                rows[n], cols[n] = f // m, f % m
                n += 1
    return n, k
