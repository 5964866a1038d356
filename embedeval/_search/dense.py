"""Deep searches: candidates from float64 BLAS distances, and the depth at which they take over.

Ranked deeper than an eighth of the references (a class holding much of the data), faiss's
float32 candidates lie so close together that most would fall within their error bound and be
recomputed one pair at a time; float64 distances to every reference, by BLAS, have a 2**29
times smaller bound and leave almost nothing to recompute.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import _budget
from .._inputs import prepare
from .candidates import FLOAT64_UNIT_ROUNDOFF, Candidates
from .float64 import max_norm
from .ranking import ExactSearcher


class Float64Distances:
    """Candidates from float64 BLAS distances to every reference.

    Memory: a float64 copy of the references and one (rows x references) float64 block, with
    rows chosen to keep that block near ``_budget.DENSE_ELEMENTS`` elements (32 MB).

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d)
        Prepared reference vectors.
    euclidean : bool
    """

    def __init__(self, reference: np.ndarray, euclidean: bool):
        self.euclidean = euclidean
        self.reference = reference.astype(np.float64)
        self.norms = np.einsum("ij,ij->i", self.reference, self.reference)
        self.size = reference.shape[0]

    def candidates(self, queries: np.ndarray, n: int) -> Candidates:
        """The ``n`` nearest references of each query (b, d) by float64 distance, every row full."""
        rows = max(1, _budget.DENSE_ELEMENTS // self.size)
        parts = [self._rows(queries[s : s + rows], n) for s in range(0, len(queries), rows)]
        return Candidates(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in ("dist", "idx", "length", "worst")),
            unit_roundoff=FLOAT64_UNIT_ROUNDOFF,
        )

    def _rows(self, queries: np.ndarray, n: int) -> Candidates:
        q = queries.astype(np.float64)
        dist = -2.0 * (q @ self.reference.T)  # ||q||^2 is the same for a whole row: added after
        if self.euclidean:
            dist += self.norms
        else:
            dist *= 0.5
        if n < self.size:
            part = np.argpartition(dist, n, axis=1)
            idx = part[:, :n]
            # the (n+1)-th smallest: every reference left out is at least as far
            worst = np.take_along_axis(dist, part[:, n : n + 1], 1)[:, 0]
            cand = np.take_along_axis(dist, idx, 1)
        else:
            idx = np.broadcast_to(np.arange(self.size), dist.shape)
            cand, worst = dist, np.full(len(dist), np.inf)
        order = np.argsort(cand, axis=1)  # ties in any order: the ranking sorts runs by (distance, index)
        idx, cand = np.take_along_axis(idx, order, 1), np.take_along_axis(cand, order, 1)
        if self.euclidean:
            q_norms = np.einsum("ij,ij->i", q, q)
            cand = cand + q_norms[:, None]
            worst = worst + q_norms
        return Candidates(cand, idx, np.full(len(idx), idx.shape[1]), worst)


class InMemorySearcher(ExactSearcher):
    """An exact searcher over prepared reference vectors held in memory.

    Float64 rows for recomputation come from them, and so do the float64 distances of deep
    searches: a search for more than an eighth of the references is served by
    :class:`Float64Distances` (made once, by whichever thread needs it first), a shallower one
    by the subclass's :meth:`_shallow` (faiss).

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
    distance : {"euclidean", "cosine", "inner_product"}
        Cosine normalises the references (:func:`embedeval._inputs.prepare`) and ranks by
        inner product.
    """

    def __init__(self, reference: np.ndarray, distance: str):
        self.euclidean = distance == "euclidean"
        self._reference = prepare(reference, distance)
        self.size = self._reference.shape[0]
        self.max_norm = max_norm(self._reference)
        self._dense, self._dense_lock = None, threading.Lock()

    def _shallow(self, queries: np.ndarray, n: int) -> Candidates:  # pragma: no cover - abstract
        """At least the ``n`` best candidates of each query, for ``n`` up to an eighth of ``size``."""
        raise NotImplementedError

    def _gather(self, queries, n):
        if 8 * n > self.size:
            with self._dense_lock:
                if self._dense is None:
                    self._dense = Float64Distances(self._reference, self.euclidean)
            return self._dense.candidates(queries, n)
        return self._shallow(queries, n)

    def _reference_rows(self, idx):
        return self._reference[idx]
