"""A verification's pair distances as curves: ROC and DET points and the histograms of positive
and negative pairs, read off the exact histograms the verification builds (no further pass).

The verification bins every pair's exact distance on one grid (:class:`~embedeval._setlevel.pairs.Grid`,
exact binning: :mod:`embedeval._setlevel.verification`), so the pairs below each edge of the grid
are counted exactly: each point is the (FMR, FNMR) of accepting the pairs at distance < that
edge, a point of the ROC itself, not an interpolation. Between two points the curve is not
known finer than the grid (65,536 bins over the sampled range of distances). Points whose rates
both move less than :data:`STEP` (linearly, and in log10 for the DET's small rates) from the
last one kept are left out, so that a page holds a few hundred.

Distances are the verification's ordering keys (squared euclidean, minus the inner product);
:func:`embedeval._embeddings.neighbors._unscale` turns them into reported distances.
"""

from __future__ import annotations

import math

import numpy as np

from .pairs import Grid

STEP = 0.002  # a point is kept when FMR or FNMR moves this much, or log10 of either this x 10
HISTOGRAM_BINS = 60


def pair_curves(grid: Grid, hist_pos: np.ndarray, hist_neg: np.ndarray, bounds: tuple[float, float]) -> dict:
    """``{"threshold", "fmr", "fnmr"}`` (arrays of the ROC's points, thresholds increasing) and
    ``{"edges", "positive", "negative"}`` (a histogram of :data:`HISTOGRAM_BINS` bins of each
    kind of pair; ``edges`` has one more entry), ``n_positive`` and ``n_negative``.

    Parameters
    ----------
    grid : Grid
    hist_pos, hist_neg : numpy.ndarray of shape (grid.n_bins + 2,), int64
        Positive and negative pairs per bin (bin 0 below the grid, the last above it).
    bounds : (float, float)
        Bounds no pair distance goes outside (the outer edges of the under- and overflow bins).
    """
    n_pos, n_neg = int(hist_pos.sum()), int(hist_neg.sum())
    edges = grid.lo + np.arange(grid.n_bins + 1) / grid.scale  # edge i: below it, bins 0..i
    below_pos, below_neg = np.cumsum(hist_pos)[:-1], np.cumsum(hist_neg)[:-1]
    changed = np.flatnonzero(np.diff(below_pos, prepend=-1) | np.diff(below_neg, prepend=-1))
    fmr, fnmr = below_neg[changed] / n_neg, 1.0 - below_pos[changed] / n_pos
    kept = _thinned(fmr, fnmr)
    curve = {"threshold": edges[changed][kept], "fmr": fmr[kept], "fnmr": fnmr[kept]}
    return {**curve, **_histogram(hist_pos, hist_neg, grid, bounds), "n_positive": n_pos, "n_negative": n_neg}


def _thinned(fmr: np.ndarray, fnmr: np.ndarray) -> list[int]:
    """Positions of the points kept: the first, the last, and each that moves a rate by
    :data:`STEP` from the last kept (or log10 of a rate by ten times that)."""
    out, last = [], None
    for i, point in enumerate(zip(fmr.tolist(), fnmr.tolist(), strict=True)):
        if last is None or i == fmr.size - 1 or any(_moved(a, b) for a, b in zip(point, last, strict=True)):
            out.append(i)
            last = point
    return out


def _moved(a: float, b: float) -> bool:
    if abs(a - b) >= STEP:
        return True
    return a > 0 and b > 0 and abs(math.log10(a / b)) >= 10 * STEP


def _histogram(hist_pos, hist_neg, grid: Grid, bounds) -> dict:
    """:data:`HISTOGRAM_BINS` bins of whole grid bins, from the first to the last that holds a pair."""
    used = np.flatnonzero(hist_pos + hist_neg)
    first, last = int(used[0]), int(used[-1])
    group = max(1, math.ceil((last - first + 1) / HISTOGRAM_BINS))
    starts = np.arange(first, last + 1, group)

    def lower(b: int) -> float:
        return bounds[0] if b == 0 else grid.lo + (b - 1) / grid.scale

    upper = bounds[1] if last == grid.n_bins + 1 else grid.lo + last / grid.scale
    return {
        "edges": np.array([lower(int(b)) for b in starts] + [upper]),
        "positive": np.add.reduceat(hist_pos[first : last + 1], starts - first),
        "negative": np.add.reduceat(hist_neg[first : last + 1], starts - first),
    }
