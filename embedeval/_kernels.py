"""Per-query metric kernels over a ranked relevance matrix.

Every input form (embeddings with labels, ranked id lists, score matrices) is reduced to

* ``hits``: array of shape (n_queries, depth), ``hits[q, i]`` the relevance of the item at
  rank ``i + 1`` for query ``q`` (bool, or a non-negative gain for graded metrics), padded with
  zeros past the end of a query's ranking;
* ``n_relevant``: int array of shape (n_queries,), the number of relevant items the query has
  in the whole collection (not only among those retrieved).

Each kernel returns a float64 array of shape (n_queries,). Callers guarantee that ``depth``
covers what the kernel reads (``k`` columns, ``R`` columns, or every relevant item); kernels do
not look past ``depth``. Queries with ``n_relevant == 0`` are the caller's business: kernels
that divide by it return NaN there.
"""

from __future__ import annotations

import numpy as np


def _ranks(depth: int) -> np.ndarray:
    return np.arange(1, depth + 1, dtype=np.float64)


def _row_sum(values: np.ndarray) -> np.ndarray:
    """Row sums accumulated left to right, so trailing zero padding cannot change a bit
    (numpy's pairwise ``sum`` groups terms by row length, which varies with ranking depth)."""
    if values.shape[1] == 0:
        return np.zeros(values.shape[0])
    return np.cumsum(values, axis=1)[:, -1]


def _safe_divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    den = np.asarray(den, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def precision_at(hits: np.ndarray, k: int) -> np.ndarray:
    r"""Precision@k: :math:`\frac{1}{k}\sum_{i \le k} rel_i`. Divides by ``k`` even when fewer
    than ``k`` items were retrieved (trec_eval's convention)."""
    return np.count_nonzero(hits[:, :k], axis=1) / float(k)


def hit_at(hits: np.ndarray, k: int) -> np.ndarray:
    r"""Hit rate@k (metric-learning Recall@K): 1 if any of the top ``k`` is relevant, else 0."""
    return np.any(hits[:, :k], axis=1).astype(np.float64)


def recall_at(hits: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    r"""trec_eval recall@k: :math:`\frac{1}{R}\sum_{i \le k} rel_i`."""
    return _safe_divide(np.count_nonzero(hits[:, :k], axis=1), n_relevant)


def capped_recall_at(hits: np.ndarray, n_relevant: np.ndarray, k: int) -> np.ndarray:
    r"""Capped recall@k: :math:`\frac{1}{\min(k, R)}\sum_{i \le k} rel_i` (BEIR's convention)."""
    return _safe_divide(np.count_nonzero(hits[:, :k], axis=1), np.minimum(n_relevant, k))


def r_precision(hits: np.ndarray, n_relevant: np.ndarray) -> np.ndarray:
    r"""R-precision: :math:`\frac{1}{R}\sum_{i \le R} rel_i`, with R the query's own count."""
    in_top_r = _ranks(hits.shape[1])[None, :] <= n_relevant[:, None]
    return _safe_divide(np.count_nonzero(hits.astype(bool) & in_top_r, axis=1), n_relevant)


def average_precision(hits: np.ndarray, n_relevant: np.ndarray, cutoff: int | np.ndarray | None = None) -> np.ndarray:
    r"""Average precision, trec_eval's denominator:
    :math:`AP@k = \frac{1}{R}\sum_{i \le k} P(i)\,rel_i`, :math:`P(i) = \frac{1}{i}\sum_{j \le i} rel_j`.

    ``cutoff`` None sums over the whole ranking (``hits`` must then contain every relevant
    item); an int truncates at ``k``; an array truncates each query at its own value, which
    with ``cutoff = n_relevant`` is MAP@R of Musgrave et al. 2020.
    """
    rel = hits.astype(bool)
    precision = np.cumsum(rel, axis=1, dtype=np.float64) / _ranks(rel.shape[1])
    if cutoff is not None:
        cut = np.broadcast_to(np.asarray(cutoff), (rel.shape[0],))
        rel = rel & (_ranks(rel.shape[1])[None, :] <= cut[:, None])
    return _safe_divide(_row_sum(np.where(rel, precision, 0.0)), n_relevant)


def average_precision_over_hits(hits: np.ndarray, k: int) -> np.ndarray:
    r"""AP@k divided by the number of hits in the top ``k`` (the tutorial's convention):
    :math:`\frac{\sum_{i \le k} P(i)\,rel_i}{\sum_{i \le k} rel_i}`, 0 when there is no hit."""
    rel = hits[:, :k].astype(bool)
    precision = np.cumsum(rel, axis=1, dtype=np.float64) / _ranks(rel.shape[1])
    n_hits = np.count_nonzero(rel, axis=1)
    return np.where(n_hits > 0, _row_sum(np.where(rel, precision, 0.0)) / np.maximum(n_hits, 1), 0.0)


def reciprocal_rank(hits: np.ndarray, k: int | None = None) -> np.ndarray:
    r"""Reciprocal rank of the first relevant item: :math:`1/\mathrm{rank}_1`, 0 when none is
    within the cutoff ``k`` (None: within ``hits``, which must then contain a relevant item)."""
    rel = hits[:, :k].astype(bool) if k is not None else hits.astype(bool)
    found = rel.any(axis=1)
    first = np.argmax(rel, axis=1) + 1.0
    return np.where(found, 1.0 / first, 0.0)
