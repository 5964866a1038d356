"""The compiled pass of :mod:`.deep_merged` (numba; imported only when
:func:`embedeval._core.compiled.enabled`): each row's relevant values, unsorted, placed among its
few other values, sorted, and the ranks written from how many land in each gap.

For a row with relevant values v (in any order) and other values o_1 <= ... <= o_K (every other
reference up to the row's limit), a relevant value's place p(v) = #{k : o_k <= v} is found with a
bucket table of the others (:mod:`.primitives`; its buckets are called cells here), and the ranks
follow from how many land in each gap (:func:`.primitives.write_ranks`). A relevant value within
``window`` of an other on either side (a near-tie: the error bounds cannot order the two) marks
its row for an exact ranking by the caller.
"""

from __future__ import annotations

import numpy as np

from .._core.compiled import kernel_numba
from .list_kernels import list_within
from .primitives import bucket, count_at_most, fill_table, near_tie, span_inverse, table_size, write_ranks

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

# A cell holding more than two others (duplicates, crowded values) is searched by bisection.
CROWDED = 2


def list_others(chunk, i0, c0, lim, values, columns, n_listed, listed, widen=None):
    """Append the values of ``chunk`` (h, w) at most ``lim`` (h,) to rows ``i0:i0 + h`` of
    ``values`` and ``columns`` (m, k) (their columns: ``c0`` + the column in the chunk), after the
    ``n_listed`` (m,) each row holds (counted on past k, nothing written there); ``listed``:
    int32 scratch of at least w.

    ``widen``: for a float32 chunk, ``(factors64 (m, d [+ 1]), matrix32 (n, d [+ 1]), norms64
    (n,))``: each listed value is written as the float64 product of its row's ``factors64`` with
    the reference's factors read as :class:`embedeval._search.deep_factors.Float64Factors` makes them
    (``matrix32`` widened exactly, and for euclidean distances ``norms64`` in place of the last;
    empty for inner products), summed in any order (the float64 bound holds for every order),
    while the chunk's references are still in cache from its product.
    """
    if widen is not None:
        factors64, matrix32, norms64 = widen
        widen = (factors64, matrix32, norms64, matrix32.shape[1] - (1 if norms64.size else 0))
    _list_into(chunk, i0, c0, lim, values, columns, n_listed, listed, widen)


@numba.njit(cache=True, nogil=True, fastmath={"reassoc", "contract"})
def _list_into(chunk, i0, c0, lim, values, columns, n_listed, listed, widen):  # pragma: no cover - compiled
    """:func:`list_others`: each chunk row listed by :func:`.list_kernels.list_within`; ``widen``
    None (numba compiles that version without the float64 products) or (factors64, matrix32,
    norms64, d). The fast-math flags touch only the products' sums."""
    room = values.shape[1]
    for r in range(chunk.shape[0]):
        row = chunk[r]
        n = list_within(row, lim[r], listed)
        i = i0 + r
        f = n_listed[i]
        kept = min(n, max(room - f, 0))
        if widen is None:
            for k in range(kept):
                values[i, f + k] = row[listed[k]]
        else:
            factors64, matrix32, norms64, dim = widen
            for k in range(kept):
                values[i, f + k] = pair_value64(factors64[i], matrix32, norms64, c0 + listed[k], dim)
        for k in range(kept):
            columns[i, f + k] = c0 + listed[k]
        n_listed[i] = f + n


@numba.njit(inline="always")
def pair_value64(factors, matrix32, norms64, col, dim):  # pragma: no cover - compiled
    """The float64 product of a row's float64 ``factors`` (d [+ 1]) with reference ``col`` read as
    :class:`embedeval._search.deep_factors.Float64Factors` makes it: ``matrix32[col]`` widened exactly,
    and for euclidean distances (``norms64`` not empty) the float64 squared norm in place of the
    last factor; summed in the order the caller's fast-math flags allow."""
    m = matrix32[col]
    v = 0.0
    for j in range(dim):
        v += factors[j] * np.float64(m[j])
    if norms64.size > 0:
        v += factors[dim] * norms64[col]
    return v


def guesses(others, found, depth, n_other, sigmas):
    """Per row, a value that probably at least ``depth`` of its values do not exceed (+inf: the
    sample cannot tell), from its relevant values known exactly and its other values sampled.

    The sampled guess of :meth:`embedeval._search.deep.DeepRanker.sampled_threshold` estimates
    every value from the sample, relevant or not; here only the others are estimated, so the
    guess errs by the others' sampling alone (as the sorted path's
    :func:`embedeval._search.deep_count.threshold`, which reads the relevant counts off its
    sorted relevant values). At the k-th smallest sampled other t_k, with rel(t_k) relevant
    values at most t_k, ``depth - rel(t_k)`` others are still needed: m = (depth - rel(t_k)) s / N
    of the s sampled (N others in all), and the guess is the smallest t_k with
    k >= m + sigmas sqrt(m) + 1: the sampled count k that those m would reach only with a chance
    of ``sigmas`` standard deviations. Unlike deep_count's form (k - sigmas sqrt(k)) N / s >= the
    others needed, it is monotone in k for every sigmas >= 0 (k grows and m falls with t_k), so a
    bisection finds it, each step one count over the row's relevant values (unsorted).

    Parameters
    ----------
    others : numpy.ndarray of shape (b, s), float32
        Each row's values at the sampled other references, ascending.
    found : numpy.ndarray of shape (b, n), float64
        Each row's relevant values, any order (+inf: ignored), NaN-free.
    depth : numpy.ndarray of shape (b,), int64
    n_other : int
        N, the other references of these rows.
    sigmas : float

    Returns
    -------
    numpy.ndarray of shape (b,), float64
    """
    out = np.empty(len(found))
    _guesses_into(others, found, np.asarray(depth, dtype=np.int64), others.shape[1] / max(n_other, 1), sigmas, out)
    return out


@numba.njit(cache=True, nogil=True)
def _guesses_into(others, found, depth, scale, sigmas, out):  # pragma: no cover - compiled
    """:func:`guesses` (``scale`` = s / N)."""
    s = others.shape[1]
    for r in range(found.shape[0]):
        row = found[r]
        # the others alone are at most depth: the bound holds at k = m + sigmas sqrt(m) + 1 with
        # m = depth s / N, whatever the relevant values
        most = depth[r] * scale
        lo, hi = 1, min(s + 1, np.int64(np.ceil(most + sigmas * np.sqrt(most) + 1)))
        while lo < hi:
            mid = (lo + hi) >> 1
            t = np.float64(others[r, mid - 1])
            rel = 0
            for j in range(row.size):  # written so that LLVM vectorises it
                rel += np.int64(1) if row[j] <= t else np.int64(0)
            m = max(depth[r] - rel, 0) * scale
            if mid >= m + sigmas * np.sqrt(m) + 1:
                hi = mid
            else:
                lo = mid + 1
        out[r] = np.float64(others[r, lo - 1]) if lo <= s else np.inf


def merged_ranks(found, others, n_others, limit, threshold, n_ranked, depth, window, ranks, at=None):
    """Write each row's ranks to ``ranks`` (row i to its row ``at[i]``); return (which rows hold a
    near-tie (b,) bool, how many values of each row, relevant or other, are at most its
    ``threshold`` (b,) int64).

    Parameters
    ----------
    found : numpy.ndarray of shape (b, n), float64
        Each row's relevant values in any order (+inf: ignored), NaN-free.
    others : numpy.ndarray of shape (b, k), float64
        Each row's other values up to its limit: row i's first ``n_others[i]``, ascending,
        NaN-free.
    n_others : numpy.ndarray of shape (b,), int64
    limit : numpy.ndarray of shape (b,), float64
        The largest relevant value a row ranks (T + E_o + E_r): later ones are past its depth or
        its J-th relevant value.
    threshold : numpy.ndarray of shape (b,), float64
        Values at most this are counted (NaN: none).
    n_ranked, depth : numpy.ndarray of shape (b,), int64 and float64
        J, and how deep the row is ranked: ranks past either are +inf.
    window : numpy.ndarray of shape (b,), float64
        E_o + E_r: a ranked relevant value and an other value this close are a near-tie.
    ranks : numpy.ndarray of shape (m, h), float64, h >= max(n_ranked)
        Row ``at[i]``: row i's ranks of its first J relevant references ascending, +inf after.
    at : numpy.ndarray of shape (b,), int, optional
        The row of ``ranks`` each row is written to (default: row i to row i).
    """
    widest = int(n_others.max(initial=0))
    table = np.empty(table_size.py_func(2 * widest) + 1, dtype=np.int32)
    padded = np.empty(widest + 5)  # a row's others between -inf and +inf
    counts = np.empty(widest + 2, dtype=np.int64)
    tied = np.zeros(len(found), dtype=np.bool_)
    reached = np.zeros(len(found), dtype=np.int64)
    at = np.arange(len(found)) if at is None else np.asarray(at, dtype=np.int64)
    rows = (found, others, n_others, limit, threshold, n_ranked, depth, window)
    _merged_rows_into(rows, (table, padded, counts), ranks, at, tied, reached)
    return tied, reached


@numba.njit(cache=True, nogil=True)
def _merged_rows_into(rows, scratch, ranks, at, tied, reached):  # pragma: no cover - compiled
    """:func:`merged_ranks` with its arguments (``rows``: found, others, n_others, limit, threshold,
    n_ranked, depth, window), scratch (``table``: the widest row's cells + 1; ``padded``: its
    others + 5; ``counts``: its others + 2) and results (``tied``, ``reached``) passed in."""
    found, others, n_others, limit, threshold, n_ranked, depth, window = rows
    table, padded, counts = scratch
    for i in range(found.shape[0]):
        k_others = n_others[i]
        first, inverse, cells = _fill(others[i, :k_others], table, padded)
        for k in range(k_others + 2):
            counts[k] = 0
        places = (table, padded, counts, first, inverse, cells)
        tied[i], below = _place_row(found[i], *places, limit[i], window[i], threshold[i])
        reached[i] = below + count_at_most(padded, 1, k_others + 1, threshold[i]) - 1  # NaN: none
        write_ranks(counts[: k_others + 1], n_ranked[i], depth[i], ranks[at[i]])


@numba.njit(nogil=True)
def _place_row(row, table, padded, counts, first, inverse, cells, lim, win, t):  # pragma: no cover - compiled
    """Place each relevant value of ``row`` among the others of ``padded`` (by ``table``): counts
    per gap of those up to ``lim`` (``counts[-1]``: the rest); returns (whether one of those is a
    near-tie, how many are at most ``t``). Unsigned indices (no test for a negative one) and a
    function of its own (the caller's registers are taken), so that the loop stays short."""
    top = np.float64(cells - 1)
    skip = np.uint64(counts.size - 1)
    one, two, three = np.uint64(1), np.uint64(2), np.uint64(3)
    near = False
    n_below = 0
    for c in range(row.size):
        v = row[np.uint64(c)]
        cell = np.uint64(bucket(v, first, inverse, top))
        low, high = np.uint64(table[cell]), np.uint64(table[cell + one])
        # others of later cells exceed v: in a cell of at most two, p is low, low + 1 or low + 2
        a, b, c2, d = padded[low], padded[low + one], padded[low + two], padded[low + three]
        up1, up2 = b <= v, c2 <= v
        p = low + np.uint64(up1) + np.uint64(up2)
        before = c2 if up2 else (b if up1 else a)  # the others on either side: padded[p], [p + 1]
        after = d if up2 else (c2 if up1 else b)
        if high - low > CROWDED:
            p = np.uint64(count_at_most(padded, np.int64(low) + 1, np.int64(high) + 1, v) - 1)
            before, after = padded[p], padded[p + one]
        within = v <= lim
        counts[p if within else skip] += 1
        near |= within & near_tie(v, before, after, win)
        n_below += v <= t
    return near, n_below


@numba.njit(inline="always")
def _fill(row, table, padded):  # pragma: no cover - compiled
    """Fill ``padded`` (-inf, the ``row``'s K values, +inf x 4) and ``table`` for them; return
    (first, 1 / cell width, cells). Without a finite span (no other, all equal, an overflow) one
    cell holds every other: (0.0, 0.0, 1)."""
    k_others = row.size
    padded[0] = -np.inf
    for k in range(k_others):
        padded[k + 1] = row[k]
    for k in range(k_others + 1, k_others + 5):
        padded[k] = np.inf
    cells = table_size(2 * k_others)
    first, inverse = 0.0, 0.0
    if k_others > 0:
        first, inverse = row[0], span_inverse(row[0], row[k_others - 1], cells)
    if inverse == 0.0:
        first, cells = 0.0, 1
    fill_table(row, first, inverse, table[: cells + 1])
    return first, inverse, cells
