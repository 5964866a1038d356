"""Judge.class_pairs (binary class relevance found by search, what the tie-aware scan reads) against
the masks it replaces: every chunk's (row, column) of the relevant references a query does not
ignore and the flat positions of those relevant or ignored equal what the grade and ignore masks
give, leave-one-out or a query set against a gallery, classes no reference has, empty chunks; and
None where relevance or the ignore rules are anything else."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from embedeval._relevance import IgnoreRules, Relevance
from embedeval._relevance.labels import ClassLabels


def masks_pairs(judge, b, start, stop):
    """What the tied scan's mask path lists for one chunk (the slow, obvious way)."""
    every = np.arange(b)
    idx = np.arange(start, stop)
    positive = judge.grades(every, idx[None, :])
    positive = np.broadcast_to(positive, (b, stop - start))
    ignored = judge.ignored(every)
    left = (
        np.zeros_like(positive)
        if ignored is None
        else ignored.test(np.arange(b), np.broadcast_to(idx, (b, stop - start)))
    )
    rows, cols = np.nonzero(positive & ~left)
    return rows, cols + start, np.flatnonzero(positive | left)


@pytest.mark.parametrize("seed", range(16))
def test_class_pairs_equal_the_masks(seed):
    rng = np.random.default_rng(seed)
    leave_one_out = seed % 2 == 0
    n_ref = int(rng.integers(1, 300))
    n_q = n_ref if leave_one_out else int(rng.integers(1, 120))
    k = int(rng.integers(1, 12))
    r_labels = rng.integers(0, k, n_ref)
    q_labels = r_labels if leave_one_out else rng.integers(0, k + 3, n_q)  # some classes no reference has
    source = ClassLabels.from_labels(q_labels, None if leave_one_out else r_labels)
    rules = IgnoreRules.build(n_q, n_ref, leave_one_out)
    if seed % 4 == 1:  # a query set as large as the gallery, each ignoring the reference at its index
        n_q, q_labels = n_ref, rng.integers(0, k, n_ref)  # often of another class
        source = ClassLabels.from_labels(q_labels, r_labels)
        rules = IgnoreRules.build(n_q, n_ref, True)
    relevance = Relevance.build(source, n_ref, rules)
    shared = relevance.shared
    rows = np.sort(rng.choice(n_q, int(rng.integers(1, n_q + 1)), replace=False))
    judge = relevance.block(rows).judge(shared, [])
    pairs = judge.class_pairs()
    assert pairs is not None
    cuts = np.unique(np.concatenate([[0, n_ref], rng.integers(0, n_ref + 1, 4)]))
    for start, stop in itertools.pairwise(cuts):
        for got, want in zip(pairs(int(start), int(stop)), masks_pairs(judge, rows.size, start, stop), strict=True):
            np.testing.assert_array_equal(got, want)
    if n_ref >= 5:  # an empty chunk
        assert all(a.size == 0 for a in pairs(5, 5))


def test_class_pairs_are_none_for_other_relevance():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 4, 50)
    keys = rng.integers(0, 3, 50)
    source = ClassLabels.from_labels(labels)
    with_keys = Relevance.build(source, 50, IgnoreRules.build(50, 50, True, (keys, keys)))
    judge = with_keys.block(np.arange(50)).judge(with_keys.shared, [])
    assert judge.class_pairs() is None  # ignore_same keys: the masks
