"""Compiled pass of the deep ranking (numba; imported only when
:func:`embedeval._core.compiled.enabled`): each chunk of other references' values placed among
its row's nearest relevant values in one loop, with the comparisons of
:meth:`embedeval._search.deep_block.Block._count`'s numpy passes in the same precision, so that
counts and near-ties are the same.

For every value v of row i within the row's limit: its place p (how many of the row's nearest
relevant values are <= v, a binary search), ``counts[i, min(p, ranked[i])] += 1`` (the others
before each relevant value, summed later), ``below[i] += v <= threshold[i]``, and when v lies
within ``window[i]`` of the relevant value on either side (a near-tie: the float32 or float64
error bounds cannot order them), its (row, column, place) is written to ``out``.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(inline="always")
def _search(row, v, low, high):  # pragma: no cover
    """numpy's ``searchsorted(row[1:-1], v, side="right")`` known to lie in [low, high] (row[0] = -inf,
    row[-1] = +inf): a binary search."""
    m = high - low
    while m > 0:
        half = m >> 1
        if row[low + half + 1] <= v:
            low += half + 1
            m -= half + 1
        else:
            m = half
    return low


@numba.njit(cache=True, nogil=True)
def place_chunk(chunk, i0, c0, lim, padded, ranked, threshold, window, counts, below, out):  # pragma: no cover
    """One chunk (h, w) of rows ``i0:i0 + h`` at columns ``c0:c0 + w``; returns the near-ties written."""
    h, w = chunk.shape
    n_nearest = padded.shape[1] - 2
    n_out = 0
    for a in range(h):
        i = i0 + a
        row = padded[i]
        limit, top, t, win = lim[a], ranked[i], threshold[i], window[i]
        for c in range(w):
            if not chunk[a, c] <= limit:
                continue
            v = np.float64(chunk[a, c])
            low = _search(row, v, 0, n_nearest)
            counts[i, min(low, top)] += 1
            if v <= t:
                below[i] += 1
            if v - row[low] <= win or row[low + 1] - v <= win:
                out[n_out, 0] = i
                out[n_out, 1] = c0 + c
                out[n_out, 2] = low
                n_out += 1
    return n_out


@numba.njit(cache=True, nogil=True)
def replace_float64(near, rows, factors64, matrix64, padded, ranked, bound_rel, counts):  # pragma: no cover
    """Place the near-ties ``near`` (k, 3: row, column, float32 place) again with float64 values.

    Each pair's value is the float64 product of its row's factors and column (summed in order:
    the bounds hold for any order), its place moves from the float32 one in ``counts``, and
    the result says which are still within twice the float64 bound of a relevant neighbour.
    """
    n_nearest = padded.shape[1] - 2
    d = matrix64.shape[1]
    still = np.zeros(near.shape[0], dtype=np.bool_)
    for k in range(near.shape[0]):
        i, col, place = near[k, 0], near[k, 1], near[k, 2]
        f = factors64[rows[i]]
        m = matrix64[col]
        v = 0.0
        for j in range(d):
            v += f[j] * m[j]
        row = padded[i]
        low = _search(row, v, 0, n_nearest)
        counts[i, min(place, ranked[i])] -= 1
        counts[i, min(low, ranked[i])] += 1
        win = 2 * bound_rel[i]
        still[k] = v - row[low] <= win or row[low + 1] - v <= win
    return still


@numba.njit(cache=True, nogil=True)
def ranks_from_counts(counts, ranked, depth):  # pragma: no cover
    """:func:`embedeval._search.deep_count.ranks_from_counts` in one pass (same float64 values)."""
    m, w = counts.shape[0], counts.shape[1] - 1
    ranks = np.empty((m, w))
    for i in range(m):
        run = 0
        for j in range(w):
            run += counts[i, j]
            r = np.float64(run) + np.float64(j + 1)
            ranks[i, j] = r if j < ranked[i] and not r > depth[i] else np.inf
    return ranks
