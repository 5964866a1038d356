"""Tie groups of ranked lists: the tie-aware counterpart of :class:`~embedeval._metrics.kernels.Hits`.

A *tie group* is a maximal run of consecutive ranked items with exactly equal score (or float64
distance). Every order of the items inside a group is an equally valid ranking; the kernels of
:mod:`embedeval._metrics.expected` average a metric over all of them in closed form, and
:func:`tie_order` picks the best or the worst of them for the ordinary kernels.

Only groups that hold a relevant or positively graded item are kept, one entry each, query by
query: a group holding neither changes no metric except by the positions it occupies, which
the next kept group's ``start`` records. Without ties every group is one item and :class:`TiedHits` carries exactly the
information of :class:`~embedeval._metrics.kernels.Hits`.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

TIE_RULES = ("optimistic", "pessimistic")  # the reorderings of :func:`tie_order`
# The tie-aware rules every scored input form accepts as ``ties=``; None keeps the form's own rule.
RULES = ("expected", *TIE_RULES)

_MEANING = {
    "expected": "the exact expected value over every order of tied items, each order equally likely "
    "(McSherry & Najork, ECIR 2008), in closed form per tie group",
    "optimistic": "within each tie group, relevant (higher-graded) items first: the largest value the tied orders "
    "allow (for map_hits@k, which is not monotone, that order's value, not its maximum)",
    "pessimistic": "within each tie group, relevant (higher-graded) items last: the smallest value the tied orders "
    "allow (for map_hits@k, that order's value, not its minimum)",
}


def check_ties(ties) -> str | None:
    """``ties`` checked: None (the input form's own rule) or one of :data:`RULES`."""
    if ties is None or (isinstance(ties, str) and ties in RULES):
        return ties
    raise ValueError(
        "'ties' must be None (the input form's own rule) or one of 'expected', 'optimistic', 'pessimistic'; "
        f"got {ties!r}"
    )


def refuse_without_scores(ties: str | None, what: str, default: str) -> None:
    """Raise for a tie-aware rule on an input form that holds no scores (ranked id lists)."""
    if ties is not None:
        raise ValueError(
            f"'ties'={ties!r} needs scores to tell which items are tied, and {what} holds none; give "
            f"{{id: score}} mappings, a TREC run or a score matrix, or leave 'ties' at None ({default})"
        )


def describe(rule: str | None, default: str, tied: str) -> str:
    """The ``ties`` convention in words: ``default`` (the form's own rule) when ``rule`` is None,
    else the rule's meaning, saying what ``tied`` means (e.g. "exactly equal scores")."""
    if rule is None:
        return default
    return f"'{rule}': {_MEANING[rule]}; tied means {tied}"


@dataclass(frozen=True)
class TiedHits:
    """The tie groups of every query that hold a relevant or positively graded item, flat.

    Groups are listed query by query (``query`` ascending) and in rank order within a query:
    one entry per group, no padding; a query without such a group has no entry.

    Attributes
    ----------
    query : numpy.ndarray of shape (n_groups,), intp
        The query (row) of each group.
    start : numpy.ndarray of shape (n_groups,), float64
        Items ranked before the group: its positions are ``start + 1 .. start + size``.
    size : numpy.ndarray of shape (n_groups,), float64
        Items in the group (>= 1).
    relevant : numpy.ndarray of shape (n_groups,), float64
        Items in the group with grade >= threshold.
    n_relevant : numpy.ndarray of shape (n_queries,), int
        R, the query's relevant items in the whole collection, retrieved or not.
    gain, gain_exp : numpy.ndarray of shape (n_groups,), float64, optional
        Sums over the group's items of ``max(grade, 0)`` and ``2**max(grade, 0) - 1``; None
        for input forms without grades (embeddings with labels).
    ideal : numpy.ndarray of shape (n_queries, n_judged), optional
        All judged grades of the query in decreasing order, as in ``Hits``.
    tied_listing : embedeval._metrics.listing.TiedListing, optional
        Every retrieved document with its tie group, for trec_eval's measures of the whole
        listing (unj, rbp, rbp_resid); only forms that give a listing, only when asked.

    Notes
    -----
    ``before`` and ``first_relevant`` are derived on first use and kept: several metrics share them.
    Per-query sums are ``np.bincount(query, weights=...)``, which adds left to right like the
    ordinary kernels' row sums: untied input gives the ordinary values bit for bit.
    A ranking truncated at some depth has as its last group whatever part of that group was
    ranked; expected values then average over the orders of the ranked part only.
    """

    query: np.ndarray
    start: np.ndarray
    size: np.ndarray
    relevant: np.ndarray
    n_relevant: np.ndarray
    gain: np.ndarray | None = None
    gain_exp: np.ndarray | None = None
    ideal: np.ndarray | None = None
    tied_listing: object | None = None

    @property
    def n_queries(self) -> int:
        return self.n_relevant.shape[0]

    @functools.cached_property
    def before(self) -> np.ndarray:
        """Shape (n_groups,): relevant items in the query's earlier groups (exact: a sum of integers)."""
        per_query = np.bincount(self.query, weights=self.relevant, minlength=self.n_queries)
        return np.cumsum(self.relevant) - self.relevant - (np.cumsum(per_query) - per_query)[self.query]

    @functools.cached_property
    def first_relevant(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(start, size, relevant), each of shape (n_queries,), of each query's first group with a
        relevant item; (inf, 1, 0) for a query without one."""
        idx = np.flatnonzero(self.relevant > 0)
        q = self.query[idx]
        head = group_starts(q)
        idx, q = idx[head], q[head]
        s, n, r = np.full(self.n_queries, np.inf), np.ones(self.n_queries), np.zeros(self.n_queries)
        s[q], n[q], r[q] = self.start[idx], self.size[idx], self.relevant[idx]
        return s, n, r


def tied_hits_from_groups(
    query: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
    relevant: np.ndarray,
    n_relevant: np.ndarray,
    gain: np.ndarray | None = None,
    gain_exp: np.ndarray | None = None,
    ideal: np.ndarray | None = None,
) -> TiedHits:
    """:class:`TiedHits` from per-group arrays (e.g. counts per Hamming distance).

    Parameters
    ----------
    query : numpy.ndarray of shape (n,), int
        The query of each group; ascending, and ``start`` ascending within a query.
    start, size, relevant : numpy.ndarray of shape (n,)
        As the attributes of :class:`TiedHits`. Groups with nothing relevant and no gain are
        dropped (they matter only through positions, which ``start`` records).
    n_relevant : numpy.ndarray of shape (n_queries,)
    gain, gain_exp : numpy.ndarray of shape (n,), optional
    ideal : numpy.ndarray of shape (n_queries, n_judged), optional
    """
    keep = relevant > 0
    if gain is not None:
        keep |= gain > 0
    if not keep.all():
        query, start, size, relevant = query[keep], start[keep], size[keep], relevant[keep]
        gain = None if gain is None else gain[keep]
        gain_exp = None if gain_exp is None else gain_exp[keep]
    as_float = lambda v: None if v is None else np.asarray(v, dtype=np.float64)  # noqa: E731
    return TiedHits(
        np.asarray(query, dtype=np.intp),
        as_float(start),
        as_float(size),
        as_float(relevant),
        np.asarray(n_relevant),
        as_float(gain),
        as_float(gain_exp),
        ideal,
    )


def group_starts(values: np.ndarray) -> np.ndarray:
    """Boolean of the shape of ``values``: True where an entry starts a run of equal values along
    the last axis (the first entry, or a new value): a tie group of ranked scores (b, depth), a
    query's first group in a 1-D array of queries."""
    new = np.ones(values.shape, dtype=bool)
    # NaN != NaN: positions padded with NaN scores are groups of one.
    np.not_equal(values[..., 1:], values[..., :-1], out=new[..., 1:])
    return new


def tied_hits_from_dense(
    scores: np.ndarray,
    grades: np.ndarray,
    threshold: float,
    n_relevant: np.ndarray,
    ideal: np.ndarray | None = None,
) -> TiedHits:
    """:class:`TiedHits` from dense ranked arrays.

    Parameters
    ----------
    scores : numpy.ndarray of shape (n_queries, depth)
        Each query's scores or distances in ranked order, so that tied items are adjacent;
        exactly equal values tie (``==``, so -0.0 ties 0.0). Pad a short ranking with NaN
        scores and grade 0: each pad is then a group of one that holds nothing.
    grades : numpy.ndarray of shape (n_queries, depth)
        The grade of each ranked item (0 for unjudged; 1 for a relevant item of binary relevance).
    threshold : float
        Items with grade >= ``threshold`` are relevant (> 0).
    n_relevant : numpy.ndarray of shape (n_queries,)
        R, counted over the whole collection (it may exceed the relevant items ranked).
    ideal : numpy.ndarray of shape (n_queries, n_judged), optional
        For nDCG: every judged grade of the query in decreasing order (negative ones as 0).

    Returns
    -------
    TiedHits
        The last group of a row is whatever part of its tie group the ``depth`` items hold.
    """
    n_queries, depth = scores.shape
    if depth == 0:
        empty = np.zeros(0)
        return tied_hits_from_groups(np.zeros(0, np.intp), empty, empty, empty, n_relevant, empty, empty, ideal)
    first = np.flatnonzero(group_starts(scores))  # flat index of each group's first item
    # Only groups holding an item with a positive grade are kept, and only those items are read:
    # O(groups + graded items) after one pass over the scores.
    flat = grades.ravel()
    positive = np.flatnonzero(flat > 0)
    group = np.searchsorted(first, positive, side="right") - 1  # non-decreasing
    head = group_starts(group)
    kept = group[head]
    label = np.cumsum(head) - 1  # each graded item's position among the kept groups
    g = flat[positive].astype(np.float64)
    start = first[kept]
    size = np.append(first, n_queries * depth)[kept + 1] - start
    query = start // depth
    return tied_hits_from_groups(
        query,
        (start - query * depth).astype(np.float64),
        size.astype(np.float64),
        np.bincount(label, weights=(g >= threshold).astype(np.float64), minlength=kept.size),
        n_relevant,
        gain=np.bincount(label, weights=g, minlength=kept.size),
        gain_exp=np.bincount(label, weights=np.exp2(g) - 1.0, minlength=kept.size),
        ideal=ideal,
    )


def tie_order(scores: np.ndarray, grades: np.ndarray, rule: str) -> np.ndarray:
    """The within-group reordering that puts higher grades first or last, for the ordinary kernels.

    Parameters
    ----------
    scores : numpy.ndarray of shape (n_queries, depth)
        Ranked scores or distances, tied items adjacent (as in :func:`tied_hits_from_dense`).
    grades : numpy.ndarray of shape (n_queries, depth)
    rule : {"optimistic", "pessimistic"}
        Within each tie group: higher grades first (optimistic) or last (pessimistic); equal
        grades keep their order (stable).

    Returns
    -------
    numpy.ndarray of shape (n_queries, depth), int
        Column indices: ``np.take_along_axis(a, order, 1)`` reorders grades, ids, scores alike.
        Items never leave their tie group.

    Notes
    -----
    Relevance is ``grade >= threshold``, so higher grades first also means relevant items
    first. That order gives the largest value over the tied orders of every metric that does
    not decrease when a better item moves ahead of a worse one: precision, recall, capped
    recall, hit rate, F1, R-precision, AP (any cutoff, MAP@R), RR, DCG, nDCG, CG (linear or
    exponential gain); pessimistic gives their smallest. ``map_hits@k`` (AP over the hits in
    the top k) is not monotone: moving a relevant item into the top k can lower it (relevance
    1, 0, [1, 0] with the last two tied and k = 3: 0.83 optimistic, 1.0 pessimistic), so for it
    the two rules are the two orders, not the extremes.

    Where the caller ranks the items itself, sorting by (score, then -grade or grade, then
    index) in one ``np.lexsort`` gives the same order, and at a top-k cut through a tie group
    it also keeps that group's best (or worst) items, which reordering a cut ranking cannot.
    """
    if rule not in TIE_RULES:
        raise ValueError(f"'ties' for a reordering must be one of {', '.join(TIE_RULES)}; got {rule!r}")
    group = np.cumsum(group_starts(scores), axis=1)
    g = np.asarray(grades, dtype=np.float64)  # unsigned grades would wrap when negated
    key = -g if rule == "optimistic" else g
    return np.lexsort((key, group), axis=1)  # lexsort is stable: equal grades keep their order
