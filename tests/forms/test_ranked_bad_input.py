"""Bad input to the ranked-list paths, as a new user would give it: each gets a clear error or a
warning, never a silent number (issues #14 and #18)."""

from __future__ import annotations

import numpy as np
import pytest
from runner import run_cli as command

import embedeval

NAN = float("nan")


PYTHON_ERRORS = [
    # NaN scores: refused, naming the query and the id (the example gave mrr 0.333)
    (
        {"q1": {"d1": 0.1, "d2": NAN, "d3": 0.5}},
        {"q1": {"d1": 1}},
        "must not be NaN; got NaN for id 'd2' of query 'q1'",
    ),
    ({"q1": {"d1": 0.1}, "q2": {"d2": NAN}}, {"q1": {"d1": 1}, "q2": {"d2": 1}}, "id 'd2' of query 'q2'"),
    # score strings would sort as strings ('10' below '9')
    ({"q1": {"d1": "10", "d2": "9"}}, {"q1": {"d1": 1}}, r"real numbers; got '10' \(str\) for id 'd1' of query 'q1'"),
    ({"q1": {"d1": 1.0, "d2": None}}, {"q1": {"d1": 1}}, r"got None \(NoneType\) for id 'd2'"),
    # ids of different types never match: refused instead of scoring 0
    ([[1, 2, 3]], [["1", "2"]], r"'rankings' holds int ids \(e.g. 1\) and 'relevance' holds str ids \(e.g. '1'\)"),
    ({"q": {1: 0.5, 2: 0.4}}, {"q": {"1": 1}}, "holds int ids .* str ids"),
    ({"q": ["a", "b"]}, {"q": {1: 1}}, "holds str ids .* int ids"),
    (np.array([[1, 2, 3]]), [{"1"}], "holds int ids .* str ids"),
    # query ids of different types: the coverage error says so
    ({1: [1]}, {"1": {1}}, "the query ids of 'rankings' are int and those of 'relevance' str"),
]


@pytest.mark.parametrize(("rankings", "relevance", "message"), PYTHON_ERRORS)
def test_bad_ranked_input_gets_a_clear_error(rankings, relevance, message):
    with pytest.raises(ValueError, match=message):
        embedeval.evaluate_rankings(rankings, relevance, metrics=["mrr"])


def test_padded_relevance_array_with_list_rankings_ignores_the_pad():
    """Issue #18: the pad (-1) was taken for a relevant id, inflating R (recall@3 0.5, not 1)."""
    r = embedeval.evaluate_rankings([[1, 2, 3], [4, 5, 6]], np.array([[1, -1], [4, 5]]), metrics=["recall@3"])
    assert r.per_query["recall@3"].tolist() == [1.0, 1.0]
    graded = embedeval.evaluate_rankings(
        [[1, 2, 3]], np.array([[2, 9, -1]]), grades=np.array([[3, 1, 0]]), metrics=["ndcg@3", "recall@3"]
    )
    assert graded.summary["recall@3"] == 0.5  # 9 is judged and never retrieved, -1 is padding
    with pytest.raises(ValueError, match="pad value -1 only at the end; row 0"):
        embedeval.evaluate_rankings([[1, 2]], np.array([[-1, 2]]), metrics=["mrr"])


def test_mixed_int_and_str_ids_that_do_match_are_fine():
    r = embedeval.evaluate_rankings([[1, "a", 2]], [{"a"}], metrics=["mrr"])
    assert r.summary["mrr"] == 0.5


@pytest.mark.parametrize("empty", ["skip", "zero"])
def test_no_relevant_item_anywhere_warns(empty):
    """Grades 0-2 with threshold 3: every query has R = 0; say so, as evaluate does."""
    with pytest.warns(UserWarning, match="no query has a relevant item .a judged grade >= 3."):
        r = embedeval.evaluate_rankings([[1, 2]], [{1: 2, 2: 1}], metrics=["mrr"], threshold=3, empty=empty)
    assert np.isnan(r.summary["mrr"]) if empty == "skip" else r.summary["mrr"] == 0.0
    with pytest.warns(UserWarning, match="no query has a relevant item"):
        embedeval.evaluate_scores(np.array([[0.5, 0.2]]), np.array([[2, 1]]), metrics=["mrr"], threshold=3)


def test_unhashable_ids_are_named():
    with pytest.raises(TypeError, match="'relevance' ids must be hashable; got an unhashable id in query 0"):
        embedeval.evaluate_rankings([[1]], [[[1, 2]]], metrics=["mrr"])
    with pytest.raises(TypeError, match="'rankings' ids must be hashable; got list \\[1\\] in query 0"):
        embedeval.evaluate_rankings([[[1], 2]], [{2}], metrics=["mrr"])


def test_complete_must_be_a_bool():
    with pytest.raises(TypeError, match="'complete' must be True or False; got 'yes'"):
        embedeval.evaluate_rankings({"q": [1]}, {"q": {1}}, complete="yes")


@pytest.fixture
def trec_files(tmp_path):
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 c 1 1 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 b 1\nq2 0 c 2\n")
    (tmp_path / "nan.txt").write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 nan t\n")
    return tmp_path


CLI_ERRORS = [
    (["rankings", "qrels.txt", "nan.txt"], ["nan.txt:2: score must be a number; got 'nan'"]),
    # every argument is checked before any file is read: the run's NaN is never reached
    (
        ["rankings", "qrels.txt", "nan.txt", "--threshold", "0", "--report", "missing/r.html"],
        ["--report: no such folder for missing/r.html", "--threshold must be a number > 0"],
    ),
    (
        ["rankings", "qrels.txt", "nan.txt", "--threshold", "nan"],
        ["--threshold must be a number > 0 (grade 0 is never relevant); got nan"],
    ),
    (["rankings", "qrels.txt", "run.txt", "--format", "trec", "--ci", "0.9"], ["--ci has no place in --format trec"]),
    (
        ["scores", "s.npy", "s.npy", "--threshold", "-1"],
        ["SCORES: no such file", "RELEVANCE: no such file", "--threshold"],
    ),
]


@pytest.mark.parametrize(("args", "messages"), CLI_ERRORS)
def test_command_errors_come_before_any_work(trec_files, args, messages):
    out = command(*args, cwd=trec_files)
    assert out.returncode == 2 and "Traceback" not in out.stderr and out.stdout == ""
    lines = [line for line in out.stderr.splitlines() if line]
    assert len(lines) == len(messages), out.stderr
    for line, message in zip(lines, messages, strict=True):
        assert line.startswith(f"embedeval {args[0]}: error: ") and message in line


def test_command_warns_in_one_line_when_no_query_has_a_relevant_item(trec_files):
    out = command("rankings", "qrels.txt", "run.txt", "--threshold", "3", "--metrics", "mrr", cwd=trec_files)
    assert out.returncode == 0
    assert out.stderr.strip().splitlines() == [
        "embedeval rankings: warning: no query has a relevant item (a judged grade >= 3), so every value is NaN; "
        "check the relevance threshold and that the ids of rankings and judgements match"
    ]
