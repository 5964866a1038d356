"""Clustering quality: NMI and AMI against scikit-learn (to 1e-10) on many seeded labelings
including degenerate ones, the exact expected mutual information against a plain-loop
reference, and the seeded faiss k-means against pytorch-metric-learning's."""

from __future__ import annotations

import math

import numpy as np
import pytest

from embedeval._setlevel.clustering import PML_KMEANS, kmeans
from embedeval._setlevel.information import _log_factorials, ami, contingency, expected_mutual_information, nmi

sk = pytest.importorskip("sklearn.metrics")


def labelings():
    """(name, labels, clusters): seeded random partitions of every shape, and the degenerate ones."""
    rng = np.random.default_rng(0)
    for seed in range(120):
        n = int(rng.integers(1, 400))
        ka, kb = int(rng.integers(1, n + 1)), int(rng.integers(1, n + 1))
        a = rng.integers(0, ka, n)
        b = rng.integers(0, kb, n)
        if seed % 4 == 1:  # imbalanced: one huge class, a tail of small ones
            a = np.minimum(rng.geometric(0.3, n), 12)
        if seed % 4 == 2:  # a noisy copy of the labels
            b = np.where(rng.random(n) < 0.2, rng.integers(0, kb, n), a)
        yield f"random-{seed}", a, b
    yield "one item", [0], [3]
    yield "one class one cluster", [1] * 9, [5] * 9
    yield "one class", [0] * 9, [0, 1, 2] * 3
    yield "one cluster", [0, 1, 2] * 3, [7] * 9
    yield "both singletons", list(range(7)), list(range(7))[::-1]
    yield "labels singletons", list(range(8)), [0, 0, 1, 1, 2, 2, 3, 3]
    yield "clusters singletons", [0, 0, 1, 1, 2, 2, 3, 3], list(range(8))
    yield "identical", [0, 0, 1, 1, 2], ["x", "x", "y", "y", "z"]
    yield "independent", [0, 0, 1, 1], [0, 1, 0, 1]
    yield "two items", [0, 1], [0, 0]
    yield "thousands of classes", rng.integers(0, 3000, 6000), rng.integers(0, 2500, 6000)


@pytest.mark.parametrize(
    ("name", "labels", "clusters"), list(labelings()), ids=lambda v: v if isinstance(v, str) else ""
)
def test_nmi_and_ami_match_scikit_learn(name, labels, clusters):
    assert nmi(labels, clusters) == pytest.approx(sk.normalized_mutual_info_score(labels, clusters), abs=1e-10)
    expected = sk.adjusted_mutual_info_score(labels, clusters, average_method="arithmetic")
    assert ami(labels, clusters) == pytest.approx(expected, abs=1e-10)


def test_degenerate_conventions_are_exact():
    assert nmi([4], [2]) == ami([4], [2]) == 1.0
    assert nmi([0] * 5, [1] * 5) == ami([0] * 5, [1] * 5) == 1.0
    assert nmi([0] * 6, [0, 1] * 3) == ami([0] * 6, [0, 1] * 3) == 0.0
    assert ami(range(6), range(6)) == nmi(range(6), range(6)) == 1.0
    assert ami(range(6), [0, 0, 0, 1, 1, 1]) == 0.0


def test_renaming_and_swapping_change_nothing():
    rng = np.random.default_rng(3)
    a, b = rng.integers(0, 7, 300), rng.integers(0, 5, 300)
    renamed = np.array([f"class-{v}" for v in a])
    assert nmi(renamed, b + 100) == nmi(a, b)
    assert ami(renamed, b + 100) == ami(a, b)
    assert ami(b, a) == pytest.approx(ami(a, b), abs=1e-14)
    assert nmi(b, a) == pytest.approx(nmi(a, b), abs=1e-14)


def slow_emi(row_sums, col_sums, n):
    """E[MI] by three plain loops over the hypergeometric terms, math.lgamma throughout."""
    total = 0.0
    lf = lambda k: math.lgamma(k + 1)  # noqa: E731
    for a in row_sums:
        for b in col_sums:
            for k in range(max(1, a + b - n), min(a, b) + 1):
                log_p = (
                    lf(a) + lf(b) + lf(n - a) + lf(n - b) - lf(n) - lf(k) - lf(a - k) - lf(b - k) - lf(n - a - b + k)
                )
                total += k / n * math.log(n * k / (a * b)) * math.exp(log_p)
    return total


@pytest.mark.parametrize("seed", range(10))
def test_expected_mutual_information_equals_the_plain_triple_sum(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 150))
    a = np.bincount(rng.integers(0, rng.integers(1, 12), n))
    b = np.bincount(rng.integers(0, rng.integers(1, 12), n))
    a, b = a[a > 0], b[b > 0]
    assert expected_mutual_information(a, b, n) == pytest.approx(slow_emi(a, b, n), abs=1e-12)


def test_log_factorial_table_stays_within_a_few_ulps_of_lgamma():
    table = _log_factorials(200_000)
    ks = np.r_[np.arange(0, 3000), np.arange(3000, 200_001, 997)]
    reference = np.array([math.lgamma(k + 1) for k in ks])
    assert np.abs(table[ks] - reference).max() <= 64 * np.spacing(reference.max())


def test_sparse_and_dense_contingency_tables_agree():
    """More than 2**22 possible cells are counted by sorting; both give the plain dict's counts."""
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 3000, 5000), rng.integers(0, 3000, 5000)
    a[:3000], b[:3000] = np.arange(3000), np.arange(3000)  # every code occurs: a 3000 x 3000 table
    big = contingency(a, b)
    counts = {}
    for i, j in zip(a.tolist(), b.tolist(), strict=True):
        counts[(i, j)] = counts.get((i, j), 0) + 1
    assert dict(zip(zip(big.rows.tolist(), big.cols.tolist(), strict=True), big.counts.tolist(), strict=True)) == counts
    small = contingency(a % 40, b % 30)
    assert small.counts.sum() == 5000 and small.row_sums.sum() == 5000


def blobs(n=600, d=8, k=6, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    centres = 4 * rng.standard_normal((k, d))
    return (centres[labels] + rng.standard_normal((n, d))).astype(np.float32), labels


def test_kmeans_is_deterministic_for_a_seed_and_records_its_settings():
    x, _ = blobs()
    first, again = kmeans(x, 6, seed=7), kmeans(x, 6, seed=7)
    np.testing.assert_array_equal(first.assignment, again.assignment)
    np.testing.assert_array_equal(first.centroids, again.centroids)
    assert first.settings["seed"] == 7 and first.settings["n_clusters"] == 6
    assert {"implementation", "faiss_version", "niter", "nredo", "max_points_per_centroid"} <= set(first.settings)
    assert first.assignment.shape == (600,) and first.assignment.dtype == np.int64
    assert set(first.assignment.tolist()) <= set(range(6))
    other = [kmeans(x[:200], 30, seed=s).assignment for s in range(4)]
    assert any((o != other[0]).any() for o in other[1:])  # the seed matters


def test_kmeans_defaults_are_pytorch_metric_learnings():
    settings = kmeans(blobs()[0], 3).settings
    assert {k: settings[k] for k in PML_KMEANS} == {
        "niter": 20,
        "nredo": 1,
        "seed": 1234,
        "max_points_per_centroid": 256,
    }


def test_kmeans_edge_cluster_counts():
    x, _ = blobs(n=12)
    assert (kmeans(x, 1).assignment == 0).all()
    every = kmeans(x, 12).assignment  # as many clusters as points: each its own
    assert sorted(every.tolist()) == list(range(12))


def test_cosine_kmeans_clusters_the_normalised_rows():
    x, _ = blobs()
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)
    np.testing.assert_array_equal(kmeans(x, 5, distance="cosine").assignment, kmeans(unit, 5).assignment)
    assert kmeans(x, 5, distance="cosine").settings["normalised"] is True


def test_nmi_and_ami_agree_with_pytorch_metric_learning():
    """PML's AccuracyCalculator runs the same faiss k-means on the same float32 rows: the same
    clusters, and NMI/AMI equal to rounding."""
    torch = pytest.importorskip("torch")
    accuracy_calculator = pytest.importorskip("pytorch_metric_learning.utils.accuracy_calculator")
    inference = pytest.importorskip("pytorch_metric_learning.utils.inference")
    for seed in range(3):
        x, labels = blobs(n=900, d=16, k=9, seed=seed)
        x += np.random.default_rng(seed).standard_normal(x.shape).astype(np.float32) * 2  # overlapping
        calc = accuracy_calculator.AccuracyCalculator(include=("NMI", "AMI"), device=torch.device("cpu"))
        theirs = calc.get_accuracy(torch.from_numpy(x), torch.from_numpy(labels))
        ours = kmeans(x, 9).assignment  # one cluster per label, as PML and an evaluation ask
        assert nmi(labels, ours) == pytest.approx(theirs["NMI"], abs=1e-10)
        assert ami(labels, ours) == pytest.approx(theirs["AMI"], abs=1e-10)
        pml_clusters = inference.FaissKMeans(niter=20)(torch.from_numpy(x), 9).numpy()
        np.testing.assert_array_equal(ours, pml_clusters)
