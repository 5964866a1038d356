"""Preference and judgement-group files: the reader's rules, the drop-in's problems, and
``embedeval trec_eval -R prefs|qrels_prefs|qrels_jg`` against the trec_eval 10 binary on
generated files (skipped without the binary: ``$TREC_EVAL``, or /work/trec_eval_src/trec_eval)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from runner import TREC_EVAL

from embedeval.cli import main
from embedeval.io import evaluate_preferences

ROOT = Path(__file__).resolve().parents[2]
BINARY = TREC_EVAL  # runner.py: $TREC_EVAL, $TREC_EVAL_BINARY or beside the checkout
RUN = "q Q0 a 0 2 r\nq Q0 b 0 1 r\n"


def _bench():
    spec = importlib.util.spec_from_file_location("prefs_differential", ROOT / "bench" / "prefs_differential.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize(
    ("layout", "text", "message"),
    [
        (
            "prefs",
            "q u s a 1\nq u s b\n",
            r"prefs:2: a prefs line needs 5 fields \(qid jg jsg docno rel_level\); got 4",
        ),
        ("prefs", "q u s a 1 extra\n", r"prefs:1: a prefs line needs 5 fields .*; got 6"),
        ("prefs", "q u s a high\n", r"prefs:1: rel_level must be a number; got 'high'"),
        ("prefs", "q u s a nan\n", r"prefs:1: rel_level must be a finite number; got 'nan'"),
        ("qrels_jg", "q 1 a 1\nq 1 a 0\n", r"prefs:2: document 'a' is judged twice in judgement group '1'.*line 1"),
        ("qrels_prefs", "# only a comment\n\n", r"prefs: no qrels_prefs line"),
    ],
)
def test_a_bad_line_is_named_with_its_file_line_and_rule(tmp_path, layout, text, message):
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "prefs").write_text(text)
    with pytest.raises(ValueError, match=message):
        evaluate_preferences(tmp_path / "run", tmp_path / "prefs", format=layout)


def test_comments_and_blank_lines_are_skipped_and_a_hash_inside_an_id_is_data(tmp_path):
    (tmp_path / "run").write_text("q Q0 a#1 0 2 r\nq Q0 b 0 1 r\n")
    (tmp_path / "prefs").write_text("# a comment\n\n# another\nq u s b 2\nq u s a#1 1\n")
    result = evaluate_preferences(tmp_path / "run", tmp_path / "prefs", metrics=["prefs_simp"])
    assert result.per_query["prefs_simp"].tolist() == [0.0]  # b preferred, a#1 ranked above it


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q u s a 1\nq u s b 0\nq u s a 0\n", "prefs:3: .*document 'a' has two rel_levels.*line 1"),
        ("q u s1 a 1\nq u s1 b 0\nq u s2 a 0\nq u s2 c 1\n", "prefs:.: .*document 'a' has rel_level 0 in one"),
        ("q u s1 a 2\nq u s1 b 1\nq u s2 b 2\nq u s2 a 1\n", "prefs: .*contradict each other"),
    ],
)
def test_inconsistent_judgement_groups_are_refused(tmp_path, text, message):
    """trec_eval stops (or aborts) on these; embedeval names the query, group and document."""
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "prefs").write_text(text)
    with pytest.raises(ValueError, match=message.replace(".*", ".*query 'q', judgement group 'u'.*", 1)):
        evaluate_preferences(tmp_path / "run", tmp_path / "prefs")


def test_the_drop_in_names_each_problem_on_one_line(tmp_path, capsys):
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "prefs").write_text("q u s a 1\nq u s b 2\n")
    assert main(["trec_eval", "-R", "prefs", "-m", "map", "-m", "P_avgjg", "--ties", "expected", "prefs", "run"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert any("-R prefs: trec_eval cannot compute map, P_avgjg from it" in line for line in err)
    assert any("--ties: tie rules apply to -R qrels only" in line for line in err)
    assert main(["trec_eval", "-R", "prefsx", str(tmp_path / "prefs"), str(tmp_path / "run")]) == 2
    assert "the rel_info format must be one of qrels, prefs, qrels_prefs, qrels_jg" in capsys.readouterr().err
    (tmp_path / "bad").write_text("q u s a 1\nq u b 2\n")
    assert main(["trec_eval", "-R", "prefs", "-m", "all_prefs", str(tmp_path / "bad"), str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert "bad:2: a prefs line needs 5 fields" in err and "Traceback" not in err


def test_the_drop_in_prints_counts_as_integers_and_sums_them(tmp_path, capsys):
    (tmp_path / "run").write_text(RUN + "s Q0 a 0 1 r\n")
    (tmp_path / "prefs").write_text("q u s a 1\nq u s b 2\ns u s a 2\ns u s c 1\n")
    assert main(["trec_eval", "-q", "-R", "prefs", "-m", "prefs", str(tmp_path / "prefs"), str(tmp_path / "run")]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "prefs_num_prefs_poss  \tq\t1" in lines and "prefs_num_prefs_poss  \tall\t2" in lines
    assert "prefs_simp            \tall\t0.5000" in lines  # q: 0, s: 1 (a retrieved, c not)
    assert "num_q                 \tall\t2" in lines and "runid                 \tall\tr" in lines


@pytest.mark.skipif(not Path(BINARY).is_file(), reason="no trec_eval 10 binary ($TREC_EVAL)")
@pytest.mark.parametrize("seed", range(0, 400, 20))
def test_byte_identical_with_trec_eval_on_generated_files(seed):
    """Seeded cases of bench/prefs_differential.py: ties in scores and levels, several
    judgement groups and sub-groups, documents judged in one group only, queries without a run
    (with -c), -M, -J and -l; the outputs of both must be the same bytes."""
    bench = _bench()
    _, args = bench.make_case(seed)
    assert args[:2] == ["-q", "-R"]
    assert bench.compare(seed, BINARY) is None


@pytest.mark.skipif(not Path(BINARY).is_file(), reason="no trec_eval 10 binary ($TREC_EVAL)")
def test_the_quicktest_runs_all_fifteen_commands_byte_identical():
    folder = Path(BINARY).resolve().parent
    if not (folder / "Makefile").is_file():
        pytest.skip("the binary is not in a trec_eval checkout")
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "trec_quicktest.py"), "--trec-eval", BINARY],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert done.stdout.splitlines()[-1] == "15 of 15 quicktest commands byte-identical", done.stdout
