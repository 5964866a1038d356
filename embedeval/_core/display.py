"""What a notebook shows: HTML tables that read in Jupyter's light and dark themes, and pandas.

Results and comparisons give Jupyter an ``_repr_html_`` built here: the same rows as their text
tables, every cell escaped, no colour of its own (text and rules take the notebook's colour, so
the light and the dark theme both read), the definitions and conventions below the table.
pandas is optional: :func:`require_pandas` imports it when a ``to_pandas`` method is called and
otherwise says the one command that installs it.
"""

from __future__ import annotations

import html

import numpy as np

from .text import html_table

# Colours inherited from the notebook; rules drawn in a grey that reads on white and on black.
_STYLE = (
    "<style>"
    ".embedeval-display table{border-collapse:collapse;margin:0.3em 0;color:inherit;background:transparent}"
    ".embedeval-display th,.embedeval-display td{padding:0.2em 0.7em;text-align:left;"
    "border-bottom:1px solid rgba(128,128,128,0.45);background:transparent;color:inherit}"
    ".embedeval-display td.num{text-align:right;font-variant-numeric:tabular-nums}"
    ".embedeval-display p,.embedeval-display li{margin:0.15em 0}"
    ".embedeval-display .scroll{overflow-x:auto}"
    "</style>"
)
PANDAS_INSTALL = "pip install pandas"


def require_pandas():
    """The pandas module, or ImportError naming the install command."""
    try:
        import pandas
    except ImportError:
        raise ImportError(f"to_pandas() needs pandas, which is not installed: {PANDAS_INSTALL}") from None
    return pandas


def html_block(head: list[str], rows: list[list[str]], *, before=(), after=(), details=None) -> str:
    """One ``<div>``: lines ``before`` the table, the table (numbers right-aligned), lines
    ``after`` it, and ``details`` (a dict of name to sentence) folded under a summary line.

    Every piece of text is escaped; the strings given are plain text, never markup."""
    esc = html.escape
    parts = [f"<p>{esc(line)}</p>" for line in before]
    parts.append(html_table(head, rows, numbers=True))
    parts += [f"<p>{esc(line)}</p>" for line in after]
    if details:
        items = "".join(f"<li><b>{esc(str(k))}</b>: {esc(str(v))}</li>" for k, v in details.items())
        parts.append(f"<details><summary>conventions</summary><ul>{items}</ul></details>")
    return f"<div class='embedeval-display'>{_STYLE}{''.join(parts)}</div>"


def inline_page(page: str, height: int = 720) -> str:
    """A self-contained HTML page shown inside a notebook cell: an ``<iframe>`` holding the page
    in ``srcdoc`` (escaped), so its script and style stay apart from the notebook's."""
    return (
        f'<iframe srcdoc="{html.escape(page, quote=True)}" style=\'width:100%;height:{int(height)}px;'
        "border:1px solid rgba(128,128,128,0.45)' sandbox='allow-scripts'></iframe>"
    )


class InlinePage:
    """An explorer page held in memory (``explore()`` without a path): Jupyter shows it in the
    cell; :meth:`save` writes it to a file.

    Attributes
    ----------
    html : str
        The whole self-contained page.
    """

    def __init__(self, page: str):
        self.html = page

    def save(self, path):
        """Write the page to ``path`` (UTF-8) and return the path."""
        from pathlib import Path

        path = Path(path)
        path.write_text(self.html, encoding="utf-8", errors="surrogateescape")
        return path

    def _repr_html_(self) -> str:
        return inline_page(self.html)

    def __repr__(self) -> str:
        return f"InlinePage({len(self.html.encode('utf-8', 'surrogateescape')):,} bytes; shown inline by Jupyter)"


def result_frames(result) -> dict:
    """The frames of :meth:`embedeval.result.EvaluationResult.to_pandas` (its docstring says
    each), as :func:`frame_of` takes them."""

    def per_query():
        pd = require_pandas()
        columns = {}
        if result.config.get("query_ids") is not None:
            columns["query_id"] = list(result.config["query_ids"])
        for name, values in (("label", result.query_labels), ("group", result.query_groups)):
            if values is not None:
                columns[name] = pd.array(list(np.asarray(values, dtype=object)), dtype=object)
        codes = result.skip_codes if result.skip_codes is not None else np.full(result.n_queries, -1)
        names = list(result.skipped)
        columns["skipped"] = pd.array([names[c] if c >= 0 else None for c in codes.tolist()], dtype=object)
        columns.update({name: np.asarray(v, dtype=np.float64) for name, v in result.per_query.items()})
        return pd.DataFrame(columns, index=pd.RangeIndex(result.n_queries, name="query"))

    def summary():
        frame = {"value": list(result.summary.values())}
        if result.per_class is not None:
            frame["macro"] = [result.per_class.macro.get(n, float("nan")) for n in result.summary]
        frame["definition"] = [result.definitions[n] for n in result.summary]
        return require_pandas().DataFrame(frame, index=require_pandas().Index(list(result.summary), name="metric"))

    def per_class():
        pc = result.per_class
        if pc is None:
            raise ValueError("to_pandas('per_class') needs per-class averages (class labels); this result has none")
        frame = {"n_evaluated": pc.counts, **{m: np.asarray(v, dtype=np.float64) for m, v in pc.values.items()}}
        return require_pandas().DataFrame(frame, index=require_pandas().Index(pc.labels.tolist(), name="label"))

    def per_group():
        if result.per_group is None:
            raise ValueError("to_pandas('per_group') needs groups (evaluate(..., groups=...)); this result has none")
        return require_pandas().DataFrame.from_dict(result.per_group.to_dict(), orient="index").rename_axis("group")

    return {"per_query": per_query, "summary": summary, "per_class": per_class, "per_group": per_group}


def wrap(fragment: str) -> str:
    """Markup made elsewhere (already escaped) in the notebook style of :func:`html_block`."""
    return f"<div class='embedeval-display'>{_STYLE}{fragment}</div>"


class ShownAsTable:
    """What ``print`` and Jupyter show of an object whose ``table(fmt)`` draws it: its text table,
    and its ``"html"`` table in the notebook's colours (the comparisons share it)."""

    def __str__(self) -> str:
        return self.table()

    def _repr_html_(self) -> str:
        return wrap(self.table("html"))


def frame_of(tables: dict, what: str, name: str):
    """``tables[what]()`` (each a function returning a DataFrame), or ValueError naming the choices."""
    if what not in tables:
        raise ValueError(f"'what' must be one of {', '.join(map(repr, tables))} for {name}; got {what!r}")
    require_pandas()
    return tables[what]()


def system_rows(c):
    """``(system, metric, value, low, high, rank, rank_low, rank_high)`` for each system and metric of
    a :class:`~embedeval.stats.SystemComparison`, systems first; ``low``/``high`` None without
    intervals: the cells of the ``"values"`` frame and of the comparison's CSV (``_stats/tables.py``)."""
    for s in c.systems:
        for m in c.metrics:
            lo, hi = c.intervals[s][m] if c.intervals is not None else (None, None)
            rank = c.ranks[m][s]
            yield s, m, c.values[s][m], lo, hi, rank["rank"], rank["low"], rank["high"]


def comparison_frames(c) -> dict:
    """The frames of a :class:`~embedeval.stats.SystemComparison`: ``"values"`` (one row per
    system and metric: ``value``, ``low``/``high`` of its interval, ``rank`` and its interval
    ``rank_low``/``rank_high``), ``"pairs"`` (one row per compared pair and metric, the keys of
    ``c.pairs``)."""

    def values():
        head = ["system", "metric", "value", "low", "high", "rank", "rank_low", "rank_high"]
        frame = require_pandas().DataFrame([list(row) for row in system_rows(c)], columns=head)
        return frame.astype({"value": "float64", "low": "float64", "high": "float64"})

    return {"values": values, "pairs": lambda: require_pandas().DataFrame(c.pairs)}


def across_frames(c) -> dict:
    """The frames of an :class:`~embedeval.stats.AcrossComparison`: ``"scores"`` (datasets x
    systems), ``"ranks"`` (the same shape, 1 = best), ``"mean_ranks"`` (one row per system, the
    keys of ``c.mean_ranks``), ``"pairs"`` (one row per pair; the Bayesian test's three
    probabilities as columns ``p_b_worse``, ``p_equivalent``, ``p_b_better``)."""

    def grid(values):
        pd = require_pandas()
        return pd.DataFrame(
            [[values[d][s] for s in c.systems] for d in c.datasets], index=c.datasets, columns=c.systems
        )

    def pairs():
        pd = require_pandas()
        rows = []
        for pair in c.pairs:
            row = {k: v for k, v in pair.items() if k != "bayes"}
            row.update(pair.get("bayes") or {})
            rows.append(row)
        return pd.DataFrame(rows)

    return {
        "scores": lambda: grid(c.scores).rename_axis(index="dataset", columns="system"),
        "ranks": lambda: grid(c.ranks).rename_axis(index="dataset", columns="system"),
        "mean_ranks": lambda: require_pandas().DataFrame.from_dict(c.mean_ranks, orient="index").rename_axis("system"),
        "pairs": pairs,
    }


def neighbors_frame(n):
    """Neighbours in long form: one row per query and rank (``query``, ``rank`` from 1,
    ``reference``, ``distance``; for kept neighbours also ``relevant`` and, with grades,
    ``grade``), ranks past a query's last rankable reference (index -1) left out."""
    pd = require_pandas()
    n_queries, k = n.indices.shape
    keep = (n.indices >= 0).ravel()
    frame = {
        "query": np.repeat(np.arange(n_queries), k)[keep],
        "rank": np.tile(np.arange(1, k + 1), n_queries)[keep],
        "reference": n.indices.ravel()[keep],
        "distance": n.distances.ravel()[keep].astype(np.float64),
    }
    if getattr(n, "relevant", None) is not None:
        frame["relevant"] = n.relevant.ravel()[keep]
    if getattr(n, "grades", None) is not None:
        frame["grade"] = n.grades.ravel()[keep]
    return pd.DataFrame(frame)
