"""The exact search itself: every searcher against a full stable sort of float64 distances."""

from __future__ import annotations

import numpy as np
import pytest
from reference import full_ranking

from embedeval._inputs.arrays import prepare
from embedeval._search import Device, DeviceSearcher, FlatSearcher, ShardedSearcher


def make(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 120)), int(rng.integers(1, 6))
    if seed % 3 == 0:
        x = rng.integers(-2, 3, size=(n, d)).astype(np.float32)  # heavy ties and duplicates
    elif seed % 3 == 1:
        x = (rng.standard_normal((n, d)) + (1000 if seed % 2 else 0)).astype(np.float32)  # large float32 error
    else:
        x = rng.standard_normal((n, d)).astype(np.float32)
    return rng, x


def searchers(x, distance, tmp_path):
    ref = x
    np.save(tmp_path / "ref.npy", ref)
    mapped = np.load(tmp_path / "ref.npy", mmap_mode="r")
    yield "flat", FlatSearcher(ref, distance)
    for size in (1, 7, len(x) // 2 + 1):
        yield f"shards of {size}", ShardedSearcher(ref, distance, shard_size=size)
    yield "streamed shards of 9", ShardedSearcher(mapped, distance, shard_size=9, stream=True)
    # the device path (torch) on torch's CPU device, products of 3 references at a time
    yield "device, blocks of 3", DeviceSearcher(ref, distance, Device(("cpu",), reference_block=3))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product", "cosine"])
def test_search_equals_a_full_stable_sort(seed, distance, tmp_path):
    rng, x = make(seed)
    if distance == "cosine":  # +-1 entries scaled by powers of two: exact normalisation
        x = (rng.choice([-1.0, 1.0], size=(len(x), 4)) * 2.0 ** rng.integers(0, 3, size=(len(x), 1))).astype(np.float32)
    n = len(x)
    queries = prepare(x[: n // 2], distance)
    # shallow searches use faiss's float32 candidates, deep ones (> n/8) float64 distances
    k = 1 if seed % 2 else int(rng.integers(n // 8, n - 1))
    exclude = np.arange(n // 2)
    expected = np.array([full_ranking(q, x, distance, exclude=i)[:k] for i, q in enumerate(queries)])
    expected_all = np.array([full_ranking(q, x, distance)[:k] for q in queries])
    for name, index in searchers(x, distance, tmp_path):
        np.testing.assert_array_equal(index.search(queries, k, exclude), expected, err_msg=name)
        np.testing.assert_array_equal(index.search(queries, k), expected_all, err_msg=name)


@pytest.mark.parametrize("seed", range(6))
def test_with_groups_the_relevance_sequence_is_exact(seed, tmp_path):
    """Given relevance classes, order inside a run of one class may differ, the hits may not."""
    rng, x = make(seed)
    labels = rng.integers(0, 3, len(x))
    k = len(x) - 1
    expected = np.array([labels[full_ranking(q, x, "euclidean", exclude=i)[:k]] for i, q in enumerate(x)])
    for name, index in searchers(x, "euclidean", tmp_path):
        same_label = lambda rows, idx: labels[idx] == labels[rows, None]  # noqa: E731
        got = index.search(x, k, np.arange(len(x)), same_label)
        np.testing.assert_array_equal(labels[got] == labels[:, None], expected == labels[:, None], err_msg=name)


def _clustered(seed=0, n=3000, d=16):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 20, n)
    return (rng.standard_normal((20, d))[y] + 1.2 * rng.standard_normal((n, d))).astype(np.float32), y


def test_approximate_result_says_so_and_checks_itself_against_exact_search():
    import embedeval

    x, y = _clustered()
    metrics = ["precision@1", "recall@10", "r_precision", "map@r"]
    exact = embedeval.evaluate(x, y, metrics=metrics)
    approx = embedeval.evaluate(x, y, metrics=metrics, index="HNSW32", index_params="efSearch=16", check_sample=300)
    assert exact.approximation is None and approx.config["search"].startswith("approximate: faiss 'HNSW32'")
    info = approx.approximation
    assert info["sample"] == 300 and 0 < info["neighbour_recall"] <= 1 and info["index"] == "HNSW32"
    rng = np.random.default_rng(0)
    sample = np.sort(rng.choice(np.arange(3000), size=300, replace=False))
    for m in metrics:  # the sample's exact values are those of the exact evaluation
        assert info["exact_on_sample"][m] == pytest.approx(exact.per_query[m][sample].mean(), rel=1e-12)
        assert info["approximate_on_sample"][m] == pytest.approx(approx.per_query[m][sample].mean(), rel=1e-12)


def test_a_thorough_approximate_search_finds_the_exact_neighbours():
    import embedeval

    x, y = _clustered(1, n=1500)
    approx = embedeval.evaluate(x, y, metrics=["map@r"], index="HNSW32", index_params="efSearch=2000")
    assert approx.approximation["neighbour_recall"] > 0.999
    exact = embedeval.evaluate(x, y, metrics=["map@r"])
    assert approx.summary["map@r"] == pytest.approx(exact.summary["map@r"], abs=1e-3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(index="HNSW32", metrics=["map"]), r"\['map'\] rank every reference"),
        (dict(index="NoSuchIndex12"), "'index' must be 'flat' or a faiss index-factory string"),
        (dict(index="HNSW32", index_params="nprobe=3"), "do not apply to 'HNSW32'"),
        (dict(index="HNSW32", shard_size=10), "runs in one process"),
    ],
)
def test_approximate_index_errors(kwargs, message):
    import embedeval

    x, y = _clustered(2, n=200)
    kwargs.setdefault("metrics", ["map@r"])
    with pytest.raises(ValueError, match=message):
        embedeval.evaluate(x, y, **kwargs)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
def test_device_searches_deeper_than_a_reference_block_are_exact(seed, distance):
    """k far above the device's reference block: each block's top-k merged into the kept ones."""
    rng, _ = make(seed)
    n = 600
    x = (
        rng.integers(-3, 4, size=(n, 3)).astype(np.float32)
        if seed % 2
        else rng.standard_normal((n, 3)).astype(np.float32)
    )
    k = int(rng.integers(5, 40))
    queries = x[:60]
    index = DeviceSearcher(x, distance, Device(("cpu",), reference_block=int(rng.integers(1, 8))))
    expected = np.array([full_ranking(q, x, distance, exclude=i)[:k] for i, q in enumerate(queries)])
    np.testing.assert_array_equal(index.search(queries, k, np.arange(60)), expected)
    assert index._block("cpu", len(queries)) < min(k, n)  # the top k came from several blocks


@pytest.mark.parametrize("seed", range(6))
def test_run_ordering_equals_a_three_key_sort(seed):
    """The fast (run, distance rank) sort, and its fallback when a run holds equal distances."""
    from embedeval._search.ranking import _order_runs

    rng = np.random.default_rng(seed)
    size = 2000
    run = np.sort(rng.integers(0, 500, size))
    starts = np.searchsorted(run, run)  # each entry's offset within its run
    if seed % 3 == 0:  # equal distances inside runs: the index decides (the fallback)
        exact = rng.integers(0, 6, size).astype(np.float64)
    elif seed % 3 == 1:  # all distinct
        exact = rng.random(size)
    else:  # every run holds the same distances in a shuffled order: ties only across runs
        exact = rng.random(size)[rng.permutation(size)[np.arange(size) - starts]]
    members = rng.permutation(size)
    np.testing.assert_array_equal(_order_runs(run, exact, members), np.lexsort((members, exact, run)))


@pytest.mark.parametrize(
    ("options", "kind"),
    [
        ({}, "FlatSearcher"),
        (dict(shard_size=7), "ShardedSearcher"),
        (dict(stream_reference=True), "ShardedSearcher"),
        (dict(device="stand-in"), "DeviceSearcher"),
        (dict(index="HNSW32"), "ApproximateSearcher"),
    ],
)
def test_the_options_choose_the_searcher(options, kind):
    """The options pick the searcher (a wrong pick would give the same numbers, so check the kind)."""
    from embedeval._pipeline.options import Options

    x = np.random.default_rng(0).standard_normal((50, 3)).astype(np.float32)
    if options.get("device") == "stand-in":
        options["device"] = Device(("cpu",), reference_block=3)
    searcher = Options.check((), distance="euclidean", **options).searcher(x)
    assert type(searcher).__name__ == kind
    if options.get("stream_reference"):  # streamed: no index kept, shards of the default 256 MB
        assert searcher._indexes is None and searcher._bounds == [(0, 50)]


@pytest.mark.parametrize("euclidean", [True, False])
@pytest.mark.parametrize("seed", range(4))
def test_the_array_index_finds_what_a_faiss_flat_index_finds(euclidean, seed):
    """ArrayIndex searches the array in place with faiss's exhaustive kernels: the distances,
    neighbours and order of IndexFlatL2 / IndexFlatIP, bit for bit, duplicates and ties included."""
    from embedeval._search.candidates import ArrayIndex, flat_index

    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 400)), int(rng.integers(1, 40))
    x = np.round(rng.standard_normal((n, d)), 1).astype(np.float32)  # a coarse grid: ties
    x[rng.integers(0, n, n // 4)] = x[0]  # and exact copies
    q = np.round(rng.standard_normal((int(rng.integers(1, 60)), d)), 1).astype(np.float32)
    k = int(rng.integers(1, n + 1))
    index = ArrayIndex(x, euclidean)
    assert index.ntotal == n and np.shares_memory(index.vectors, x)  # no copy
    got, want = index.search(q, k), flat_index(x, euclidean).search(q, k)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("shift", [0.0, 3.0])
def test_the_flat_searcher_copies_the_references_only_to_centre_them(shift):
    rng = np.random.default_rng(0)
    x = (shift + rng.standard_normal((200, 8))).astype(np.float32)
    searcher = FlatSearcher(x, "euclidean")
    assert np.shares_memory(searcher._index.vectors, x) == (shift == 0.0)
