"""A comparison of systems as text: an aligned table, Markdown, CSV, JSON or LaTeX.

Two tables in the text formats: the systems (each metric's value, its interval and the rank
interval), then the pairs (B minus A, its interval, the p-values, the effect size and the
win/tie/loss counts), and a legend saying how every number was made. LaTeX prints the systems'
table with significance marks, as papers do.
"""

from __future__ import annotations

import html
import json

from .._core import display
from .._core.text import (
    aligned_table,
    csv_table,
    format_p_value,
    format_value,
    html_table,
    markdown_escape,
    markdown_table,
    percent,
    wrapped,
)

_CORRECTION_NAMES = {"holm": "Holm", "bonferroni": "Bonferroni", "bh": "BH", "none": "none"}


def span(low: int, high: int) -> str:
    """A whole-number interval (of ranks, of places): ``"2"``, or ``"1-3"``."""
    return f"{low}" if low == high else f"{low}-{high}"


def valued(value: float, interval=None) -> str:
    """A value as tables show it, with its interval where there is one: ``0.4265 [0.4012, 0.4533]``."""
    return format_value(value) + ("" if interval is None else " [{}, {}]".format(*map(format_value, interval)))


def noted(out: dict, notes: list[str]) -> dict:
    """A legend ``out`` followed by its comparison's ``notes``, keyed ``note`` or ``note 1``, ``note 2``, ..."""
    return out | {f"note {i + 1}" if len(notes) > 1 else "note": note for i, note in enumerate(notes)}


def _rank(cell: dict, n: int) -> str:
    if cell["low"] is None:
        return f"{cell['rank']} of {n}"
    return f"{cell['rank']} ({span(cell['low'], cell['high'])} of {n})"


def system_rows(c) -> tuple[list[str], list[list[str]]]:
    level = c.settings["confidence"]
    suffix = f" [{percent(level)} interval]" if level is not None else ""
    head = ["system", *(["runs"] if any(n > 1 for n in c.n_runs.values()) else [])]
    for m in c.metrics:
        head += [f"{m}{suffix}", "rank"]
    rows = []
    for s in c.systems:
        name = f"{s} (baseline)" if s == c.settings["baseline"] else s
        row = [name, *([str(c.n_runs[s])] if len(head) > 1 + 2 * len(c.metrics) else [])]
        for m in c.metrics:
            interval = None if c.intervals is None else c.intervals[s][m]
            row += [valued(c.values[s][m], interval), _rank(c.ranks[m][s], len(c.systems))]
        rows.append(row)
    return head, rows


def pair_rows(c) -> tuple[list[str], list[list[str]]]:
    level = c.settings["confidence"]
    name = _CORRECTION_NAMES[c.settings["correction"]]
    tukey = c.settings["pairs"] == "all"
    head = [
        "metric",
        "pair (B - A)",
        f"difference [{percent(level)} interval]" if level is not None else "difference",
        "p",
        f"p ({name})",
        *(["p (Tukey HSD)"] if tukey else []),
        "d_z",
        "W/T/L",
    ]
    rows = []
    for r in c.pairs:
        diff = valued(r["difference"], None if r["low"] is None else (r["low"], r["high"]))
        rows.append(
            [
                r["metric"],
                f"{r['b']} - {r['a']}",
                diff + (" *" if r["significant"] else ""),
                format_p_value(r["p_value"]),
                format_p_value(r["p_adjusted"]),
                *([format_p_value(r["p_tukey"])] if tukey else []),
                f"{r['effect_size']:.2f}",
                f"{r['wins']}/{r['ties']}/{r['losses']}",
            ]
        )
    return head, rows


def legend(c) -> dict[str, str]:
    """How every number was made: ``{what: how}``, one sentence each (the text formats print
    ``what: how`` a line; the reports list them)."""
    s = c.settings
    name = _CORRECTION_NAMES[s["correction"]]
    n_tests = len(c.pairs)
    runs = ", runs then queries (two levels)" if s["hierarchical"] else ""
    out = {"queries": f"{c.n_queries} compared, paired by query; seed {s['seed']}"}
    if s["confidence"] is not None:
        out["intervals"] = (
            f"{percent(s['confidence'])} percentile bootstrap, {s['n_bootstrap']} resamples of the queries{runs}"
        )
        out["rank"] = "1 = highest value; (low-high of n): its interval over the same resamples"
    count = {"randomization": f", {s['n_resamples']} resamples", "bootstrap": f", {s['n_bootstrap']} resamples"}
    out["p"] = s["test_method"] + count.get(s["test"], "")
    out[f"p ({name})"] = (
        f"{s['correction_method']} over {n_tests} comparison{'s' if n_tests != 1 else ''} (pairs x metrics)"
    )
    if s["pairs"] == "all":
        out["p (Tukey HSD)"] = (
            f"randomised Tukey HSD (Sakai), {s['n_resamples']} permutations of the systems within each query; "
            "controls the family-wise error over the pairs of each metric"
        )
    out["significant (marked *)"] = f"{'p (Tukey HSD)' if s['pairs'] == 'all' else f'p ({name})'} < {s['alpha']}"
    out["d_z"] = "mean / standard deviation of the per-query differences (Cohen's d_z)"
    out["W/T/L"] = "queries where B is above / equal to / below A"
    return noted(out, c.notes)


def _lines(d: dict) -> list[str]:
    """``what: how`` a line, for the text formats."""
    return [f"{k}: {v}" for k, v in d.items()]


def _cell(x) -> str:
    """A CSV cell: empty for None, else the value's repr (all its digits)."""
    return "" if x is None else repr(x)


def _csv(c) -> str:
    head = ["kind", "a", "b", "metric", "value", "low", "high", "rank", "rank_low", "rank_high", "p_value",
            "p_adjusted", "p_tukey", "effect_size", "wins", "ties", "losses", "n_queries"]  # fmt: skip
    rows = [
        ["system", s, "", m, *map(_cell, cells), *[""] * 7, _cell(c.n_queries)]
        for s, m, *cells in display.system_rows(c)
    ]
    for r in c.pairs:
        rows.append(["pair", r["a"], r["b"], r["metric"], _cell(r["difference"]), _cell(r["low"]),
                     _cell(r["high"]), "", "", "", *(_cell(r[k]) for k in ("p_value", "p_adjusted", "p_tukey",
                     "effect_size", "wins", "ties", "losses", "n_queries"))])  # fmt: skip
    return csv_table(head, rows)


FORMATS = ("csv", "html", "json", "latex", "markdown", "table")


def render_as(c, fmt: str, tables, blocks, csv, latex, head=()) -> str:
    """A comparison ``c`` (either kind) as ``fmt``, one of :data:`FORMATS`.

    ``"json"`` is ``c.to_dict()``; ``"csv"`` and ``"latex"`` are ``csv(c)`` and ``latex(c)``. The
    text formats (``"table"``, ``"markdown"``, ``"html"``) print the ``head`` lines, then the
    (head, rows) of each of ``tables`` (functions of ``c``), then the ``{what: how}`` of each of
    ``blocks`` (likewise), ``what: how`` a line (a paragraph per block in ``"table"``, one list in
    the other two).
    """
    if fmt not in FORMATS:
        raise ValueError(f"'fmt' must be one of {list(FORMATS)}; got {fmt!r}")
    if fmt == "json":
        return json.dumps(c.to_dict(), indent=2)
    if fmt in ("csv", "latex"):
        return (csv if fmt == "csv" else latex)(c)
    parts, said = [t(c) for t in tables], [b(c) for b in blocks]
    if fmt == "table":
        return "\n\n".join([*head, *(aligned_table(*t) for t in parts), *("\n".join(_lines(b)) for b in said)])
    if fmt == "markdown":
        listed = "\n".join(f"- {markdown_escape(x)}" for b in said for x in _lines(b))
        return "\n\n".join([*head, *(markdown_table(*t) for t in parts), listed])
    esc = html.escape
    items = "".join(f"<li><b>{esc(k)}</b>: {esc(v)}</li>" for b in said for k, v in b.items())
    return "\n".join([*(f"<p>{esc(line)}</p>" for line in head), *(html_table(*t) for t in parts), f"<ul>{items}</ul>"])


def render(c, fmt: str) -> str:
    """``c`` (a SystemComparison) as ``fmt``."""
    head = [wrapped(f"over {c.coverage}")] if c.coverage else []
    return render_as(c, fmt, (system_rows, pair_rows), (legend,), _csv, _latex, head)


def _tex(text: str) -> str:
    out = text.replace("\\", r"\textbackslash{}")
    for ch in "&%$#_{}":
        out = out.replace(ch, "\\" + ch)
    return out.replace("~", r"\textasciitilde{}").replace("^", r"\textasciicircum{}")


def _latex(c) -> str:
    """A booktabs tabular: the systems' values, the best of each metric in bold, and marks of
    significance after the correction (against the baseline: dagger above, double dagger below;
    all pairs: the letters of the systems a value is significantly above)."""
    s = c.settings
    letters = {name: chr(ord("a") + i) for i, name in enumerate(c.systems)} if s["pairs"] == "all" else {}
    marks = {(x, m): "" for x in c.systems for m in c.metrics}
    for r in c.pairs:
        if not r["significant"]:
            continue
        if letters:
            winner, loser = (r["b"], r["a"]) if r["difference"] > 0 else (r["a"], r["b"])
            marks[winner, r["metric"]] += letters[loser]
        else:
            marks[r["b"], r["metric"]] = r"\dagger" if r["difference"] > 0 else r"\ddagger"
    best = {m: max(c.values[x][m] for x in c.systems) for m in c.metrics}
    lines = [r"\begin{tabular}{l" + "r" * len(c.metrics) + "}", r"\toprule"]
    lines.append("System & " + " & ".join(_tex(m) for m in c.metrics) + r" \\")
    lines.append(r"\midrule")
    for x in c.systems:
        name = _tex(x) + (f" ({letters[x]})" if letters else "") + (" (baseline)" if x == s["baseline"] else "")
        cells = []
        for m in c.metrics:
            v = format_value(c.values[x][m])
            v = rf"\textbf{{{v}}}" if c.values[x][m] == best[m] else v
            mark = "".join(sorted(marks[x, m])) if letters else marks[x, m]
            cells.append(v + (f"$^{{{mark}}}$" if mark else ""))
        lines.append(f"{name} & " + " & ".join(cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    corrected = (
        "randomised Tukey HSD" if letters else f"{_CORRECTION_NAMES[s['correction']]}-corrected {s['test']} test"
    )
    if letters:
        what = "superscript letters: significantly above the systems with those letters"
    else:
        what = r"$^{\dagger}$/$^{\ddagger}$: significantly above/below the baseline"
    lines.append(
        f"% {what} ({corrected}, p < {s['alpha']}, {c.n_queries} queries, seed {s['seed']}); bold: best per metric"
    )
    return "\n".join(lines)
