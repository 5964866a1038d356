"""The deep ranking's count of other references with the compiled pass (:mod:`.deep_kernels`):
the results of :meth:`embedeval._search.deep_block.Block.count` (which the tests check on the
same cases) without collecting, regrouping and sorting every other reference within the limit.

Only near-ties leave the compiled loop: in float32 (mixed precision) they are placed again in
float64, and a row where one remains is handed to the numpy passes, which rank it exactly from
its candidates. Rows without a near-tie are exact from the counts alone (the proof in
:mod:`embedeval._search.deep`).
"""

from __future__ import annotations

import numpy as np

from .._core import budget as _budget
from .._core import compiled
from . import deep_count as steps

_FUSED = compiled.in_cache(f"{__package__}.deep_kernels", "_place_chunk_into", "_ranks_from_counts_into")


def fuses(units: int) -> bool:
    """Whether a count that scans ``units`` values (rows x references) takes the compiled pass
    (:func:`count`) rather than the numpy passes: once it repays its compilation with a cold cache
    (:data:`embedeval._core.budget.DEEP_FUSED_COMPILED_FROM`), at once where numba's cache holds it.
    A small evaluation with deep classes (``embedeval reality-check``: 2,000 points in two
    classes) then never compiles it."""
    return compiled.repaid("deep pass", units, _budget.DEEP_FUSED_COMPILED_FROM, _FUSED)


def count(block, mixed: bool, rows, top, threshold):
    """``(ranks (m, w), short (m,))`` as :meth:`~embedeval._search.deep_block.Block.count` (class codes,
    no grades)."""
    from . import deep_kernels as kernels  # numba, imported only when compiled kernels are on

    m = rows.size
    window = block.bound_other[rows] + block.bound_rel[rows]
    padded = np.ascontiguousarray(block.padded if m == len(block.queries) else block.padded[rows])
    nearest = padded[:, 1:-1]
    depth = block.depth[rows]
    n_ranked = block.n_ranked[rows]
    ranked = steps.at_most(padded, n_ranked, top + window)
    below = steps.at_most(padded, n_ranked, threshold)  # NaN: none
    counts = np.zeros((m, nearest.shape[1] + 1), dtype=np.int64)
    limits = top + 2 * window
    found, out, listed = [], np.empty((0, 3), dtype=np.int32), np.empty((2, 0), dtype=np.int32)
    tables = kernels.new_tables(m, nearest.shape[1])
    for i0, c0, chunk, lim in block.chunks_within(rows, limits):
        if out.shape[0] < chunk.size:
            out = np.empty((chunk.size, 3), dtype=np.int32)
        if listed.shape[1] < chunk.shape[1]:
            listed = np.empty((2, chunk.shape[1]), dtype=np.int32)
        args = (padded, ranked, threshold, window, counts, below, out, tables, listed)
        n = kernels.place_chunk(chunk, i0, c0, lim, *args)
        if n:
            found.append(out[:n].astype(np.int64))
    tied = np.zeros(m, dtype=bool)
    if found:
        near = np.concatenate(found)
        if mixed:  # those others again, in float64
            factors = block.ranker.matrix64  # made from float32 factors and float64 norms
            bound = np.ascontiguousarray(block.bound_rel[rows])
            args = (factors.float32, factors.norms, padded, ranked, bound, counts)
            still = kernels.replace_float64(near, rows, block.factors64, *args)
            near = near[still]
        tied[near[:, 0]] = True
    short = ~np.isnan(threshold) & (below < depth)
    ranks = kernels.ranks_from_counts(counts, ranked, np.asarray(depth, dtype=np.float64))
    redo = np.flatnonzero(tied & ~short)
    if redo.size:  # rows with a near-tie: ranked exactly from their candidates by the numpy passes
        ranks[redo] = block.count(None, mixed, rows[redo], top[redo], threshold[redo], fused=False)[0]
    return ranks, short
