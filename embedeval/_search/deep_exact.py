"""The pieces of the deep ranking that decide order: error bounds and exact resolution of near-ties.

See :mod:`embedeval._search.deep` for how they are used.
"""

from __future__ import annotations

import numpy as np

from .candidates import FLOAT32_UNIT_ROUNDOFF, FLOAT64_UNIT_ROUNDOFF, underflow_bound
from .float64 import pair_distances


def error_bounds(q_norms: np.ndarray, max_norm: float, dim: int, euclidean: bool):
    """(float32, float64) bounds per query, shape (b,) each: E of a product value in that precision.

    Each bounds |value - exact| where value is one product of the query's factors with a
    reference's row (:class:`~embedeval._search.deep.DeepRanker`), summed in any order, and
    exact is :func:`embedeval._search.float64.exact_distance` minus, for the euclidean
    distance, ||q||^2. With u the product's unit roundoff and M the largest reference norm:

    * euclidean, (-2q, 1).(r, ||r||^2) with ||r||^2 computed in float64 (and rounded to
      float32 for a float32 product): 1.01 (d + 4) u (||q|| + M)^2 in float32 and
      1.01 (2d + 4) u (||q|| + M)^2 in float64 (d + 1 products; ||r||^2 with its own d
      roundings);
    * inner product, -q.r: 1.01 (d + 3) u ||q|| M;

    plus, for both, the exact formula's own error from the real distance: 1.01 (d + 4)
    2**-53 (||q|| + M)^2 (squared differences) or 1.01 (d + 3) 2**-53 ||q|| M, and the absolute
    error of products that underflow (:func:`~embedeval._search.candidates.underflow_bound`,
    in each precision). The 1% covers gamma_n's 1 / (1 - n u) and the rounding of the bound
    itself under the preconditions of :mod:`embedeval._search`.
    """
    absolute32 = underflow_bound(dim, FLOAT32_UNIT_ROUNDOFF) + underflow_bound(dim, FLOAT64_UNIT_ROUNDOFF)
    absolute64 = 2 * underflow_bound(dim, FLOAT64_UNIT_ROUNDOFF)
    if euclidean:
        scale = (q_norms + max_norm) ** 2
        exact = 1.01 * (dim + 4) * FLOAT64_UNIT_ROUNDOFF * scale
        bound32 = 1.01 * (dim + 4) * FLOAT32_UNIT_ROUNDOFF * scale
        bound64 = 1.01 * (2 * dim + 4) * FLOAT64_UNIT_ROUNDOFF * scale
    else:
        scale = q_norms * max_norm
        exact = 1.01 * (dim + 3) * FLOAT64_UNIT_ROUNDOFF * scale
        bound32 = 1.01 * (dim + 3) * FLOAT32_UNIT_ROUNDOFF * scale
        bound64 = 1.01 * (dim + 3) * FLOAT64_UNIT_ROUNDOFF * scale
    return bound32 + exact + absolute32, bound64 + exact + absolute64


def exact_ranks(query, depth: int, values, bounds, classes, index, reference, euclidean: bool):
    """Ranks of one query's marked references within depth, from its candidates, every near-tie resolved.

    The candidates must hold every reference ranked before any marked one that can rank
    within depth (see :mod:`embedeval._search.deep`). They are sorted by value; neighbours
    whose values differ by no more than the sum of their bounds form runs, and a run holding
    more than one class (other references and marked ones, or marked ones of two grades) is
    recomputed with the exact formula and ordered by (exact distance, index).

    Parameters
    ----------
    query : numpy.ndarray of shape (d,), float32
    depth : int
    values, bounds : numpy.ndarray of shape (m,), float64
        Each candidate's product value and its error bound.
    classes : numpy.ndarray of shape (m,), float64
        0 for other references; a marked reference's grade (> 0; 1 for binary relevance).
    index : numpy.ndarray of shape (m,), int
        Each candidate's reference index (the tie rule's lower index first).
    reference : numpy.ndarray of shape (n_references, d), float32
    euclidean : bool

    Returns
    -------
    ranks, grades : numpy.ndarray of shape (h,), float64
        1-based ranks, ascending, of the marked references within depth, and their classes.
    """
    order = np.argsort(values, kind="stable")
    values, bounds, classes, index = values[order], bounds[order], classes[order], index[order]
    starts = np.ones(values.size, dtype=bool)
    starts[1:] = np.diff(values) > bounds[1:] + bounds[:-1]
    run = np.cumsum(starts) - 1
    first = np.flatnonzero(starts)
    # A run is mixed when its classes are not all equal: its smallest and largest differ.
    mixed = np.minimum.reduceat(classes, first) < np.maximum.reduceat(classes, first) if first.size else first
    members = np.flatnonzero(mixed[run]) if first.size else first
    if members.size:
        exact = pair_distances(
            query[None, :], np.zeros(members.size, dtype=np.int64), index[members], reference.__getitem__, euclidean
        )
        within = np.lexsort((index[members], exact, run[members]))
        classes[members] = classes[members][within]
    head = classes[:depth]
    at = np.flatnonzero(head > 0)
    return at + 1.0, head[at]
