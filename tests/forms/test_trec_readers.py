"""The TREC readers read what trec_eval 10 reads (``#`` comment lines, fields after a run line's
tag), refuse what it refuses with the file and line, and the line reader and the pyarrow
reader give the same columns."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from trec_cases import BATCH_READERS, READERS, use_reader

from embedeval._forms.trec.columns import QRELS, RUN
from embedeval._forms.trec.lines import read, run_tag
from embedeval.io import evaluate_files, read_qrels, read_run

pytest.importorskip("pyarrow")


def _both(path, layout, monkeypatch):
    """(line reader's columns, the batch readers' columns) as (queries, docs, values); the two
    batch readers' (numpy's, pyarrow's) are checked to be the same."""
    as_tuple = lambda c: (c.queries, c.every_string(), c.value.tolist())  # noqa: E731
    batched = []
    for reader in BATCH_READERS:
        use_reader(monkeypatch, reader)
        batched.append(as_tuple(read(path, layout)))
    assert batched[0] == batched[1], "numpy's and pyarrow's readers differ"
    return as_tuple(read(path, layout, exact=True)), batched[0]


def _random_run(rng, n_queries=6, commented=False, trailing=False) -> tuple[str, str]:
    """(a run with trec_eval's extras, the same run plain)."""
    extra, plain = [], []
    for q in range(n_queries):
        for d in rng.permutation(30)[: rng.integers(1, 12)]:
            line = f"q{q} Q0 CR#{d}-x {rng.integers(1, 99)} {rng.integers(0, 5) / 2} tag"
            plain.append(line)
            extra.append(line + (" more junk at end" if trailing and rng.random() < 0.5 else ""))
            if commented and rng.random() < 0.2:
                extra.append(rng.choice(["# a comment", "  # one after blanks", "#q0 Q0 d 1 1 t", "#"]))
    return "\n".join(extra) + "\n", "\n".join(plain) + "\n"


@pytest.mark.parametrize("seed", range(8))
def test_comments_and_trailing_fields_read_as_the_plain_file_on_both_readers(tmp_path, monkeypatch, seed):
    rng = np.random.default_rng(seed)
    extra, plain = _random_run(rng, commented=True, trailing=bool(seed % 2))
    (tmp_path / "extra").write_text(extra)
    (tmp_path / "plain").write_text(plain)
    line_extra, fast_extra = _both(tmp_path / "extra", RUN, monkeypatch)
    line_plain, _ = _both(tmp_path / "plain", RUN, monkeypatch)
    assert line_extra == fast_extra == line_plain
    assert read_run(tmp_path / "extra") == read_run(tmp_path / "plain")


def test_qrels_comments_are_lines_that_begin_with_a_hash(tmp_path, monkeypatch):
    text = "# judged by hand\nq1 0 CR#93E-1860 1\n#q1 0 b 1\nq1 0 c 0\n # 0 d 2\n"
    (tmp_path / "qrels").write_text(text)
    line, fast = _both(tmp_path / "qrels", QRELS, monkeypatch)
    # '#' inside an id is data; ' # 0 d 2' (a blank first) is a line of query '#'
    assert line == fast == (["q1", "#"], ["CR#93E-1860", "c", "d"], [1.0, 0.0, 2.0])
    assert read_qrels(tmp_path / "qrels") == {"q1": {"CR#93E-1860": 1.0, "c": 0.0}, "#": {"d": 2.0}}


def test_a_comment_first_line_does_not_hide_tabs(tmp_path, monkeypatch):
    (tmp_path / "run").write_text("# made by hand\nq1\tQ0\ta\t1\t2.5\tt\nq1\tQ0\tb\t2\t1.5\tt\n")
    line, fast = _both(tmp_path / "run", RUN, monkeypatch)
    assert line == fast == (["q1"], ["a", "b"], [2.5, 1.5])


def test_commented_files_evaluate_as_clean_ones(tmp_path):
    (tmp_path / "run").write_text("#c\nq1 Q0 a 1 3 t x y\nq1 Q0 b 2 2 t\n# c\nq2 Q0 c 1 1 t z\n")
    (tmp_path / "clean_run").write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 c 1 1 t\n")
    (tmp_path / "qrels").write_text("# c\nq1 0 b 1\nq2 0 c 1\n")
    (tmp_path / "clean_qrels").write_text("q1 0 b 1\nq2 0 c 1\n")
    a = evaluate_files(tmp_path / "run", tmp_path / "qrels", metrics=["map", "P_1"])
    b = evaluate_files(tmp_path / "clean_run", tmp_path / "clean_qrels", metrics=["map", "P_1"])
    assert a.summary == b.summary == {"map": 0.75, "precision@1": 0.5}


REFUSED = [
    (
        RUN,
        "q1 Q0 a 1 2 t\nq1 Q0 b 2 1\n",
        r"run:2: a line needs 6 fields \(qid Q0 docid rank score tag\) or more; got 5",
    ),
    (QRELS, "q1 0 a 1\nq1 0 b 1 extra\n", r"qrels:2: a line needs 4 fields \(qid iteration docid grade\); got 5"),
    (QRELS, "q1 0 a\n", r"qrels:1: a line needs 4 fields"),
    (RUN, "q1 Q0 a 1 high t\n", r"run:1: score must be a number; got 'high'"),
    # numbers Python's float reads otherwise than trec_eval (atof for scores, atol for grades)
    (RUN, "q1 Q0 a 1 2 t\nq1 Q0 b 2 1_0 t\n", r"run:2: score must be written as trec_eval reads it .*got '1_0'"),
    (QRELS, "q1 0 a 1\nq1 0 b 1e3\n", r"qrels:2: grade must be written as trec_eval reads it .*atol.*got '1e3'"),
    (QRELS, "q1 0 a 2E0\n", r"qrels:1: grade must be written as trec_eval reads it .*got '2E0'"),
    (QRELS, "q1 0 a 1_0\n", r"qrels:1: grade must be written as trec_eval reads it .*got '1_0'"),
]


@pytest.mark.parametrize("reader", READERS)
def test_scores_in_exponent_notation_are_read_as_trec_eval_reads_them(tmp_path, monkeypatch, reader):
    """atof reads exponents: a run score of 1e3 is 1000 in both readers (only grades refuse them)."""
    path = tmp_path / "run"
    path.write_text("q1 Q0 a 1 1e3 t\nq1 Q0 b 2 2.5E-1 t\n")
    use_reader(monkeypatch, reader)
    assert read(path, RUN).value.tolist() == [1000.0, 0.25]


@pytest.mark.parametrize(("layout", "text", "message"), REFUSED)
@pytest.mark.parametrize("reader", READERS)
def test_what_trec_eval_refuses_is_named_by_file_and_line(tmp_path, monkeypatch, layout, text, message, reader):
    path = tmp_path / ("run" if layout is RUN else "qrels")
    path.write_text(text)
    use_reader(monkeypatch, reader)
    with pytest.raises(ValueError, match=message):
        read(path, layout)


def test_run_tag_is_the_last_data_lines(tmp_path):
    (tmp_path / "run").write_text("q1 Q0 a 1 2 first\nq1 Q0 b 2 1 second junk\n# trailing comment x y z w\n\n")
    assert run_tag(tmp_path / "run") == "second"


# Values written in ways that numpy's tokenizer, Python's float and C's atof/atol could read apart:
# underscores, hex, exponents, signs, NaN and infinities, unicode spaces and digits around a number.
ODD_SCORES = ["1_0", "0x10", "1e3", "1E-2", "+.5", "5.", "-0", "-0.0", "inf", "-Infinity", "nan", "1.5abc", "1e400"]
ODD_SCORES += ["\u00a02.5", "2.5\u00a0", "\u00852", "2\u001c", "\uff11", "0.1000000000000000055511151231257827"]
ODD_GRADES = ["1", "1.7", "-1", "+2", "1e3", "1_0", "inf", "nan", "0x1", "\u00a01", "1\u0085", "\uff12"]


def _outcome(path, layout, **options):
    """(queries, ids, values as their float64 bytes) or the error's message, of one read."""
    try:
        c = read(path, layout, **options)
    except ValueError as error:
        return str(error)
    return c.queries, c.every_string(), c.value.tobytes()


@pytest.mark.parametrize("reader", BATCH_READERS)
@pytest.mark.parametrize("score", ODD_SCORES)
def test_odd_scores_read_as_the_line_reader_reads_them(tmp_path, monkeypatch, reader, score):
    """Each batch reader reads the value as the line reader does (bit for bit: -0.0 stays
    negative) or hands the file to it, which then names the line."""
    path = tmp_path / "run"
    path.write_bytes(f"q Q0 a 1 {score} t\nq Q0 b\u00a0x 2 0.5 t\n".encode())
    use_reader(monkeypatch, reader)
    assert _outcome(path, RUN) == _outcome(path, RUN, exact=True)


@pytest.mark.parametrize("reader", BATCH_READERS)
@pytest.mark.parametrize("grade", ODD_GRADES)
def test_odd_grades_read_as_the_line_reader_reads_them(tmp_path, monkeypatch, reader, grade):
    path = tmp_path / "qrels"
    path.write_bytes(f"q 0 a {grade}\nq 0 b 1\n".encode())
    use_reader(monkeypatch, reader)
    assert _outcome(path, QRELS) == _outcome(path, QRELS, exact=True)


@pytest.mark.parametrize(
    "text",
    [
        "q Q0 a 1 2 t \nq Q0 b 2 1 t\n",  # a blank at a line's end
        " q Q0 a 1 2 t\nq Q0 b 2 1 t\n",  # at its start
        "q Q0 a  1 2 t\nq Q0 b 2 1 t\n",  # two in a row
        "q Q0 a 1 2\nq Q0 b 2 1 t\n",  # a field short
        "q Q0 a 1 2 t x y\nq Q0 b 2 1 t\n",  # fields after the tag: ignored
        "q Q0 a 1 2 t\n\n\nq Q0 b 2 1 t",  # blank lines, no final line end
        "#c\nq Q0 a 1 2 t\nq Q0 b 2 1 t\n",  # a comment
        "q Q0 a\x00 1 2 t\nq Q0 b 2 1 t\n",  # a NUL byte
    ],
)
def test_irregular_lines_read_as_the_line_reader_reads_them(tmp_path, monkeypatch, text):
    path = tmp_path / "run"
    path.write_bytes(text.encode())
    use_reader(monkeypatch, "numpy", batch=8)
    assert _outcome(path, RUN) == _outcome(path, RUN, exact=True)


def test_the_reader_variable_is_checked_and_a_missing_pyarrow_falls_back_to_numpy(tmp_path, monkeypatch):
    path = tmp_path / "run"
    path.write_text("q Q0 a 1 2 t\nq Q0 b 2 1 t\n")
    monkeypatch.setenv("EMBEDEVAL_BATCHES_FROM", "0")
    monkeypatch.setenv("EMBEDEVAL_TREC_READER", "arrow")
    with pytest.raises(ValueError, match="EMBEDEVAL_TREC_READER must be one of numpy, pyarrow; got 'arrow'"):
        read(path, RUN)
    monkeypatch.setenv("EMBEDEVAL_TREC_READER", "pyarrow")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # as if not installed
    monkeypatch.setitem(sys.modules, "pyarrow.csv", None)
    columns = read(path, RUN)
    assert not columns.exact and columns.every_string() == ["a", "b"]  # numpy's reader, not the line reader
