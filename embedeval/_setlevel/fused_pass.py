"""The verification's main pass with compiled tile kernels (:mod:`.pair_kernels`, numba): the
same results as :func:`embedeval._setlevel.verification._main_pass`'s numpy passes, which the
tests check on the same cases.

Tiles run on threads (the kernels release the GIL; numpy's BLAS is limited to one thread per
tile while they do, with threadpoolctl): each gives its histogram, its AUROC sum of the negatives
the table settles, and the positions of the rest; the main thread adds them up and compares the
few negatives near held positives one by one, in the order of the tiles.
"""

from __future__ import annotations

import numpy as np

from .._core import budget as _budget
from .._pipeline.executors import default_threads, one_blas_thread_each, run_threads
from .pair_auroc import SCAN, HeldPositives
from .pairs import Grid, PairSpace, pair_indices
from .thresholds import Kept


def main_pass(
    space: PairSpace, grid: Grid, held: HeldPositives, want_histogram: bool, guessed, budget: int, n_threads=None
):
    """See :func:`embedeval._setlevel.verification._main_pass` (same arguments and results);
    ``n_threads``: tiles at once (default: faiss's thread count, the machine's cores)."""
    n_threads = n_threads or default_threads()
    hist = np.zeros(grid.n_bins + 2, dtype=np.int64)
    local2, kept = 0, Kept(space, guessed, budget)
    jobs = ((None, (number, tile)) for number, tile in enumerate(space.tiles()))
    work = _TileWork(space, grid, held, want_histogram, guessed)
    with one_blas_thread_each(n_threads):
        for _, result in run_threads(jobs, work, n_threads):
            number, tile, coords, slow, slow_bins, margin, part, fast, near, near_bins = result
            if want_histogram:
                hist += part
            local2 += fast
            for s in range(0, slow.size, _budget.AUROC_BATCH):
                at = slow[s : s + _budget.AUROC_BATCH]
                local2 += held.neighbours(
                    coords[at],
                    slow_bins[s : s + _budget.AUROC_BATCH],
                    margin,
                    lambda i, at=at, tile=tile: space.exact(*pair_indices(tile, at[i])),
                )
            if kept.parts is not None:
                kept.add(number, tile, near, near_bins)
    return hist, local2, kept.pairs()


class _TileWork:
    """One tile's compiled work (run on a thread): distances, then one kernel for the bins,
    histogram and selections; the few pairs with an uncertain bin are binned on their exact
    distances here and handled as the numpy passes handle them."""

    def __init__(self, space, grid, held, want_histogram, guessed):
        from . import pair_kernels  # numba, imported only when compiled kernels are on

        self.kernel = pair_kernels.tile_pass
        self.space, self.grid, self.held = space, grid, held
        self.hist_size = grid.n_bins + 2 if want_histogram else 0
        self.guessed = np.zeros(0, dtype=bool) if guessed is None else guessed

    def __call__(self, job):
        number, tile = job
        space, grid, held = self.space, self.grid, self.held
        dist, error = space.approx(tile, norms=False)  # the kernel adds the norms
        margin = grid.margin(error)
        empty = np.empty(0)
        q_sq, r_sq = (space.q_sq[tile.rows], space.r_sq[tile.cols]) if space.euclidean else (empty, empty)
        hist = np.zeros(self.hist_size, dtype=np.int64)
        out = np.empty((3, dist.size), dtype=np.int32)
        q_codes, r_codes = space.q_codes[tile.rows], space.r_codes[tile.cols]
        fast, n_slow, n_near, n_unsure = self.kernel(
            dist,
            q_sq,
            r_sq,
            np.array([grid.lo, grid.scale, grid.n_bins, margin]),
            q_codes,
            r_codes,
            tile.upper,
            hist,
            held.bins,
            self.guessed,
            np.array([held.f, *held.clip, margin * held.f]),
            held.offset,
            held.cells,
            held.first,
            held.coords,
            SCAN,
            out,
            np.empty(dist.shape[1], dtype=np.int64),
            _budget.VERIFICATION_PREFETCH,
        )
        coords = dist.reshape(-1)
        slow, near = out[0, :n_slow].astype(np.int64), out[1, :n_near].astype(np.int64)
        slow_bins, near_bins = grid.bins_of(coords[slow]), grid.bins_of(coords[near])  # as the kernel bins them
        if n_unsure:
            unsure = out[2, :n_unsure].astype(np.int64)
            rows, cols = pair_indices(tile, unsure)
            bins = grid.bins(space.exact(rows, cols))
            if hist.size:
                hist += np.bincount(bins, minlength=hist.size)
            negative = held.bins[bins] & (space.q_codes[rows] != space.r_codes[cols])
            slow, slow_bins = np.concatenate([slow, unsure[negative]]), np.concatenate([slow_bins, bins[negative]])
            if self.guessed.size:
                inside = self.guessed[bins]
                near = np.concatenate([near, unsure[inside]])
                near_bins = np.concatenate([near_bins, bins[inside]])
                order = np.argsort(near, kind="stable")  # the numpy passes' order: flat positions
                near, near_bins = near[order], near_bins[order]
        return number, tile, coords, slow, slow_bins, margin, hist, int(fast), near, near_bins
