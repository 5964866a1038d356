"""Searchers whose references are held in memory: faiss for shallow rankings, the deep ranking for deep ones.

An in-memory searcher answers :meth:`~embedeval._search.ranking.ExactSearcher.search` with faiss
candidates (its subclass's :meth:`InMemorySearcher._gather`), and offers the deep ranking
(:class:`~embedeval._search.deep.DeepRanker`) over the same prepared references, made once, on
first use, by whichever thread asks first (:class:`DeepRankers`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np

from .._inputs.arrays import prepare
from .deep import DeepRanker
from .float64 import max_norm
from .ranking import ExactSearcher


class DeepRankers:
    """The deep ranking of one set of references, made on first use for the class codes it is asked for.

    An evaluation asks with one set of codes (or None) throughout; another set replaces the
    ranker (it keeps the references sorted by class).

    Parameters
    ----------
    reference : callable
        Returns the prepared float32 references, shape (n_references, d) (called once per ranker).
    euclidean : bool
    """

    def __init__(self, reference: Callable[[], np.ndarray], euclidean: bool):
        self._reference, self._euclidean = reference, euclidean
        self._made: tuple | None = None  # (class codes, ranker)
        self._lock = threading.Lock()

    def get(self, class_codes: np.ndarray | None) -> DeepRanker:
        with self._lock:
            if self._made is None or self._made[0] is not class_codes:
                self._made = (class_codes, DeepRanker(self._reference(), self._euclidean, class_codes))
            return self._made[1]


class InMemorySearcher(ExactSearcher):
    """An exact searcher over prepared reference vectors held in memory.

    Float64 rows for recomputation come from them, and so does the deep ranking
    (:meth:`deep_ranker`).

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
    distance : {"euclidean", "cosine", "inner_product"}
        Cosine normalises the references (:func:`embedeval._inputs.arrays.prepare`) and ranks by
        inner product.
    """

    ranks_deep = True

    def __init__(self, reference: np.ndarray, distance: str):
        self.euclidean = distance == "euclidean"
        self._reference = prepare(reference, distance)
        self.size = self._reference.shape[0]
        self.max_norm = max_norm(self._reference)
        self._rankers = DeepRankers(lambda: self._reference, self.euclidean)
