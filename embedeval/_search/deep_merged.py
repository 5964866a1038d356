"""A deep-ranking block of one large class, ranked from the other side: each relevant value placed
among the row's few other values, so that the relevant values are never sorted.

:class:`~embedeval._search.deep_block.Block` sorts each row's J relevant values and places the
other values among them. When J is large (half of the points in one class: J = 20,000 and a few
thousand others up to the J-th relevant value), sorting the relevant values is most of the work,
and their order is not needed: the j-th relevant reference has rank j + c_j (c_j: the others
before it), and the relevant values between the same two others hold consecutive positions
whatever their order. So this path sorts the others instead, and counts how many relevant values
fall in each gap between them (:mod:`.merged_kernels`).

For a block of rows of one class (class codes, compiled kernels), :func:`ranks` takes the
sorted path's steps with the roles swapped: T, the smaller of a guess that ``depth`` values reach
(counting the relevant values exactly where that pays, :func:`_counts_pay`) and the J-th relevant
value; the others up to T + 2 (E_o + E_r), listed as each chunk product is made and sorted per
row (:func:`_others`); each relevant value placed among them by :mod:`.merged_kernels`, which
writes the ranks from the counts per gap. Rows whose guess proves too tight, and rows with a
near-tie, are handled as the sorted path handles them.

The proof of :mod:`embedeval._search.deep` holds as it stands: T is its T (a guess that
``depth`` values reach, checked by counting, or the J-th relevant value), every other that can
precede a ranked relevant value is listed, and only near-ties are left to the exact path. The
ranks equal the sorted path's and a full stable float64 sort's (the tests compare all three).
Blocks whose rows mostly rank deeper than the sample can guess (whole rankings) take the sorted
path: they would list nearly every other.
"""

from __future__ import annotations

import itertools

import numpy as np

from .._core import budget as _budget
from .._core import compiled
from .deep_count import looser

_CACHED = compiled.in_cache(f"{__package__}.merged_kernels", "_merged_rows_into", "_list_into", "_guesses_into")


def switch(dim: int) -> int:
    """The J from which blocks of ``dim``-wide vectors take this path (:data:`embedeval._core.budget.MERGED_FROM`,
    ``MERGED_FROM_WIDE`` past ``MERGED_NARROW_DIM``)."""
    narrow = dim <= _budget.MERGED_NARROW_DIM
    return _budget.MERGED_FROM if narrow else max(_budget.MERGED_FROM, _budget.MERGED_FROM_WIDE)


def split(ranker, rows, marked, n_ranked):
    """The ``rows`` of a block (in class order) as blocks of their own: each run of one class
    where some row ranks at least :func:`switch` relevant references (for :func:`ranks`), and
    the other runs together."""
    codes = marked.codes[rows] if ranker.by_class else None
    least = switch(ranker.dim)
    if codes is None or codes[0] == codes[-1] or n_ranked[rows].max(initial=0) < least:
        yield rows
        return
    cuts = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1, [rows.size]])
    rest = []
    for a, z in itertools.pairwise(cuts.tolist()):
        if n_ranked[rows[a:z]].max() >= least:
            yield rows[a:z]
        else:
            rest.append(rows[a:z])
    if rest:
        yield np.concatenate(rest)


def takes(block) -> bool:
    """Whether :func:`ranks` ranks ``block``: class codes, every row of one class, J at least
    :func:`switch`, and compiled kernels that repay their compilation
    (:func:`embedeval._core.compiled.repaid`, counted with the deep pass's work)."""
    rk = block.ranker
    if not rk.by_class or not len(block.queries) or int(block.n_ranked.max(initial=0)) < switch(rk.dim):
        return False
    if block.codes.min() != block.codes.max():
        return False
    units = len(block.queries) * rk.size
    return compiled.repaid("merged", units, _budget.DEEP_FUSED_COMPILED_FROM, _CACHED)


def ranks(block, out, at):
    """Write the block's ranks, as :meth:`Block.ranks` gives them, into the rows ``at`` (b,) of
    ``out`` (m, w), w at least the block's largest J (+inf after each row's ranks); return True,
    or None where a value is not finite (the sorted path then ranks the block, and writes its
    rows again)."""
    from . import merged_kernels  # numba, imported only when compiled kernels are on

    rk, b = block.ranker, len(block.queries)
    block.bound32, bound64, block.factors32 = block.bounds_and_factors()
    block.factors64 = block.factors_other = rk.factors(block.queries, np.float64)
    block.bound_rel = block.bound_other = bound64  # the others' values are float64 when placed
    block.grades, block.exact_grades = None, {}
    code = int(block.codes[0])
    lo, hi = int(rk.class_start[code]), int(rk.class_stop[code])
    # rows deeper than the sample can guess would list every other: more than an eighth, the sorted path
    if 8 * np.count_nonzero(rk.beyond_sample(block.depth, rk.sigmas)) > b:
        return None
    sample = block.factors32 @ rk.sample_matrix.T
    a, z = np.searchsorted(rk.sample, [lo, hi])  # the sample is sorted: its class members are a run
    sampled_others = np.concatenate([sample[:, :a], sample[:, z:]], axis=1) if z > a else sample
    found, inside = block.class_values(slice(None), code)
    jth = _jth(found, inside, block.n_ranked)
    if jth is None:
        return None
    n_other = rk.size - (hi - lo)  # N: the rows' other references
    counts = _counts_pay(rk, block, sampled_others.shape[1], n_other)
    ordered = np.sort(sampled_others if counts else sample, axis=1)
    rows, sigmas = np.arange(b), rk.sigmas
    while rows.size:
        every = rows.size == b
        found_rows = found if every else found[rows]
        threshold = np.full(rows.size, np.nan)
        if sigmas is not None:
            if counts:
                guess = merged_kernels.guesses(ordered[rows], found_rows, block.depth[rows], n_other, sigmas)
            else:
                guess = rk.sampled_threshold(ordered[rows], block.depth[rows], sigmas)
            threshold = np.where(guess < jth[rows], guess, np.nan)
        args = (found_rows, rows, np.fmin(threshold, jth[rows]), threshold, sampled_others[rows])
        short = _rank_rows(block, *args, out, at[rows])
        if short is None:
            return None
        rows = rows[short]
        sigmas = looser(sigmas)
    return True


def _counts_pay(rk, block, n_sampled_others: int, n_other: int) -> bool:
    """Whether the block's guesses count its relevant values exactly (:func:`.merged_kernels.guesses`)
    rather than estimate every value from the sample (:meth:`DeepRanker.sampled_threshold`).

    Counting costs a pass over a row's J relevant values per step of a bisection over its
    ``n_sampled_others`` sampled others (of its ``n_other`` others); it saves most of the sampled
    guess's margin, about sigmas sqrt(depth n / s) ranks past depth, nearly all of them others
    listed for nothing. One listed other costs about :data:`embedeval._core.budget.GUESS_COMPARISONS` comparisons of the
    counting passes.
    """
    sigmas = rk.sigmas
    if sigmas is None or sigmas <= 0:  # no margin to save
        return False
    depth, n_ranked = float(np.mean(block.depth)), float(np.max(block.n_ranked))
    most = depth * n_sampled_others / max(n_other, 1)  # the bisection's range, as guesses bounds it
    steps = np.log2(most + sigmas * np.sqrt(most) + 2)
    margin = sigmas * np.sqrt(depth * rk.size / max(rk.sample.size, 1))
    return bool(n_ranked * steps <= _budget.GUESS_COMPARISONS * margin)


def _rank_rows(block, found, rows, top, threshold, sample, out, at):
    """Rank ``rows`` (m,) of the block, whose relevant values are ``found`` (m, n), into the rows
    ``at`` (m,) of ``out``: T = ``top``, ``threshold`` the guessed one (NaN: none), ``sample``
    (m, s) the rows' float32 values at the sampled other references. Returns the rows whose
    threshold proves too tight (fewer than depth values reach it: their ranks are meaningless),
    or None where an other value is NaN."""
    from . import merged_kernels  # numba, imported only when compiled kernels are on

    window = block.bound_rel[rows] + block.bound_other[rows]
    limit = top + 2 * window
    values, columns, n_others = _others(block, rows, limit, sample)
    for r in range(rows.size):  # each row's others ascending (a few hundred: numpy's sort, a row at a time)
        values[r, : n_others[r]].sort()  # past n_others: never written
    last = values[np.arange(rows.size), np.maximum(n_others - 1, 0)]
    if np.isnan(last[n_others > 0]).any():  # NaN sorts last
        return None
    depth = np.asarray(block.depth[rows], dtype=np.float64)
    args = (found, values, n_others, top + window, threshold, block.n_ranked[rows], depth, window, out, at)
    tied, reached = merged_kernels.merged_ranks(*args)
    short = ~np.isnan(threshold) & (reached < block.depth[rows])
    for i in np.flatnonzero(tied & ~short):  # a near-tie: exactly, from the row's candidates
        exact, _ = block.candidates_row(rows[i], limit[i], columns[i, : n_others[i]], None)
        out[at[i]] = np.inf
        out[at[i], : exact.size] = exact
    return short


def _others(block, rows, limit, sample):
    """The other values of ``rows`` (m,) at most ``limit`` (m,) and their columns, listed from the
    block's chunk products: (values (m, k) float64, columns (m, k) int64, how many (m,)), row i's
    first ``n[i]``. ``k`` is guessed from the sampled others generously; rows that hold more are
    listed again by :meth:`Block.others`.

    Where the others listed are few beside the columns (fewer than 1 / :data:`embedeval._core.budget.WIDEN_COLUMNS` of
    them; always with the ranker's precision "mixed", never with "float64"), the chunk products
    are float32, listed up to ``limit`` + E_32 + E_64 (every other
    whose float64 value is at most ``limit``), and the listed ones made again in float64 (their
    values: any value within the float64 bound will do); else the products are float64.
    """
    from . import merged_kernels

    rk = block.ranker
    code = int(block.codes[rows[0]])
    n_other = rk.size - (rk.class_stop[code] - rk.class_start[code])
    expected = np.count_nonzero(sample <= limit[:, None], axis=1) * (n_other / max(sample.shape[1], 1))
    if rk.precision == "auto":
        float32 = expected.sum() * _budget.WIDEN_COLUMNS < n_other * max(rows.size, 1)
    else:
        float32 = rk.precision == "mixed"
    if float32:
        block.factors_other = block.factors32
        limit = limit + block.bound32[rows] + block.bound_rel[rows]
    most = float(expected.max(initial=0))
    # at most twice a block's elements (rows past it are listed again, as the sorted path lists them)
    room = int(
        min(
            n_other,
            1.5 * most + 8 * np.sqrt(most) + _budget.MERGED_ROOM,
            max(_budget.MERGED_ROOM, 2 * _budget.DEEP_ELEMENTS // rows.size),
        )
    )
    values = np.empty((rows.size, room))
    columns = np.empty((rows.size, room), dtype=np.int64)
    n_others = np.zeros(rows.size, dtype=np.int64)
    listed = np.empty(0, dtype=np.int32)
    matrix = rk.matrix64  # Float64Factors: float32 rows and float64 squared norms
    widen = (block.factors64[rows], np.ascontiguousarray(matrix.float32), matrix.norms) if float32 else None
    for i0, c0, chunk, lim in block.chunks_within(rows, limit):
        if listed.size < chunk.shape[1]:
            listed = np.empty(chunk.shape[1], dtype=np.int32)
        merged_kernels.list_others(chunk, i0, c0, lim, values, columns, n_others, listed, widen)
    block.factors_other = block.factors64
    over = np.flatnonzero(n_others > room)
    if over.size:  # more than guessed: those rows again, in float64, into wider arrays
        ends, _, cols, found = block.others(None, rows[over], limit[over])
        n_others[over] = np.diff(ends)
        wide = int(n_others.max())
        values = np.pad(values, ((0, 0), (0, max(wide - room, 0))))
        columns = np.pad(columns, ((0, 0), (0, max(wide - room, 0))))
        for k, i in enumerate(over):
            values[i, : n_others[i]] = found[ends[k] : ends[k + 1]]
            columns[i, : n_others[i]] = cols[ends[k] : ends[k + 1]]
    return values, columns, n_others


def _jth(found, inside, n_ranked):
    """Each row's J-th smallest relevant value (b,) (-inf where J = 0), with the ignored entries
    ``inside`` (rows, columns) of ``found`` set to +inf; None where a value is NaN or infinite."""
    rows, cols = inside
    found[rows, cols] = -np.inf  # out of the largest
    largest = found.max(axis=1)  # NaN: NaN
    found[rows, cols] = np.inf
    n_finite = found.shape[1] - np.bincount(rows, minlength=len(found))
    if not np.isfinite(largest[n_finite > 0]).all():
        return None
    top = np.where(n_ranked > 0, largest, -np.inf)
    for r in np.flatnonzero((n_ranked > 0) & (n_ranked < n_finite)):  # J short of every value: a selection
        top[r] = np.partition(found[r], n_ranked[r] - 1)[n_ranked[r] - 1]
    return top
