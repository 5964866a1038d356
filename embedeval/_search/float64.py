"""float64 distances of (query, reference) pairs: what decides the order of near-tied candidates."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import budget as _budget


def exact_distance(queries: np.ndarray, references: np.ndarray, euclidean: bool) -> np.ndarray:
    r"""float64 distance of each (query, reference) row pair, smaller is nearer.

    Parameters
    ----------
    queries, references : numpy.ndarray of shape (m, d)
    euclidean : bool
        True: the squared euclidean distance :math:`\sum_j (r_j - q_j)^2`; False: minus the
        inner product :math:`-\sum_j q_j r_j`.

    Returns
    -------
    numpy.ndarray of shape (m,), float64
    """
    if euclidean:
        diff = np.subtract(references, queries, dtype=np.float64)
        return np.multiply(diff, diff, out=diff).sum(axis=1)
    return -np.multiply(references, queries, dtype=np.float64).sum(axis=1)


def pair_distances(
    queries: np.ndarray,
    rows: np.ndarray,
    members: np.ndarray,
    reference_rows: Callable[[np.ndarray], np.ndarray],
    euclidean: bool,
) -> np.ndarray:
    """float64 distance of ``queries[rows[i]]`` to reference ``members[i]`` for every pair i.

    Computed in chunks of about ``_budget.RECOMPUTE_ELEMENTS`` float64 elements, so the
    temporaries stay small (in cache) whatever the number of pairs; each pair's value does not
    depend on the chunking.

    Parameters
    ----------
    queries : numpy.ndarray of shape (b, d), float32
    rows : numpy.ndarray of shape (m,), int
        The query row of each pair.
    members : numpy.ndarray of shape (m,), int
        The reference index of each pair.
    reference_rows : callable
        Maps an int array of shape (c,) to the (prepared) reference vectors, shape (c, d).
    euclidean : bool
        See :func:`exact_distance`.

    Returns
    -------
    numpy.ndarray of shape (m,), float64
    """
    out = np.empty(rows.size)
    step = max(1, _budget.RECOMPUTE_ELEMENTS // queries.shape[1])
    for s in range(0, rows.size, step):
        sl = slice(s, s + step)
        out[sl] = exact_distance(queries[rows[sl]], reference_rows(members[sl]), euclidean)
    return out


def max_norm(vectors: np.ndarray) -> float:
    """The largest L2 norm of the rows of ``vectors`` (n, d), in float64, for the error bound."""
    return float(np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64).max()))
