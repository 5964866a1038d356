"""The verification's main pass with compiled tile kernels (:mod:`.pair_kernels`, numba): the
same results as :func:`embedeval._setlevel.verification._main_pass`'s numpy passes, which the
tests check on the same cases.

Tiles run on threads (the kernels release the GIL; numpy's BLAS is limited to one thread per
tile while they do, with threadpoolctl): each gives its histogram, its AUROC sum of the negatives
the table settles, and the positions of the rest; the main thread adds them up and compares the
few negatives near held positives one by one, in the order of the tiles.
"""

from __future__ import annotations

import faiss
import numpy as np

from .._core import budget as _budget
from .._pipeline.executors import one_blas_thread_each, run_threads
from .pair_auroc import HeldPositives
from .pairs import Grid, PairSpace, pair_indices


def main_pass(
    space: PairSpace, grid: Grid, held: HeldPositives, want_histogram: bool, guessed, budget: int, n_threads=None
):
    """See :func:`embedeval._setlevel.verification._main_pass` (same arguments and results);
    ``n_threads``: tiles at once (default: faiss's thread count, the machine's cores)."""
    n_threads = n_threads or max(1, faiss.omp_get_max_threads())
    hist = np.zeros(grid.n_bins + 2, dtype=np.int64)
    local2, kept, n_kept = 0, {}, 0
    index = np.int32 if max(len(space.q), len(space.r)) < 2**31 else np.int64
    jobs = ((None, (number, tile)) for number, tile in enumerate(space.tiles()))
    work = _TileWork(space, grid, held, want_histogram, guessed)
    with one_blas_thread_each(n_threads):
        for _, (number, tile, coords, bins, margin, part, fast, slow, near) in run_threads(jobs, work, n_threads):
            if want_histogram:
                hist += part
            local2 += fast
            for s in range(0, slow.size, _budget.AUROC_BATCH):
                at = slow[s : s + _budget.AUROC_BATCH]
                local2 += held._neighbours(
                    coords[at],
                    bins[at].astype(np.int64),
                    margin,
                    lambda i, at=at, tile=tile: space.exact(*pair_indices(tile, at[i])),
                )
            if guessed is not None and kept is not None:
                n_kept += near.size
                if n_kept > budget:
                    kept = None  # the guess was wrong: the thresholds are collected by another pass
                elif near.size:
                    rows, cols = pair_indices(tile, near)
                    kept[number] = (bins[near], rows.astype(index), cols.astype(index))
    if guessed is None or kept is None:
        return hist, local2, None
    if not kept:
        return hist, local2, (np.empty(0, dtype=np.int64),) * 3
    parts = [kept[k] for k in sorted(kept)]
    return hist, local2, tuple(np.concatenate(part) for part in zip(*parts, strict=True))


class _TileWork:
    """One tile's compiled work (run on a thread): distances, exact bins, histogram and selections."""

    def __init__(self, space, grid, held, want_histogram, guessed):
        from . import pair_kernels  # numba, imported only when compiled kernels are on

        self.kernels = pair_kernels
        self.space, self.grid, self.held = space, grid, held
        self.hist_size = grid.n_bins + 2 if want_histogram else 0
        self.guessed = np.zeros(0, dtype=bool) if guessed is None else guessed
        self.table = (held.f, *held.clip, held.offset, held.before, held.count)

    def __call__(self, job):
        number, tile = job
        space, grid, kernels = self.space, self.grid, self.kernels
        dist, error = space.approx(tile)
        margin = grid.margin(error)
        bins = np.empty(dist.shape, dtype=np.int32)
        if kernels.tile_bins(dist, grid.lo, grid.scale, grid.n_bins, margin, bins):
            at = np.flatnonzero(bins < 0)
            bins.reshape(-1)[at] = grid.bins(space.exact(*pair_indices(tile, at)))
        hist = np.zeros(self.hist_size, dtype=np.int64)
        out = np.empty((2, bins.size), dtype=np.int32)
        fast, n_slow, n_near = kernels.tile_select(
            bins,
            dist,
            space.q_codes[tile.rows],
            space.r_codes[tile.cols],
            tile.upper,
            hist,
            self.held.bins,
            self.guessed,
            *self.table,
            margin * self.held.f,
            out,
        )
        slow, near = out[0, :n_slow].astype(np.int64), out[1, :n_near].astype(np.int64)
        return number, tile, dist.reshape(-1), bins.reshape(-1), margin, hist, int(fast), slow, near
