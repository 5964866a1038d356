"""Labels of two kinds in one evaluation (1 beside "1") are refused with the positions of each
kind, instead of silently making two classes (issue 40, item 10)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import embedeval

X = np.random.default_rng(0).normal(size=(6, 3))
ONE_KIND = r"must hold labels of one kind"


@pytest.mark.parametrize(
    ("labels", "found"),
    [
        ([1, "1", 1, "1", 2, 2], r"got number at position\(s\) 0, 2, 4, 5; string at position\(s\) 1, 3"),
        (["a", "a", 2.0, "b", "b", "a"], r"got string at position\(s\) 0, 1, 3, 4, 5; number at position\(s\) 2"),
        ([("x", 1), ("x", 1), 3, 3, 4, 4], r"got tuple at position\(s\) 0, 1; number at position\(s\) 2, 3, 4, 5"),
        (np.array([b"a", "a", b"a", "a", b"b", b"b"], dtype=object), r"got bytes at position\(s\) 0, 2, 4, 5; string"),
    ],
)
def test_one_array_of_two_kinds_is_refused_naming_the_positions(labels, found):
    with pytest.raises(ValueError, match=rf"'labels' {ONE_KIND}.*{found}"):
        embedeval.evaluate(X, labels)


def test_numbers_of_several_types_are_one_kind():
    """1 == 1.0 == True == np.int64(1): these compare equal, so they are one kind (one class)."""
    result = embedeval.evaluate(X, [1, 1.0, np.int64(1), 2, 2.0, np.uint8(2)], metrics=["precision@1"])
    assert result.n_evaluated == 6 and result.config["n_classes"] == 2


def test_none_stays_a_class_beside_any_kind():
    assert embedeval.evaluate(X, [None, None, "a", "a", "b", "b"]).n_evaluated == 6


def test_query_and_reference_labels_of_two_kinds_are_refused():
    with pytest.raises(ValueError, match=r"'labels' and 'reference_labels' must be labels of one kind"):
        embedeval.evaluate(X[:2], [1, 2], reference=X, reference_labels=["1", "1", "2", "2", "1", "2"])


def test_keys_and_groups_of_two_kinds_are_refused():
    labels = [0, 0, 1, 1, 2, 2]
    with pytest.raises(ValueError, match=rf"'ignore_same\[0\]' {ONE_KIND}"):
        embedeval.evaluate(X, labels, ignore_same=([1, "1", 2, 2, 3, 3], [1, "1", 2, 2, 3, 3]))
    with pytest.raises(ValueError, match=rf"'groups' {ONE_KIND}"):
        acc = embedeval.Accumulator()
        acc.update(X, labels, groups=["de", "de", 1, 1, "en", "en"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 3), st.sampled_from(["0", "1", "2"])), min_size=2, max_size=12))
def test_any_list_is_refused_exactly_when_it_mixes_kinds(labels):
    x = np.random.default_rng(len(labels)).normal(size=(len(labels), 2))
    mixed = len({type(v) for v in labels}) > 1
    if mixed:
        numbers = [i for i, v in enumerate(labels) if isinstance(v, int)]
        with pytest.raises(ValueError, match=rf"number at position\(s\) {numbers[0]}\b"):
            embedeval.evaluate(x, labels, metrics=["precision@1"])
    else:
        embedeval.evaluate(x, labels, metrics=["precision@1"])
