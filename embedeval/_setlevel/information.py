"""Information-theoretic agreement of two partitions of the same items: NMI and AMI.

The scores compare two partitions of the same n items (the class labels and a clustering)
through their contingency table. Everything is computed with numpy in float64; the expected
mutual information of AMI is exact (the hypergeometric model of Vinh, Epps & Bailey 2010),
not sampled. The clustering itself is :mod:`embedeval._setlevel.clustering`.

Degenerate partitions follow scikit-learn (whose values these are, to rounding):

* both partitions a single block (this includes n = 1): NMI = AMI = 1;
* exactly one of them a single block: NMI = AMI = 0 (its entropy is 0, so is the mutual information);
* both all singletons (n >= 2): NMI = AMI = 1 (the partitions are identical);
* exactly one all singletons: AMI = 0 (every such partition shares the same mutual information with
  the other, so none beats chance); NMI is then ``2 H / (H + log n)`` as usual.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._core import budget as _budget
from .._inputs.arrays import encode_labels

# The log-factorial table is anchored on math.lgamma every this many integers (bounds the
# rounding a running sum of logs accumulates).
_LGAMMA_ANCHOR = 128


@dataclass(frozen=True)
class Contingency:
    """The non-zero cells of the contingency table of two codings of the same n items.

    Attributes
    ----------
    rows, cols : numpy.ndarray of shape (n_cells,), int64
        Codes of the first and second partition of each non-zero cell.
    counts : numpy.ndarray of shape (n_cells,), int64
        Items in the cell, ``n_ij``.
    row_sums, col_sums : numpy.ndarray of shape (n_rows,) and (n_cols,), int64
        Block sizes ``a_i`` and ``b_j`` of the two partitions (every code in ``0..max`` that occurs).
    n : int
        The number of items.
    """

    rows: np.ndarray
    cols: np.ndarray
    counts: np.ndarray
    row_sums: np.ndarray
    col_sums: np.ndarray
    n: int


def contingency(first: np.ndarray, second: np.ndarray) -> Contingency:
    """Count the items of each (first, second) code pair.

    Parameters
    ----------
    first, second : numpy.ndarray of shape (n,), int
        Dense codes: every value in ``0..k-1`` occurs (as :func:`embedeval._inputs.arrays.encode_labels` gives).

    A small table is counted with one ``bincount`` of the combined code ``first * k2 + second``;
    a large one (thousands of classes by thousands of clusters) by sorting the combined codes,
    so memory stays proportional to the items, not to the table.
    """
    first = np.asarray(first, dtype=np.int64)
    second = np.asarray(second, dtype=np.int64)
    k1, k2 = int(first.max()) + 1, int(second.max()) + 1
    combined = first * k2 + second
    if k1 * k2 <= _budget.DENSE_CONTINGENCY_CELLS:
        table = np.bincount(combined, minlength=k1 * k2)
        cells = np.flatnonzero(table)
        counts = table[cells]
    else:
        cells, counts = np.unique(combined, return_counts=True)
    rows, cols = np.divmod(cells, k2)
    return Contingency(
        rows, cols, counts, np.bincount(first, minlength=k1), np.bincount(second, minlength=k2), first.shape[0]
    )


def entropy(sizes: np.ndarray, n: int) -> float:
    """Entropy (natural log) of a partition with block sizes ``sizes``:
    ``H = -sum_i (a_i / n) log(a_i / n)``."""
    p = sizes[sizes > 0] / n
    return float(-(p * np.log(p)).sum()) if p.size > 1 else 0.0


def mutual_information(table: Contingency) -> float:
    """``MI = sum_ij (n_ij / n) log(n n_ij / (a_i b_j))`` over the non-zero cells, clipped at 0."""
    n = table.n
    a, b = table.row_sums, table.col_sums
    if np.count_nonzero(a) == 1 or np.count_nonzero(b) == 1:
        return 0.0
    nij = table.counts.astype(np.float64)
    log_ratio = np.log(nij) + math.log(n) - np.log(a[table.rows]) - np.log(b[table.cols])
    return max(float((nij * log_ratio).sum() / n), 0.0)


def _log_factorials(n: int) -> np.ndarray:
    """``log(k!)`` for k = 0..n, float64: running sums of ``log k`` restarted from ``math.lgamma``
    every ``_LGAMMA_ANCHOR`` integers, so rounding cannot accumulate over the whole table (a plain
    cumulative sum up to n = 10^6 would be off by ~1e-8; anchored, by a few ulps of the value)."""
    out = np.empty(n + 1)
    logs = np.log(np.arange(1, n + 1, dtype=np.float64))
    for start in range(0, n + 1, _LGAMMA_ANCHOR):
        stop = min(start + _LGAMMA_ANCHOR, n + 1)
        out[start] = math.lgamma(start + 1)
        if stop > start + 1:
            out[start + 1 : stop] = out[start] + np.cumsum(logs[start : stop - 1])
    return out


def expected_mutual_information(row_sums: np.ndarray, col_sums: np.ndarray, n: int) -> float:
    """Exact E[MI] over all partitions with these block sizes (hypergeometric model).

    .. math::
        E[MI] = \\sum_i \\sum_j \\sum_{k=\\max(1, a_i + b_j - n)}^{\\min(a_i, b_j)}
        \\frac{k}{n} \\log\\frac{n k}{a_i b_j}
        \\frac{a_i!\\, b_j!\\, (n - a_i)!\\, (n - b_j)!}{n!\\, k!\\, (a_i - k)!\\, (b_j - k)!\\, (n - a_i - b_j + k)!}

    The inner sum depends on (a_i, b_j) only, so it is evaluated once per pair of distinct
    block sizes and weighted by how often each size occurs: balanced partitions with thousands
    of blocks have few distinct sizes. The remaining terms are evaluated in vectorised chunks
    with a table of log-factorials.

    Parameters
    ----------
    row_sums, col_sums : numpy.ndarray of shape (n_rows,) and (n_cols,)
        Block sizes of the two partitions (positive, each summing to ``n``).
    n : int
    """
    row_sums, col_sums = row_sums[row_sums > 0], col_sums[col_sums > 0]
    if row_sums.size == 1 or col_sums.size == 1:
        return 0.0
    sizes_a, mult_a = np.unique(row_sums, return_counts=True)
    sizes_b, mult_b = np.unique(col_sums, return_counts=True)
    lf = _log_factorials(n)
    log_int = np.log(np.maximum(np.arange(n + 1, dtype=np.float64), 1.0))
    a = np.repeat(sizes_a, sizes_b.size)
    b = np.tile(sizes_b, sizes_a.size)
    weight = np.repeat(mult_a, sizes_b.size) * np.tile(mult_b, sizes_a.size).astype(np.float64)
    k_first = np.maximum(1, a + b - n)
    length = np.maximum(np.minimum(a, b) - k_first + 1, 0)
    fixed = lf[a] + lf[b] + lf[n - a] + lf[n - b] - lf[n]  # the k-independent part of log P(k)
    log_ab = log_int[a] + log_int[b]
    total = 0.0
    ends = np.cumsum(length)
    start = 0
    while start < a.size:
        # pairs [start, stop) contribute at most _budget.EMI_TERMS terms (a single pair may exceed it)
        limit = (ends[start - 1] if start else 0) + _budget.EMI_TERMS
        stop = max(start + 1, int(np.searchsorted(ends, limit, "right")))
        pair = np.repeat(np.arange(start, stop), length[start:stop])
        offset = np.arange(pair.size) - np.repeat(
            np.cumsum(length[start:stop]) - length[start:stop], length[start:stop]
        )
        k = k_first[pair] + offset
        ai, bi = a[pair], b[pair]
        log_p = fixed[pair] - lf[k] - lf[ai - k] - lf[bi - k] - lf[n - ai - bi + k]
        term = (k / n) * (math.log(n) + log_int[k] - log_ab[pair]) * np.exp(log_p)
        total += float(np.bincount(pair - start, weights=term, minlength=stop - start) @ weight[start:stop])
        start = stop
    return total


def _table(labels, clusters) -> Contingency:
    """The contingency table of two labelings of the same items (an evaluation's query codes and
    clusters), coded densely."""
    return contingency(encode_labels(np.asarray(labels))[1][0], encode_labels(np.asarray(clusters))[1][0])


def _mean_entropy(table: Contingency) -> float:
    return (entropy(table.row_sums, table.n) + entropy(table.col_sums, table.n)) / 2


def nmi(labels, clusters) -> float:
    """Normalised mutual information of two partitions, arithmetic mean of the entropies.

    .. math:: NMI = \\frac{MI(U, V)}{(H(U) + H(V)) / 2}

    Parameters
    ----------
    labels, clusters : array-like of shape (n,)
        Any hashable labels; only which items share a label matters.

    Returns
    -------
    float in [0, 1]; degenerate partitions as in the module docstring (scikit-learn's values).

    References
    ----------
    Strehl & Ghosh (2002), "Cluster ensembles"; scikit-learn's ``normalized_mutual_info_score``.

    Examples
    --------
    >>> round(nmi([0, 0, 1, 1], [5, 5, 7, 7]), 4)
    1.0
    >>> round(nmi([0, 0, 1, 1], [0, 0, 1, 2]), 4)
    0.8
    """
    table = _table(labels, clusters)
    if table.row_sums.size == 1 and table.col_sums.size == 1:
        return 1.0
    mi = mutual_information(table)
    return 0.0 if mi == 0.0 else float(mi / _mean_entropy(table))


def ami(labels, clusters) -> float:
    """Adjusted mutual information, arithmetic mean of the entropies, exact expectation.

    .. math:: AMI = \\frac{MI(U, V) - E[MI]}{(H(U) + H(V)) / 2 - E[MI]}

    with ``E[MI]`` over all partitions with the same block sizes
    (:func:`expected_mutual_information`). 1 for identical partitions, 0 in expectation for
    random ones, negative when worse than chance.

    Parameters
    ----------
    labels, clusters : array-like of shape (n,)

    Returns
    -------
    float; degenerate partitions as in the module docstring (scikit-learn's values).

    References
    ----------
    Vinh, Epps & Bailey (2010), "Information theoretic measures for clusterings comparison:
    variants, properties, normalization and correction for chance", JMLR 11.

    Examples
    --------
    >>> round(ami([0, 0, 1, 1], [0, 0, 1, 2]), 4)
    0.5714
    """
    table = _table(labels, clusters)
    n = table.n
    ka, kb = table.row_sums.size, table.col_sums.size
    if ka == 1 and kb == 1:
        return 1.0
    if ka == 1 or kb == 1:
        return 0.0
    if ka == n and kb == n:
        return 1.0
    if ka == n or kb == n:
        return 0.0
    mi = mutual_information(table)
    emi = expected_mutual_information(table.row_sums, table.col_sums, n)
    h_mean = _mean_entropy(table)
    # As scikit-learn: keep the signs of numerator and denominator when rounding brings either to 0.
    eps = np.finfo(np.float64).eps
    numerator, denominator = mi - emi, h_mean - emi
    numerator = min(numerator, -eps) if numerator < 0 else max(numerator, eps)
    denominator = min(denominator, -eps) if denominator < 0 else max(denominator, eps)
    return float(numerator / denominator)
