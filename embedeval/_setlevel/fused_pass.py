"""The verification's main pass with compiled tile kernels (:mod:`.pair_kernels`, numba): the
same results as :func:`embedeval._setlevel.verification._main_pass`'s numpy passes, which the
tests check on the same cases."""

from __future__ import annotations

import numpy as np

from .._core import budget as _budget
from .pair_auroc import HeldPositives
from .pairs import Grid, PairSpace, pair_indices


def main_pass(space: PairSpace, grid: Grid, held: HeldPositives, want_histogram: bool, guessed, budget: int):
    """See :func:`embedeval._setlevel.verification._main_pass` (same arguments and results)."""
    from . import pair_kernels as kernels  # numba, imported only when compiled kernels are on

    hist = np.zeros(grid.n_bins + 2 if want_histogram else 0, dtype=np.int64)
    local2, kept, n_kept = 0, [], 0
    index = np.int32 if max(len(space.q), len(space.r)) < 2**31 else np.int64
    no_guess = np.zeros(0, dtype=bool)
    table = (held.f, *held.clip, held.offset, held.before, held.count)
    out = None  # positions found in a tile: (left to compare, in guessed bins)
    for tile in space.tiles():
        dist, error = space.approx(tile)
        margin = grid.margin(error)
        bins = np.empty(dist.shape, dtype=np.int32)
        if kernels.tile_bins(dist, grid.lo, grid.scale, grid.n_bins, margin, bins):
            at = np.flatnonzero(bins < 0)
            bins.reshape(-1)[at] = grid.bins(space.exact(*pair_indices(tile, at)))
        collect = guessed is not None and kept is not None
        out = np.empty((2, bins.size), dtype=np.int32) if out is None or out.shape[1] < bins.size else out
        fast, n_slow, n_near = kernels.tile_select(
            bins,
            dist,
            space.q_codes[tile.rows],
            space.r_codes[tile.cols],
            tile.upper,
            hist,
            held.bins,
            guessed if collect else no_guess,
            *table,
            margin * held.f,
            out,
        )
        slow, near = out[0, :n_slow].astype(np.int64), out[1, :n_near].astype(np.int64)
        local2 += int(fast)
        coords, flat_bins = dist.reshape(-1), bins.reshape(-1)
        for s in range(0, slow.size, _budget.AUROC_BATCH):
            at = slow[s : s + _budget.AUROC_BATCH]
            local2 += held._neighbours(
                coords[at],
                flat_bins[at].astype(np.int64),
                margin,
                lambda i, at=at, tile=tile: space.exact(*pair_indices(tile, at[i])),
            )
        if collect:
            n_kept += near.size
            if n_kept > budget:
                kept = None
            elif near.size:
                rows, cols = pair_indices(tile, near)
                kept.append((flat_bins[near], rows.astype(index), cols.astype(index)))
    if not want_histogram:
        hist = np.zeros(grid.n_bins + 2, dtype=np.int64)
    if guessed is None or kept is None:
        return hist, local2, None
    if not kept:
        return hist, local2, (np.empty(0, dtype=np.int64),) * 3
    return hist, local2, tuple(np.concatenate(part) for part in zip(*kept, strict=True))
