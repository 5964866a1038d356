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

from .arrays import row_blocks

SAFE_NORMS = (2.0**-40, 2.0**40)  # largest row norms searched as they are
_SMALLEST_NORMAL = 2.0**-126  # float32: below it a component's bits are rounded away by scaling down
_TARGET_EXPONENT = 0  # scale the largest norm into [1/2, 1)


def _extremes(vectors: np.ndarray) -> tuple[float, float]:
    """(largest row norm, smallest nonzero |component|), in float64, read in chunks.

    A float64 array's smallest component is reported as inf: it is rounded to float32 after
    scaling, like any float64 input, so it constrains no scale.
    """
    largest, smallest = 0.0, math.inf
    wide = vectors.dtype != np.float32
    for _, block in row_blocks(vectors):
        if not wide:  # float32: squares and their sums cannot leave float64's range, no copy needed
            norms = np.einsum("ij,ij->i", block, block, dtype=np.float64)
            largest = max(largest, float(np.sqrt(norms.max(initial=0.0))))
            magnitudes = np.abs(block)
            smallest = min(smallest, float(magnitudes.min(where=magnitudes > 0, initial=np.inf)))
            continue
        block = np.asarray(block, dtype=np.float64)
        # Norms of float64 rows near 1e160 (or 1e-170) would overflow (underflow) when squared:
        # scale the block by the power of two of its largest component first (exact).
        top = float(np.abs(block).max(initial=0.0))
        shift = -math.frexp(top)[1] if top else 0
        unit = np.ldexp(block, shift)
        largest = max(largest, math.ldexp(float(np.sqrt(np.einsum("ij,ij->i", unit, unit).max())), -shift))
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
    """``vectors * scale`` rounded to float32; a new array, in chunks.

    The product is formed in float64 with :func:`numpy.ldexp` (a power of two far outside
    float32's range, such as 2**130 for embeddings near 1e-40, is exact there), so it is exact
    for float32 input, and float64 input is rounded to float32 once, at its scaled magnitude.
    """
    out = np.empty(vectors.shape, dtype=np.float32)
    exponent = math.frexp(scale)[1] - 1
    for start, block in row_blocks(vectors):
        out[start : start + block.shape[0]] = np.ldexp(np.asarray(block, dtype=np.float64), exponent)
    return out


def into_safe_range(queries: np.ndarray, references: np.ndarray, names: list[str], distance: str):
    """(queries, references, scale): float32, both multiplied by one power of two when needed.

    float64 input (from ``as_embeddings(..., wide=True)``) is scaled before it is rounded to
    float32, so that values near 1e-50 or 1e39, outside float32's range, keep their bits relative
    to each other instead of rounding to 0 or inf. Cosine is not scaled (its rows are normalised
    in float64 later), but float64 rows whose norms are outside float32's range are, by a power
    of two per array, which changes no direction.
    ``references is queries`` (leave-one-out) is kept: the array is scaled once.
    """
    same = references is queries
    if distance == "cosine":
        queries = _narrow(queries)
        return queries, queries if same else _narrow(references), 1.0
    scale = power_of_two_scale([queries] if same else [queries, references], names)
    if scale == 1.0:
        queries = _narrow(queries)
        return queries, queries if same else _narrow(references), 1.0
    queries = scaled(queries, scale)
    return queries, queries if same else scaled(references, scale), scale


def _narrow(vectors: np.ndarray) -> np.ndarray:
    """float32 as they are; float64 rounded to float32, scaled by a power of two first if their
    largest norm is outside the safe range (for cosine, whose scale is its own per array)."""
    if vectors.dtype == np.float32:
        return vectors
    largest = _extremes(vectors)[0]
    if largest == 0.0 or SAFE_NORMS[0] <= largest <= SAFE_NORMS[1]:
        return scaled(vectors, 1.0)
    return scaled(vectors, 2.0 ** (_TARGET_EXPONENT - math.frexp(largest)[1]))


def scale_config(scale: float) -> dict:
    """For results' config: how the inputs were scaled, if they were."""
    if scale == 1.0:
        return {}
    return {
        "scaled": f"inputs multiplied by 2**{math.frexp(scale)[1] - 1} before the search (exact; rankings unchanged)"
    }
