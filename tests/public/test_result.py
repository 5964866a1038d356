"""The result object: built one way from per-query arrays, and restricted with `take`."""

from __future__ import annotations

import numpy as np

import embedeval
from embedeval.result import EvaluationResult


def test_from_per_query_counts_every_skip_reason_and_take_keeps_them():
    values = np.array([0.5, np.nan, 1.0, np.nan, np.nan])
    result = EvaluationResult.from_per_query(
        {"m": values},
        {"m": "a metric"},
        {},
        skip_codes=np.array([-1, 0, -1, 1, 1], dtype=np.int8),
        skip_reasons=("R = 0", "every relevant item ignored"),
        query_labels=np.array(["a", "a", "b", "b", "c"]),
        approximation={"neighbour_recall": 0.9},
    )
    assert result.skipped == {"no_relevant": 1, "relevant_ignored": 2}  # stable codes
    assert result.skipped["R = 0"] == 1 and "every relevant item ignored" in result.skipped  # sentences too
    assert (result.n_queries, result.n_evaluated) == (5, 2)
    assert result.summary == {"m": 0.75}
    assert result.per_class.macro == {"m": 0.75}
    part = result.take([3, 2, 1])
    assert part.skipped == {"no_relevant": 1, "relevant_ignored": 1}
    assert part.skipped.reasons == result.skipped.reasons
    assert part.approximation == {"neighbour_recall": 0.9}
    assert part.summary == {"m": 1.0} and part.n_evaluated == 1
    assert part.config["subset"] == "3 of 5 queries"


def test_take_of_an_evaluation_reorders_queries_and_recomputes_averages():
    x = np.array([[0.0], [0.1], [1.0], [1.2], [5.0]], dtype=np.float32)
    result = embedeval.evaluate(x, ["a", "a", "b", "b", "z"], metrics=["precision@1"])
    part = result.take([4, 0, 2])
    np.testing.assert_array_equal(part.per_query["precision@1"], result.per_query["precision@1"][[4, 0, 2]])
    assert sum(part.skipped.values()) == 1 and part.n_evaluated == 2
    assert part.per_class.labels.tolist() == ["a", "b"]


def test_select_keeps_the_named_metrics_in_order_with_their_averages():
    x = np.array([[0.0], [0.1], [1.0], [1.2], [5.0]], dtype=np.float32)
    result = embedeval.evaluate(x, ["a", "a", "b", "b", "z"], metrics=["precision@1", "map@r", "recall@2"])
    part = result.select(["recall@2", "precision@1"])
    assert list(part.summary) == ["recall@2", "precision@1"]
    assert part.summary["precision@1"] == result.summary["precision@1"]
    assert list(part.per_class.macro) == ["recall@2", "precision@1"]
    assert part.skipped == result.skipped and part.n_evaluated == result.n_evaluated
