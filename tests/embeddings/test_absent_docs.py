"""Judged documents that the corpus lacks (BEIR's qrels name a few): counted as relevant and never
retrieved, as trec_eval counts a judged document that a run lacks; checked against pytrec_eval on
the exact ranking, on every route (searched, deep, tie-aware), graded and binary."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import embedeval

pytrec_eval = pytest.importorskip("pytrec_eval")

# embedeval name -> pytrec_eval name
MEASURES = {
    "map": "map",
    "map@5": "map_cut_5",
    "ndcg": "ndcg",
    "ndcg@5": "ndcg_cut_5",
    "recall@10": "recall_10",
    "r_precision": "Rprec",
    "precision@5": "P_5",
    "mrr": "recip_rank",
}


def _case(seed, n_queries=9, n_docs=60, dim=5, binary=False):
    rng = np.random.default_rng(seed)
    queries, corpus = rng.normal(size=(n_queries, dim)), rng.normal(size=(n_docs, dim))
    query_ids = [f"q{i}" for i in range(n_queries)]
    doc_ids = [f"d{i:03d}" for i in rng.permutation(n_docs)]
    qrels = {}
    for i, q in enumerate(query_ids):
        docs = rng.choice(doc_ids, size=int(rng.integers(1, 8)), replace=False)
        judged = {str(d): 1 if binary else int(rng.integers(-1, 4)) for d in docs}
        for j in range(int(rng.integers(0, 3))):  # documents the corpus lacks, graded like the others
            judged[f"gone-{i}-{j}"] = 1 if binary else int(rng.integers(0, 4))
        qrels[q] = judged
    qrels["q0"] = {"gone-only": 2}  # relevant documents all absent: evaluated, scoring 0
    return queries, corpus, query_ids, doc_ids, qrels


def _pytrec(queries, corpus, query_ids, doc_ids, qrels):
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    cn = corpus / np.linalg.norm(corpus, axis=1, keepdims=True)
    scores = qn @ cn.T
    run = {q: {d: float(scores[i, j]) for j, d in enumerate(doc_ids)} for i, q in enumerate(query_ids)}
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map", "map_cut", "ndcg", "ndcg_cut", "recall", "Rprec", "P"})
    evaluator_rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
    out = evaluator.evaluate(run)
    for q, v in evaluator_rr.evaluate(run).items():
        out[q].update(v)
    return out


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("route", [{}, {"ties": "expected"}, {"block_size": 2}])
def test_absent_documents_count_in_r_and_the_ideal_ranking_as_pytrec_eval_counts_them(seed, route):
    queries, corpus, query_ids, doc_ids, qrels = _case(seed, binary=seed % 3 == 0)
    with pytest.warns(UserWarning, match=r"judgement\(s\) name documents that are not in the corpus ids"):
        result = embedeval.evaluate_retrieval(
            queries,
            corpus,
            qrels,
            query_ids=query_ids,
            corpus_ids=doc_ids,
            metrics=list(MEASURES),
            empty="zero",
            **route,
        )
    expected = _pytrec(queries, corpus, query_ids, doc_ids, qrels)
    for ours, theirs in MEASURES.items():
        for i, q in enumerate(query_ids):
            assert result.per_query[ours][i] == pytest.approx(expected[q][theirs], abs=1e-12), (ours, q)
    assert result.per_query["map"][0] == 0 and result.skip_codes[0] == -1  # q0: evaluated, nothing findable


def test_drop_leaves_them_out_and_error_refuses_them():
    queries, corpus, query_ids, doc_ids, qrels = _case(1)
    with pytest.warns(UserWarning, match="left out: R counts the corpus's documents only"):
        dropped = embedeval.evaluate_retrieval(
            queries, corpus, qrels, query_ids=query_ids, corpus_ids=doc_ids, metrics=["map"], absent_docs="drop"
        )
    kept = {q: {d: g for d, g in docs.items() if d in set(doc_ids)} for q, docs in qrels.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing absent: no warning
        filtered = embedeval.evaluate_retrieval(
            queries, corpus, kept, query_ids=query_ids, corpus_ids=doc_ids, metrics=["map"]
        )
    np.testing.assert_array_equal(dropped.per_query["map"], filtered.per_query["map"])
    with pytest.raises(ValueError, match="which is not in 'corpus_ids'"):
        embedeval.evaluate_retrieval(
            queries, corpus, qrels, query_ids=query_ids, corpus_ids=doc_ids, metrics=["map"], absent_docs="error"
        )


def test_without_corpus_ids_a_position_out_of_range_stays_an_error():
    with pytest.raises(ValueError, match="rows are named by position"):
        embedeval.evaluate_retrieval(np.eye(2), np.eye(2), [{5: 1}, {0: 1}], metrics=["map"])
