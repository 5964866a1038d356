"""The tied scan's compiled window pass against its numpy path: identical counts.

Both paths of :class:`~embedeval._search.tied_scan.TiedScanner` (``EMBEDEVAL_KERNELS=numpy``
and the numba kernel) run on the same inputs: ties, duplicates, integer lattices, extreme
magnitudes, chunks of one reference to all; every count must be equal. A kernel that miscounts
a reference below a window, or drops or repeats a window member, changes ``total`` here.
"""

from __future__ import annotations

import numpy as np
import pytest

from embedeval._core import compiled
from embedeval._inputs.arrays import prepare
from embedeval._search import tied_scan
from embedeval._search.tied_scan import TiedScanner

pytestmark = pytest.mark.skipif(compiled._numba() is None, reason="numba not installed")


def _inputs(kind, rng, n, d):
    if kind == "lattice":
        x = rng.integers(-2, 3, size=(n, d)).astype(np.float32)
        x[~x.any(axis=1), 0] = 1.0  # no zero vector (the cosine has no direction for it)
        return x
    if kind == "duplicates":
        base = rng.standard_normal((max(2, n // 4), d)).astype(np.float32)
        return base[rng.integers(0, base.shape[0], n)]
    if kind == "extreme":
        x = rng.standard_normal((n, d)).astype(np.float32)
        return x * np.float32(10.0) ** rng.integers(-15, 16, size=(n, 1)).astype(np.float32)
    return rng.standard_normal((n, d)).astype(np.float32)


def _count(monkeypatch, mode, scanner, queries, grades, ignored, levels):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, mode)
    return scanner.count(queries, grades, ignored, levels)


@pytest.mark.parametrize("kind", ["gaussian", "lattice", "duplicates", "extreme"])
@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
@pytest.mark.parametrize("pairs", [1, 37, 1 << 20])
def test_kernel_and_numpy_counts_are_identical(monkeypatch, kind, distance, pairs):
    rng = np.random.default_rng([len(kind), len(distance), pairs])
    n, b, d = 90, 17, 3
    x = _inputs(kind, rng, n, d)
    reference = prepare(x, distance)
    queries = reference[rng.integers(0, n, b)]
    graded = rng.integers(0, 3, size=(b, n))  # grades 0, 1, 2
    graded[rng.random((b, n)) < 0.6] = 0
    graded[0] = 0  # a query with nothing graded
    left_out = rng.random((b, n)) < 0.1
    levels = np.array([1, 2])
    scanner = TiedScanner(reference, distance == "euclidean", pairs=pairs)
    args = (scanner, queries, lambda s, e: graded[:, s:e], lambda s, e: left_out[:, s:e], levels)
    numpy_counts = _count(monkeypatch, "numpy", *args)
    kernel_counts = _count(monkeypatch, "auto", *args)
    assert numpy_counts.total.shape[1] > 2  # several thresholds per query: windows overlap
    np.testing.assert_array_equal(kernel_counts.total, numpy_counts.total)
    np.testing.assert_array_equal(kernel_counts.graded, numpy_counts.graded)


def test_window_pass_matches_sort_and_search(monkeypatch):
    """Overlapping windows, values on their ends, +inf and rows with no threshold, and a member
    capacity that overflows (the kernel is called again)."""
    rng = np.random.default_rng(3)
    b, m, g = 9, 200, 6
    dist = rng.integers(0, 20, size=(b, m)).astype(np.float64)
    dist[rng.random((b, m)) < 0.1] = np.inf
    centre = np.sort(rng.integers(0, 20, size=(b, g)).astype(np.float64), axis=1)
    low, high = centre - 1.0, centre + 1.0
    n_thresholds = rng.integers(0, g + 1, b)
    n_thresholds[0] = 0
    busy = np.flatnonzero(n_thresholds)
    results = []
    for mode in ("numpy", "auto"):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, mode)
        below, rows, ks, cols = tied_scan._windows(-dist, np.zeros(m), False, low, high, n_thresholds, busy)
        order = np.lexsort((cols, ks, rows))
        results.append((below, rows[order], ks[order], cols[order]))
    assert results[0][1].size > 4 * b  # more members than the first capacity
    for expected, got in zip(*results, strict=True):
        np.testing.assert_array_equal(got, expected)
