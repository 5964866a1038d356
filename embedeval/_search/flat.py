"""The in-memory flat searcher: one faiss flat index over all the references."""

from __future__ import annotations

import numpy as np

from .candidates import flat_index, from_index
from .memory import InMemorySearcher


class FlatSearcher(InMemorySearcher):
    """A flat (brute-force) faiss index over reference vectors in memory, searched exactly.

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
    distance : {"euclidean", "cosine", "inner_product"}
        Cosine normalises the references (:func:`embedeval._inputs.arrays.prepare`) and ranks by
        inner product.
    """

    def __init__(self, reference: np.ndarray, distance: str):
        super().__init__(reference, distance)
        self._index = flat_index(self._reference, self.euclidean)

    def _gather(self, queries, n):
        return from_index(self._index, queries, n, self.euclidean)
