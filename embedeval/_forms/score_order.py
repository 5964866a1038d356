"""trec_eval's order of scored documents, on flat arrays: score descending, ties by id descending.

A run holds per query a segment of a flat score array (``offsets``). Runs written by a
retrieval system are almost always already in score order, so the order is checked in one
vectorised pass and only the segments that need it are sorted. A judged document's rank is then
1 + the number of documents of its query that score higher, found by binary search; only where
another document has the very same score does the id decide (trec_eval compares ids as strings,
descending), and only those queries need the ids themselves.
"""

from __future__ import annotations

import numpy as np


def flagged_segments(pairs: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Boolean array of shape (n,): segments holding a flagged pair of neighbours; ``pairs[i]``
    flags entries i and i + 1 (a pair across a segment boundary belongs to no segment)."""
    out = np.zeros(offsets.size - 1, dtype=bool)
    second = np.flatnonzero(pairs) + 1
    if second.size:
        segment = np.searchsorted(offsets, second, side="right") - 1
        out[segment[second > offsets[segment]]] = True
    return out


def unsorted_segments(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Boolean array of shape (n,): segments whose scores are not non-increasing."""
    return flagged_segments(scores[1:] > scores[:-1], offsets)


def sort_segments(offsets: np.ndarray, which: np.ndarray, keys: tuple[np.ndarray, ...]) -> np.ndarray:
    """A permutation of the entries that sorts the segments ``which`` by ``keys`` (as for
    :func:`numpy.lexsort`: the last key is the primary one) and leaves the others in place."""
    perm = np.arange(offsets[-1], dtype=np.int64)
    if not which.any():
        return perm
    segment = np.repeat(np.arange(offsets.size - 1), np.diff(offsets))
    entries = np.flatnonzero(which[segment])
    order = np.lexsort((*tuple(k[entries] for k in keys), segment[entries]))
    perm[entries] = entries[order]
    return perm


def _first_not(scores, start, stop, values, ahead) -> np.ndarray:
    """Per value, the first position in [start, stop) where ``ahead(score, value)`` fails (the
    segment is sorted so that it holds and then fails); binary search, all values at once."""
    lo, hi = start.copy(), stop.copy()
    last = max(scores.size - 1, 0)
    longest = int((stop - start).max(initial=0))
    for _ in range(longest.bit_length()):
        active = lo < hi
        mid = (lo + hi) >> 1
        go = ahead(scores[np.minimum(mid, last)], values)
        lo = np.where(active & go, mid + 1, lo)
        hi = np.where(active & ~go, mid, hi)
    return lo


def count_above(
    scores: np.ndarray, offsets: np.ndarray, rows: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each ``values[i]``, a score present in segment ``rows[i]``: how many entries of the
    segment score more, and whether another entry scores the same. Each segment of ``scores``
    must be sorted in decreasing order."""
    start, stop = offsets[rows], offsets[rows + 1]
    lo = _first_not(scores, start, stop, values, np.greater)  # the first entry scoring <= value
    # equal scores are adjacent and the first of them is at lo: a tie iff the next one is equal too
    after = lo + 1
    tied = (after < stop) & (scores[np.minimum(after, max(scores.size - 1, 0))] == values)
    return lo - start, tied


def tie_groups(
    scores: np.ndarray, offsets: np.ndarray, rows: np.ndarray, values: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each ``values[i]``, a score present in segment ``rows[i]``: (entries of the segment
    that score more, entries that score exactly the same, itself included), i.e. the start and
    size of its tie group. Each segment of ``scores`` must be sorted in decreasing order."""
    start, stop = offsets[rows], offsets[rows + 1]
    above = _first_not(scores, start, stop, values, np.greater)
    at_least = _first_not(scores, above, stop, values, np.greater_equal)
    return above - start, at_least - above
