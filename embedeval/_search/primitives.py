"""The compiled kernels' shared primitives (numba; imported only by ``*_kernels.py`` modules,
which are imported only when :func:`embedeval._core.compiled.enabled`). Each is
``inline="always"``: numba copies it into the kernel that calls it, so a call costs what the
loop written in place cost, and the kernels' cache is keyed by the package's sources
(:func:`embedeval._core.compiled.kernel_numba`), so an edit here compiles them again.

* :func:`bucket`: the monotone bucket of a value among equal-width buckets;
* :func:`table_size`, :func:`span_inverse` and :func:`fill_table`: a bucket table of sorted values;
* :func:`count_at_most` and :func:`count_below`: numpy's ``searchsorted`` by bisection, and
  :func:`gallop_at_most` by galloping from a known lower place;
* :func:`near_tie`: whether a value lies within a window of its neighbours;
* :func:`ordered_key` and :func:`ordered_bits`: a float64 as a 64-bit key that orders as it does;
* :func:`write_ranks`: ranks from how many values fall in each gap among others.

A bucket table places a value among ``n`` sorted ones with a look-up and a few comparisons:
``table[k]`` holds how many of them lie in buckets before k, so that the place of a value v
(how many are <= v) lies in ``[table[k], table[k + 1]]`` for k = ``bucket(v)``. That holds
whatever the rounding, because :func:`bucket` is a non-decreasing function of v, computed the
same way for the sorted values and for v: a value of an earlier bucket is below v, one of a
later bucket above it.
"""

from __future__ import annotations

import numpy as np

from .._core.compiled import kernel_numba

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

_SIGN = np.uint64(1 << 63)


@numba.njit(inline="always")
def bucket(v, first, inverse, top):  # pragma: no cover - compiled
    """The bucket of v among equal-width buckets from ``first`` (``inverse``: 1 / their width),
    ``int((v - first) * inverse)`` clamped to [0, ``top``] (``top``: the last bucket, a float).

    Non-decreasing in v under any rounding (0 for a NaN, or for any v where ``inverse`` is 0).
    Written without a branch (two selects), so that a loop over values vectorises; int64.
    """
    f = (v - first) * inverse
    f = f if f > 0.0 else 0.0
    return np.int64(f if f < top else top)


@numba.njit(inline="always")
def span_inverse(first, last, n_buckets):  # pragma: no cover - compiled
    """``n_buckets / (last - first)``, the ``inverse`` of :func:`bucket` for ``n_buckets``
    buckets over [first, last]; 0.0 where no such buckets exist (one value repeated, an infinite
    span or one that overflows, a subnormal width): then every value falls in bucket 0."""
    span = last - first
    if span > 0.0 and span < np.inf and n_buckets / span < np.inf:
        return n_buckets / span
    return 0.0


@numba.njit(inline="always")
def table_size(n):  # pragma: no cover - compiled
    """Buckets of a table for ``n`` values or more: a power of two, at least 16 and ``n`` (its
    ``.py_func`` sizes the tables in Python)."""
    n_buckets = 16
    while n_buckets < n:
        n_buckets *= 2
    return n_buckets


@numba.njit(inline="always")
def fill_table(values, first, inverse, table):  # pragma: no cover - compiled
    """Fill ``table`` (n_buckets + 1,) for ``values`` (n,): ``table[k]`` = how many of them lie in
    buckets before k (:func:`bucket` with ``top`` = n_buckets - 1), ``table[n_buckets]`` = n.

    ``values`` ascending, so that a value v has its place among them (how many are <= v) in
    ``[table[k], table[k + 1]]`` for k its bucket (the module's docstring).
    """
    n_buckets = table.size - 1
    top = np.float64(n_buckets - 1)
    for k in range(n_buckets + 1):
        table[k] = 0
    for j in range(values.size):
        table[bucket(values[j], first, inverse, top) + 1] += 1
    for k in range(1, n_buckets + 1):
        table[k] += table[k - 1]


@numba.njit(inline="always")
def _bisect(values, low, high, v, right):  # pragma: no cover - compiled
    while low < high:
        mid = (low + high) >> 1
        if (values[mid] <= v) if right else (values[mid] < v):
            low = mid + 1
        else:
            high = mid
    return low


@numba.njit(inline="always")
def count_at_most(values, low, high, v):  # pragma: no cover - compiled
    """``low`` + how many of ``values[low:high]`` (ascending, NaN-free) are <= v: numpy's
    ``low + searchsorted(values[low:high], v, side="right")``, by bisection."""
    return _bisect(values, low, high, v, True)


@numba.njit(inline="always")
def count_below(values, low, high, v):  # pragma: no cover - compiled
    """``low`` + how many of ``values[low:high]`` (ascending, NaN-free) are < v: numpy's
    ``low + searchsorted(values[low:high], v, side="left")``, by bisection."""
    return _bisect(values, low, high, v, False)


@numba.njit(inline="always")
def gallop_at_most(values, low, high, v):  # pragma: no cover - compiled
    """:func:`count_at_most` for a v known to have ``values[:low]`` at most it: steps of 1, 2, 4,
    ... from ``low`` while the values stay <= v, then a bisection within the last step (about
    2 log d steps for a place d after ``low``, so that a walk along ascending values costs
    little)."""
    step, probe = 1, low
    while probe < high and values[probe] <= v:
        low = probe + 1
        probe = low + step
        step <<= 1
    return _bisect(values, low, min(probe, high), v, True)


@numba.njit(inline="always")
def near_tie(v, before, after, window):  # pragma: no cover - compiled
    """Whether v lies within ``window`` of ``before`` or of ``after`` (its neighbours among sorted
    values: a near-tie, which the error bounds cannot order); no branch."""
    return (v - before <= window) | (after - v <= window)


@numba.njit(inline="always")
def ordered_key(bits):  # pragma: no cover - compiled
    """The key of a float64's bits (uint64): every bit flipped for a negative value, the sign bit
    set for the others, so that the unsigned comparison of keys is the float comparison (-0.0
    before 0.0; a NaN's key lies beyond +inf's, or below -inf's for a negative NaN)."""
    if bits & _SIGN:
        return ~bits
    return bits | _SIGN


@numba.njit(inline="always")
def ordered_bits(key):  # pragma: no cover - compiled
    """The float64 bits of a key (the inverse of :func:`ordered_key`)."""
    if key & _SIGN:
        return key & ~_SIGN
    return ~key


@numba.njit(inline="always")
def write_ranks(counts, n_ranked, depth, out):  # pragma: no cover - compiled
    """Ranks of values placed among others: ``counts`` (K + 1,) holds how many values fall in each
    gap p (p others before them); the value at position j (0-based) among them, in gap p, has rank
    j + 1 + p, written to ``out[j]`` for j below ``n_ranked`` and ranks at most ``depth``; +inf
    past either, to the end of ``out``. The values of a gap are consecutive, whatever their order
    among themselves."""
    ranked = 0
    for p in range(counts.size):
        ranked += counts[p]
    ranked = min(ranked, n_ranked)
    j = 0
    for p in range(counts.size):
        stop = min(j + counts[p], ranked)
        while j < stop:
            r = np.float64(j + 1 + p)
            out[j] = r if r <= depth else np.inf
            j += 1
        if j >= ranked:
            break
    for k in range(j, out.size):
        out[k] = np.inf
