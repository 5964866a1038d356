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


# why a measure of the whole listing has no value, before the input forms that give one
NEEDS_LISTING = (
    "this trec_eval measure reads every retrieved document (judged non-relevant, unjudged, the run's length); evaluate "
)


def listing(hits) -> Listing:
    """The listing of ``hits``; ValueError where the input form gave none."""
    if hits.listing is None:
        raise ValueError(NEEDS_LISTING + "TREC files, {query: {id: score}} mappings or ranked id lists")
    return hits.listing


@dataclass(frozen=True)
class TiedListing:
    """A :class:`Listing` with the tie group of each position, for the tie-aware twins of the
    measures that add one term per position (unj, rbp, rbp_resid).

    Attributes
    ----------
    listing : Listing
        The documents in one of the orders the ties allow (trec_eval's); each tie group holds
        consecutive positions, all of them within the query's ``n_retrieved``.
    first, end : numpy.ndarray of shape (n_queries, width), int
        0-based: the first position of each position's tie group, and one past its last. An
        untied position ``j`` has ``[j, j + 1)``; so does every position beyond ``n_retrieved``.
    """

    listing: Listing
    first: np.ndarray
    end: np.ndarray

    def group_mean(self, values: np.ndarray) -> np.ndarray:
        r"""Each position's value replaced by the mean over its tie group.

        Over the :math:`g!` orders of a group of g documents, each equally likely, every position
        of the group holds each of its documents in :math:`(g-1)!` of them, so the mean of a
        per-document value ``values`` at that position is the group's mean of it: the expected
        value at each position. A measure that adds ``w(position) * value`` over positions has
        as its expected value the same sum over these means.

        Parameters
        ----------
        values : numpy.ndarray of shape (n_queries, width), float
            A finite value per position (0 beyond ``n_retrieved``).

        Returns
        -------
        numpy.ndarray of shape (n_queries, width)
            Untied positions keep their value exactly.
        """
        n, width = values.shape
        total = np.zeros((n, width + 1))
        np.cumsum(values, axis=1, out=total[:, 1:])
        rows = np.arange(n)[:, None]
        size = self.end - self.first
        with np.errstate(invalid="ignore"):
            mean = (total[rows, self.end] - total[rows, self.first]) / size
        return np.where(size > 1, mean, values)


def tied_listing_of(lst: Listing, rows, start, size) -> TiedListing:
    """A :class:`TiedListing` from ``lst`` and the tie group of each of its judged documents:
    its query ``rows``, the documents ranked before its group ``start`` and the group's ``size``
    (one entry per document, so a group may appear several times). A group is cut at the query's
    ``n_retrieved``; groups holding no judged document are all alike and need no entry."""
    n, width = lst.rel.shape
    rows = np.asarray(rows, dtype=np.int64)
    start = np.asarray(start, dtype=np.int64)
    end = np.minimum(start + np.asarray(size, dtype=np.int64), lst.n_retrieved[rows])
    tied = end - start > 1
    # +1 after each group's first position, -1 at its end: a running sum > 0 marks a position
    # that continues the group of the one before it (groups never overlap; repeats add up)
    steps = np.zeros((n, width + 1), dtype=np.int64)
    np.add.at(steps, (rows[tied], start[tied] + 1), 1)
    np.add.at(steps, (rows[tied], end[tied]), -1)
    inside = np.cumsum(steps, axis=1)[:, :width] > 0
    position = np.broadcast_to(np.arange(width), (n, width))
    first = np.maximum.accumulate(np.where(inside, 0, position), axis=1)
    next_starts = np.ones((n, width), dtype=bool)  # position j + 1 starts a group (or j is the last)
    next_starts[:, :-1] = ~inside[:, 1:]
    end_of = np.minimum.accumulate(np.where(next_starts, position + 1, width)[:, ::-1], axis=1)[:, ::-1]
    return TiedListing(lst, first, np.ascontiguousarray(end_of))
