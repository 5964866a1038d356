"""Who is relevant to whom: the query and reference sets of an evaluation with class labels.

A reference is relevant to a query when it has the query's class label. In leave-one-out
evaluation the references are the queries themselves and each query is left out of its own
ranking by its index. Everything the search and the kernels need about relevance is derived
here once: label codes, R (the relevant references of each query) and how many references a
query can rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._inputs import encode_labels


@dataclass(frozen=True)
class LabelSets:
    """Queries and references coded by class label.

    Attributes
    ----------
    classes : numpy.ndarray of shape (n_classes,)
        The distinct labels; ``classes[code]`` is a label.
    query_codes : numpy.ndarray of shape (n_queries,), int64
    reference_codes : numpy.ndarray of shape (n_references,), int64
    n_relevant : numpy.ndarray of shape (n_queries,), int64
        R: the references sharing the query's label, the query itself not counted.
    n_rankable : int
        References a query can be ranked against (all, or all but itself).
    leave_one_out : bool
        The references are the queries, and query i is excluded as reference i.
    """

    classes: np.ndarray
    query_codes: np.ndarray
    reference_codes: np.ndarray
    n_relevant: np.ndarray
    n_rankable: int
    leave_one_out: bool

    @classmethod
    def from_labels(cls, query_labels: np.ndarray, reference_labels: np.ndarray | None = None) -> LabelSets:
        """Leave-one-out sets without ``reference_labels``, else a query set and a gallery."""
        leave_one_out = reference_labels is None
        if leave_one_out:
            classes, (query_codes,) = encode_labels(query_labels)
            reference_codes = query_codes
        else:
            classes, (query_codes, reference_codes) = encode_labels(query_labels, reference_labels)
        counts = np.bincount(reference_codes, minlength=classes.size)
        return cls(
            classes=classes,
            query_codes=query_codes,
            reference_codes=reference_codes,
            n_relevant=counts[query_codes] - int(leave_one_out),
            n_rankable=reference_codes.size - int(leave_one_out),
            leave_one_out=leave_one_out,
        )

    def excluded(self, rows: np.ndarray) -> np.ndarray | None:
        """Each query's own reference index (leave-one-out), or None."""
        return rows if self.leave_one_out else None

    @property
    def skip_reason(self) -> str:
        """Why a query with R = 0 is skipped."""
        if self.leave_one_out:
            return "no other embedding shares the query's label (R = 0)"
        return "no reference shares the query's label (R = 0)"
