"""Counting, for negative pairs, the positive pairs below them: the Mann-Whitney sum of the AUROC.

For a negative pair at exact distance g, ``L(g) = #{positive d < g}`` and ``R(g) = #{positive
d <= g}``; ``U2 = sum_g L(g) + R(g)`` is twice the Mann-Whitney statistic with ties counted 1/2,
and AUROC = U2 / (2 P M). The part of L and R from positives in lower bins of the histogram
grid comes from the histograms; this module counts the rest, the positives in the negative's
own bin, through a lookup table over the sorted exact positive distances.

The table splits every bin that holds positives into F cells (F a power of two, so that the
cell ``floor(coord * F)`` is an exact refinement of the bin ``floor(coord)``), with the index of
the first positive of each cell. A negative whose coordinate, widened by its error margin, only
touches cells without positives has its count read off the table; otherwise its few neighbouring
positives are compared one by one, and only a near-tie (a positive within the margins) is
decided on exact distances.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import budget as _budget
from .pairs import Grid

# Neighbouring positives compared one by one at most; a negative with more in its cells is
# decided on its exact distance instead (d operations instead of this many).
SCAN = 16
# Bins holding fewer positives than this have their table in uint16 cells (else int32).
NARROW_CELLS = 1 << 16


class HeldPositives:
    """Exact distances of the positive pairs in some bins of a grid, sorted, with a lookup table.

    Parameters
    ----------
    values : numpy.ndarray of shape (n_held,), float64
        Exact distances of every positive pair whose bin is in ``chunk``.
    grid : Grid
    chunk : numpy.ndarray of shape (n_bins + 2,), bool
        The bins held.
    cells : int
        Budget of table cells.
    """

    def __init__(self, values: np.ndarray, grid: Grid, chunk: np.ndarray, cells: int):
        self.values = np.sort(values)
        self.coords = grid.coord(self.values)
        bins = grid.bins_of(self.coords)  # grid.bins(self.values), from the coordinates at hand
        runs = np.flatnonzero(np.diff(bins, prepend=-1))  # sorted values: sorted bins, each a run
        present = bins[runs]
        self.bins = np.zeros(grid.n_bins + 2, dtype=bool)  # bins whose negatives need counting here
        self.bins[present] = True
        self.bins &= chunk
        n_present = max(present.size, 1)
        f = 1
        while 2 * f * n_present <= cells and f * n_present < 4 * self.values.size:
            f *= 2
        self.f = f
        # cells of a present bin k are rank[k] * F + 0 .. F - 1; a coordinate's cell within its
        # bin is floor(coord * F) - (k - 1) * F, so its table index is floor(coord * F) + offset[k];
        # every other bin (no positive held) maps to one last block of F empty cells, so that a
        # compiled loop may look up any pair's cell without a branch on its bin
        rank = np.full(grid.n_bins + 2, n_present, dtype=np.int64)
        rank[present] = np.arange(present.size)
        within = np.clip(np.floor(self.coords * f) - (bins - 1) * f, 0, f - 1).astype(np.int64)
        # each held positive's cell, non-decreasing (the values are sorted): the cells' counts
        # without a bincount over every cell
        key = rank[bins] * f + within
        starts = np.flatnonzero(np.diff(key, prepend=-1))
        per_bin = np.diff(np.append(runs, bins.size))
        bin_start = np.concatenate([[0], np.cumsum(per_bin)])
        self.first = np.zeros(grid.n_bins + 2, dtype=np.int64)
        self.first[present] = bin_start[:-1]
        rank[~self.bins] = n_present
        self.offset = rank * f - (np.arange(grid.n_bins + 2) - 1) * f
        # each cell's first positive relative to its bin's first (a prefix sum within the bin),
        # and the cell's count, side by side in ``cells`` (one cache line per lookup in the
        # compiled pass); uint16 where a bin holds fewer than 2**16 positives (half the table's
        # memory, which the compiled pass reads at random), int32 otherwise
        narrow = int(per_bin.max(initial=0)) < NARROW_CELLS
        self.cells = np.zeros(2 * (n_present + 1) * f, dtype=np.uint16 if narrow else np.int32)
        self.before, self.count = self.cells[0::2], self.cells[1::2]
        self.count[key[starts]] = np.diff(np.append(starts, key.size))
        by_bin = self.cells.reshape(-1, f, 2)  # (bin rank, cell, before | count): a view
        np.cumsum(by_bin[:, :, 1], axis=1, dtype=self.cells.dtype, out=by_bin[:, :, 0])
        by_bin[:, :, 0] -= by_bin[:, :, 1]
        # coordinates of the under- and overflow bins are clipped into their bin's cells, as
        # the held ones are (clipping half a cell inside leaves the cell certain)
        self.clip = (-f + 0.5, (grid.n_bins + 1) * f - 0.5)

    def count2(self, coords: np.ndarray, bins: np.ndarray, margin: float, exact: Callable) -> int:
        """``sum L + R`` over negatives, counting only the held positives in each negative's bin.

        Parameters
        ----------
        coords : numpy.ndarray of shape (m,)
            Approximate grid coordinates of the negatives (within ``margin`` of the exact ones).
        bins : numpy.ndarray of shape (m,)
            Their exact bins (each holding positives).
        exact : callable
            ``exact(positions)`` -> exact distances of the negatives at those positions.
        """
        scaled = coords * self.f
        np.clip(scaled, *self.clip, out=scaled)
        cell = np.floor(scaled)
        frac = scaled - cell
        e = margin * self.f
        # near a cell edge (which includes the edges of the bin), the cell is not certain
        unsure = (frac < e) | (frac >= 1 - e)
        index = cell.astype(np.int64)
        index += self.offset[bins]
        if unsure.any():
            index[unsure] = self.offset[bins[unsure]] + (bins[unsure] - 1) * self.f  # any cell of the bin
        before, count = self.before[index], self.count[index]
        slow = np.flatnonzero(unsure | (count > 0))
        total = 2 * int(before.sum(dtype=np.int64)) - 2 * int(before[slow].sum(dtype=np.int64))
        for s in range(0, slow.size, _budget.AUROC_BATCH):
            at = slow[s : s + _budget.AUROC_BATCH]
            total += self.neighbours(coords[at], bins[at], margin, lambda i, at=at: exact(at[i]))
        return total

    def neighbours(self, coords, bins, margin, exact) -> int:
        """``sum L + R`` (within the bin) for negatives near held positives: the positives of
        the cells the margin touches are compared one by one, exact distances decide near-ties."""
        low = self._index(coords - margin, bins)
        high = self._index(coords + margin, bins)
        first = self.first[bins]
        a = first + self.before[low]
        b = first + self.before[high] + self.count[high]
        length = b - a
        short = np.flatnonzero(length <= SCAN)
        key = np.repeat(short, length[short])
        offset = np.arange(key.size) - np.repeat(np.cumsum(length[short]) - length[short], length[short])
        held = self.coords[a[key] + offset]
        below = held < coords[key] - margin
        near = ~below & (held <= coords[key] + margin)
        n_below = np.bincount(key, weights=below, minlength=a.size).astype(np.int64)
        decided = np.bincount(key, weights=near, minlength=a.size) == 0
        decided[length > SCAN] = False
        total = 2 * int((a - first + n_below)[decided].sum())
        undecided = np.flatnonzero(~decided)
        if undecided.size:
            values = exact(undecided)
            left = np.searchsorted(self.values, values, "left")
            right = np.searchsorted(self.values, values, "right")
            total += int((left + right - 2 * first[undecided]).sum())
        return total

    def _index(self, coords: np.ndarray, bins: np.ndarray) -> np.ndarray:
        """Table index of coordinates in the given bins, clipped to the bin's cells."""
        within = np.clip(np.floor(coords * self.f) - (bins - 1) * self.f, 0, self.f - 1).astype(np.int64)
        return within + self.offset[bins] + (bins - 1) * self.f
