"""Integer scores are compared exactly: beyond 2**53 float64 would tie neighbours.

Shifting every score by one constant changes no order and no tie, so scores around 2**53 (and
2**63) must give exactly the values of the same scores shifted down to small integers, under the
index rule and under every tie-aware rule, for score matrices and ``{id: score}`` mappings.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import embedeval

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
METRICS = ["mrr", "precision@2", "ndcg@3", "map", "dcg@2"]
RULES = st.sampled_from([None, "expected", "optimistic", "pessimistic"])


def same(a, b):
    for m in a.summary:
        assert np.isnan(a.summary[m]) == np.isnan(b.summary[m]), m
        np.testing.assert_array_equal(a.per_query[m], b.per_query[m], err_msg=m)


@FAST
@given(
    offsets=st.lists(st.lists(st.integers(0, 4), min_size=4, max_size=4), min_size=1, max_size=4),
    grades=st.lists(st.integers(0, 2), min_size=16, max_size=16),
    base=st.sampled_from([2**53, 2**53 - 3, 2**62, -(2**63)]),
    ties=RULES,
)
def test_score_matrices_of_big_ints_rank_like_small_ones(offsets, grades, base, ties):
    small = np.array(offsets, dtype=np.int64)
    g = np.array(grades[: small.size]).reshape(small.shape)
    big = small + np.int64(base)
    kwargs = dict(metrics=METRICS, ties=ties, empty="zero")
    same(embedeval.evaluate_scores(big, g, **kwargs), embedeval.evaluate_scores(small, g, **kwargs))


@FAST
@given(
    offsets=st.lists(st.integers(0, 4), min_size=2, max_size=6),
    relevant=st.integers(0, 5),
    base=st.sampled_from([2**53, 2**63, 2**64 + 7]),
    as_float=st.booleans(),
    ties=RULES,
)
def test_mappings_of_big_ints_rank_like_small_ones(offsets, relevant, base, as_float, ties):
    small = {f"d{i}": o for i, o in enumerate(offsets)}
    big = {d: base + o for d, o in small.items()}
    if as_float:  # a float beside the ints: compared exactly, tied only with an equal int
        small["f"], big["f"] = 0.0, float(base)
    qrels = {"q": {f"d{relevant % len(offsets)}": 1}}
    kwargs = dict(metrics=METRICS, ties=ties, empty="zero")
    want = embedeval.evaluate_rankings({"q": small}, qrels, **kwargs)
    if as_float and float(base) != base:  # the float is not equal to base: no longer tied with d-offset 0
        return
    same(embedeval.evaluate_rankings({"q": big}, qrels, **kwargs), want)
