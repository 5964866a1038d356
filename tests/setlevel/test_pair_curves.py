"""A verification's ROC/DET points and pair histograms (embedeval._setlevel.pair_curves) against
every pair materialised: each point is a point of scikit-learn's ROC, its counts those of the
pairs below its threshold, and the histograms hold every pair once."""

from __future__ import annotations

import numpy as np
import pytest

import embedeval
from embedeval._inputs.arrays import prepare
from embedeval._search.float64 import exact_distance

sklearn_metrics = pytest.importorskip("sklearn.metrics")


@pytest.mark.parametrize("distance", ["euclidean", "cosine", "inner_product"])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_point_is_on_the_roc_and_counts_the_pairs_below_its_threshold(distance, seed):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 6, 150)
    x = (rng.standard_normal((6, 5))[labels] + rng.standard_normal((150, 5))).astype(np.float32)
    if seed == 1:
        x = np.round(x, 1)  # many tied distances
    result = embedeval.evaluate(x, labels, metrics=["eer", "pair_auroc"], distance=distance)
    curves = result.pair_curves
    q = prepare(x, distance)
    i, j = np.triu_indices(len(q), 1)
    keys = exact_distance(q[i], q[j], distance == "euclidean")
    d = {"euclidean": np.sqrt(np.maximum(keys, 0)), "cosine": 1 + keys, "inner_product": keys}[distance]
    positive = labels[i] == labels[j]
    assert curves["n_positive"] == positive.sum() and curves["n_negative"] == (~positive).sum()
    fpr, tpr, _ = sklearn_metrics.roc_curve(positive, -d, drop_intermediate=False)
    on_roc = set(zip(fpr.round(12).tolist(), tpr.round(12).tolist(), strict=True))
    for t, fmr, fnmr in zip(curves["threshold"], curves["fmr"], curves["fnmr"], strict=True):
        assert (round(fmr, 12), round(1 - fnmr, 12)) in on_roc | {(0.0, 0.0)}
        near = np.abs(d - t) <= 1e-9 * max(1.0, abs(t))
        if not near.any():  # a threshold at a pair's distance (to rounding) could count it either way
            assert fmr == pytest.approx((d[~positive] < t).mean(), abs=1e-15)
            assert fnmr == pytest.approx(1 - (d[positive] < t).mean(), abs=1e-15)
    assert np.all(np.diff(curves["fmr"]) >= 0) and np.all(np.diff(curves["fnmr"]) <= 0)
    assert curves["positive"].sum() == positive.sum() and curves["negative"].sum() == (~positive).sum()
    edges = curves["edges"]
    assert np.all(np.diff(edges) > 0) and edges[0] <= d.min() + 1e-9 and edges[-1] >= d.max() - 1e-9
    inside = np.searchsorted(edges, d[positive], side="right") - 1
    np.testing.assert_array_equal(
        np.bincount(np.clip(inside, 0, len(edges) - 2), minlength=len(edges) - 1), curves["positive"]
    )


def test_a_result_without_verification_has_no_pair_curves():
    x = np.random.default_rng(0).standard_normal((20, 3)).astype(np.float32)
    assert embedeval.evaluate(x, np.arange(20) % 2, metrics=["map@r"]).pair_curves is None


def test_the_curves_follow_the_set_level_metrics_through_take_and_select():
    x = np.random.default_rng(0).standard_normal((30, 3)).astype(np.float32)
    result = embedeval.evaluate(x, np.arange(30) % 3, metrics=["eer", "map@r"])
    assert result.select(["eer"]).pair_curves is result.pair_curves
    assert result.select(["map@r"]).pair_curves is None
    assert result.take(np.arange(30)[::-1]).pair_curves is result.pair_curves  # the same set of queries
    assert result.take(np.arange(10)).pair_curves is None  # a subset: the pairs were all 30 queries'
