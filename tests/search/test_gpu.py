"""The device path on a real GPU (faiss GPU build), against the float64 full sort and the CPU.

Every test here skips where faiss sees no GPU (CI has none); ``tests/search/test_exact_search.py``
runs the same splitting logic on the CPU with a stand-in device. These run the real thing: faiss's
GPU flat search, split into shards and merged exactly, with device limits far below faiss's 2048
so that every ranking needs splits and the unsettled queries need re-splits.
"""

from __future__ import annotations

import dataclasses

import faiss
import numpy as np
import pytest
from reference import full_ranking

import embedeval
from embedeval._inputs.arrays import prepare
from embedeval._search import DeviceSearcher, FlatSearcher
from embedeval._search.device import GPU_MAX_K, gpu_device

HAS_GPU = getattr(faiss, "get_num_gpus", lambda: 0)() > 0
pytestmark = pytest.mark.skipif(not HAS_GPU, reason="needs a faiss GPU build and a visible GPU (CI has none)")


def _data(seed: int, n: int = 400, d: int = 8) -> np.ndarray:
    """Heavy ties and exact copies, a large offset (large float32 error), or plain normal rows."""
    rng = np.random.default_rng(seed)
    if seed % 3 == 0:
        return rng.integers(-2, 3, size=(n, d)).astype(np.float32)
    if seed % 3 == 1:
        return (rng.standard_normal((n, d)) + 1000.0).astype(np.float32)
    return rng.standard_normal((n, d)).astype(np.float32)


@pytest.mark.parametrize("max_k", [3, 16, GPU_MAX_K])
@pytest.mark.parametrize("distance", ["euclidean", "inner_product", "cosine"])
@pytest.mark.parametrize("seed", range(6))
def test_split_gpu_search_equals_the_full_sort_and_the_cpu(seed, distance, max_k):
    """Shallow (k = 1, 5) and deep (k up to n - 1) searches, leave-one-out and not: the real GPU,
    with shards of at most ``max_k`` results, gives the float64 full sort's order exactly."""
    x = _data(seed)
    if distance == "cosine":  # +-1 entries scaled by powers of two: normalised exactly, as the reference does
        rng = np.random.default_rng(seed)
        x = (rng.choice([-1.0, 1.0], size=x.shape) * 2.0 ** rng.integers(0, 3, size=(len(x), 1))).astype(np.float32)
    n = len(x)
    queries = prepare(x[: n // 2], distance)
    references = prepare(x, distance)
    device = dataclasses.replace(gpu_device(), max_k=max_k)
    on_gpu = DeviceSearcher(references, distance, device)
    on_cpu = FlatSearcher(references, distance)
    exclude = np.arange(n // 2)
    for k in (1, 5, n // 3, n - 1):
        expected = np.array([full_ranking(q, references, distance, exclude=i)[:k] for i, q in enumerate(queries)])
        got = on_gpu.search(queries, k, exclude)
        np.testing.assert_array_equal(got, expected, err_msg=f"k={k}")
        np.testing.assert_array_equal(on_cpu.search(queries, k, exclude), expected, err_msg=f"cpu k={k}")
    if max_k < n:  # the deep searches needed the references split on the device
        assert len(on_gpu._split[1]) > 1


@pytest.mark.parametrize("seed", range(3))
def test_evaluate_on_the_gpu_gives_the_cpu_arrays(seed):
    """Every metric family, ties and duplicates included: identical per-query arrays."""
    x = _data(seed, n=3000, d=6)
    labels = np.random.default_rng(seed).integers(0, 7, size=len(x))
    metrics = ["precision@1", "recall@10", "r_precision", "map@r", "map", "mrr", "cmc@5"]
    on_cpu = embedeval.evaluate(x, labels, metrics=metrics)
    on_gpu = embedeval.evaluate(x, labels, metrics=metrics, device="gpu")
    assert "(gpu)" in on_gpu.config["search"]
    for name in metrics:
        np.testing.assert_array_equal(on_gpu.per_query[name], on_cpu.per_query[name], err_msg=name)


def test_gpu_products_are_float32_not_tf32_or_half():
    """faiss's GPU distances are within the float32 error bound of the float64 ones; TF32 (10-bit
    mantissa) or float16 products would miss it by about a thousand float32 ulps."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2000, 128)).astype(np.float32)
    q = rng.standard_normal((200, 128)).astype(np.float32)
    res = faiss.StandardGpuResources()
    index = faiss.index_cpu_to_gpu(res, 0, faiss.IndexFlatIP(128))
    index.add(x)
    values, ids = index.search(q, 50)
    exact = np.einsum("ij,ij->i", np.repeat(q.astype(np.float64), 50, axis=0), x[ids.ravel()].astype(np.float64))
    scale = np.linalg.norm(q, axis=1).repeat(50) * np.linalg.norm(x[ids.ravel()], axis=1)
    error = np.abs(values.ravel().astype(np.float64) - exact) / scale
    assert error.max() < 128 * 2.0**-24, error.max()  # TF32 gives about 1e-3
