"""The compiled pass over a tile of pair distances (numba; imported only when
:func:`embedeval._core.compiled.enabled`): the per-tile work of the verification's main pass in
one loop instead of a dozen numpy passes, with the same floating-point operations, so that every
bin, count and kept pair equals the numpy path's (:mod:`.verification`).

:func:`tile_pass`, for each counted pair of the tile (every pair, or those above the diagonal):

* its grid coordinate ``(dist - lo) * scale`` (written back into ``dist``) and its bin
  ``clip(floor(coord), -1, n_bins) + 1``, or, when the coordinate lies within ``margin`` of a bin
  edge, its position in ``out[2]`` (the caller bins it on its exact distance and handles it as
  the numpy passes do);
* the histogram of the certain bins;
* for a negative pair in a held bin: its AUROC count ``2 * before`` when its table cell is
  certain and holds no positive (as :meth:`.pair_auroc.HeldPositives.count2`), otherwise its
  position in a list;
* the positions of the pairs in ``guessed`` bins in ``out[1]``.

A second walk goes over the listed negatives: one whose cell is certain and holds at most
``scan`` positives compares them one by one (as :meth:`.pair_auroc.HeldPositives.neighbours`
does) and counts ``2 * (before + below)``; the others (a near-tie, a crowded or uncertain cell)
go to ``out[0]``, for the caller. The table is tens of MB and read at random, so both walks
prefetch it ``ahead`` pairs on (the second also the positives of a cell half as far on); a
branch on each looked-up value would otherwise hold the processor until memory answers
(``python bench/bench_verification.py --prefetch 0 32``).

One kernel rather than two keeps the tile's memory read once and the first call's compilation
short (one function to compile: ``python bench/bench_compile.py --cold``). Each row is binned
first (a loop LLVM vectorises), then walked. The clipping is written as conditional expressions
(numba compiles them faster than ``min``/``max``; the same values), and the table lookup is
written inline (a helper function, even inlined, made the loop slower: bench/NOTES.md, stop 52).
"""

from __future__ import annotations

import numpy as np

from .._core.compiled import kernel_numba
from .._core.intrinsics import prefetch

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)


@numba.njit(cache=True, nogil=True)
def tile_pass(  # noqa: C901 - one kernel: one compilation
    dist,
    q_sq,
    r_sq,
    grid,
    q_codes,
    r_codes,
    upper,
    hist,
    held_bins,
    guessed,
    table,
    offset,
    cells,
    first,
    coords,
    scan,
    out,
    row_bins,
    ahead,
):  # pragma: no cover - compiled
    """One pass over a tile (see the module docstring).

    Parameters
    ----------
    dist : float64 (h, w), C-contiguous
        Approximate distances, or for euclidean pairs the products ``-2 q.r`` alone; overwritten
        with their grid coordinates.
    q_sq, r_sq : float64 (h,), (w,), or both empty
        Squared norms of the tile's rows and columns, added to ``dist`` as
        :meth:`.pairs.PairSpace.approx` adds them (``(p + q_sq[i]) + r_sq[j]``: the same
        numbers); empty: ``dist`` is complete.
    grid : float64 (4,)
        ``lo, scale, n_bins, margin`` (the coordinate margin of the tile's error bound).
    q_codes, r_codes : int64 (h,), (w,)
    upper : bool
        Only pairs above the diagonal count.
    hist : int64 (n_bins + 2,) or empty (not wanted); added to.
    held_bins, guessed : bool (n_bins + 2,); ``guessed`` empty: no pair collected.
    table : float64 (4,)
        ``f, clip_lo, clip_hi, e`` of :class:`.pair_auroc.HeldPositives` (``e`` = margin * f).
    offset : int64; cells : int32 (2 * n_cells,) - the held positives' lookup table,
        :attr:`.pair_auroc.HeldPositives.cells`: cell i's ``before`` at 2i, its ``count`` at
        2i + 1 (one cache line per lookup); every bin not held maps to a block of empty cells,
        so that looking up any pair is safe and counts 0.
    first : int64 (n_bins + 2,); coords : float64 (n_held,)
        Each bin's first held positive, and the held positives' sorted grid coordinates.
    scan : int
        Positives of a cell compared one by one at most (a cell holding more: ``out[0]``).
    out : int32 (3, h * w)
        Receives the flat positions of the held-bin negatives left to compare (row 0), of the pairs
        in ``guessed`` bins (row 1) and of the pairs with an uncertain bin (row 2).
    row_bins : int64 (w,)
        Scratch: a row's bins (allocated by the caller: an ``np.empty`` in the kernel would
        lengthen its first call's compilation).
    ahead : int
        Columns ahead whose table cells are prefetched while a pair is walked (0: none). The
        table is tens of MB and read at random; without the prefetch each lookup waits on memory.

    Returns
    -------
    (int, int, int, int)
        The AUROC sum ``2 * (before + below)`` of the negatives decided here, and the three counts.
    """
    h, w = dist.shape
    lo, scale, top, margin = grid[0], grid[1], grid[2], grid[3]
    f, clip_lo, clip_hi, e = table[0], table[1], table[2], table[3]
    want_hist = hist.size > 0
    want_near = guessed.size > 0
    add_norms = q_sq.size > 0
    n_slow = n_near = n_unsure = 0
    fast = 0
    last = cells.size // 2 - 1
    for i in range(h):
        qc = q_codes[i]
        start = i + 1 if upper else 0
        row = dist[i]
        if add_norms:  # as PairSpace.approx: the row's norm, then the column's
            qs = q_sq[i]
            for j in range(start, w):
                row[j] = (row[j] + qs) + r_sq[j]
        for j in range(start, w):  # a loop without stores but these two: vectorised
            c = (row[j] - lo) * scale
            row[j] = c
            k = np.floor(c)
            frac = c - k
            k = -1.0 if k < -1.0 else k
            k = top if k > top else k
            row_bins[j] = -1 if frac < margin or frac >= 1 - margin else np.int64(k) + 1
        for j in range(start, w):
            if ahead > 0 and j + ahead < w:  # no effect on any value: only the cache
                a = j + ahead
                scaled = row[a] * f
                scaled = clip_lo if scaled < clip_lo else scaled
                scaled = clip_hi if scaled > clip_hi else scaled
                index = np.int64(np.floor(scaled)) + offset[row_bins[a] if row_bins[a] >= 0 else 0]
                index = 0 if index < 0 else index
                index = last if index > last else index
                prefetch(cells, 2 * index)
            b = row_bins[j]
            if b < 0:
                out[2, n_unsure] = i * w + j
                n_unsure += 1
                continue
            if want_hist:
                hist[b] += 1
            if want_near and guessed[b]:
                out[1, n_near] = i * w + j
                n_near += 1
            if qc == r_codes[j]:
                continue
            scaled = row[j] * f
            scaled = clip_lo if scaled < clip_lo else scaled
            scaled = clip_hi if scaled > clip_hi else scaled
            cell = np.floor(scaled)
            frac = scaled - cell
            # every bin has cells (those of bins not held are empty, before = 0): no branch on
            # whether the bin is held, which half the pairs would mispredict
            index = np.int64(cell) + offset[b]
            if cells[2 * index + 1] == 0 and frac >= e and frac < 1 - e:
                fast += cells[2 * index]
                continue
            if not held_bins[b]:
                continue
            out[0, n_slow] = i * w + j
            n_slow += 1
    kept = 0
    fast_listed = 0
    flat = dist.reshape(h * w)  # a listed pair by its flat position, without a division
    for s in range(n_slow):
        if ahead > 0 and s + ahead < n_slow:  # the cell `ahead` pairs on
            at = out[0, s + ahead]
            b, index, frac = _cell(flat[at], top, f, clip_lo, clip_hi, offset)
            prefetch(cells, 2 * (0 if index < 0 else (last if index > last else index)))
        if ahead > 1 and s + ahead // 2 < n_slow:  # the positives of the cell half as far on
            at = out[0, s + ahead // 2]
            b, index, frac = _cell(flat[at], top, f, clip_lo, clip_hi, offset)
            if index >= 0 and index <= last and cells[2 * index + 1] > 0:
                prefetch(coords, first[b] + cells[2 * index])
        at = out[0, s]
        c = flat[at]
        b, index, frac = _cell(c, top, f, clip_lo, clip_hi, offset)
        if frac >= e and frac < 1 - e:  # the margin lies inside the cell
            n = cells[2 * index + 1]
            if n <= scan:
                p = first[b] + cells[2 * index]
                low, high = c - margin, c + margin
                below = 0
                while below < n and coords[p + below] < low:
                    below += 1
                if below == n or coords[p + below] > high:  # no positive within the margin
                    fast_listed += cells[2 * index] + below
                    continue
        out[0, kept] = at
        kept += 1
    return 2 * (fast + fast_listed), kept, n_near, n_unsure


@numba.njit(cache=True, nogil=True)
def _cell(c, top, f, clip_lo, clip_hi, offset):  # pragma: no cover - compiled
    """Bin, table index and position within its cell of a listed pair's coordinate ``c`` (its bin
    is certain), computed as the first walk computes them."""
    k = np.floor(c)
    k = -1.0 if k < -1.0 else k
    k = top if k > top else k
    b = np.int64(k) + 1
    scaled = c * f
    scaled = clip_lo if scaled < clip_lo else scaled
    scaled = clip_hi if scaled > clip_hi else scaled
    cell = np.floor(scaled)
    return b, np.int64(cell) + offset[b], scaled - cell
