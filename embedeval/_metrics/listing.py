"""A query's whole listing as trec_eval sees it, for the measures that read more than the
relevant items (bpref, infAP, set_P, unj, G, rbp, ...).

trec_eval gives each retrieved document one value: its grade when it is judged with a grade
>= 0, ``-1`` when the qrels do not list it (*not in the pool*), ``-2`` when they list it with a
negative grade (*in the pool but not judged*, as infAP's sampled pools mark them). A
:class:`Listing` holds these values rank by rank, the number of retrieved documents and, for the
gain measures, every judged grade >= 0 of the query.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

NOT_POOLED, UNJUDGED = -1.0, -2.0


@dataclass(frozen=True)
class Listing:
    """Per query, the value of each retrieved document, best first.

    Attributes
    ----------
    rel : numpy.ndarray of shape (n_queries, width)
        The grade of the document at rank ``i + 1``, :data:`NOT_POOLED` or :data:`UNJUDGED`;
        NaN beyond the query's ``n_retrieved``.
    n_retrieved : numpy.ndarray of shape (n_queries,)
    positive : numpy.ndarray of shape (n_queries, w)
        Every judged grade > 0 of the query, largest first, padded with 0.
    n_zero : numpy.ndarray of shape (n_queries,)
        Judged documents with grade 0.
    level : float
        The relevance level: a document is relevant when its grade >= ``level``.
    """

    rel: np.ndarray
    n_retrieved: np.ndarray
    positive: np.ndarray
    n_zero: np.ndarray
    level: float

    @property
    def relevant(self) -> np.ndarray:
        """(n_queries, width) bool: a relevant document at that rank."""
        return self.rel >= self.level

    @property
    def judged_nonrelevant(self) -> np.ndarray:
        """(n_queries, width) bool: a document judged with a grade in [0, level)."""
        return (self.rel >= 0) & (self.rel < self.level)

    @property
    def unjudged(self) -> np.ndarray:
        """(n_queries, width) bool: a document without a grade >= 0 (not pooled or not judged)."""
        return self.rel < 0

    @property
    def n_nonrelevant(self) -> np.ndarray:
        """Judged documents with a grade in [0, level), retrieved or not."""
        return self.n_zero + np.count_nonzero((self.positive > 0) & (self.positive < self.level), axis=1)

    @property
    def ranked(self) -> np.ndarray:
        """(n_queries, width) bool: a retrieved document at that rank."""
        return ~np.isnan(self.rel)


def listing_of(rows, ranks, grades, n_retrieved, positive, n_zero, level: float) -> Listing:
    """A :class:`Listing` from each retrieved judged document's (query, 1-based rank, grade),
    the number retrieved per query, the judged positive grades (largest first, padded with 0)
    and the count of grade-0 judgements per query."""
    n_retrieved = np.asarray(n_retrieved, dtype=np.int64)
    width = max(int(n_retrieved.max(initial=0)), 1)
    rel = np.full((n_retrieved.size, width), np.nan)
    rel[np.arange(width)[None, :] < n_retrieved[:, None]] = NOT_POOLED
    grades = np.asarray(grades, dtype=np.float64)
    at = np.asarray(ranks, dtype=np.int64) - 1
    inside = at < n_retrieved[rows]
    rel[rows[inside], at[inside]] = np.where(grades[inside] < 0, UNJUDGED, grades[inside])
    zero = np.zeros(n_retrieved.size, dtype=np.int64) if n_zero is None else np.asarray(n_zero, dtype=np.int64)
    return Listing(rel, n_retrieved, positive, zero, float(level))


def listing(hits) -> Listing:
    """The listing of ``hits``; ValueError where the input form gave none."""
    if hits.listing is None:
        raise ValueError(
            "this trec_eval measure reads every retrieved document (judged non-relevant, unjudged, the "
            "run's length); evaluate TREC files, {query: {id: score}} mappings or ranked id lists"
        )
    return hits.listing
