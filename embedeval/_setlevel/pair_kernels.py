"""Compiled passes over a tile of pair distances (numba; imported only when
:func:`embedeval._core.compiled.enabled`): the per-tile work of the verification's main pass in two
loops instead of a dozen numpy passes, with the same floating-point operations in the same order,
so that every bin, count and kept pair equals the numpy path's (:mod:`.verification`).

* :func:`tile_bins`: each distance's grid coordinate (in place), its bin, and whether the bin is
  uncertain (the coordinate within the error margin of a bin edge: ``bins`` holds -1 there, to
  be recomputed exactly) - rows in parallel.
* :func:`tile_select`: the histogram of the tile's counted pairs, the AUROC counts of the
  negatives whose table cell is certain and holds no positive (``2 * before``, as
  :meth:`.pair_auroc.HeldPositives.count2`), the positions of the other negatives in held bins
  (compared one by one there) and of the pairs in guessed bins.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def tile_bins(dist, lo, scale, n_bins, margin, bins):  # pragma: no cover - compiled
    """Coordinates ``(dist - lo) * scale`` into ``dist`` and bins into ``bins`` (-1: uncertain);
    returns the number of uncertain pairs."""
    h = dist.shape[0]
    unsure = np.zeros(h, dtype=np.int64)
    for i in range(h):
        unsure[i] = _row_bins(dist[i], lo, scale, float(n_bins), margin, bins[i])
    return unsure.sum()


@numba.njit(cache=True, nogil=True)
def _row_bins(row, lo, scale, n_bins, margin, out):  # pragma: no cover - compiled
    n_unsure = 0
    for j in range(row.size):
        c = (row[j] - lo) * scale
        row[j] = c
        k = np.floor(c)
        frac = c - k
        if frac < margin or frac >= 1 - margin:
            out[j] = -1
            n_unsure += 1
        else:
            out[j] = int(min(max(k, -1.0), n_bins)) + 1
    return n_unsure


@numba.njit(cache=True, nogil=True)
def tile_select(
    bins, coords, q_codes, r_codes, upper, hist, held_bins, guessed, f, clip_lo, clip_hi, offset, before, count, e, out
):  # pragma: no cover - compiled
    """One pass over a tile's bins (see the module docstring).

    ``out`` (2, bins.size), int32, receives the flat positions of the held-bin negatives left to
    compare (row 0) and of the pairs in ``guessed`` bins (row 1; an empty ``guessed``: none
    collected); ``hist`` (empty: not wanted) is added to. Returns ``(fast, n_slow, n_near)``:
    the AUROC sum 2 * before of the negatives settled by the table, and the two counts.
    """
    h, w = bins.shape
    want_hist = hist.size > 0
    want_near = guessed.size > 0
    n_slow = n_near = 0
    fast = 0
    for i in range(h):
        qc = q_codes[i]
        for j in range(i + 1 if upper else 0, w):
            b = bins[i, j]
            if want_hist:
                hist[b] += 1
            if want_near and guessed[b]:
                out[1, n_near] = i * w + j
                n_near += 1
            if not held_bins[b] or qc == r_codes[j]:
                continue
            scaled = min(max(coords[i, j] * f, clip_lo), clip_hi)
            cell = np.floor(scaled)
            frac = scaled - cell
            if frac < e or frac >= 1 - e:
                index = offset[b] + (b - 1) * f
                certain = False
            else:
                index = int(cell) + offset[b]
                certain = True
            if certain and count[index] == 0:
                fast += before[index]
            else:
                out[0, n_slow] = i * w + j
                n_slow += 1
    return 2 * fast, n_slow, n_near
