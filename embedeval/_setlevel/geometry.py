"""Embedding geometry: how many principal directions carry the variance (OML's ``pcf``).

A space whose variance sits in a few directions uses little of its dimension (a sign of
collapse); one that spreads it evenly uses all of it. ``pcf@r`` is the fraction of the d
principal components needed to explain a share r of the total variance.

Everything comes from the d x d scatter matrix of the centred embeddings, accumulated in
float64 over blocks of rows (two passes: the mean, then the scatter), so memory is O(d^2)
whatever n, and a memory-mapped file is streamed.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .._core import budget as _budget
from .._inputs.arrays import prepare


def _rows(x: np.ndarray, start: int, stop: int, cosine: bool) -> np.ndarray:
    """Rows ``start:stop`` in float64, L2-normalised in float32 first for cosine (as searched)."""
    block = x[start:stop]
    return (prepare(block, "cosine") if cosine else block).astype(np.float64)


def scatter_matrix(embeddings, *, block_rows: int | None = None, cosine: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Mean and scatter matrix of the rows, in float64.

    .. math:: \\mu = \\frac{1}{n} \\sum_i x_i, \\qquad S = \\sum_i (x_i - \\mu)(x_i - \\mu)^T

    Parameters
    ----------
    embeddings : numpy.ndarray of shape (n, d)
        Finite rows, as the entry point checked them (a memory map is streamed).
    block_rows : int, optional
        Rows per block (default: ``2**22 // d``); the result does not depend on it beyond rounding.
    cosine : bool
        L2-normalise each row first (block by block, so a memory-mapped file is still streamed).

    Returns
    -------
    mean : numpy.ndarray of shape (d,), float64
    scatter : numpy.ndarray of shape (d, d), float64, symmetric positive semi-definite
    """
    x = embeddings
    n, d = x.shape
    rows = block_rows or max(1, _budget.SCATTER_ELEMENTS // d)
    # Two passes: centring before the products avoids the cancellation of sum(x x^T) - n mu mu^T.
    total = np.zeros(d)
    for start in range(0, n, rows):
        total += _rows(x, start, start + rows, cosine).sum(axis=0)
    mean = total / n
    scatter = np.zeros((d, d))
    for start in range(0, n, rows):
        centred = _rows(x, start, start + rows, cosine) - mean
        scatter += centred.T @ centred
    return mean, (scatter + scatter.T) / 2


def explained_variance(embeddings, *, block_rows: int | None = None, cosine: bool = False) -> np.ndarray:
    """Variance along each principal direction, largest first.

    The eigenvalues of the sample covariance ``S / (n - 1)`` (0 for n = 1), clipped at 0
    (rounding can leave tiny negative eigenvalues of a singular matrix).

    Returns
    -------
    numpy.ndarray of shape (d,), float64, non-increasing
    """
    _, scatter = scatter_matrix(embeddings, block_rows=block_rows, cosine=cosine)
    eigenvalues = np.clip(np.linalg.eigvalsh(scatter)[::-1], 0.0, None)
    return eigenvalues / max(embeddings.shape[0] - 1, 1)


def pcf(embeddings, shares=(0.5,), *, block_rows: int | None = None, cosine: bool = False) -> dict[float, float]:
    """Principal components fraction: the share of the d components needed to explain a share
    r of the variance (OML's ``pcf``).

    With the covariance eigenvalues :math:`\\lambda_1 \\ge \\dots \\ge \\lambda_d` and the cumulative
    shares :math:`c_k = \\sum_{i \\le k} \\lambda_i / \\sum_{i \\le d} \\lambda_i`, the number of
    components for a share r is the smallest n whose first n components explain more than r,

    .. math:: n(r) = \\min(d,\\; 1 + \\#\\{k : c_k \\le r\\}), \\qquad pcf@r = n(r) / d,

    OML's rule (``searchsorted(c, r, side="right") + 1``), capped at d so that r = 1 gives 1.

    Parameters
    ----------
    embeddings : numpy.ndarray of shape (n, d)
        As :func:`scatter_matrix` takes them.
    shares : sequence of float in (0, 1]
        The levels of the ``pcf@r`` metrics asked for (checked when their names were read).
    block_rows : int, optional
        Rows per block of the scatter accumulation.
    cosine : bool
        The spectrum of the L2-normalised rows (the space a cosine search ranks in).

    Returns
    -------
    dict of float to float
        ``{r: pcf@r}``, each in [1/d, 1]. NaN for every r, with a RuntimeWarning, when the
        embeddings have no variance (constant rows, or a single row): no direction explains anything.

    References
    ----------
    Open Metric Learning, ``oml.functional.metrics.calc_pcf``.

    Examples
    --------
    Variances 9, 4, 1, 1 along the axes: the first component explains 60%, two explain 87%.

    >>> x = np.vstack([np.diag([3.0, 2.0, 1.0, 1.0]), -np.diag([3.0, 2.0, 1.0, 1.0])])
    >>> pcf(x, (0.5, 0.8, 0.95))
    {0.5: 0.25, 0.8: 0.5, 0.95: 1.0}
    """
    variances = explained_variance(embeddings, block_rows=block_rows, cosine=cosine)
    d = variances.size
    cumulative = np.cumsum(variances)
    if not cumulative[-1] > 0:
        warnings.warn("pcf is undefined: the embeddings have no variance (all rows equal); NaN", RuntimeWarning, 2)
        return {r: math.nan for r in shares}
    cumulative /= cumulative[-1]  # the last share is exactly 1
    counts = np.searchsorted(cumulative, shares, side="right")
    return {r: min(d, int(c) + 1) / d for r, c in zip(shares, counts, strict=True)}
