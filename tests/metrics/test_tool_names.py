"""Other tools' names as ``embedeval metrics`` lists them: each one that names one metric is
accepted and reported under embedeval's name, each one that does not is refused for a stated
reason, and a near miss gets "did you mean" in Python and on the command line (issue 40, item 7)."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

import embedeval
from embedeval._metrics.families import EMBEDDINGS, RANKINGS
from embedeval._metrics.registry import parse_metrics
from embedeval._metrics.tool_names import NOT_ACCEPTED, TOOL_NAMES
from embedeval.cli import main

# a listed name with its placeholders filled in: cutoff k, radius r, trec_eval's parameters
_FILL = [
    (r" \(.*\)$", ""),
    (r"k1,k2", "5,10"),
    (r"@k$", "@10"),
    (r"_k$", "_10"),
    (r"<=r$", "<=2"),
    (r"_p$", "_0.5"),
    (r"_m$", "_2"),
    (r"g=gain,\.\.\.$", "1=3"),
]


def _filled(name: str) -> str:
    for pattern, value in _FILL:
        name = re.sub(pattern, value, name)
    return name


def _families(name: str, forms) -> dict[str, list[str]]:
    """{form: the names it parses to}, for the forms where it parses."""
    out = {}
    for form in forms:
        try:
            out[form] = [m.name for m in parse_metrics([name], form)]
        except ValueError:
            pass
    return out


LISTED = [
    (row["family"], row["forms"], tool, name)
    for row in embedeval.list_metrics()
    for tool, names in row["aliases"].items()
    for name in names
]


@pytest.mark.parametrize(("family", "forms", "tool", "name"), LISTED, ids=[f"{t}:{n}" for _, _, t, n in LISTED])
def test_every_listed_name_is_accepted_or_refused_for_a_stated_reason(family, forms, tool, name):
    parsed = _families(_filled(name), forms)
    mine = {form: names for form, names in parsed.items() if all(n.partition("@")[0] == family for n in names)}
    if (tool, name) in NOT_ACCEPTED:
        assert not mine, f"{tool}'s {name!r} is listed as refused but parses to {family}: {parsed}"
    else:
        assert mine, f"{tool}'s {name!r} ({family}) is refused: {parsed}"
        assert all(len(names) >= 1 and names[0].startswith(family) for names in mine.values())


def test_no_refusal_is_stale():
    listed = {(tool, name) for _, _, tool, name in LISTED}
    assert set(NOT_ACCEPTED) <= listed


@pytest.mark.parametrize(("theirs", "ours", "form", "tool"), TOOL_NAMES)
def test_each_alias_reports_embedeval_name_whatever_the_case(theirs, ours, form, tool):
    name, want = theirs.format(k=7, r=3), ours.format(k=7, r=3)
    for spelled in (name, name.upper(), name.lower()):
        for f in (form,) if form else (RANKINGS, EMBEDDINGS):
            assert [m.name for m in parse_metrics([spelled], f)] == [want]


def test_beir_names_give_the_numbers_of_embedeval_names():
    run = {"q1": ["a", "b", "c"], "q2": ["c", "a", "b"]}
    qrels = {"q1": {"b": 1, "c": 2}, "q2": {"a": 1}}
    theirs = embedeval.evaluate_rankings(run, qrels, metrics=["P@2", "R_cap@2", "NDCG@3", "ndcg_at_3", "mrr_at_2"])
    ours = embedeval.evaluate_rankings(run, qrels, metrics=["precision@2", "capped_recall@2", "ndcg@3", "mrr@2"])
    assert theirs.summary == ours.summary


@pytest.mark.parametrize(
    ("name", "form", "hint"),
    [
        ("Rcap@10", RANKINGS, "did you mean 'R_cap@10' (BEIR's name for capped_recall@10)?"),
        ("ndcg_at10", RANKINGS, "did you mean 'ndcg_at_10' (MTEB's name for ndcg@10)?"),
        ("normalised_mutual_info_score", EMBEDDINGS, "did you mean 'normalized_mutual_info_score'"),
    ],
)
def test_near_misses_of_other_tools_names_get_did_you_mean(name, form, hint):
    with pytest.raises(ValueError, match=re.escape(hint)):
        parse_metrics([name], form)


def test_the_command_line_accepts_them_and_says_did_you_mean(tmp_path, capsys):
    (tmp_path / "run.txt").write_text("q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\n")
    (tmp_path / "qrels.txt").write_text("q1 0 b 1\n")
    files = [str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt")]
    assert main(["rankings", *files, "--metrics", "P@2", "--no-ci"]) == 0
    assert "precision@2  0.5000" in capsys.readouterr().out
    argv = ["rankings", *files, "--metrics", "Rcap@2", "ndgc@3"]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "did you mean 'R_cap@2'" in err[0] and "did you mean 'ndcg@3'" in err[1]
    assert main(["metrics", "ndgc", "Rcap@10"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "did you mean 'ndcg'?" in err[0] and "did you mean 'R_cap@10'" in err[1]
    assert main(["metrics", "R_cap@10", "--format", "json"]) == 0
    assert [row["family"] for row in json.loads(capsys.readouterr().out)] == ["capped_recall"]


def test_embeddings_accept_beir_and_scikit_learn_names():
    x = np.random.default_rng(0).standard_normal((12, 4)).astype(np.float32)
    labels = np.repeat([0, 1, 2], 4)
    r = embedeval.evaluate(x, labels, metrics=["P@3", "normalized_mutual_info_score"])
    assert list(r.summary) == ["precision@3", "nmi"]
