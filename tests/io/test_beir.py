"""BEIR folders, qrels tables and id files: read by hand-written files, checked against pytrec_eval.

The folder is written the way BEIR ships one (a header row in qrels/test.tsv, JSON lines with
``_id``), with the awkward cases the reader has rules for: a query without judgements, a judged
document missing from the corpus, a judged query missing from queries.jsonl, a repeated line.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from runner import run_cli

import embedeval
from embedeval.io import read_beir, read_ids, read_qrels

pytrec_eval = pytest.importorskip("pytrec_eval")

METRICS = {"ndcg@10": "ndcg_cut_10", "map": "map", "mrr": "recip_rank", "precision@5": "P_5", "recall@10": "recall_10"}


def _write_folder(root, seed=0, n_queries=12, n_docs=40, dim=6):
    """A BEIR folder and its embeddings; returns (queries, corpus) in file order."""
    rng = np.random.default_rng(seed)
    (root / "qrels").mkdir(parents=True)
    query_ids = [f"q{i}" for i in range(n_queries)]
    doc_ids = [f"doc-{i:03d}" for i in rng.permutation(n_docs)]  # file order differs from sorted order
    with open(root / "queries.jsonl", "w") as f:
        for q in query_ids:
            f.write(json.dumps({"_id": q, "text": f"question {q}", "metadata": {}}) + "\n")
    with open(root / "corpus.jsonl", "w") as f:
        for d in doc_ids:
            f.write(json.dumps({"_id": d, "title": "", "text": f"text of {d}"}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"]
    for q in query_ids[1:]:  # q0 has no judgements
        for d in rng.choice(doc_ids, size=rng.integers(1, 6), replace=False):
            lines.append(f"{q}\t{d}\t{int(rng.integers(1, 3))}")
    lines.append("q3\tdoc-missing\t2")  # a judged document the corpus lacks
    lines.append("q-unknown\tdoc-000\t1")  # a judged query that queries.jsonl lacks
    lines.append(lines[1])  # the same judgement twice
    (root / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n")
    queries = rng.normal(size=(n_queries, dim))
    corpus = rng.normal(size=(n_docs, dim))
    return queries, corpus, query_ids, doc_ids


def _pytrec_values(queries, corpus, query_ids, doc_ids, qrels):
    """pytrec_eval's per-query values on the exact cosine ranking of every document."""
    qn = queries / np.linalg.norm(queries, axis=1, keepdims=True)
    cn = corpus / np.linalg.norm(corpus, axis=1, keepdims=True)
    scores = qn @ cn.T
    run = {q: {d: float(scores[i, j]) for j, d in enumerate(doc_ids)} for i, q in enumerate(query_ids)}
    measures = {"ndcg_cut", "map", "recip_rank", "P", "recall"}
    integer = {q: {d: int(g) for d, g in docs.items()} for q, docs in qrels.items()}
    return pytrec_eval.RelevanceEvaluator(integer, measures).evaluate(run)


def test_read_beir_gives_ids_in_file_order_and_says_each_rule_once(tmp_path):
    _, _, query_ids, doc_ids = _write_folder(tmp_path)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got_q, got_c, qrels = read_beir(tmp_path, split="test")
    assert got_q == query_ids and got_c == doc_ids
    assert "q0" not in qrels and "q-unknown" not in qrels
    assert "doc-missing" in qrels["q3"]  # kept: the evaluation counts it (absent_docs)
    messages = [str(w.message) for w in caught]
    assert len(messages) == 3, messages
    assert sum("counted once" in m for m in messages) == 1
    assert sum("not in queries.jsonl" in m and "'q-unknown'" in m for m in messages) == 1
    assert sum("1 of 12 queries" in m and "no judgements" in m for m in messages) == 1


@pytest.mark.parametrize("seed", range(5))
def test_beir_folder_equals_pytrec_eval_on_the_same_ranking(tmp_path, seed):
    queries, corpus, query_ids, doc_ids = _write_folder(tmp_path, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        query_ids_read, corpus_ids, qrels = read_beir(tmp_path)
    result = embedeval.evaluate_retrieval(
        queries, corpus, qrels, query_ids=query_ids_read, corpus_ids=corpus_ids, metrics=list(METRICS)
    )
    expected = _pytrec_values(queries, corpus, query_ids, doc_ids, qrels)
    assert set(expected) == set(qrels)  # pytrec_eval evaluates the judged queries, as we do
    assert result.n_evaluated == len(expected) and result.skipped["the query has no judgements in 'qrels'"] == 1
    for ours, theirs in METRICS.items():
        per_query = dict(zip(query_ids, result.per_query[ours], strict=True))
        for q, values in expected.items():
            assert per_query[q] == pytest.approx(values[theirs], abs=1e-12), (ours, q)
        assert result.summary[ours] == pytest.approx(np.mean([v[theirs] for v in expected.values()]), abs=1e-12)


def test_the_command_line_gives_the_same_values_with_beir_and_with_the_files(tmp_path):
    queries, corpus, query_ids, doc_ids = _write_folder(tmp_path / "beir")
    np.save(tmp_path / "q.npy", queries)
    np.save(tmp_path / "c.npy", corpus)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, _, qrels = read_beir(tmp_path / "beir")
    expected = _pytrec_values(queries, corpus, query_ids, doc_ids, qrels)
    metrics = ["--metrics", *METRICS, "--format", "json", "--quiet"]
    folder = run_cli("retrieval", tmp_path / "q.npy", tmp_path / "c.npy", "--beir", tmp_path / "beir", *metrics)
    files = run_cli(
        "retrieval",
        tmp_path / "q.npy",
        tmp_path / "c.npy",
        tmp_path / "beir" / "qrels" / "test.tsv",
        "--query-ids",
        tmp_path / "beir" / "queries.jsonl",
        "--corpus-ids",
        tmp_path / "beir" / "corpus.jsonl",
        *metrics,
    )
    assert folder.returncode == 0, folder.stderr
    # the folder's rules, one line each: the repeat, the unknown query, the unjudged query; and the
    # evaluation's, for the missing document
    assert folder.stderr.count("warning:") == 4, folder.stderr
    for ours, theirs in METRICS.items():
        mean = np.mean([v[theirs] for v in expected.values()])
        assert json.loads(folder.stdout)["summary"][ours] == pytest.approx(mean, abs=1e-12)
    assert files.returncode == 0, files.stderr
    assert files.stderr.count("warning:") == 4, files.stderr  # the same rules, said for the files given
    assert json.loads(files.stdout)["summary"] == json.loads(folder.stdout)["summary"]


def test_qrels_tables_in_every_layout_read_the_same(tmp_path):
    rows = [("q1", "d1", 1), ("q1", "d2", 2), ("q2", "7", 0), ("q2", "d1", 1)]
    (tmp_path / "t.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{d}\t{s}\n" for q, d, s in rows))
    (tmp_path / "t.csv").write_text("corpus-id,query-id,score\n" + "".join(f"{d},{q},{s}\n" for q, d, s in rows))
    (tmp_path / "t.jsonl").write_text(
        "".join(
            json.dumps({"query-id": q, "corpus-id": int(d) if d.isdigit() else d, "score": s}) + "\n"
            for q, d, s in rows
        )
    )
    (tmp_path / "t.trec").write_text("".join(f"{q} 0 {d} {s}\n" for q, d, s in rows))
    expected = {"q1": {"d1": 1.0, "d2": 2.0}, "q2": {"7": 0.0, "d1": 1.0}}
    layouts = ["t.tsv", "t.csv", "t.jsonl", "t.trec"]
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    table = pa.table(
        {"query-id": [r[0] for r in rows], "corpus-id": [r[1] for r in rows], "score": [r[2] for r in rows]}
    )
    pq.write_table(table, tmp_path / "t.parquet")
    layouts.append("t.parquet")
    for name in layouts:
        assert read_qrels(tmp_path / name) == expected, name


def test_a_document_judged_twice_with_two_grades_is_an_error_naming_both_lines(tmp_path):
    path = tmp_path / "test.tsv"
    path.write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\nq1\td1\t2\n")
    with pytest.raises(ValueError, match=r"test.tsv:4: document 'd1' is judged twice for query 'q1' .*line 2"):
        read_qrels(path)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("query-id\tcorpus-id\nq1\td1\n", "needs a column 'score'"),
        ("query-id\tcorpus-id\tscore\nq1\td1\tnan\n", r"test.tsv:2: score must be a finite number"),
        ("query-id\tcorpus-id\tscore\nq1\td1\n", r"test.tsv:2: a line needs the 3 fields"),
    ],
)
def test_bad_tables_name_the_file_line_and_rule(tmp_path, text, match):
    path = tmp_path / "test.tsv"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        read_qrels(path)


def test_id_files_as_lines_or_json_lines(tmp_path):
    (tmp_path / "a.txt").write_text("x\n\ny\n7\n")
    (tmp_path / "b.jsonl").write_text('{"_id": "x"}\n{"id": "y"}\n{"_id": 7, "id": "no"}\n')
    assert read_ids(tmp_path / "a.txt") == read_ids(tmp_path / "b.jsonl") == ["x", "y", "7"]
    (tmp_path / "c.jsonl").write_text('{"_id": "x"}\n{"text": "y"}\n')
    with pytest.raises(ValueError, match=r"c.jsonl:2: a JSON line needs an '_id'"):
        read_ids(tmp_path / "c.jsonl")


def test_a_folder_without_its_files_says_what_it_looked_for(tmp_path):
    with pytest.raises(ValueError, match="has no queries"):
        read_beir(tmp_path)
    _write_folder(tmp_path / "f")
    with pytest.raises(ValueError, match=r"no qrels for split 'dev' \(looked for dev.tsv, dev.csv"):
        read_beir(tmp_path / "f", split="dev")
