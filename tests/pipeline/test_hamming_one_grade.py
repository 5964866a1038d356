"""Binary codes whose judgements have one grade level: the same values as the float path.

The Hamming distance of 0/1 vectors is their squared euclidean distance, so the exact Hamming
scan and the float search must agree on every metric, whatever the single grade and threshold
(a grade below the threshold makes nothing relevant), with graded metrics beside cutoff ones.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import embedeval

FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(
    seed=st.integers(0, 10_000),
    grade=st.sampled_from([1, 2, 3]),
    threshold=st.sampled_from([1, 2, 3, 4]),
    metrics=st.lists(
        st.sampled_from(["ndcg", "dcg@3", "cg", "ndcg@2", "precision@2", "mrr", "map", "recall@3"]),
        min_size=1,
        max_size=4,
        unique=True,
    ),
    empty=st.sampled_from(["skip", "zero"]),
    ties=st.sampled_from([None, "expected"]),
)
def test_one_grade_level_matches_the_float_path(seed, grade, threshold, metrics, empty, ties):
    rng = np.random.default_rng(seed)
    q = rng.integers(0, 2, (5, 12)).astype(bool)
    c = rng.integers(0, 2, (15, 12)).astype(bool)
    qrels = {i: {int(j): grade for j in rng.choice(15, size=int(rng.integers(1, 5)), replace=False)} for i in range(5)}
    kwargs = dict(qrels=qrels, metrics=metrics, threshold=threshold, empty=empty, ties=ties)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        codes = embedeval.evaluate_retrieval(q, c, distance="hamming", **kwargs)
        floats = embedeval.evaluate_retrieval(
            q.astype(np.float32), c.astype(np.float32), distance="euclidean", **kwargs
        )
    for m in metrics:
        np.testing.assert_allclose(codes.per_query[m], floats.per_query[m], rtol=1e-12, err_msg=m)
