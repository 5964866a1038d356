"""Reports: one Markdown or HTML file with the table, the figure and the configuration."""

from __future__ import annotations

import base64
import html
import platform
from datetime import datetime
from pathlib import Path

from ._core.skips import coverage
from ._core.text import format_value, group_table, html_table, markdown_table, metric_table, percent
from ._metrics.interval_notes import interval_caveat, interval_note
from .result import EvaluationResult

# The figure scales down to the column (it is drawn 1200 px wide); names and numbers in the table
# never break, its last column (the definition) wraps; a long command line or setting breaks
# anywhere rather than widening the page.
_STYLE = (
    "body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em;line-height:1.4}"
    "img{max-width:100%;height:auto}"
    "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;vertical-align:top;"
    "border-bottom:1px solid #ddd}td:not(:last-child),th:not(:last-child){white-space:nowrap}"
    "code,li{overflow-wrap:anywhere}.meta{color:#555}.scroll{overflow-x:auto}.nowrap td,.nowrap th{white-space:nowrap}"
)


_GROUPS_NOTE = "Each metric's mean over the group's evaluated queries; macro: the mean of the group means."


def _versions() -> dict[str, str]:
    import faiss
    import numpy

    from . import __version__

    return {
        "embedeval": __version__,
        "numpy": numpy.__version__,
        "faiss": faiss.__version__,
        "python": platform.python_version(),
    }


def _start(path, command: str | None) -> tuple[Path, dict]:
    """The report's path, checked to end in .md or .html, and its header (when, and by what command)."""
    path = Path(path)
    if path.suffix.lower() not in (".md", ".html", ".htm"):
        raise ValueError(f"report file must end in .md or .html; got {path.name!r}")
    header = {"created": datetime.now().astimezone().isoformat(sep=" ", timespec="seconds")}
    return path, {**header, "command": command} if command else header


def _write(path: Path, header, head, rows, figure, sections, groups=None, wrap_last=True) -> Path:
    """``path`` written as Markdown or HTML (by its suffix), its folder made where missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".md":
        path.write_text(_markdown(header, head, rows, figure, sections, path.parent, groups))
    else:
        path.write_text(_html(header, head, rows, figure, sections, groups, wrap_last))
    return path


def write_report(
    path,
    result: EvaluationResult,
    *,
    inputs: dict,
    figure=None,
    intervals=None,
    interval_method: str | None = None,
    command: str | None = None,
    per_query: bool = False,
) -> Path:
    """Write ``path`` (.md or .html): when and how it was made, metric table, figure, inputs,
    settings, conventions, versions.

    Parameters
    ----------
    inputs : dict
        What was evaluated (file names, sizes), shown as given.
    figure : path of a PNG, optional
        Linked from Markdown (relative to the report), embedded in HTML (scaled to the page width).
    intervals : dict of str to Interval, optional
        Shown as ``value [low, high]``; the table's head gives their level.
    interval_method : str, optional
        How the intervals were made (e.g. "95% percentile bootstrap over queries (2000
        resamples, seed 0)"); default: their level.
    command : str, optional
        The command line that made the report, shown at the top.
    per_query : bool
        Add a table of every query's values (a row per query, NaN where it was skipped), as the
        command line's ``--per-query`` prints.
    """
    path, header = _start(path, command)
    over = coverage(result)
    if over:
        header["mean over"] = over
    settings = {
        **inputs,
        **{k: _setting(v) for k, v in result.config.items() if k != "query_ids"},
        "queries": f"{result.n_queries} given, {result.n_evaluated} evaluated",
        **{f"skipped: {_reason(result, code)}": n for code, n in result.skipped.items() if n},
    }
    if intervals:
        level = next(iter(intervals.values())).level
        settings["intervals"] = interval_method or (f"{percent(level)} intervals" if level else "intervals")
    note = interval_note(result, intervals)
    if note:
        settings["no interval"] = note.removeprefix("no interval for ")
    caveat = interval_caveat(intervals)
    if caveat:
        settings["intervals not meaningful"] = caveat
    head, rows = metric_table(result, intervals)
    tables = [("Per query", *_per_query_table(result))] if per_query and result.per_query else []
    sections = [("Settings", settings), ("Conventions", result.conventions), ("Versions", _versions())]
    groups = None if result.per_group is None else group_table(result)
    return _write(path, header, head, rows, figure, tables + sections, groups)


def _per_query_table(result: EvaluationResult) -> tuple[list[str], list[list[str]]]:
    """query, then each per-query metric's value (``nan`` where the query was skipped)."""
    ids = result.config.get("query_ids")
    names = [str(q) for q in ids] if ids is not None else [str(i) for i in range(result.n_queries)]
    metrics = list(result.per_query)
    rows = [[q, *(format_value(float(result.per_query[m][i])) for m in metrics)] for i, q in enumerate(names)]
    return ["query", *metrics], rows


def _reason(result: EvaluationResult, code: str) -> str:
    return getattr(result.skipped, "reasons", {}).get(code, code)


def _setting(value) -> object:
    """A setting as shown: a nested dict (the k-means settings, verification counts) as ``key=value, ...``."""
    if isinstance(value, dict):
        return ", ".join(f"{k}={_setting(v)}" for k, v in value.items())
    return value


def _markdown(header: dict, head: list[str], rows: list[list[str]], figure, sections, folder: Path, groups=None) -> str:
    """The report as Markdown; the figure is linked relative to the report's ``folder`` where it lies inside it."""
    lines = ["# embedeval report", ""]
    lines += [f"{k.capitalize()}: `{v}`  " if k == "command" else f"{k.capitalize()}: {v}  " for k, v in header.items()]
    lines += ["", markdown_table(head, rows)]
    if figure is not None:
        fig, here = Path(figure).resolve(), folder.resolve()
        rel = fig.relative_to(here) if fig.is_relative_to(here) else fig
        lines += ["", f"![evaluation]({rel.as_posix()})"]
    if groups is not None:
        lines += ["", "## Per group", "", _GROUPS_NOTE, "", markdown_table(*groups)]
    for title, *items in sections:
        if len(items) == 2:  # a table: head, rows
            lines += ["", f"## {title}", "", markdown_table(*items)]
        else:
            lines += ["", f"## {title}", ""] + [f"- **{k}**: {v}" for k, v in items[0].items()]
    return "\n".join(lines) + "\n"


def _html(header: dict, head: list[str], rows: list[list[str]], figure, sections, groups=None, wrap_last=True) -> str:
    """The report as one self-contained HTML page: the figure is embedded as base64. A table's
    last column wraps (``wrap_last``: the evaluation's definitions) or no cell does."""
    esc = html.escape
    nowrap = not wrap_last
    img = ""
    if figure is not None:
        data = base64.b64encode(Path(figure).read_bytes()).decode()
        img = f'<p><img alt="evaluation" src="data:image/png;base64,{data}"></p>'
    meta = "".join(
        f"<p class='meta'>{esc(k.capitalize())}: " + (f"<code>{esc(v)}</code>" if k == "command" else esc(v)) + "</p>"
        for k, v in header.items()
    )
    if groups is not None:
        img += f"<h2>Per group</h2><p>{esc(_GROUPS_NOTE)}</p>{html_table(*groups, nowrap=nowrap)}"

    def listed(items: dict) -> str:
        return "<ul>" + "".join(f"<li><b>{esc(str(k))}</b>: {esc(str(v))}</li>" for k, v in items.items()) + "</ul>"

    body = "".join(
        f"<h2>{esc(t)}</h2>" + (html_table(*items, nowrap=nowrap) if len(items) == 2 else listed(items[0]))
        for t, *items in sections
    )
    return (
        f"<!doctype html><meta charset='utf-8'><meta name='viewport' content='width=device-width'>"
        f"<title>embedeval report</title><style>{_STYLE}</style>"
        f"<h1>embedeval report</h1>{meta}{html_table(head, rows, nowrap=nowrap)}{img}{body}\n"
    )


def write_comparison_report(path, comparison, *, inputs: dict | None = None, command: str | None = None) -> Path:
    """Write ``path`` (.md or .html) for a :func:`embedeval.stats.compare_systems` result: the
    systems' table (values, intervals, rank intervals), the pairs' table (differences,
    p-values, effect sizes, win/tie/loss), how each number was made, the inputs and versions.
    """
    from ._stats.tables import legend, pair_rows, system_rows

    path, header = _start(path, command)
    sections = [("Pairs", *pair_rows(comparison)), ("Method", legend(comparison))]
    sections += [("Inputs", inputs)] if inputs else []
    sections.append(("Versions", _versions()))
    head, rows = system_rows(comparison)
    return _write(path, header, head, rows, None, sections, wrap_last=False)
