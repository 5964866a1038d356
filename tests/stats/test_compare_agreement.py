"""compare_systems against established implementations: scipy's paired t and Student's t,
statsmodels' multipletests, scipy's Tukey HSD where the randomised form meets it, and exact
enumerations of the randomization tests on small inputs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats as sps
from statsmodels.stats.multitest import multipletests

from embedeval._stats.corrections import adjust
from embedeval.stats import compare_systems


@pytest.mark.parametrize("seed", range(20))
def test_paired_t_matches_scipy_ttest_rel(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 300))
    a = rng.random((n, 3))
    b = a + rng.normal(rng.normal(0, 0.05), rng.uniform(0.01, 0.3), (n, 3))
    if seed % 4 == 0:  # ties and repeated values, as metrics in [0, 1] have
        a, b = np.round(a, 1), np.round(b, 1)
    b[:, 2] = a[:, 2] + (rng.random(n) < 0.3) * 0.1  # many exact ties
    names = ["m1", "m2", "m3"]
    c = compare_systems(
        {"A": dict(zip(names, a.T, strict=True)), "B": dict(zip(names, b.T, strict=True))},
        test="t",
        confidence=None,
        correction="none",
    )
    for j, m in enumerate(names):
        expected = sps.ttest_rel(b[:, j], a[:, j]).pvalue
        got = c.pair("A", "B", m)["p_value"]
        if np.isnan(expected):  # every difference equal: scipy gives NaN, the rule here is 1 or 0
            d = b[:, j] - a[:, j]
            assert got == (1.0 if not d.any() else 0.0)
        else:
            assert got == pytest.approx(expected, rel=1e-8, abs=1e-300)


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize(("ours", "theirs"), [("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")])
def test_corrections_match_statsmodels(seed, ours, theirs):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 40))
    p = rng.random(m) ** rng.uniform(0.5, 4)
    if seed % 3 == 0:  # ties, ones and tiny values
        p[: m // 2] = np.round(p[: m // 2], 1)
        p[-1] = 1.0
        p[0] = 1e-12
    assert adjust(p, ours) == pytest.approx(multipletests(p, method=theirs)[1], rel=1e-12, abs=0)


def test_corrections_leave_nan_out_of_the_family():
    got = adjust([0.01, np.nan, 0.04], "holm")
    assert np.isnan(got[1]) and got[[0, 2]] == pytest.approx(multipletests([0.01, 0.04], method="holm")[1])


def _exact_sign_flip_p(d):
    observed = abs(d.sum())
    flips = np.array(list(itertools.product([-1, 1], repeat=d.size)))
    return np.mean(np.abs(flips @ d) >= observed * (1 - 1e-12))


@pytest.mark.parametrize("seed", range(6))
def test_randomization_p_approaches_the_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    a = rng.random(10)
    b = a + rng.normal(0.1, 0.2, 10)
    exact = _exact_sign_flip_p(b - a)
    c = compare_systems([a, b], n_resamples=40_000, confidence=None, seed=seed)
    got = c.pairs[0]["p_value"]
    assert got >= 1 / 40_001
    assert abs(got - exact) < 4 * np.sqrt(exact * (1 - exact) / 40_000) + 1e-4


def _exact_tukey_p(values):
    """values (S, n): the share of all within-query permutations whose range of system means is
    at least each pair's observed gap (every one of (S!)^n permutations, enumerated)."""
    s, n = values.shape
    means = values.mean(axis=1)
    perms = list(itertools.permutations(range(s)))
    ranges = []
    for choice in itertools.product(perms, repeat=n):
        permuted = np.array([values[list(p), q] for q, p in enumerate(choice)]).T.mean(axis=1)
        ranges.append(permuted.max() - permuted.min())
    ranges = np.array(ranges)
    return {
        (i, j): np.mean(ranges >= abs(means[j] - means[i]) * (1 - 1e-12)) for i in range(s) for j in range(i + 1, s)
    }


@pytest.mark.parametrize("seed", range(3))
def test_randomised_tukey_approaches_the_exact_enumeration(seed):
    rng = np.random.default_rng(seed)
    values = rng.random((3, 4)) + np.array([[0.0], [0.2], [0.4]])  # 3 systems, 4 queries: 6^4 permutations
    exact = _exact_tukey_p(values)
    c = compare_systems(list(values), pairs="all", n_resamples=30_000, confidence=None, seed=seed)
    names = c.systems
    for (i, j), p in exact.items():
        got = c.pair(names[i], names[j], "value")["p_tukey"]
        assert abs(got - p) < 4 * np.sqrt(p * (1 - p) / 30_000) + 1e-3


@pytest.mark.parametrize("seed", range(4))
def test_randomised_tukey_meets_scipy_tukey_hsd_without_a_query_effect(seed):
    """With no query effect (values independent across systems and queries) the within-query
    permutations are permutations of a one-way layout, and the randomised Tukey HSD approaches
    the classical one of scipy.stats.tukey_hsd (studentized range), up to Monte Carlo error."""
    rng = np.random.default_rng(seed)
    n, shifts = 400, np.array([0.0, 0.05, 0.1, 0.12])
    values = rng.normal(0, 0.5, (4, n)) + shifts[:, None]
    classical = sps.tukey_hsd(*values).pvalue
    c = compare_systems(list(values), pairs="all", n_resamples=4000, confidence=None, seed=seed)
    for i in range(4):
        for j in range(i + 1, 4):
            got = c.pair(c.systems[i], c.systems[j], "value")["p_tukey"]
            assert abs(got - classical[i, j]) < 0.035, (i, j, got, classical[i, j])


def test_randomised_tukey_is_never_below_the_pairwise_test_much():
    """The range over all systems is at least any one pair's gap: Tukey's p-values are at least
    the pairwise two-sided permutation p-values' order of size (a sanity check of direction)."""
    rng = np.random.default_rng(7)
    values = rng.random((5, 60)) + np.linspace(0, 0.1, 5)[:, None]
    c = compare_systems(list(values), pairs="all", n_resamples=3000, confidence=None)
    assert all(r["p_tukey"] >= r["p_value"] - 0.03 for r in c.pairs)
