"""Per-query metric kernels over the ranks at which relevant items were retrieved.

Every input form (embeddings with labels, ranked id lists, score matrices) is reduced to
:class:`Hits`, a sparse view of each query's ranking:

* ``ranks``: float array of shape (n_queries, h), the 1-based ranks of the relevant retrieved
  items in increasing order, padded with +inf (so ``j / ranks`` and ``ranks <= k`` need no mask);
* ``n_relevant``: int array of shape (n_queries,), R, the number of relevant items the query
  has in the whole collection, retrieved or not;
* for graded metrics, ``gain_ranks`` and ``gain_grades`` (the ranks and grades of retrieved items
  with a positive grade) and ``ideal`` (all judged grades of the query in decreasing order).

Every kernel has the signature ``kernel(hits, cutoff) -> array of shape (n_queries,)``, float64.
``cutoff`` is None (the whole ranking), an int k (its top k), or an int array of shape
(n_queries,) (one cutoff per query: R for the ``@r`` metrics). Kernels that divide by R return
NaN where R = 0 (the callers decide what such a query means). Row sums are accumulated left to
right so that the width of the padding can never change a bit of a result. Which kernel serves
which metric name is declared in :mod:`embedeval._metrics.registry`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._core import budget as _budget
from .._core import compiled
from .._core.csr import offsets_within

_HITS_CACHED = compiled.in_cache(f"{__package__}.hits_kernels", "_within_into", "_precision_sums_into")


@dataclass(frozen=True)
class Hits:
    """The ranks of relevant (and positively graded) retrieved items, per query."""

    ranks: np.ndarray
    n_relevant: np.ndarray
    gain_ranks: np.ndarray | None = None
    gain_grades: np.ndarray | None = None
    ideal: np.ndarray | None = None
    # the whole listing, for trec_eval's measures that read more than the relevant items
    # (:class:`embedeval._metrics.listing.Listing`); None where the input form cannot give it
    listing: object | None = None
    # True where the maker knows every row of ranks ascends with no NaN (the deep ranking's):
    # the compiled reductions then search a row instead of reading it whole
    ascending: bool = False


def pack(rows: np.ndarray, values: np.ndarray, n_rows: int, fill: float = np.inf) -> np.ndarray:
    """Scatter ``values`` into rows of a (n_rows, max count) array, in order; ``rows`` sorted."""
    counts = np.bincount(rows, minlength=n_rows)
    out = np.full((n_rows, max(int(counts.max(initial=0)), 1)), fill, dtype=np.float64)
    out[rows, offsets_within(counts)] = values
    return out


def hits_from_dense(relevant: np.ndarray, n_relevant: np.ndarray) -> Hits:
    """:class:`Hits` from a boolean (n_queries, depth) matrix of ranked relevance."""
    # A stable sort of booleans (a radix sort) moves each row's relevant columns to its
    # front, in order; against scattering the nonzero positions: bench/NOTES.md.
    if relevant.shape[1] == 0:
        return Hits(np.full((relevant.shape[0], 1), np.inf), np.asarray(n_relevant))
    counts = np.count_nonzero(relevant, axis=1)
    width = max(int(counts.max(initial=0)), 1)
    ranks = np.argsort(~relevant, axis=1, kind="stable")[:, :width] + 1.0
    ranks[np.arange(width)[None, :] >= counts[:, None]] = np.inf
    return Hits(ranks, np.asarray(n_relevant))


def hits_from_graded(grades: np.ndarray, threshold: float, n_relevant: np.ndarray, ideal: np.ndarray) -> Hits:
    """:class:`Hits` from a float (n_queries, depth) matrix of ranked grades (0: not judged).

    A ranked item is relevant when its grade reaches ``threshold``; items with a positive grade
    carry gain. ``ideal`` (n_queries, w) holds each query's positive grades in decreasing order.
    """
    ranks = hits_from_dense(grades >= threshold, n_relevant).ranks
    gain_ranks = hits_from_dense(grades > 0, n_relevant).ranks
    finite = np.isfinite(gain_ranks)
    gain_grades = np.zeros(gain_ranks.shape)
    if grades.shape[1]:
        at = np.where(finite, gain_ranks - 1, 0).astype(np.int64)
        gain_grades = np.where(finite, np.take_along_axis(grades, at, 1), 0.0)
    return Hits(ranks, np.asarray(n_relevant), gain_ranks, gain_grades, ideal)


def row_sum(values: np.ndarray) -> np.ndarray:
    """Each row's sum of a (n_queries, w) array, added left to right (0 for w = 0)."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1)[:, -1]


def divide_or_nan(num, den) -> np.ndarray:
    """num / den, NaN where den <= 0 (the registry's kernels: a query without R is undefined)."""
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def divide_or_zero(num, den) -> np.ndarray:
    """num / den, 0 where den == 0 (trec_eval's measures: a 0/0 ratio counts 0)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den != 0, num / np.where(den != 0, den, 1.0), 0.0)


def f1_of(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    """The harmonic mean 2PR/(P+R) of precisions and recalls, 0 where both are 0."""
    total = p + r
    return np.where(total > 0, 2 * p * r / np.where(total > 0, total, 1.0), 0.0)


def _bound(cutoff) -> np.ndarray | float:
    """The cutoff as a bound on ranks, broadcastable against (n_queries, h): inf for None."""
    if cutoff is None:
        return np.inf
    cut = np.asarray(cutoff, dtype=np.float64)
    return cut[:, None] if cut.ndim else cut


def _within(ranks: np.ndarray, cutoff, ascending: bool = False) -> np.ndarray:
    """Relevant retrieved items at rank <= cutoff (``ascending``: :attr:`Hits.ascending`)."""
    if _compiled(ranks):
        from . import hits_kernels  # numba, imported only when compiled kernels are on

        return hits_kernels.within(ranks, cutoff, ascending)
    return np.count_nonzero(ranks <= _bound(cutoff), axis=1)


def finite_count(ranks: np.ndarray, ascending: bool = False) -> np.ndarray:
    """How many of each row's ``ranks`` are finite (ranks are at least 1: ``np.isfinite``'s count),
    by the compiled count where the switch takes it (``ascending``: :attr:`Hits.ascending`)."""
    return _within(ranks, np.finfo(np.float64).max, ascending)


def _compiled(ranks: np.ndarray) -> bool:
    """Whether the compiled reductions take ``ranks`` (:data:`embedeval._core.budget.HITS_COMPILED_FROM`)."""
    return compiled.repaid("hits", ranks.size, _budget.HITS_COMPILED_FROM, _HITS_CACHED)


def precision(h: Hits, cutoff) -> np.ndarray:
    r"""P@k = :math:`\frac{1}{k}\sum_{i \le k} rel_i`; divides by k even if fewer were ranked."""
    return _within(h.ranks, cutoff, h.ascending) / np.asarray(cutoff, dtype=np.float64)


def precision_within(h: Hits, cutoff) -> np.ndarray:
    r"""Precision over a per-query cutoff that may be 0: :math:`\frac{1}{k_q}\sum_{i \le k_q} rel_i`, 0 where
    :math:`k_q = 0` (precision within a Hamming radius: :math:`k_q` references lie within it)."""
    cut = np.asarray(cutoff, dtype=np.float64)
    return np.where(cut > 0, _within(h.ranks, cutoff, h.ascending) / np.maximum(cut, 1.0), 0.0)


def hit_rate(h: Hits, cutoff) -> np.ndarray:
    """Hit rate@k (metric-learning Recall@K): 1 if a relevant item is in the top k, else 0."""
    return (h.ranks[:, 0] <= np.asarray(cutoff, dtype=np.float64)).astype(np.float64)


def recall(h: Hits, cutoff) -> np.ndarray:
    r"""trec_eval recall@k = :math:`\frac{1}{R}\sum_{i \le k} rel_i`."""
    return divide_or_nan(_within(h.ranks, cutoff, h.ascending), h.n_relevant)


def capped_recall(h: Hits, cutoff) -> np.ndarray:
    r"""Capped recall@k = :math:`\frac{1}{\min(k, R)}\sum_{i \le k} rel_i` (BEIR's R_cap@k, OML's precision@k)."""
    return divide_or_nan(_within(h.ranks, cutoff, h.ascending), np.minimum(h.n_relevant, cutoff))


def f1(h: Hits, cutoff) -> np.ndarray:
    r"""F1@k = :math:`\frac{2PR}{P+R}` of P@k and trec recall@k; 0 when both are 0."""
    return f1_of(precision(h, cutoff), recall(h, cutoff))


def r_precision(h: Hits, cutoff=None) -> np.ndarray:
    r"""R-precision = :math:`\frac{1}{R}\sum_{i \le R} rel_i`, R the query's own count."""
    return divide_or_nan(_within(h.ranks, h.n_relevant, h.ascending), h.n_relevant)


def _precision_at_hits(h: Hits, cutoff) -> np.ndarray:
    """P(rank) at each relevant retrieved item within the cutoff (0 elsewhere): j / rank_j."""
    j = np.arange(1, h.ranks.shape[1] + 1, dtype=np.float64)
    p = j / h.ranks  # +inf padding gives 0
    if cutoff is None:
        return p
    return np.where(h.ranks <= _bound(cutoff), p, 0.0)


def _precision_sum(h: Hits, cutoff) -> np.ndarray:
    """Each row's sum of :func:`_precision_at_hits`, left to right."""
    if _compiled(h.ranks):
        from . import hits_kernels  # numba, imported only when compiled kernels are on

        return hits_kernels.precision_sums(h.ranks, cutoff, h.ascending)
    return row_sum(_precision_at_hits(h, cutoff))


def average_precision(h: Hits, cutoff) -> np.ndarray:
    r"""AP@k with trec_eval's denominator, :math:`\frac{1}{R}\sum_{i \le k} P(i)\,rel_i`.

    ``cutoff`` None: the whole ranking; an int: its top k; an array: one cutoff per query,
    which with ``cutoff = R`` is MAP@R of Musgrave et al. 2020.
    """
    return divide_or_nan(_precision_sum(h, cutoff), h.n_relevant)


def average_precision_over_hits(h: Hits, cutoff) -> np.ndarray:
    r""":math:`\frac{\sum_{i \le k} P(i)\,rel_i}{\sum_{i \le k} rel_i}`, 0 without a hit (the tutorial's AP@k)."""
    found = _within(h.ranks, cutoff, h.ascending)
    return np.where(found > 0, _precision_sum(h, cutoff) / np.maximum(found, 1), 0.0)


def capped_average_precision(h: Hits, cutoff) -> np.ndarray:
    r"""AP@k divided by :math:`\min(k, R)`: :math:`\frac{1}{\min(k, R)}\sum_{i \le k} P(i)\,rel_i`.

    sentence-transformers' ``InformationRetrievalEvaluator`` MAP@k: a query whose R relevant
    items all sit in the top k (R <= k) scores as under trec_eval's denominator; with R > k the
    best possible value is 1, not k / R. NaN where R = 0.
    """
    return divide_or_nan(_precision_sum(h, cutoff), np.minimum(h.n_relevant, cutoff))


def trapezoid_average_precision(h: Hits, cutoff=None) -> np.ndarray:
    r"""Revisited Oxford/Paris AP: the area under the precision-recall curve by trapezoids.

    :math:`\frac{1}{R}\sum_j \frac{P(r_j - 1) + P(r_j)}{2}` over the j-th relevant item at rank
    :math:`r_j`, with :math:`P(r_j) = j / r_j`, :math:`P(r_j - 1) = (j - 1)/(r_j - 1)` and
    :math:`P(0) = 1` (Radenovic et al. 2018, ``compute_ap``).
    """
    j = np.arange(1, h.ranks.shape[1] + 1, dtype=np.float64)
    after = j / h.ranks  # +inf padding gives 0
    with np.errstate(divide="ignore", invalid="ignore"):
        before = np.where(h.ranks == 1, 1.0, (j - 1) / (h.ranks - 1))
    before = np.where(np.isfinite(h.ranks), before, 0.0)
    return divide_or_nan(row_sum((before + after) / 2), h.n_relevant)


def revisited_precision(h: Hits, cutoff) -> np.ndarray:
    r"""Revisited Oxford/Paris P@k: precision at :math:`k_q = \min(k, r_R)`, :math:`r_R` the rank of the
    query's last relevant item: (relevant items among the top :math:`k_q`) / :math:`k_q`.

    When every relevant item is in the top k, the cutoff drops to the last of them, so a query
    with R < k can still score 1. NaN where R = 0.
    """
    k = np.asarray(cutoff, dtype=np.float64)
    found = _within(h.ranks, cutoff, h.ascending)
    n_relevant = np.asarray(h.n_relevant)
    every = (found == n_relevant) & (n_relevant > 0)
    at = np.clip(n_relevant - 1, 0, h.ranks.shape[1] - 1)[:, None]
    last = np.take_along_axis(h.ranks, at, 1)[:, 0]  # read only where every relevant item is found
    k_q = np.where(every, np.minimum(last, k), k)
    return np.where(n_relevant > 0, found / k_q, np.nan)


def reciprocal_rank(h: Hits, cutoff) -> np.ndarray:
    """1 / rank of the first relevant item; 0 if there is none (within the top k)."""
    first = h.ranks[:, 0]
    return np.where(first <= (np.inf if cutoff is None else np.asarray(cutoff, dtype=np.float64)), 1.0 / first, 0.0)


def _gain(grades: np.ndarray, exponential: bool) -> np.ndarray:
    grades = np.maximum(grades, 0.0)  # negative judgements carry no gain
    return np.exp2(grades) - 1.0 if exponential else grades


def _dcg(ranks: np.ndarray, grades: np.ndarray, cutoff, exponential: bool) -> np.ndarray:
    inside = ranks <= _bound(cutoff)
    return row_sum(np.where(inside, _gain(grades, exponential) / np.log2(np.where(inside, ranks, 1.0) + 1.0), 0.0))


def _ideal_dcg(ideal: np.ndarray, cutoff, exponential: bool) -> np.ndarray:
    ranks = np.broadcast_to(np.arange(1, ideal.shape[1] + 1, dtype=np.float64), ideal.shape)
    return _dcg(ranks, ideal, cutoff, exponential)


def dcg(h: Hits, cutoff, exponential: bool = False) -> np.ndarray:
    r"""DCG@k = :math:`\sum_{i \le k} g(rel_i)/\log_2(i+1)`, gain :math:`g(rel) = rel` (linear,
    trec_eval) or, with ``exponential``, :math:`2^{rel}-1`."""
    return _dcg(h.gain_ranks, h.gain_grades, cutoff, exponential)


def ndcg(h: Hits, cutoff, exponential: bool = False) -> np.ndarray:
    """DCG@k / ideal DCG@k, the gain as in :func:`dcg`; NaN where the ideal DCG is 0."""
    return divide_or_nan(dcg(h, cutoff, exponential), _ideal_dcg(h.ideal, cutoff, exponential))


def cg(h: Hits, cutoff) -> np.ndarray:
    r"""CG@k = :math:`\sum_{i \le k} rel_i` (linear gain, no discount)."""
    return row_sum(np.where(h.gain_ranks <= _bound(cutoff), np.maximum(h.gain_grades, 0.0), 0.0))
