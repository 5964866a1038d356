"""The tests across datasets against the tools that define them: Friedman's statistic and p against
``scipy.stats.friedmanchisquare``, Nemenyi's q against Demšar's table, its p-values against scikit-posthocs,
Wilcoxon's signed-rank against ``scipy.stats.wilcoxon`` (every zero method and method), and the
Bayesian signed-rank test against baycomp."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy import stats

from embedeval._stats.across_bayes import bayes_signed_rank
from embedeval._stats.across_friedman import (
    critical_difference,
    friedman,
    nemenyi_p_values,
    nemenyi_q,
)
from embedeval._stats.across_wilcoxon import signed_rank
from embedeval._stats.distributions import average_ranks

# Demšar (2006), Table 5(a): q_alpha of the two-tailed Nemenyi test, k = 2..10.
DEMSAR_Q = {
    0.05: [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164],
    0.10: [1.645, 2.052, 2.291, 2.459, 2.589, 2.693, 2.780, 2.855, 2.920],
}


def _tables(seed: int, count: int):
    """Random score tables (n_datasets, n_systems), rounded so that some scores tie."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        n, k = int(rng.integers(2, 30)), int(rng.integers(3, 9))
        yield np.round(rng.normal(size=(n, k)) + rng.normal(size=k), int(rng.integers(0, 3)))


def test_average_ranks_equal_scipy_rankdata_of_the_negated_scores():
    for table in _tables(0, 20):
        expected = stats.rankdata(-table, axis=1, method="average")
        np.testing.assert_array_equal(average_ranks(table), expected)


def test_friedman_equals_scipy_friedmanchisquare_with_ties():
    for table in _tables(1, 40):
        got = friedman(table)
        want = stats.friedmanchisquare(*table.T)
        if np.all(table == table[:, :1]):
            continue  # scipy divides by zero when every score of every dataset ties
        assert got.statistic == pytest.approx(want.statistic, rel=1e-12, abs=1e-12)
        assert got.p_value == pytest.approx(want.pvalue, rel=1e-9, abs=1e-14)


def test_iman_davenport_f_is_its_formula_on_the_f_distribution():
    table = np.array([[0.9, 0.8, 0.7, 0.6], [0.7, 0.9, 0.8, 0.5], [0.8, 0.7, 0.9, 0.6], [0.6, 0.8, 0.7, 0.9]] * 3)
    got = friedman(table)
    n, k = table.shape
    f = (n - 1) * got.statistic / (n * (k - 1) - got.statistic)
    assert got.f == pytest.approx(f, rel=1e-12)
    assert (got.df1, got.df2) == (k - 1, (k - 1) * (n - 1))
    assert got.p_f == pytest.approx(stats.f.sf(f, k - 1, (k - 1) * (n - 1)), rel=1e-10)


def test_friedman_when_every_dataset_ranks_alike_has_infinite_f_and_p_zero():
    got = friedman(np.tile([3.0, 2.0, 1.0], (5, 1)))
    assert got.statistic == pytest.approx(10.0)  # N (k - 1)
    assert math.isinf(got.f) and got.p_f == 0.0


def test_friedman_of_all_ties_is_zero_with_p_one():
    got = friedman(np.ones((4, 3)))
    assert got.statistic == 0.0 and got.p_value == 1.0


@pytest.mark.parametrize("alpha", [0.05, 0.10])
def test_nemenyi_q_equals_demsars_table_for_k_2_to_10(alpha):
    """Three of the table's 18 entries differ from the rounded value in the last digit (2.3437 is
    printed 2.343, 2.9483 2.949, 2.4595 2.459), so the agreement is within one unit of the third
    decimal."""
    for k, want in zip(range(2, 11), DEMSAR_Q[alpha], strict=True):
        assert abs(nemenyi_q(alpha, k) - want) <= 0.001 + 1e-12


def test_critical_difference_is_q_times_the_standard_error():
    assert critical_difference(0.05, 4, 14) == pytest.approx(2.569 * math.sqrt(4 * 5 / (6 * 14)), abs=1e-3)


def test_nemenyi_p_values_equal_scikit_posthocs():
    sp = pytest.importorskip("scikit_posthocs")
    for table in _tables(2, 10):
        n, k = table.shape
        mean = average_ranks(table).mean(axis=0)
        pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]
        want = np.asarray(sp.posthoc_nemenyi_friedman(table))
        got = nemenyi_p_values(mean, n, pairs)
        np.testing.assert_allclose(got, [want[i, j] for i, j in pairs], atol=1e-9)


def _differences(seed: int, count: int):
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n = int(rng.integers(2, 14 if trial % 2 else 60))  # half of them small: exact and enumerated
        x = np.round(rng.normal(size=n), int(rng.integers(0, 3)))
        y = np.round(rng.normal(size=n) + 0.3, int(rng.integers(0, 3)))
        if trial % 3 == 0:
            y[: n // 3] = x[: n // 3]  # zero differences
        if np.any(x != y):
            yield x, y


@pytest.mark.parametrize("zero_method", ["wilcox", "pratt", "zsplit"])
@pytest.mark.parametrize(("method", "scipy_method"), [("auto", "auto"), ("exact", "exact"), ("approx", "asymptotic")])
def test_wilcoxon_equals_scipy(zero_method, method, scipy_method):
    """Small and large samples, with ties, with zeros; statistic and p-value, with and without
    the continuity correction (which only the normal form uses)."""
    for x, y in _differences(3, 14 if method == "auto" else 30):  # scipy's auto enumerates slowly
        for correction in (False, True) if method != "exact" else (False,):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = stats.wilcoxon(x, y, zero_method=zero_method, correction=correction, method=scipy_method)
            got = signed_rank(x, y, zero_method=zero_method, correction=correction, method=method)
            assert got.statistic == pytest.approx(want.statistic)
            assert got.p_value == pytest.approx(want.pvalue, rel=1e-9, abs=1e-12)


def test_wilcoxon_auto_uses_each_of_its_three_methods():
    rng = np.random.default_rng(4)
    x = rng.normal(size=60)
    assert signed_rank(x[:10], x[10:20]).method == "exact"
    assert signed_rank(np.round(x[:10]), np.round(x[10:20])).method == "enumerated"
    assert signed_rank(x[:30], x[30:]).method == "exact"
    assert signed_rank(np.round(x[:30]), np.round(x[30:])).method == "approx"


def test_wilcoxon_without_any_difference_is_p_one():
    got = signed_rank([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    assert (got.statistic, got.p_value) == (0.0, 1.0)


def test_posthoc_wilcoxon_with_holm_equals_scikit_posthocs():
    sp = pytest.importorskip("scikit_posthocs")
    from embedeval._stats.corrections import adjust

    table = np.random.default_rng(5).normal(size=(12, 4)) + np.arange(4) * 0.4
    pairs = [(i, j) for i in range(4) for j in range(i + 1, 4)]
    want = np.asarray(sp.posthoc_wilcoxon(table.T.tolist(), p_adjust="holm"))
    got = adjust([signed_rank(table[:, i], table[:, j]).p_value for i, j in pairs], "holm")
    np.testing.assert_allclose(got, [want[i, j] for i, j in pairs], rtol=1e-12)


@pytest.mark.parametrize("rope", [0.0, 0.01])
def test_bayesian_signed_rank_agrees_with_baycomp(rope):
    """Two Monte Carlo estimates of the same probabilities: within 0.015 at 20,000 samples each
    (their standard errors are below 0.0036)."""
    baycomp = pytest.importorskip("baycomp")
    rng = np.random.default_rng(6)
    for trial in range(3):
        a = rng.uniform(0.5, 0.9, size=10)
        b = a + rng.normal(0.01, 0.02, size=10)
        got = bayes_signed_rank(a, b, rope=rope, n_samples=20000, rng=np.random.default_rng(trial))
        want = baycomp.SignedRankTest.probs(a, b, rope=rope, nsamples=20000, random_state=trial)
        if rope == 0:
            want = (want[0], 0.0, want[1])
        np.testing.assert_allclose(got, want, atol=0.015)


def test_bayesian_signed_rank_is_sure_when_every_dataset_agrees_and_equivalent_inside_the_rope():
    a = np.linspace(0.5, 0.8, 12)
    better = bayes_signed_rank(a, a + 0.05, rope=0.01, n_samples=4000, rng=np.random.default_rng(0))
    same = bayes_signed_rank(a, a + 0.001, rope=0.01, n_samples=4000, rng=np.random.default_rng(0))
    assert better[2] == 1.0
    assert same[1] == 1.0


@pytest.mark.parametrize("rope", [0.0, 0.01])
def test_bayesian_signed_rank_of_identical_systems_favours_neither(rope):
    """A sample whose largest probability is shared by two regions counts half to each: identical
    systems with rope 0 (theta_worse = theta_better = 1/2 in every sample) give P(worse) =
    P(better) = 1/2, not P(worse) = 1; with a rope they are equivalent."""
    a = np.linspace(0.5, 0.8, 12)
    got = bayes_signed_rank(a, a.copy(), rope=rope, n_samples=2000, rng=np.random.default_rng(0))
    assert got == ((0.5, 0.0, 0.5) if rope == 0 else (0.0, 1.0, 0.0))
