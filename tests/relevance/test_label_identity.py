"""Labels keep their identity in every reader: Python ints across 2**63, batches of the
Accumulator of mixed types, and NaN refused even inside tuples and label sets."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import evaluate_reference

import embedeval

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# ids around 2**63 on both sides, and negative ones: one list needs more than int64 or uint64
AROUND = [2**63 - 2, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 1, -1, -(2**63), 0, 1, 2**53, 2**53 + 1]
BIG_IDS = st.lists(st.sampled_from(AROUND), min_size=4, max_size=24)


def embeddings(n, seed):
    return np.random.default_rng(seed).standard_normal((n, 3)).astype(np.float32)


def same(a, b):
    np.testing.assert_array_equal(np.isnan(a), np.isnan(b))
    np.testing.assert_allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12)


@FAST
@given(labels=BIG_IDS, seed=st.integers(0, 1000))
def test_python_int_labels_across_2_63_keep_their_identity(labels, seed):
    x = embeddings(len(labels), seed)
    got = embedeval.evaluate(x, labels, metrics=["precision@1", "map@r"])
    expected = evaluate_reference(x, labels, ["precision@1", "map@r"])  # Python == on the ints
    for m in expected:
        same(got.per_query[m], expected[m])


@FAST
@given(keys=BIG_IDS, seed=st.integers(0, 1000))
def test_ignore_same_keys_across_2_63_are_compared_as_ints(keys, seed):
    n = len(keys)
    x, labels = embeddings(n, seed), np.arange(n) % 2
    coded = {k: i for i, k in enumerate(dict.fromkeys(keys))}
    small = [coded[k] for k in keys]  # the same partition, in small ints
    got = embedeval.evaluate(x, labels, metrics=["precision@1", "map@r"], ignore_same=(keys, keys))
    want = embedeval.evaluate(x, labels, metrics=["precision@1", "map@r"], ignore_same=(small, small))
    for m in ("precision@1", "map@r"):
        same(got.per_query[m], want.per_query[m])


def batch_labels(kind, values):
    if kind == "int64":
        return np.array([v % 2**62 for v in values], dtype=np.int64)
    if kind == "uint64":
        return np.array([v % 2**64 for v in values], dtype=np.uint64)
    if kind == "str":
        return [str(v % 3) for v in values]
    if kind == "tuple":
        return [(v % 2, "t") for v in values]
    return [v % 3 if i % 2 else str(v % 3) for i, v in enumerate(values)]  # 1 and "1" mixed


@FAST
@given(
    batches=st.lists(
        st.tuples(
            st.sampled_from(["int64", "uint64", "str", "tuple", "mixed"]), st.lists(st.integers(0, 2**64), max_size=6)
        ),
        min_size=1,
        max_size=5,
    ),
    seed=st.integers(0, 1000),
)
def test_accumulator_reads_labels_as_evaluate_does(batches, seed):
    """Batches of one kind of label give evaluate's numbers; batches mixing kinds (ints beside
    strings or tuples, 1 beside "1") are refused, as evaluate refuses them."""
    parts = [batch_labels(kind, values) for kind, values in batches]
    every = [v for p in parts for v in (p.tolist() if isinstance(p, np.ndarray) else p)]
    if len(every) < 2:
        return
    x = embeddings(len(every), seed)

    def accumulated():
        acc, start = embedeval.Accumulator(), 0
        for p in parts:  # a batch mixing kinds is refused here, batches of two kinds at compute
            acc.update(x[start : start + len(p)], p)
            start += len(p)
        return acc.compute(metrics=["precision@1", "map@r"])

    if len({type(v) for v in every}) > 1:
        with pytest.raises(ValueError, match="'labels' must hold labels of one kind"):
            accumulated()
        return
    got = accumulated()
    expected = evaluate_reference(x, every, ["precision@1", "map@r"])
    for m in expected:
        same(got.per_query[m], expected[m])


def test_accumulator_refuses_1_beside_str_1_and_an_empty_first_batch_fixes_nothing():
    acc = embedeval.Accumulator()
    acc.update(np.zeros((0, 2)), [])
    with pytest.raises(ValueError, match=r"got number at position\(s\) 0; string at position\(s\) 1, 2, 3"):
        acc.update(np.array([[0.0, 0.0], [0.0, 0.1], [5.0, 5.0], [5.0, 5.1]]), [1, "1", "a", "a"])
    acc.update(np.array([[0.0, 0.0], [0.0, 0.1]]), [1, 1])
    acc.update(np.array([[5.0, 5.0], [5.0, 5.1]]), ["1", "1"])  # each batch of one kind: refused together
    with pytest.raises(ValueError, match=r"got number at position\(s\) 0, 1; string at position\(s\) 2, 3"):
        acc.compute(metrics=["precision@1"])


@pytest.mark.parametrize(
    "labels",
    [
        [(1, math.nan), (1, math.nan), (2, 0.0)],
        [(1, (2, float("nan"))), (1, 2), (3,)],
        np.array([(1, math.nan), "a", "b"], dtype=object),
    ],
)
def test_nan_inside_tuple_labels_is_refused(labels):
    with pytest.raises(ValueError, match=r"'labels' must not contain NaN \(alone or inside a tuple"):
        embedeval.evaluate(embeddings(3, 0), labels)


@pytest.mark.parametrize("labels", [[{1, math.nan}, {1}, {2}], [{("a", math.nan)}, {"a"}, {"a"}]])
def test_nan_inside_label_sets_is_refused(labels):
    with pytest.raises(ValueError, match=r"'labels' item 0 holds NaN"):
        embedeval.evaluate(embeddings(3, 0), labels)


def test_accumulator_refuses_nan_labels_naming_the_batch():
    acc = embedeval.Accumulator()
    with pytest.raises(ValueError, match="'labels' must not contain NaN"):
        acc.update(np.zeros((2, 2)), [1.0, math.nan])
