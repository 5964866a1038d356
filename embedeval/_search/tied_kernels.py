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
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def window_pass(products, norms, euclidean, low, high, n_windows, capacity):  # pragma: no cover - compiled
    """Below-window counts and window members of a chunk.

    products (b, m) float32 or float64 (excluded references -inf); norms (m,) float64, the
    references' squared norms (euclidean; unused otherwise); each value is
    ``v = norms[c] - 2 products[i, c]`` (euclidean) or ``-products[i, c]``, in float64.
    low, high (b, g) float64, increasing along each row's first ``n_windows[i]`` entries.
    Returns ``below`` (b, g) int64, the values v < low[i, k]; and (rows, ks, cols, n_members):
    the (row, window, column) of each value in [low[i, k], high[i, k]], the first
    ``n_members`` of the arrays (n_members > capacity: the arrays overflowed, call again with
    ``capacity = n_members``).
    """
    b, m = products.shape
    g = low.shape[1]
    below = np.zeros((b, g), dtype=np.int64)
    rows = np.empty(capacity, dtype=np.int64)
    ks = np.empty(capacity, dtype=np.int64)
    cols = np.empty(capacity, dtype=np.int64)
    count = 0
    hist = np.zeros(g + 1, dtype=np.int64)
    guess = np.zeros(4 * g + 1, dtype=np.int64)
    for i in range(b):
        n = n_windows[i]
        if n == 0:
            continue
        hist[: n + 1] = 0
        lo_row, hi_row = low[i], high[i]
        first, last = lo_row[0], hi_row[n - 1]
        n_buckets, width = _buckets(lo_row, n, first, last, guess)
        inverse = 1.0 / width
        for c in range(m):
            v = norms[c] - 2.0 * np.float64(products[i, c]) if euclidean else -np.float64(products[i, c])
            # The common cases first: beyond every window, or below every one.
            if v > last or v != v:  # NaN: after every value, as numpy's sort puts it
                hist[n] += 1
                continue
            if v < first:
                hist[0] += 1
                continue
            # p: the windows whose low end is <= v (v is strictly below the windows k >= p),
            # from a bucket's guess corrected both ways (exact whatever the rounding of the guess)
            p = guess[_bucket(v, first, inverse, n_buckets)]
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
def _bucket(v, first, inverse, n_buckets):  # pragma: no cover - compiled
    f = (v - first) * inverse
    if f >= n_buckets:
        return n_buckets - 1
    if f > 0.0:
        return int(f)
    return 0


@numba.njit(cache=True, nogil=True)
def pair_values(queries, reference, norms, euclidean, rows, cols):  # pragma: no cover - compiled
    """float64 ``norms[c] - 2 q.r`` (euclidean) or ``-q.r`` of each pair (queries[rows[t]],
    reference[cols[t]]), the products summed in float64 in index order."""
    out = np.empty(rows.size)
    d = queries.shape[1]
    for t in range(rows.size):
        q, r = queries[rows[t]], reference[cols[t]]
        acc = 0.0
        for j in range(d):
            acc += np.float64(q[j]) * np.float64(r[j])
        out[t] = norms[cols[t]] - 2.0 * acc if euclidean else -acc
    return out
