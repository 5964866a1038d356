"""What the command writes: the result in the chosen format, per-class CSV, reports, progress.

Tables go to stdout; notes ("wrote FILE") and the progress bar to stderr, so stdout can be piped.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .._core.skips import coverage
from .._core.text import (
    aligned_table,
    csv_table,
    format_p_value,
    format_value,
    markdown_table,
    percent,
    wrapped,
)
from .._metrics.interval_notes import interval_caveat
from ._explore import explore_result

FORMATS = ("table", "json", "csv", "markdown")
BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED = 2000, 0  # the intervals of --ci
DEFAULT_LEVEL = 0.95  # intervals are on by default (--no-ci drops them; trec_eval's format has none)


def interval_level(args) -> float | None:
    """The level of the intervals the command prints: ``--ci``, else 0.95, or None with
    ``--no-ci`` or ``--format trec``."""
    if args.ci is not None:
        return args.ci
    if getattr(args, "no_ci", False) or args.format == "trec":
        return None
    return DEFAULT_LEVEL


RANKED_FORMATS = (*FORMATS, "trec")  # the ranked-list commands also print trec_eval's lines


def interval_method(level: float) -> str:
    """How the intervals of ``--ci`` are made, for the reports."""
    return (
        f"{percent(level)} percentile bootstrap over queries ({BOOTSTRAP_RESAMPLES} resamples, seed {BOOTSTRAP_SEED})"
    )


def format_result(result, fmt: str, intervals=None) -> str:
    """The result as ``fmt`` (one of :data:`FORMATS`), with bootstrap ``intervals`` if given.

    Every format shows the same columns: the value (with its interval and the interval's level),
    the macro average where the result has per-class averages, and, except CSV, the definition.
    A set-level metric (``nmi``, ``eer``, ...) has neither interval nor macro average: empty
    cells in CSV, ``-`` in tables, absent from JSON's ``intervals`` and ``macro``, whose
    ``no_interval`` says why.
    """
    level = next(iter(intervals.values())).level if intervals else None
    if fmt == "json":
        from ..stats import no_interval

        payload = {
            "summary": result.summary,
            "intervals": {k: [v.low, v.high] for k, v in intervals.items()} if intervals else None,
            "ci": {"level": level, "method": interval_method(level)} if intervals else None,
            **({"intervals_not_meaningful": interval_caveat(intervals)} if interval_caveat(intervals) else {}),
            **({"no_interval": no_interval(result)} if intervals is not None and result.set_metrics else {}),
            "macro": result.per_class.macro if result.per_class is not None else None,
            "n_queries": result.n_queries,
            "n_evaluated": result.n_evaluated,
            "coverage": coverage(result),
            "skipped": dict(result.skipped),
            "skip_reasons": getattr(result.skipped, "reasons", {}),
            "definitions": result.definitions,
            "conventions": result.conventions,
            "config": {k: v for k, v in result.config.items() if k != "query_ids"},
            **_json_groups(result),
        }
        return json.dumps(payload, indent=2)
    if fmt == "csv":
        macro = result.per_class.macro if result.per_class is not None else None
        head = ["metric", "value", *(["macro"] if macro else []), *(["low", "high", "level"] if intervals else [])]
        rows = [
            [
                name,
                repr(value),
                *([repr(macro[name]) if name in macro else ""] if macro else []),
                *(_interval_cells(intervals.get(name), level) if intervals else []),
            ]
            for name, value in result.summary.items()
        ]
        return csv_table(*_csv_groups(result, head, rows))
    if fmt == "markdown":
        return result.table("markdown", intervals)
    return result.table("table", intervals) + (f"\nintervals: {interval_method(level)}" if intervals else "")


def _json_groups(result) -> dict:
    """JSON's ``per_group`` (``{group: {n_queries, n_evaluated, metric: mean}}``, groups as
    strings) and ``per_group_macro``; nothing without groups."""
    if result.per_group is None:
        return {}
    per_group = {str(g): values for g, values in result.per_group.to_dict().items()}
    return {"per_group": per_group, "per_group_macro": result.per_group.macro}


def _csv_groups(result, head: list[str], rows: list[list[str]]) -> tuple[list[str], list[list[str]]]:
    """With groups, CSV gains a first column ``group``: empty on the overall rows, then one row
    per group and per-query metric (its mean over the group's evaluated queries), and the
    ``macro`` rows (the mean of the group means); the other columns of those rows are empty."""
    if result.per_group is None:
        return head, rows
    per_group, pad = result.per_group, [""] * (len(head) - 2)
    out = [["", *row] for row in rows]
    for i, group in enumerate(per_group.groups.tolist()):
        out += [[str(group), m, repr(float(v[i])), *pad] for m, v in per_group.values.items()]
    out += [["macro", m, repr(v), *pad] for m, v in per_group.macro.items()]
    return ["group", *head], out


def _interval_cells(interval, level) -> list[str]:
    """low, high, level of one CSV row; empty for a metric without interval (set-level)."""
    return ["", "", ""] if interval is None else [repr(interval.low), repr(interval.high), repr(level)]


def emit(result, args, inputs: dict, figure=None) -> None:
    """Print the result in the chosen format, and write the per-class file and the report.

    Parameters
    ----------
    result : EvaluationResult
    args : argparse.Namespace
        Reads ``format``, ``ci`` and, where the command has them, ``per_class`` and ``report``.
    inputs : dict
        What was evaluated, for the report's settings.
    figure : Path, optional
        A PNG for the report.
    """
    intervals = None
    level = interval_level(args)
    if level is not None:
        from ..stats import bootstrap

        intervals = bootstrap(result, confidence=level, n_bootstrap=BOOTSTRAP_RESAMPLES, seed=BOOTSTRAP_SEED)
    if getattr(args, "names", "plain") == "safe":
        result, intervals = safe_names(result, intervals)
    print(_result_text(result, args, intervals))
    if getattr(args, "per_class", None) and result.per_class is not None:
        Path(args.per_class).write_text(per_class_csv(result.per_class) + "\n")
        print(f"wrote {args.per_class}", file=sys.stderr)
    if getattr(args, "report", None):
        from ..report import write_report

        write_report(
            args.report,
            result,
            inputs=inputs,
            figure=figure,
            intervals=intervals,
            interval_method=interval_method(level) if intervals else None,
            command=getattr(args, "command_line", None),
            per_query=getattr(args, "per_query", False),
        )
        print(f"wrote {args.report}", file=sys.stderr)
    explore_result(result, args, intervals)


def safe_names(result, intervals=None):
    """The result (and intervals) with every metric name in the characters every logger accepts
    (``--names safe``: :func:`embedeval._core.names.safe_key`, ``map@r`` -> ``map_at_r``)."""
    import dataclasses

    from .._core.names import safe_key

    def renamed(values: dict) -> dict:
        return {safe_key(k): v for k, v in values.items()}

    changes = {
        name: renamed(getattr(result, name))
        for name in ("summary", "per_query", "definitions")
        if getattr(result, name)
    }
    for name in ("per_class", "per_group"):
        part = getattr(result, name)
        if part is not None:
            changes[name] = dataclasses.replace(part, values=renamed(part.values), macro=renamed(part.macro))
    return dataclasses.replace(result, **changes), None if intervals is None else renamed(intervals)


def _result_text(result, args, intervals) -> str:
    """``format_result``, or trec_eval's lines (``--format trec``), with per-query rows if asked."""
    from ._per_query import per_query_text, trec_lines

    per_query = getattr(args, "per_query", False)
    if args.format == "trec":
        return trec_lines(result, per_query)
    text = format_result(result, args.format, intervals)
    return per_query_text(result, args.format, text, intervals) if per_query else text


def per_class_csv(per_class) -> str:
    """label, count and each metric's class average, one line per class (floats as ``repr``)."""
    names = list(per_class.values)
    rows = [
        [str(label), str(count), *(repr(float(per_class.values[m][i])) for m in names)]
        for i, (label, count) in enumerate(zip(per_class.labels.tolist(), per_class.counts.tolist(), strict=True))
    ]
    return csv_table(["label", "count", *names], rows)


def format_comparison(rows, fmt: str, level: float, n_resamples: int, over: str | None = None) -> str:
    """The rows of :func:`embedeval.stats.compare` as ``fmt``; ``level`` is the interval's;
    ``over`` (:func:`embedeval._core.skips.coverage`) opens the table and Markdown when the
    comparison leaves queries out.

    JSON and CSV share their names (``p_value``, ``p_holm``, ``level``) and give full floats;
    the table and Markdown show p-values one way (:func:`embedeval._core.text.format_p_value`).
    """
    names = ["metric", "a", "b", "difference", "low", "high", "level", "p_value", "p_holm", "n_queries"]
    records = [
        [
            r.metric,
            r.mean_a,
            r.mean_b,
            r.difference.estimate,
            r.difference.low,
            r.difference.high,
            level,
            r.p_value,
            r.p_adjusted,
            r.n_queries,
        ]
        for r in rows
    ]
    if fmt == "json":
        return json.dumps([dict(zip(names, record, strict=True)) for record in records], indent=2)
    if fmt == "csv":
        return csv_table(names, [[record[0], *map(repr, record[1:])] for record in records])
    head = ["metric", "A", "B", f"B - A [{percent(level)} interval]", "p", "p (Holm)"]
    body = [
        [
            r.metric,
            *map(format_value, (r.mean_a, r.mean_b)),
            str(r.difference),
            format_p_value(r.p_value),
            format_p_value(r.p_adjusted),
        ]
        for r in rows
    ]
    opening = f"{wrapped(f'over {over}')}\n\n" if over else ""
    if fmt == "markdown":
        return opening + markdown_table(head, body)
    return (
        opening
        + aligned_table(head, body)
        + (
            f"\n\n{rows[0].n_queries if rows else 0} paired queries; p: paired randomization test "
            f"({n_resamples} sign flips); Holm-adjusted over {len(rows)} metric(s)"
        )
    )


def format_examples(results: dict, fmt: str) -> str:
    """The reality check's table (one row per toy example) as ``fmt``."""
    from ..reality_check import METRICS, TITLES, table

    if fmt in ("table", "markdown"):
        return table(results, markdown=fmt == "markdown")
    if fmt == "csv":
        rows = [[str(k), TITLES[k], *(repr(r.summary[m]) for m in METRICS)] for k, (_, _, r) in results.items()]
        return csv_table(["example", "title", *METRICS], rows)
    payload = [
        {"example": k, "title": TITLES[k], "n": r.n_queries, "summary": {m: r.summary[m] for m in METRICS}}
        for k, (_, _, r) in results.items()
    ]
    return json.dumps(payload, indent=2)
