"""What the command writes: the result in the chosen format, per-class CSV, reports, progress.

Tables go to stdout; notes ("wrote FILE") and the progress bar to stderr, so stdout can be piped.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from .._text import aligned_table, csv_table, format_value, markdown_table, metric_table

FORMATS = ("table", "json", "csv", "markdown")
RANKED_FORMATS = (*FORMATS, "trec")  # the ranked-list commands also print trec_eval's lines


class Progress:
    """A one-line progress bar on stderr, drawn only on a terminal and only after 2 seconds.

    Called as ``progress(done, total)`` by the evaluator after each block of queries.
    """

    def __init__(self, enabled: bool):
        self.enabled = enabled and sys.stderr.isatty()
        self.start = time.perf_counter()
        self.drawn = False

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.start
        if not self.enabled or elapsed < 2 or total == 0:
            return
        width = 30
        filled = int(width * done / total)
        eta = elapsed * (total - done) / max(done, 1)
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} queries, {eta:.0f} s left ")
        sys.stderr.flush()
        self.drawn = True

    def close(self) -> None:
        if self.drawn:
            sys.stderr.write("\n")


def format_result(result, fmt: str, intervals=None) -> str:
    """The result as ``fmt`` (one of :data:`FORMATS`), with bootstrap ``intervals`` if given."""
    if fmt == "json":
        payload = {
            "summary": result.summary,
            "intervals": {k: [v.low, v.high] for k, v in intervals.items()} if intervals else None,
            "macro": result.per_class.macro if result.per_class is not None else None,
            "n_queries": result.n_queries,
            "n_evaluated": result.n_evaluated,
            "skipped": result.skipped,
            "definitions": result.definitions,
            "conventions": result.conventions,
            "config": {k: v for k, v in result.config.items() if k != "query_ids"},
        }
        return json.dumps(payload, indent=2)
    if fmt == "csv":
        head = ["metric", "value", *(["low", "high"] if intervals else [])]
        rows = [
            [k, repr(v), *([repr(intervals[k].low), repr(intervals[k].high)] if intervals else [])]
            for k, v in result.summary.items()
        ]
        return csv_table(head, rows)
    if fmt == "markdown":
        # Unlike the other tables, this one has no macro column and its head says "value" even
        # with intervals: kept as it was until the output formats are revised.
        _, rows = metric_table(result, intervals, macro=False)
        return markdown_table(["metric", "value", "definition"], rows)
    return result.table(intervals)


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
    if args.ci is not None:
        from ..stats import bootstrap

        intervals = bootstrap(result, confidence=args.ci, seed=0)
    print(_result_text(result, args, intervals))
    if getattr(args, "per_class", None) and result.per_class is not None:
        Path(args.per_class).write_text(per_class_csv(result.per_class) + "\n")
        print(f"wrote {args.per_class}", file=sys.stderr)
    if getattr(args, "report", None):
        from ..report import write_report

        write_report(args.report, result, inputs=inputs, figure=figure, intervals=intervals)
        print(f"wrote {args.report}", file=sys.stderr)


def _result_text(result, args, intervals) -> str:
    """``format_result``, or trec_eval's lines (``--format trec``), with per-query rows if asked."""
    from ._per_query import per_query_text, trec_lines

    per_query = getattr(args, "per_query", False)
    if args.format == "trec":
        return trec_lines(result, per_query)
    text = format_result(result, args.format, intervals)
    return per_query_text(result, args.format, text) if per_query else text


def per_class_csv(per_class) -> str:
    """label, count and each metric's class average, one line per class (floats as ``repr``)."""
    names = list(per_class.values)
    rows = [
        [str(label), str(count), *(repr(float(per_class.values[m][i])) for m in names)]
        for i, (label, count) in enumerate(zip(per_class.labels.tolist(), per_class.counts.tolist(), strict=True))
    ]
    return csv_table(["label", "count", *names], rows)


def format_comparison(rows, fmt: str, level: float, n_resamples: int) -> str:
    """The rows of :func:`embedeval.stats.compare` as ``fmt``; ``level`` is the interval's."""
    if fmt == "json":
        payload = [
            {
                "metric": r.metric,
                "a": r.mean_a,
                "b": r.mean_b,
                "difference": r.difference.estimate,
                "low": r.difference.low,
                "high": r.difference.high,
                "p_value": r.p_value,
                "p_holm": r.p_adjusted,
                "n_queries": r.n_queries,
            }
            for r in rows
        ]
        return json.dumps(payload, indent=2)
    if fmt == "csv":
        numbers = [
            [r.mean_a, r.mean_b, r.difference.estimate, r.difference.low, r.difference.high, r.p_value, r.p_adjusted]
            for r in rows
        ]
        head = ["metric", "a", "b", "difference", "low", "high", "p", "p_holm"]
        return csv_table(head, [[r.metric, *map(repr, v)] for r, v in zip(rows, numbers, strict=True)])
    head = ["metric", "A", "B", f"B - A [{level:.0%} interval]", "p", "p (Holm)"]
    body = [
        [
            r.metric,
            *map(format_value, (r.mean_a, r.mean_b)),
            str(r.difference),
            f"{r.p_value:.4g}",
            f"{r.p_adjusted:.4g}",
        ]
        for r in rows
    ]
    if fmt == "markdown":
        return markdown_table(head, body)
    return aligned_table(head, body) + (
        f"\n\n{rows[0].n_queries if rows else 0} paired queries; p: paired randomization test "
        f"({n_resamples} sign flips); Holm-adjusted over {len(rows)} metric(s)"
    )
