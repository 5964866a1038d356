"""The TREC readers read what trec_eval 10 reads (``#`` comment lines, fields after a run line's
tag), refuse what it refuses with the file and line, and the line reader and the pyarrow
reader give the same columns."""

from __future__ import annotations

import numpy as np
import pytest

from embedeval._forms.trec import arrow as _arrow
from embedeval._forms.trec.columns import QRELS, RUN
from embedeval._forms.trec.lines import read, run_tag
from embedeval.io import evaluate_files, read_qrels, read_run

pytest.importorskip("pyarrow")


def _both(path, layout, monkeypatch):
    """(line reader's columns, the pyarrow path's columns) as (queries, docs, values)."""
    fast = read(path, layout)
    exact = read(path, layout, exact=True)
    as_tuple = lambda c: (c.queries, c.every_string(), c.value.tolist())  # noqa: E731
    return as_tuple(exact), as_tuple(fast)


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


@pytest.mark.parametrize("arrow", [True, False])
def test_scores_in_exponent_notation_are_read_as_trec_eval_reads_them(tmp_path, monkeypatch, arrow):
    """atof reads exponents: a run score of 1e3 is 1000 in both readers (only grades refuse them)."""
    path = tmp_path / "run"
    path.write_text("q1 Q0 a 1 1e3 t\nq1 Q0 b 2 2.5E-1 t\n")
    if not arrow:
        monkeypatch.setattr(_arrow, "read_arrow", lambda *a: (_ for _ in ()).throw(ImportError()))
    assert read(path, RUN).value.tolist() == [1000.0, 0.25]


@pytest.mark.parametrize(("layout", "text", "message"), REFUSED)
@pytest.mark.parametrize("arrow", [True, False])
def test_what_trec_eval_refuses_is_named_by_file_and_line(tmp_path, monkeypatch, layout, text, message, arrow):
    path = tmp_path / ("run" if layout is RUN else "qrels")
    path.write_text(text)
    if not arrow:
        monkeypatch.setattr(_arrow, "read_arrow", lambda *a: (_ for _ in ()).throw(ImportError()))
    with pytest.raises(ValueError, match=message):
        read(path, layout)


def test_run_tag_is_the_last_data_lines(tmp_path):
    (tmp_path / "run").write_text("q1 Q0 a 1 2 first\nq1 Q0 b 2 1 second junk\n# trailing comment x y z w\n\n")
    assert run_tag(tmp_path / "run") == "second"
