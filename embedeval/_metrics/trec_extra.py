"""Kernels of trec_eval's measures over judged non-relevant and unjudged documents, and its
interpolated precisions (each one's definition as trec_eval 10 computes it).

Every kernel has the registry's signature ``kernel(hits, cutoff) -> array of shape
(n_queries,)``; ``cutoff`` is the measure's parameter, parsed by the parser beside it (None: the
default). Those that read more than the relevant items take the query's whole
:class:`~embedeval._metrics.listing.Listing`. Sums run left to right, rank by rank, in the order
trec_eval adds, so values agree with it to the last bits. A query without a relevant document is
0, as in trec_eval, unless said otherwise.
"""

from __future__ import annotations

import numpy as np

from .kernels import divide_or_zero, finite_count, row_sum
from .listing import UNJUDGED, listing
from .trec_defaults import RECALL_LEVELS

INFAP_EPSILON = 1e-5


def floats(text: str, what: str) -> tuple[float, ...]:
    """The comma-separated reals of a measure's parameters (``.25,.5,.75``)."""
    try:
        values = tuple(float(p) for p in text.split(","))
    except ValueError:
        raise ValueError(f"the parameters of {what} must be comma-separated numbers; got {text!r}") from None
    if not all(np.isfinite(values)):
        raise ValueError(f"the parameters of {what} must be finite numbers; got {text!r}")
    return values


def one_float(text: str, what: str) -> float:
    values = floats(text, what)
    if len(values) != 1:
        raise ValueError(f"{what} takes one number; got {text!r}")
    return values[0]


def bpref(h, cutoff=None) -> np.ndarray:
    r"""bpref (Buckley & Voorhees 2004, trec_eval's form): :math:`\frac{1}{R}\sum_{r}
    \left(1 - \frac{\min(n_r, R)}{\min(N, R)}\right)` over the retrieved relevant documents r,
    :math:`n_r` the judged non-relevant documents ranked above r, N all judged non-relevant
    documents of the query (grade in [0, level)); unjudged documents are passed over."""
    lst = listing(h)
    relevant, nonrel = lst.relevant, lst.judged_nonrelevant
    above = np.cumsum(nonrel, axis=1)
    r = np.asarray(h.n_relevant, dtype=np.float64)[:, None]
    cap = np.minimum(lst.n_nonrelevant[:, None], r)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(above > 0, 1.0 - np.minimum(above, r) / cap, 1.0)
    return divide_or_zero(row_sum(np.where(relevant, term, 0.0)), h.n_relevant)


def infap(h, cutoff=None) -> np.ndarray:
    r"""infAP (Yilmaz & Aslam 2006, trec_eval's form): :math:`\frac{1}{R}\sum_r` over the
    retrieved relevant documents r at 0-based position j: 1 if j = 0, else :math:`\frac{1}{j+1}
    + \frac{j}{j+1}\cdot\frac{r' + n + u}{j}\cdot\frac{r' + \epsilon}{r' + n + 2\epsilon}`, with
    r', n, u the relevant, judged non-relevant and pooled-unjudged (negative grade) documents
    above it and :math:`\epsilon = 10^{-5}`; documents outside the qrels count only in j."""
    lst = listing(h)
    relevant = lst.relevant
    r_above = (np.cumsum(relevant, axis=1) - 1).astype(np.float64)
    n_above = np.cumsum(lst.judged_nonrelevant, axis=1).astype(np.float64)
    u_above = np.cumsum(lst.rel == UNJUDGED, axis=1).astype(np.float64)
    j = np.broadcast_to(np.arange(lst.rel.shape[1], dtype=np.float64), lst.rel.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((r_above + n_above + u_above) / j) * (
            (r_above + INFAP_EPSILON) / (r_above + n_above + 2 * INFAP_EPSILON)
        )
    term = np.where(j == 0, 1.0, term)
    return divide_or_zero(row_sum(np.where(relevant, term, 0.0)), h.n_relevant)


def _interpolated(h) -> np.ndarray:
    """(n_queries, h) the interpolated precision at each relevant retrieved document: the largest
    precision at its rank or below, ``max_{j' >= j} j' / rank_j'`` (0 in the padding)."""
    j = np.arange(1, h.ranks.shape[1] + 1, dtype=np.float64)
    precision = j / h.ranks
    return np.flip(np.maximum.accumulate(np.flip(precision, axis=1), axis=1), axis=1)


def _iprec(h, points) -> list[np.ndarray]:
    """trec_eval's interpolated precision at each recall point p: at the ``lround(p R)``-th
    relevant document (the first for 0), 0 past the relevant documents retrieved."""
    best = _interpolated(h)
    found = finite_count(h.ranks)
    r = np.asarray(h.n_relevant, dtype=np.float64)
    out = []
    for p in points:
        x = p * r
        cut = np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)).astype(np.int64)  # C's lround
        at = np.clip(np.maximum(cut, 1) - 1, 0, best.shape[1] - 1)
        value = np.take_along_axis(best, at[:, None], 1)[:, 0]
        out.append(np.where((cut <= found) & (found > 0), value, 0.0))
    return out


def iprec_at_recall(h, cutoff) -> np.ndarray:
    """Interpolated precision at recall ``cutoff`` (trec_eval's iprec_at_recall_p): the largest
    precision at or below the rank of the ``lround(p R)``-th relevant document, 0 if the run does
    not retrieve that many."""
    return _iprec(h, [cutoff])[0]


def eleven_point_average(h, cutoff=None) -> np.ndarray:
    """trec_eval's 11pt_avg: the mean interpolated precision over the recall points ``cutoff``
    (default 0, 0.1, ..., 1), summed from the highest point down as trec_eval does."""
    points = sorted(RECALL_LEVELS if cutoff is None else cutoff)
    total = np.zeros(h.n_relevant.shape)
    for value in reversed(_iprec(h, points)):
        total = total + value
    return total / len(points)


def rprec_mult(h, cutoff) -> np.ndarray:
    """trec_eval's Rprec_mult_m: precision at ``c = floor(m R + 0.9)`` documents (relevant among
    the top c / c, counting documents not retrieved as non-relevant); 0 when c = 0."""
    r = np.asarray(h.n_relevant, dtype=np.float64)
    c = np.floor(cutoff * r + 0.9)
    within = np.count_nonzero(h.ranks <= c[:, None], axis=1)
    return divide_or_zero(within, c)


def binary_gain(h, cutoff=None) -> np.ndarray:
    r"""trec_eval's binG: :math:`\frac{1}{R}\sum_r 1 / \log_2(2 + n_r)` over the retrieved relevant
    documents r, :math:`n_r` the non-relevant (or unjudged) documents above r."""
    j = np.arange(1, h.ranks.shape[1] + 1, dtype=np.float64)
    with np.errstate(divide="ignore"):
        term = np.where(np.isfinite(h.ranks), 1.0 / np.log2(3.0 + (h.ranks - 1.0) - j), 0.0)
    return divide_or_zero(row_sum(term), h.n_relevant)
