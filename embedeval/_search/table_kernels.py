"""A row's bucket table, for the deep pass (:mod:`.deep_kernels`; numba, imported only when
:func:`embedeval._core.compiled.enabled`): buckets of equal width over a row's sorted relevant
values, each holding how many of them lie in earlier buckets, so that a value's place among
them (how many are <= it: numpy's ``searchsorted(..., side="right")``) lies between two
neighbouring entries. A row fills its table once it has placed enough values to repay it.

:mod:`.deep_kernels` compiles these into its cached kernel, and numba's cache does not see an
edit made here (as for :mod:`.placed_kernels`): after one, empty
``embedeval/_search/__pycache__`` of its ``*.nbi``/``*.nbc`` files (the test suite keeps its own
cache per version of the kernels).
"""

from __future__ import annotations

import numba
import numpy as np

from .placed_kernels import _search


def new_tables(m, n_nearest):
    """Empty bucket tables for ``m`` padded rows of ``n_nearest`` values (filled by
    :func:`place_chunk` where they pay): (table (m, n_buckets + 1) int32, info (m, 3) float64,
    state (m,) int64: binary searches so far, -1 once the row's table is filled, -2 where it cannot
    be). ``n_buckets``: a power of two, at least 16 and ``n_nearest``. ``np.empty``: the pages of
    rows never filled are never touched."""
    n_buckets = 16
    while n_buckets < n_nearest:
        n_buckets *= 2
    return np.empty((m, n_buckets + 1), np.int32), np.empty((m, 3)), np.zeros(m, np.int64)


@numba.njit(nogil=True)
def _fill_table(row, n_nearest, table, info):  # pragma: no cover
    """Buckets of equal width over the row's finite values [first, last]: ``table[k]`` = how many
    of them lie in buckets before k (``table[-1]``: all of them), ``info`` = (first, last,
    1 / width). Returns False where no such buckets exist (no finite value, one value repeated,
    a span that overflows).

    A value v in [first, last) has its place (how many row values are <= v) in
    [table[k], table[k + 1]] for k = its bucket: the bucket is a non-decreasing function of v,
    computed the same way for both, so a row value in an earlier bucket is below v and one in a
    later bucket above it, whatever the rounding.
    """
    n_fin = n_nearest
    while n_fin > 0 and not row[n_fin] < np.inf:  # row[k + 1] holds value k; +inf values last
        n_fin -= 1
    if n_fin == 0:
        return False
    first, last = row[1], row[n_fin]
    n_buckets = table.shape[0] - 1
    width = (last - first) / n_buckets
    if not (first > -np.inf and width > 0.0 and width < np.inf):
        return False
    inverse = 1.0 / width
    if not inverse < np.inf:  # a subnormal width
        return False
    table[:] = 0
    for k in range(n_fin):
        table[_bucket(row[k + 1], first, inverse, n_buckets) + 1] += 1
    for k in range(1, n_buckets + 1):
        table[k] += table[k - 1]
    info[0], info[1], info[2] = first, last, inverse
    return True


@numba.njit(inline="always")
def _table_place(row, v, table, k):  # pragma: no cover
    """The place of v (in bucket k of the row's filled ``table``) among the row's values."""
    low, high = table[k], table[k + 1]
    if high - low > 8:  # a crowded bucket (duplicates): a binary search within it
        return _search(row, v, low, high)
    while row[low + 1] <= v:  # a few values: a scan (the value after the bucket is above v)
        low += 1
    return low


@numba.njit(inline="always")
def _bucket(v, first, inverse, n_buckets):  # pragma: no cover
    """The bucket of v (0 .. n_buckets - 1): non-decreasing in v under any rounding."""
    f = (v - first) * inverse
    if f >= n_buckets:
        return n_buckets - 1
    if f > 0.0:
        return int(f)
    return 0


@numba.njit(nogil=True)
def _place_tabled(
    values, listed, start, n_within, row, table, counts, top, t, win, info, i, c0, out, n_out
):  # pragma: no cover
    """Place the listed values ``start:n_within`` of row i (``listed[0]``: their columns in
    ``values``; ``listed[1]``: scratch), whose ``table`` is filled (``info``: its first, last and
    1 / width; ``counts``: the row's), as a binary search places them: ``counts[min(p, top)] += 1``
    for each place p, and (row i, column ``c0`` + c, p) written to ``out`` from ``n_out`` for each
    near-tie (within ``win`` of the row value on either side). Returns (how many of the values
    are <= t, ``n_out``).

    Two loops, so that the first has no branch that mispredicts and the processor overlaps the
    values' loads (in a function of its own, not inlined: the caller's registers are all taken;
    unsigned indices: no test for a negative one). The first gives each value the place that
    its bucket and the bucket's first two row values give (:func:`_table_place`'s; after every
    relevant value: ``n_fin``; +inf: every row value, as the binary search), and marks those of
    buckets holding more; the second places those by :func:`_table_place`, counts every value
    and writes the near-ties.
    """
    first, last, inverse = info[0], info[1], info[2]
    n_buckets = table.shape[0] - 1
    n_fin = np.int64(table[n_buckets])
    top_bucket = np.float64(n_buckets - 1)
    end = row.shape[0] - 1  # the +inf after the row's values
    columns, places = listed[0], listed[1]
    n_below = 0
    for q in range(start, n_within):
        v = np.float64(values[np.uint64(columns[q])])
        n_below += v <= t
        k = np.uint64(min(max((v - first) * inverse, 0.0), top_bucket))  # _bucket without a branch
        low, high = np.int64(table[k]), np.int64(table[k + np.uint64(1)])
        p = low + ((low + 1 <= high) & (row[np.uint64(min(low + 1, end))] <= v))
        p += (low + 2 <= high) & (row[np.uint64(min(low + 2, end))] <= v)
        p = n_fin if v >= last else p
        p = p if v < np.inf else end - 1
        places[q] = -1 if (high - low > 2) & (v < last) else p
    for q in range(start, n_within):
        p = np.int64(places[q])
        v = np.float64(values[np.uint64(columns[q])])
        if p < 0:  # a crowded bucket
            p = _table_place(row, v, table, _bucket(v, first, inverse, n_buckets))
        counts[np.uint64(min(p, top))] += 1
        if (v - row[np.uint64(p)] <= win) | (row[np.uint64(p + 1)] - v <= win):
            out[n_out, 0], out[n_out, 1], out[n_out, 2] = i, c0 + columns[q], p
            n_out += 1
    return n_below, n_out
