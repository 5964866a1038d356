"""Helpers shared by the benchmark scripts (run as `python bench/<script>.py`)."""

from __future__ import annotations

import time

import faiss
import numpy as np


def timed(fn):
    """(seconds, result) of one call."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def best_of(repeat: int, fn):
    """(fastest seconds, last result) over ``repeat`` calls."""
    runs = [timed(fn) for _ in range(repeat)]
    return min(t for t, _ in runs), runs[-1][1]


def summary_line(summary: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:.4f}" for k, v in summary.items())


def gaussian_classes(n, d, n_classes, seed=0):
    """Gaussian classes of equal size: class centres N(0, 1), points centre + N(0, 1.5^2)
    (metrics well inside (0, 1)); float32 of shape (n, d) and the labels."""
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % n_classes)
    centres = rng.standard_normal((n_classes, d), dtype=np.float32)
    x = centres[labels] + 1.5 * rng.standard_normal((n, d), dtype=np.float32)
    return np.ascontiguousarray(x, dtype=np.float32), labels


def product(x):
    """The float32 product of all pairs in blocks of 4096 rows: the floor of any exact method."""
    for start in range(0, len(x), 4096):
        x[start : start + 4096] @ x.T


def faiss_search(x, k):
    """faiss's exact search of ``x`` against itself, k deep, with no metrics and no tie rule."""
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    return index.search(x, k)


_IN_CACHE = {}


def in_cache(array):
    """``array`` copied into a buffer kept for its shape and dtype: in cache, as a product leaves it
    (a pass timed alone on captured chunks would otherwise read them from memory)."""
    hot = _IN_CACHE.setdefault((array.shape, array.dtype), np.empty_like(array))
    np.copyto(hot, array)
    return hot


def save_or_compare(arrays, save=None, compare=None):
    """Write ``arrays`` to the .npz ``save``, and/or check them equal to those of the .npz
    ``compare`` (another checkout's run of the same pass); prints the verdict."""
    if save:
        np.savez(save, *arrays)
    if compare:
        with np.load(compare) as saved:
            assert len(saved.files) == len(arrays), "differs: another number of arrays"
            assert all(np.array_equal(saved[f"arr_{j}"], a) for j, a in enumerate(arrays)), "differs"
        print(f"identical to {compare}")
