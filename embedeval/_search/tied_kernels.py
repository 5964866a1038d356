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
    guess = np.zeros(4 * g + 1, dtype=np.int64)
    for i in range(b):
        n = n_thresholds[i]
        if n == 0:
            continue
        hist[: n + 1] = 0
        lo_row, hi_row = low[i], high[i]
        first, last = lo_row[0], hi_row[n - 1]
        n_buckets, width = _buckets(lo_row, n, first, last, guess)
        for c in range(m):
            v = dist[i, c]
            # The common cases first: beyond every window, or below every one.
            if v > last or v != v:  # NaN: after every value, as numpy's sort puts it
                hist[n] += 1
                continue
            if v < first:
                hist[0] += 1
                continue
            # p: the thresholds whose low end is <= v (v is strictly below the windows k >= p),
            # from a bucket's guess corrected both ways (exact whatever the rounding of the guess)
            p = guess[_bucket(v, first, width, n_buckets)]
            while p > 0 and lo_row[p - 1] > v:
                p -= 1
            while p < n and lo_row[p] <= v:
                p += 1
            hist[p] += 1
            # v lies in the windows k < p whose high end is >= v (the high ends increase)
            k = p - 1
            while k >= 0 and hi_row[k] >= v:
                if count < capacity:
                    rows[count], ks[count], cols[count] = i, k, c
                count += 1
                k -= 1
        running = 0
        for k in range(n):
            running += hist[k]
            below[i, k] = running
    return below, rows, ks, cols, count


@numba.njit(cache=True, nogil=True)
def _buckets(lo_row, n, first, last, guess):  # pragma: no cover - compiled
    """4 n buckets of equal width over [first, last]; guess[t] = the low ends <= bucket t's left
    edge (a starting point only: the caller corrects it). Returns (n_buckets, width)."""
    n_buckets = 4 * n
    width = (last - first) / n_buckets
    if not (width > 0.0 and width < np.inf):
        guess[0] = 0
        return 1, 1.0
    p = 0
    for t in range(n_buckets):
        edge = first + t * width
        while p < n and lo_row[p] <= edge:
            p += 1
        guess[t] = p
    return n_buckets, width


@numba.njit(cache=True, nogil=True, inline="always")
def _bucket(v, first, width, n_buckets):  # pragma: no cover - compiled
    f = (v - first) / width
    if f >= n_buckets:
        return n_buckets - 1
    if f > 0.0:
        return int(f)
    return 0
