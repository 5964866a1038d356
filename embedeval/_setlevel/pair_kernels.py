"""The compiled pass over a tile of pair distances (numba; imported only when
:func:`embedeval._core.compiled.enabled`): the per-tile work of the verification's main pass in
a few loops instead of a dozen numpy passes, with the same floating-point operations, so that
every bin, count and kept pair equals the numpy path's (:mod:`.verification`).

:func:`tile_pass`, for each counted pair of the tile (every pair, or those above the diagonal):

* its grid coordinate ``(dist - lo) * scale`` (written back into ``dist``) and its bin
  ``clip(floor(coord), -1, n_bins) + 1``, or, when the coordinate lies within ``margin`` of a bin
  edge, its position in ``out[2]`` (the caller bins it on its exact distance and handles it as
  the numpy passes do);
* the histogram of the certain bins;
* for a negative pair in a held bin: its AUROC count ``2 * before`` when its cell of
  :class:`.pair_auroc.PackedCells` is certain and holds no positive, otherwise its position in
  a list;
* the positions of the pairs in ``guessed`` bins in ``out[1]``.

The table is read in order, not at random: each held negative's cell and position go into
``keys`` as the rows are walked, a counting sort groups them by stretches of ``2**shift`` cells
(about 24 KB of table each), and the lookups then run stretch by stretch, each stretch's table
in the processor's first-level cache. (Looked up as each pair came, a table of 1.5 MB cost 10
to 13 ns a negative, waiting on the second-level cache; the old table of 62 MB, 15 ns with
prefetching.)

A second walk goes over the listed negatives: one whose cell is certain and holds at most
``scan`` positives compares them one by one (as :meth:`.pair_auroc.HeldPositives._neighbours`
does) and counts ``2 * (before + below)``; the others (a near-tie, a crowded or uncertain cell)
go to ``out[0]``, for the caller. It prefetches the positives ``ahead`` listed pairs on (the
positives' coordinates are tens of MB).

One kernel rather than several keeps the first call's compilation short (one function to
compile: ``python bench/bench_compile.py --cold``). Each row is binned first (a loop LLVM
vectorises), then walked. The clipping is written as conditional expressions (numba compiles
them faster than ``min``/``max``; the same values).
"""

from __future__ import annotations

import numba
import numpy as np


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
    words,
    bases,
    spill,
    below,
    coords,
    scan,
    out,
    row_bins,
    keys,
    starts,
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
    table : float64 (7,)
        ``f, clip_lo, clip_hi, e, cell0, log2(f), shift`` of :class:`.pair_auroc.PackedCells`
        (``e`` = margin * f; ``shift``: the sort's stretches are ``2**shift`` cells).
    words : int64 (n_words,); bases : int32 (n_words,); spill : int32; below : int32 (n_bins + 3,)
        The packed cells of :class:`.pair_auroc.PackedCells` (two bits a cell, 32 cells a word;
        a crowded word's counts in ``spill``) and the held positives below each bin.
    coords : float64 (n_held,)
        The held positives' sorted grid coordinates.
    scan : int
        Positives of a cell compared one by one at most (a cell holding more: ``out[0]``).
    out : int32 (3, h * w)
        Receives the flat positions of the held-bin negatives left to compare (row 0), of the pairs
        in ``guessed`` bins (row 1) and of the pairs with an uncertain bin (row 2).
    row_bins : int64 (w,)
        Scratch: a row's bins, then its marks (allocated by the caller: an ``np.empty`` in the
        kernel would lengthen its first call's compilation).
    keys : int64 (2, h * w)
        Scratch: ``cell << 32 | position`` of the held negatives, then the same sorted by stretch.
    starts : int64 ((32 * n_words >> shift) + 1,)
        Scratch: the stretches' counts, then where each goes in the sorted keys.
    ahead : int
        Listed negatives ahead whose cell's positives are prefetched (0: none).

    Returns
    -------
    (int, int, int, int)
        The AUROC sum ``2 * (before + below)`` of the negatives decided here, and the three counts.
    """
    h, w = dist.shape
    lo, scale, top, margin = grid[0], grid[1], grid[2], grid[3]
    f, clip_lo, clip_hi, e = table[0], table[1], table[2], table[3]
    cell0, f_bits, shift = np.int64(table[4]), np.int64(table[5]), np.int64(table[6])
    # a key: cell (from cell0), position within the cell to q_bits, position in the tile
    p_bits = max(1, _bit_length(h * w - 1))
    q_bits = max(0, 62 - p_bits - _bit_length(words.size * 32))
    q_one = np.int64(1) << q_bits
    want_hist = hist.size > 0
    want_near = guessed.size > 0
    add_norms = q_sq.size > 0
    n_slow = n_near = n_unsure = n_keys = 0
    fast = 0
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
            b = row_bins[j]
            if b < 0:
                row_bins[j] = 4  # listed in out[2]
                continue
            if want_hist:
                hist[b] += 1
            mark = 2 if want_near and guessed[b] else 0
            # a held negative's cell, certain and within the grid: it goes into the keys with
            # its position within the cell to q_bits (the lookup is sorted); otherwise it is
            # listed (no branch on the held bins, which half the negatives would mispredict)
            scaled = row[j] * f  # outside the cells (a bin not held): half a cell inside
            scaled = clip_lo + 0.5 if scaled < clip_lo else scaled
            scaled = clip_hi - 0.5 if scaled >= clip_hi else scaled
            cell = np.floor(scaled)
            frac = scaled - cell
            held = qc != r_codes[j] and held_bins[b]
            certain = frac >= e and frac < 1 - e and b > 0 and b <= top
            keys[0, n_keys] = (((np.int64(cell) - cell0) << q_bits | np.int64(frac * q_one)) << p_bits) | (i * w + j)
            n_keys += 1 if held and certain else 0
            row_bins[j] = mark + (1 if held and not certain else 0)
        for j in range(start, w):  # the row's lists: each position stored, kept where marked
            mark = row_bins[j]
            out[0, n_slow] = i * w + j
            n_slow += mark & 1
            out[1, n_near] = i * w + j
            n_near += (mark >> 1) & 1
            out[2, n_unsure] = i * w + j
            n_unsure += mark >> 2
    # the keys by stretch of the table (a counting sort), then looked up in that order
    starts[:] = 0
    low_bits = q_bits + p_bits
    for k in range(n_keys):
        starts[keys[0, k] >> (low_bits + shift)] += 1
    total = 0
    for s in range(starts.size):
        total, starts[s] = total + starts[s], total
    for k in range(n_keys):
        key = keys[0, k]
        s = key >> (low_bits + shift)
        keys[1, starts[s]] = key
        starts[s] += 1
    e_key = e + 2.0**-40  # e, and the rounding of q / q_one - e (fractions of a cell below 1)
    for k in range(n_keys):
        key = keys[1, k]
        at = key >> low_bits
        bits, base = words[at >> 5], bases[at >> 5]
        place = at & 31
        cell = at + cell0
        b = (cell >> f_bits) + 1
        if base >= 0:
            before = base + _fields_sum(bits & ((np.int64(1) << (2 * place)) - 1))
            n = (bits >> (2 * place)) & 3
        else:  # a crowded word: its cells' counts in spill
            before = -1 - base + spill[bits + place]
            n = spill[bits + place + 1] - spill[bits + place]
        if n == 0:
            fast += before - below[b]
            continue
        if n <= scan:  # the pair lies in [q, q + 1) / q_one of the cell, widened by e_key
            q = (key >> p_bits) & (q_one - 1)
            low, high = q / q_one - e_key, (q + 1) / q_one + e_key
            count = 0
            while count < n and coords[before + count] * f - cell < low:
                count += 1
            if count == n or coords[before + count] * f - cell > high:  # no positive that near
                fast += before + count - below[b]
                continue
        out[0, n_slow] = key & ((np.int64(1) << p_bits) - 1)
        n_slow += 1
    return 2 * fast, n_slow, n_near, n_unsure


@numba.njit(cache=True, nogil=True, inline="always")
def _fields_sum(x):  # pragma: no cover - compiled
    """The sum of the 32 two-bit fields of ``x`` (int64), without a loop (SWAR)."""
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return (x * 0x0101010101010101) >> 56


@numba.njit(cache=True, nogil=True)
def _bit_length(x):  # pragma: no cover - compiled
    """Bits of a non-negative int64 (``int.bit_length``)."""
    n = 0
    while x > 0:
        x >>= 1
        n += 1
    return n
