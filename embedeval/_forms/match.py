"""Finding judged ids in rankings, vectorised: every ranked input form meets here as integer ids.

A ranking is a row of int64 ids in rank order, -1 where it has ended (rows of different lengths
are padded). Python ids are hashed first (:mod:`embedeval._forms.mappings`), file ids coded
(:mod:`embedeval._forms.trec.evaluate`). Work is done in blocks of rows of at most
:data:`BLOCK_ENTRIES` entries, so memory stays bounded whatever the input.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from .._core import budget as _budget

# int64 ids per block: 8 MB, about 25 MB with a block's sorted copy and comparisons (larger
# blocks are no faster).
BLOCK_ENTRIES = _budget.RANKING_ELEMENTS // 16
# Up to this many judged ids per query, each is compared with its whole row (a pass per judged
# column, fast for the usual handful); beyond it, rows are sorted once and searched.
_PASSES = 8


class Collision(Exception):
    """Two different ids met under one hash: the exact path (Python objects, or the TREC line
    reader's exact codes) decides."""


def offsets_of(counts: np.ndarray) -> np.ndarray:
    """Segment offsets, array of shape (n + 1,), from per-segment counts."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def row_blocks(matrix: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, rows)`` views of a 2-D array, each of at most the budget's entries."""
    step = max(1, BLOCK_ENTRIES // max(matrix.shape[1], 1))
    for start in range(0, matrix.shape[0], step):
        yield start, matrix[start : start + step]


def padded_blocks(values: np.ndarray, offsets: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """``(first row, rows)`` blocks of the segments of ``values``, each block an int64 array of
    shape (rows, longest row of the block) padded with -1; a view when every row has one length."""
    counts = np.diff(offsets)
    n = counts.size
    if n and (counts == counts[0]).all() and counts[0] > 0:
        yield from row_blocks(values[offsets[0] : offsets[-1]].reshape(n, int(counts[0])))
        return
    start = 0
    while start < n:
        stop, width = start, 1
        while stop < n and (stop - start + 1) * max(width, int(counts[stop])) <= BLOCK_ENTRIES:
            width = max(width, int(counts[stop]))
            stop += 1
        stop = max(stop, start + 1)  # a single row longer than the budget is still one block
        width = max(width, int(counts[start:stop].max()))
        block = np.full((stop - start, width), -1, dtype=np.int64)
        seg = np.arange(offsets[start], offsets[stop])
        rows = np.repeat(np.arange(stop - start), counts[start:stop])
        block[rows, seg - offsets[start:stop][rows]] = values[seg]
        yield start, block
        start = stop


def find(block: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """0-based position of each judged ``ids[i]`` in row ``rows[i]`` of ``block``, -1 if absent.

    ``rows`` must be sorted; ids are distinct within a row of ``block`` and ids < 0 are never
    found. Returns an int64 array of the shape of ``ids``.
    """
    if rows.size == 0:
        return np.full(0, -1, dtype=np.int64)
    counts = np.bincount(rows, minlength=block.shape[0])
    if counts.max() <= _PASSES:
        return _find_by_passes(block, rows, ids, counts)
    return _find_by_search(block, rows, ids)


def _find_by_passes(block, rows, ids, counts) -> np.ndarray:
    n, _width = block.shape
    column = np.arange(rows.size) - offsets_of(counts)[rows]  # each judged id's slot in its row
    wanted = np.full((n, int(counts.max())), -1, dtype=np.int64)
    wanted[rows, column] = ids
    where = np.full(wanted.shape, -1, dtype=np.int64)
    for j in range(wanted.shape[1]):
        eq = block == wanted[:, j : j + 1]
        pos = eq.argmax(axis=1)
        found = eq[np.arange(n), pos] & (wanted[:, j] >= 0)
        where[:, j] = np.where(found, pos, -1)
    return where[rows, column]


def _find_by_search(block, rows, ids) -> np.ndarray:
    width = block.shape[1]
    order = np.argsort(block, axis=1)
    flat = np.take_along_axis(block, order, 1).ravel()
    lo, hi = rows * width, (rows + 1) * width
    while True:  # binary search within each judged id's row, all at once
        active = lo < hi
        if not active.any():
            break
        mid = (lo + hi) >> 1
        below = flat[np.minimum(mid, flat.size - 1)] < ids
        lo = np.where(active & below, mid + 1, lo)
        hi = np.where(active & ~below, mid, hi)
    inside = lo < (rows + 1) * width
    at = np.minimum(lo, flat.size - 1)
    found = inside & (flat[at] == ids) & (ids >= 0)
    return np.where(found, order.ravel()[at], -1)


def first_duplicate(block: np.ndarray) -> tuple[int, int] | None:
    """(row, id) of the first row of ``block`` holding an id twice, or None."""
    srt = np.sort(block, axis=1)
    dup = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] >= 0)
    if not dup.any():
        return None
    row = int(np.flatnonzero(dup.any(axis=1))[0])
    return row, int(srt[row, 1:][dup[row]][0])


def gap_row(block: np.ndarray) -> int | None:
    """The first row with an id after a -1 (padding inside a ranking), or None."""
    filled = block >= 0
    gap = (filled[:, 1:] & ~filled[:, :-1]).any(axis=1)
    return int(np.flatnonzero(gap)[0]) if gap.any() else None
