"""Reports: one Markdown or HTML file with the table, the figure and the configuration."""

from __future__ import annotations

import base64
import html
import platform
from pathlib import Path

from ._text import markdown_table
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


def _rows(result: EvaluationResult, intervals) -> list[list[str]]:
    """Metric, value (with interval), macro average (embeddings only), definition."""
    rows = []
    for name, value in result.summary.items():
        row = [name, str(intervals[name]) if intervals else f"{value:.4f}"]
        if result.per_class is not None:
            row.append(f"{result.per_class.macro[name]:.4f}")
        rows.append([*row, result.definitions[name]])
    return rows


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
    head = ["metric", "value" + (" [interval]" if intervals else "")]
    head += (["macro"] if result.per_class is not None else []) + ["definition"]
    rows = _rows(result, intervals)
    sections = [("Settings", settings), ("Conventions", result.conventions), ("Versions", _versions())]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix.lower() == ".md":
        lines = ["# embedeval report", "", markdown_table(head, rows)]
        if figure is not None:
            fig, here = Path(figure).resolve(), path.parent.resolve()
            rel = fig.relative_to(here) if fig.is_relative_to(here) else fig
            lines += ["", f"![evaluation]({rel.as_posix()})"]
        for title, items in sections:
            lines += ["", f"## {title}", ""] + [f"- **{k}**: {v}" for k, v in items.items()]
        path.write_text("\n".join(lines) + "\n")
    else:
        esc = html.escape
        table = "<table><tr>" + "".join(f"<th>{esc(h)}</th>" for h in head) + "</tr>"
        table += "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in r) + "</tr>" for r in rows) + "</table>"
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
            "body{font-family:sans-serif;max-width:60em}"
            "td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #ddd}"
        )
        path.write_text(
            f"<!doctype html><meta charset='utf-8'><title>embedeval report</title><style>{style}</style>"
            f"<h1>embedeval report</h1>{table}{img}{body}\n"
        )
    return path
