"""Preference and judgement-group files: the reader's rules, the drop-in's problems, and
``embedeval trec_eval -R prefs|qrels_prefs|qrels_jg`` against the trec_eval 10 binary on
generated files (skipped without the binary: ``$TREC_EVAL``, or /work/trec_eval_src/trec_eval)."""

from __future__ import annotations

import importlib.util
import os
import re
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


# The judgement readers share the qrels reader's tokenizer: the same bytes read the same way.
SAME_BYTES = [
    b"\xef\xbb\xbfq 1 a 1\nq 1 b 0\n",  # a byte-order mark is not part of the first query id
    b"q 1 a 1\r\nq 1 b 2\r\n",  # CRLF ends a line
    b"q 1 a\xc2\xa0b 1\nq 1 c 0\n",  # a no-break space is part of an id, as in trec_eval
    b"q\t1\va\x0c1\n",  # ASCII whitespace separates fields
    b"q 1 a 1_0\n",  # Python reads 10, C's atol 1: refused
    b"q 1 a 1e1\n",  # an exponent in a grade (atol reads 1): refused
    b"q 1 a inf\n",
    b"q 1 a -2\nq 1 b +3\n# a comment\n\nq 1 c 0.0\n",
    b"q 1 a\xe2\x80\xa8b 1\n",  # U+2028 is no line end for trec_eval
]


@pytest.mark.parametrize("data", SAME_BYTES)
def test_qrels_jg_reads_the_same_bytes_as_read_qrels(tmp_path, data):
    """A qrels_jg file is a qrels file read once per group: what read_qrels reads from some
    bytes, read_judgements reads too (or both refuse them, for the same rule)."""
    from embedeval._forms.trec.prefs import read_judgements
    from embedeval.io import read_qrels

    path = tmp_path / "judged"
    path.write_bytes(data)
    try:
        expected = read_qrels(path)
    except ValueError as exc:
        rule = str(exc).split(": ", 1)[1].split(";")[0]
        with pytest.raises(ValueError, match=re.escape(rule)):
            read_judgements(path, "qrels_jg")
        return
    got = read_judgements(path, "qrels_jg")
    as_dicts: dict = {}
    for q, d, v in zip(got.query, got.doc, got.level, strict=True):
        as_dicts.setdefault(q, {})[d] = v
    assert as_dicts == expected


@pytest.mark.parametrize("layout", ["prefs", "qrels_prefs", "qrels_jg"])
def test_a_level_with_an_underscore_is_refused_in_every_format(tmp_path, layout):
    """Python's float reads 1_0 as 10, trec_eval's atof and atol as 1: it was read as 10."""
    (tmp_path / "run").write_text(RUN)
    line = "q u s a 1_0\n" if layout == "prefs" else "q u a 1_0\n"
    (tmp_path / "prefs").write_text(line)
    with pytest.raises(ValueError, match=r"prefs:1: .* must be written as trec_eval reads it .*got '1_0'"):
        evaluate_preferences(tmp_path / "run", tmp_path / "prefs", format=layout)


def test_a_qrels_jg_grade_with_an_exponent_is_refused_and_a_level_with_one_is_read(tmp_path):
    """qrels_jg grades are read with atol (1e1 is 1), preference levels with atof (1e1 is 10)."""
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "prefs").write_text("q u a 1e1\nq u b 0\n")
    with pytest.raises(ValueError, match=r"prefs:1: grade must be written as trec_eval reads it .*atol.*'1e1'"):
        evaluate_preferences(tmp_path / "run", tmp_path / "prefs", format="qrels_jg")
    result = evaluate_preferences(tmp_path / "run", tmp_path / "prefs", format="qrels_prefs", metrics=["prefs_simp"])
    assert result.per_query["prefs_simp"].tolist() == [1.0]  # a (10) preferred to b (0) and ranked above it


def test_a_byte_order_mark_is_not_part_of_the_first_query_id(tmp_path):
    """With the mark kept, the first query had no run and was left out."""
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "prefs").write_bytes(b"\xef\xbb\xbfq u s a 2\nq u s b 1\n")
    result = evaluate_preferences(tmp_path / "run", tmp_path / "prefs", metrics=["prefs_simp"])
    assert result.per_query["prefs_simp"].tolist() == [1.0]  # one query, q: a preferred and ranked above b


def test_a_no_break_space_is_part_of_an_id(tmp_path):
    """trec_eval splits at ASCII whitespace only; the reader split at U+00A0 and refused the line."""
    (tmp_path / "run").write_text("q Q0 a\u00a0x 0 2 r\nq Q0 b 0 1 r\n")
    (tmp_path / "prefs").write_text("q u s b 2\nq u s a\u00a0x 1\n")
    result = evaluate_preferences(tmp_path / "run", tmp_path / "prefs", metrics=["prefs_simp"])
    assert result.per_query["prefs_simp"].tolist() == [0.0]
