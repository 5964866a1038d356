"""Each query's exact nearest references: :func:`neighbors`, the ground truth of ANN benchmarks.

The search is the one every evaluation uses (:class:`~embedeval._search.FlatSearcher`: faiss
proposes candidates, float64 decides their order, ties go to the lower index; or on a device,
:class:`~embedeval._search.DeviceSearcher`), run over blocks
of queries so that memory stays bounded by the inputs, the output and one block's work.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._core import budget as _budget
from .._core.neighbors import Neighbors
from .._inputs.arrays import DISTANCES, check_choice, prepare
from .._pipeline.options import Options
from .._search import Device
from .._search.float64 import pair_distances
from .pair import read_pair

__all__ = ["Neighbors", "neighbors"]


def neighbors(
    queries,
    reference=None,
    *,
    k: int = 10,
    distance: str = "euclidean",
    block_size: int | None = None,
    device: str | Device = "cpu",
):
    r"""Each query's exact ``k`` nearest references and their float64 distances.

    Exact ground truth for approximate nearest-neighbour (ANN) benchmarks: the ranking a full
    stable sort of float64 distances would give, whatever the block size or thread count.
    Distances are computed in float64 from the float32 vectors as searched (cosine rows
    normalised in float64 first); references at exactly equal float64 distance are ranked by
    index, lower first. Exact copies of a query in the reference are ranked like any other row.

    Parameters
    ----------
    queries : array-like of shape (n_queries, d)
        Finite real numbers (float64 is rounded to float32, the precision faiss computes in).
    reference : array-like of shape (n_references, d), optional
        The rows to search. Default: leave-one-out, the queries themselves, each query
        excluding its own row (by index: its duplicates stay).
    k : int
        Neighbours per query, from 1 to the number of references (minus one in leave-one-out).
    distance : {"euclidean", "cosine", "inner_product"}
        ``"euclidean"`` ranks by :math:`\lVert q - r \rVert^2` and reports
        :math:`\lVert q - r \rVert`; ``"cosine"`` ranks and reports
        :math:`1 - \cos(q, r)` (no row may be all zeros); ``"inner_product"`` ranks and reports
        :math:`-q \cdot r` (largest inner product first).
    block_size : int, optional
        Queries searched at once (default: as many as the memory budget allows, at most 4096).
        Changes time and memory only, never the result.
    device : {"cpu", "gpu"} or embedeval._search.Device
        ``"gpu"``: float64 distances on every visible CUDA GPU through torch, as in
        :func:`embedeval.evaluate`; the same neighbours and distances, bit for bit.

    Returns
    -------
    Neighbors
        ``indices`` of shape (n_queries, k), int64, and ``distances`` of the same shape,
        float64, nearest first.

    Raises
    ------
    ValueError
        For a ``k`` out of range, an unknown ``distance``, arrays of different dimensions,
        non-finite values, or an all-zero row under cosine.

    Notes
    -----
    Memory: the inputs, the output (16 bytes per neighbour) and one block's search; no
    queries x references matrix is ever made. Euclidean distances are the square roots of the
    float64 squared distances that decide the order, so two neighbours whose squared distances
    differ by less than a rounding may show the same distance.

    Examples
    --------
    >>> import numpy as np
    >>> x = np.array([[0.0], [1.0], [3.0], [1.0]], dtype=np.float32)
    >>> found = neighbors(x, k=2)
    >>> found.indices.tolist()
    [[1, 3], [3, 0], [1, 3], [1, 0]]
    >>> found.distances[0].tolist()
    [1.0, 1.0]
    """
    options = Options.check(
        (), distance=check_choice(distance, "distance", DISTANCES), block_size=block_size, device=device
    )
    leave_one_out = reference is None
    q, r, scale = read_pair(queries, reference, ("queries", "reference"), distance)
    _check_k(k, r.shape[0], leave_one_out)
    searcher = options.searcher(r)
    indices = np.empty((q.shape[0], k), dtype=np.int64)
    distances = np.empty((q.shape[0], k), dtype=np.float64)
    rows = options.block_size or max(1, min(_budget.MAX_BLOCK_ROWS, _budget.BLOCK_ENTRIES // (2 * k + 16)))
    for start in range(0, q.shape[0], rows):
        block = prepare(np.asarray(q[start : start + rows]), distance)
        exclude = np.arange(start, start + block.shape[0]) if leave_one_out else None
        found = searcher.search(block, k, exclude)
        indices[start : start + block.shape[0]] = found
        distances[start : start + block.shape[0]] = _distances(searcher, block, found, distance)
    _unscale(distances, scale, distance)
    return Neighbors(indices, distances, distance, leave_one_out)


def _check_k(k, n_references: int, leave_one_out: bool) -> None:
    largest = n_references - 1 if leave_one_out else n_references
    if isinstance(k, bool) or not isinstance(k, numbers.Integral) or not 1 <= k <= largest:
        where = f"{n_references} rows, each excluding itself" if leave_one_out else f"{n_references} references"
        raise ValueError(f"'k' must be an int from 1 to {largest} ({where}); got {k!r}")


def _distances(searcher, block: np.ndarray, found: np.ndarray, distance: str) -> np.ndarray:
    """float64 ordering keys of each (query, neighbour) pair, shape (b, k): the same formula that
    decided the order of near-ties (squared euclidean or minus the inner product)."""
    b, k = found.shape
    rows = np.repeat(np.arange(b), k)
    keys = pair_distances(block, rows, found.ravel(), searcher.reference_rows, distance == "euclidean")
    return keys.reshape(b, k)


def _unscale(keys: np.ndarray, scale: float, distance: str) -> None:
    """Ordering keys into reported distances, in place: the inputs' power-of-two scale undone
    (exact), then the square root (euclidean) or ``1 +`` (cosine)."""
    if scale != 1.0:
        keys /= scale * scale
    if distance == "euclidean":
        np.sqrt(np.maximum(keys, 0.0, out=keys), out=keys)
    elif distance == "cosine":
        keys += 1.0


def reported_curves(curves: dict, scale: float, distance: str) -> dict:
    """A verification's pair curves (:func:`embedeval._setlevel.pair_curves.pair_curves`) with
    their thresholds and histogram edges as reported distances (:func:`_unscale`)."""
    out = dict(curves)
    for key in ("threshold", "edges"):
        out[key] = np.array(curves[key], dtype=np.float64)
        _unscale(out[key], scale, distance)
    return out
