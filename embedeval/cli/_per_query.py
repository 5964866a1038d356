"""Per-query values (``--per-query``, trec_eval's ``-q``) in every format, and trec_eval's own
output lines (``--format trec``), for the ranked-list commands.

trec_eval prints ``measure<TAB>query<TAB>value`` with the measure left-aligned in 22 columns and
the value as ``%6.4f``; with ``-q`` each query's lines come first, then the averages under the
query ``all``. ``--format trec`` prints the same, with trec_eval's measure names (``P_10``,
``ndcg_cut_10``) where trec_eval has the measure and embedeval's name otherwise (``mrr@10``).
Queries are printed in the byte order of their ids, as trec_eval does, and with trec_eval's
conventions: ``--format trec`` scores a query without relevant items 0 and averages it in
(``--empty zero``, the only choice there). With ``--complete`` the other formats list queries in
that order too.
"""

from __future__ import annotations

import json
import math

from .._core.skips import coverage
from .._core.text import aligned_table, csv_table, format_value, markdown_table
from .._metrics.trec_names import trec_name


def query_names(result) -> list[str]:
    """The query ids of a result (``config["query_ids"]``), or the row numbers."""
    ids = result.config.get("query_ids")
    return [str(q) for q in ids] if ids is not None else [str(i) for i in range(result.n_queries)]


def trec_lines(result, per_query: bool) -> str:
    """trec_eval's output of ``result``: per-query lines if asked, then the ``all`` lines."""
    names = {m: trec_name(m) for m in result.per_query}
    lines = []
    if per_query:
        queries = query_names(result)
        for i in sorted(range(len(queries)), key=lambda i: queries[i].encode()):  # trec_eval's order
            query = queries[i]
            for m, name in names.items():
                value = float(result.per_query[m][i])
                if not math.isnan(value):
                    lines.append(f"{name:<22}\t{query}\t{value:6.4f}")
    lines += [f"{name:<22}\tall\t{result.summary[m]:6.4f}" for m, name in names.items()]
    return "\n".join(lines)


def _order(result) -> list[int]:
    """The rows' order: the result's, or with ``--complete`` (every judged query, as trec_eval
    ``-c``) the byte order of the query ids, where trec_eval puts a judged query without a run."""
    queries = query_names(result)
    if not result.config.get("complete"):
        return list(range(len(queries)))
    return sorted(range(len(queries)), key=lambda i: queries[i].encode())


def _rows(result, cell) -> tuple[list[str], list[list[str]]]:
    metrics, queries = list(result.per_query), query_names(result)
    rows = [[queries[i], *(cell(float(result.per_query[m][i])) for m in metrics)] for i in _order(result)]
    rows.append(["all", *(cell(result.summary[m]) for m in metrics)])
    return ["query", *metrics], rows


def per_query_text(result, fmt: str, summary: str, intervals: dict | None = None) -> str:
    """The per-query values as ``fmt``, one row per query and a last row ``all`` (the summary);
    ``summary`` is the result's usual output in that format, which the table, Markdown and JSON
    keep (with their interval columns). In CSV, ``intervals`` (``--ci``) add two last rows,
    ``all low`` and ``all high``: each metric's interval bounds."""
    if fmt == "json":
        payload = json.loads(summary)
        payload["per_query"] = {
            query: {
                m: (None if math.isnan(v) else v)
                for m, v in ((m, float(result.per_query[m][i])) for m in result.per_query)
            }
            for i, query in enumerate(query_names(result))
        }
        return json.dumps(payload, indent=2)
    if fmt == "csv":
        head, rows = _rows(result, repr)
        if intervals:
            for side in ("low", "high"):
                rows.append(
                    [f"all {side}", *(repr(getattr(intervals[m], side)) if m in intervals else "" for m in head[1:])]
                )
        return csv_table(head, rows)
    over = coverage(result)
    head = f"all: mean over {over}\n\n" if over else ""
    if fmt == "markdown":
        return head + markdown_table(*_rows(result, format_value)) + "\n\n" + summary
    return head + aligned_table(*_rows(result, format_value), rule="columns") + "\n\n" + summary
