"""Confidence-aware metrics, bootstrap intervals and paired comparisons."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import embedeval
from embedeval.confidence import auroc, error_reject_curve, kendall, spearman, top1_auroc
from embedeval.reality_check import confidence_experiment, make_example
from embedeval.result import EvaluationResult
from embedeval.stats import bootstrap, compare, holm, paired_randomization_test


def test_erc_of_a_perfect_confidence_is_the_oracle():
    rng = np.random.default_rng(0)
    values = rng.random(200)
    curve = error_reject_curve(values, confidence=values)  # errors (1 - value) least confident
    np.testing.assert_allclose(curve.error, curve.oracle, rtol=1e-12)
    assert curve.area == pytest.approx(curve.oracle_area)


def test_erc_of_a_constant_confidence_is_the_random_curve():
    values = np.random.default_rng(1).integers(0, 2, 150).astype(float)
    curve = error_reject_curve(values, confidence=np.full(150, 0.3))
    np.testing.assert_allclose(curve.error, curve.random, rtol=1e-12)
    np.testing.assert_allclose(curve.random, 1 - values.mean())


def test_erc_equals_the_average_over_tie_orders():
    """With tied confidences the curve is the expectation over every order of the ties."""
    values = np.array([1.0, 0.0, 0.5, 0.0, 1.0, 0.25])
    conf = np.array([0.1, 0.1, 0.1, 0.4, 0.4, 0.9])
    curves = []
    groups = [[0, 1, 2], [3, 4], [5]]
    for p0 in itertools.permutations(groups[0]):
        for p1 in itertools.permutations(groups[1]):
            order = [*p0, *p1, 5]
            err = 1 - values[order]
            curves.append([err[m:].mean() for m in range(6)])
    expected = np.mean(curves, axis=0)
    np.testing.assert_allclose(error_reject_curve(values, conf).error, expected, rtol=1e-12)


def test_erc_leaves_out_skipped_queries():
    curve = error_reject_curve(np.array([1.0, np.nan, 0.0]), np.array([0.9, 0.5, 0.1]))
    assert curve.n_skipped == 1 and curve.error.tolist() == [0.5, 0.0]


def _brute_auroc(y, c):
    pos, neg = c[y > 0.5], c[y <= 0.5]
    return np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])


def _brute_kendall_b(x, y):
    n = len(x)
    s = sum(np.sign(x[i] - x[j]) * np.sign(y[i] - y[j]) for i in range(n) for j in range(i + 1, n))
    tx = sum(x[i] == x[j] for i in range(n) for j in range(i + 1, n))
    ty = sum(y[i] == y[j] for i in range(n) for j in range(i + 1, n))
    n0 = n * (n - 1) / 2
    return s / math.sqrt((n0 - tx) * (n0 - ty))


def _brute_spearman(x, y):
    def ranks(v):
        return np.array([np.sum(v < a) + (np.sum(v == a) + 1) / 2 for a in v])

    return np.corrcoef(ranks(x), ranks(y))[0, 1]


@pytest.mark.parametrize("seed", range(8))
def test_auroc_and_rank_correlations_match_their_definitions(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 60))
    x = rng.integers(0, 5, n).astype(float)  # many ties
    y = rng.integers(0, 4, n).astype(float)
    c = np.round(rng.random(n), 1)
    correct = rng.integers(0, 2, n).astype(float)
    if 0 < correct.sum() < n:
        assert auroc(correct, c) == pytest.approx(_brute_auroc(correct, c), rel=1e-12)
    if np.ptp(x) > 0 and np.ptp(y) > 0:
        assert kendall(x, y) == pytest.approx(_brute_kendall_b(x, y), rel=1e-12, abs=1e-12)
        assert spearman(x, y) == pytest.approx(_brute_spearman(x, y), rel=1e-12, abs=1e-12)


def test_rank_correlation_is_scale_free():
    """Predicted sigmas on another scale (monotone transform) correlate perfectly with the truth."""
    truth = np.random.default_rng(2).random(500)
    predicted = np.exp(7 * truth) + 3
    assert spearman(truth, predicted) == pytest.approx(1.0)
    assert kendall(truth, predicted) == pytest.approx(1.0)
    assert kendall(truth, -predicted) == pytest.approx(-1.0)


def test_rank_correlations_tie_equal_infinities_as_scipy_does():
    """1 / sigma with several sigma = 0: the infinities are one tied group, not ranked apart."""
    stats = pytest.importorskip("scipy.stats")
    sigma = np.array([0, 0, 1, 2, 0.5, 0, 3, 0.1, 0, 4])
    truth = np.array([0.1, 0.2, 0.8, 2.1, 0.4, 0.05, 2.9, 0.3, 0.0, 3.5])
    with np.errstate(divide="ignore"):
        for confidence in (1 / sigma, -1 / sigma, np.where(sigma == 0, -np.inf, np.inf)):
            assert spearman(confidence, truth) == pytest.approx(stats.spearmanr(confidence, truth)[0], rel=1e-12)
            assert kendall(confidence, truth) == pytest.approx(stats.kendalltau(confidence, truth)[0], rel=1e-12)


@pytest.mark.parametrize("function", [spearman, kendall])
def test_rank_correlations_refuse_nan_naming_the_argument(function):
    with pytest.raises(
        ValueError, match=r"'b' must not contain NaN \(it has no rank\); got 1 NaN\(s\), first at position 2"
    ):
        function([1.0, 2.0, 3.0, 4.0], [1.0, 2.0, np.nan, 4.0])


def test_infinite_confidences_are_the_extremes_of_the_order():
    """Only the order of confidences matters, so +-inf act as the largest and smallest values."""
    values = np.array([1.0, 0.0, 0.5, 1.0, 0.0, 0.25, 1.0])
    infinite = np.array([np.inf, -np.inf, 0.3, np.inf, -np.inf, 0.1, 0.7])
    finite = np.array([9.0, -9.0, 0.3, 9.0, -9.0, 0.1, 0.7])
    np.testing.assert_array_equal(error_reject_curve(values, infinite).error, error_reject_curve(values, finite).error)
    assert auroc(values > 0.5, infinite) == auroc(values > 0.5, finite)
    with pytest.raises(ValueError, match="'confidence' must not contain NaN"):
        error_reject_curve(values, np.where(infinite > 1, np.nan, infinite))


def test_top1_auroc_needs_precision_at_1():
    result = embedeval.evaluate(*make_example(2, 200), metrics=["map@r"])
    with pytest.raises(ValueError, match="must contain 'precision@1'"):
        top1_auroc(result, np.ones(200))


def test_confidence_experiment_scores_worsen_as_errors_grow_confident():
    exp = confidence_experiment(n=600, seed=0, levels=[0.0, 0.5, 1.0])
    assert np.all(np.diff(exp["erc_area_precision@1"]) > 0)
    assert np.all(np.diff(exp["erc_area_map@r"]) > 0)
    assert np.all(np.diff(exp["top1_auroc"]) < 0)


def _result(values: np.ndarray, labels=None) -> EvaluationResult:
    return EvaluationResult(
        summary={"m": float(np.nanmean(values))},
        per_query={"m": values},
        definitions={"m": "a metric"},
        conventions={},
        n_queries=values.size,
        n_evaluated=int((~np.isnan(values)).sum()),
        query_labels=labels,
    )


def test_bootstrap_interval_coverage_by_simulation():
    """About 95% of 200 intervals (n = 150 Bernoulli(0.3) queries each) contain the true mean 0.3."""
    rng = np.random.default_rng(12345)
    covered = 0
    for i in range(200):
        values = (rng.random(150) < 0.3).astype(float)
        interval = bootstrap(_result(values), confidence=0.95, n_bootstrap=1000, seed=i)["m"]
        covered += interval.low <= 0.3 <= interval.high
    assert 0.90 <= covered / 200 <= 0.985


def test_class_bootstrap_is_wider_when_queries_of_a_class_move_together():
    rng = np.random.default_rng(3)
    labels = np.repeat(np.arange(20), 10)
    values = np.repeat(rng.random(20), 10)  # every query of a class has the class's value
    by_query = bootstrap(_result(values, labels), seed=0)["m"]
    by_class = bootstrap(_result(values, labels), by="class", seed=0)["m"]
    assert (by_class.high - by_class.low) > 2 * (by_query.high - by_query.low)
    assert str(by_query).startswith(f"{values.mean():.4f} [")


def test_bootstrap_is_seeded_and_covers_every_summary_value():
    result = embedeval.evaluate(*make_example(2, 300), metrics=["precision@1", "map@r"])
    a, b = bootstrap(result, seed=5), bootstrap(result, seed=5)
    assert a == b and set(a) == {"precision@1", "map@r"}
    for name, interval in a.items():
        assert interval.low <= result.summary[name] <= interval.high
    ranking = embedeval.evaluate_rankings([[1, 2], [3, 4]], [{2}, {3}], metrics=["mrr"])
    assert bootstrap(ranking)["mrr"].estimate == 0.75
    with pytest.raises(ValueError, match=r"by='class' needs a result of embedeval.evaluate"):
        bootstrap(ranking, by="class")


def test_paired_test_finds_no_difference_between_a_model_and_itself_reordered():
    rng = np.random.default_rng(4)
    x, y = make_example(2, 400, seed=1)
    perm = rng.permutation(400)
    a = embedeval.evaluate(x, y, metrics=["precision@1", "map@r"])
    b = embedeval.evaluate(x[perm], y[perm], metrics=["precision@1", "map@r"])
    with pytest.raises(ValueError, match="pair the same queries"):
        compare(a, b)
    aligned = b.take(np.argsort(perm))
    for row in compare(a, aligned, n_resamples=2000):
        assert row.difference.estimate == 0.0 and row.p_value == 1.0 and row.p_adjusted == 1.0


def test_paired_test_finds_a_degraded_model():
    x, y = make_example(2, 600, seed=2)
    noisy = x + np.random.default_rng(5).normal(0, 0.3, x.shape).astype(np.float32)
    a = embedeval.evaluate(x, y, metrics=["precision@1", "map@r"])
    b = embedeval.evaluate(noisy, y, metrics=["precision@1", "map@r"])
    rows = compare(a, b, n_resamples=2000)
    for row in rows:
        assert row.difference.estimate < 0 and row.difference.high < 0
        assert row.p_adjusted < 0.01
    assert "B-A" in str(rows[0])


def test_randomization_test_false_positive_rate():
    """Two models with the same per-query success rate: rejected at 5% about 5% of the time."""
    rng = np.random.default_rng(6)
    rejections = sum(
        paired_randomization_test(rng.random(80) < 0.6, rng.random(80) < 0.6, n_resamples=999, seed=s) < 0.05
        for s in range(200)
    )
    assert 2 <= rejections <= 20


@pytest.mark.parametrize("n_resamples", [0, -5, 2.5])
def test_compare_refuses_a_resample_count_below_one(n_resamples):
    result = embedeval.evaluate(*make_example(2, 100), metrics=["map@r"])
    with pytest.raises(ValueError, match=rf"'n_resamples' must be an int >= 1; got {n_resamples}"):
        compare(result, result, n_resamples=n_resamples)
    with pytest.raises(ValueError, match="'n_resamples' must be an int >= 1"):
        paired_randomization_test(np.zeros(3), np.ones(3), n_resamples=n_resamples)


def test_a_comparison_prints_p_values_the_way_the_tables_do():
    a = embedeval.evaluate(*make_example(2, 300), metrics=["map@r"])
    b = embedeval.evaluate(make_example(2, 300)[0] * [1.0, 0.5], make_example(2, 300)[1], metrics=["map@r"])
    (row,) = compare(a, b)
    assert row.p_value == 1 / 10_001 and str(row).endswith("p <0.0001 (Holm <0.0001, n=300)")


def test_holm_adjustment():
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03, 0.005]), [0.03, 0.06, 0.06, 0.02])


def test_compare_is_a_view_of_compare_systems():
    """One comparison engine (issue 54): the same pair, seed and counts give the same p-value,
    difference and interval through compare and through compare_systems (0.0364 against 0.0330
    when compare had its own bootstrap and sign-flip loops)."""
    from embedeval.stats import compare_systems

    x, y = make_example(2, 300, seed=3)
    noisy = x + np.random.default_rng(8).normal(0, 0.03, x.shape).astype(np.float32)
    a = embedeval.evaluate(x, y, metrics=["precision@1", "map@r"])
    b = embedeval.evaluate(noisy, y, metrics=["precision@1", "map@r"])
    rows = compare(a, b, n_resamples=999, seed=7)
    for row in rows:
        pair = compare_systems({"A": a, "B": b}, metrics=[row.metric], n_resamples=999, seed=7)
        want = pair.pair("A", "B", row.metric)
        assert 0.001 < row.p_value < 1
        assert row.p_value == want["p_value"]
        assert (row.difference.estimate, row.difference.low, row.difference.high) == (
            want["difference"],
            want["low"],
            want["high"],
        )
    np.testing.assert_allclose([r.p_adjusted for r in rows], holm([r.p_value for r in rows]))


def test_bootstrap_takes_n_bootstrap_and_the_old_spelling_with_a_deprecation_warning():
    result = _result(np.random.default_rng(2).random(50))
    new = bootstrap(result, n_bootstrap=300, seed=1)
    with pytest.warns(DeprecationWarning, match="pass n_bootstrap"):
        old = bootstrap(result, n_resamples=300, seed=1)
    assert new == old


def test_bootstrap_holds_a_bounded_block_of_weights_and_draws_as_one_array():
    """The interval resamples in blocks of at most BOOTSTRAP_ELEMENTS weights (issue 55 item 19:
    it doubled peak memory, 16M weights and as many indices at once), with the draws of one
    (n_resamples, n_queries) array of indices whatever the block."""
    import tracemalloc

    from embedeval._core.budget import BOOTSTRAP_ELEMENTS
    from embedeval._stats.resampling import query_weights

    n, replicates = 20_000, 2000
    blocks = list(query_weights(n, 300, np.random.default_rng(1)))
    assert max(b.size for b in blocks) <= max(BOOTSTRAP_ELEMENTS, n)
    drawn = np.random.default_rng(1).integers(0, n, size=(300, n), dtype=np.int64)
    np.testing.assert_array_equal(np.concatenate(blocks), [np.bincount(r, minlength=n) for r in drawn])
    result = _result(np.random.default_rng(2).random(n))
    tracemalloc.start()
    bootstrap(result, n_bootstrap=replicates, seed=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 3 * 8 * BOOTSTRAP_ELEMENTS + 64 * n * 8  # ~25 MB here; it was ~390 MB
