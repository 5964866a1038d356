"""Exact Hamming search, reduced to what the metrics read: counts of references per distance.

A binary code's distances are integers 0..d, so a ranking by Hamming distance is a sequence of
at most d + 1 tie groups, each holding every reference at one distance. faiss's binary flat
index keeps an arbitrary subset of the references tied at its k-th distance, and tie groups
here hold hundreds or thousands of references, so its top k is not used. Instead every
(query, reference) distance is computed (``faiss.hammings``, the brute force that the flat
index runs too) in chunks of references, and each query keeps

* ``total[q, t]``: the references at distance t (ignored ones left out);
* ``graded[q, t, l]``: those among them that are relevant at grade ``levels[l]``;
* under the index rule only, ``items``: each positively graded reference's distance and
  *place*, the references at its distance with a lower index (ignored ones left out), so that
  its rank is ``references nearer + place + 1`` (ties by lower index).

These are exactly the tie groups of :class:`~embedeval._metrics.ties.TiedHits` (for the expected and
the optimistic/pessimistic values) and the ranks of :class:`~embedeval._metrics.kernels.Hits` (for the
index rule), in memory O(queries x d) plus the items kept, never queries x references. The
place of an item is found by a stable counting sort of its chunk row (numpy's radix sort of
8- or 16-bit distances), so ties go to the lower index whatever the chunking.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import faiss
import numpy as np

from .._core import budget as _budget
from .sharded import shard_bounds


@dataclass(frozen=True)
class Counts:
    """What a scan of every reference leaves per query (see the module docstring).

    Attributes
    ----------
    total : numpy.ndarray of shape (b, d + 1), int64
        References at each distance 0..d, ignored ones left out.
    graded : numpy.ndarray of shape (b, d + 1, L), int64
        Positively graded references at each distance, by grade level.
    levels : numpy.ndarray of shape (L,), float64
        The grade of each level (binary relevance: one level, 1.0), increasing.
    items : tuple of numpy.ndarray of shape (h,), or None
        (row, distance, place, level) of the positively graded references kept (index rule).
    """

    total: np.ndarray
    graded: np.ndarray
    levels: np.ndarray
    items: tuple | None = None

    @functools.cached_property
    def before(self) -> np.ndarray:
        """Shape (b, d + 1): the references nearer than each distance (a tie group's start),
        computed once."""
        return np.cumsum(self.total, axis=1) - self.total


class HammingScanner:
    """Every reference's Hamming distance to a block of queries, counted (:class:`Counts`).

    Parameters
    ----------
    references : numpy.ndarray of shape (n_references, n_bytes), uint8
        Packed codes (:mod:`embedeval._inputs.codes`).
    n_bits : int
    pairs : int
        (query, reference) pairs per chunk: bounds the working memory (about 40 bytes each).
    """

    def __init__(self, references: np.ndarray, n_bits: int, pairs: int = _budget.HAMMING_PAIRS):
        self.codes = np.ascontiguousarray(references, dtype=np.uint8)
        self.size, self.n_bits, self.pairs = self.codes.shape[0], int(n_bits), pairs
        # distances fit in 8 bits (16 for long codes) with one value to spare for "ignored":
        # numpy's stable sort of such integers is a radix sort
        self._small = np.uint8 if self.n_bits + 1 <= np.iinfo(np.uint8).max else np.uint16

    def distances(self, queries: np.ndarray, start: int, stop: int) -> np.ndarray:
        """int32 of shape (b, stop - start): Hamming distances to references start..stop-1."""
        q = np.ascontiguousarray(queries, dtype=np.uint8)
        out = np.empty((q.shape[0], stop - start), dtype=np.int32)
        refs = self.codes[start:stop]
        faiss.hammings(
            faiss.swig_ptr(q), faiss.swig_ptr(refs), q.shape[0], stop - start, q.shape[1], faiss.swig_ptr(out)
        )
        return out

    def count(
        self,
        queries: np.ndarray,
        grades: Callable[[int, int], np.ndarray],
        ignored: Callable[[int, int], np.ndarray] | None,
        levels: np.ndarray,
        keep: tuple[np.ndarray, int] | None = None,
        pairs=None,
    ) -> Counts:
        """Scan every reference for the queries (b, n_bytes).

        Parameters
        ----------
        grades : callable
            ``grades(start, stop)`` -> array of shape (b, stop - start): each pair's relevance,
            bool or grades (0 for not relevant).
        ignored : callable or None
            ``ignored(start, stop)`` -> bool array of shape (b, stop - start): pairs to leave out.
        levels : numpy.ndarray of shape (L,)
            Every positive grade that ``grades`` can give, increasing (``[1.0]`` for bool).
        keep : (need, radius) or None
            Index rule: keep the items (place included) that rank within ``need[i]`` (an int
            array of shape (b,)) or lie within Hamming distance ``radius``; None keeps none.
        pairs : callable or None
            Unread: the scan of codes reads ``grades`` (the tied scan's ``count`` takes the same
            arguments and reads this one where relevance is binary).
        """
        b, width = queries.shape[0], self.n_bits + 2  # distances 0..d, then "ignored"
        total = np.zeros((b, width), dtype=np.int64)
        graded = np.zeros((b, width, levels.size), dtype=np.int64)
        offsets = (np.arange(b, dtype=np.int64) * width)[:, None]
        bound = np.full(b, self.n_bits, dtype=np.int64)  # index rule: no item beyond it can matter
        parts = []
        for start, stop in chunks(self.size, self.pairs, b):
            dist = self.distances(queries, start, stop)
            if ignored is not None:
                dist[ignored(start, stop)] = self.n_bits + 1
            chunk = np.bincount((dist + offsets).ravel(), minlength=b * width).reshape(b, width)
            g = grades(start, stop)
            rows, cols = np.nonzero(positive(g))
            level = level_of(g, rows, cols, levels)
            d_at = dist[rows, cols].astype(np.int64)
            graded += np.bincount(
                ((rows * width + d_at) * levels.size + level), minlength=b * width * levels.size
            ).reshape(b, width, levels.size)
            if keep is not None:
                parts.append(self._places(dist, rows, cols, d_at, level, chunk, total, bound))
                total += chunk
                bound = _bound(total[:, :-1], keep)
            else:
                total += chunk
        items = None
        if keep is not None:
            if parts:
                row, d_at, place, level = (np.concatenate(c) for c in zip(*parts, strict=True))
            else:
                row = d_at = place = level = np.zeros(0, dtype=np.int64)
            inside = d_at <= bound[row]  # the final bound: drop what the earlier chunks could not yet rule out
            items = (row[inside], d_at[inside], place[inside], level[inside])
        return Counts(total[:, :-1], graded[:, :-1], levels, items)

    def _places(self, dist, rows, cols, d_at, level, chunk, seen, bound):
        """(row, distance, place, level) of the positively graded pairs within ``bound``."""
        wanted = d_at <= bound[rows]
        rows, cols, d_at, level = rows[wanted], cols[wanted], d_at[wanted], level[wanted]
        if rows.size == 0:
            return rows, d_at, d_at, level
        # A stable sort of a row's distances puts each distance's references in index order:
        # the place of column c is its position in that order minus where its distance starts.
        # Only rows holding a wanted item are sorted. (Reading marks in sorted order instead
        # of inverting the permutation measured slower: a gather and a second nonzero.)
        busy = np.flatnonzero(np.bincount(rows, minlength=dist.shape[0]))
        order = np.argsort(dist[busy].astype(self._small), axis=1, kind="stable")
        position = np.empty_like(order)
        np.put_along_axis(position, order, np.arange(order.shape[1])[None, :], axis=1)
        first = np.cumsum(chunk, axis=1) - chunk  # where each distance starts in a sorted chunk row
        place = seen[rows, d_at] + position[np.searchsorted(busy, rows), cols] - first[rows, d_at]
        return rows, d_at, place, level


def chunks(size: int, pairs: int, b: int) -> list[tuple[int, int]]:
    """(start, stop) of the chunks of ``size`` references that a block of ``b`` queries scans with
    at most ``pairs`` (query, reference) pairs each (one reference at least)."""
    return shard_bounds(size, max(1, pairs // max(b, 1)))


def positive(g: np.ndarray) -> np.ndarray:
    """Which pairs of ``grades(start, stop)`` (bool, or grades with 0 for not relevant) are graded."""
    return g if g.dtype == bool else g > 0


def level_of(g: np.ndarray, rows: np.ndarray, cols: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """(m,) int64: the index in ``levels`` of the grade of each positively graded pair (rows, cols) of ``g``."""
    return np.zeros(rows.size, dtype=np.int64) if g.dtype == bool else np.searchsorted(levels, g[rows, cols])


def _bound(total: np.ndarray, keep) -> np.ndarray:
    """Per query, the largest distance an item may have and still matter: the distance at which
    the references seen so far first reach ``need`` (the ``need`` nearest are no farther), or
    ``radius`` if larger."""
    need, radius = keep
    reached = np.cumsum(total, axis=1) >= np.asarray(need)[:, None]
    first = np.where(reached.any(axis=1), np.argmax(reached, axis=1), total.shape[1] - 1)
    return np.maximum(first, radius)
