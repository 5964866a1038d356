"""Compiled sort of the rows of a float64 array (numba; imported only when
:func:`embedeval._core.compiled.enabled`): the deep ranking's nearest relevant values of each
row, ascending (:func:`embedeval._search.deep_count.smallest_sorted`).

numpy's sort compares values one by one (on hosts without its vectorised sort: bench/NOTES.md,
'Figures moved from the code (stop 52)'), and a deep class sorts ``R`` values for each of its ``R`` queries.
Here each value becomes a 64-bit key that orders as the value does
(:func:`.primitives.ordered_key`), and the keys are
sorted by a least-significant-digit radix sort on their top 32 bits (sign, exponent and 20
bits of mantissa) in digits of :data:`DIGIT` bits, a digit that all keys of the row share
being skipped. Keys equal in those 32 bits (values within a relative 1e-6 or so of each other)
are then ordered by their whole key: by insertion where a run of them is short, by a second
radix sort on the low 32 bits where it is long (collapsed embeddings, duplicates). Integer
comparisons of the whole key order as numpy's float comparisons do, so the result is numpy's
sorted row, bit for bit (0.0 and -0.0, equal values, may stand in either order there, and do
so here too: the keys put -0.0 first).

A NaN has no place in this order (numpy puts them last); a row holding one is reported and
the caller sorts with numpy.

The loops allocate nothing (numba compiles its own implementation of each ``np.empty`` a
kernel calls): the scratch comes from the plain Python wrapper.
"""

from __future__ import annotations

import numpy as np

from .._core.compiled import kernel_numba
from .primitives import ordered_bits, ordered_key

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

# Bits of a radix digit: 2,048 counts of a digit stay in the first-level cache.
DIGIT = 11
# Runs of keys equal in their top 32 bits up to this length are ordered by insertion.
INSERTION = 32

_HIGH = np.uint64(32)
_PLUS_INF = np.uint64(0x7FF0_0000_0000_0000 | (1 << 63))  # the key of +inf
_MINUS_INF = np.uint64(~0xFFF0_0000_0000_0000 & 0xFFFF_FFFF_FFFF_FFFF)  # the key of -inf


def sorted_rows(values: np.ndarray, out: np.ndarray, rows: np.ndarray) -> bool:
    """Write the first ``out.shape[1]`` values of each row of ``values`` (g, m) sorted to ``out[rows[r]]``.

    ``values`` float64 (g, m) with m >= ``out.shape[1]``; ``out`` float64 (any layout); ``rows``
    int64 (g,). Returns False, having written nothing after the first NaN's row, where a row
    holds a NaN (the caller sorts those with numpy).
    """
    m = values.shape[1]
    scratch = np.empty(2 * m, dtype=np.uint64)
    counts = np.empty(-(-32 // DIGIT) << DIGIT, dtype=np.int64)
    return _sorted_rows_into(values.view(np.uint64), out.view(np.uint64), rows, scratch, counts)


@numba.njit(inline="always")
def _radix(buf, lo, n, low_bit, counts):  # pragma: no cover - compiled
    """Sort ``buf[0, lo:lo + n]`` stably by its bits ``low_bit .. low_bit + 31``, using ``buf[1]``
    as scratch; returns the row of ``buf`` where the result lies."""
    size = 1 << DIGIT
    n_digits = counts.size // size
    mask = np.uint64(size - 1)
    for q in range(counts.size):
        counts[q] = 0
    for j in range(lo, lo + n):
        x = buf[j]
        for d in range(n_digits):
            counts[d * size + ((x >> np.uint64(low_bit + d * DIGIT)) & mask)] += 1
    src, m = 0, buf.size // 2
    for d in range(n_digits):
        c = counts[d * size : (d + 1) * size]
        total, shared = 0, False
        for q in range(size):
            here = c[q]
            if here == n:  # every key has this digit: the pass would change nothing
                shared = True
                break
            c[q] = total
            total += here
        if shared:
            continue
        shift = np.uint64(low_bit + d * DIGIT)
        for j in range(lo, lo + n):
            x = buf[src + j]
            q = (x >> shift) & mask
            buf[m - src + lo + c[q]] = x
            c[q] += 1
        src = m - src
    return src


@numba.njit(inline="always")
def _keys(row, a):  # pragma: no cover - compiled
    """``a[j] = ordered_key(row[j])`` for the row; False at a NaN."""
    for j in range(row.size):
        x = ordered_key(row[j])
        if x > _PLUS_INF or x < _MINUS_INF:  # a NaN
            return False
        a[j] = x
    return True


@numba.njit(inline="always")
def _insertion(a, lo, hi):  # pragma: no cover - compiled
    """Sort ``a[lo:hi]`` by insertion (a short run)."""
    for x in range(lo + 1, hi):
        v = a[x]
        y = x - 1
        while y >= lo and a[y] > v:
            a[y + 1] = a[y]
            y -= 1
        a[y + 1] = v


@numba.njit(cache=True, nogil=True)
def _sorted_rows_into(bits, out, rows, buf, counts):  # pragma: no cover - compiled
    """:func:`sorted_rows` on the values' bits (uint64 views of the float64 arrays), ``buf`` (2, m)
    scratch."""
    g, m = bits.shape
    k = out.shape[1]
    a = buf[:m]
    for r in range(g):
        if not _keys(bits[r], a):
            return False
        # first the whole row by its top 32 bits; then each long run of keys equal in those
        # bits by the low 32 (one radix site: numba compiles each inlined copy again)
        lo, n, low_bit, j = 0, m, 32, 0
        while True:
            if n:
                if _radix(buf, lo, n, low_bit, counts):
                    for x in range(lo, lo + n):
                        a[x] = buf[m + x]
                n = 0
            if j >= k:
                break
            top = a[j] >> _HIGH
            e = j + 1
            while e < m and a[e] >> _HIGH == top:
                e += 1
            if e - j > INSERTION:
                lo, n, low_bit = j, e - j, 0
            elif e - j > 1:
                _insertion(a, j, e)
            j = e
        o = out[rows[r]]
        for j in range(k):
            o[j] = ordered_bits(a[j])
    return True
