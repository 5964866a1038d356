"""Exact search over references with many exact duplicates: rank the distinct rows, then expand.

A reference set that holds the same vector many times (a model that has collapsed maps most
inputs to one point) is the worst case for a search by candidates: every copy is at the same
distance from a query, so the candidates never show a gap after the k-th one, each search is
repeated with twice as many candidates until it holds every reference, and each run of near-ties
is recomputed in float64 pair by pair: quadratic in the number of copies.

Copies that are equal bit for bit have the same float64 distance to any query (the distance is
computed the same way from the same bits), so they are ordered by index among themselves and
need to be searched only once. :class:`DuplicateRows` ranks the distinct rows exactly, takes
the distinct rows of each query, nearest first, until their copies hold the ``k`` (plus ignored)
references asked for, and extends that set to every distinct row at the same float64 distance
as the last one taken, so that copies of different rows at equal distance are merged by index.
The ``k`` nearest references are then the first ``k`` of the taken copies sorted by (float64
distance, index): exactly the order of a full stable sort.
"""

from __future__ import annotations

import numpy as np

from .._core import budget as _budget
from .float64 import pair_distances
from .ignored import as_ignored, drop_ignored


def distinct_rows(reference: np.ndarray):
    """``(first, inverse, counts)`` of the bitwise-distinct rows of ``reference`` (n, d), or None
    when more than :data:`embedeval._core.budget.DISTINCT_SHARE` of the rows are distinct.

    A cheap row hash decides first, so that data without many duplicates pays one pass: a
    weighted sum of each row's 32-bit words modulo 2**64, equal for rows equal bit for bit
    (rows that share a hash are told apart exactly after it), computed ``budget.HASH_BLOCK`` words at a
    time (the whole array in uint64 at once costs gigabytes: bench/NOTES.md, stop 52 figures).
    """
    n = reference.shape[0]
    if n < 2:
        return None
    hashes = _row_hashes(reference)
    if np.unique(hashes).size > _budget.DISTINCT_SHARE * n:
        return None
    rows = np.ascontiguousarray(reference).view(np.dtype((np.void, reference.dtype.itemsize * reference.shape[1])))
    _, first, inverse, counts = np.unique(rows.ravel(), return_index=True, return_inverse=True, return_counts=True)
    if first.size > _budget.DISTINCT_SHARE * n:
        return None
    return first, inverse.ravel(), counts


def _row_hashes(reference: np.ndarray) -> np.ndarray:
    """(n,) uint64: the weighted sum modulo 2**64 of each row's 32-bit words (odd weights)."""
    words = np.ascontiguousarray(reference).view(np.uint32)
    weights = np.random.default_rng(0).integers(1, 2**61, size=words.shape[1], dtype=np.uint64) | np.uint64(1)
    hashes = np.empty(words.shape[0], dtype=np.uint64)
    step = max(1, _budget.HASH_BLOCK // max(words.shape[1], 1))
    with np.errstate(over="ignore"):
        for start in range(0, words.shape[0], step):
            hashes[start : start + step] = (words[start : start + step].astype(np.uint64) * weights).sum(axis=1)
    return hashes


class DuplicateRows:
    """Exact k-nearest-neighbour search through the distinct rows of the references.

    Parameters
    ----------
    distinct : ExactSearcher
        An exact searcher over the distinct rows (row g of it is reference ``first[g]``).
    reference : numpy.ndarray of shape (n, d)
        The prepared references (float64 distances are computed from their rows).
    inverse : numpy.ndarray of shape (n,), int
        The distinct row of each reference.
    counts : numpy.ndarray of shape (n_distinct,), int
        Copies of each distinct row.
    euclidean : bool
    """

    def __init__(self, distinct, reference, inverse, counts, euclidean):
        self._distinct, self._reference, self._euclidean = distinct, reference, euclidean
        self._members = np.argsort(inverse, kind="stable")  # each distinct row's copies, by index
        self._starts = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
        self._counts = counts.astype(np.int64)
        self._first = self._members[self._starts]

    def search(self, queries: np.ndarray, k: int, ignore=None) -> np.ndarray:
        """As :meth:`~embedeval._search.ranking.ExactSearcher.search` (every reference's exact place)."""
        ignore = as_ignored(ignore)
        b, n = queries.shape[0], self._members.size
        ignored = np.zeros(b, dtype=np.int64) if ignore is None else ignore.counts
        need = np.minimum(k + ignored, n)
        width = int(need.max(initial=1))
        out = np.full((b, width), -1, dtype=np.int64)
        pending = np.arange(b)
        n_distinct = self._counts.size
        depth = min(n_distinct, 1 + int(np.ceil(2 * width * n_distinct / n)))
        while pending.size:
            done = self._take(queries[pending], need[pending], depth, out, pending)
            pending = pending[~done]
            depth = min(n_distinct, 2 * depth)
        return drop_ignored(out, k, np.arange(b), ignore)

    def _take(self, queries, need, depth, out, rows):
        """Rank ``rows`` from their ``depth`` nearest distinct rows where those are enough; which were."""
        b = queries.shape[0]
        top = self._distinct.search(queries, depth)  # (b, depth), exact order of distinct rows
        pairs = (np.repeat(np.arange(b), depth), self._first[top.ravel()])
        exact = pair_distances(queries, *pairs, self._reference.__getitem__, self._euclidean).reshape(b, depth)
        cum = np.cumsum(self._counts[top], axis=1)
        enough = cum[:, -1] >= need
        # The distinct row holding each query's need-th copy, and the last one at its distance.
        at = np.minimum(np.argmax(cum >= need[:, None], axis=1), depth - 1)
        level = exact[np.arange(b), at]
        last = depth - 1 - np.argmax((exact <= level[:, None])[:, ::-1], axis=1)
        done = (enough & (last < depth - 1)) | (depth == self._counts.size)
        for i in np.flatnonzero(done):
            out[rows[i], : need[i]] = self._expand(top[i, : last[i] + 1], exact[i, : last[i] + 1], need[i])
        return done

    def _expand(self, groups, exact, need):
        """The first ``need`` copies of ``groups`` (distinct rows at float64 distances ``exact``),
        sorted by (distance, index)."""
        take = np.minimum(self._counts[groups], need)
        offsets = np.repeat(self._starts[groups] - np.concatenate([[0], np.cumsum(take)[:-1]]), take)
        members = self._members[offsets + np.arange(int(take.sum()))]
        order = np.lexsort((members, np.repeat(exact, take)))
        return members[order[:need]]
