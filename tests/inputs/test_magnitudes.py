"""Exact at every magnitude: tiny, huge and mixed-magnitude embeddings on every searcher.

Euclidean and inner-product rankings do not change when every vector is multiplied by the same
power of two (exact in floating point), and cosine does not change when a row is; so each case
below must give exactly the numbers of the unscaled data, which the rest of the suite checks
against the float64 full-sort reference (and here too, on lattice data).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from reference import evaluate_reference

import embedeval
from embedeval._search import Device

METRICS = ["precision@1", "recall@2", "r_precision", "map@r", "map", "mrr"]
SEARCHERS = {
    "one index": {},
    "shards": {"shard_size": 7},
    "streamed shards": {"stream_reference": True, "shard_size": 9},
    "device split": {"device": Device(("cpu",), reference_block=3)},
    "blocks of 5 on 3 threads": {"block_size": 5, "n_threads": 3},
}
# 2**-70 ~ 8e-22 and 2**-75 put products into float32's subnormal range; 2**64 ~ 1.8e19 and
# 2**70 overflow float32 distances; 1.0 is the control.
SCALES = [2.0**-75, 2.0**-70, 2.0**-40, 1.0, 2.0**64, 2.0**70]


def case(seed):
    """Lattice points with ties and duplicates, imbalanced labels (a class of one included)."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-4, 5, size=(70, 3)).astype(np.float32) * np.float32(0.25)
    x[40:50] = x[:10]
    labels = rng.choice(5, size=70, p=[0.4, 0.3, 0.2, 0.09, 0.01])
    return x, labels


def run(x, labels, distance, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return embedeval.evaluate(x, labels, metrics=METRICS, distance=distance, **kwargs)


@pytest.mark.parametrize("searcher", sorted(SEARCHERS))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
@pytest.mark.parametrize("seed", range(3))
def test_scaling_every_vector_by_a_power_of_two_changes_nothing(seed, distance, searcher):
    x, labels = case(seed)
    expected = evaluate_reference(x, labels, METRICS, distance)
    for scale in SCALES:
        got = run(x * np.float32(scale), labels, distance, **SEARCHERS[searcher])
        for m in METRICS:
            np.testing.assert_array_equal(got.per_query[m], expected[m], err_msg=f"{m} at scale {scale}")


@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
def test_a_separate_gallery_of_another_magnitude_is_scaled_with_the_queries(distance):
    """Queries tiny, gallery huge: one common power of two keeps their ranking."""
    x, labels = case(5)
    q, g = x[:30], x[30:]
    kwargs = dict(reference_labels=labels[30:])
    expected = run(q, labels[:30], distance, reference=g, **kwargs)
    for qs, gs in [(2.0**-60, 2.0**-60), (2.0**60, 2.0**60), (2.0**-20, 2.0**-20)]:
        got = run(q * np.float32(qs), labels[:30], distance, reference=g * np.float32(gs), **kwargs)
        for m in METRICS:
            np.testing.assert_array_equal(got.per_query[m], expected.per_query[m], err_msg=f"{m} {qs} {gs}")


def test_subnormal_products_on_continuous_data_match_the_float64_reference():
    """Gaussian data around 1e-20: raw float32 products underflow (the issue's precision@1 bug)."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((80, 6)) * 1e-20).astype(np.float32)
    labels = rng.integers(0, 4, 80)
    for distance in ("euclidean", "inner_product"):
        got = run(x, labels, distance)
        expected = evaluate_reference(x, labels, METRICS, distance)
        for m in METRICS:
            np.testing.assert_array_equal(got.per_query[m], expected[m], err_msg=f"{distance} {m}")


@pytest.mark.parametrize("searcher", sorted(SEARCHERS))
def test_cosine_rows_of_any_magnitude_normalise_exactly(searcher):
    """Rows scaled one by one by powers of two from 2**-100 to 2**100: float64 normalisation gives
    the vectors of the unscaled rows, so the same numbers, never NaN."""
    rng = np.random.default_rng(4)
    x = rng.choice([-1.0, 1.0], size=(60, 4)).astype(np.float32)
    labels = rng.integers(0, 4, 60)
    expected = run(x, labels, "cosine", **SEARCHERS[searcher])
    scales = (2.0 ** rng.integers(-100, 101, size=(60, 1))).astype(np.float32)
    got = run(x * scales, labels, "cosine", **SEARCHERS[searcher])
    for m in METRICS:
        assert not np.isnan(got.per_query[m][~np.isnan(expected.per_query[m])]).any()
        np.testing.assert_array_equal(got.per_query[m], expected.per_query[m], err_msg=m)


def test_cosine_rows_that_float32_norms_would_lose_get_numbers_not_nan():
    """1e-23 and 1e20: a float32 norm of these rows underflows or overflows (NaN or 0 before)."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((50, 5)).astype(np.float32)
    labels = rng.integers(0, 3, 50)
    x[:10] *= np.float32(1e-23)
    x[10:20] *= np.float32(1e20)
    got = run(x, labels, "cosine")
    assert not np.isnan(got.per_query["map@r"]).any()
    assert got.n_evaluated == 50


def test_the_scale_is_named_in_the_result():
    x, labels = case(0)
    assert "scaled" not in run(x, labels, "euclidean").config
    assert "2**-" in run(x * np.float32(2.0**70), labels, "euclidean").config["scaled"]


def test_embeddings_spanning_too_many_magnitudes_are_refused():
    """A norm of 1e30 next to a component of 1e-30: no power of two keeps both exact."""
    x = np.array([[1e30, 0.0], [1e-30, 1.0], [2.0, 3.0]], dtype=np.float32)
    with pytest.raises(ValueError, match=r"span magnitudes from 1e-30 .* to 1e\+30 .* rescale or clip"):
        embedeval.evaluate(x, [0, 0, 1])


def test_dask_cluster_ranks_huge_embeddings_like_one_process(client):
    x, labels = case(1)
    x = x * np.float32(2.0**70)
    got = run(x, labels, "euclidean", client=client, shard_size=20)
    expected = evaluate_reference(x / np.float32(2.0**70), labels, METRICS, "euclidean")
    for m in METRICS:
        np.testing.assert_array_equal(got.per_query[m], expected[m], err_msg=m)


def test_the_bound_covers_products_that_underflow():
    """Without the subnormal term, two references 1 subnormal step apart in float32 could be taken
    for a settled gap: the bound must stay positive however small the vectors."""
    from embedeval._search import FlatSearcher
    from embedeval._search.error_bound import FLOAT32_UNIT_ROUNDOFF

    tiny = np.full((3, 4), 1e-30, dtype=np.float32)
    searcher = FlatSearcher(tiny, "euclidean")
    assert (searcher._error_bound(tiny, FLOAT32_UNIT_ROUNDOFF) >= 2.0**-149).all()


@pytest.mark.parametrize("seed", range(12))
def test_extremes_of_float32_rows_equal_a_slow_scan(seed, monkeypatch):
    """_extremes on float32 rows (read without a float64 copy) against the obvious float64 scan:
    zeros, all-zero rows, subnormals and components near float32's largest, blocks of any size."""
    from embedeval._core import budget
    from embedeval._inputs.magnitude import _extremes

    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(1, 300)), int(rng.integers(1, 40))
    x = rng.standard_normal((n, d)) * 10.0 ** rng.integers(-44, 37, (n, 1))
    x[rng.random((n, d)) < 0.2] = 0
    x[rng.random(n) < 0.1] = 0
    x = x.astype(np.float32)
    wide = x.astype(np.float64)
    largest = max(float(np.sqrt(np.sum(row * row))) for row in wide)
    nonzero = np.abs(wide[wide != 0])
    smallest = float(nonzero.min()) if nonzero.size else np.inf
    monkeypatch.setattr(budget, "SCAN_ROWS", int(rng.integers(1, 64)))
    got = _extremes(x)
    assert got[1] == smallest
    assert got[0] == pytest.approx(largest, rel=1e-14)
