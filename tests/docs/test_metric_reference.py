"""The metric table is the registry: every family and name pattern reaches list_metrics(),
``embedeval metrics`` and the generated metric reference page, and the defaults of each entry
point agree between Python and the command line."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

import embedeval
from embedeval._metrics.families import EMBEDDINGS, FAMILIES, JUDGEMENT_GROUPS, PREFERENCES, RANKINGS
from embedeval._metrics.registry import parse_metric, parse_metrics, valid_names
from embedeval._metrics.set_families import SET_FAMILIES
from embedeval.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = set(FAMILIES) | set(SET_FAMILIES)
FORMS = (RANKINGS, EMBEDDINGS, PREFERENCES, JUDGEMENT_GROUPS)


def test_list_metrics_has_every_family_once_with_the_promised_keys():
    rows = embedeval.list_metrics()
    assert sorted(row["family"] for row in rows) == sorted(REGISTRY)
    for row in rows:
        assert {"name", "definition", "forms", "aliases"} <= set(row)
        assert isinstance(row["aliases"], dict)
        assert row["definition"] and row["reference"]
        json.dumps(row)  # plain data only


def test_every_pattern_the_parser_lists_is_in_the_table():
    patterns = {name for row in embedeval.list_metrics() for name in row["names"]}
    assert {name for form in FORMS for name in valid_names(form)} == patterns


def test_accepted_aliases_parse_to_their_family():
    """The table's 'accepted names' are names the parser really takes (k filled in), each
    standing for its own family only."""
    for row in embedeval.list_metrics():
        for alias in row["accepted_aliases"]:
            name = alias.split(" ")[0].replace("k1,k2", "5,10")
            name = re.sub(r"[_@]k$", lambda m: m[0][0] + "10", re.sub(r"_m$", "_0.5", name))
            name = re.sub(r"<=r$", "<=2", name)
            families = set()
            for form in FORMS:
                try:
                    families |= {m.family for m in parse_metrics([name], form)}
                except ValueError:
                    pass
            assert families == {row["family"]}, f"{alias!r} of {row['family']} parses to {families}"


def test_definitions_are_the_registrys():
    rows = {row["family"]: row for row in embedeval.list_metrics()}
    for family, spec in FAMILIES.items():
        for form, declared in spec.forms.items():
            assert rows[family]["definitions"][form] == declared.definition
            cut = "@r" if spec.cutoffs == {"r"} else "@10" if "k" in spec.cutoffs else "@2" if spec.radius else ""
            cut = "@0.5" if spec.cutoffs == {"param"} else cut
            assert parse_metric(family + cut, form).definition in (declared.definition, spec.r_definition)


def test_the_cli_lists_every_family(capsys):
    assert main(["metrics"]) == 0
    text = capsys.readouterr().out
    heads = [line for line in text.splitlines() if line and not line.startswith(" ")]
    listed = {name.split("@")[0] for head in heads for name in head.split()}
    assert listed == REGISTRY
    assert main(["metrics", "--format", "json"]) == 0
    assert [row["family"] for row in json.loads(capsys.readouterr().out)] == [
        row["family"] for row in embedeval.list_metrics()
    ]


def test_the_cli_filters_by_form_and_refuses_unknown_families(capsys):
    assert main(["metrics", "--form", "rankings", "--format", "json"]) == 0
    families = {row["family"] for row in json.loads(capsys.readouterr().out)}
    assert "ndcg" in families and "nmi" not in families
    assert main(["metrics", "ndgc", "mapp"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "'ndgc'" in err[0] and "'mapp'" in err[1]


@pytest.mark.parametrize(
    ("function", "command"),
    [
        (embedeval.evaluate, "evaluate"),
        (embedeval.evaluate_retrieval, "retrieval"),
        (embedeval.evaluate_scores, "scores"),
        (embedeval.io.evaluate_files, "rankings"),
    ],
)
def test_each_entry_point_has_one_default_in_python_and_on_the_command_line(function, command):
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    option = next(a for a in sub.choices[command]._actions if a.dest == "metrics")
    assert list(option.default) == list(inspect.signature(function).parameters["metrics"].default)


def test_import_embedeval_reaches_every_documented_module():
    code = (
        "import embedeval\n"
        "for name in ('io', 'stats', 'protocols', 'testing', 'confidence', 'hashing', 'plotting',"
        " 'reality_check', 'report', 'distributed'):\n"
        "    assert getattr(embedeval, name).__name__ == 'embedeval.' + name\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    with pytest.raises(AttributeError, match="no attribute 'nonexistent'"):
        embedeval.nonexistent  # noqa: B018


def test_the_generated_metric_page_names_every_metric(tmp_path):
    """Build the docs (text builder) and read the metric reference page: every name pattern of
    the registry is on it, as a heading of its own family."""
    for module in ("sphinx", "myst_parser", "numpydoc", "furo", "sphinx_copybutton"):
        pytest.importorskip(module, reason="the docs extra is not installed")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "text", str(ROOT / "docs"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    page = (tmp_path / "reference" / "metrics.txt").read_text(encoding="utf-8")
    headings = {line.strip() for line in page.splitlines()}
    for row in embedeval.list_metrics():
        assert ", ".join(row["names"]) in headings, row["names"]
        assert row["definition"].split(" ")[0] in page
