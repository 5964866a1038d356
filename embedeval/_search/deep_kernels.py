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
            low, m = 0, n_nearest
            while m > 0:  # numpy's searchsorted(row[1:-1], v, side="right"), the answer in [low, low + m]
                half = m >> 1
                if row[low + half + 1] <= v:
                    low += half + 1
                    m -= half + 1
                else:
                    m = half
            counts[i, min(low, top)] += 1
            if v <= t:
                below[i] += 1
            if v - row[low] <= win or row[low + 1] - v <= win:
                out[n_out, 0] = i
                out[n_out, 1] = c0 + c
                out[n_out, 2] = low
                n_out += 1
    return n_out
