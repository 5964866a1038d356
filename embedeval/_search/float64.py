"""float64 distances of (query, reference) pairs: what decides the order of near-tied candidates."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import budget as _budget
from .._core import compiled

_EXACT_CACHED = compiled.in_cache(f"{__package__}.exact_kernels", "_pair_values_into")


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


def compiles_exact(units: int) -> bool:
    """Whether :func:`exact_pairs` of ``units`` elements (pairs x d) takes the compiled kernel:
    compiled kernels on, and it is in numba's on-disk cache or has repaid its compilation
    (:data:`embedeval._core.budget.EXACT_COMPILED_FROM`)."""
    return compiled.repaid("exact", units, _budget.EXACT_COMPILED_FROM, _EXACT_CACHED)


def exact_pairs(
    queries: np.ndarray,
    references: np.ndarray,
    rows: np.ndarray,
    cols: np.ndarray,
    euclidean: bool,
    kernel: bool | None = None,
) -> np.ndarray:
    """:func:`exact_distance` of ``(queries[rows[i]], references[cols[i]])`` for every pair i.

    The compiled kernel (:func:`embedeval._search.exact_kernels.pair_values`, the same numbers bit
    for bit, no gathered temporaries) once it repays its compilation
    (:func:`embedeval._core.compiled.repaid`); otherwise numpy's passes, :func:`pair_distances`.

    Parameters
    ----------
    queries, references : numpy.ndarray of shape (n_q, d), (n_r, d), float32
    rows, cols : numpy.ndarray of shape (m,), int
    euclidean : bool
    kernel : bool, optional
        The caller's :func:`compiles_exact` for a larger whole (default: asked here).

    Returns
    -------
    numpy.ndarray of shape (m,), float64
    """
    d = queries.shape[1]
    if compiles_exact(rows.size * d) if kernel is None else kernel:
        from . import exact_kernels

        rows, cols = np.asarray(rows, dtype=np.int64), np.asarray(cols, dtype=np.int64)  # one signature
        return exact_kernels.pair_values(
            np.ascontiguousarray(queries), np.ascontiguousarray(references), rows, cols, euclidean
        )
    return pair_distances(queries, rows, cols, references.__getitem__, euclidean)


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


def squared_norms(vectors: np.ndarray) -> np.ndarray:
    """(n,) float64: the squared L2 norm of each row of ``vectors`` (n, d), summed in float64."""
    return np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64)


def norms(vectors: np.ndarray) -> np.ndarray:
    """(n,) float64: the L2 norm of each row of ``vectors`` (n, d), for the error bound's S."""
    return np.sqrt(squared_norms(vectors))


def max_norm(vectors: np.ndarray) -> float:
    """The largest L2 norm of the rows of ``vectors`` (n, d), in float64, for the error bound."""
    return float(norms(vectors).max())
