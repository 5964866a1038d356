"""Pair verification: is a pair of items the same class? FNMR at FMR, TAR at FAR, EER, AUROC.

Every pair of distinct items is a trial: *positive* (genuine) when both items share a label,
*negative* (impostor) otherwise. A threshold t accepts a pair when its distance d <= t; the
false match rate FMR(t) is the share of negative pairs accepted, the false non-match rate
FNMR(t) the share of positive pairs rejected. Distances are embedeval's exact float64 distances
(:mod:`embedeval._setlevel.pairs`), so tied distances are decided exactly and consistently.

Conventions
-----------
* Ties: pairs at equal distance are accepted or rejected together (thresholds sit at distinct
  distance values; the ROC has one point per distinct distance, as scikit-learn's ``roc_curve``).
* ``fnmr@fmr=x`` is the FNMR at the largest threshold whose FMR <= x. With M negative pairs,
  K = floor(x M) (the largest K with K / M <= x in float64) and g the (K+1)-th smallest negative
  distance, that threshold accepts exactly the pairs with d < g, so FNMR = #{positive d >= g} / P.
  ``tar@far=x`` (face verification's name) is 1 - fnmr@fmr=x. (OML's ``fnmr@fmr`` instead takes the
  linearly interpolated x-quantile of the negative distances as threshold and counts d >= it.)
* ``eer``: the ROC drawn with straight segments between its points (the curve whose area is the
  AUROC below, and the one the common ``brentq(1 - x - interp(fpr, tpr))`` recipe searches)
  crosses the line FMR = FNMR once; the EER is the FMR there.
* ``pair_auroc`` = P(d_neg > d_pos) + 1/2 P(d_neg = d_pos), over all (positive, negative) pairs of
  pairs: the area under that ROC, ties counted as 1/2 (scikit-learn's ``roc_auc_score``).

How it stays exact without materialising the pairs: one pass over the positive pairs (items
grouped by label) records their exact distances and a histogram of them on a grid; one pass over
all pairs builds the histogram of every pair on the same grid (exact binning: see
:mod:`embedeval._setlevel.pairs`) and counts, for each negative pair in a bin that holds positives, the
positives below it through a lookup table of the sorted positive distances (near-ties decided on
exact distances: :mod:`embedeval._setlevel.pair_auroc`). The histograms bracket each threshold (FMR levels,
EER) in one bin, whose pairs' exact distances then select it exactly (:mod:`embedeval._setlevel.thresholds`):
the pairs of the bins a random sample of pairs points to are kept during the main pass, so that
usually no further pass is needed. When the positive pairs outnumber what is held at once, they
are processed in ranges of bins, one pass over all pairs per range.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._core import budget as _budget
from .._core import compiled
from .._pipeline.executors import default_threads, one_blas_thread_each, run_threads
from .._search.float64 import compiles_exact
from . import fused_pass
from .pair_auroc import HeldPositives
from .pair_curves import pair_curves
from .pairs import Grid, PairSpace, exact_bins, pair_indices
from .thresholds import Kept, Threshold, collect_pass, guess_bins, refine_pass


@dataclass(frozen=True)
class Budgets:
    """Working-memory budgets of a verification (none changes a result).

    tile_rows: rows of a tile of pair distances (384 rows by 1536 columns: 4.5 MB per float64
    temporary; smaller than 512 rows, the tile competes less with the AUROC table for the cache:
    bench/NOTES.md, issue 42, stop 50).
    bins: bins of the histogram grid (at least 2).
    held: positive pair distances held at once (2**22: 64 MB with their grid coordinates); more
    positives are processed in ranges, one pass over all pairs per range.
    collected: pairs kept or collected around the thresholds (2**22: ~50 MB of indices).
    cells: cells of the lookup table over the held positive distances (at most 4 per positive;
    2**23: 32 MB as pairs of uint16, 64 MB of int32 where a bin holds 2**16 positives or more).
    Fewer cells send more negative pairs to the slow path (a negative
    sharing a cell with positives is compared with them one by one; bench/NOTES.md, 'Figures
    moved from the code (stop 52)').
    """

    tile_rows: int = _budget.VERIFICATION_TILE_ROWS
    bins: int = _budget.VERIFICATION_BINS
    held: int = _budget.VERIFICATION_HELD
    collected: int = _budget.VERIFICATION_COLLECTED
    cells: int = _budget.VERIFICATION_CELLS


@dataclass(frozen=True)
class PairVerification:
    """Verification metrics over all pairs (see the module docstring for the conventions).

    Attributes
    ----------
    fnmr_at_fmr : dict of float to float
        ``{x: FNMR at the largest threshold whose FMR <= x}``.
    fmr_attained : dict of float to float
        ``{x: the FMR of that threshold}`` (<= x; below x when ties or few negatives force it).
    eer : float
        Equal error rate.
    auroc : float
        Area under the ROC of pair distances (ties count 1/2).
    n_positive, n_negative : int
        Positive (same label) and negative pairs.
    distance : str
    """

    fnmr_at_fmr: dict[float, float]
    fmr_attained: dict[float, float]
    eer: float
    auroc: float
    n_positive: int
    n_negative: int
    distance: str
    curves: dict | None = None  # ROC/DET points and pair histograms (embedeval._setlevel.pair_curves)


# The words an evaluation's conventions quote (the module docstring states the rest).
CONVENTIONS = {
    "threshold": "a pair is accepted when its distance d <= t; equal distances are accepted together",
    "distance": "exact float64 distance of the float32 vectors (squared euclidean; minus inner product; "
    "cosine: minus inner product of L2-normalised vectors)",
}


def verify(space: PairSpace, levels: list[float], distance: str, budgets: Budgets) -> PairVerification:
    """FNMR at the FMR ``levels`` (each in (0, 1)), EER and AUROC over every pair of ``space``,
    exactly; the entry point (:meth:`embedeval._setlevel.steps.SetStep.check`) has made sure that
    there are positive and negative pairs."""
    P, M = space.n_positive, space.n_negative
    sample, sample_positive, sample_pos = space.sample(_budget.VERIFICATION_SAMPLE)
    both = np.concatenate([sample, sample_pos])
    grid = Grid.covering(float(both.min()), float(both.max()), budgets.bins)
    hold_all = P <= budgets.held
    hist_pos, held_values = _positive_pass(space, grid, np.ones(grid.n_bins + 2, dtype=bool) if hold_all else None)
    targets = [Threshold.fmr(x, P, M) for x in levels] + [Threshold.eer(P, M)]
    # Bins where the thresholds probably lie, guessed from the sample: the pairs in them are
    # kept (as indices) during the main pass, which then usually settles every threshold.
    guessed = guess_bins(targets, np.sort(sample[~sample_positive]), hist_pos, grid, budgets.collected)
    hist_all, local2, kept = None, 0, None
    for n, chunk in enumerate(_chunks(hist_pos, budgets.held)):
        if not hold_all:
            held_values = _positive_pass(space, grid, chunk)[1]
        held = HeldPositives(held_values, grid, chunk, budgets.cells)
        hist, part, found = _main_pass(space, grid, held, n == 0, guessed if n == 0 else None, budgets.collected)
        hist_all, kept = (hist, found) if n == 0 else (hist_all, kept)
        local2 += part
    hist_neg = hist_all - hist_pos
    below_pos = np.concatenate([[0], np.cumsum(hist_pos)[:-1]])
    u2 = local2 + 2 * sum(int(a) * int(b) for a, b in zip(below_pos.tolist(), hist_neg.tolist(), strict=True) if b)
    auroc = float(Fraction(u2, 2 * P * M))

    for t in targets:
        t.place(grid, hist_pos, hist_neg, space.bounds())
        if kept is not None and guessed[t.chain[0][1]] and t.n_pairs <= budgets.collected // len(targets):
            bins, rows, cols = kept
            inside = bins == t.chain[0][1]
            t.settle(
                space.exact(rows[inside], cols[inside]), space.q_codes[rows[inside]] == space.r_codes[cols[inside]]
            )
    while True:
        crowded = [t for t in targets if t.values is None and t.n_pairs > budgets.collected // len(targets)]
        if not crowded:
            break
        refine_pass(space, crowded, budgets.bins)
    collect_pass(space, [t for t in targets if t.values is None])
    fnmr, attained = {}, {}
    for x, t in zip(levels, targets, strict=False):
        fnmr[x], attained[x] = t.resolve_fmr()
    curves = pair_curves(grid, hist_pos, hist_neg, space.bounds())
    return PairVerification(fnmr, attained, targets[-1].resolve_eer(), auroc, P, M, distance, curves)


def _chunks(hist_pos: np.ndarray, held: int) -> list[np.ndarray]:
    """Masks of bins, consecutive runs of bins with positives holding <= ``held`` positives each
    (a bin holding more is a chunk by itself)."""
    chunks, current, count = [], np.zeros(hist_pos.size, dtype=bool), 0
    for b in np.flatnonzero(hist_pos):
        if count and count + hist_pos[b] > held:
            chunks.append(current)
            current, count = np.zeros(hist_pos.size, dtype=bool), 0
        current[b] = True
        count += int(hist_pos[b])
    chunks.append(current)
    return chunks


def _positive_pass(space: PairSpace, grid: Grid, wanted: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Histogram of the positive pairs' exact bins and, for those in ``wanted`` bins, their
    exact distances (unsorted; in the order the tiles finish). Tiles run on threads, one BLAS
    thread each (the exact distances are numpy passes or a compiled kernel, both releasing the
    GIL). With the compiled exact formula (:func:`embedeval._search.float64.compiles_exact`),
    every positive pair's exact distance is computed and binned, no product made; otherwise
    from the tile's float64 product, exact distances only for the pairs near a bin edge or
    wanted."""
    hist = np.zeros(grid.n_bins + 2, dtype=np.int64)
    values = []
    n_threads = default_threads()
    kernel = compiles_exact(space.n_positive * space.q.shape[1])
    jobs = ((None, tile) for tile in space.positive_tiles())
    work = functools.partial(_positive_tile, space, grid, wanted, kernel)
    with one_blas_thread_each(n_threads):
        for _, (part, found) in run_threads(jobs, work, n_threads):
            hist += part
            values.append(found)
    return hist, (np.concatenate(values) if values else np.empty(0))


def _positive_tile(
    space: PairSpace, grid: Grid, wanted: np.ndarray | None, kernel: bool, tile
) -> tuple[np.ndarray, np.ndarray]:
    """One tile of :func:`_positive_pass`: its positives' histogram and wanted exact distances."""
    mask = space.positive(tile)
    if tile.upper:
        mask &= space.valid(tile, mask.shape)
    flat = np.flatnonzero(mask)
    if kernel:
        values = space.exact(*pair_indices(tile, flat), kernel=True)
        bins = grid.bins(values)
        hist = np.bincount(bins, minlength=grid.n_bins + 2)
        return hist, (np.empty(0) if wanted is None else values[wanted[bins]])
    dist, error = space.approx(tile)
    coords = grid.coord(dist.reshape(-1)[flat])
    bins = exact_bins(space, grid, tile, coords, error, flat)
    hist = np.bincount(bins, minlength=grid.n_bins + 2)
    if wanted is None:
        return hist, np.empty(0)
    keep = flat[wanted[bins]]
    return hist, space.exact(*pair_indices(tile, keep))


def _main_pass(space: PairSpace, grid: Grid, held: HeldPositives, want_histogram: bool, guessed, budget: int):
    """One pass over all pairs: the histogram of every pair's exact bin (when wanted), the AUROC
    counts of the negative pairs in the held positives' bins, and the (bin, row, column) of the
    pairs in ``guessed`` bins (None if more than ``budget`` turn up). With compiled kernels
    (:mod:`embedeval._core.compiled`), :func:`.fused_pass.main_pass` does it, with the same results."""
    if compiled.enabled():
        return fused_pass.main_pass(space, grid, held, want_histogram, guessed, budget)
    hist = np.zeros(grid.n_bins + 2, dtype=np.int64)
    local2, kept = 0, Kept(space, guessed, budget)
    for number, tile in enumerate(space.tiles()):
        dist, error = space.approx(tile)
        coords = grid.coord(dist, out=dist)
        bins = exact_bins(space, grid, tile, coords, error)
        valid = space.valid(tile, bins.shape)
        if want_histogram:
            hist += np.bincount(bins[valid] if valid is not None else bins.reshape(-1), minlength=hist.size)
        select = held.bins[bins]
        select &= space.q_codes[tile.rows][:, None] != space.r_codes[tile.cols][None, :]
        if valid is not None:
            select &= valid
        flat = np.flatnonzero(select)
        if flat.size:
            local2 += held.count2(
                coords.reshape(-1)[flat],
                bins.reshape(-1)[flat],
                grid.margin(error),
                lambda at, flat=flat, tile=tile: space.exact(*pair_indices(tile, flat[at])),
            )
        if kept.parts is not None:
            near = guessed[bins]
            if valid is not None:
                near &= valid
            flat = np.flatnonzero(near)
            kept.add(number, tile, flat, bins.reshape(-1)[flat])
    return hist, local2, kept.pairs()
