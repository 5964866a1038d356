"""Tie groups of ranked lists: the tie-aware counterpart of :class:`~embedeval._kernels.Hits`.

A *tie group* is a maximal run of consecutive ranked items with exactly equal score (or float64
distance). Every order of the items inside a group is an equally valid ranking; the kernels of
:mod:`embedeval._expected` average a metric over all of them in closed form, and
:func:`tie_order` picks the best or the worst of them for the ordinary kernels.

Only groups that hold a relevant or positively graded item are kept: a group holding neither
changes no metric except by the positions it occupies, which the next kept group's ``start``
records. Without ties every group is one item and :class:`TiedHits` carries exactly the
information of :class:`~embedeval._kernels.Hits`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

TIE_RULES = ("optimistic", "pessimistic")


@dataclass(frozen=True)
class TiedHits:
    """Per query, its tie groups that hold a relevant or positively graded item, in rank order.

    Attributes
    ----------
    start : numpy.ndarray of shape (n_queries, n_groups), float64
        Items ranked before the group (0-based: its positions are ``start + 1 .. start + size``);
        padding +inf.
    size : numpy.ndarray of shape (n_queries, n_groups), float64
        Items in the group (>= 1); padding 1.
    relevant : numpy.ndarray of shape (n_queries, n_groups), float64
        Items in the group with grade >= threshold; padding 0.
    n_relevant : numpy.ndarray of shape (n_queries,), int
        R, the query's relevant items in the whole collection, retrieved or not.
    gain, gain_exp : numpy.ndarray of shape (n_queries, n_groups), float64, optional
        Sums over the group's items of ``max(grade, 0)`` and ``2**max(grade, 0) - 1``; padding 0.
        None for input forms without grades (embeddings with labels).
    ideal : numpy.ndarray of shape (n_queries, n_judged), optional
        All judged grades of the query in decreasing order, as in ``Hits``.

    Notes
    -----
    The padding (``start`` +inf, ``size`` 1, nothing relevant, no gain) is a phantom group
    beyond every cutoff, so that the kernels need no mask. ``n_groups`` >= 1.
    A ranking truncated at some depth has as its last group whatever part of that group was
    ranked; expected values then average over the orders of the ranked part only.
    """

    start: np.ndarray
    size: np.ndarray
    relevant: np.ndarray
    n_relevant: np.ndarray
    gain: np.ndarray | None = None
    gain_exp: np.ndarray | None = None
    ideal: np.ndarray | None = None


def tied_hits_from_groups(
    rows: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
    relevant: np.ndarray,
    n_queries: int,
    n_relevant: np.ndarray,
    gain: np.ndarray | None = None,
    gain_exp: np.ndarray | None = None,
    ideal: np.ndarray | None = None,
) -> TiedHits:
    """:class:`TiedHits` from flat per-group arrays (e.g. counts per Hamming distance).

    Parameters
    ----------
    rows : numpy.ndarray of shape (n,), int
        The query of each group; ascending, and ``start`` ascending within a query.
    start, size, relevant : numpy.ndarray of shape (n,)
        As the attributes of :class:`TiedHits`; groups with nothing relevant and no gain are
        dropped (they matter only through positions).
    n_queries : int
    n_relevant : numpy.ndarray of shape (n_queries,)
    gain, gain_exp : numpy.ndarray of shape (n,), optional
    ideal : numpy.ndarray of shape (n_queries, n_judged), optional
    """
    keep = relevant > 0
    if gain is not None:
        keep |= gain > 0
    rows = rows[keep]
    counts = np.bincount(rows, minlength=n_queries)
    width = max(int(counts.max(initial=0)), 1)
    cols = np.arange(rows.size) - (np.cumsum(counts) - counts)[rows]

    def packed(values, fill):
        out = np.full((n_queries, width), fill, dtype=np.float64)
        out[rows, cols] = values[keep]
        return out

    return TiedHits(
        start=packed(start, np.inf),
        size=packed(size, 1.0),
        relevant=packed(relevant, 0.0),
        n_relevant=np.asarray(n_relevant),
        gain=None if gain is None else packed(gain, 0.0),
        gain_exp=None if gain_exp is None else packed(gain_exp, 0.0),
        ideal=ideal,
    )


def _group_starts(scores: np.ndarray) -> np.ndarray:
    """Boolean (b, depth): True where an item starts a tie group (first column, or a new value)."""
    new = np.ones(scores.shape, dtype=bool)
    # NaN != NaN: positions padded with NaN scores are groups of one.
    np.not_equal(scores[:, 1:], scores[:, :-1], out=new[:, 1:])
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
        return tied_hits_from_groups(
            np.zeros(0, np.intp), empty, empty, empty, n_queries, n_relevant, empty, empty, ideal
        )
    first = np.flatnonzero(_group_starts(scores))  # flat index of each group's first item
    size = np.diff(first, append=n_queries * depth).astype(np.float64)
    rows = first // depth
    # Only items with a positive grade add to a group's counts: O(those items), not O(depth).
    flat = grades.ravel()
    positive = np.flatnonzero(flat > 0)
    group = np.searchsorted(first, positive, side="right") - 1
    g = flat[positive]
    n_groups = first.size
    relevant = np.bincount(group, weights=(g >= threshold).astype(np.float64), minlength=n_groups)
    gain = np.bincount(group, weights=g, minlength=n_groups)
    gain_exp = np.bincount(group, weights=np.exp2(g) - 1.0, minlength=n_groups)
    return tied_hits_from_groups(
        rows, (first - rows * depth).astype(np.float64), size, relevant, n_queries, n_relevant, gain, gain_exp, ideal
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
    """
    if rule not in TIE_RULES:
        raise ValueError(f"'ties' for a reordering must be one of {', '.join(TIE_RULES)}; got {rule!r}")
    group = np.cumsum(_group_starts(scores), axis=1)
    g = np.asarray(grades, dtype=np.float64)  # unsigned grades would wrap when negated
    key = -g if rule == "optimistic" else g
    return np.lexsort((key, group), axis=1)  # lexsort is stable: equal grades keep their order
