"""The one table builder: renderers on hand-written cells, and the rows of a result."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import embedeval
from embedeval._core.text import (
    aligned_table,
    csv_table,
    format_p_value,
    html_table,
    markdown_table,
    metric_table,
    percent,
)
from embedeval.report import write_report
from embedeval.stats import Interval

HEAD = ["metric", "value", "definition"]
ROWS = [["p@1", "0.5000", "first"], ["map@r", "0.25", "a longer definition"]]


def test_aligned_table_pads_columns_and_strips_trailing_spaces():
    assert aligned_table(HEAD, ROWS).splitlines() == [
        "metric  value   definition",
        "p@1     0.5000  first",
        "map@r   0.25    a longer definition",
    ]


def test_columns_rule_puts_dashes_under_each_column():
    assert aligned_table(["a", "bb"], [["xyz", "1"]], rule="columns").splitlines() == ["a    bb", "---  --", "xyz  1"]


def test_free_last_column_does_not_widen_the_others_and_line_rule_spans_the_head():
    text = aligned_table(["m", "v", "d"], [["ab", "1", "x" * 300]], rule="line", free_last=True).splitlines()
    assert text[0] == "m   v  d" and text[1] == "-" * len("m   v  d")
    assert text[2] == "ab  1  " + "x" * 300
    long_head = aligned_table(["m", "d" * 150], [["a", "b"]], rule="line", free_last=True).splitlines()
    assert long_head[1] == "-" * 100  # the line stops at 100 characters


def test_unknown_rule_is_refused():
    with pytest.raises(ValueError, match="'rule' must be None, 'columns' or 'line'; got 'dots'"):
        aligned_table(HEAD, ROWS, rule="dots")


def test_markdown_html_and_csv_renderers():
    assert markdown_table(["a", "b"], [["1", "x|y"]]) == "| a | b |\n|---|---|\n| 1 | x\\|y |"
    assert markdown_table(["<i>"], [["a&amp;\nb <0.01"]]) == "| &lt;i> |\n|---|\n| a&amp;amp; b <0.01 |"
    table = "<table><tr><th>a&lt;b</th></tr><tr><td>&amp;</td></tr></table>"
    assert html_table(["a<b"], [["&"]]) == f"<div class='scroll'>{table}</div>"
    assert html_table(["a"], [["b"]], nowrap=True).startswith("<div class='scroll'><table class=nowrap>")
    assert csv_table(["a", "b"], [["1", "2"], ["3", "4"]]) == "a,b\n1,2\n3,4"


def _result(per_class: bool):
    macro = SimpleNamespace(macro={"p@1": 0.75, "map@r": 0.125}) if per_class else None
    return SimpleNamespace(
        summary={"p@1": 0.5, "map@r": 1 / 3}, per_class=macro, definitions={"p@1": "first", "map@r": "mean"}
    )


@pytest.mark.parametrize(
    ("per_class", "intervals", "macro", "head", "first_row"),
    [
        (False, False, True, ["metric", "value", "definition"], ["p@1", "0.5000", "first"]),
        (True, False, True, ["metric", "value", "macro", "definition"], ["p@1", "0.5000", "0.7500", "first"]),
        (True, False, False, ["metric", "value", "definition"], ["p@1", "0.5000", "first"]),
        (
            True,
            True,
            True,
            ["metric", "value [interval]", "macro", "definition"],
            ["p@1", "0.5000 [0.2500, 0.7500]", "0.7500", "first"],
        ),
    ],
)
def test_metric_table_rows(per_class, intervals, macro, head, first_row):
    """Metric, value or value [interval], macro only where per-class averages exist and are wanted, definition."""
    given = {"p@1": Interval(0.5, 0.25, 0.75), "map@r": Interval(1 / 3, 0.0, 0.5)} if intervals else None
    got_head, rows = metric_table(_result(per_class), given, macro=macro)
    assert got_head == head and rows[0] == first_row
    assert [r[0] for r in rows] == ["p@1", "map@r"] and rows[1][1].startswith("0.3333")


def test_print_result_and_reports_show_the_same_rows(tmp_path):
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(4), 10)
    x = (rng.standard_normal((4, 3))[labels] + 0.5 * rng.standard_normal((40, 3))).astype(np.float32)
    result = embedeval.evaluate(x, labels, metrics=["precision@1", "map@r"])
    head, rows = metric_table(result)
    printed = str(result).splitlines()
    assert printed[0].split() == head[:-1] and printed[1] == "-" * len(printed[0])  # definitions: a legend
    assert printed.index("definitions:") > 3
    assert [line.split("  ")[0] for line in printed[2:4]] == ["precision@1", "map@r"]
    assert printed[2] == "precision@1  " + rows[0][1] + "  " + rows[0][2]
    assert printed[printed.index("definitions:") + 1].startswith("  precision@1: P@k")
    md = write_report(tmp_path / "r.md", result, inputs={}).read_text()
    assert markdown_table(head, rows) in md
    page = write_report(tmp_path / "r.html", result, inputs={}).read_text()
    assert html_table(head, rows) in page


def test_csv_quotes_cells_that_hold_commas_quotes_or_line_breaks():
    text = csv_table(["label", "n"], [["a,b", "1"], ['say "hi"', "2"], ["two\nlines", "3"]])
    assert text == 'label,n\n"a,b",1\n"say ""hi""",2\n"two\nlines",3'


def test_interval_head_carries_the_level_and_p_values_have_one_format():
    given = {"p@1": Interval(0.5, 0.25, 0.75, level=0.9), "map@r": Interval(0.3, 0.1, 0.5, level=0.9)}
    assert metric_table(_result(False), given)[0][1] == "value [90% interval]"
    assert [percent(v) for v in (0.95, 0.975, 0.9, 0.999)] == ["95%", "97.5%", "90%", "99.9%"]
    assert [format_p_value(p) for p in (1 / 10_001, 0.0001, 0.04321, 1.0)] == ["<0.0001", "0.0001", "0.0432", "1.0000"]
