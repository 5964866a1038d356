"""Keeping float32 search exact at every magnitude: a power-of-two scale into a safe range.

faiss computes distances in float32. The error bound that makes embedeval's ranking exact
(:mod:`embedeval._search`) is relative, plus an absolute term for products that underflow into
float32's subnormal range; it needs no overflow. Euclidean and inner-product rankings do not
change when every query and reference is multiplied by the same power of two, which is exact in
floating point as long as no component leaves the normal range. So embeddings whose largest
row norm is outside [2**-40, 2**40] are multiplied by the power of two that brings it near 1:

* tiny embeddings (norms around 1e-20) would otherwise put most distances inside the absolute
  underflow term, which is exact but would send nearly every candidate to float64 recomputation;
* huge ones (norms around 1e19 and above) would overflow float32's distances to inf, which no
  bound can cover.

Embeddings that span so many magnitudes that no power of two can do both (their smallest nonzero
component would lose bits while their largest norm is brought down) are refused with a clear
error rather than ranked wrongly. Cosine needs none of this: its vectors are normalised in
float64 (:func:`embedeval._inputs.arrays.prepare`), whatever their norm.
"""

from __future__ import annotations

import math

import numpy as np

from .._core import budget as _budget

SAFE_NORMS = (2.0**-40, 2.0**40)  # largest row norms searched as they are
_SMALLEST_NORMAL = 2.0**-126  # float32: below it a component's bits are rounded away by scaling down
_TARGET_EXPONENT = 0  # scale the largest norm into [1/2, 1)


def _extremes(vectors: np.ndarray) -> tuple[float, float]:
    """(largest row norm, smallest nonzero |component|), in float64, read in chunks."""
    largest, smallest = 0.0, math.inf
    for start in range(0, vectors.shape[0], _budget.SCAN_ROWS):
        block = np.asarray(vectors[start : start + _budget.SCAN_ROWS], dtype=np.float64)
        largest = max(largest, float(np.sqrt(np.einsum("ij,ij->i", block, block).max())))
        magnitudes = np.abs(block[block != 0])
        if magnitudes.size:
            smallest = min(smallest, float(magnitudes.min()))
    return largest, smallest


def power_of_two_scale(arrays: list[np.ndarray], names: list[str]) -> float:
    """The power of two to multiply every array by (1.0 when their norms are already safe).

    Raises
    ------
    ValueError
        When the arrays span too many magnitudes to be scaled exactly into float32's safe range.
    """
    extremes = [_extremes(a) for a in arrays]
    largest = max(e[0] for e in extremes)
    smallest = min(e[1] for e in extremes)
    if largest == 0.0 or SAFE_NORMS[0] <= largest <= SAFE_NORMS[1]:
        return 1.0
    exponent = _TARGET_EXPONENT - math.frexp(largest)[1]  # largest * 2**exponent in [1/2, 1)
    if smallest * 2.0**exponent < _SMALLEST_NORMAL:
        # Scaling down so far would round the smallest components: scale down only as far as they
        # allow, which is enough as long as the largest norm then stays safe.
        exponent = math.ceil(math.log2(_SMALLEST_NORMAL / smallest))
        if largest * 2.0**exponent > SAFE_NORMS[1]:
            raise ValueError(
                f"{' and '.join(repr(n) for n in names)} span magnitudes from {smallest:.3g} (smallest nonzero "
                f"component) to {largest:.3g} (largest row norm): more than float32 search can rank exactly "
                "(scaled to avoid overflow, the smallest would lose bits); rescale or clip the embeddings"
            )
    return 2.0**exponent


def scaled(vectors: np.ndarray, scale: float) -> np.ndarray:
    """``vectors * scale`` in float32, exact for a power of two in range; a new array, in chunks."""
    out = np.empty(vectors.shape, dtype=np.float32)
    factor = np.float32(scale)
    for start in range(0, vectors.shape[0], _budget.SCAN_ROWS):
        np.multiply(vectors[start : start + _budget.SCAN_ROWS], factor, out=out[start : start + _budget.SCAN_ROWS])
    return out


def into_safe_range(queries: np.ndarray, references: np.ndarray, names: list[str], distance: str):
    """(queries, references, scale): both multiplied by one power of two when needed (not for cosine).

    ``references is queries`` (leave-one-out) is kept: the array is scaled once.
    """
    if distance == "cosine":
        return queries, references, 1.0
    same = references is queries
    scale = power_of_two_scale([queries] if same else [queries, references], names)
    if scale == 1.0:
        return queries, references, 1.0
    queries = scaled(queries, scale)
    return queries, queries if same else scaled(references, scale), scale


def scale_config(scale: float) -> dict:
    """For results' config: how the inputs were scaled, if they were."""
    if scale == 1.0:
        return {}
    return {
        "scaled": f"inputs multiplied by 2**{math.frexp(scale)[1] - 1} before the search (exact; rankings unchanged)"
    }
