"""Array steps of the deep ranking (:mod:`embedeval._search.deep`): thresholds, places, ranks.

Each works on a block of rows at once, the others (non-relevant references) of all rows in one
flat array grouped by row (row i's at ``ends[i]:ends[i + 1]``); a loop over rows remains only
where numpy's search needs a 1-D haystack.
"""

from __future__ import annotations

import numpy as np

from .._core import budget as _budget
from .._core import compiled


def threshold(others, reached, scale, depth, sigmas: float) -> np.ndarray:
    """Per row, the smallest sampled other value that probably at least ``depth`` values reach.

    At the k-th smallest sampled other value (k from 1), the relevant values reached are
    counted exactly and the others estimated as (k - sigmas sqrt(k)) times ``scale``; +inf
    where no sampled value is enough.
    """
    if others.shape[1] == 0:
        return np.full(len(others), np.inf)
    k = np.arange(1, others.shape[1] + 1)
    enough = (reached + (k - sigmas * np.sqrt(k)) * scale[:, None] >= depth[:, None]) & np.isfinite(others)
    first = np.argmax(enough, axis=1)
    return np.where(enough[np.arange(len(others)), first], others[np.arange(len(others)), first], np.inf)


def looser(sigmas: float | None) -> float | None:
    """The sigmas of the next count of rows whose sampled threshold proved too tight; None after 16
    (then each row counts up to its J-th relevant value, always enough)."""
    return 4 * max(sigmas, 0) + 4 if sigmas is not None and sigmas < 16 else None


def may_bind(count, scale, reachable, depth, sigmas: float) -> np.ndarray:
    """Whether :func:`threshold` may be finite for each row, without the sampled values.

    A row's estimate at its k-th sampled other (k from 1 to ``count``) is at most
    ``reachable`` (its J: the relevant values it ranks) + f(k) ``scale``, with
    f(k) = k - sigmas sqrt(k), convex for sigmas >= 0 and increasing otherwise, so at most
    max(f(1), f(count)) on [1, count]. False where that stays below ``depth`` (one reference
    of margin for rounding): a row ranked whole (depth: every reference) with a sample of
    1,024, for one. All (rows,).
    """
    count = np.asarray(count, dtype=np.float64)
    most = np.maximum(1 - sigmas, count - sigmas * np.sqrt(count)) * scale
    return (count > 0) & (reachable + most + 1 >= depth)


def at_most(padded: np.ndarray, n_ranked: np.ndarray, probes: np.ndarray) -> np.ndarray:
    """(m,) int64: how many of each row's nearest relevant values are at most its probe (NaN: none).

    ``padded`` (m, w + 2) as :meth:`~embedeval._search.deep_block.Block._nearest_relevant` makes
    it: row i's first ``n_ranked[i]`` values ascending (NaN last), +inf after them, between a
    -inf and a +inf column; ``probes`` (m,). Equal to ``np.count_nonzero(padded[:, 1:-1] <=
    probes[:, None], axis=1)``.
    """
    nearest = padded[:, 1:-1]
    w = nearest.shape[1]
    if w < _budget.DEEP_SEARCH_FROM:  # one numpy call; wider rows searched one by one
        return np.count_nonzero(nearest <= probes[:, None], axis=1)
    out = np.zeros(len(probes), dtype=np.int64)
    for r, x in enumerate(probes.tolist()):
        if x == x:  # numpy's search puts NaN after +inf, a comparison never holds: no NaN probe
            n = int(n_ranked[r])
            out[r] = np.searchsorted(nearest[r, :n], x, side="right") + (w - n if x == np.inf else 0)
    return out


def places(nearest: np.ndarray, ends: np.ndarray, values: np.ndarray, probes: np.ndarray, own=None):
    """How many of its row's nearest relevant values each value, and each probe, reaches (equal: reached).

    ``values`` are grouped by row, row i's at ``ends[i]:ends[i + 1]``; ``probes`` has shape
    (rows, p). With ``own`` (rows,), each row's values are first sorted in place and how many
    of them reach ``own`` is counted too. Returns (places (values,), reached (p, rows), own
    reached (rows,) or None).
    """
    out = np.empty(values.size, dtype=np.int64)
    reached = np.empty((probes.shape[1], len(probes)), dtype=np.int64)
    counted = None if own is None else np.zeros(len(probes), dtype=np.int64)
    for r in range(len(probes)):
        seg = values[ends[r] : ends[r + 1]]
        if seg.size:
            if own is not None:
                seg.sort()
                counted[r] = np.searchsorted(seg, own[r], side="right")
            out[ends[r] : ends[r + 1]] = np.searchsorted(nearest[r], seg, side="right")
        reached[:, r] = np.searchsorted(nearest[r], probes[r], side="right")
    return out, reached, counted


def ranks_from_places(at, place, ranked, depth, w: int) -> np.ndarray:
    """(m, w) ranks: j + 1 + c_j for j below ``ranked`` and rank <= depth, else +inf.

    c_j, the others before the j-th relevant value, is the number of the row's places at most
    j: one ``np.bincount`` of (row, place) and a running sum along each row, linear in the
    others placed (no sort of the places).
    """
    m = ranked.size
    counts = np.bincount(at * (w + 1) + np.minimum(place, ranked[at]), minlength=m * (w + 1)).reshape(m, w + 1)
    return ranks_from_counts(counts, ranked, depth)


def ranks_from_counts(counts, ranked, depth) -> np.ndarray:
    """(m, w) ranks from ``counts`` (m, w + 1): row i's others at each place (clipped to ``ranked[i]``)."""
    w = counts.shape[1] - 1
    ranks = np.cumsum(counts[:, :w], axis=1) + np.arange(1, w + 1, dtype=np.float64)
    ranks[np.arange(w) >= ranked[:, None]] = np.inf
    ranks[ranks > depth[:, None]] = np.inf
    return ranks


def rough_order(at: np.ndarray, starts: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """A permutation keeping rows together, each in ascending order of its values rounded to float32.

    ``at`` (ascending) is each value's row and ``starts`` its row's first position. One sort
    of uint64 keys (row, rounded value, position in the row); the identity where those do not
    fit in 64 bits (only speed depends on the order).
    """
    row_bits, index_bits = int(at[-1]).bit_length() if at.size else 0, max(n - 1, 1).bit_length()
    if row_bits + index_bits > 32:
        return np.arange(at.size)
    bits = values.astype(np.float32).view(np.uint32)
    bits = bits ^ np.where(bits >> 31, np.uint32(0xFFFF_FFFF), np.uint32(0x8000_0000))  # sorts as the values
    keys = (at.astype(np.uint64) << np.uint64(32 + index_bits)) | (bits.astype(np.uint64) << np.uint64(index_bits))
    keys |= (np.arange(at.size) - starts).astype(np.uint64)
    keys.sort()
    return starts + (keys & np.uint64((1 << index_bits) - 1)).astype(np.int64)


def near(flat_padded: np.ndarray, at: np.ndarray, values: np.ndarray, window: np.ndarray) -> np.ndarray:
    """Values within ``window`` of the relevant value just below (``flat_padded[at]``) or above them."""
    return (values - flat_padded[at] <= window) | (flat_padded[at + 1] - values <= window)


_RADIX_CACHED = compiled.in_cache(f"{__package__}.sort_kernels", "_sorted_rows_into")


def _vectorised_sort() -> bool:
    """Whether numpy sorts float64 with its vectorised sort (x86-simd-sort) on this host: where
    the CPU has AVX-512 (numpy's ``AVX512_SKX`` target)."""
    try:
        from numpy._core._multiarray_umath import __cpu_features__
    except ImportError:  # another numpy layout: keep the radix sort
        return False
    return bool(__cpu_features__.get("AVX512_SKX", False))


# The radix sort serves hosts where numpy's sort compares values one by one; where numpy's sort
# is vectorised it is the faster (``python bench/profile_floor.py --row 3 --threads 1``;
# bench/NOTES.md, stop 52 figures, "The radix sort").
RADIX_SORT = not _vectorised_sort()


def smallest_sorted(values: np.ndarray, k: int, out: np.ndarray, rows) -> None:
    """Write the ``k`` smallest of each row of ``values`` (g, m), ascending, to ``out[rows, :k]``.

    ``k`` is at most m; rows beyond k of ``out`` are left as they are; ``values`` may be left
    reordered (the callers pass temporaries). With compiled kernels, once
    the process has sorted :data:`embedeval._core.budget.SORT_COMPILED_FROM` values, a radix sort (:mod:`.sort_kernels`)
    orders the rows, bit for bit as numpy's sort does, on hosts where numpy's sort is not
    vectorised (:data:`RADIX_SORT`).
    """
    if k == 0:
        return
    m = values.shape[1]
    radix = RADIX_SORT and compiled.repaid(
        "radix sort", values.size, _budget.SORT_COMPILED_FROM, _RADIX_CACHED, _budget.SORT_CACHED_FROM
    )
    if (
        k < (_budget.SORT_PARTITION_BELOW_RADIX if radix else _budget.SORT_PARTITION_BELOW) * m
    ):  # linear: only the k kept are sorted
        values = np.partition(values, k - 1, axis=1)[:, :k]
    if radix:  # False from the compiled sort: a row holds a NaN, numpy's sort orders it
        from . import sort_kernels  # numba, imported only when compiled kernels are on

        if sort_kernels.sorted_rows(np.ascontiguousarray(values), out[:, :k], np.arange(out.shape[0])[rows]):
            return
    values.sort(axis=1)  # in place: np.sort's copy of a block costs its page faults (bench/NOTES.md, stop 52)
    out[rows, :k] = values[:, :k]


def round_up(limit: np.ndarray, dtype) -> np.ndarray:
    """``limit`` in ``dtype``, rounded up where it is not exact (a candidate is never lost)."""
    out = limit.astype(dtype)
    return np.where(out < limit, np.nextafter(out, dtype.type(np.inf)), out)
