"""Tie-aware gains where no gain falls inside the cutoff: a number (0), never a crash.

The expected DCG/CG of a tie-aware rule is the mean over every order of the tied items; it is
checked here against that mean computed by enumerating the orders, on small drawn runs whose
relevant items often all fall beyond the cutoff.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import embedeval

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def dcg(grades, k, exponential=False, discounted=True):
    gain = (lambda g: 2.0**g - 1) if exponential else (lambda g: max(g, 0.0))
    return sum(gain(g) / (math.log2(i + 2) if discounted else 1.0) for i, g in enumerate(grades[:k]))


def expected_by_enumeration(scores, grades, k, **kw):
    """Mean of the metric over every order that keeps higher scores first."""
    levels = sorted(set(scores), reverse=True)
    groups = [[g for s, g in zip(scores, grades, strict=True) if s == level] for level in levels]
    values = [
        dcg([g for perm in orders for g in perm], k, **kw)
        for orders in itertools.product(*[list(itertools.permutations(group)) for group in groups])
    ]
    return sum(values) / len(values)


@FAST
@given(
    scores=st.lists(st.integers(0, 2), min_size=1, max_size=6),
    grades=st.lists(st.integers(0, 2), min_size=6, max_size=6),
    k=st.integers(1, 4),
    family=st.sampled_from(["dcg", "dcg_exp", "cg"]),
    form=st.sampled_from(["mapping", "matrix"]),
)
def test_expected_gains_equal_the_mean_over_every_order(scores, grades, k, family, form):
    grades = grades[: len(scores)]
    if not any(grades):
        grades[-1] = 1  # one relevant item, so that the query counts
    metric = f"{family}@{k}"
    if form == "mapping":
        run = {"q": {f"d{i}": float(s) for i, s in enumerate(scores)}}
        qrels = {"q": {f"d{i}": g for i, g in enumerate(grades) if g}}
        got = embedeval.evaluate_rankings(run, qrels, metrics=[metric], ties="expected").summary[metric]
    else:
        got = embedeval.evaluate_scores(
            np.array([scores], dtype=float), np.array([grades]), metrics=[metric], ties="expected"
        ).summary[metric]
    kw = {"exponential": family == "dcg_exp", "discounted": family != "cg"}
    assert got == pytest.approx(expected_by_enumeration(scores, grades, k, **kw), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("metric", ["dcg@1", "dcg_exp@1", "cg@1"])
@pytest.mark.parametrize("ties", ["expected", "optimistic", "pessimistic"])
def test_no_gain_inside_the_cutoff_is_zero(metric, ties):
    got = embedeval.evaluate_rankings({"q": {"a": 1.0, "b": 0.0}}, {"q": {"b": 1}}, metrics=[metric], ties=ties)
    assert got.summary[metric] == 0.0
