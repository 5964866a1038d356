"""Every table embedeval prints or writes: aligned text, Markdown, HTML and CSV, and the rows of a result.

The renderers take a head (list of str) and rows (lists of str of the same length) and know
nothing of metrics; :func:`metric_table` is the one place that turns an evaluation into rows,
so ``print(result)``, the reports and the command's formats show the same cells.
"""

from __future__ import annotations

import csv
import html
import io
import re
import textwrap
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..result import EvaluationResult

_RULE_MAX = 100  # a "line" rule stops here: a free last column can be very long
NOT_APPLICABLE = "-"  # a cell that has no meaning for its metric (the macro average of a set-level metric)


def format_value(value: float) -> str:
    """A metric value as shown in tables: four decimals (``"0.4265"``, ``"nan"``)."""
    return f"{value:.4f}"


def format_p_value(p: float) -> str:
    """A p-value as shown in tables, one way for all: four decimals, ``"<0.0001"`` below that
    (a randomization test's smallest p-value is 1 / (n_resamples + 1), 9.999e-05 for 10,000)."""
    return "<0.0001" if p < 0.0001 else f"{p:.4f}"


def percent(level: float) -> str:
    """A confidence level as a percentage: ``0.95`` -> ``"95%"``, ``0.975`` -> ``"97.5%"``."""
    return f"{round(level * 100, 6):g}%"


def interval_head(intervals: dict | None) -> str:
    """The head of a value column: ``value``, or ``value [95% interval]`` with the intervals' level."""
    if not intervals:
        return "value"
    level = next(iter(intervals.values())).level
    return f"value [{percent(level)} interval]" if level is not None else "value [interval]"


def metric_table(
    result: EvaluationResult, intervals: dict | None = None, *, macro: bool = True
) -> tuple[list[str], list[list[str]]]:
    """The head and one row per metric of a result: metric, value, macro, definition.

    Parameters
    ----------
    result : EvaluationResult
    intervals : dict of str to Interval, optional
        When given, the value column is ``value [low, high]`` (the interval's ``str``) and its
        head says so, with the intervals' level (``value [95% interval]``).
    macro : bool
        Include the macro average (mean of class means) when the result has per-class
        averages; a result without them never has the column.

    Returns
    -------
    head : list of str
    rows : list of list of str
        In the order of ``result.summary``. A set-level metric (one number for the whole set)
        shows its value without an interval, and ``-`` in the macro column: it has no class
        averages.
    """
    has_macro = macro and result.per_class is not None
    head = ["metric", interval_head(intervals), *(["macro"] if has_macro else []), "definition"]
    rows = []
    for name, value in result.summary.items():
        row = [name, str(intervals[name]) if intervals and name in intervals else format_value(value)]
        if has_macro:
            row.append(format_value(result.per_class.macro[name]) if name in result.per_class.macro else NOT_APPLICABLE)
        rows.append([*row, result.definitions[name]])
    return head, rows


WIDTH = 100  # plain-text output fits a terminal of this many columns


def wrapped(line: str, width: int = WIDTH) -> str:
    """``line`` wrapped at ``width`` columns, continuation lines indented 4 spaces past its own
    indent (long words, such as a formula, are not broken)."""
    indent = " " * (len(line) - len(line.lstrip(" ")))
    return textwrap.fill(
        line.strip(" "),
        width=width,
        initial_indent=indent,
        subsequent_indent=indent + "    ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def aligned_table(head: list[str], rows: list[list[str]], *, rule: str | None = None, free_last: bool = False) -> str:
    """Columns padded to their widest cell, two spaces apart, no trailing spaces.

    Parameters
    ----------
    head : list of str
    rows : list of list of str
        Each as long as ``head``.
    rule : {None, "columns", "line"}
        A dash rule under the head: None for none, ``"columns"`` for a run of dashes under each
        column as wide as the column, ``"line"`` for one unbroken line as long as the head line
        (at most 100 characters).
    free_last : bool
        Leave the last column unpadded and out of the widths, so that one long cell (a
        definition) does not widen the others.
    """
    lines = [head, *rows]
    padded = len(head) - 1 if free_last else len(head)
    widths = [max(len(r[i]) for r in lines) for i in range(padded)]
    text = [
        "  ".join([*(c.ljust(w) for c, w in zip(r[:padded], widths, strict=True)), *r[padded:]]).rstrip() for r in lines
    ]
    if rule == "columns":
        text.insert(1, "  ".join("-" * w for w in widths))
    elif rule == "line":
        text.insert(1, "-" * min(_RULE_MAX, len(text[0])))
    elif rule is not None:
        raise ValueError(f"'rule' must be None, 'columns' or 'line'; got {rule!r}")
    return "\n".join(text)


# What Markdown would read as syntax inside a cell: a backslash or ``|`` (the cell's end), the
# ``<`` that opens an HTML tag, comment or instruction, the ``&`` that opens an entity, a line break.
_MARKDOWN_SYNTAX = re.compile(r"[\\|]|<(?=[A-Za-z/!?])|&(?=#?\w+;)|\r\n?|\n")
_MARKDOWN_ESCAPES = {"\\": "\\\\", "|": "\\|", "<": "&lt;", "&": "&amp;"}


def markdown_escape(text: str) -> str:
    """``text`` as literal Markdown text in a table cell or list item: ``|`` (a cell's end) and
    ``\\`` backslash-escaped, a ``<`` that would open HTML and an ``&`` that would open an entity
    written as entities (no HTML reaches the renderer), line breaks as spaces (a row is one line).
    Other text is kept as it is (``<0.0001`` stays)."""
    return _MARKDOWN_SYNTAX.sub(lambda m: _MARKDOWN_ESCAPES.get(m.group(), " "), text)


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table, every cell escaped (:func:`markdown_escape`)."""
    lines = ["| " + " | ".join(map(markdown_escape, head)) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(map(markdown_escape, r)) + " |" for r in rows])


def _reads_as_number(cell: str) -> bool:
    try:
        float(cell.split(" ", 1)[0])
    except ValueError:
        return False
    return True


def html_table(head: list[str], rows: list[list[str]], *, nowrap: bool = False, numbers: bool = False) -> str:
    """An HTML ``<table>`` on one line, every cell escaped, in a ``<div class="scroll">`` (a
    table wider than the page scrolls by itself); ``nowrap``: the class that keeps every cell,
    the last one too, on one line; ``numbers``: the class ``num`` (right-aligned) on each cell
    that starts with a number (``0.4265 [0.41, 0.44]``)."""
    esc = html.escape
    cells = "<tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"
    for r in rows:
        tds = (f"<td{' class=num' if numbers and _reads_as_number(c) else ''}>{esc(c)}</td>" for c in r)
        cells += "<tr>" + "".join(tds) + "</tr>"
    return f"<div class='scroll'><table{' class=nowrap' if nowrap else ''}>{cells}</table></div>"


def csv_table(head: list[str], rows: list[list[str]]) -> str:
    """CSV by the csv module: a cell holding a comma, a quote or a line break is quoted (a label
    ``a,b`` stays one cell); lines end in ``\n``, with no final newline."""
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows([head, *rows])
    return out.getvalue().removesuffix("\n")


def group_table(result: EvaluationResult, cell=format_value) -> tuple[list[str], list[list[str]]]:
    """The head and one row per group of a result with groups: group, queries, evaluated, then
    each per-query metric's mean over the group's evaluated queries (``cell`` formats the
    numbers), and a last row ``macro`` (the mean of the group means)."""
    per_group = result.per_group
    names = list(per_group.values)
    head = ["group", "queries", "evaluated", *names]
    rows = [
        [str(g), str(n), str(e), *(cell(float(per_group.values[m][i])) for m in names)]
        for i, (g, n, e) in enumerate(
            zip(per_group.groups.tolist(), per_group.n_queries.tolist(), per_group.n_evaluated.tolist(), strict=True)
        )
    ]
    rows.append(["macro", "", "", *(cell(per_group.macro[m]) for m in names)])
    return head, rows
