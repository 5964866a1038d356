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

import numba
import numpy as np


def bucket_tables(low, high, n_windows, n_buckets):
    """Per row, ``n_buckets`` buckets of equal width over [low[i, 0], high[i, n - 1]]: ``table``
    (b, n_buckets) int32, the number of low ends below every value that falls in the bucket, or
    -1 where a window end falls in it or a window covers it (those values are placed one by
    one); ``first`` and ``inverse`` (b,) place a value: ``bucket = int((v - first) * inverse)``.

    Exact whatever the rounding, since the bucket of a value is a non-decreasing function of
    it, computed the same way for the values and the window ends: in a bucket t that holds no
    end, a low end with bucket < t is <= every value in t, one with bucket > t is above them,
    and a window whose ends lie in buckets on either side of t is marked -1.
    """
    b = low.shape[0]
    table = np.full((b, n_buckets), -1, dtype=np.int32)
    first, inverse = np.zeros(b), np.zeros(b)
    _bucket_tables_into(low, high, n_windows, table, first, inverse)
    return table, first, inverse


@numba.njit(cache=True, nogil=True)
def _bucket_tables_into(low, high, n_windows, table, first, inverse):  # pragma: no cover - compiled
    """:func:`bucket_tables` into ``table`` (b, n_buckets) of -1 and ``first``, ``inverse`` (b,) of 0."""
    b, n_buckets = table.shape
    for i in range(b):
        n = n_windows[i]
        if n == 0:
            continue
        lo_row, hi_row = low[i], high[i]
        first[i] = lo_row[0]
        width = (hi_row[n - 1] - lo_row[0]) / n_buckets
        if not (width > 0.0 and width < np.inf):
            continue  # one point, or an infinite span: every value placed one by one
        inverse[i] = 1.0 / width
        row = table[i]
        row[:] = 0
        for w in range(n):  # each low end counts in the buckets after its own
            a = _bucket(lo_row[w], first[i], inverse[i], n_buckets)
            if a + 1 < n_buckets:
                row[a + 1] += 1
        for t in range(1, n_buckets):
            row[t] += row[t - 1]
        for w in range(n):  # the buckets of a window's ends, and those between
            a = _bucket(lo_row[w], first[i], inverse[i], n_buckets)
            z = _bucket(hi_row[w], first[i], inverse[i], n_buckets)
            for t in range(a, z + 1):
                row[t] = -1


def window_pass(products, excluded, norms, euclidean, low, high, n_windows, tables, capacity):
    """Below-window counts and window members of a chunk.

    products (b, m) float32 or float64; excluded (k,) int64, the flat positions (i m + c,
    increasing) of the pairs not counted (graded, counted elsewhere, or ignored: their value is
    taken as +inf); norms (m,) float64, the
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
    scratch = (np.empty(g + 1, dtype=np.int64), np.empty(m), np.empty(m, dtype=np.int64))
    table, _, inverses = tables
    window = (low, high, n_windows, table, inverses)
    n = _window_pass_into(products, excluded, norms, euclidean, *window, below, members, *scratch)
    return below, members[0], members[1], members[2], n


@numba.njit(cache=True, nogil=True)
def _window_pass_into(
    products, excluded, norms, euclidean, low, high, n_windows, table, inverses, below, members, hist, values, listed
):  # pragma: no cover - compiled
    """:func:`window_pass` into ``below`` (b, g) of 0 and ``members`` (3, capacity): rows, ks,
    cols; ``hist`` (g + 1,), ``values`` (m,) and ``listed`` (m,): scratch. Returns n_members."""
    b, m = products.shape
    n_buckets = table.shape[1]
    capacity = members.shape[1]
    count, x = 0, 0
    for i in range(b):
        n = n_windows[i]
        if n == 0:
            x = _skip(excluded, x, (i + 1) * m)
            continue
        hist[: n + 1] = 0
        lo_row, hi_row, row = low[i], high[i], table[i]
        first, last, inverse = lo_row[0], hi_row[n - 1], inverses[i]
        # Pass 1, without branches (vectorised): every value and those below every window (NaN
        # and +inf after every window), then +inf at the pairs left out. Then the columns
        # within [first, last] (a quarter of them in the floor table's row 6), listed by a
        # store at every column and an index that moves only for those: a branch on "within"
        # mispredicted often enough to cost 0.35 s of the pass's 0.5 s there (a conditional
        # store had been no faster than it).
        n_below = 0
        for c in range(m):
            v = norms[c] - 2.0 * np.float64(products[i, c]) if euclidean else -np.float64(products[i, c])
            values[c] = v
            n_below += v < first
        while x < excluded.size and excluded[x] < (i + 1) * m:
            c = excluded[x] - i * m
            n_below -= values[c] < first
            values[c] = np.inf
            x += 1
        hist[0] = n_below
        n_inside = 0
        for c in range(m):  # the columns within [first, last], listed without a branch
            v = values[c]
            listed[n_inside] = c
            n_inside += (v >= first) & (v <= last)
        # Pass 2: each value within [first, last], by its bucket or, near a window, one by one.
        for t in range(n_inside):
            c = listed[t]
            v = values[c]
            p = row[_bucket(v, first, inverse, n_buckets)] if inverse > 0.0 else -1
            if p >= 0:  # a bucket with no window end: its low-end count, no window
                hist[p] += 1
                continue
            # p: the windows whose low end is <= v (v is strictly below the windows k >= p)
            p = _place(lo_row, n, v)
            hist[p] += 1
            # v lies in the windows k < p whose high end is >= v (the high ends increase)
            k = p - 1
            while k >= 0 and hi_row[k] >= v:
                if count < capacity:
                    members[0, count], members[1, count], members[2, count] = i, k, c
                count += 1
                k -= 1
        running = 0
        for k in range(n):
            running += hist[k]
            below[i, k] = running
    return count


@numba.njit(cache=True, nogil=True, inline="always")
def _skip(excluded, x, stop):  # pragma: no cover - compiled
    """The first position from x on whose excluded pair lies at or after the flat position stop."""
    while x < excluded.size and excluded[x] < stop:
        x += 1
    return x


@numba.njit(cache=True, nogil=True, inline="always")
def _place(lo_row, n, v):  # pragma: no cover - compiled
    """The number of lo_row[:n] (increasing) that are <= v: a binary search."""
    lo, hi = 0, n
    while lo < hi:
        mid = (lo + hi) // 2
        if lo_row[mid] <= v:
            lo = mid + 1
        else:
            hi = mid
    return lo


@numba.njit(cache=True, nogil=True, inline="always")
def _bucket(v, first, inverse, n_buckets):  # pragma: no cover - compiled
    f = (v - first) * inverse
    if f >= n_buckets:
        return n_buckets - 1
    if f > 0.0:
        return int(f)
    return 0


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
    """:func:`pair_values` into ``out`` (rows.size,)."""
    d = queries.shape[1]
    for t in range(rows.size):
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
    counts of each mask, an upper bound) that reads the masks 8 bytes at a time."""
    m = positive.shape[1]
    n = np.count_nonzero(positive)  # bounds on what the pass lists
    k = n + (np.count_nonzero(left_out) if left_out is not None else 0)
    rows, cols, excluded = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64), np.empty(k, dtype=np.int64)
    flat = np.ascontiguousarray(positive).reshape(-1)
    left = flat if left_out is None else np.ascontiguousarray(left_out).reshape(-1)
    whole = flat.size - flat.size % 8
    words = (flat[:whole].view(np.uint64), left[:whole].view(np.uint64))
    n, k = _graded_pairs_into(flat, left, *words, left_out is not None, m, rows, cols, excluded)
    return rows[:n], cols[:n], excluded[:k]


@numba.njit(cache=True, nogil=True)
def _graded_pairs_into(
    positive, left_out, positive_words, left_words, has_left, m, rows, cols, excluded
):  # pragma: no cover - compiled
    """:func:`graded_pairs` into ``rows``, ``cols`` and ``excluded`` (large enough) from the
    flat masks and their first bytes as uint64 words (a word of zeros: 8 pairs neither graded
    nor left out); returns how many each holds (``left_out`` unread unless ``has_left``)."""
    n, k = 0, 0
    for w in range(positive_words.size + 1):
        if w < positive_words.size:
            if positive_words[w] == 0 and not (has_left and left_words[w] != 0):
                continue
            lo, hi = 8 * w, 8 * w + 8
        else:  # the bytes after the last whole word
            lo, hi = 8 * positive_words.size, positive.size
        for f in range(lo, hi):
            p = positive[f]
            out = has_left and left_out[f]
            if p or out:
                excluded[k] = f
                k += 1
                if p and not out:
                    rows[n], cols[n] = f // m, f % m
                    n += 1
    return n, k
