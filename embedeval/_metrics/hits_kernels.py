"""Compiled row reductions of :class:`~embedeval._metrics.kernels.Hits` ranks (numba; imported
only when :func:`embedeval._core.compiled.enabled`), each the numpy expression of
:mod:`embedeval._metrics.kernels` in one pass instead of three or four over (queries, h) arrays:

* :func:`within`: ``np.count_nonzero(ranks <= bound[:, None], axis=1)``;
* :func:`precision_sums`: ``np.cumsum(np.where(ranks <= bound[:, None], j / ranks, 0.0),
  axis=1)[:, -1]`` with j = 1, 2, ... (every rank, ``j / ranks``, with no cutoff): the sum of
  the precisions at the relevant items, the numerator of average precision.

``bound`` is the cutoff, one per query (+inf for none). With ``ascending`` (the caller knows each
row ascends, NaN-free, +inf after its finite ranks: :attr:`~embedeval._metrics.kernels.Hits.ascending`),
a count is a binary search and a sum stops at the first rank past the cutoff, four rows summed at
once: the same results without reading a row's tail (the deep ranking's rows hold R ranks).

The sums run left to right with the same divisions and no fast-math, so that each result is the
numpy one bit for bit (an added 0.0 changes no partial sum, which is never -0.0). The loops
allocate nothing: outputs come from the plain Python wrappers.
"""

from __future__ import annotations

import numpy as np

from .._core.compiled import kernel_numba
from .._search.primitives import count_at_most

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)


def within(ranks: np.ndarray, cutoff, ascending: bool = False) -> np.ndarray:
    """(queries,) int64: how many of each row's ``ranks`` (queries, h) are <= ``cutoff`` (None,
    a number or one per query); ``ascending``: every row ascends (a binary search per row)."""
    out = np.empty(len(ranks), dtype=np.int64)
    _within_into(_read_only(ranks), _bounds(cutoff, len(ranks)), ascending, out)
    return out


def precision_sums(ranks: np.ndarray, cutoff, ascending: bool = False) -> np.ndarray:
    """(queries,) float64: the sum over each row of j / rank_j for rank_j <= ``cutoff`` (every j
    with ``cutoff`` None: then +inf adds 0 and NaN makes the sum NaN, as numpy's does);
    ``ascending``: every row ascends, so a row's sum stops at its first rank past the cutoff
    (or at +inf: the rest would add 0)."""
    out = np.empty(len(ranks), dtype=np.float64)
    _precision_sums_into(_read_only(ranks), _bounds(cutoff, len(ranks)), cutoff is None, ascending, out)
    return out


def _bounds(cutoff, n: int) -> np.ndarray:
    """The cutoff as one float64 bound per row (+inf for None), read-only."""
    bound = np.full(n, np.inf) if cutoff is None else np.asarray(cutoff, dtype=np.float64)
    return _read_only(np.ascontiguousarray(np.broadcast_to(bound, (n,))))


def _read_only(array: np.ndarray) -> np.ndarray:
    """A C-contiguous float64 read-only view (a copy only where ``array`` is not one already):
    numba compiles a kernel once per argument type, and a writable and a read-only array are
    two types (a caller's arrays come either way)."""
    view = np.ascontiguousarray(array, dtype=np.float64).view()
    view.flags.writeable = False
    return view


@numba.njit(cache=True, nogil=True)
def _within_into(ranks, bound, ascending, out):  # pragma: no cover - compiled
    h = ranks.shape[1]
    for i in range(ranks.shape[0]):
        if ascending:
            out[i] = count_at_most(ranks[i], 0, h, bound[i])
            continue
        cut, n = bound[i], 0
        for j in range(h):
            n += ranks[i, j] <= cut
        out[i] = n


@numba.njit(cache=True, nogil=True)
def _precision_sums_into(ranks, bound, every, ascending, out):  # pragma: no cover - compiled
    if ascending:
        _ascending_sums(ranks, bound, every, out)
        return
    for i in range(ranks.shape[0]):
        cut, total = bound[i], 0.0
        for j in range(ranks.shape[1]):
            r = ranks[i, j]
            if every or r <= cut:
                total += (j + 1) / r
        out[i] = total


@numba.njit(inline="always")
def _ascending_sums(ranks, bound, every, out):  # pragma: no cover - compiled
    """:func:`precision_sums` of ascending rows: each row's terms up to its count within the cutoff
    (every: its finite ranks; the rest add 0), four rows at a time, so that the four sums' additions
    (each still left to right) overlap instead of waiting on one another."""
    m, h = ranks.shape
    largest = np.finfo(np.float64).max
    i = 0
    while i + 4 <= m:
        r0, r1, r2, r3 = ranks[i], ranks[i + 1], ranks[i + 2], ranks[i + 3]
        e0 = count_at_most(r0, 0, h, largest if every else bound[i])
        e1 = count_at_most(r1, 0, h, largest if every else bound[i + 1])
        e2 = count_at_most(r2, 0, h, largest if every else bound[i + 2])
        e3 = count_at_most(r3, 0, h, largest if every else bound[i + 3])
        common = min(min(e0, e1), min(e2, e3))
        t0 = t1 = t2 = t3 = 0.0
        for j in range(common):
            k = np.float64(j + 1)
            t0 += k / r0[j]
            t1 += k / r1[j]
            t2 += k / r2[j]
            t3 += k / r3[j]
        out[i] = _sum_from(r0, common, e0, t0)
        out[i + 1] = _sum_from(r1, common, e1, t1)
        out[i + 2] = _sum_from(r2, common, e2, t2)
        out[i + 3] = _sum_from(r3, common, e3, t3)
        i += 4
    while i < m:
        out[i] = _sum_from(ranks[i], 0, count_at_most(ranks[i], 0, h, largest if every else bound[i]), 0.0)
        i += 1


@numba.njit(inline="always")
def _sum_from(row, start, stop, total):  # pragma: no cover - compiled
    """``total`` plus j / row[j - 1] for j from ``start`` + 1 to ``stop``, left to right."""
    for j in range(start, stop):
        total += (j + 1) / row[j]
    return total
