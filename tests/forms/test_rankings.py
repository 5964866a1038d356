"""Ranked lists and score matrices: hand-computed cases, trec_eval agreement, ties, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
from reference import TREC_MEASURES as TREC
from reference import binary_metric

import embedeval

# The tutorial's worked example (seeds 000/002): corpus ids 0-30, three queries.
GROUND_TRUTH = [[11, 1, 7, 17, 21], [4, 16, 1], [26, 10, 22, 8]]
RESULTS = [
    [11, 1, 17, 7, 21, 8, 0, 28, 9, 20],
    [16, 1, 6, 18, 3, 4, 25, 19, 8, 14],
    [24, 10, 26, 2, 8, 28, 4, 23, 13, 21],
]


def _dcg(hit_ranks, k):
    return sum(1 / math.log2(r + 1) for r in hit_ranks if r <= k)


# Hits by rank: query 1 at 1-5 (R = 5); query 2 at 1, 2, 6 (R = 3); query 3 at 2, 3, 5 (R = 4).
HIT_RANKS = [[1, 2, 3, 4, 5], [1, 2, 6], [2, 3, 5]]
N_REL = [5, 3, 4]


def _mean(values):
    return sum(values) / len(values)


TUTORIAL_EXPECTED = {
    # the tutorial's own conventions, whose printed values are right
    "capped_recall@1": 2 / 3,
    "capped_recall@5": _mean([5 / 5, 2 / 3, 3 / 4]),
    "capped_recall@10": _mean([1, 1, 3 / 4]),
    "mrr@1": 2 / 3,
    "mrr@5": _mean([1, 1, 1 / 2]),
    "mrr@10": _mean([1, 1, 1 / 2]),
    "precision@1": 2 / 3,
    "precision@5": _mean([5 / 5, 2 / 5, 3 / 5]),
    "precision@10": _mean([5 / 10, 3 / 10, 3 / 10]),
    "map_hits@1": 2 / 3,
    "map_hits@5": _mean([1, 1, (1 / 2 + 2 / 3 + 3 / 5) / 3]),
    "map_hits@10": _mean([1, (1 + 1 + 3 / 6) / 3, (1 / 2 + 2 / 3 + 3 / 5) / 3]),
    # trec_eval's conventions
    "recall@5": _mean([5 / 5, 2 / 3, 3 / 4]),
    "recall@10": _mean([5 / 5, 3 / 3, 3 / 4]),
    "map@10": _mean([1, (1 + 1 + 3 / 6) / 3, (1 / 2 + 2 / 3 + 3 / 5) / 4]),
    # nDCG from its definition (the tutorial printed 0.0, 0.33, 0.60 by passing ids as scores)
    **{
        f"ndcg@{k}": _mean([_dcg(h, k) / _dcg(range(1, r + 1), k) for h, r in zip(HIT_RANKS, N_REL, strict=True)])
        for k in (1, 5, 10)
    },
}


def test_tutorial_worked_example_gives_correct_values():
    r = embedeval.evaluate_rankings(RESULTS, [set(g) for g in GROUND_TRUTH], metrics=list(TUTORIAL_EXPECTED))
    for name, value in TUTORIAL_EXPECTED.items():
        assert r.summary[name] == pytest.approx(value, rel=1e-12), name
    assert r.summary["ndcg@1"] == pytest.approx(2 / 3)  # not the tutorial's 0.0
    assert r.summary["precision@5"] == pytest.approx(2 / 3)
    assert r.summary["capped_recall@5"] == pytest.approx(0.8055555555555555)


def test_same_example_as_arrays_and_as_mappings():
    arrays = embedeval.evaluate_rankings(
        np.array(RESULTS), np.array([g + [-1] * (5 - len(g)) for g in GROUND_TRUTH]), metrics=list(TUTORIAL_EXPECTED)
    )
    mappings = embedeval.evaluate_rankings(
        {f"q{i}": r for i, r in enumerate(RESULTS)},
        {f"q{i}": {d: 1 for d in g} for i, g in enumerate(GROUND_TRUTH)},
        metrics=list(TUTORIAL_EXPECTED),
    )
    for name, value in TUTORIAL_EXPECTED.items():
        assert arrays.summary[name] == pytest.approx(value, rel=1e-12)
        assert mappings.summary[name] == pytest.approx(value, rel=1e-12)
    assert mappings.config["query_ids"] == ["q0", "q1", "q2"]


@pytest.mark.parametrize(
    ("pad", "ids", "rel"),
    [
        (-999, [[-1, 5, 3], [2, -1, 8]], [[-1, 3], [8, 5]]),  # -1 is a real id, and the only negative one
        (0, [[-1, 5, -7, 3], [-2, -1, 8, 9]], [[-1, 3], [8, -5]]),
        (-1, [[-3, 5, -7, 3], [-2, -3, 8, 9]], [[-3, 3], [8, -5]]),  # ids below the pad
    ],
)
def test_negative_ids_in_arrays_are_not_taken_for_padding(pad, ids, rel):
    """Array rankings with negative ids give the numbers of the same rankings as lists."""
    metrics = ["mrr", "precision@2", "map"]
    arrays = embedeval.evaluate_rankings(
        np.array([[*row, pad] for row in ids]), np.array([[*row, pad] for row in rel]), metrics=metrics, pad=pad
    )
    lists = embedeval.evaluate_rankings(ids, [set(r) for r in rel], metrics=metrics)
    for name in metrics:
        np.testing.assert_allclose(arrays.per_query[name], lists.per_query[name], err_msg=name)


def test_graded_cg_dcg_ndcg_by_hand():
    # one query, grades in ranked order 3, 2, 3, 0, 1, 2; a judged item of grade 3 never retrieved
    ranking = ["a", "b", "c", "d", "e", "f"]
    grades = {"a": 3, "b": 2, "c": 3, "d": 0, "e": 1, "f": 2, "z": 3}
    metrics = ["cg@2", "cg@6", "dcg@3", "dcg_exp@3", "ndcg@3", "ndcg_exp@3", "precision@3", "recall@6"]
    r = embedeval.evaluate_rankings([ranking], [grades], metrics=metrics)
    d = [1 / math.log2(i + 1) for i in range(1, 7)]
    assert r.summary["cg@2"] == 5 and r.summary["cg@6"] == 11
    assert r.summary["dcg@3"] == pytest.approx(3 * d[0] + 2 * d[1] + 3 * d[2])
    assert r.summary["dcg_exp@3"] == pytest.approx(7 * d[0] + 3 * d[1] + 7 * d[2])
    assert r.summary["ndcg@3"] == pytest.approx((3 * d[0] + 2 * d[1] + 3 * d[2]) / (3 * d[0] + 3 * d[1] + 3 * d[2]))
    assert r.summary["ndcg_exp@3"] == pytest.approx((7 * d[0] + 3 * d[1] + 7 * d[2]) / (7 * (d[0] + d[1] + d[2])))
    assert r.summary["precision@3"] == 1.0  # grades 3, 2, 3 all >= threshold 1
    assert r.summary["recall@6"] == pytest.approx(5 / 6)  # 6 items with grade >= 1, 'z' missed
    high = embedeval.evaluate_rankings([ranking], [grades], metrics=["precision@3"], threshold=3)
    assert high.summary["precision@3"] == pytest.approx(2 / 3)


def random_trec_case(seed, ties=False):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(int(rng.integers(5, 40))):
        docs = [f"d{i}" for i in rng.choice(60, size=int(rng.integers(1, 30)), replace=False)]
        scores = rng.integers(0, 4, len(docs)).astype(float) if ties else rng.permutation(len(docs)) + rng.random()
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        judged = rng.choice(60, size=int(rng.integers(1, 15)), replace=False)
        qrels[f"q{q}"] = {f"d{i}": int(g) for i, g in zip(judged, rng.integers(0, 4, len(judged)), strict=True)}
    return run, qrels


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("seed", range(15))
def test_agrees_with_trec_eval(seed, ties):
    """Random runs with graded qrels (grades 0-3, queries without relevant items included): every
    measure trec_eval has, per query, to 1e-9; with tied scores, through trec_eval's own tie rule."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run, qrels = random_trec_case(seed, ties)
    trec = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values())).evaluate(run)
    ours = embedeval.evaluate_rankings(run, qrels, metrics=list(TREC), empty="zero")
    order = ours.config["query_ids"]
    assert sorted(order) == sorted(trec)
    for name, measure in TREC.items():
        expected = np.array([trec[q][measure] for q in order])
        np.testing.assert_allclose(ours.per_query[name], expected, rtol=0, atol=1e-9, err_msg=name)


def test_scores_match_a_full_sort_reference_with_ties():
    """Integer scores tie often; the top k must be the lowest-indexed of the tied items."""
    rng = np.random.default_rng(7)
    scores = rng.integers(0, 5, size=(40, 30)).astype(float)
    rel = rng.integers(0, 2, size=(40, 30)) * (rng.random((40, 30)) < 0.4)
    metrics = ["precision@3", "hit_rate@4", "r_precision", "map@r", "map", "map@5", "mrr", "mrr@2"]
    r = embedeval.evaluate_scores(scores, rel, metrics=metrics)
    for q in range(40):
        order = sorted(range(30), key=lambda j: (-scores[q, j], j))
        flags = [bool(rel[q, j]) for j in order]
        for name in metrics:
            expected = binary_metric(name, flags, sum(flags)) if sum(flags) else math.nan
            np.testing.assert_allclose(r.per_query[name][q], expected, rtol=1e-12, err_msg=name)


def test_scores_and_rankings_paths_agree():
    rng = np.random.default_rng(8)
    scores = rng.random((25, 50))
    grades = rng.integers(0, 4, size=(25, 50)) * (rng.random((25, 50)) < 0.3)
    metrics = ["precision@5", "recall@10", "ndcg@10", "ndcg_exp@10", "map", "f1@5", "capped_recall@5", "cg@3"]
    a = embedeval.evaluate_scores(scores, grades, metrics=metrics)
    rankings = np.argsort(-scores, axis=1)
    b = embedeval.evaluate_rankings(rankings, [dict(enumerate(row.tolist())) for row in grades], metrics=metrics)
    for name in metrics:
        np.testing.assert_allclose(a.per_query[name], b.per_query[name], rtol=1e-12, err_msg=name)


def test_shifting_or_scaling_scores_changes_nothing():
    rng = np.random.default_rng(9)
    scores, rel = rng.random((10, 20)), rng.integers(0, 2, size=(10, 20))
    a = embedeval.evaluate_scores(scores, rel, metrics=["ndcg@5", "map"])
    b = embedeval.evaluate_scores(3 * scores + 7, rel, metrics=["ndcg@5", "map"])
    assert a.summary == b.summary


def test_queries_without_relevant_items_are_skipped_or_zero():
    rankings, relevance = [[1, 2], [3, 4]], [{2}, {9: 0}]
    skip = embedeval.evaluate_rankings(rankings, relevance, metrics=["mrr"])
    assert np.isnan(skip.per_query["mrr"][1]) and skip.summary["mrr"] == 0.5 and skip.n_evaluated == 1
    assert sum(skip.skipped.values()) == 1
    zero = embedeval.evaluate_rankings(rankings, relevance, metrics=["mrr"], empty="zero")
    assert zero.per_query["mrr"].tolist() == [0.5, 0.0] and zero.summary["mrr"] == 0.25


def test_results_name_the_recall_convention():
    r = embedeval.evaluate_rankings([[1]], [{1}], metrics=["recall@1", "hit_rate@1"])
    assert "trec_eval" in r.definitions["recall@1"] and "trec_eval" in r.conventions["recall"]
    e = embedeval.evaluate(np.eye(4), [0, 0, 1, 1], metrics=["recall@1"])
    assert "metric-learning" in e.definitions["recall@1"]


RANKING_ERRORS = [
    (dict(rankings=[[1, 2, 1]], relevance=[{1}]), ValueError, "query 0 lists id 1 more than once"),
    (dict(rankings=np.array([[1, 2, 1]]), relevance=np.array([[1]])), ValueError, "lists id 1 more than once"),
    (dict(rankings=np.array([[1, -1, 2]]), relevance=np.array([[1]])), ValueError, "pad value -1 only at the end"),
    (dict(rankings={"a": [1]}, relevance={"b": {1}}), ValueError, "ranked query without relevance .first: 'a'"),
    (dict(rankings={"a": [1], "b": [2]}, relevance={"a": {1}}), ValueError, "without relevance .first: 'b'"),
    (dict(rankings=[[1], [2]], relevance=[{1}]), ValueError, "one entry per query of 'rankings' .2.; got 1"),
    (dict(rankings=[[1]], relevance=[{1}], metrics=["ndcg@-1"]), ValueError, "must be an int >= 1; got '-1'"),
    (dict(rankings=[[1]], relevance=[{1}], metrics=["bleu@3"]), ValueError, "unknown metric 'bleu@3'.*ndcg@k"),
    (dict(rankings=[[1]], relevance=[{1: float("nan")}]), ValueError, "grades must be finite"),
    (dict(rankings=[[1]], relevance=[{1}], threshold=0), ValueError, "'threshold' must be a number > 0"),
    (dict(rankings=[[1]], relevance=[{1}], empty="drop"), ValueError, "'empty' must be one of 'skip', 'zero'"),
    (dict(rankings=[[1]], relevance=[5]), TypeError, "must be a set or list of relevant ids"),
]


@pytest.mark.parametrize(("kwargs", "error", "message"), RANKING_ERRORS)
def test_bad_rankings_get_a_clear_error(kwargs, error, message):
    kwargs.setdefault("metrics", ["mrr"])
    with pytest.raises(error, match=message):
        embedeval.evaluate_rankings(kwargs.pop("rankings"), kwargs.pop("relevance"), **kwargs)


SCORE_ERRORS = [
    (np.array([[1.0, np.nan]]), np.array([[1, 0]]), "'scores' must not contain NaN; got 1, first in row 0"),
    (np.array([1.0, 2.0]), np.array([1, 0]), "'scores' must be a non-empty 2-D array"),
    (np.array([[1.0, 2.0]]), np.array([[1, 0, 0]]), r"'relevance' must be numbers of the shape of 'scores' \(1, 2\)"),
]


@pytest.mark.parametrize(("scores", "relevance", "message"), SCORE_ERRORS)
def test_bad_scores_get_a_clear_error(scores, relevance, message):
    with pytest.raises(ValueError, match=message):
        embedeval.evaluate_scores(scores, relevance, metrics=["mrr"])


def _write_trec(tmp_path, run, qrels):
    run_path, qrels_path = tmp_path / "run.txt", tmp_path / "qrels.txt"
    run_path.write_text(
        "".join(f"{q} Q0 {d} {i + 1} {s} tag\n" for q, docs in run.items() for i, (d, s) in enumerate(docs.items()))
    )
    qrels_path.write_text("".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items()))
    return run_path, qrels_path


@pytest.mark.parametrize("seed", range(5))
def test_trec_files_agree_with_trec_eval(tmp_path, seed):
    """Run and qrels files (tied scores included) read by embedeval.io give trec_eval's numbers."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from embedeval.io import common_queries, read_qrels, read_run

    run, qrels = random_trec_case(100 + seed, ties=True)
    qrels["unjudged-only-in-qrels"] = {"d1": 1}
    run_path, qrels_path = _write_trec(tmp_path, run, qrels)
    with open(run_path) as f:
        trec_run = pytrec_eval.parse_run(f)
    with open(qrels_path) as f:
        trec_qrels = pytrec_eval.parse_qrel(f)
    trec = pytrec_eval.RelevanceEvaluator(trec_qrels, set(TREC.values())).evaluate(trec_run)
    ours = embedeval.evaluate_rankings(
        *common_queries(read_run(run_path), read_qrels(qrels_path)), metrics=list(TREC), empty="zero"
    )
    for name, measure in TREC.items():
        expected = [trec[q][measure] for q in ours.config["query_ids"]]
        np.testing.assert_allclose(ours.per_query[name], expected, atol=1e-9, err_msg=name)


def test_bad_trec_lines_name_file_and_line(tmp_path):
    from embedeval.io import read_qrels, read_run

    bad = tmp_path / "run.txt"
    bad.write_text("q1 Q0 d1 1 0.5 tag\nq1 Q0 d2 2 high tag\n")
    with pytest.raises(ValueError, match=r"run.txt:2: score must be a number; got 'high'"):
        read_run(bad)
    bad.write_text("q1 Q0 d1 1 0.5 tag\nq1 Q0 d1 2 0.4 tag\n")
    with pytest.raises(ValueError, match="listed twice"):
        read_run(bad)
    bad.write_text("q1 0 d1\n")
    with pytest.raises(ValueError, match=r"run.txt:1: a line needs 4 fields \(qid iteration docid grade\)"):
        read_qrels(bad)
