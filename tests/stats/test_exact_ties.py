"""Resampled statistics equal to the observed one in exact arithmetic count, whatever their
float64 rounding: checked against exact enumeration in fractions.Fraction on values on a grid
(steps of 1/3 ... 1/12), where sums that are equal as rationals often differ in the last bit."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from embedeval._stats.resampling import flip_exceedances
from embedeval._stats.rounding import tolerance
from embedeval.stats import compare, compare_systems, paired_randomization_test


@st.composite
def grid_pairs(draw, max_n=9, zero_sum=False):
    """(a, b, denominator): paired values k / m in [0, 1]; with zero_sum, b is a permutation of
    a, so the exact mean difference is 0."""
    m = draw(st.integers(3, 12))
    n = draw(st.integers(2, max_n))
    a = draw(st.lists(st.integers(0, m), min_size=n, max_size=n))
    b = draw(st.permutations(a)) if zero_sum else draw(st.lists(st.integers(0, m), min_size=n, max_size=n))
    return a, b, m


def _floats(k, m):
    return np.array([ki / m for ki in k])


def _exact_count(a, b, m) -> int:
    """Sign flips s with |sum s_i (b_i - a_i)| >= |sum (b_i - a_i)|, over all 2^n, in rationals."""
    d = [Fraction(bi - ai, m) for ai, bi in zip(a, b, strict=True)]
    observed = abs(sum(d))
    return sum(
        abs(sum(s * di for s, di in zip(signs, d, strict=True))) >= observed
        for signs in itertools.product((1, -1), repeat=len(d))
    )


@settings(max_examples=300, deadline=None)
@given(grid_pairs())
def test_every_sign_flip_is_counted_as_in_exact_arithmetic(case):
    """All 2^n flips through the kernel give the exact rational count."""
    a, b, m = case
    fa, fb = _floats(a, m), _floats(b, m)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=len(a))))
    slack = np.atleast_1d(tolerance(len(a), np.abs(fa).sum() + np.abs(fb).sum()))
    assert int(flip_exceedances((fb - fa)[:, None], signs, slack)[0]) == _exact_count(a, b, m)


def test_the_issue_example_has_p_one():
    """Float sum of the differences -5.6e-17; every flip is at least as extreme in exact arithmetic."""
    assert paired_randomization_test([0.9, 0.2, 0.6, 0.8], [0.6, 0.9, 0.2, 0.8]) == 1.0


_ZERO = grid_pairs(max_n=12, zero_sum=True)


@settings(max_examples=150, deadline=None)
@given(_ZERO)
def test_exact_zero_difference_gives_p_one_in_the_randomization_test(case):
    a, b, m = case
    assert paired_randomization_test(_floats(a, m), _floats(b, m), n_resamples=200) == 1.0


@settings(max_examples=150, deadline=None)
@given(_ZERO)
def test_exact_zero_difference_gives_p_one_in_compare_systems(case):
    a, b, m = case
    c = compare_systems({"A": _floats(a, m), "B": _floats(b, m)}, n_resamples=200, confidence=None)
    assert c.pairs[0]["p_value"] == 1.0


@settings(max_examples=150, deadline=None)
@given(_ZERO)
def test_exact_zero_difference_gives_p_one_in_the_tukey_hsd(case):
    """With two systems every permutation's range is >= 0 = the exact gap."""
    a, b, m = case
    c = compare_systems({"A": _floats(a, m), "B": _floats(b, m)}, pairs="all", n_resamples=200, confidence=None)
    assert c.pairs[0]["p_tukey"] == 1.0


@settings(max_examples=150, deadline=None)
@given(_ZERO)
def test_exact_zero_difference_gives_zero_difference_effect_and_shared_rank(case):
    a, b, m = case
    c = compare_systems({"A": _floats(a, m), "B": _floats(b, m)}, test="t", n_bootstrap=50)
    row = c.pairs[0]
    assert (row["p_value"], row["difference"], row["effect_size"]) == (1.0, 0.0, 0.0)
    assert c.ranks["value"]["A"]["rank"] == c.ranks["value"]["B"]["rank"] == 1


def _result(values):
    from embedeval.result import EvaluationResult

    return EvaluationResult.from_per_query({"map": np.asarray(values)}, {"map": "mean average precision"}, {})


@settings(max_examples=60, deadline=None)
@given(grid_pairs(zero_sum=True))
def test_compare_of_two_results_counts_exact_ties(case):
    a, b, m = case
    (row,) = compare(_result(_floats(a, m)), _result(_floats(b, m)), n_resamples=200)
    assert row.p_value == 1.0


def test_runs_equal_in_exact_arithmetic_are_ties_and_share_a_rank():
    """Three runs given in another order: run means and system means equal as rationals but
    summed in another order; every query is a tie and the systems share rank 1."""
    rng = np.random.default_rng(3)
    found = 0
    for _ in range(200):
        runs = [rng.integers(0, 13, size=6) / 12 for _ in range(3)]
        shuffled = [runs[1], runs[2], runs[0]]
        if np.array_equal(np.mean(runs, axis=0), np.mean(shuffled, axis=0)):
            continue
        found += 1
        c = compare_systems({"A": runs, "B": shuffled}, n_bootstrap=50)
        row = c.pairs[0]
        assert (row["wins"], row["ties"], row["losses"]) == (0, 6, 0)
        assert row["difference"] == 0.0
        assert c.ranks["value"]["A"]["rank"] == c.ranks["value"]["B"]["rank"] == 1
    assert found  # the rounding differs in some cases, else this test could not fail


@settings(max_examples=100, deadline=None)
@given(grid_pairs(max_n=10, zero_sum=True), st.integers(0, 2**16))
def test_three_systems_with_equal_means_have_tukey_p_one(case, seed):
    """Three systems whose values are permutations of one another per system (equal means in
    exact arithmetic, summed in other orders): every permutation's range is >= the gaps, 0."""
    a, b, m = case
    c_values = list(np.random.default_rng(seed).permutation(a))
    systems = {"A": _floats(a, m), "B": _floats(b, m), "C": _floats(c_values, m)}
    c = compare_systems(systems, pairs="all", n_resamples=200, confidence=None)
    assert [row["p_tukey"] for row in c.pairs] == [1.0, 1.0, 1.0]
    assert [row["difference"] for row in c.pairs] == [0.0, 0.0, 0.0]
