"""Compiled pass of the deep ranking (numba; imported only when
:func:`embedeval._core.compiled.enabled`): each chunk of other references' values placed among
its row's nearest relevant values in one loop, with the comparisons of
:meth:`embedeval._search.deep_block.Block.count`'s numpy passes in the same precision, so that
counts and near-ties are the same.

For every value v of row i within the row's limit (the columns within listed first,
:mod:`.list_kernels`): its place p (how many of the row's nearest relevant values are <= v: a
binary search, or once the row has placed enough values, a bucket of its table,
:mod:`.table_kernels`), ``counts[i, min(p, ranked[i])] += 1`` (the others
before each relevant value, summed later), ``below[i] += v <= threshold[i]``, and when v lies
within ``window[i]`` of the relevant value on either side (a near-tie: the float32 or float64
error bounds cannot order them), its (row, column, place) is written to ``out``.

The compiled loops allocate nothing: numba compiles its own implementation of each
``np.zeros`` or ``np.empty`` a kernel calls, as costly to compile as a small loop, so the
outputs come from numpy in plain Python wrappers (``python bench/bench_compile.py --cold
--deep``).
"""

from __future__ import annotations

import numpy as np

from .._core.compiled import kernel_numba
from .._core.intrinsics import prefetch
from .list_kernels import list_within
from .merged_kernels import pair_value64
from .primitives import count_at_most, gallop_at_most, near_tie
from .table_kernels import NO_TABLE, TABLE_FILLED, _fill_table, _place_tabled
from .table_kernels import new_tables as new_tables  # the callers make the tables here

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

# Near-ties ahead whose reference row _replace_float64_into prefetches.
AHEAD = 8


def place_chunk(chunk, i0, c0, lim, padded, ranked, threshold, window, counts, below, out, tables, listed=None):
    """One chunk (h, w) of rows ``i0:i0 + h`` at columns ``c0:c0 + w``; returns the near-ties written.

    ``tables``: :func:`new_tables` for the rows of ``padded``, filled here row by row once a row
    has placed enough values to repay a table (:func:`_fill_table`).
    ``listed``: int32 scratch of shape (2, at least w), kept by a caller that places many chunks
    (None: allocated here).
    """
    if listed is None:
        listed = np.empty((2, chunk.shape[1]), dtype=np.int32)
    return _place_chunk_into(chunk, i0, c0, lim, padded, ranked, threshold, window, counts, below, out, tables, listed)


@numba.njit(cache=True, nogil=True)
def _place_chunk_into(
    chunk, i0, c0, lim, padded, ranked, threshold, window, counts, below, out, tables, listed
):  # pragma: no cover - compiled
    """:func:`place_chunk` with ``listed`` (2, w) int32: scratch, a row's columns within its limit
    and their places (:func:`.table_kernels._place_tabled`)."""
    h = chunk.shape[0]
    n_nearest = padded.shape[1] - 2
    table, info, state = tables
    enough = (n_nearest >> 2) + 16  # binary searches before a row's table pays (its fill: about 3 n_nearest steps)
    n_out = 0
    for a in range(h):
        i = i0 + a
        row = padded[i]
        limit, top, t, win = lim[a], ranked[i], threshold[i], window[i]
        st = state[i]  # kept in a register for the row
        values = chunk[a]
        n_within = list_within(values, limit, listed[0])
        n_below, q = 0, 0
        while q < n_within and st != TABLE_FILLED:  # a binary search each, until the row fills its table
            c = listed[0, q]
            v = np.float64(values[c])
            n_below += v <= t
            low = count_at_most(row, 1, n_nearest + 1, v) - 1
            if st >= 0:  # st values placed so far
                st += 1
                if st > enough:
                    st = TABLE_FILLED if _fill_table(row, n_nearest, table[i], info[i]) else NO_TABLE
            counts[i, min(low, top)] += 1
            if near_tie(v, row[low], row[low + 1], win):
                out[n_out, 0], out[n_out, 1], out[n_out, 2] = i, c0 + c, low
                n_out += 1
            q += 1
        if q < n_within:  # the rest by the row's table
            placed_below, n_out = _place_tabled(
                values, listed, q, n_within, row, table[i], counts[i], top, t, win, info[i], i, c0, out, n_out
            )
            n_below += placed_below
        below[i] += n_below
        state[i] = st
    return n_out


def reached(padded, others, count):
    """``out[r, k] = np.searchsorted(padded[r, 1:-1], others[r, k], side="right")`` for k below
    ``count[r]`` (0 after): (b, s) int64. ``others``' rows ascending; neither holds a NaN (the
    caller checks: numpy places a NaN after every number, a comparison never does)."""
    out = np.zeros(others.shape, dtype=np.int64)
    _reached_into(padded, others, count, out)
    return out


@numba.njit(cache=True, nogil=True)
def _reached_into(padded, others, count, out):  # pragma: no cover - compiled
    """:func:`reached` as one walk per row (both ascending), each step galloping from the last
    count (:func:`.primitives.gallop_at_most`). A row of J = 20,000 relevant values whose sampled
    others all lie beyond them (half of the points in one class) costs about 2 s log J steps, not
    J + s."""
    n = padded.shape[1] - 2
    for r in range(others.shape[0]):
        row = padded[r]  # row[1 + i]: the i-th nearest relevant value; row[n + 1] = +inf
        low = 0  # how many of row[1:n + 1] are at most the last value
        for k in range(count[r]):
            low = gallop_at_most(row, low + 1, n + 1, others[r, k]) - 1
            out[r, k] = low


def replace_float64(near, rows, factors64, matrix32, norms64, padded, ranked, bound_rel, counts):
    """Place the near-ties ``near`` (k, 3: row, column, float32 place) again with float64 values.

    Each pair's value is the float64 product of its row's factors and its column's float64
    factors, read as :class:`embedeval._search.deep_factors.Float64Factors` makes them: its float32
    values (``matrix32`` (n, d [+ 1]), that class's ``float32``; widening is exact) and, for
    euclidean distances, its float64 squared norm (``norms64`` (n,), its ``norms``; empty for
    inner products) in place of the last one. The
    sum runs in any order the compiler likes (reassociation and fused multiply-adds allowed, so
    it is vectorised: the float64 bound holds for every order; no other fast-math liberty is
    taken); the pair's place moves from the float32 one in ``counts``, and the result says which
    are still within twice the float64 bound of a relevant neighbour.
    """
    still = np.empty(near.shape[0], dtype=np.bool_)
    matrix32 = np.ascontiguousarray(matrix32)  # as built (deep.factor_matrix): no copy
    flat = matrix32.reshape(-1)  # the reference rows as one, for the prefetch: a view
    dim = matrix32.shape[1] - (1 if norms64.size else 0)
    args = (near, rows, factors64, matrix32, norms64, dim, flat, padded, ranked, bound_rel, counts, still)
    _replace_float64_into(*args)
    return still


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _replace_float64_into(
    near, rows, factors64, matrix32, norms64, dim, flat, padded, ranked, bound_rel, counts, still
):  # pragma: no cover - compiled
    """:func:`replace_float64` with its result written to ``still`` (k,); ``flat``: ``matrix32``
    as one row. The near-ties' columns are scattered over a reference matrix of tens of MB, so
    the column ``AHEAD`` pairs on is prefetched (each of its cache lines) while a pair is summed."""
    n_nearest = padded.shape[1] - 2
    width = matrix32.shape[1]
    n = near.shape[0]
    for k in range(n):
        if k + AHEAD < n:
            start = near[k + AHEAD, 1] * width
            for line in range(0, width, 16):  # 16 float32: a 64-byte line
                prefetch(flat, start + line)
        i, col, place = near[k, 0], near[k, 1], near[k, 2]
        v = pair_value64(factors64[rows[i]], matrix32, norms64, col, dim)
        row = padded[i]
        low = _place_near(row, v, place, n_nearest)  # within the bounds of its float32 place
        counts[i, min(place, ranked[i])] -= 1
        counts[i, min(low, ranked[i])] += 1
        win = 2 * bound_rel[i]
        still[k] = near_tie(v, row[low], row[low + 1], win)


@numba.njit(inline="always")
def _place_near(row, v, p, n):  # pragma: no cover - compiled
    """How many of ``row[1:n + 1]`` are <= v, for a v whose place is probably within 4 of ``p``
    (the place of its float32 value): a bisection within [p - 4, p + 4] where the place lies there
    (the row's values at both ends say so), else over the whole row."""
    low, high = max(p - 4, 0), min(p + 4, n)
    if row[low] <= v and row[high + 1] > v:
        return count_at_most(row, low + 1, high + 1, v) - 1
    return count_at_most(row, 1, n + 1, v) - 1


def ranks_from_counts(counts, ranked, depth):
    """:func:`embedeval._search.deep_count.ranks_from_counts` in one pass (same float64 values)."""
    ranks = np.empty((counts.shape[0], counts.shape[1] - 1))
    _ranks_from_counts_into(counts, ranked, depth, ranks)
    return ranks


@numba.njit(cache=True, nogil=True)
def _ranks_from_counts_into(counts, ranked, depth, ranks):  # pragma: no cover
    """:func:`ranks_from_counts` into ``ranks`` (m, w)."""
    m, w = ranks.shape
    for i in range(m):
        run = 0
        for j in range(w):
            run += counts[i, j]
            r = np.float64(run) + np.float64(j + 1)
            ranks[i, j] = r if j < ranked[i] and not r > depth[i] else np.inf
