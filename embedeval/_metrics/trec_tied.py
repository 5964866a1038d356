"""Tie-aware twins of trec_eval's measures that add one term per position: unj_k, rbp and
rbp_resid, their exact expected values over every order of the tied documents.

Each of these measures is :math:`\\sum_i w(i)\\,f(d_i)` over the positions i of the retrieved
documents :math:`d_i` (for rbp_resid, plus terms that do not depend on the order): f is 1 for a
document without a grade >= 0 (unj, rbp_resid) or rbp's scaled gain, w(i) is 1/k for i <= k
(unj_k) or :math:`(1 - p) p^{i-1}` (rbp, rbp_resid). When the g documents of a tie group take
its positions in every order with equal probability, each of those positions holds each of them
with probability 1/g, so its expected term is w(i) times the group's mean of f (linearity of
expectation): no enumeration, and a cutoff k falling inside a group takes the part of it above k.
Signature: ``expected(tied_hits, cutoff) -> array of shape (n_queries,)``; the tied hits carry a
:class:`~embedeval._metrics.listing.TiedListing`.
"""

from __future__ import annotations

import numpy as np

from . import trec_gains as G
from . import trec_sets as S
from .listing import NEEDS_LISTING, TiedListing


def tied_listing(t) -> TiedListing:
    """The tied listing of ``t``; ValueError where the input form gave none."""
    found = getattr(t, "tied_listing", None)
    if found is None:  # ranked id lists have no scores, so no ties
        raise ValueError(NEEDS_LISTING + "TREC files or {query: {id: score}} mappings")
    return found


def _mean_unjudged(tl: TiedListing) -> np.ndarray:
    """(n_queries, width): the probability that each position holds a document without a grade >= 0."""
    return tl.group_mean(tl.listing.unjudged.astype(np.float64))


def unjudged_at(t, cutoff) -> np.ndarray:
    """Expected unj_k: the sum over the top k positions of that probability, / k."""
    return S.top_share(_mean_unjudged(tied_listing(t)), cutoff)


def rbp_residual(t, cutoff=None) -> np.ndarray:
    """Expected rbp_resid: :math:`p^n + (1 - p)\\sum_i P(\\text{unjudged at } i)\\,p^{i-1}` when a
    retrieved document is unjudged (the same in every order: ties never reach past the n
    retrieved), else 0."""
    tl = tied_listing(t)
    return S.residual(tl.listing, _mean_unjudged(tl), S.rbp_p(cutoff))


def rbp(t, cutoff=None) -> np.ndarray:
    """Expected rbp: :math:`(1 - p)\\sum_i E[g_i]\\,p^{i-1}`, :math:`E[g_i]` the mean scaled gain
    of position i's tie group (the scaling reads the query's judgements, not the order)."""
    p, gains = (0.9, {}) if cutoff is None else cutoff
    tl = tied_listing(t)
    return G.rbp_total(tl.group_mean(G.rbp_gains(tl.listing, gains)), p)
