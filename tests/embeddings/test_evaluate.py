"""embedeval.evaluate against a slow reference, hand-computed cases, properties and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from reference import evaluate_reference

import embedeval

ALL_METRICS = [
    "precision@1",
    "precision@3",
    "recall@1",
    "recall@4",
    "hit_rate@2",
    "r_precision",
    "map@r",
    "map",
    "map@5",
    "mrr",
    "mrr@2",
]


def lattice(rng, n, d, step):
    """Points on a dyadic grid: float32 arithmetic on them is exact, so the float64 reference
    and faiss agree exactly. A coarse step gives many ties and duplicates, a fine one few."""
    return (rng.integers(-8, 9, size=(n, d)) * step).astype(np.float32)


def sign_vectors(rng, n, d):
    """+-1 vectors scaled by powers of two: cosine normalisation of them is exact (d = 4 or 16)."""
    return (rng.choice([-1.0, 1.0], size=(n, d)) * 2.0 ** rng.integers(0, 3, size=(n, 1))).astype(np.float32)


def imbalanced_labels(rng, n, n_classes):
    """Zipf-like class sizes, so some classes are large and some have a single member."""
    weights = 1.0 / np.arange(1, n_classes + 1) ** 1.5
    return rng.choice(n_classes, size=n, p=weights / weights.sum())


def random_case(seed):
    rng = np.random.default_rng(seed)
    distance = ["euclidean", "inner_product", "cosine"][seed % 3]
    separate = seed % 2 == 1
    n, n_ref = int(rng.integers(5, 60)), int(rng.integers(5, 80))
    n_classes = int(rng.integers(1, 8))
    if distance == "cosine":
        d = [4, 16][seed % 2]
        make = lambda m: sign_vectors(rng, m, d)  # noqa: E731
    else:
        d, step = int(rng.integers(1, 5)), [1.0, 0.25, 1 / 64][seed % 3]
        make = lambda m: lattice(rng, m, d, step)  # noqa: E731
    x = make(n)
    if seed % 4 == 0:  # exact duplicates of earlier rows, with possibly other labels
        x[n // 2 :] = x[: n - n // 2]
    labels = imbalanced_labels(rng, n, n_classes)
    kwargs = {}
    if separate:
        kwargs = {
            "reference": make(n_ref),
            "reference_labels": imbalanced_labels(rng, n_ref, n_classes),
        }
    return x, labels, distance, kwargs


@pytest.mark.parametrize("seed", range(60))
def test_matches_slow_reference(seed):
    """Every metric, every query: identical to a float64 full-sort reference on awkward inputs."""
    x, labels, distance, kwargs = random_case(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = embedeval.evaluate(x, labels, metrics=ALL_METRICS, distance=distance, **kwargs)
    expected = evaluate_reference(
        x, labels, ALL_METRICS, distance, kwargs.get("reference"), kwargs.get("reference_labels")
    )
    for name in ALL_METRICS:
        np.testing.assert_allclose(result.per_query[name], expected[name], rtol=1e-12, atol=0, err_msg=name)
    evaluated = ~np.isnan(expected["map@r"])
    assert result.n_evaluated == evaluated.sum()
    for name in ALL_METRICS:
        if evaluated.any():
            assert result.summary[name] == pytest.approx(expected[name][evaluated].mean(), rel=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_continuous_data_ranked_as_float64(seed):
    """Gaussian float32 data, near-ties included: the ranking is that of float64 distances.
    An offset far from the origin makes faiss's float32 error large, forcing deeper searches."""
    rng = np.random.default_rng(200 + seed)
    distance = ["euclidean", "inner_product"][seed % 2]
    x = rng.standard_normal((150, 8)).astype(np.float32)
    if seed % 3 == 0:
        x += np.float32(1000.0)
    labels = imbalanced_labels(rng, 150, 5)
    result = embedeval.evaluate(x, labels, metrics=ALL_METRICS, distance=distance)
    expected = evaluate_reference(x, labels, ALL_METRICS, distance)
    for name in ALL_METRICS:
        np.testing.assert_allclose(result.per_query[name], expected[name], rtol=1e-12, atol=0, err_msg=name)


def test_collapsed_embeddings_rank_by_index():
    """All embeddings equal: every distance ties, so the ranking is the index order."""
    labels = np.array([0, 1, 1, 0, 1, 0, 0])
    r = embedeval.evaluate(np.ones((7, 3)), labels, metrics=["precision@1", "map@r"])
    expected = evaluate_reference(np.ones((7, 3)), labels, ["precision@1", "map@r"])
    for name in ("precision@1", "map@r"):
        np.testing.assert_allclose(r.per_query[name], expected[name], rtol=1e-12)
    assert r.per_query["precision@1"][0] == 0.0  # query 0's first neighbour is index 1 (label 1)


@pytest.mark.parametrize("seed", range(6))
def test_block_size_does_not_change_results(seed):
    """Query blocking is an implementation detail: 1, 3, 17 rows or automatic give equal arrays."""
    rng = np.random.default_rng(100 + seed)
    x = rng.standard_normal((300, 12)).astype(np.float32)
    x[150:] = x[:150] if seed % 2 else x[150:]
    labels = rng.integers(0, 9, size=300)
    runs = [embedeval.evaluate(x, labels, metrics=ALL_METRICS, block_size=b) for b in (None, 1, 3, 17)]
    for run in runs[1:]:
        for name in ALL_METRICS:
            np.testing.assert_array_equal(run.per_query[name], runs[0].per_query[name])


@pytest.mark.parametrize("seed", range(3))
def test_thread_count_does_not_change_results(seed):
    """Blocks on 1, 2 or 5 threads (each with one faiss thread), deep and shallow rankings."""
    rng = np.random.default_rng(200 + seed)
    x = rng.integers(-2, 3, size=(400, 3)).astype(np.float32)  # ties and duplicates everywhere
    labels = np.where(rng.random(400) < 0.5, 0, rng.integers(1, 30, size=400))  # a class of half
    runs = [embedeval.evaluate(x, labels, metrics=ALL_METRICS, block_size=37, n_threads=t) for t in (1, 2, 5)]
    for run in runs[1:]:
        for name in ALL_METRICS:
            np.testing.assert_array_equal(run.per_query[name], runs[0].per_query[name])
    expected = evaluate_reference(x, labels, ["map@r", "map"])
    for name in ("map@r", "map"):
        np.testing.assert_allclose(runs[2].per_query[name], expected[name], rtol=1e-12, atol=0, err_msg=name)


def test_streamed_shards_on_threads_give_the_in_memory_numbers(tmp_path):
    """A memory-mapped file, re-read shard by shard by three threads at once, with a gallery."""
    rng = np.random.default_rng(11)
    x = rng.integers(-2, 3, size=(300, 5)).astype(np.float32)
    labels = rng.integers(0, 12, size=300)
    np.save(tmp_path / "ref.npy", x[100:])
    mapped = np.load(tmp_path / "ref.npy", mmap_mode="r")
    kwargs = dict(metrics=ALL_METRICS, reference_labels=labels[100:])
    expected = embedeval.evaluate(x[:100], labels[:100], reference=x[100:], n_threads=1, **kwargs)
    streamed = embedeval.evaluate(
        x[:100],
        labels[:100],
        reference=mapped,
        stream_reference=True,
        shard_size=37,
        block_size=9,
        n_threads=3,
        **kwargs,
    )
    for name in ALL_METRICS:
        np.testing.assert_array_equal(streamed.per_query[name], expected.per_query[name], err_msg=name)


# Hand-computed cases. Points on a line; the query is the first embedding only where a
# separate reference set is given, else leave-one-out over all of them.
def test_hand_computed_leave_one_out():
    # 1-D points 0, 1, 3, 7 with labels a, b, a, a.
    # query 0 (a): ranking 1(b) 2(a) 3(a)     R=2 -> P@1 0, R-prec 1/2, MAP@R (1/2)(1/2) = 1/4
    # query 1 (b): R=0 -> skipped
    # query 2 (a): ranking 1(b) 0(a) 3(a)     (distances 2, 3, 4) -> same as query 0
    # query 3 (a): ranking 2(a) 1(b) 0(a)     (4, 6, 7) -> P@1 1, R-prec 1/2, MAP@R 1/2
    x = np.array([[0.0], [1.0], [3.0], [7.0]])
    r = embedeval.evaluate(x, ["a", "b", "a", "a"], metrics=["precision@1", "r_precision", "map@r", "map", "mrr"])
    np.testing.assert_allclose(r.per_query["precision@1"], [0, np.nan, 0, 1])
    np.testing.assert_allclose(r.per_query["r_precision"], [0.5, np.nan, 0.5, 0.5])
    np.testing.assert_allclose(r.per_query["map@r"], [0.25, np.nan, 0.25, 0.5])
    # map over the whole ranking: query 0: (1/2)(1/2 + 2/3) = 7/12; query 3: (1/2)(1 + 2/3) = 5/6
    np.testing.assert_allclose(r.per_query["map"], [7 / 12, np.nan, 7 / 12, 5 / 6])
    np.testing.assert_allclose(r.per_query["mrr"], [0.5, np.nan, 0.5, 1.0])
    assert r.n_evaluated == 3 and r.n_skipped == 1
    assert r.summary["map@r"] == pytest.approx((0.25 + 0.25 + 0.5) / 3)
    assert sum(r.skipped.values()) == 1


def test_self_excluded_by_index_not_position():
    """Duplicates at distance 0: the query's own row is removed, the tie rule orders the rest."""
    # rows 0, 1, 2 identical; labels a, b, a. Query 0: ties 1(b), 2(a) -> index 1 first -> P@1 = 0.
    # Query 2: ties 0(a), 1(b) -> index 0 first -> P@1 = 1. Neither may lose a neighbour to itself.
    x = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [5.0, 5.0]])
    r = embedeval.evaluate(x, ["a", "b", "a", "b"], metrics=["precision@1", "precision@2", "map@r"])
    np.testing.assert_allclose(r.per_query["precision@1"], [0, 0, 1, 0])
    np.testing.assert_allclose(r.per_query["precision@2"], [0.5, 0.0, 0.5, 0.5])
    np.testing.assert_allclose(r.per_query["map@r"], [0, 0, 1, 0])


def test_separate_reference_set():
    q = np.array([[0.0], [10.0]])
    ref = np.array([[1.0], [2.0], [9.0], [30.0]])
    r = embedeval.evaluate(
        q,
        [1, 2],
        reference=ref,
        reference_labels=[2, 1, 2, 3],
        metrics=["precision@1", "map@r", "recall@2"],
    )
    # query 0 (label 1): ranking 0(2) 1(1) ...  R=1: P@1 0, MAP@R 0, recall@2 1
    # query 1 (label 2): ranking 2(2) 1(1) 0(2) R=2: P@1 1, MAP@R (1/2)(1) = 0.5, recall@2 1
    np.testing.assert_allclose(r.per_query["precision@1"], [0, 1])
    np.testing.assert_allclose(r.per_query["map@r"], [0, 0.5])
    np.testing.assert_allclose(r.per_query["recall@2"], [1, 1])


def test_perfect_clustering_scores_one():
    rng = np.random.default_rng(3)
    labels = rng.integers(0, 5, size=200)
    x = labels[:, None] * 100.0 + rng.random((200, 3))
    # precision@3 and map@5 are capped by min(k, R) / k and k / R, so they are left out.
    perfect = [m for m in ALL_METRICS if m not in ("precision@3", "map@5")]
    r = embedeval.evaluate(x, labels, metrics=perfect)
    assert r.summary == {name: 1.0 for name in perfect}


def test_renaming_labels_changes_nothing():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((150, 6)).astype(np.float32)
    labels = rng.integers(0, 6, size=150)
    names = np.array(["cat", "dog", "emu", "fox", "gnu", "hen"])[::-1]
    a = embedeval.evaluate(x, labels, metrics=ALL_METRICS)
    b = embedeval.evaluate(x, names[labels], metrics=ALL_METRICS)
    for name in ALL_METRICS:
        np.testing.assert_array_equal(a.per_query[name], b.per_query[name])
    # Same classes, summed in another order: equal up to float64 rounding.
    assert a.per_class.macro == pytest.approx(b.per_class.macro, rel=1e-12)


def test_per_class_and_macro_average():
    x = np.array([[0.0], [0.1], [0.2], [5.0], [5.1], [9.0]])
    r = embedeval.evaluate(x, [0, 0, 0, 1, 0, 1], metrics=["precision@1"])
    # class 0: queries 0,1,2 -> P@1 1,1,1 ; query 4 (5.1): nearest 3 (5.0, class 1) -> 0. mean 3/4
    # class 1: queries 3 (5.0) and 5 (9.0): nearest is 4 (class 0) for both -> 0
    assert r.per_class.to_dict()["precision@1"] == {0: 0.75, 1: 0.0}
    assert r.per_class.macro["precision@1"] == pytest.approx(0.375)
    assert r.summary["precision@1"] == pytest.approx(3 / 6)
    np.testing.assert_array_equal(r.per_class.counts, [4, 2])


def test_label_identity_is_kept():
    """64-bit ids that collide as float64 stay different labels; 1 beside "1" is refused (two kinds)."""
    x = np.array([[0.0], [0.1], [5.0], [5.1]])
    big = np.array([2**62 + 1, 2**62 + 2, 2**62 + 1, 2**62 + 2], dtype=np.int64)
    assert float(big[0]) == float(big[1])
    r = embedeval.evaluate(x, big, metrics=["precision@1"])
    assert r.summary["precision@1"] == 0.0
    with pytest.raises(ValueError, match=r"one kind .* got number at position\(s\) 0, 2; string at position"):
        embedeval.evaluate(x, [1, "1", 1, "1"], metrics=["precision@1"])


def test_accepts_objects_with_array_interface():
    class Wrapped:
        def __init__(self, a):
            self.a = a

        def __array__(self, dtype=None, copy=None):
            return np.asarray(self.a, dtype=dtype)

    x = np.array([[0.0], [0.1], [5.0], [5.1]])
    r = embedeval.evaluate(Wrapped(x), Wrapped(np.array([0, 0, 1, 1])), metrics=["precision@1"])
    assert r.summary["precision@1"] == 1.0


def test_accepts_torch_tensors():
    torch = pytest.importorskip("torch")
    x = torch.tensor([[0.0], [0.1], [5.0], [5.1]], requires_grad=True)
    r = embedeval.evaluate(x * 2, torch.tensor([0, 0, 1, 1]), metrics=["precision@1"])
    assert r.summary["precision@1"] == 1.0


def test_k_beyond_reference_set_ranks_everything():
    x = np.array([[0.0], [1.0], [2.0]])
    with pytest.warns(UserWarning, match=r"\['precision@5', 'recall@5'\]: k exceeds the 2 rankable references"):
        r = embedeval.evaluate(x, [0, 0, 1], metrics=["precision@5", "recall@5"])
    # query 0: ranking 1(0) 2(1) -> 1 hit / 5
    np.testing.assert_allclose(r.per_query["precision@5"], [0.2, 0.2, np.nan])
    np.testing.assert_allclose(r.per_query["recall@5"], [1, 1, np.nan])


def test_all_queries_skipped_warns_and_gives_nan():
    with pytest.warns(UserWarning, match="no query"):
        r = embedeval.evaluate(np.eye(3), [0, 1, 2], metrics=["map@r"])
    assert np.isnan(r.summary["map@r"]) and r.n_evaluated == 0


def test_results_name_their_conventions():
    r = embedeval.evaluate(np.eye(4), [0, 0, 1, 1], metrics=["recall@1", "map@r"], distance="cosine")
    assert "metric-learning" in r.definitions["recall@1"]
    assert "metric-learning" in r.conventions["recall"]
    assert "lower first" in r.conventions["ties"]
    assert r.config["distance"] == "cosine"
    assert "map@r" in r.table() and "lower first" in str(r)


BAD_INPUTS = [
    (
        dict(embeddings=np.array([[0.0], [np.nan]])),
        ValueError,
        "'embeddings' must be finite.*row 1",
    ),
    (dict(embeddings=np.array([[0.0], [np.inf]])), ValueError, "must be finite"),
    (dict(embeddings=np.zeros(4)), ValueError, r"'embeddings' must be a 2-D array.*\(4,\)"),
    (dict(embeddings=np.zeros((0, 3)), labels=[]), ValueError, "at least one row"),
    (
        dict(labels=[0, 1, 0]),
        ValueError,
        r"'labels' must have one label per row of 'embeddings' \(4\); got 3",
    ),
    (dict(labels=np.zeros((4, 2))), ValueError, "'labels' must be 1-D"),
    (dict(labels=[0.0, np.nan, 1.0, 1.0]), ValueError, "'labels' must not contain NaN"),
    (
        dict(metrics=["precision@0"]),
        ValueError,
        r"'k' in metric 'precision@0' must be an int >= 1; got '0'",
    ),
    (dict(metrics=["recall@-2"]), ValueError, r"must be an int >= 1; got '-2'"),
    (dict(metrics=["recall"]), ValueError, "needs a cutoff"),
    (
        dict(metrics=["ndcg@3"]),
        ValueError,
        "unknown metric 'ndcg@3'.*valid metrics are: precision@k, recall@k",
    ),
    (dict(metrics=[]), ValueError, "at least one metric"),
    (
        dict(distance="manhattan"),
        ValueError,
        "'distance' must be one of 'euclidean', 'cosine'.*got 'manhattan'",
    ),
    (
        dict(reference=np.zeros((3, 2))),
        ValueError,
        "'reference_labels' is required when 'reference' is given",
    ),
    (
        dict(reference_labels=[0, 1]),
        ValueError,
        "'reference' is required when 'reference_labels' is given",
    ),
    (
        dict(reference=np.zeros((2, 3)), reference_labels=[0, 1]),
        ValueError,
        r"'reference' must have the dimension of 'embeddings' \(2\); got 3",
    ),
    (
        dict(reference=np.zeros((2, 2)), reference_labels=[0, 1, 1]),
        ValueError,
        "'reference_labels' must have one label per row of 'reference'",
    ),
    (dict(embeddings=np.array([["a", "b"]] * 4)), TypeError, "must hold real numbers"),
    (dict(block_size=0), ValueError, "'block_size' must be an int >= 1; got 0"),
    (dict(n_threads=0), ValueError, "'n_threads' must be an int >= 1; got 0"),
    (dict(device="tpu"), ValueError, "'device' must be one of 'cpu', 'gpu'; got 'tpu'"),
    (dict(device="gpu", shard_size=10), ValueError, "'device' 'gpu' searches exactly with the references on the GPU"),
    (
        dict(embeddings=np.zeros((4, 2)), distance="cosine"),
        ValueError,
        "cosine distance is undefined for zero vectors",
    ),
]


@pytest.mark.parametrize(("change", "error", "message"), BAD_INPUTS)
def test_bad_input_gets_a_clear_error(change, error, message):
    args = {
        "embeddings": np.arange(8.0).reshape(4, 2),
        "labels": [0, 0, 1, 1],
        "metrics": ["map@r"],
    }
    args.update(change)
    with pytest.raises(error, match=message):
        embedeval.evaluate(args.pop("embeddings"), args.pop("labels"), **args)


def test_memory_mapped_queries_are_streamed_not_copied(tmp_path):
    """A float32 .npy opened with mmap_mode stays a memory map through input checking, and a
    separate-reference evaluation reading it block by block gives the in-memory numbers."""
    from embedeval._inputs.arrays import as_embeddings

    rng = np.random.default_rng(11)
    q = rng.standard_normal((500, 8)).astype(np.float32)
    np.save(tmp_path / "q.npy", q)
    mapped = np.load(tmp_path / "q.npy", mmap_mode="r")
    assert np.shares_memory(as_embeddings(mapped), mapped)  # a view of the map, not a copy
    ref, ref_labels, labels = rng.standard_normal((300, 8)), rng.integers(0, 5, 300), rng.integers(0, 5, 500)
    for distance in ("euclidean", "cosine"):
        a = embedeval.evaluate(
            mapped,
            labels,
            reference=ref,
            reference_labels=ref_labels,
            distance=distance,
            metrics=["map@r", "precision@1"],
            block_size=64,
        )
        b = embedeval.evaluate(
            q, labels, reference=ref, reference_labels=ref_labels, distance=distance, metrics=["map@r", "precision@1"]
        )
        assert a.summary == b.summary


@pytest.mark.parametrize("seed", range(3))
def test_agrees_with_pytorch_metric_learning(seed):
    """Where pytorch-metric-learning is installed (not in CI: it needs torch), its
    AccuracyCalculator(k="max_bin_count") gives the same precision@1, R-precision and MAP@R."""
    pytest.importorskip("pytorch_metric_learning")
    import torch
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

    rng = np.random.default_rng(300 + seed)
    labels = imbalanced_labels(rng, 800, 12)
    x = (rng.standard_normal((12, 16))[labels] + 1.3 * rng.standard_normal((800, 16))).astype(np.float32)
    calc = AccuracyCalculator(
        include=("precision_at_1", "r_precision", "mean_average_precision_at_r"), k="max_bin_count"
    )
    theirs = calc.get_accuracy(torch.from_numpy(x), torch.from_numpy(labels), ref_includes_query=True)
    ours = embedeval.evaluate(x, labels, metrics=["precision@1", "r_precision", "map@r"])
    evaluated = ~np.isnan(ours.per_query["map@r"])
    for name, key in (
        ("precision@1", "precision_at_1"),
        ("r_precision", "r_precision"),
        ("map@r", "mean_average_precision_at_r"),
    ):
        # pml averages over queries whose class has another member, as embedeval does
        assert ours.per_query[name][evaluated].mean() == pytest.approx(theirs[key], abs=1e-6), name
