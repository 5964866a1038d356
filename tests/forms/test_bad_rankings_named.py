"""A bad ranking or score is refused naming the argument and the query, whichever query it is;
evaluate_retrieval warns when no query has a relevant item, as evaluate_rankings does; and
revisited positions must be integers."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import embedeval
from embedeval.protocols import revisited

FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(
    n=st.integers(1, 5),
    bad_at=st.integers(0, 4),
    bad=st.sampled_from([None, 3, 2.5, "ab"]),
    keyed=st.booleans(),
    scored=st.booleans(),
)
def test_a_ranking_that_is_no_ranking_names_its_query(n, bad_at, bad, keyed, scored):
    bad_at %= n
    rankings = [{"a": 1.0, "b": 0.5} if scored else ["a", "b"] for _ in range(n)]
    rankings[bad_at] = bad
    relevance = [{"a"} for _ in range(n)]
    name = f"q{bad_at}" if keyed else str(bad_at)
    if keyed:
        rankings = {f"q{i}": r for i, r in enumerate(rankings)}
        relevance = {f"q{i}": {"a": 1} for i in range(n)}
        name = repr(name)
    with pytest.raises(TypeError, match=rf"'rankings' of query {re.escape(name)} must be a sequence of ids or an"):
        embedeval.evaluate_rankings(rankings, relevance, metrics=["mrr"])


@FAST
@given(n=st.integers(1, 5), bad_at=st.integers(0, 4), value=st.sampled_from([1 + 2j, complex(1, 0), np.complex128(3)]))
def test_a_complex_score_names_its_query_and_id(n, bad_at, value):
    bad_at %= n
    run = {f"q{i}": {"a": 1.0, "b": 0.5} for i in range(n)}
    run[f"q{bad_at}"]["b"] = value
    with pytest.raises(
        ValueError, match=rf"'rankings' scores must be real numbers; got .* for id 'b' of query 'q{bad_at}'"
    ):
        embedeval.evaluate_rankings(run, {q: {"a": 1} for q in run}, metrics=["mrr"])


@pytest.mark.parametrize("empty", ["skip", "zero"])
def test_retrieval_with_no_relevant_item_warns(empty):
    x = np.eye(4, dtype=np.float32)
    with pytest.warns(UserWarning, match=r"no query has a relevant item \(a judged grade >= 5\)"):
        result = embedeval.evaluate_retrieval(
            x, x, qrels={0: {1: 1}, 2: {3: 2}}, metrics=["mrr"], threshold=5, empty=empty
        )
    assert np.isnan(result.summary["mrr"]) == (empty == "skip")


def test_retrieval_with_a_relevant_item_does_not_warn():
    x = np.eye(4, dtype=np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        embedeval.evaluate_retrieval(x, x, qrels={0: {1: 1}}, metrics=["mrr"])


def test_empty_zero_warning_says_graded_metrics_are_not_zero():
    with pytest.warns(UserWarning, match="every binary metric is 0 \\(graded ones still count"):
        result = embedeval.evaluate_rankings(
            {"q": {"a": 2.0, "b": 1.0}}, {"q": {"a": 1}}, metrics=["dcg", "mrr"], threshold=2, empty="zero"
        )
    assert result.summary == {"dcg": 1.0, "mrr": 0.0}


@pytest.mark.parametrize("bad", [[1.7], [0, 2.5], [-1], ["a"], [float("nan")], [True]])
def test_revisited_refuses_positions_that_are_not_integers(bad):
    with pytest.raises(ValueError, match=r"'gnd' entry 0 must list database positions \(integers >= 0\) under 'hard'"):
        revisited([{"easy": [0], "hard": bad}], "hard")


def test_revisited_reads_integral_floats_as_positions():
    assert revisited([{"easy": np.array([0.0, 3.0]), "junk": [1]}], "easy") == ({0: {0: 1, 3: 1}}, {0: [1]})
