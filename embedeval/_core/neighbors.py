"""Each query's nearest references, nearest first: the one neighbours type of embedeval.

:func:`embedeval.neighbors` returns it with indices and distances; an evaluation with
``keep_neighbors=k`` keeps it on the result (``result.neighbors``) with each neighbour's
relevance too, for the explorer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True, repr=False)
class Neighbors:
    """Each query's first ``k`` references, nearest first (ties by lower index).

    Attributes
    ----------
    indices : numpy.ndarray of shape (n_queries, k), int64
        Reference rows (the queries' own rows in leave-one-out); -1 after a query's last
        rankable reference (kept neighbours leave out the references a query ignores).
    distances : numpy.ndarray of shape (n_queries, k), float64
        The distance of each neighbour, non-decreasing along a row: the euclidean distance,
        ``1 - cosine similarity``, or minus the inner product; NaN where ``indices`` is -1.
    distance : str or None
        The distance that ranked them.
    leave_one_out : bool or None
        Whether the queries were searched among themselves, each excluding itself.
    relevant : numpy.ndarray of shape (n_queries, k), bool, or None
        Kept by an evaluation: whether each neighbour is relevant to the query (graded: its
        grade reaches the threshold). None from :func:`embedeval.neighbors`.
    grades : numpy.ndarray of shape (n_queries, k), float64, or None
        Each neighbour's grade (0 unjudged), for judgements with grades.
    n_relevant : numpy.ndarray of shape (n_queries,), int64, or None
        R: the relevant references of each query (ignored ones not counted), when kept by an
        evaluation.
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
    distance: str | None = None
    leave_one_out: bool | None = None
    relevant: np.ndarray | None = None
    grades: np.ndarray | None = None
    n_relevant: np.ndarray | None = None
    label_codes: np.ndarray | None = None
    classes: np.ndarray | None = None
    reference_ids: list | None = None

    @property
    def k(self) -> int:
        return int(self.indices.shape[1])

    def first_relevant(self) -> np.ndarray:
        """The rank (1-based) of each query's first relevant neighbour, 0 where none is kept; shape (n_queries,)."""
        if self.relevant is None:
            raise ValueError("first_relevant() needs relevance: these neighbours were not kept by an evaluation")
        found = self.relevant.any(axis=1)
        return np.where(found, self.relevant.argmax(axis=1) + 1, 0)

    def to_pandas(self):
        """One row per query and rank: ``query``, ``rank`` (from 1), ``reference``, ``distance``
        and, when kept by an evaluation, ``relevant`` and (with grades) ``grade`` (a pandas
        DataFrame; pandas imported here; ranks past a query's last rankable reference left out)."""
        from .display import neighbors_frame

        return neighbors_frame(self)

    def take(self, indices) -> Neighbors:
        """The neighbours of the queries ``indices`` (positions), in that order."""
        idx = np.asarray(indices)
        rows = {name: getattr(self, name) for name in ("relevant", "grades", "n_relevant", "label_codes")}
        return Neighbors(
            self.indices[idx],
            self.distances[idx],
            self.distance,
            self.leave_one_out,
            classes=self.classes,
            reference_ids=self.reference_ids,
            **{name: None if value is None else value[idx] for name, value in rows.items()},
        )

    def __repr__(self) -> str:
        n, k = self.indices.shape
        kept = "" if self.relevant is None else ", with relevance"
        return f"Neighbors(n_queries={n}, k={k}, distance={self.distance!r}, leave_one_out={self.leave_one_out}{kept})"
