"""Messages of issue 40, item 9: a bad --ci says what a level is, a missing command lists the
commands, and problems with the arguments come before (and instead of) warnings about the work."""

from __future__ import annotations

import numpy as np
import pytest
from runner import run_cli

from embedeval.cli import main

CI_COMMANDS = {
    "evaluate": ["e.npy", "labels.txt"],
    "retrieval": ["q.npy", "c.npy", "qrels.txt"],
    "rankings": ["qrels.txt", "run.txt"],
    "scores": ["s.npy", "r.npy"],
    "compare": ["e.npy", "e.npy", "labels.txt"],
}


@pytest.mark.parametrize("command", sorted(CI_COMMANDS))
@pytest.mark.parametrize("value", ["abc", "", "95"])
def test_a_bad_ci_says_what_a_level_is(command, value, capsys):
    assert main([command, *CI_COMMANDS[command], "--ci", value]) == 2
    err = capsys.readouterr().err
    line = next(line for line in err.splitlines() if "--ci" in line)
    assert "must be a number in (0, 1), e.g. 0.95" in line or "must be in (0, 1), e.g. 0.95" in line
    assert repr(value) in line or value in line
    assert "confidence_level" not in err


def test_no_private_name_in_any_type_message(capsys):
    assert main(["rankings", "qrels.txt", "run.txt", "--threshold", "x", "--ci", "y"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err[0].endswith("argument --threshold: invalid float value: 'x'") and "_" not in err[1].split("--ci")[1]


def test_no_command_lists_the_commands_and_help(capsys):
    assert main([]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    for command in ("evaluate", "compare", "retrieval", "rankings", "scores", "trec_eval", "metrics"):
        assert command in line
    assert "embedeval --help" in line


def test_python_m_embedeval_alone_says_the_same():
    done = run_cli()
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("embedeval: error: a command is required: evaluate, compare,")
    assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr


@pytest.fixture
def judged(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "q.npy", rng.normal(size=(3, 4)).astype(np.float32))
    np.save(tmp_path / "c.npy", rng.normal(size=(4, 4)).astype(np.float32))
    (tmp_path / "qids.txt").write_text("q1\nq2\nq3\n")  # q3 has no judgements: a warning, were it evaluated
    (tmp_path / "short_ids.txt").write_text("q1\nq2\n")
    (tmp_path / "cids.txt").write_text("d1\nd2\nd3\n")  # one short of the corpus rows
    (tmp_path / "qrels.txt").write_text("q1 0 d1 1\nq2 0 d2 1\n")
    return tmp_path


def test_retrieval_row_count_errors_come_without_a_warning_about_the_work(judged, capsys):
    d = judged
    argv = ["retrieval", d / "q.npy", d / "c.npy", d / "qrels.txt", "--query-ids", d / "qids.txt"]
    assert main([str(a) for a in [*argv, "--corpus-ids", d / "cids.txt"]]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"embedeval retrieval: error: --corpus-ids ({d / 'cids.txt'}) must hold one id per row of CORPUS "
                   f"({d / 'c.npy'}) (4); got 3"]  # fmt: skip
    argv[-1] = d / "short_ids.txt"
    assert main([str(a) for a in [*argv, "--corpus-ids", d / "cids.txt"]]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and all(": error: " in line for line in err)  # both counts at once, no warning


def test_compare_shape_errors_come_without_a_warning_about_the_work(judged, capsys):
    d = judged
    system = f"a={d / 'q.npy'},{d / 'c.npy'}"
    argv = ["compare", "--qrels", d / "qrels.txt", "--query-ids", d / "qids.txt", "--corpus-ids"]
    argv += [d / "cids.txt", "--system", system, "--system", system.replace("a=", "b=")]
    assert main([str(a) for a in argv]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err and all(": error: " in line for line in err), err


def test_neighbors_lists_every_count_below_one_at_once(tmp_path, capsys):
    np.save(tmp_path / "q.npy", np.zeros((4, 2), np.float32))
    out = str(tmp_path / "ids.npy")
    assert main(["neighbors", str(tmp_path / "q.npy"), "--k", "0", "--out", out, "--block-size", "-2"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        "embedeval neighbors: error: --k must be >= 1; got 0",
        "embedeval neighbors: error: --block-size must be >= 1; got -2",
    ]


@pytest.mark.parametrize("command", [*sorted(CI_COMMANDS), "leaderboard"])
def test_ci_and_no_ci_together_is_a_problem(command, capsys):
    given = CI_COMMANDS.get(command, ["scores.csv"])
    assert main([command, *given, "--ci", "0.9", "--no-ci"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert any("--no-ci: not allowed with argument --ci" in line for line in err), err
