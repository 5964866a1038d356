"""The command line's judged form (`embedeval retrieval`) and the ignore and multi-label options of
`embedeval evaluate`, end to end on files written by the test, against the Python API."""

from __future__ import annotations

import json

import numpy as np
import pytest
from runner import run_cli as run

import embedeval


@pytest.fixture(scope="module")
def judged(tmp_path_factory):
    d = tmp_path_factory.mktemp("retrieval")
    rng = np.random.default_rng(0)
    corpus = rng.standard_normal((300, 12)).astype(np.float32)
    queries = (corpus[:40] + 0.5 * rng.standard_normal((40, 12))).astype(np.float32)
    q_ids, c_ids = [f"q{i}" for i in range(40)], [f"d{j}" for j in range(300)]
    c_ids[7] = "q3"  # a document with a query's id (BEIR's Quora / ArguAna)
    qrels = {q_ids[i]: {c_ids[i]: 2, c_ids[int(rng.integers(300))]: 1} for i in range(40)}
    np.save(d / "queries.npy", queries)
    np.save(d / "corpus.npy", corpus)
    order = list(range(40))[::-1]  # the qrels file lists the queries backwards
    (d / "qrels.txt").write_text(
        "".join(f"{q_ids[i]} 0 {doc} {g}\n" for i in order for doc, g in qrels[q_ids[i]].items())
    )
    (d / "q_ids.txt").write_text("\n".join(q_ids) + "\n")
    (d / "c_ids.txt").write_text("\n".join(c_ids) + "\n")
    (d / "ignore.txt").write_text("q0 d5\nq0 d6\nq1 d0\n")
    return d, queries, corpus, q_ids, c_ids, qrels


def test_retrieval_command_matches_the_python_api(judged):
    d, queries, corpus, q_ids, c_ids, qrels = judged
    out = run(
        "retrieval",
        d / "queries.npy",
        d / "corpus.npy",
        d / "qrels.txt",
        "--query-ids",
        d / "q_ids.txt",
        "--corpus-ids",
        d / "c_ids.txt",
        "--ignore",
        d / "ignore.txt",
        "--ignore-same-id",
        "--metrics",
        "ndcg@10",
        "mrr@10",
        "map",
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    expected = embedeval.evaluate_retrieval(
        queries,
        corpus,
        qrels,
        query_ids=q_ids,
        corpus_ids=c_ids,
        ignore={"q0": ["d5", "d6"], "q1": ["d0"]},
        ignore_same=(q_ids, c_ids),
        metrics=["ndcg@10", "mrr@10", "map"],
    )
    assert payload["summary"] == expected.summary
    assert payload["config"]["n_ignored"] == 4 and "ignore" in payload["conventions"]


def test_retrieval_command_takes_query_ids_from_the_qrels_order(judged):
    d, queries, corpus, q_ids, c_ids, qrels = judged
    np.save(d / "backwards.npy", queries[::-1])  # rows in the qrels' order
    out = run(
        "retrieval", d / "backwards.npy", d / "corpus.npy", d / "qrels.txt", "--corpus-ids", d / "c_ids.txt",
        "--metrics", "ndcg@10", "--format", "csv",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    expected = embedeval.evaluate_retrieval(
        queries, corpus, qrels, query_ids=q_ids, corpus_ids=c_ids, metrics="ndcg@10"
    )
    assert float(out.stdout.splitlines()[1].split(",")[1]) == pytest.approx(expected.summary["ndcg@10"], rel=1e-12)
    out = run("retrieval", d / "queries.npy", d / "corpus.npy", d / "qrels.txt")  # 40 qrels queries, 40 rows: ok
    assert out.returncode == 2 and "'qrels' names corpus 'd" in out.stderr  # corpus ids default to 0, 1, ...


def test_retrieval_command_reports_every_problem_at_once(judged):
    d = judged[0]
    out = run(
        "retrieval", d / "queries.npy", d / "missing.npy", d / "qrels.txt", "--metrics", "ndcg@0",
        "--ignore-same-corpus", d / "c_ids.txt", "--block-size", "0",
    )  # fmt: skip
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 4 and all(line.startswith("embedeval retrieval: error: ") for line in lines)
    assert "CORPUS: no such file" in lines[0] and "needs --ignore-same-query" in out.stderr
    np.save(d / "twenty.npy", np.ones((20, 12), dtype=np.float32))
    out = run("retrieval", d / "twenty.npy", d / "corpus.npy", d / "qrels.txt")
    assert out.returncode == 2 and "QUERIES has 20 rows but QRELS names 40 queries; give --query-ids" in out.stderr


@pytest.fixture(scope="module")
def reid(tmp_path_factory):
    d = tmp_path_factory.mktemp("reid")
    rng = np.random.default_rng(1)
    q_ids, g_ids = rng.integers(0, 15, 60), rng.integers(0, 15, 400)
    q_cams, g_cams = rng.integers(0, 4, 60), rng.integers(0, 4, 400)
    centres = rng.standard_normal((15, 8))
    q = (centres[q_ids] + rng.standard_normal((60, 8))).astype(np.float32)
    g = (centres[g_ids] + rng.standard_normal((400, 8))).astype(np.float32)
    np.save(d / "q.npy", q)
    np.save(d / "g.npy", g)
    (d / "q_ids.txt").write_text("\n".join(map(str, q_ids)) + "\n")
    (d / "g_ids.txt").write_text("\n".join(map(str, g_ids)) + "\n")
    (d / "q_keys.txt").write_text("".join(f"{a} {b}\n" for a, b in zip(q_ids, q_cams, strict=True)))
    np.save(d / "g_keys.npy", np.column_stack([g_ids, g_cams]))  # one side text, the other .npy
    return d, q, g, q_ids, g_ids, q_cams, g_cams


def test_evaluate_command_with_same_camera_junk(reid):
    d, q, g, q_ids, g_ids, q_cams, g_cams = reid
    out = run(
        "evaluate", d / "q.npy", d / "q_ids.txt", "--reference", d / "g.npy", "--reference-labels", d / "g_ids.txt",
        "--ignore-same-query", d / "q_keys.txt", "--ignore-same-reference", d / "g_keys.npy",
        "--metrics", "cmc@1", "cmc@5", "map", "--format", "json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    expected = embedeval.evaluate(
        q,
        q_ids,
        reference=g,
        reference_labels=g_ids,
        ignore_same=(np.column_stack([q_ids, q_cams]), np.column_stack([g_ids, g_cams])),
        metrics=["cmc@1", "cmc@5", "map"],
    )
    assert json.loads(out.stdout)["summary"] == expected.summary
    assert expected.config["n_ignored"] > 0


def test_evaluate_command_with_label_sets_and_ignore_pairs(tmp_path):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((50, 6)).astype(np.float32)
    sets = [set(rng.choice(["sky", "sea", "dog", "cat"], size=int(rng.integers(1, 3)), replace=False)) for _ in x]
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "tags.txt").write_text("".join(",".join(sorted(s)) + "\n" for s in sets))
    (tmp_path / "ignore.txt").write_text("0 1\n0 2\n5 9\n")
    out = run(
        "evaluate", tmp_path / "x.npy", tmp_path / "tags.txt", "--multi-label", "--ignore", tmp_path / "ignore.txt",
        "--metrics", "map", "precision@5", "--format", "json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    expected = embedeval.evaluate(x, sets, ignore={0: [1, 2], 5: [9]}, metrics=["map", "precision@5"])
    payload = json.loads(out.stdout)
    assert payload["summary"] == expected.summary and payload["macro"] is None
    (tmp_path / "bad.txt").write_text("sky\n\nsea\n" + "dog\n" * 47)
    out = run("evaluate", tmp_path / "x.npy", tmp_path / "bad.txt", "--multi-label")
    assert out.returncode == 2 and "'labels' item 1 is an empty label set" in out.stderr


def test_evaluate_command_leave_one_out_keys_default_to_the_query_keys(tmp_path):
    """OML's sequences: in leave-one-out one key file serves both sides."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((60, 5)).astype(np.float32)
    labels, sequences = rng.integers(0, 4, 60), rng.integers(0, 10, 60)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "y.npy", labels)
    (tmp_path / "seq.txt").write_text("\n".join(f"s{v}" for v in sequences) + "\n")
    out = run(
        "evaluate", tmp_path / "x.npy", tmp_path / "y.npy", "--ignore-same-query", tmp_path / "seq.txt",
        "--metrics", "map", "precision@1", "--format", "json",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    keys = [f"s{v}" for v in sequences]
    expected = embedeval.evaluate(x, labels, ignore_same=(keys, keys), metrics=["map", "precision@1"])
    assert json.loads(out.stdout)["summary"] == expected.summary
    plain = embedeval.evaluate(x, labels, metrics=["map", "precision@1"])
    assert expected.summary != plain.summary  # the rule removed something
