"""evaluate_retrieval against trec_eval, hand-computed cases, and every bad input of the relevance model."""

from __future__ import annotations

import numpy as np
import pytest
from reference import TREC_MEASURES as TREC

import embedeval
from embedeval._inputs.arrays import prepare
from embedeval._search import FlatSearcher, Ignored


def trec_case(seed):
    """Queries and a corpus with ties, graded qrels (0-3) by string ids, ignore lists and keys."""
    rng = np.random.default_rng(seed)
    distance = ("cosine", "inner_product", "euclidean")[seed % 3]
    n, n_c, d = 25, 80, 4
    q = rng.integers(-2, 3, size=(n, d)).astype(np.float32)
    c = rng.integers(-2, 3, size=(n_c, d)).astype(np.float32)
    q[~q.any(axis=1), 0] = 1.0  # cosine needs directions
    c[~c.any(axis=1), 0] = 1.0
    q_ids, c_ids = [f"q{i}" for i in range(n)], [f"doc{j:03d}" for j in rng.permutation(n_c)]
    qrels = {}
    for i in range(n):
        judged = rng.choice(n_c, size=int(rng.integers(1, 8)), replace=False)
        grades = rng.integers(0, 4, size=judged.size)
        grades[0] = max(grades[0], 1)  # at least one relevant before ignoring
        qrels[q_ids[i]] = {c_ids[j]: int(g) for j, g in zip(judged, grades, strict=True)}
    ignore = {q_ids[i]: [c_ids[j] for j in rng.choice(n_c, size=3)] for i in range(0, n, 2)}
    keys = (rng.integers(0, 10, n), rng.integers(0, 10, n_c))
    return distance, q, c, q_ids, c_ids, qrels, ignore, keys


def embedeval_ranking(q, c, distance, ignored_sets):
    """Every query's whole ranking by embedeval's exact searcher (-1 past its end)."""
    counts = np.array([len(s) for s in ignored_sets], dtype=np.int64)
    ignored = Ignored(
        counts,
        lambda rows, idx: np.array([[j in ignored_sets[r] for j in row] for r, row in zip(rows, idx, strict=True)]),
    )
    return FlatSearcher(c, distance).search(prepare(q, distance), len(c) - int(counts.min()), ignored)


@pytest.mark.parametrize("seed", range(9))
def test_a_run_of_embedevals_ranking_gives_trec_evals_numbers(seed):
    """pytrec_eval on a run made of embedeval's own ranking (ignored entries dropped from run and
    qrels) agrees with evaluate_retrieval per query to 1e-9."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    distance, q, c, q_ids, c_ids, qrels, ignore, keys = trec_case(seed)
    row_of = {d: j for j, d in enumerate(c_ids)}
    ignored_sets = [
        {row_of[d] for d in ignore.get(qid, [])} | set(np.flatnonzero(keys[1] == keys[0][i]).tolist())
        for i, qid in enumerate(q_ids)
    ]
    ranking = embedeval_ranking(q, c, distance, ignored_sets)
    run = {
        qid: {c_ids[j]: float(len(c) - rank) for rank, j in enumerate(ranking[i]) if j >= 0}
        for i, qid in enumerate(q_ids)
    }
    kept_qrels = {
        qid: {d: g for d, g in qrels[qid].items() if row_of[d] not in ignored_sets[i]} for i, qid in enumerate(q_ids)
    }
    kept_qrels = {qid: judged for qid, judged in kept_qrels.items() if judged}
    trec = pytrec_eval.RelevanceEvaluator(kept_qrels, set(TREC.values())).evaluate(run)
    ours = embedeval.evaluate_retrieval(
        q,
        c,
        qrels,
        query_ids=q_ids,
        corpus_ids=c_ids,
        ignore=ignore,
        ignore_same=keys,
        distance=distance,
        metrics=list(TREC),
        empty="zero",
    )
    rows = [i for i, qid in enumerate(q_ids) if qid in trec]
    assert len(rows) >= 20
    for name, measure in TREC.items():
        expected = [trec[q_ids[i]][measure] for i in rows]
        np.testing.assert_allclose(ours.per_query[name][rows], expected, rtol=0, atol=1e-9, err_msg=name)


def test_hand_computed_graded_case_with_ids_and_a_self_document():
    """BEIR's identical ids: with ignore_same=(query_ids, corpus_ids) the query's own document
    takes no rank and does not count in R."""
    # 1-D points; query "a" at 0: corpus rows by distance: "a" (0), "x" (1), "y" (2), "z" (4).
    queries = np.array([[0.0]])
    corpus = np.array([[1.0], [2.0], [0.0], [4.0]])
    corpus_ids = ["x", "y", "a", "z"]
    qrels = {"a": {"a": 3, "y": 2, "z": 1}}
    kwargs = dict(query_ids=["a"], corpus_ids=corpus_ids, distance="euclidean")
    metrics = ["mrr", "map", "recall@2", "ndcg@3", "precision@2"]
    plain = embedeval.evaluate_retrieval(queries, corpus, qrels, metrics=metrics, **kwargs)
    # ranking a(3) x(0) y(2) z(1): R = 3; AP = (1/1 + 2/3 + 3/4) / 3
    assert plain.summary["map"] == pytest.approx((1 + 2 / 3 + 3 / 4) / 3)
    ignoring = embedeval.evaluate_retrieval(
        queries, corpus, qrels, metrics=metrics, ignore_same=(["a"], corpus_ids), **kwargs
    )
    # ranking x(0) y(2) z(1): R = 2, first relevant at 2; AP = (1/2 + 2/3) / 2; recall@2 = 1/2
    log = np.log2
    expected = {
        "mrr": 1 / 2,
        "map": (1 / 2 + 2 / 3) / 2,
        "recall@2": 1 / 2,
        "precision@2": 1 / 2,
        "ndcg@3": (2 / log(3) + 1 / log(4)) / (2 / log(2) + 1 / log(3)),
    }
    for name, value in expected.items():
        assert ignoring.summary[name] == pytest.approx(value, rel=1e-12), name
    assert "ignore_same" in ignoring.conventions["ignore"]


def test_a_constant_scorer_is_ranked_by_corpus_row_not_by_luck():
    """Every corpus entry at one distance: the tie rule (lower row first) decides, so MRR is that
    of the relevant entry's row, never the 1.0 an unlucky tie order reports."""
    queries = np.ones((3, 4))
    corpus = np.ones((10, 4))
    qrels = {0: {5: 1}, 1: {0: 1}, 2: {9: 1}}
    r = embedeval.evaluate_retrieval(queries, corpus, qrels, metrics=["mrr@10", "ndcg@10"])
    np.testing.assert_allclose(r.per_query["mrr@10"], [1 / 6, 1.0, 1 / 10])
    assert "lower first" in r.conventions["ties"]


def test_approximate_index_with_judgements_checks_itself():
    rng = np.random.default_rng(3)
    c = rng.standard_normal((2000, 16)).astype(np.float32)
    q = (c[:300] + 0.1 * rng.standard_normal((300, 16))).astype(np.float32)
    qrels = {i: {i: 1, int(rng.integers(2000)): 2} for i in range(300)}
    exact = embedeval.evaluate_retrieval(q, c, qrels, metrics=["ndcg@10", "recall@10"], ignore={0: [5]})
    approx = embedeval.evaluate_retrieval(
        q, c, qrels, metrics=["ndcg@10", "recall@10"], ignore={0: [5]}, index="HNSW32", check_sample=100
    )
    info = approx.approximation
    assert info["sample"] == 100 and 0 < info["neighbour_recall"] <= 1
    sample = np.sort(np.random.default_rng(0).choice(np.arange(300), size=100, replace=False))
    assert info["exact_on_sample"]["ndcg@10"] == pytest.approx(exact.per_query["ndcg@10"][sample].mean(), rel=1e-12)


X4 = np.arange(8.0).reshape(4, 2)
BAD_EVALUATE = [
    (dict(labels=[{0}, {1}, set(), {0}]), ValueError, "'labels' item 2 is an empty label set"),
    (
        dict(labels=np.array([[1, 0], [0, 1], [0, 0], [1, 1]], dtype=bool)),
        ValueError,
        "'labels' item 2 is an empty label set",
    ),
    (dict(labels=[{0}, 1, {0}, {1}]), TypeError, "'labels' mixes label sets with single labels: item 1 is 1"),
    (
        dict(labels=[{0}, {1}, {0}]),
        ValueError,
        r"'labels' must have one label set per row of 'embeddings' \(4\); got 3",
    ),
    (dict(labels=[{0}, [[1]], {0}, {1}]), TypeError, "'labels' item 1 holds an unhashable label"),
    (
        dict(
            labels=np.ones((4, 2), dtype=bool),
            reference=X4,
            reference_labels=np.ones((4, 3), dtype=bool),
        ),
        ValueError,
        "'reference_labels' must have the 2 label columns of 'labels'; got 3",
    ),
    (dict(ignore={7: [1]}), ValueError, "'ignore' names query 7, but positions run from 0 to 3"),
    (dict(ignore={0: [1, 9]}), ValueError, "'ignore' names reference 9, but positions run from 0 to 3"),
    (dict(ignore={"a": [1]}), TypeError, "'ignore' names queries by position"),
    (dict(ignore={0: 1}), TypeError, "'ignore' of query 0 must be an iterable of references; got int"),
    (dict(ignore=[[1], [2]]), ValueError, r"'ignore' as a sequence must hold one list per query \(4\); got 2"),
    (dict(ignore_same=([0, 1, 2, 3],)), TypeError, r"'ignore_same' must be a pair \(query_keys, reference_keys\)"),
    (
        dict(ignore_same=([0, 1, 2], [0, 1, 2, 3])),
        ValueError,
        r"'ignore_same' query keys must hold one key per query \(4\); got 3",
    ),
    (
        dict(ignore_same=(np.zeros((4, 2)), np.zeros((4, 3)))),
        ValueError,
        "'ignore_same' keys must have one length on both sides; got query keys of 2 field",
    ),
    (
        dict(ignore_same=([(1, 2), (1, 2, 3), (1, 2), (1, 2)], [(1, 2)] * 4)),
        ValueError,
        r"'ignore_same' keys must all have one length; got tuples of lengths \[2, 3\]",
    ),
]


@pytest.mark.parametrize(("change", "error", "message"), BAD_EVALUATE)
def test_bad_relevance_input_to_evaluate_gets_a_clear_error(change, error, message):
    args = {"embeddings": X4, "labels": [0, 0, 1, 1], "metrics": ["map"]}
    args.update(change)
    with pytest.raises(error, match=message):
        embedeval.evaluate(args.pop("embeddings"), args.pop("labels"), **args)


Q2, C3 = np.eye(2), np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
BAD_RETRIEVAL = [
    (dict(qrels={"q9": {"d1": 1}}), ValueError, "'qrels' names query 'q9', which is not in 'query_ids'"),
    (
        dict(qrels={"q1": {"d7": 1}}, absent_docs="error"),
        ValueError,
        "'qrels' names corpus 'd7', which is not in 'corpus_ids'",
    ),
    (dict(absent_docs="keep"), ValueError, "'absent_docs' must be one of"),
    (
        dict(qrels={"q1": {"d1": 1}}, query_ids=None),
        ValueError,
        r"'qrels' names query 'q1', but without 'query_ids' rows are named by position \(0 to 1\)",
    ),
    (dict(query_ids=["q1", "q1"]), ValueError, "'query_ids' must be distinct; got 'q1' at rows 0 and 1"),
    (dict(corpus_ids=["d1", "d2", "d1"]), ValueError, "'corpus_ids' must be distinct; got 'd1' at rows 0 and 2"),
    (dict(corpus_ids=["d1", "d2"]), ValueError, r"'corpus_ids' must hold one id per row \(3\); got 2"),
    (dict(qrels={"q1": {"d1": float("nan")}}), ValueError, "'qrels' grades must be finite numbers; got nan"),
    (dict(qrels={"q1": {"d1": True}}), ValueError, "'qrels' grades must be finite numbers; got True"),
    (dict(qrels={"q1": ["d1", "d1"]}), ValueError, "'qrels' of query 'q1' lists a corpus id twice"),
    (dict(qrels={"q1": "d1"}), TypeError, "'qrels' of query 'q1' must be a mapping corpus id -> grade"),
    (dict(qrels=[{"d1": 1}]), ValueError, r"'qrels' as a sequence must hold one entry per query \(2\); got 1"),
    (dict(ignore={"q1": ["d9"]}), ValueError, "'ignore' names corpus 'd9', which is not among the corpus ids"),
    (dict(ignore={"q5": ["d1"]}), ValueError, "'ignore' names query 'q5', which is not among the query ids"),
    (dict(ignore_same=([1, 2], [1, 2])), ValueError, r"'ignore_same' corpus keys must hold one key per corpus \(3\)"),
    (dict(corpus=np.ones((3, 5))), ValueError, r"'corpus' must have the dimension of 'queries' \(2\); got 5"),
    (dict(threshold=0), ValueError, "'threshold' must be a number > 0"),
    (dict(empty="drop"), ValueError, "'empty' must be one of 'skip', 'zero'; got 'drop'"),
    (dict(metrics=["ndcg@0"]), ValueError, "must be an int >= 1"),
]


@pytest.mark.parametrize(("change", "error", "message"), BAD_RETRIEVAL)
def test_bad_input_to_evaluate_retrieval_gets_a_clear_error(change, error, message):
    args = {
        "queries": Q2,
        "corpus": C3,
        "qrels": {"q1": {"d1": 1}, "q2": {"d3": 2}},
        "query_ids": ["q1", "q2"],
        "corpus_ids": ["d1", "d2", "d3"],
        "metrics": ["ndcg@2"],
    }
    args.update(change)
    with pytest.raises(error, match=message):
        embedeval.evaluate_retrieval(args.pop("queries"), args.pop("corpus"), args.pop("qrels"), **args)
