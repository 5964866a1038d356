"""``embedeval compare`` with N systems: runs with a qrels, embeddings with labels, seeds as
groups of runs, every format, and files of the wrong kind said in one line each."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from runner import run_cli as run

import embedeval
from embedeval.stats import compare_systems


@pytest.fixture(scope="module")
def trec(tmp_path_factory):
    d = tmp_path_factory.mktemp("trec")
    rng = np.random.default_rng(0)
    with (d / "qrels.txt").open("w") as f:
        for q in range(40):
            for doc in range(15):
                f.write(f"q{q} 0 d{doc} {int(doc < 3 or rng.random() < 0.1)}\n")
    for name, noise in [("bm25", 3.0), ("dense", 2.0), ("hybrid", 1.0), ("s1", 1.5), ("s2", 1.6), ("s3", 1.4)]:
        with (d / f"{name}.txt").open("w") as f:
            for q in rng.permutation(40):  # each run lists its queries in its own order
                score = -np.arange(15) / 3 + rng.normal(0, noise, 15)
                for rank, doc in enumerate(np.argsort(-score)):
                    f.write(f"q{q} Q0 d{doc} {rank + 1} {score[doc]:.5f} {name}\n")
    return d


def test_three_runs_and_a_qrels_print_the_table_with_resamples_and_seed(trec):
    d = trec
    out = run(
        "compare", d / "qrels.txt", d / "bm25.txt", d / "dense.txt", d / "hybrid.txt", "--metrics", "map", "ndcg@10"
    )
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split()[:2] == ["system", "map"] and lines[1].startswith("bm25 (baseline)")
    assert "2000 resamples of the queries" in out.stdout and "10000 resamples" in out.stdout and "seed 0" in out.stdout
    assert "p (Holm)" in out.stdout and "over 4 comparisons" in out.stdout


def test_json_matches_compare_systems_on_the_files_results(trec):
    d = trec
    files = [d / f"{n}.txt" for n in ("bm25", "dense", "hybrid")]
    out = run("compare", d / "qrels.txt", *files, "--metrics", "map", "--all-pairs", "--format", "json", "--test", "t")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    results = {
        f.stem: embedeval.evaluate_rankings(
            embedeval.io.read_run(f), embedeval.io.read_qrels(d / "qrels.txt"), metrics=["map"]
        )
        for f in files
    }
    expected = compare_systems(results, pairs="all", test="t")
    for name, values in expected.values.items():
        assert payload["values"][name] == pytest.approx(values)
    for got, want in zip(payload["pairs"], expected.pairs, strict=True):
        assert (got["a"], got["b"]) == (want["a"], want["b"])
        assert got["p_value"] == pytest.approx(want["p_value"]) and got["p_tukey"] == pytest.approx(want["p_tukey"])


def test_seeds_as_a_group_use_the_two_level_bootstrap(trec):
    d = trec
    seeds = ",".join(str(d / f"s{i}.txt") for i in (1, 2, 3))
    out = run("compare", d / "qrels.txt", d / "bm25.txt", "--system", f"tuned={seeds}", "--metrics", "map")
    assert out.returncode == 0, out.stderr
    assert "runs then queries (two levels)" in out.stdout and "hierarchical bootstrap" in out.stdout
    assert any(line.split()[:2] == ["tuned", "3"] for line in out.stdout.splitlines())


@pytest.mark.parametrize("fmt", ["csv", "markdown", "latex"])
def test_other_formats(trec, fmt):
    d = trec
    out = run("compare", d / "qrels.txt", d / "bm25.txt", d / "hybrid.txt", "--metrics", "map", "--format", fmt)
    assert out.returncode == 0, out.stderr
    if fmt == "csv":
        rows = list(csv.reader(io.StringIO(out.stdout)))
        assert rows[0][:4] == ["kind", "a", "b", "metric"] and {r[0] for r in rows[1:]} == {"system", "pair"}
    elif fmt == "latex":
        assert out.stdout.startswith(r"\begin{tabular}") and r"hybrid & \textbf{" in out.stdout
        assert r"$^{\dagger}$" in out.stdout  # hybrid is far better than bm25 on 40 queries
    else:
        assert out.stdout.startswith("| system |")


def test_no_ci_drops_the_intervals(trec):
    d = trec
    out = run("compare", d / "qrels.txt", d / "bm25.txt", d / "hybrid.txt", "--metrics", "map", "--no-ci")
    assert out.returncode == 0 and "interval" not in out.stdout.splitlines()[0]


def test_embeddings_with_labels_take_the_n_system_form(tmp_path):
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(20), 5)
    centres = rng.normal(size=(20, 8))
    for name, noise in (("a", 0.5), ("b", 1.0), ("c", 2.0)):
        np.save(tmp_path / f"{name}.npy", (centres[labels] + rng.normal(0, noise, (100, 8))).astype(np.float32))
    np.save(tmp_path / "labels.npy", labels)
    out = run("compare", *(tmp_path / f"{n}.npy" for n in "abc"), tmp_path / "labels.npy", "--format", "json")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert payload["systems"] == ["a", "b", "c"] and payload["metrics"] == ["precision@1", "r_precision", "map@r"]


@pytest.mark.parametrize(
    ("files", "messages"),
    [
        (
            ["bm25.txt", "qrels.txt", "dense.txt"],
            ["the first is no qrels: give the qrels first (QRELS RUN1 RUN2)", "qrels.txt is"],
        ),
        (["qrels.txt", "bm25.txt", "vectors.npy"], ["vectors.npy is not a TREC run"]),
        (["qrels.txt", "bm25.txt"], ["give at least two systems and their judgements (QRELS RUN1 RUN2"]),
        (
            ["bm25.txt", "vectors.npy", "labels.txt"],
            ["bm25.txt is a TREC run (qid Q0 docid rank score tag), but the"],
        ),
        (
            ["qrels.txt", "bm25.txt", "--system", "x"],
            ["--system must be NAME=FILE[,FILE...]", "give at least two systems"],
        ),
        (["qrels.txt", "bm25.txt", "nope.txt", "--resamples", "0"], ["nope: no such file", "--resamples must be >= 1"]),
        (["qrels.txt", "bm25.txt", "dense.txt", "--baseline", "x"], ["--baseline must name a system (bm25, dense)"]),
        (["qrels.txt", "bm25.txt", "dense.txt", "--metrics", "foo"], ["unknown metric 'foo' for rankings"]),
    ],
)
def test_wrong_kinds_and_bad_options_are_one_line_each(trec, files, messages):
    d = trec
    np.save(d / "vectors.npy", np.zeros((3, 2), dtype=np.float32))
    (d / "labels.txt").write_text("1\n2\n3\n")
    out = run("compare", *files, cwd=d)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == len(messages)
    for line, message in zip(lines, messages, strict=True):
        assert line.startswith("embedeval compare: error: ") and message in line


@pytest.mark.parametrize("suffix", [".md", ".html"])
def test_report_holds_both_tables_the_method_and_the_inputs(trec, tmp_path, suffix):
    d = trec
    report = tmp_path / f"r{suffix}"
    out = run("compare", d / "qrels.txt", d / "bm25.txt", d / "hybrid.txt", "--metrics", "map", "--report", report)
    assert out.returncode == 0, out.stderr
    text = report.read_text()
    for part in ("map [95% interval]", "pair (B - A)", "hybrid - bm25", "Method", "randomization test", "bm25.txt"):
        assert part in text


def test_evaluate_type_commands_print_intervals_by_default_and_no_ci_drops_them(trec):
    d = trec
    base = ["rankings", d / "qrels.txt", d / "hybrid.txt", "--metrics", "map"]
    default, dropped = run(*base), run(*base, "--no-ci")
    assert default.returncode == dropped.returncode == 0
    assert default.stdout.split()[:4] == ["metric", "value", "[95%", "interval]"]
    assert "intervals: 95% percentile bootstrap over queries (2000 resamples, seed 0)" in default.stdout
    assert dropped.stdout.split()[:2] == ["metric", "value"] and "interval" not in dropped.stdout
    assert "interval" not in run(*base, "--format", "trec").stdout  # trec_eval's lines have none
    assert json.loads(run(*base, "--format", "json").stdout)["ci"]["level"] == 0.95


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("q1 Q0 d1 1 0.5 tag", "run"),
        ("1 0 23 1 0.5 run", "run"),  # numeric ids
        ("0.1 0.2 0.3 4 0.5 0.6", "other"),  # six embedding columns, one of them integer-valued
        ("q1 0 d1 1", "qrels"),
        ("1 0 5 2", "qrels"),
        ("0.1 0 0.3 0.4", "other"),
        ("cat", "other"),
        ("query-id corpus-id score", "qrels"),
    ],
)
def test_a_line_is_told_apart_by_its_fields(line, kind):
    from embedeval.cli._compare import _line_kind

    assert _line_kind(line.split()) == kind


def test_runs_that_rank_no_judged_query_are_refused_as_rankings_refuses_them(trec, tmp_path):
    """compare printed a table of zeros and exited 0 (notes on stderr only)."""
    for name in ("x", "y"):
        (tmp_path / f"{name}.txt").write_text(f"other Q0 d1 1 2 {name}\nother Q0 d2 2 1 {name}\n")
    out = run("compare", trec / "qrels.txt", tmp_path / "x.txt", tmp_path / "y.txt", "--metrics", "map")
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.splitlines()
    assert len(lines) == 2 and all("no query of the run appears in the qrels" in line for line in lines)
    assert "x.txt" in lines[0] and "y.txt" in lines[1] and "Traceback" not in out.stderr


def test_the_same_file_twice_is_refused_before_any_work(trec):
    """A run compared with itself gave every difference 0 and no word."""
    out = run("compare", trec / "qrels.txt", trec / "bm25.txt", trec / "dense.txt", trec / "bm25.txt")
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.splitlines() == [
        f"embedeval compare: error: {trec / 'bm25.txt'} is given twice (bm25 and bm25_2): a file compared with "
        "itself differs by 0 everywhere; give each system its own file"
    ]


def test_runs_take_their_qrels_first_and_the_old_order_works_with_a_warning(trec):
    """compare took RUN1 RUN2 QRELS, rankings RUN QRELS and trec_eval QRELS RUN: now every command
    that takes judgements and runs takes the judgements first."""
    d = trec
    common = ["--metrics", "map", "--no-ci", "--resamples", "200", "--format", "json"]
    new = run("compare", d / "qrels.txt", d / "bm25.txt", d / "dense.txt", *common)
    old = run("compare", d / "bm25.txt", d / "dense.txt", d / "qrels.txt", *common)
    assert new.returncode == old.returncode == 0 and new.stdout == old.stdout and new.stderr == ""
    assert old.stderr.splitlines() == [
        "embedeval compare: warning: the qrels last (RUN ... QRELS) is deprecated and goes in 0.2; give QRELS RUN1 "
        "RUN2 ..., judgements first as trec_eval"
    ]
