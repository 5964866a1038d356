"""Placing a value among a row's sorted relevant values (numba; imported only when
:func:`embedeval._core.compiled.enabled`), for the deep pass (:mod:`.deep_kernels`) and its
bucket tables (:mod:`.table_kernels`): how many of them are <= it (numpy's
``searchsorted(..., side="right")``), by a binary search over a known range or near a guessed
place, and whether it lies within a window of its neighbours (a near-tie).

:mod:`.deep_kernels` inlines these searches into its cached kernels; an edit here compiles them
again (the cache is keyed by the package's sources: :func:`embedeval._core.compiled.kernel_numba`).
"""

from __future__ import annotations

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
