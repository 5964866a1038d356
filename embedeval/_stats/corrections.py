"""Multiple-testing corrections: Holm, Bonferroni (family-wise error) and Benjamini-Hochberg
(false discovery rate), each turning m p-values into m adjusted p-values capped at 1.

NaN p-values (a comparison without queries) stay NaN and do not count in the family.
"""

from __future__ import annotations

import numpy as np


def bonferroni(p: np.ndarray) -> np.ndarray:
    """``min(1, m * p)``: every p-value times the size of the family."""
    return np.minimum(p * p.size, 1.0)


def holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down: the i-th smallest p-value (i = 0, 1, ...) times (m - i), made
    non-decreasing along the sorted order, capped at 1."""
    order = np.argsort(p, kind="stable")
    stepped = np.maximum.accumulate((p.size - np.arange(p.size)) * p[order])
    out = np.empty_like(p)
    out[order] = np.minimum(stepped, 1.0)
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg's step-up: the i-th smallest p-value (i = 1..m) times m / i, made
    non-increasing from the largest down, capped at 1 (the false discovery rate)."""
    order = np.argsort(p, kind="stable")
    scaled = p[order] * p.size / np.arange(1, p.size + 1)
    stepped = np.minimum.accumulate(scaled[::-1])[::-1]
    out = np.empty_like(p)
    out[order] = np.minimum(stepped, 1.0)
    return out


CORRECTIONS = {
    "holm": (holm, "Holm's step-down (family-wise error rate)"),
    "bonferroni": (bonferroni, "Bonferroni (family-wise error rate)"),
    "bh": (benjamini_hochberg, "Benjamini-Hochberg (false discovery rate)"),
    "none": (lambda p: p.copy(), "no correction"),
}


def adjust(p_values, method: str) -> np.ndarray:
    """The p-values adjusted by ``method`` (a key of :data:`CORRECTIONS`), NaN left in place
    and out of the family."""
    p = np.asarray(p_values, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    known = ~np.isnan(p)
    out[known] = CORRECTIONS[method][0](p[known])
    return out
