"""Ignore rules that leave a query no graded candidate (all references ignored, or every
relevant one) in the tie-aware scan: no crash, and the values of the exact search.

The data have distinct distances, so every tie rule gives the ranking ``ties=None`` gives;
each case runs with the compiled kernels and with ``EMBEDEVAL_KERNELS=numpy``.
"""

from __future__ import annotations

import warnings

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import embedeval
from embedeval._core.compiled import KERNELS_VARIABLE

METRICS = ["map", "ndcg@3", "recall@2", "precision@1", "mrr@10"]
LABEL_METRICS = ["map", "map@r", "recall@2", "precision@1", "mrr@10"]
RULES = ["expected", "pessimistic", "optimistic"]
KERNELS = ["numpy", "auto"]


def _ignore(rng, n_queries, n_refs, emptied, partly):
    """{query: references}: ``emptied`` queries ignore every reference, ``partly`` some."""
    out = {int(i): list(range(n_refs)) for i in emptied}
    for i in partly:
        out.setdefault(int(i), sorted(rng.choice(n_refs, size=rng.integers(1, n_refs + 1), replace=False).tolist()))
    return out


def _same(tied, exact, metrics=METRICS):
    for m in metrics:
        np.testing.assert_allclose(tied.per_query[m], exact.per_query[m], rtol=0, atol=1e-12, err_msg=m)


def test_the_issue_example(monkeypatch):
    """Two queries with no judgement, the second ignoring both references."""
    q = np.array([[-1, 0], [0, -1]], dtype=np.float32)
    c = np.array([[-1, 1], [0, 1]], dtype=np.float32)
    for kernels in KERNELS:
        monkeypatch.setenv(KERNELS_VARIABLE, kernels)
        for rule in RULES:
            r = embedeval.evaluate_retrieval(
                q, c, [{}, {}], distance="euclidean", ignore={1: [0, 1]}, ties=rule, empty="zero", metrics=["map"]
            )
            assert r.per_query["map"].tolist() == [0.0, 0.0]


cases = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**31),
        "n_queries": st.integers(1, 6),
        "n_refs": st.integers(1, 7),
        "share_emptied": st.sampled_from([0.0, 0.5, 1.0]),
        "judged": st.sampled_from([0.0, 0.4, 1.0]),
        "rule": st.sampled_from(RULES),
        "kernels": st.sampled_from(KERNELS),
        "distance": st.sampled_from(["euclidean", "inner_product", "cosine"]),
    }
)


def _split(rng, case):
    n = case["n_queries"]
    emptied = np.flatnonzero(rng.random(n) < case["share_emptied"]) if case["share_emptied"] < 1 else np.arange(n)
    partly = [i for i in range(n) if i not in set(emptied) and rng.random() < 0.5]
    return _ignore(rng, n, case["n_refs"], emptied, partly)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases, empty=st.sampled_from(["zero", "skip"]))
def test_retrieval_with_emptied_candidates_matches_the_exact_search(monkeypatch, case, empty):
    """qrels (evaluate_retrieval): all, some or no queries emptied by ``ignore``; judgements on
    none, some or all references."""
    monkeypatch.setenv(KERNELS_VARIABLE, case["kernels"])
    rng = np.random.default_rng(case["seed"])
    q = rng.standard_normal((case["n_queries"], 3)).astype(np.float32)
    c = rng.standard_normal((case["n_refs"], 3)).astype(np.float32)
    qrels = [
        {int(j): int(rng.integers(1, 3)) for j in range(case["n_refs"]) if rng.random() < case["judged"]} for _ in q
    ]
    ignore = _split(rng, case)
    kw = dict(distance=case["distance"], ignore=ignore, empty=empty, metrics=METRICS)
    tied = embedeval.evaluate_retrieval(q, c, qrels, ties=case["rule"], **kw)
    _same(tied, embedeval.evaluate_retrieval(q, c, qrels, **kw))
    emptied = [i for i, refs in ignore.items() if len(refs) == case["n_refs"]]
    expected = 0.0 if empty == "zero" else np.nan
    np.testing.assert_equal(tied.per_query["map"][emptied], np.full(len(emptied), expected))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=cases)
def test_labels_with_emptied_candidates_match_the_exact_search(monkeypatch, case):
    """Labels (evaluate): the same cases; a query left with no relevant reference is skipped."""
    monkeypatch.setenv(KERNELS_VARIABLE, case["kernels"])
    rng = np.random.default_rng(case["seed"])
    q = rng.standard_normal((case["n_queries"], 3)).astype(np.float32)
    c = rng.standard_normal((case["n_refs"], 3)).astype(np.float32)
    n_classes = 1 if case["judged"] == 1.0 else 3
    labels, ref_labels = rng.integers(0, n_classes, len(q)), rng.integers(0, n_classes, len(c))
    kw = dict(
        reference=c,
        reference_labels=ref_labels,
        distance=case["distance"],
        ignore=_split(rng, case),
        metrics=LABEL_METRICS,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # skipped queries are warned of; not the point here
        tied = embedeval.evaluate(q, labels, ties=case["rule"], **kw)
        exact = embedeval.evaluate(q, labels, **kw)
    _same(tied, exact, LABEL_METRICS)
