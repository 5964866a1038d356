"""Queries that are rows of the reference set: ``query_in_reference`` excludes each one's own row by
index (PML's ref_includes_query), and a reference holding the queries without it draws a warning
that gives the fix."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import embedeval

FIX = "query_in_reference="


def blobs(n=300, d=8, k=10, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    return (2 * rng.standard_normal((k, d))[labels] + rng.standard_normal((n, d))).astype(np.float32), labels


def test_the_query_array_passed_as_reference_warns_with_the_fix():
    x, y = blobs()
    with pytest.warns(UserWarning, match=r"'reference' is the 'embeddings' array itself.*precision@1 is 1\.0") as w:
        r = embedeval.evaluate(x, y, reference=x, reference_labels=y)
    assert FIX in str(w[0].message) and "leave-one-out" in str(w[0].message)
    assert r.summary["precision@1"] == 1.0  # what the warning is about


@pytest.mark.parametrize("layout", ["copy", "queries first", "queries last, shuffled gallery"])
def test_identical_rows_in_the_reference_warn(layout):
    x, y = blobs(seed=1)
    gallery, g_labels = blobs(n=200, seed=2)
    if layout == "copy":
        ref, ref_y = x.copy(), y.copy()
    elif layout == "queries first":
        ref, ref_y = np.vstack([x, gallery]), np.concatenate([y, g_labels])
    else:
        ref, ref_y = np.vstack([gallery, x[::-1]]), np.concatenate([g_labels, y[::-1]])
    with pytest.warns(UserWarning, match=r"300 of 300 queries have an identical row with their label in 'reference'"):
        embedeval.evaluate(x, y, reference=ref, reference_labels=ref_y)


def test_a_gallery_with_a_few_true_duplicates_stays_silent():
    x, y = blobs(seed=3)
    gallery, g_labels = blobs(n=400, seed=4)
    gallery[:20], g_labels[:20] = x[:20], y[:20]  # 20 of 300 queries duplicated: legitimate
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        embedeval.evaluate(x, y, reference=gallery, reference_labels=g_labels)


def test_identical_rows_with_other_labels_are_not_self_matches():
    x, y = blobs(seed=5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        embedeval.evaluate(x, y, reference=x.copy(), reference_labels=(y + 1) % 10)


def test_set_level_metrics_that_never_read_the_reference_do_not_check():
    x, y = blobs(seed=6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        embedeval.evaluate(x, y, reference=x.copy(), reference_labels=y, metrics=["nmi", "pcf@0.5"])
    with pytest.warns(UserWarning, match="identical row"):
        embedeval.evaluate(x, y, reference=x.copy(), reference_labels=y, metrics=["eer"])


def test_query_in_reference_over_a_copy_is_leave_one_out():
    """Each query's own row excluded by index: the very numbers of leave-one-out evaluation."""
    x, y = blobs(seed=7)
    x[10] = x[11]  # a duplicate pair keeps its rank: exclusion is by index, not by distance
    y[10] = y[11]
    metrics = ["precision@1", "map@r", "mrr", "r_precision", "recall@5"]
    loo = embedeval.evaluate(x, y, metrics=metrics)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        own = embedeval.evaluate(
            x, y, reference=x.copy(), reference_labels=y, query_in_reference=np.arange(300), metrics=metrics
        )
    for name in metrics:
        np.testing.assert_array_equal(own.per_query[name], loo.per_query[name])
    assert "query_in_reference (300 queries)" in own.conventions["ignore"]


def test_queries_not_in_the_reference_keep_every_row():
    x, y = blobs(seed=8)
    rows = np.arange(300)
    rows[::2] = -1  # even queries are not in the reference
    ref = x.copy()
    r = embedeval.evaluate(x, y, reference=ref, reference_labels=y, query_in_reference=rows, metrics=["precision@1"])
    assert np.all(r.per_query["precision@1"][::2] == 1.0)  # they find their identical row first
    loo = embedeval.evaluate(x, y, metrics=["precision@1"])
    np.testing.assert_array_equal(r.per_query["precision@1"][1::2], loo.per_query["precision@1"][1::2])


def test_lone_queries_are_skipped_as_having_no_relevant_reference():
    x = np.array([[0.0], [0.1], [5.0], [9.0]], dtype=np.float32)
    y = ["a", "a", "b", "c"]
    ref = np.vstack([x, [[5.1]]]).astype(np.float32)
    r = embedeval.evaluate(
        x, y, reference=ref, reference_labels=[*y, "b"], query_in_reference=np.arange(4), metrics=["precision@1"]
    )
    assert r.skipped == {"no_relevant": 1}
    assert r.skipped.reasons["no_relevant"] == ("no reference other than the query's own row shares its label (R = 0)")
    assert r.n_evaluated == 3 and np.isnan(r.per_query["precision@1"][3])


def test_query_in_reference_joins_ignore_lists():
    x, y = blobs(seed=9)
    rows = np.arange(300)
    r = embedeval.evaluate(
        x, y, reference=x.copy(), reference_labels=y, query_in_reference=rows, ignore={0: [5, 0]}, metrics=["mrr"]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # ignore rules given: the caller decides what is excluded, no check
        by_ignore = embedeval.evaluate(
            x,
            y,
            reference=x.copy(),
            reference_labels=y,
            ignore=[[i] + ([5] if i == 0 else []) for i in range(300)],
            metrics=["mrr"],
        )
    np.testing.assert_array_equal(r.per_query["mrr"], by_ignore.per_query["mrr"])
    assert r.config["n_ignored"] == 301


def test_rows_that_are_not_the_queries_draw_a_warning():
    x, y = blobs(seed=10)
    with pytest.warns(UserWarning, match=r"maps 300 of 300 queries to reference rows that differ from them"):
        embedeval.evaluate(x, y, reference=x[::-1].copy(), reference_labels=y[::-1], query_in_reference=np.arange(300))


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"reference": None}, ValueError, r"'query_in_reference' needs 'reference'"),
        ({"query_in_reference": np.arange(5)}, ValueError, r"one reference row per query \(6\); got 5"),
        ({"query_in_reference": [0, 1, 2, 3, 4, 9]}, ValueError, r"rows of 'reference' \(0 to 7\) or -1 .*; got 9"),
        ({"query_in_reference": [0, 1, 2, 3, -2, 9]}, ValueError, r"got -2 for query 4 and 1 more"),
        ({"query_in_reference": np.arange(6.0)}, TypeError, r"1-D array of ints .*; got float64 of shape \(6,\)"),
        ({"query_in_reference": np.zeros((6, 1), int)}, TypeError, r"got int64 of shape \(6, 1\)"),
    ],
)
def test_bad_query_in_reference(kwargs, error, message):
    x = np.random.default_rng(0).standard_normal((8, 3))
    args = {"reference": x, "reference_labels": [0, 0, 1, 1, 2, 2, 3, 3], "query_in_reference": np.arange(6)}
    args.update(kwargs)
    if args["reference"] is None:
        args.pop("reference_labels")
    with pytest.raises(error, match=message):
        embedeval.evaluate(x[:6], [0, 0, 1, 1, 2, 2], **args)
