"""The command line as a new user meets it: every argument problem at once, one line each, no
usage block; "did you mean" for names; tables that fit a terminal; --per-query keeps --ci;
Ctrl-C while importing; the messages of issue 27."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from runner import ROOT, cli_env, run_cli

from embedeval.cli import main

FAST = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)

# (flag and value, the start of its line): each a problem argparse used to stop at, with usage
BAD = {
    "ci": (["--ci", "95"], "embedeval rankings: error: argument --ci: must be in (0, 1), e.g. 0.95; got 95"),
    "empty": (["--empty", "zeros"], "embedeval rankings: error: argument --empty: invalid choice: 'zeros'"),
    "format": (["--format", "tsv"], "embedeval rankings: error: argument --format: invalid choice: 'tsv'"),
    "threshold": (["--threshold", "a"], "embedeval rankings: error: argument --threshold: invalid float value: 'a'"),
    "ties": (["--ties", "expectd"], "embedeval rankings: error: argument --ties: invalid choice: 'expectd'"),
}


def lines_of(argv, capsys):
    status = main(argv)
    err = capsys.readouterr().err
    return status, err.splitlines()


def test_the_issue_example_prints_two_lines_and_exits_2(capsys):
    status, lines = lines_of(["evaluate", "x.npy", "y.txt", "--ci", "95", "--distance", "cos"], capsys)
    assert status == 2
    assert lines == [
        "embedeval evaluate: error: argument --ci: must be in (0, 1), e.g. 0.95; got 95",
        "embedeval evaluate: error: argument --distance: invalid choice: 'cos' (choose from euclidean, cosine, "
        "inner_product, hamming); did you mean 'cosine'?",
    ]


@FAST
@given(chosen=st.lists(st.sampled_from(sorted(BAD)), min_size=1, max_size=5, unique=True), missing=st.booleans())
def test_every_argument_problem_is_one_line_and_all_are_said(chosen, missing, capsys):
    argv = ["rankings", "qrels.txt", *([] if missing else ["run.txt"])]
    for name in chosen:
        argv += BAD[name][0]
    status, lines = lines_of(argv, capsys)
    assert status == 2
    expected = [BAD[name][1] for name in chosen]
    if missing:
        expected.append("embedeval rankings: error: the following arguments are required: RUN")
    assert len(lines) == len(expected), lines
    assert all(line.startswith(want) for line, want in zip(lines, expected, strict=True)), lines
    assert not any(line.startswith("usage:") for line in lines)


def test_an_unknown_metric_gets_the_nearest_name(capsys):
    status, lines = lines_of(["rankings", "qrels.txt", "run.txt", "--metrics", "presicion@1"], capsys)
    assert status == 2
    assert any("unknown metric 'presicion@1' for rankings; did you mean 'precision@1'?" in line for line in lines)


def test_a_non_integer_cutoff_names_the_rule(capsys):
    status, lines = lines_of(["rankings", "qrels.txt", "run.txt", "--metrics", "P_1.5", "ndcg_cut_2.5"], capsys)
    assert status == 2
    assert any("the cutoff in metric 'P_1.5' must be an int >= 1; got '1.5'" in line for line in lines)
    assert any("the cutoff in metric 'ndcg_cut_2.5' must be an int >= 1; got '2.5'" in line for line in lines)


@pytest.fixture
def emb(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "e.npy", rng.standard_normal((120, 4)).astype(np.float32))
    np.savetxt(tmp_path / "l.txt", rng.integers(0, 4, 120), fmt="%d")
    return tmp_path


def test_the_default_table_fits_100_columns(emb):
    metrics = ["precision@1", "recall@10", "map@r", "mrr", "capped_recall@5", "map_hits@10", "nmi", "eer"]
    out = run_cli("evaluate", emb / "e.npy", emb / "l.txt", "--ci", "0.95", "--metrics", *metrics)
    assert out.returncode == 0, out.stderr
    assert max(map(len, out.stdout.splitlines())) <= 100
    assert "definitions:" in out.stdout and "MAP@R = (1/R)" in out.stdout  # said once, below


def test_per_query_keeps_intervals_and_the_reports_table(tmp_path):
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq1 0 d2 0\nq2 0 d3 2\n")
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq2 Q0 d1 1 1.0 r\nq2 Q0 d3 2 0.5 r\n")
    args = ["rankings", tmp_path / "qrels.txt", tmp_path / "run.txt", "--ci", "0.9", "--per-query", "--metrics", "mrr"]
    csv = run_cli(*args, "--format", "csv", "--report", tmp_path / "r.md")
    assert csv.returncode == 0, csv.stderr
    assert csv.stdout.splitlines()[-2:] == ["all low,0.5", "all high,1.0"]
    assert "## Per query" in (tmp_path / "r.md").read_text()
    for fmt in ("table", "markdown"):
        out = run_cli(*args, "--format", fmt)
        assert "[90% interval]" in out.stdout, fmt


def test_a_2d_string_npy_gets_a_dtype_error(emb):
    np.save(emb / "s.npy", np.array([["a", "b"]] * 3))
    out = run_cli("evaluate", emb / "s.npy", emb / "l.txt")
    assert out.stderr.splitlines() == ["embedeval evaluate: error: 'embeddings' must hold real numbers; got dtype <U1"]


def test_an_empty_run_file_says_so(tmp_path):
    (tmp_path / "run.txt").write_text("")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\n")
    out = run_cli("rankings", tmp_path / "qrels.txt", tmp_path / "run.txt")
    assert out.returncode == 2 and "the run is empty" in out.stderr


def test_one_judged_query_without_a_run_is_said_in_the_singular(tmp_path):
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 3.0 r\n")
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d1 1\n")
    out = run_cli("rankings", tmp_path / "qrels.txt", tmp_path / "run.txt", "--complete")
    assert "1 judged query has no run and counts as an empty ranking (--complete)" in out.stderr


def test_the_k_warning_names_precision_only_when_asked_for(emb):
    out = run_cli("evaluate", emb / "e.npy", emb / "l.txt", "--metrics", "map_hits@1000")
    assert "whole reference set is ranked" in out.stderr and "precision" not in out.stderr


def test_ctrl_c_while_importing_is_one_line_and_130():
    """A KeyboardInterrupt raised by the import of embedeval.cli, as a Ctrl-C in its first 0.3 s."""
    script = (
        "import sys, importlib.abc\n"
        "class Stop(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'embedeval.cli': raise KeyboardInterrupt\n"
        "sys.meta_path.insert(0, Stop())\n"
        "import embedeval_launch\n"
        "sys.exit(embedeval_launch.main())\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=cli_env(), cwd=ROOT)
    assert out.returncode == 130
    assert out.stderr == "embedeval: interrupted\n"
