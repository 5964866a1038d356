"""Each query's top k as an evaluation saw it, kept on the result for the explorer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, repr=False)
class KeptNeighbors:
    """Each query's first ``k`` ranked references, with their relevance to it.

    Attributes
    ----------
    indices : numpy.ndarray of shape (n_queries, k), int64
        Reference rows, nearest first (ties by lower index); the references a query ignores
        are left out, as in the evaluation; -1 after a query's last rankable reference.
    distances : numpy.ndarray of shape (n_queries, k), float64
        As :func:`embedeval.neighbors` reports them (euclidean distance, ``1 - cosine``, or
        minus the inner product); NaN where ``indices`` is -1.
    relevant : numpy.ndarray of shape (n_queries, k), bool
        Whether each neighbour is relevant to the query (graded: its grade reaches the threshold).
    grades : numpy.ndarray of shape (n_queries, k), float64, or None
        Each neighbour's grade (0 unjudged), for judgements with grades; None for labels.
    n_relevant : numpy.ndarray of shape (n_queries,), int64
        R: the relevant references of each query (ignored ones not counted).
    label_codes : numpy.ndarray of shape (n_queries, k), int64, or None
        With class labels: each neighbour's label as a position in ``classes`` (-1 for none).
    classes : numpy.ndarray of shape (n_classes,) or None
        The labels that ``label_codes`` point into.
    reference_ids : list of length n_references, or None
        The references' ids (``corpus_ids``) that pages show for ``indices``; None where a
        reference is named by its row.
    """

    indices: np.ndarray
    distances: np.ndarray
    relevant: np.ndarray
    grades: np.ndarray | None
    n_relevant: np.ndarray
    label_codes: np.ndarray | None = None
    classes: np.ndarray | None = None
    reference_ids: list | None = None

    @property
    def k(self) -> int:
        return int(self.indices.shape[1])

    def first_relevant(self) -> np.ndarray:
        """The rank (1-based) of each query's first relevant neighbour, 0 where none is kept; shape (n_queries,)."""
        found = self.relevant.any(axis=1)
        return np.where(found, self.relevant.argmax(axis=1) + 1, 0)

    def take(self, indices) -> KeptNeighbors:
        idx = np.asarray(indices)
        grades = None if self.grades is None else self.grades[idx]
        codes = None if self.label_codes is None else self.label_codes[idx]
        return KeptNeighbors(
            self.indices[idx],
            self.distances[idx],
            self.relevant[idx],
            grades,
            self.n_relevant[idx],
            codes,
            self.classes,
            self.reference_ids,
        )

    def __repr__(self) -> str:
        return f"KeptNeighbors(n_queries={self.indices.shape[0]}, k={self.k})"
