"""Placing values among a row's sorted relevant values (numba; imported only when
:func:`embedeval._core.compiled.enabled`), for the deep pass (:mod:`.deep_kernels`): where
each value falls among them (how many are <= it: numpy's ``searchsorted(..., side="right")``),
by a binary search, by a galloping search from a known lower place, or, for many values of the
same rows, by collecting them, sorting them by row and value and walking along each row once.

Why the walk: a row's relevant values are 16 KB at R ~ 2,000 (160 KB at 20,000), and a chunk
of 256 rows does not keep them in cache; a binary search then waits on memory at each step
(bench/NOTES.md, 'Figures moved from the code (stop 52)'), while the walk reads the row in
order, each value starting from the place of the one before (a few steps, then a galloping
search where they are far apart).

Collected values are float32 (the deep pass's mixed precision): a key is ``row << 32`` and the
float32's order key (its bits, all flipped for negative values and the sign bit set for the
others: unsigned comparison of keys is the float comparison, -0.0 before 0.0; a NaN is never
collected), sorted by a least-significant-digit radix sort with the column alongside. The
walk gives each value exactly the place and near-tie decision that
:func:`.deep_kernels.place_chunk` gives it (the tests check both against numpy).

:mod:`.deep_kernels` inlines this module's searches and collection into its cached kernels;
an edit here compiles them again (the cache is keyed by the package's sources:
:func:`embedeval._core.compiled.kernel_numba`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._core.compiled import kernel_numba

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)


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


@numba.njit(inline="always")
def _search_near(row, v, p, n):  # pragma: no cover
    """:func:`_search` over [0, n] for a v whose place is probably within 4 of ``p`` (the place of
    its float32 value): a binary search within [p - 4, p + 4] where the place lies there (the
    row's values at both ends say so), else over the whole row."""
    low, high = max(p - 4, 0), min(p + 4, n)
    if row[low] <= v and row[high + 1] > v:
        return _search(row, v, low, high)
    return _search(row, v, 0, n)


@numba.njit(inline="always")
def _near(v, before, after, win):  # pragma: no cover
    """Whether v is within ``win`` of the relevant value before it or the one after it (a near-tie:
    the error bounds cannot order them)."""
    return v - before <= win or after - v <= win


@numba.njit(inline="always")
def _search_from(row, v, low, n):  # pragma: no cover
    """:func:`_search` over [low, n], v known to lie at or after ``low``: steps of 1, 2, 4, ...
    while the row's values stay <= v, then a binary search within the last step."""
    step = 1
    while low + step <= n and row[low + step] <= v:
        low += step
        step <<= 1
    return _search(row, v, low, min(low + step - 1, n))


class Collected(NamedTuple):
    """Values collected for placement in order (:func:`new_collected`).

    ``keys`` (capacity,) uint64: ``row << 32 | the float32 value's order key`` (:func:`_key32`);
    ``cols`` (capacity,) int32: each value's column; ``scratch_keys``, ``scratch_cols``: the
    radix sort's second buffers; ``hist``: its digit counts; ``fill`` (1,) int64: how many are
    held (the kernels write it).
    """

    keys: np.ndarray
    cols: np.ndarray
    scratch_keys: np.ndarray
    scratch_cols: np.ndarray
    hist: np.ndarray
    fill: np.ndarray


def new_collected(capacity) -> Collected:
    """Empty room for ``capacity`` collected values."""
    return Collected(
        np.empty(capacity, np.uint64),
        np.empty(capacity, np.int32),
        np.empty(capacity, np.uint64),
        np.empty(capacity, np.int32),
        np.empty(_KEY_DIGITS << _DIGIT, np.int64),
        np.zeros(1, np.int64),
    )


def room(collected: Collected) -> int:
    """How many more values ``collected`` holds."""
    return collected.keys.size - int(collected.fill[0])


def place_collected(collected: Collected, padded, ranked, window, counts):
    """Place the collected values as :func:`.deep_kernels.place_chunk` would have (``counts``), and
    empty ``collected``; returns their near-ties, (k, 3) int64 (row, column, place), as
    :func:`~.deep_kernels.place_chunk` writes them."""
    keys, cols, n = collected.keys, collected.cols, int(collected.fill[0])
    out = np.empty((n, 3), dtype=np.int32)
    if n:
        n_bits = 32 + max(int(padded.shape[0] - 1).bit_length(), 1)
        if _sort_pairs(keys, cols, collected.scratch_keys, collected.scratch_cols, n, n_bits, collected.hist):
            keys, cols = collected.scratch_keys, collected.scratch_cols
        collected.fill[0] = 0
        out = out[: _place_sorted(keys, cols, n, padded, ranked, window, counts, out)]
    return out.astype(np.int64)


@numba.njit(inline="always")
def _collect_row(values, row_bits, listed, n_within, i, c0, t, keys, cols, n_keys):  # pragma: no cover
    """Add row i's ``n_within`` listed values to the collected ones (from ``n_keys`` on); returns
    how many are <= t."""
    high = np.uint64(i) << np.uint64(32)
    n_below = 0
    for q in range(n_within):
        c = listed[q]
        if np.float64(values[c]) <= t:
            n_below += 1
        keys[n_keys + q] = high | _key32(row_bits[c])
        cols[n_keys + q] = c0 + c
    return n_below


# Bits of a digit of the collected values' radix sort, and the most digits a 64-bit key has.

_DIGIT = 11
_KEY_DIGITS = -(-64 // _DIGIT)


@numba.njit(inline="always")
def _key32(bits):  # pragma: no cover
    """The order key of a float32's bits (uint32): unsigned comparison of keys is the float
    comparison (-0.0 before 0.0; no NaN reaches here)."""
    if bits & np.uint32(0x8000_0000):
        return np.uint64(~bits & np.uint32(0xFFFF_FFFF))
    return np.uint64(bits | np.uint32(0x8000_0000))


@numba.njit(inline="always")
def _value32(key):  # pragma: no cover
    """The float32 value (as float64) of a key's low 32 bits (the inverse of :func:`_key32`)."""
    k = np.uint32(key & np.uint64(0xFFFF_FFFF))
    if k & np.uint32(0x8000_0000):
        bits = k & np.uint32(0x7FFF_FFFF)
    else:
        bits = ~k & np.uint32(0xFFFF_FFFF)
    return np.float64(np.uint32(bits).view(np.float32))


@numba.njit(cache=True, nogil=True)
def _sort_pairs(keys, cols, scratch_keys, scratch_cols, n, n_bits, hist):  # pragma: no cover - compiled
    """Sort ``keys[:n]`` (their low ``n_bits``) with ``cols[:n]`` alongside: a least-significant-digit
    radix sort, a digit all keys share skipped. Returns 1 where the result lies in the scratch."""
    size = 1 << _DIGIT
    n_digits = -(-n_bits // _DIGIT)
    mask = np.uint64(size - 1)
    for q in range(n_digits * size):
        hist[q] = 0
    for j in range(n):
        x = keys[j]
        for d in range(n_digits):
            hist[d * size + ((x >> np.uint64(d * _DIGIT)) & mask)] += 1
    at = 0
    for d in range(n_digits):
        total, shared = 0, False
        for q in range(d * size, (d + 1) * size):
            here = hist[q]
            if here == n:
                shared = True
                break
            hist[q] = total
            total += here
        if shared:
            continue
        if at:
            src_k, src_c, dst_k, dst_c = scratch_keys, scratch_cols, keys, cols
        else:
            src_k, src_c, dst_k, dst_c = keys, cols, scratch_keys, scratch_cols
        shift = np.uint64(d * _DIGIT)
        base = d * size
        for j in range(n):
            x = src_k[j]
            q = base + ((x >> shift) & mask)
            p = hist[q]
            dst_k[p] = x
            dst_c[p] = src_c[j]
            hist[q] = p + 1
        at = 1 - at
    return at


@numba.njit(cache=True, nogil=True)
def _place_sorted(keys, cols, n, padded, ranked, window, counts, out):  # pragma: no cover - compiled
    """:func:`place_collected` after the sort: each row's values ascending, each placed from the
    place of the one before (a few steps along the row, then a galloping search)."""
    n_nearest = padded.shape[1] - 2
    n_out = 0
    current = -1
    row = padded[0]
    low, top, win = 0, 0, 0.0
    for j in range(n):
        key = keys[j]
        i = np.int64(key >> np.uint64(32))
        if i != current:
            current = i
            row = padded[i]
            low, top, win = 0, ranked[i], window[i]
        v = _value32(key)
        stop = min(low + 16, n_nearest)
        while low < stop and row[low + 1] <= v:
            low += 1
        if low == stop and low < n_nearest:
            low = _search_from(row, v, low, n_nearest)
        counts[i, min(low, top)] += 1
        if _near(v, row[low], row[low + 1], win):
            out[n_out, 0], out[n_out, 1], out[n_out, 2] = i, cols[j], low
            n_out += 1
    return n_out
