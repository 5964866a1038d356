"""Writing the explorer's page: the template, script and stylesheet (package data) around the data.

The page is one file that works from disk and asks for nothing over the network: its script and
stylesheet are copied into it, and its data sits in a ``<script type="application/json">``
element. The only addresses it may hold are the thumbnails the user gives (``images=``).
"""

from __future__ import annotations

import html
from importlib.resources import files
from pathlib import Path

from .._core.display import InlinePage
from .json_text import dumps, for_script, readable


def _asset(name: str) -> str:
    return files(__package__).joinpath(name).read_text(encoding="utf-8")


def render(data: dict) -> str:
    """The page's HTML text for ``data`` (``data["kind"]``: "result" or "comparison")."""
    page = _asset("template.html")
    for key, value in (
        ("/*STYLE*/", _asset("explorer.css")),
        ("/*SCRIPT*/", _asset("explorer.js")),
        ("/*DATA*/", for_script(dumps(data))),
        ("<!--TITLE-->", html.escape(readable(str(data.get("title", "embedeval"))))),
    ):
        page = page.replace(key, value, 1)
    return page


def write(data: dict, path):
    """Write the page of ``data`` to ``path`` (UTF-8) and return the path; with ``path`` None,
    return the page in memory (:class:`~embedeval._core.display.InlinePage`, shown by Jupyter)."""
    if path is None:
        return InlinePage(render(data))
    path = Path(path)
    path.write_text(render(data), encoding="utf-8")
    return path
