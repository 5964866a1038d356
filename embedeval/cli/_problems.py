"""The command line's checks before any file is read, and how problems and warnings are said.

Every problem visible from the arguments alone is collected, and all are raised together as one
:class:`UsageError`, which the entry point prints one line each.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from pathlib import Path

from .._metrics.registry import EMBEDDINGS, RANKINGS, parse_metrics


class UsageError(Exception):
    """Problems with the command line, one message each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def argument_problems(paths: dict[str, str | None], metrics: list[str], form: str) -> list[str]:
    """Every problem visible before loading anything: missing files and bad metric names."""
    problems = [f"{name}: no such file: {p}" for name, p in paths.items() if p is not None and not Path(p).is_file()]
    for name in metrics:
        try:
            parse_metrics([name], form)
        except ValueError as exc:
            problems.append(f"--metrics: {exc}")
    return problems


def set_level_problems(metrics: list[str]) -> list[str]:
    """compare pairs per-query values: set-level metrics (nmi, eer, ...) have none."""
    problems = []
    for name in metrics:
        try:
            parsed = parse_metrics([name], EMBEDDINGS)
        except ValueError:
            continue  # reported by argument_problems
        problems += [
            f"--metrics: {m.name!r} is one number for the whole set; compare pairs per-query values, so evaluate "
            "it with 'embedeval evaluate' for each set"
            for m in parsed
            if not m.per_query
        ]
    return problems


def report_problems(report: str | None) -> list[str]:
    if report and Path(report).suffix.lower() not in (".md", ".html", ".htm"):
        return [f"--report must end in .md or .html; got {report}"]
    return []


def check_rows(labels, rows, labels_arg: str, rows_arg: str) -> None:
    """One label per row, said in the command's terms (the arguments and their files); an array
    of another shape than (n, d), or of no numbers (a 2-D array of strings), is left to
    evaluate's own message, which names the dtype."""
    if rows.ndim == 2 and getattr(rows, "dtype", None) is not None and rows.dtype.kind not in "biuf":
        return
    if rows.ndim == 2 and len(labels) != len(rows):
        raise UsageError([f"{labels_arg} must hold one label per row of {rows_arg} ({len(rows)}); got {len(labels)}"])


def ranked_problems(args, paths: dict[str, str]) -> list[str]:
    """Every problem of a ranked-list command's arguments, found before any file is read."""
    from .._forms.graded import check_threshold

    problems = argument_problems(paths, args.metrics, RANKINGS)
    problems += report_problems(args.report)
    if args.report and not Path(args.report).resolve().parent.is_dir():
        problems.append(f"--report: no such folder for {args.report}")
    try:
        check_threshold(args.threshold)
    except ValueError:
        problems.append(f"--threshold must be a number > 0 (grade 0 is never relevant); got {args.threshold}")
    if args.format == "trec" and args.empty == "skip":
        problems.append(
            "--empty skip has no place in --format trec (trec_eval scores a query without relevant items 0 and "
            "averages it in); drop one of them"
        )
    if args.empty is None:  # trec_eval's format means trec_eval's conventions
        args.empty = "zero" if args.format == "trec" else "skip"
    if args.format == "trec" and args.ci is not None:
        problems.append("--ci has no place in --format trec (trec_eval prints no intervals); drop one of them")
    if args.format == "trec" and args.groups is not None:
        problems.append("--groups has no place in --format trec (trec_eval has no groups); choose another --format")
    if args.format == "trec" and args.names == "safe":
        problems.append("--names safe has no place in --format trec (it prints trec_eval's names); drop one of them")
    return problems


@contextlib.contextmanager
def warnings_as_lines(command: str):
    """Warnings raised inside the block, printed as one line each on stderr when it ends (after
    whatever the block printed), the way the command reports notes."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        print(f"embedeval {command}: warning: {w.message}", file=sys.stderr)
