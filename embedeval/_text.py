"""Plain-text and Markdown tables for command output and reports."""

from __future__ import annotations


def markdown_table(head: list[str], rows: list[list[str]]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in rows])


def aligned_table(head: list[str], rows: list[list[str]]) -> str:
    """Columns padded to their widest cell, two spaces apart, no trailing spaces."""
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [head, *rows])
