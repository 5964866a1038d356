"""Reports: one Markdown or HTML file with the table, the figure and the configuration."""

from __future__ import annotations

import base64
import html
import platform
from pathlib import Path

from ._text import html_table, markdown_table, metric_table
from .result import EvaluationResult


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


def write_report(path, result: EvaluationResult, *, inputs: dict, figure=None, intervals=None) -> Path:
    """Write ``path`` (.md or .html): metric table, figure, inputs, settings, conventions, versions.

    Parameters
    ----------
    inputs : dict
        What was evaluated (file names, sizes), shown as given.
    figure : path of a PNG, optional
        Linked from Markdown (relative to the report), embedded in HTML.
    intervals : dict of str to Interval, optional
        Shown as ``value [low, high]``.
    """
    path = Path(path)
    if path.suffix.lower() not in (".md", ".html", ".htm"):
        raise ValueError(f"report file must end in .md or .html; got {path.name!r}")
    settings = {
        **inputs,
        **{k: v for k, v in result.config.items() if k != "query_ids"},
        "queries": f"{result.n_queries} given, {result.n_evaluated} evaluated",
        **{f"skipped: {reason}": n for reason, n in result.skipped.items() if n},
    }
    head, rows = metric_table(result, intervals)
    sections = [("Settings", settings), ("Conventions", result.conventions), ("Versions", _versions())]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".md":
        path.write_text(_markdown(head, rows, figure, sections, path.parent))
    else:
        path.write_text(_html(head, rows, figure, sections))
    return path


def _markdown(head: list[str], rows: list[list[str]], figure, sections, folder: Path) -> str:
    """The report as Markdown; the figure is linked relative to the report's ``folder`` where it lies inside it."""
    lines = ["# embedeval report", "", markdown_table(head, rows)]
    if figure is not None:
        fig, here = Path(figure).resolve(), folder.resolve()
        rel = fig.relative_to(here) if fig.is_relative_to(here) else fig
        lines += ["", f"![evaluation]({rel.as_posix()})"]
    for title, items in sections:
        lines += ["", f"## {title}", ""] + [f"- **{k}**: {v}" for k, v in items.items()]
    return "\n".join(lines) + "\n"


def _html(head: list[str], rows: list[list[str]], figure, sections) -> str:
    """The report as one self-contained HTML page: the figure is embedded as base64."""
    esc = html.escape
    img = ""
    if figure is not None:
        data = base64.b64encode(Path(figure).read_bytes()).decode()
        img = f'<p><img alt="evaluation" src="data:image/png;base64,{data}"></p>'
    body = "".join(
        f"<h2>{esc(t)}</h2><ul>"
        + "".join(f"<li><b>{esc(str(k))}</b>: {esc(str(v))}</li>" for k, v in items.items())
        + "</ul>"
        for t, items in sections
    )
    style = (
        "body{font-family:sans-serif;max-width:60em}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}"
    )
    return (
        f"<!doctype html><meta charset='utf-8'><title>embedeval report</title><style>{style}</style>"
        f"<h1>embedeval report</h1>{html_table(head, rows)}{img}{body}\n"
    )
