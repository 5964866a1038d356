"""TREC run and qrels files: the batch readers (numpy's, pyarrow's), the line reader and trec_eval
give the same numbers on every file layout; bad lines are named by file and line on every path."""

from __future__ import annotations

import numpy as np
import pytest
from trec_cases import BATCH_READERS, READERS, use_reader

import embedeval
from embedeval._forms.trec import evaluate as _trec
from embedeval._forms.trec.columns import hash_strings
from embedeval._metrics.registry import RANKINGS, parse_metrics
from embedeval.io import common_queries, read_qrels, read_run

pytest.importorskip("pyarrow")

TREC = {
    "precision@5": "P_5",
    "recall@10": "recall_10",
    "map": "map",
    "map@5": "map_cut_5",
    "mrr": "recip_rank",
    "ndcg": "ndcg",
    "ndcg@5": "ndcg_cut_5",
    "r_precision": "Rprec",
    "hit_rate@5": "success_5",
}
PARSED = parse_metrics(list(TREC), RANKINGS)


def random_files(
    tmp_path, seed: int, *, sep: str = " ", shuffle: bool = False, ties: bool = True, by_score: bool = False
):
    """A run and qrels with string ids: tied scores, queries only in one file, lines of a query
    scattered through the run if ``shuffle``, each query's lines in score order if ``by_score``
    (as retrieval systems write them: ties are neighbours, in no particular id order)."""
    rng = np.random.default_rng(seed)
    run_lines, qrels_lines, run, qrels = [], [], {}, {}
    for q in range(int(rng.integers(3, 30))):
        docs = [f"D{int(i):03d}" for i in rng.choice(300, size=int(rng.integers(1, 40)), replace=False)]
        scores = rng.integers(0, 5, len(docs)) if ties else rng.permutation(len(docs)) + rng.random()
        if by_score:
            order = np.argsort(-scores, kind="stable")
            docs, scores = [docs[i] for i in order], scores[order]
        if q % 7 != 3:  # a judged query without a run
            run[f"q{q}"] = dict(zip(docs, scores.tolist(), strict=True))
            run_lines += [
                f"q{q}{sep}Q0{sep}{d}{sep}{i + 1}{sep}{s}{sep}tag"
                for i, (d, s) in enumerate(zip(docs, scores, strict=True))
            ]
        if q % 5 != 1:  # a ranked query without judgements
            judged = rng.choice(300, size=int(rng.integers(1, 20)), replace=False)
            grades = rng.integers(-1, 4, judged.size)
            qrels[f"q{q}"] = {f"D{int(i):03d}": int(g) for i, g in zip(judged, grades, strict=True)}
            qrels_lines += [f"q{q}{sep}0{sep}D{int(i):03d}{sep}{g}" for i, g in zip(judged, grades, strict=True)]
    if shuffle:
        rng.shuffle(run_lines)
    (tmp_path / "run.txt").write_text("\n".join(run_lines) + "\n")
    (tmp_path / "qrels.txt").write_text("\n".join(qrels_lines) + "\n")
    return tmp_path / "run.txt", tmp_path / "qrels.txt", run, qrels


def line_reader_only(monkeypatch):
    """The line reader reads every file from here on."""
    use_reader(monkeypatch, "lines")


@pytest.mark.parametrize("reader", BATCH_READERS)
@pytest.mark.parametrize("layout", ["grouped", "score order", "shuffled", "tabs", "spaces", "small batches"])
@pytest.mark.parametrize("seed", range(6))
def test_files_give_trec_eval_numbers_on_every_path(tmp_path, monkeypatch, seed, layout, reader):
    """Each batch reader, the line reader and read_run/read_qrels + dicts all agree with trec_eval."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    sep = {"tabs": "\t", "spaces": "   "}.get(layout, " ")
    run_path, qrels_path, run, qrels = random_files(
        tmp_path, seed, sep=sep, shuffle=layout == "shuffled", by_score=layout == "score order"
    )
    use_reader(monkeypatch, reader, 64 if layout == "small batches" else None)  # 64: a query spans batches
    trec = pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values())).evaluate(run)
    columns, coverage = _trec.evaluate_files(run_path, qrels_path, PARSED, 1.0, "zero", False)
    dicts = embedeval.evaluate_rankings(
        *common_queries(read_run(run_path), read_qrels(qrels_path)), metrics=list(TREC), empty="zero"
    )
    line_reader_only(monkeypatch)
    lines, _ = _trec.evaluate_files(run_path, qrels_path, PARSED, 1.0, "zero", False)
    assert columns.config["query_ids"] == lines.config["query_ids"] == dicts.config["query_ids"]
    assert sorted(columns.config["query_ids"]) == sorted(trec)
    for name, measure in TREC.items():
        want = [trec[q][measure] for q in columns.config["query_ids"]]
        for result in (columns, lines, dicts):
            np.testing.assert_allclose(result.per_query[name], want, rtol=0, atol=1e-12, err_msg=name)
    assert coverage.judged_without_run == len(set(qrels) - set(run))
    assert coverage.run_without_judgements == len(set(run) - set(qrels))


@pytest.mark.parametrize("seed", range(4))
def test_read_run_and_read_qrels_match_a_plain_reader(tmp_path, monkeypatch, seed):
    run_path, qrels_path, run, qrels = random_files(tmp_path, seed, shuffle=True)
    want_run = {q: embedeval._forms.mappings.order_by_score(docs) for q, docs in run.items()}
    want_qrels = {q: {d: float(g) for d, g in docs.items()} for q, docs in qrels.items()}
    for reader in BATCH_READERS:
        use_reader(monkeypatch, reader, 100)
        assert read_run(run_path) == want_run and read_qrels(qrels_path) == want_qrels
    line_reader_only(monkeypatch)
    assert read_run(run_path) == want_run and read_qrels(qrels_path) == want_qrels


@pytest.mark.parametrize("seed", range(4))
def test_hash_collisions_in_files_fall_back_to_exact_ids(tmp_path, seed):
    """Every document id hashed to the same number: duplicates are only suspected, matches fail
    the string check, and both files are read again with exact codes."""
    run_path, qrels_path, *_ = random_files(tmp_path, seed)
    want, _ = _trec.evaluate_files(run_path, qrels_path, PARSED, 1.0, "skip", False)
    one_number = lambda chunk: np.zeros(len(chunk), dtype=np.int64)  # noqa: E731
    got, _ = _trec.evaluate_files(run_path, qrels_path, PARSED, 1.0, "skip", False, hasher=one_number)
    assert got.config["query_ids"] == want.config["query_ids"]
    for name in TREC:
        np.testing.assert_allclose(got.per_query[name], want.per_query[name], rtol=0, atol=1e-12, err_msg=name)


def test_hashes_tell_distinct_ids_apart():
    pa = pytest.importorskip("pyarrow")
    ids = [f"doc{i}" for i in range(20000)] + ["", "a", "a" * 8, "a" * 9, "a" * 17, "é" * 5]
    hashed = hash_strings(pa.array(ids))
    assert np.unique(hashed).size == len(ids) and (hashed >= 0).all()
    again = hash_strings(pa.array(ids[::-1]).slice(0))
    np.testing.assert_array_equal(again[::-1], hashed)


def test_complete_counts_judged_queries_without_a_run_as_zero(tmp_path):
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq9 Q0 a 1 1 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 b 1\nq2 0 a 1\nq3 0 a 0\n")
    common, coverage = _trec.evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", PARSED, 1.0, "zero", False)
    assert common.config["query_ids"] == ["q1"] and common.summary["mrr"] == 0.5
    assert (coverage.judged_without_run, coverage.run_without_judgements) == (2, 1)
    full, _ = _trec.evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", PARSED, 1.0, "zero", True)
    assert full.config["query_ids"] == ["q1", "q2", "q3"]
    assert full.per_query["mrr"].tolist() == [0.5, 0.0, 0.0] and full.summary["mrr"] == pytest.approx(1 / 6)
    skip, _ = _trec.evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", PARSED, 1.0, "skip", True)
    assert skip.summary["mrr"] == 0.25 and skip.n_evaluated == 2  # q3 has no relevant item


BAD_RUNS = [
    ("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 nan t\n", r"run.txt:2: score must be a number; got 'nan'"),
    ("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 NaN t\n", r"run.txt:2: score must be a number; got 'NaN'"),
    ("q1 Q0 a 1 0.5 t\n\nq1 Q0 b 2 high t\n", r"run.txt:3: score must be a number; got 'high'"),
    ("q1 Q0 a 1 0.5 t\nq1 Q0 b 2 t\n", r"run.txt:2: a line needs 6 fields"),
    (
        "q1 Q0 a 1 0.5 t\nq2 Q0 a 1 0.5 t\nq1 Q0 c 2 0.4 t\nq1 Q0 a 3 0.1 t\n",
        r"run.txt:4: document 'a' is listed twice",
    ),
]


@pytest.mark.parametrize("reader", BATCH_READERS)
@pytest.mark.parametrize(("text", "message"), BAD_RUNS)
def test_bad_run_lines_are_named_on_both_paths(tmp_path, monkeypatch, text, message, reader):
    use_reader(monkeypatch, reader)
    (tmp_path / "run.txt").write_text(text)
    (tmp_path / "qrels.txt").write_text("q1 0 a 1\n")
    with pytest.raises(ValueError, match=message):
        _trec.evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", PARSED, 1.0, "skip", False)
    with pytest.raises(ValueError, match=message):
        read_run(tmp_path / "run.txt")
    line_reader_only(monkeypatch)
    with pytest.raises(ValueError, match=message):
        _trec.evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", PARSED, 1.0, "skip", False)


BAD_QRELS = [
    ("q1 0 a 1\nq1 0 b inf\n", r"qrels.txt:2: grade must be a finite number; got 'inf'"),
    ("q1 0 a 1\nq1 0 b\n", r"qrels.txt:2: a line needs 4 fields"),
    ("q1 0 a 1\nq2 0 a 1\nq1 0 a 0\n", r"qrels.txt:3: document 'a' is judged twice for query 'q1'"),
]


@pytest.mark.parametrize("reader", READERS)
@pytest.mark.parametrize(("text", "message"), BAD_QRELS)
def test_bad_qrels_lines_are_named(tmp_path, monkeypatch, text, message, reader):
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 0.5 t\n")
    (tmp_path / "qrels.txt").write_text(text)
    use_reader(monkeypatch, reader)
    with pytest.raises(ValueError, match=message):
        _trec.evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", PARSED, 1.0, "skip", False)
    with pytest.raises(ValueError, match=message):
        read_qrels(tmp_path / "qrels.txt")


def test_windows_line_ends_and_an_empty_run(tmp_path):
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2 t\r\nq1 Q0 b 2 1 t\r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 b 1\r\n")
    result, _ = _trec.evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", PARSED, 1.0, "skip", False)
    assert result.summary["mrr"] == 0.5
    assert read_run(tmp_path / "run.txt") == {"q1": ["a", "b"]}
    (tmp_path / "run.txt").write_text("")
    with pytest.raises(ValueError, match="the run is empty: it holds no ranked line"):
        _trec.evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", PARSED, 1.0, "skip", False)


def test_evaluate_files_in_python_is_the_command_path(tmp_path):
    from embedeval.io import evaluate_files

    (tmp_path / "run.txt").write_text("q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\nq9 Q0 a 1 1 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 b 1\nq2 0 a 1\n")
    r = evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", metrics=["recip_rank", "P_1"])
    assert r.summary == {"mrr": 0.5, "precision@1": 0.0} and r.config["query_ids"] == ["q1"]
    assert r.config["judged_without_run"] == 1 and r.config["ranked_without_judgements"] == 1
    full = evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", metrics=["mrr"], complete=True)
    assert full.per_query["mrr"].tolist() == [0.5, 0.0]
    with pytest.raises(ValueError, match="'threshold' must be a number > 0"):
        evaluate_files(tmp_path / "run.txt", tmp_path / "qrels.txt", threshold=0)
