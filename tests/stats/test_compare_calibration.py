"""compare_systems is calibrated: p-values uniform under the null, intervals that cover a known
difference near their level, and, with several runs per system, a two-level bootstrap that
covers where a query-only one is too narrow. Seeded simulations with generous tolerances."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats as sps

from embedeval.stats import compare_systems


@pytest.mark.parametrize("test", ["randomization", "t"])
def test_p_values_are_uniform_under_the_null(test):
    rng = np.random.default_rng(11)
    p = []
    for _ in range(300):
        a = rng.random(25)
        b = a + rng.laplace(0, 0.1, 25)  # symmetric differences around 0: the null holds
        c = compare_systems([a, b], test=test, n_resamples=499, confidence=None, seed=int(rng.integers(1 << 30)))
        p.append(c.pairs[0]["p_value"])
    p = np.array(p)
    assert sps.kstest(p, "uniform").pvalue > 0.001
    assert abs(np.mean(p <= 0.05) - 0.05) < 0.04  # about 15 of 300, binomial sd ~3.8


def test_a_planted_difference_is_found():
    rng = np.random.default_rng(3)
    a = rng.random(200)
    c = compare_systems({"old": a, "new": a + rng.normal(0.05, 0.1, 200)}, n_resamples=2000)
    row = c.pair("old", "new", "value")
    assert row["p_value"] < 0.001 and row["low"] > 0 and row["significant"] and row["wins"] > row["losses"]


@given(
    n=st.integers(1, 40),
    seed=st.integers(0, 2**31),
    scale=st.sampled_from([0.0, 1e-9, 0.1, 1.0]),
)
@settings(max_examples=60, deadline=None)
def test_randomization_p_is_in_range_and_symmetric_in_the_pair(n, seed, scale):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    b = a + scale * rng.normal(size=n)
    ab = compare_systems([a, b], n_resamples=199, seed=seed, n_bootstrap=50)
    ba = compare_systems([b, a], n_resamples=199, seed=seed, n_bootstrap=50)
    p = ab.pairs[0]["p_value"]
    assert 1 / 200 <= p <= 1 and p == ba.pairs[0]["p_value"]
    assert ab.pairs[0]["difference"] == pytest.approx(-ba.pairs[0]["difference"], abs=1e-15)
    assert (ab.pairs[0]["wins"], ab.pairs[0]["ties"]) == (ba.pairs[0]["losses"], ba.pairs[0]["ties"])
    if scale == 0.0:
        assert p == 1.0 and ab.pairs[0]["effect_size"] == 0.0 and ab.pairs[0]["ties"] == n


def test_difference_intervals_cover_a_known_difference_near_their_level():
    """Per-query differences drawn from a skewed population with mean 0.03: the 90% interval
    of the mean difference covers 0.03 in about 90% of 300 simulated evaluations."""
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(300):
        a = rng.random(150)
        d = rng.exponential(0.1, 150) - 0.07  # mean 0.03
        c = compare_systems([a, a + d], confidence=0.9, n_bootstrap=400, test="t", seed=int(rng.integers(1 << 30)))
        hits += c.pairs[0]["low"] <= 0.03 <= c.pairs[0]["high"]
    assert 0.84 <= hits / 300 <= 0.95


def _seeded_runs(rng, mean, n_runs, n_queries, query_values, seed_sd):
    """n_runs runs of one system: a per-run offset (seed variance) plus small per-query noise."""
    return [
        {"value": query_values + mean + rng.normal(0, seed_sd) + rng.normal(0, 0.01, n_queries)} for _ in range(n_runs)
    ]


def coverage(rng, trials=150, n_runs=10, n_queries=100, seed_sd=0.03):
    """(two-level coverage, query-only coverage) of the 90% interval of B - A = 0.02, where the
    variance between seeds dominates the variance between queries of the difference."""
    two_level = query_only = 0
    for _ in range(trials):
        q = rng.random(n_queries)
        a = _seeded_runs(rng, 0.0, n_runs, n_queries, q, seed_sd)
        b = _seeded_runs(rng, 0.02, n_runs, n_queries, q, seed_sd)
        s = int(rng.integers(1 << 30))
        both = compare_systems({"A": a, "B": b}, confidence=0.9, n_bootstrap=400, seed=s).pairs[0]
        flat = {k: {"value": np.mean([r["value"] for r in v], axis=0)} for k, v in (("A", a), ("B", b))}
        one = compare_systems(flat, confidence=0.9, n_bootstrap=400, test="t", seed=s).pairs[0]
        two_level += both["low"] <= 0.02 <= both["high"]
        query_only += one["low"] <= 0.02 <= one["high"]
    return two_level / trials, query_only / trials


def test_two_level_bootstrap_covers_where_the_query_bootstrap_is_too_narrow():
    two_level, query_only = coverage(np.random.default_rng(2))
    assert two_level >= 0.78
    assert query_only <= 0.5
