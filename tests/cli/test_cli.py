"""The installed `embedeval` command, end to end, on files written by the test."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest
from runner import CLI, cli_env
from runner import run_cli as run

import embedeval

try:
    import torch
except ImportError:
    torch = None
HAS_GPU = torch is not None and torch.cuda.is_available()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cli")
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 12, 600)
    centres = rng.standard_normal((12, 16))
    x = (centres[labels] + 0.9 * rng.standard_normal((600, 16))).astype(np.float32)
    np.save(d / "emb.npy", x)
    np.save(d / "worse.npy", (x + rng.standard_normal(x.shape)).astype(np.float32))
    np.savetxt(d / "emb.csv", x, delimiter=",")
    np.savez(d / "emb.npz", val=x, other=x[:10])
    (d / "labels.txt").write_text("\n".join(f"class-{v}" for v in labels) + "\n")
    np.save(d / "labels.npy", labels)
    return d, x, labels


def test_json_output_matches_the_python_api(files):
    d, x, labels = files
    out = run(
        "evaluate", d / "emb.npy", d / "labels.npy", "--metrics", "precision@1", "map@r", "mrr", "--format", "json"
    )
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    expected = embedeval.evaluate(x, labels, metrics=["precision@1", "map@r", "mrr"])
    assert payload["summary"] == expected.summary
    assert payload["macro"] == pytest.approx(expected.per_class.macro, rel=1e-12)
    assert payload["n_evaluated"] == 600 and "lower first" in payload["conventions"]["ties"]


def test_text_csv_and_npz_inputs_with_string_labels(files):
    d, x, labels = files
    expected = embedeval.evaluate(x, labels, metrics=["map@r"]).summary["map@r"]
    for emb in (["emb.csv"], ["emb.npz", "--key", "val"]):
        out = run("evaluate", d / emb[0], d / "labels.txt", *emb[1:], "--metrics", "map@r", "--format", "csv")
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines()[1].startswith("map@r,")
        assert float(out.stdout.splitlines()[1].split(",")[1]) == pytest.approx(expected, abs=1e-6)


def test_memory_mapped_input_in_many_blocks_gives_in_memory_numbers(files):
    d, x, labels = files
    out = run(
        "evaluate",
        d / "emb.npy",
        d / "labels.npy",
        "--block-size",
        "7",
        "--format",
        "json",
        "--metrics",
        "precision@1",
        "recall@5",
        "r_precision",
        "map@r",
    )
    in_memory = embedeval.evaluate(x, labels, metrics=["precision@1", "recall@5", "r_precision", "map@r"])
    assert json.loads(out.stdout)["summary"] == in_memory.summary


def test_table_with_intervals_and_written_files(files, tmp_path):
    d, _, _ = files
    out = run(
        "evaluate",
        d / "emb.npy",
        d / "labels.txt",
        "--ci",
        "0.9",
        "--per-class",
        tmp_path / "pc.csv",
        "--plot",
        tmp_path / "e.png",
        "--report",
        tmp_path / "r.html",
    )
    assert out.returncode == 0, out.stderr
    assert "value [90% interval]" in out.stdout and "intervals: 90% percentile bootstrap over queries" in out.stdout
    assert any(line.startswith("map@r") and "[" in line for line in out.stdout.splitlines())
    assert (tmp_path / "pc.csv").read_text().startswith("label,count,precision@1")
    assert (tmp_path / "e.png").read_bytes()[:4] == b"\x89PNG"
    html = (tmp_path / "r.html").read_text()
    assert "data:image/png;base64" in html and "tie_rule" in html and "faiss" in html
    assert "\r" not in out.stderr  # no progress bar when stderr is not a terminal


def test_reports_say_when_how_and_at_what_level_and_fit_the_figure_to_the_page(files, tmp_path):
    d, _, _ = files
    for name in ("r.html", "r.md"):
        out = run("evaluate", d / "emb.npy", d / "labels.txt", "--ci", "0.9", "--report", tmp_path / name)
        assert out.returncode == 0, out.stderr
    html, md = (tmp_path / "r.html").read_text(), (tmp_path / "r.md").read_text()
    command = f"embedeval evaluate {d / 'emb.npy'} {d / 'labels.txt'} --ci 0.9 --report"
    assert re.search(r"<p class='meta'>Created: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d[+-]\d\d:\d\d</p>", html)
    assert f"Command: <code>{command} {tmp_path / 'r.html'}</code>" in html
    assert f"Command: `{command} {tmp_path / 'r.md'}`" in md and "\nCreated: " in md
    for text in (html, md):
        assert "value [90% interval]" in text
        assert "intervals</b>: 90% percentile bootstrap" in text or "**intervals**: 90% percentile bootstrap" in text
    assert "img{max-width:100%;height:auto}" in html  # drawn 1200 px wide, shown at the column's width


def test_compare_finds_the_worse_model(files):
    d, _, _ = files
    out = run("compare", d / "emb.npy", d / "worse.npy", d / "labels.npy", "--resamples", "999", "--format", "json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert {r["metric"] for r in rows} == {"precision@1", "r_precision", "map@r"}
    assert all(r["difference"] < 0 and r["high"] < 0 and r["p_holm"] < 0.01 for r in rows)


@pytest.mark.parametrize("extra", [[], ["--plot", "e.png"]], ids=["plain", "with-figure-metrics"])
def test_metrics_come_out_under_their_canonical_names(files, tmp_path, extra):
    """`recall@010` is evaluated as recall@10 and shown as recall@10, not dropped from the output."""
    d, x, labels = files
    args = ["evaluate", d / "emb.npy", d / "labels.npy", "--metrics", "recall@010", "MAP@R", "--format", "json"]
    out = run(*args, *extra, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    expected = embedeval.evaluate(x, labels, metrics=["recall@10", "map@r"])
    payload = json.loads(out.stdout)
    assert list(payload["summary"]) == ["recall@10", "map@r"]  # and none of the figure's extra metrics
    assert payload["summary"] == expected.summary


def test_a_lone_metric_with_a_non_canonical_name_is_not_an_empty_table(files):
    d, x, labels = files
    out = run("evaluate", d / "emb.npy", d / "labels.npy", "--metrics", "recall@010")
    assert out.returncode == 0, out.stderr
    value = embedeval.evaluate(x, labels, metrics=["recall@10"]).summary["recall@10"]
    assert out.stdout.splitlines()[2].startswith(f"recall@10  {value:.4f} [")  # with its interval, by default


def test_rankings_and_scores_commands(tmp_path):
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 c 1 1 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 b 1\nq2 0 c 2\n")
    out = run(
        "rankings", tmp_path / "qrels.txt", tmp_path / "run.txt", "--metrics", "mrr", "ndcg@2", "--format", "json"
    )
    assert json.loads(out.stdout)["summary"]["mrr"] == 0.75
    np.save(tmp_path / "s.npy", np.array([[0.9, 0.1, 0.5]]))
    np.save(tmp_path / "g.npy", np.array([[0, 1, 1]]))
    out = run("scores", tmp_path / "s.npy", tmp_path / "g.npy", "--metrics", "precision@2", "--format", "json")
    assert json.loads(out.stdout)["summary"]["precision@2"] == 0.5


ERRORS = [
    (["evaluate", "missing.npy", "labels.npy"], ["EMBEDDINGS: no such file: missing.npy"]),
    (["evaluate", "flat.npy", "labels.npy"], ["'embeddings' must be a 2-D array"]),
    (
        ["evaluate", "nan.npy", "labels.npy"],
        ["'embeddings' must be finite; got NaN or inf in 1 row(s), first at row 4"],
    ),
    (
        ["evaluate", "emb.npy", "short.txt"],
        ["LABELS (short.txt) must hold one label per row of EMBEDDINGS (emb.npy) (600); got 5"],
    ),
    (["evaluate", "zero.npy", "labels.npy"], ["embeddings file zero.npy is empty (0 bytes)"]),
    (["evaluate", "none.npy", "labels.npy"], ["embeddings file none.npy holds no values (an array of shape (0,))"]),
    (["evaluate", "object.npy", "labels.npy"], ["embeddings file object.npy cannot be read: it holds Python objects"]),
    (
        ["evaluate", "cut.npy", "labels.npy"],
        ["embeddings file cut.npy cannot be read: mmap length is greater than file size (the file is shorter"],
    ),
    (
        ["evaluate", "ragged.csv", "labels.npy"],
        ["embeddings file ragged.csv cannot be read: the number of columns changed from 3 to 2 at row 2 (every"],
    ),
    (
        ["evaluate", "header.csv", "labels.npy"],
        ["header.csv cannot be read: could not convert string 'a' to float64 at row 0, column 1 (a header row? remove"],
    ),
    (
        ["evaluate", "emb.npy", "labels.npz"],
        ["labels file labels.npz holds arrays ['a', 'b']; choose one with --label-key"],
    ),
    (["evaluate", "emb.npy", "gap.txt"], ["labels file gap.txt has 1 blank line(s) between labels, first at line 3"]),
    (
        ["compare", "emb.npy", "short.npy", "labels.npy"],
        ["A (emb.npy) and B (short.npy) must embed the same items; got 600 and 5 rows"],
    ),
    (
        ["evaluate", "emb.npy", "unique.npy", "--plot", "p.png"],
        ["warning: no query was evaluated", "--plot: no figure to draw, no query was evaluated"],
    ),
    (["evaluate", "emb.npy", "labels.npy", "--metrics", "ndcg@10"], ["unknown metric 'ndcg@10' for embeddings"]),
    (
        ["evaluate", "nope.npy", "nope.txt", "--metrics", "map@r", "precision@0"],
        ["EMBEDDINGS: no such file", "LABELS: no such file", "'k' in metric 'precision@0' must be an int >= 1"],
    ),
    (
        ["evaluate", "emb.npy", "labels.npy", "--metrics", "recall@100000000000000000000", "precision@²"],
        [
            "--metrics: 'k' in metric 'recall@100000000000000000000' must be at most 1_000_000_000 (10^9)",
            "--metrics: 'k' in metric 'precision@²' must be an int >= 1; got '²'",
        ],
    ),
    (["evaluate", "emb.npz", "labels.npy"], ["holds arrays ['val', 'other']; choose one with --key"]),
    (["evaluate", "emb.npy", "labels.npy", "--report", "r.pdf"], ["--report must end in .md or .html"]),
    (
        ["rankings", "qrels.txt", "run.txt", "--metrics", "bar", "--report", "r.pdf"],
        ["unknown metric 'bar' for rankings", "--report must end in .md or .html; got r.pdf"],
    ),
    (
        ["compare", "emb.npy", "emb.npy", "labels.npy", "--metrics", "foo", "--resamples", "0"],
        ["unknown metric 'foo' for embeddings", "--resamples must be >= 1; got 0", "emb.npy is given twice"],
    ),
    (
        ["evaluate", "emb.npy", "labels.npy", "--block-size", "0", "--threads", "0"],
        ["--block-size must be >= 1; got 0", "--threads must be >= 1; got 0"],
    ),
]
if not HAS_GPU:  # where there is none, asking for one is an error like any other
    ERRORS.append(
        (
            ["evaluate", "emb.npy", "labels.npy", "--device", "gpu"],
            ["needs a visible CUDA GPU" if torch else "through torch, which is not installed: pip install torch"],
        )
    )


@pytest.mark.parametrize(("args", "messages"), ERRORS)
def test_errors_are_one_line_each_exit_2_no_traceback(files, args, messages):
    d, x, _ = files
    np.save(d / "flat.npy", np.zeros(10, dtype=np.float32))
    bad = x.copy()
    bad[4, 2] = np.nan
    np.save(d / "nan.npy", bad)
    (d / "short.txt").write_text("1\n2\n3\n4\n5\n")
    np.save(d / "short.npy", x[:5])
    (d / "zero.npy").write_bytes(b"")
    np.save(d / "none.npy", np.zeros(0, dtype=np.float32))
    np.save(d / "object.npy", np.array([[1.0, "a"]], dtype=object), allow_pickle=True)
    np.save(d / "cut.npy", x)
    (d / "cut.npy").write_bytes((d / "cut.npy").read_bytes()[:5000])  # a copy cut short
    (d / "ragged.csv").write_text("1,2,3\n4,5\n")
    (d / "header.csv").write_text("a,b\n1,2\n")
    np.savez(d / "labels.npz", a=np.arange(600), b=np.arange(600))
    (d / "gap.txt").write_text("1\n2\n\n3\n")
    np.save(d / "unique.npy", np.arange(600))
    (d / "run.txt").write_text("q1 Q0 a 1 3 t\n")
    (d / "qrels.txt").write_text("q1 0 a 1\n")
    out = run(*args, cwd=d)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line]
    assert len(lines) == len(messages)
    for line, message in zip(lines, messages, strict=True):
        assert line.startswith(f"embedeval {args[0]}: ") and message in line


def _slow_evaluation_files(d):
    """An evaluation that runs for many seconds on a laptop (60,000 queries ranked ~1,000 deep)."""
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 60, 60_000)
    x = rng.standard_normal((60, 64))[labels] + 0.9 * rng.standard_normal((60_000, 64))
    np.save(d / "slow.npy", x.astype(np.float32))
    np.save(d / "slow_labels.npy", labels)
    return d / "slow.npy", d / "slow_labels.npy"


@pytest.mark.skipif(not hasattr(signal, "SIGINT") or sys.platform == "win32", reason="POSIX signals and ptys")
@pytest.mark.parametrize("threads", ["1", "2"])
def test_ctrl_c_during_an_evaluation_prints_one_line_and_exits_130(tmp_path, threads):
    """Ctrl-C arrives once the progress bar shows (2 s into the evaluation, blocks in flight)."""
    import pty
    import select

    emb, labels = _slow_evaluation_files(tmp_path)
    controller, terminal = pty.openpty()  # stderr on a terminal, so the progress bar is drawn
    process = subprocess.Popen(
        [*CLI, "evaluate", emb, labels, "--threads", threads],
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=terminal,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    os.close(terminal)
    seen = b""
    while b"queries" not in seen and process.poll() is None:
        if select.select([controller], [], [], 0.2)[0]:
            seen += os.read(controller, 4096)
    if process.poll() is not None:
        pytest.skip("the evaluation ended before the progress bar showed (a very fast machine)")
    process.send_signal(signal.SIGINT)
    out, _ = process.communicate(timeout=60)
    while select.select([controller], [], [], 0.2)[0]:
        try:
            chunk = os.read(controller, 4096)
        except OSError:  # the other end closed
            break
        if not chunk:
            break
        seen += chunk
    os.close(controller)
    assert process.returncode == 130 and out == b""
    lines = [line for line in seen.decode().replace("\r", "\n").splitlines() if line.strip()]
    assert lines[-1] == "embedeval evaluate: interrupted"
    assert "Traceback" not in seen.decode() and "KeyboardInterrupt" not in seen.decode()


def test_a_closed_pipe_ends_quietly_with_the_status_of_unix_tools(files):
    """`embedeval ... | head` with head gone: no message, status 141 (128 + SIGPIPE), as `yes | head` gives."""
    d, _, _ = files
    process = subprocess.Popen(
        [*CLI, "evaluate", d / "emb.npy", d / "labels.npy", "--format", "csv"],
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    process.stdout.close()  # the reader is gone before anything is written
    err = process.stderr.read()
    assert process.wait() == 141 and err == b""


def test_warnings_are_one_line_without_source_lines(files, tmp_path):
    d, x, _ = files
    np.save(tmp_path / "unique.npy", np.arange(len(x)))  # every label alone: nothing to evaluate
    out = run("evaluate", d / "emb.npy", tmp_path / "unique.npy", "--metrics", "map@r")
    assert out.returncode == 0
    assert out.stderr.splitlines() == [
        "embedeval evaluate: warning: no query was evaluated: every query's label has no other member in the "
        "reference set (R = 0), so every summary value is NaN"
    ]


@pytest.mark.parametrize("command", ["evaluate", "compare", "rankings", "scores", "reality-check"])
def test_an_unknown_flag_is_one_line_of_its_command_without_usage(files, command):
    d, _, _ = files
    positional = {"evaluate": 2, "compare": 3, "rankings": 2, "scores": 2, "reality-check": 0}[command]
    out = run(command, *[d / "emb.npy"] * positional, "--bogus", "1")
    assert out.returncode == 2 and "Traceback" not in out.stderr and "usage:" not in out.stderr
    assert out.stderr.splitlines() == [f"embedeval {command}: error: unrecognized arguments: --bogus 1"]


@pytest.mark.parametrize("command", ["evaluate", "compare", "rankings", "scores", "reality-check"])
def test_help_shows_the_commands_own_examples_and_the_metric_names(command):
    out = run(command, "--help")
    assert out.returncode == 0
    examples = out.stdout.split("examples:\n")[1].splitlines()
    assert examples and all(line.startswith(f"  embedeval {command} ") for line in examples)
    if command != "reality-check":
        text = " ".join(out.stdout.split())
        assert "--metrics NAME [NAME ...] metrics to compute (default: " in text
        assert "valid: precision@k, recall@k, " in text and "with k an int from 1 to 10^9" in text


def test_every_format_shows_the_macro_average_and_the_interval_level(files):
    d, x, labels = files
    expected = embedeval.evaluate(x, labels, metrics=["precision@1", "map@r"])
    base = ["evaluate", d / "emb.npy", d / "labels.npy", "--metrics", "precision@1", "map@r", "--ci", "0.975"]
    table = run(*base).stdout
    assert table.split()[:5] == ["metric", "value", "[97.5%", "interval]", "macro"]
    assert "\ndefinitions:\n" in table  # a legend below the table, not a column
    assert "intervals: 97.5% percentile bootstrap over queries (2000 resamples, seed 0)" in table
    markdown = run(*base, "--format", "markdown").stdout.splitlines()
    assert markdown[0] == "| metric | value [97.5% interval] | macro | definition |"
    assert markdown[3].startswith(f"| map@r | {expected.summary['map@r']:.4f} [")
    assert f"| {expected.per_class.macro['map@r']:.4f} |" in markdown[3]
    rows = list(csv.reader(io.StringIO(run(*base, "--format", "csv").stdout)))
    assert rows[0] == ["metric", "value", "macro", "low", "high", "level"]
    assert rows[2][:3] == ["map@r", repr(expected.summary["map@r"]), repr(expected.per_class.macro["map@r"])]
    assert rows[2][5] == "0.975"
    payload = json.loads(run(*base, "--format", "json").stdout)
    assert payload["ci"]["level"] == 0.975 and payload["macro"] == pytest.approx(expected.per_class.macro)


def test_per_class_csv_keeps_a_label_with_a_comma_in_one_cell(files, tmp_path):
    d, _, labels = files
    names = np.array(["a,b", 'say "hi"', "plain"])[labels % 3]
    (tmp_path / "labels.txt").write_text("\n".join(names) + "\n")
    out = run("evaluate", d / "emb.npy", tmp_path / "labels.txt", "--per-class", tmp_path / "pc.csv")
    assert out.returncode == 0, out.stderr
    rows = list(csv.reader((tmp_path / "pc.csv").open()))
    assert rows[0][:2] == ["label", "count"] and {len(r) for r in rows} == {len(rows[0])}
    assert sorted(r[0] for r in rows[1:]) == ["a,b", "plain", 'say "hi"']


def test_compare_names_p_values_alike_in_json_and_csv_and_shows_them_one_way(files):
    d, _, _ = files
    base = ["compare", d / "emb.npy", d / "worse.npy", d / "labels.npy"]  # 10,000 sign flips
    row = json.loads(run(*base, "--format", "json").stdout)[0]
    head = run(*base, "--format", "csv").stdout.splitlines()[0].split(",")
    assert head == list(row) and {"p_value", "p_holm", "level"} <= set(head)
    assert row["p_value"] == 1 / 10_001 and row["level"] == 0.95
    table = run(*base).stdout.splitlines()
    assert table[0].split()[-4:] == ["interval]", "p", "p", "(Holm)"]
    # p = 1 / 10,001 (shown as 9.999e-05 before, next to 0.0003): below 0.0001; Holm over 3 metrics: 0.0003
    assert all(line.split()[-2:] == ["<0.0001", "0.0003"] for line in table[1:4])


def test_reality_check_takes_format_and_keeps_markdown_as_a_deprecated_alias(tmp_path):
    payload = json.loads(run("reality-check", "--n", "200", "--out-dir", tmp_path, "--format", "json").stdout)
    assert [e["example"] for e in payload] == [1, 2, 3] and set(payload[0]["summary"]) >= {"precision@1", "map@r"}
    new = run("reality-check", "--n", "200", "--out-dir", tmp_path, "--format", "markdown")
    old = run("reality-check", "--n", "200", "--out-dir", tmp_path, "--markdown")
    assert old.stdout == new.stdout and new.stdout.startswith("| example | precision@1 |")
    assert "--markdown is deprecated; use --format markdown" in old.stderr
    clash = run("reality-check", "--n", "200", "--out-dir", tmp_path, "--markdown", "--format", "csv")
    assert clash.returncode == 2 and "conflicts with --format csv" in clash.stderr
