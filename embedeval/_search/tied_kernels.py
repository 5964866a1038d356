"""Compiled kernel (numba) of the tied scan's per-chunk pass, used where
:func:`embedeval._core.compiled.enabled`: for each row of a chunk of float64 BLAS distances,
the references strictly below each threshold's window and the members of every window, in one
pass over the row (no sort). The numpy path of :class:`~embedeval._search.tied_scan.TiedScanner`
(sort, then binary searches) is the reference; the suite requires identical counts.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def window_pass(dist, low, high, n_thresholds, capacity):  # pragma: no cover - compiled
    """Below-window counts and window members of a chunk.

    dist (b, m) float64 (excluded references +inf); low, high (b, g) float64, increasing along
    each row's first ``n_thresholds[i]`` entries. Returns ``below`` (b, g) int64, the values
    v < low[i, k]; and (rows, ks, cols, n_members): the (row, threshold, column) of each value in
    [low[i, k], high[i, k]], the first ``n_members`` of the arrays (n_members > capacity: the
    arrays overflowed, call again with ``capacity = n_members``).
    """
    b, m = dist.shape
    g = low.shape[1]
    below = np.zeros((b, g), dtype=np.int64)
    rows = np.empty(capacity, dtype=np.int64)
    ks = np.empty(capacity, dtype=np.int64)
    cols = np.empty(capacity, dtype=np.int64)
    count = 0
    hist = np.zeros(g + 1, dtype=np.int64)
    for i in range(b):
        n = n_thresholds[i]
        if n == 0:
            continue
        hist[: n + 1] = 0
        lo_row, hi_row = low[i], high[i]
        for c in range(m):
            v = dist[i, c]
            if v != v:  # NaN: after every value, as numpy's sort puts it
                hist[n] += 1
                continue
            # p: the thresholds whose low end is <= v (v is strictly below the windows k >= p)
            p = _count_at_most(lo_row, n, v)
            hist[p] += 1
            if p == 0:
                continue
            # q: the thresholds whose high end is < v; v lies in the windows q <= k < p
            for k in range(_count_below(hi_row, p, v), p):
                if count < capacity:
                    rows[count], ks[count], cols[count] = i, k, c
                count += 1
        running = 0
        for k in range(n):
            running += hist[k]
            below[i, k] = running
    return below, rows, ks, cols, count


@numba.njit(cache=True, nogil=True, inline="always")
def _count_at_most(sorted_row, n, v):  # pragma: no cover - compiled
    """The entries of ``sorted_row[:n]`` (increasing) that are <= v."""
    a, z = 0, n
    while a < z:
        mid = (a + z) >> 1
        if sorted_row[mid] <= v:
            a = mid + 1
        else:
            z = mid
    return a


@numba.njit(cache=True, nogil=True, inline="always")
def _count_below(sorted_row, n, v):  # pragma: no cover - compiled
    """The entries of ``sorted_row[:n]`` (increasing) that are < v."""
    a, z = 0, n
    while a < z:
        mid = (a + z) >> 1
        if sorted_row[mid] < v:
            a = mid + 1
        else:
            z = mid
    return a
