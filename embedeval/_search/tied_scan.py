"""Exact tie groups of float embeddings: every reference counted against each graded one's float64 distance.

Under a tie-aware rule (``ties="expected"``, ``"optimistic"``, ``"pessimistic"``) a query's
ranking matters only through the tie groups that hold a positively graded reference: where
each one starts (the references strictly nearer) and what it holds (the references at exactly
that distance, by grade). Tied means exactly equal float64 distances computed by
:func:`~embedeval._search.float64.exact_distance` from the prepared float32 vectors: the formula
that orders near-tied candidates under the index rule, so that the index rule's order and these
groups agree.

For a block of queries the scan makes two passes over the references, in chunks of
``pairs // b`` references (memory O(b x chunk), never queries x references):

1. the graded references of each query (from ``grades``, ignored ones left out) and their exact
   distances; each query's distinct values, sorted, are its thresholds T;
2. float64 BLAS distances v to every other reference, with a rigorous bound E on
   |v - exact| (:func:`~embedeval._search.deep_exact.error_bounds`, doubled): a reference with
   v < T - E is strictly nearer than T, one with v > T + E strictly farther, and only those in
   [T - E, T + E] (exact ties and near-ties) are recomputed with the exact formula. Each chunk
   row is sorted once and the thresholds' windows found in it by binary search; only rows
   whose windows hold a reference are argsorted, to name those references.

The result is a :class:`~embedeval._search.hamming.Counts` whose columns alternate between a
*gap* (the references between two thresholds, none graded) and a *threshold* (every reference
at exactly that distance): the layout the Hamming path's tie-aware values read.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import budget as _budget
from .._core import compiled
from .._core.csr import offsets_within
from .deep_exact import error_bounds
from .float64 import max_norm, pair_distances
from .hamming import Counts


class TiedScanner:
    """Counts of the references around each graded reference's exact float64 distance (:class:`Counts`).

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
        Prepared (:func:`embedeval._inputs.arrays.prepare`) reference vectors.
    euclidean : bool
        Squared euclidean distance (True) or minus the inner product (cosine after normalisation).
    pairs : int
        (query, reference) pairs per chunk: bounds the working memory (about 32 bytes each).
    """

    exact = True

    def __init__(self, reference: np.ndarray, euclidean: bool, pairs: int = _budget.TIED_SCAN_PAIRS):
        self.reference = np.ascontiguousarray(reference, dtype=np.float32)
        self.euclidean, self.pairs, self.size = euclidean, pairs, self.reference.shape[0]
        self.wide = self.reference.astype(np.float64)
        self.norms = np.einsum("ij,ij->i", self.wide, self.wide)
        self.max_norm = max_norm(self.reference) if self.size else 0.0

    def _approximate(self, queries: np.ndarray, start: int, stop: int) -> np.ndarray:
        """float64 BLAS distances (b, stop - start), less ||q||^2 for the euclidean distance."""
        dist = queries @ self.wide[start:stop].T
        if self.euclidean:
            dist *= -2.0
            dist += self.norms[start:stop]
        else:
            np.negative(dist, out=dist)
        return dist

    def count(
        self,
        queries: np.ndarray,
        grades: Callable[[int, int], np.ndarray],
        ignored: Callable[[int, int], np.ndarray] | None,
        levels: np.ndarray,
        keep=None,
    ) -> Counts:
        """Scan every reference for the prepared queries (b, d), float32.

        ``grades``, ``ignored`` and ``levels`` are those of
        :meth:`~embedeval._search.hamming.HammingScanner.count`; ``keep`` must be None (this
        scan serves the tie-aware rules only).

        Returns
        -------
        Counts
            ``total`` and ``graded`` of shape (b, 2 g) and (b, 2 g, L), g the most distinct
            graded distances of a query: column 2j holds the references strictly between
            threshold j - 1 and threshold j, column 2j + 1 those at exactly threshold j.
        """
        if keep is not None:
            raise ValueError("a tied scan counts tie groups; the index rule's ranks are the searchers' work")
        b = queries.shape[0]
        step = max(1, self.pairs // max(b, 1))
        chunks = [(s, min(s + step, self.size)) for s in range(0, self.size, step)]
        rows, cols, level, excluded = self._graded(b, chunks, grades, ignored, levels)
        exact = pair_distances(queries, rows, cols, self.reference.__getitem__, self.euclidean)
        thresholds, n_thresholds, at = _thresholds(b, rows, exact, level, levels.size)
        nearer, equal = self._around(queries, chunks, excluded, thresholds, n_thresholds)
        graded_at = at.sum(axis=2)
        start = nearer + np.cumsum(graded_at, axis=1) - graded_at
        size = equal + graded_at
        valid = np.arange(thresholds.shape[1])[None, :] < n_thresholds[:, None]
        total = np.zeros((b, 2 * thresholds.shape[1]), dtype=np.int64)
        total[:, 1::2] = np.where(valid, size, 0)
        end = np.zeros_like(start)  # where the previous group ends
        end[:, 1:] = start[:, :-1] + size[:, :-1]
        total[:, 0::2] = np.where(valid, start - end, 0)
        graded = np.zeros((b, total.shape[1], levels.size), dtype=np.int64)
        graded[:, 1::2] = at
        return Counts(total, graded, levels)

    @staticmethod
    def _graded(b, chunks, grades, ignored, levels):
        """(row, column, level) of each positively graded, unignored pair; per chunk, the flat
        positions that the count of the others leaves out (graded or ignored)."""
        rows, cols, level, excluded = [], [], [], []
        for start, stop in chunks:
            g = grades(start, stop)
            positive = g if g.dtype == bool else g > 0
            out = positive
            if ignored is not None:
                left_out = ignored(start, stop)
                positive = positive & ~left_out
                out = positive | left_out
            r, c = np.nonzero(positive)
            rows.append(r)
            cols.append(c + start)
            level.append(np.zeros(r.size, dtype=np.int64) if g.dtype == bool else np.searchsorted(levels, g[r, c]))
            excluded.append(np.flatnonzero(out))
        if not chunks:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, []
        return np.concatenate(rows), np.concatenate(cols), np.concatenate(level), excluded

    def _around(self, queries, chunks, excluded, thresholds, n_thresholds):
        """(nearer, equal), each of shape (b, g): the other references strictly nearer than each
        threshold and exactly at it."""
        b, g = thresholds.shape
        nearer, equal = np.zeros((b, g), dtype=np.int64), np.zeros((b, g), dtype=np.int64)
        if g == 0:
            return nearer, equal
        wide = queries.astype(np.float64)
        q_norms = np.sqrt(np.einsum("ij,ij->i", wide, wide))
        # Doubled: the bound covers v's error and the exact formula's own; the slack covers the
        # rounding of ||q||^2 and of the shifted thresholds.
        bound = 2.0 * error_bounds(q_norms, self.max_norm, queries.shape[1], self.euclidean)[1]
        shifted = thresholds - (q_norms**2)[:, None] if self.euclidean else thresholds
        low, high = shifted - bound[:, None], shifted + bound[:, None]
        busy = np.flatnonzero(n_thresholds)
        for (start, stop), out in zip(chunks, excluded, strict=True):
            dist = self._approximate(wide, start, stop)
            dist.reshape(-1)[out] = np.inf  # graded and ignored: counted elsewhere or not at all
            below, pr, pj, members = _windows(dist, low, high, n_thresholds, busy)
            nearer += below
            if pr.size:  # the references within a threshold's window: decided by the exact formula
                members = members + start
                exact = pair_distances(queries, pr, members, self.reference.__getitem__, self.euclidean)
                at = thresholds[pr, pj]
                key = pr * g + pj
                nearer += np.bincount(key, weights=exact < at, minlength=b * g).astype(np.int64).reshape(b, g)
                equal += np.bincount(key, weights=exact == at, minlength=b * g).astype(np.int64).reshape(b, g)
        return nearer, equal


def _windows(dist, low, high, n_thresholds, busy):
    """Per chunk: (below, rows, thresholds, columns): the references strictly below each
    threshold's window [low, high] (b, g), and the (row, threshold, column) of each one inside a
    window. Compiled kernel where enabled, else a sort and binary searches (the reference)."""
    if compiled.enabled():
        from . import tied_kernels

        capacity = 4 * dist.shape[0]
        while True:
            below, rows, ks, cols, n = tied_kernels.window_pass(dist, low, high, n_thresholds, capacity)
            if n <= capacity:
                return below, rows[:n], ks[:n], cols[:n]
            capacity = n
    b, g = low.shape
    ranked = np.sort(dist, axis=1)
    lo, hi = np.zeros((b, g), dtype=np.int64), np.zeros((b, g), dtype=np.int64)
    for i in busy:
        n = n_thresholds[i]
        lo[i, :n] = np.searchsorted(ranked[i], low[i, :n], "left")
        hi[i, :n] = np.searchsorted(ranked[i], high[i, :n], "right")
    r, j = np.nonzero(hi > lo)
    if not r.size:
        empty = np.zeros(0, dtype=np.int64)
        return lo, empty, empty, empty
    # Only rows holding one are argsorted (a sort gives the counts, not the members).
    tied_rows, slot = np.unique(r, return_inverse=True)
    order = np.argsort(dist[tied_rows], axis=1)
    width = hi[r, j] - lo[r, j]
    members = order[np.repeat(slot, width), np.repeat(lo[r, j], width) + offsets_within(width)]
    return lo, np.repeat(r, width), np.repeat(j, width), members


def _thresholds(b: int, rows, exact, level, n_levels: int):
    """Each query's distinct graded distances, increasing, and the graded references at each.

    Returns
    -------
    thresholds : numpy.ndarray of shape (b, g), float64
        +inf after a query's last one.
    n_thresholds : numpy.ndarray of shape (b,), int64
    at : numpy.ndarray of shape (b, g, n_levels), int64
        Graded references at each threshold, by level.
    """
    order = np.lexsort((exact, rows))
    rows, exact, level = rows[order], exact[order], level[order]
    head = np.ones(rows.size, dtype=bool)
    head[1:] = (rows[1:] != rows[:-1]) | (exact[1:] != exact[:-1])
    n_thresholds = np.bincount(rows[head], minlength=b).astype(np.int64)
    g = int(n_thresholds.max(initial=0))
    unique = np.cumsum(head) - 1  # each item's threshold, numbered across the block
    first = np.cumsum(n_thresholds) - n_thresholds  # each row's first threshold number
    column = unique - first[rows]
    thresholds = np.full((b, g), np.inf)
    thresholds[rows[head], column[head]] = exact[head]
    at = np.bincount((rows * g + column) * n_levels + level, minlength=b * g * n_levels).reshape(b, g, n_levels)
    return thresholds, n_thresholds, at.astype(np.int64)
