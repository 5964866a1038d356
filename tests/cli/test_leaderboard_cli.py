"""``embedeval leaderboard``: each source of scores (a table, per-query values, TREC runs with a
qrels per dataset, an MTEB folder), every format, the diagram, and problems said one line each."""

from __future__ import annotations

import json

import numpy as np
import pytest
from runner import run_cli as run

from embedeval.stats import compare_across

SYSTEMS = ("bm25", "dense", "hybrid")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("leaderboard")
    rng = np.random.default_rng(0)
    scores = rng.uniform(0.2, 0.8, size=(6, 3)) + np.array([0.0, 0.05, 0.1])
    lines = ["dataset," + ",".join(SYSTEMS)] + [
        f"set{i}," + ",".join(f"{v:.4f}" for v in row) for i, row in enumerate(scores)
    ]
    (d / "scores.csv").write_text("\n".join(lines) + "\n")
    rows = ["dataset,system,query,value"]
    for t in range(5):
        for s, name in enumerate(SYSTEMS):
            rows += [f"set{t},{name},q{q},{v:.4f}" for q, v in enumerate(rng.uniform(0, 1, 20) * 0.8 + 0.1 * s)]
    (d / "per_query.csv").write_text("\n".join(rows) + "\n")
    for t in range(3):  # TREC: a qrels and a run per system per dataset
        folder = d / f"trec{t}"
        folder.mkdir()
        with (folder / "qrels.txt").open("w") as f:
            for q in range(12):
                f.write("".join(f"q{q} 0 d{doc} {int(doc < 3)}\n" for doc in range(10)))
        for s, name in enumerate(SYSTEMS):
            with (folder / f"{name}.txt").open("w") as f:
                for q in range(12):
                    score = -np.arange(10) / 3 + rng.normal(0, 3.0 - s, 10)
                    for rank, doc in enumerate(np.argsort(-score)):
                        f.write(f"q{q} Q0 d{doc} {rank + 1} {score[doc]:.5f} {name}\n")
    return d, scores


def test_scores_table_prints_the_leaderboard_and_the_tests(files):
    d, scores = files
    out = run("leaderboard", "--scores", d / "scores.csv", "--bootstrap", 200)
    assert out.returncode == 0, out.stderr
    want = compare_across(np.round(scores, 4), systems=SYSTEMS, n_bootstrap=200)
    assert f"chi2 = {want.friedman['statistic']:.3f}" in out.stdout
    assert f"tied for first: {', '.join(want.tied_for_first)}" in out.stdout
    assert "mean rank [95% interval]" in out.stdout


@pytest.mark.parametrize("fmt", ["markdown", "html", "latex", "csv", "json"])
def test_every_format(files, fmt):
    d, _ = files
    out = run("leaderboard", "--scores", d / "scores.csv", "--bootstrap", 100, "--format", fmt)
    assert out.returncode == 0, out.stderr
    if fmt == "json":
        assert json.loads(out.stdout)["systems"] == list(SYSTEMS)
    else:
        assert all(s in out.stdout for s in SYSTEMS)


def test_per_query_values_give_intervals_and_dataset_counts(files):
    d, _ = files
    out = run(
        "leaderboard",
        "--per-query-values",
        d / "per_query.csv",
        "--bootstrap",
        100,
        "--resamples",
        200,
        "--format",
        "json",
    )
    assert out.returncode == 0, out.stderr
    c = json.loads(out.stdout)
    assert c["n_queries"] == {f"set{t}": 20 for t in range(5)}
    pair = c["pairs"][0]
    assert pair["datasets_b_above"] + pair["datasets_b_below"] + pair["datasets_neither"] == 5


def test_trec_runs_with_a_qrels_per_dataset(files):
    d, _ = files
    args = []
    for t in range(3):
        f = d / f"trec{t}"
        args += ["--trec", f"t{t}", f / "qrels.txt", *(f / f"{s}.txt" for s in SYSTEMS)]
    out = run("leaderboard", *args, "--metrics", "map", "--bootstrap", 100, "--resamples", 200, "--format", "json")
    assert out.returncode == 0, out.stderr
    c = json.loads(out.stdout)
    assert c["metric"] == "map" and c["datasets"] == ["t0", "t1", "t2"] and c["systems"] == list(SYSTEMS)


def test_mteb_folder(tmp_path):
    for model, value in (("org__a", 0.5), ("org__b", 0.6)):
        folder = tmp_path / model / "rev"
        folder.mkdir(parents=True)
        for task, shift in (("T1", 0.0), ("T2", 0.1), ("T3", -0.1)):
            entry = {"main_score": value + shift, "hf_subset": "default", "languages": ["eng-Latn"]}
            (folder / f"{task}.json").write_text(json.dumps({"task_name": task, "scores": {"test": [entry]}}))
    out = run("leaderboard", "--mteb", tmp_path, "--no-ci", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["best"] == "org/b"


@pytest.mark.parametrize("suffix", [".png", ".svg", ".pdf"])
def test_plot_writes_the_diagram(files, tmp_path, suffix):
    d, _ = files
    path = tmp_path / f"cd{suffix}"
    out = run("leaderboard", "--scores", d / "scores.csv", "--no-ci", "--plot", path)
    assert out.returncode == 0, out.stderr
    assert path.stat().st_size > 1000 and f"wrote {path}" in out.stderr


def test_problems_are_said_at_once_one_line_each_without_traceback(tmp_path):
    out = run(
        "leaderboard",
        "--scores",
        tmp_path / "none.csv",
        "--mteb",
        tmp_path / "nowhere",
        "--alpha",
        "1.5",
        "--plot",
        "cd.gif",
        "--bootstrap",
        "0",
        "--metrics",
        "map",
        "--rope",
        "-1",
    )
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert "Traceback" not in out.stderr
    for part in (
        "one source of scores",
        "--scores: no such file",
        "--mteb: no such folder",
        "--alpha must be in",
        "--plot must end in",
        "--bootstrap must be >= 1",
        "--metrics goes with --trec",
        "--rope must be",
    ):
        assert sum(part in line for line in lines) == 1, (part, lines)
    assert all(line.startswith("embedeval leaderboard: error: ") for line in lines)


def test_an_unknown_control_and_a_short_trec_say_so(files):
    d, _ = files
    out = run("leaderboard", "--scores", d / "scores.csv", "--baseline", "nobody")
    assert out.returncode == 2 and "--baseline must name one of the systems" in out.stderr
    out = run("leaderboard", "--trec", "x", d / "trec0" / "qrels.txt")
    assert out.returncode == 2 and "--trec needs NAME QRELS RUN [RUN ...]" in out.stderr


def test_trec_empty_zero_gives_trec_evals_map_and_the_default_says_what_it_left_out(tmp_path):
    """A query without a relevant document was dropped without a word, so a dataset's map was not
    trec_eval's (0.5000 against 0.3333 here)."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    runs = {
        "x": {"q1": {"a": 3.0, "y": 2.0}, "q2": {"y": 3.0, "b": 2.0}, "q3": {"c": 1.0}},
        "z": {"q1": {"y": 3.0, "a": 2.0}, "q2": {"y": 3.0, "z": 2.0, "b": 1.0}, "q3": {"c": 1.0}},
    }
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items()))
    for name, run_ in runs.items():
        lines = [f"{q} Q0 {d} 1 {s} {name}\n" for q, docs in run_.items() for d, s in docs.items()]
        (tmp_path / f"{name}.txt").write_text("".join(lines))
    args = ["leaderboard", "--metrics", "map", "--no-ci", "--format", "json"]
    for t in ("d1", "d2"):
        args += ["--trec", t, tmp_path / "qrels", tmp_path / "x.txt", tmp_path / "z.txt"]
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"map"})
    expected = {s: np.mean([v["map"] for v in evaluator.evaluate(r).values()]) for s, r in runs.items()}

    zero = run(*args, "--empty", "zero")
    assert zero.returncode == 0, zero.stderr
    scores = json.loads(zero.stdout)["scores"]["d1"]
    assert scores == pytest.approx(expected, abs=1e-12) and zero.stderr == ""

    skip = run(*args)
    assert skip.returncode == 0, skip.stderr
    assert json.loads(skip.stdout)["n_queries"] == {"d1": 2, "d2": 2}
    assert skip.stderr.splitlines() == [
        f"embedeval leaderboard: note: --trec {t}: 1 of 3 judged queries has no relevant document, left out of the "
        "mean; --empty zero scores them 0, as trec_eval does"
        for t in ("d1", "d2")
    ]
    assert "--empty goes with --trec" in run("leaderboard", "--scores", tmp_path / "x.txt", "--empty", "zero").stderr


def test_the_old_spellings_work_for_one_release_with_a_warning(files):
    """--metric, --control and --per-query FILE became --metrics, --baseline and --per-query-values
    (one name for one thing across the commands)."""
    d, _ = files
    f = d / "trec0"
    trec = ["--trec", "t0", f / "qrels.txt", *(f / f"{s}.txt" for s in SYSTEMS)]
    trec += ["--trec", "t1", f / "qrels.txt", *(f / f"{s}.txt" for s in reversed(SYSTEMS))]
    common = ["--no-ci", "--resamples", 200, "--format", "json"]
    old = run("leaderboard", *trec, "--metric", "map", "--control", "dense", *common)
    new = run("leaderboard", *trec, "--metrics", "map", "--baseline", "dense", *common)
    assert old.returncode == new.returncode == 0, old.stderr
    assert old.stdout == new.stdout and new.stderr == ""
    assert old.stderr.splitlines() == [
        "embedeval leaderboard: warning: --metric is deprecated and goes in 0.2; use --metrics",
        "embedeval leaderboard: warning: --control is deprecated and goes in 0.2; use --baseline",
    ]
    old = run("leaderboard", "--per-query", d / "per_query.csv", *common)
    assert old.returncode == 0 and "--per-query is deprecated and goes in 0.2; use --per-query-values" in old.stderr


def test_json_scores_with_a_dataset_twice_or_a_string_score_are_refused_in_one_line(tmp_path):
    twice = tmp_path / "twice.json"
    twice.write_text('{"x": {"a": 0.1, "b": 0.2}, "x": {"a": 0.3, "b": 0.4}, "y": {"a": 0.1, "b": 0.2}}')
    text = tmp_path / "text.json"
    text.write_text('{"x": {"a": "0.5", "b": 0.2}, "y": {"a": 0.1, "b": 0.2}}')
    for path, message in ((twice, "dataset 'x' appears twice"), (text, "got the string '0.5'")):
        out = run("leaderboard", "--scores", path)
        assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
        (line,) = out.stderr.strip().splitlines()
        assert line.startswith("embedeval leaderboard: error: ") and message in line
