r"""The one error bound behind every exact ranking, and its proof.

Every exact path of embedeval (faiss's candidates in :mod:`.ranking` and :mod:`.flat`, the deep
ranking's float32 and float64 products in :mod:`.deep_exact`, the tie-aware scan in
:mod:`.tied_scan`, the pair tiles of :mod:`embedeval._setlevel.pairs`) computes a distance in a
fast, rounded way and must know how far it may lie from the exact one. They all call
:func:`error_bound`; each states only the count of rounding terms its own formula has.

The bound
---------
A sum of n products computed in floating point with unit roundoff u, in any order, with or
without FMA, satisfies Higham's bound

.. math:: |fl(\textstyle\sum_j a_j b_j) - \sum_j a_j b_j| \le \gamma_n \sum_j |a_j b_j|,
          \qquad \gamma_n = \frac{n u}{1 - n u},

and :math:`\sum_j |q_j r_j| \le \lVert q \rVert \lVert r \rVert` (Cauchy-Schwarz). A distance
built from such sums (a norm, a product, an addition of norms: each adds at most one more
:math:`\gamma` of the same scale) is therefore off by at most :math:`t\,u\,S` with

* :math:`S = (\lVert q \rVert + M)^2` for the squared euclidean distance (every term
  :math:`\lVert q\rVert^2`, :math:`\lVert r\rVert^2`, :math:`2 q \cdot r` is at most S),
* :math:`S = \lVert q \rVert M` for the inner product (and cosine, after normalisation),

M the largest norm on the other side, and t the number of roundings the path's formula makes
(its *terms*: d + 4 for faiss's squared euclidean distance, d + 3 for its inner product, more
where a path adds its own steps; each caller says which). Then

.. math:: E = 1.01\,t\,u\,S + (2d + 4)\,s

where the factor 1.01 covers :math:`\gamma`'s :math:`1 / (1 - n u)` and the rounding of E itself
while :math:`t u \le 0.0099`, and the second term covers products that underflow: each is off by
up to half the precision's subnormal spacing s (:math:`2^{-149}` in float32,
:math:`2^{-1074}` in float64) whatever its size, which no relative bound covers; at most
3d + 2 of them, counted as 2d + 4 spacings (sums that land among subnormal numbers are exact).

How the paths use it: two computed distances that differ by more than :math:`E_a + E_b` are in
their exact order; closer ones are recomputed by the exact formula
(:func:`embedeval._search.float64.exact_distance`). A path that compares a computed value with
the exact formula's own result adds that formula's bound (t = d + 4 or d + 3 in float64).

Preconditions, established for every input by :mod:`embedeval._inputs.magnitude` and
:func:`embedeval._inputs.arrays.prepare` before any search:

* no overflow: S stays below the precision's largest number. Inputs whose largest row norm lies
  outside :math:`[2^{-40}, 2^{40}]` are multiplied by a power of two (exact: rankings and ties
  unchanged); cosine rows are normalised in float64;
* :math:`t u \le 0.0099`: d up to about 166,000 in float32;
* the device computes in genuine float32 or float64: never TF32 or float16, whose u is far
  larger.
"""

from __future__ import annotations

import numpy as np

FLOAT32_UNIT_ROUNDOFF = 2.0**-24
FLOAT64_UNIT_ROUNDOFF = 2.0**-53
# The spacing of each precision's subnormal numbers.
SUBNORMAL_SPACING = {FLOAT32_UNIT_ROUNDOFF: 2.0**-149, FLOAT64_UNIT_ROUNDOFF: 2.0**-1074}
SLACK = 1.01


def underflow_bound(dim: int, unit_roundoff: float) -> float:
    """The absolute part of E: (2d + 4) subnormal spacings of the precision (module docstring)."""
    return (2 * dim + 4) * SUBNORMAL_SPACING[unit_roundoff]


def scale(q_norms, r_norm, euclidean: bool):
    """S of the module docstring: (||q|| + M)^2 (euclidean) or ||q|| M, elementwise over ``q_norms``."""
    return (q_norms + r_norm) ** 2 if euclidean else q_norms * r_norm


def terms(dim: int, euclidean: bool) -> int:
    """t of faiss's distances and of the exact formula: d + 4 (squared euclidean) or d + 3."""
    return dim + (4 if euclidean else 3)


def error_bound(s, t: float, unit_roundoff: float, dim: int) -> np.ndarray | float:
    """E = 1.01 t u S + (2d + 4) s_sub: no computed distance of scale ``s`` whose formula makes
    ``t`` roundings in the precision of ``unit_roundoff`` is off by more (module docstring).

    Parameters
    ----------
    s : float or numpy.ndarray
        S per query (:func:`scale`).
    t : float
        The path's rounding terms (:func:`terms` for faiss's formulas and the exact one).
    unit_roundoff : float
        :data:`FLOAT32_UNIT_ROUNDOFF` or :data:`FLOAT64_UNIT_ROUNDOFF`.
    dim : int
        d, for the underflow term.
    """
    return SLACK * t * unit_roundoff * s + underflow_bound(dim, unit_roundoff)
