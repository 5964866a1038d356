"""How many pairs a float32 tile could not decide, for the verification's grid (issue 42).

    python bench/refine_fractions.py            # n = 20,000, d = 128 (row 5's data) and harder data

For each data set: every positive pair's exact distance (classes of 200), a seeded sample of
negative pairs, and the rigorous float32 bound E of a pair's distance (pairs.py's bound with
u = 2^-24: 1.5 (2d + 8) u (|q| + |r|)^2, per pair, or with the tile's largest norms). It prints
the share of pairs whose interval [D - E, D + E] crosses a bin edge of a uniform grid (65,536
bins, the default, and coarser ones) over the distances, and the share of negative pairs whose
interval holds a positive pair's distance: those need a float64 value for the AUROC whatever
the grid, because their order against that positive is not known from float32.
"""

from __future__ import annotations

import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from _common import gaussian_classes

U32 = 2.0**-24


def datasets(n, d, seed=0):
    rng = np.random.default_rng(seed)
    x, labels = gaussian_classes(n, d, 100)
    yield "row 5 (gaussian classes)", x, labels
    centres = 3 * rng.standard_normal((100, d), dtype=np.float32)
    yield "well separated (centres x3)", np.ascontiguousarray(centres[labels] + x - x.mean(0)), labels
    yield "lattice {-2..2}^d (exact ties)", rng.integers(-2, 3, (n, d)).astype(np.float32), labels
    collapsed = 10 + 1e-3 * rng.standard_normal((n, d), dtype=np.float32)
    yield "collapsed (10 + 1e-3 noise)", np.ascontiguousarray(collapsed, dtype=np.float32), labels


def fractions(x, labels, samples=200_000, seed=1):
    x64 = x.astype(np.float64)
    norm = np.sqrt((x64**2).sum(1))
    positives = []
    for c in np.unique(labels):
        m = np.flatnonzero(labels == c)
        i, j = np.triu_indices(m.size, 1)
        positives.append(((x64[m[i]] - x64[m[j]]) ** 2).sum(1))
    positives = np.sort(np.concatenate(positives))
    rng = np.random.default_rng(seed)
    i, j = rng.integers(0, len(x), samples), rng.integers(0, len(x), samples)
    keep = labels[i] != labels[j]
    i, j = i[keep], j[keep]
    negatives = ((x64[i] - x64[j]) ** 2).sum(1)
    slack = 1.5 * (2 * x.shape[1] + 8) * U32
    bounds = {"per pair": slack * (norm[i] + norm[j]) ** 2, "tile max": np.full(i.size, slack * (2 * norm.max()) ** 2)}
    low, high = min(negatives.min(), positives.min()), max(negatives.max(), positives.max())
    out = {}
    for name, e in bounds.items():
        inside = np.searchsorted(positives, negatives + e, "right") > np.searchsorted(positives, negatives - e, "left")
        row = {"E median": float(np.median(e)), "negatives with a positive inside": float(inside.mean())}
        for bins in (1 << 16, 1 << 12, 1 << 8):
            scale = bins / (high - low)
            row[f"cross an edge, {bins} bins"] = float(
                np.mean(np.floor((negatives - e - low) * scale) != np.floor((negatives + e - low) * scale))
            )
        out[name] = row
    return out


def main():
    for name, x, labels in datasets(20_000, 128):
        print(f"## {name}")
        for bound, row in fractions(x, labels).items():
            print(f"  {bound}: " + ", ".join(f"{k} {v:.4g}" for k, v in row.items()))


if __name__ == "__main__":
    main()
