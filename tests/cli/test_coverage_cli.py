"""A summary over fewer queries than were given says so where the number is: the head of every
table the command line prints (evaluate, retrieval, rankings, compare), and the Python objects'
text (issue 40, item 6)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import embedeval
from embedeval.cli import main
from embedeval.stats import compare_systems

QRELS = "q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 1\nq3 0 d4 0\n"  # q3: judged, grade 0 only
RUN = "q1 Q0 d2 1 3.0 run\nq1 Q0 d1 2 2.0 run\nq2 Q0 d3 1 1.0 run\nq3 Q0 d4 1 1.0 run\n"
HEAD = "2 of 3 queries (1 skipped: no judged item reaches the relevance threshold (R = 0); trec_eval counts"


@pytest.fixture
def files(tmp_path):
    (tmp_path / "qrels.txt").write_text(QRELS)
    (tmp_path / "run.txt").write_text(RUN)
    (tmp_path / "run2.txt").write_text(RUN.replace("3.0 run", "0.5 run"))
    rng = np.random.default_rng(0)
    np.save(tmp_path / "emb.npy", rng.standard_normal((5, 3)).astype(np.float32))
    (tmp_path / "labels.txt").write_text("a\na\nb\nb\nc\n")  # c: a class of one, R = 0
    np.save(tmp_path / "q.npy", rng.standard_normal((3, 3)).astype(np.float32))
    np.save(tmp_path / "c.npy", rng.standard_normal((4, 3)).astype(np.float32))
    (tmp_path / "qids.txt").write_text("q1\nq2\nq3\n")
    (tmp_path / "cids.txt").write_text("d1\nd2\nd3\nd4\n")
    return tmp_path


def _out(argv, capsys) -> str:
    assert main([str(a) for a in argv]) == 0
    return capsys.readouterr().out


def _first(text: str) -> str:
    return " ".join(text.split("\n\n")[0].split())  # the first paragraph, unwrapped


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_rankings_head_says_two_of_three_and_how_trec_eval_counts(files, capsys, fmt):
    out = _out(["rankings", files / "qrels.txt", files / "run.txt", "--metrics", "map", "--format", fmt], capsys)
    assert _first(out).startswith(f"mean over {HEAD}") and "--empty zero" in _first(out)


def test_rankings_per_query_head_says_it_over_the_all_row(files, capsys):
    argv = ["rankings", files / "qrels.txt", files / "run.txt", "--metrics", "map", "--per-query"]
    assert _first(_out(argv, capsys)).startswith(f"all: mean over {HEAD}")


def test_every_query_averaged_has_no_head_line_and_matches_trec_eval(files, capsys):
    argv = ["rankings", files / "qrels.txt", files / "run.txt", "--metrics", "map", "--empty", "zero", "--no-ci"]
    out = _out(argv, capsys)
    assert out.startswith("metric") and "0.5000" in out
    trec = _out(["trec_eval", "-m", "map", files / "qrels.txt", files / "run.txt"], capsys)
    assert trec.split()[-1] == "0.5000"


def test_json_carries_the_coverage(files, capsys):
    argv = ["rankings", files / "qrels.txt", files / "run.txt", "--metrics", "map", "--format", "json"]
    assert json.loads(_out(argv, capsys))["coverage"].startswith(HEAD)


def test_retrieval_head(files, capsys):
    argv = ["retrieval", files / "q.npy", files / "c.npy", files / "qrels.txt", "--metrics", "map"]
    argv += ["--query-ids", files / "qids.txt", "--corpus-ids", files / "cids.txt"]
    assert _first(_out(argv, capsys)).startswith(f"mean over {HEAD}")


def test_evaluate_head_without_the_trec_eval_pointer(files, capsys):
    """Labels: the class of one is skipped; there is no empty='zero' to point to."""
    out = _first(_out(["evaluate", files / "emb.npy", files / "labels.txt", "--metrics", "map@r"], capsys))
    assert out.startswith("mean over 4 of 5 queries (1 skipped: no other embedding shares") and "trec_eval" not in out


@pytest.mark.parametrize("fmt", ["table", "markdown"])
def test_compare_head_says_why_and_offers_empty_zero(files, capsys, fmt):
    argv = ["compare", files / "qrels.txt", files / "run.txt", files / "run2.txt", "--metrics", "map", "--format", fmt]
    out = _first(_out(argv, capsys))
    assert out.startswith("over 2 of 3 queries (no judged item reaches the relevance threshold (R = 0); trec_eval")
    with_zero = _out([*argv, "--empty", "zero"], capsys)
    assert not with_zero.startswith("over") and "0.5000" in with_zero


def test_python_text_says_it_too(files):
    result = embedeval.evaluate_rankings(
        {"q1": ["d2", "d1"], "q2": ["d3"], "q3": ["d4"]},
        {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 1}, "q3": {"d4": 0}},
        metrics=["map"],
    )
    assert _first(str(result)).startswith(f"mean over {HEAD}") and "empty='zero'" in str(result)
    c = compare_systems({"a": result, "b": result})
    assert str(c).startswith("over 2 of 3 queries (no judged item") and c.coverage in str(c).replace("\n    ", " ")
    full = compare_systems({"a": np.ones(3), "b": np.zeros(3)})
    assert full.coverage is None and not str(full).startswith("over")


def test_two_embedding_compare_head(tmp_path, capsys):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "a.npy", rng.normal(size=(12, 3)))
    np.save(tmp_path / "b.npy", rng.normal(size=(12, 3)))
    (tmp_path / "labels.txt").write_text("\n".join("aabbccddeefg") + "\n")  # f, g: classes of one
    out = _out(["compare", tmp_path / "a.npy", tmp_path / "b.npy", tmp_path / "labels.txt"], capsys)
    assert _first(out) == "over 10 of 12 queries (2 skipped: no other embedding shares the query's label (R = 0))"
