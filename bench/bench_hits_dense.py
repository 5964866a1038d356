"""hits_from_dense: a stable sort of each row's booleans against a scatter of its nonzero
positions (bench/NOTES.md, "Hits from a dense relevance matrix").

Run from the repository root: ``python bench/bench_hits_dense.py``. Best of five, milliseconds.
"""

from __future__ import annotations

import os
import sys
import timeit

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))  # this checkout's embedeval
from embedeval._metrics.kernels import hits_from_dense, pack

CASES = (((20_000, 100), 0.1), ((20_000, 100), 0.5), ((2_000, 1_000), 0.02))


def scatter(relevant: np.ndarray) -> np.ndarray:
    """The ranks of the relevant columns, by scattering ``np.nonzero`` into padded rows."""
    rows, cols = np.nonzero(relevant)
    return pack(rows, cols + 1.0, relevant.shape[0])


def best_ms(run) -> float:
    return min(timeit.repeat(run, number=5, repeat=5)) / 5 * 1e3


def main() -> None:
    rng = np.random.default_rng(0)
    for shape, share in CASES:
        relevant = rng.random(shape) < share
        n_relevant = relevant.sum(axis=1)
        assert np.array_equal(scatter(relevant), hits_from_dense(relevant, n_relevant).ranks)
        sort_ms = best_ms(lambda r=relevant, n=n_relevant: hits_from_dense(r, n))
        scatter_ms = best_ms(lambda r=relevant: scatter(r))
        print(f"{shape[0]:,} x {shape[1]:,}, relevant {share}: sort {sort_ms:.1f} ms, scatter {scatter_ms:.1f} ms")


if __name__ == "__main__":
    main()
