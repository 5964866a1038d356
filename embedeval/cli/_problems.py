"""The command line's checks before any file is read, and how problems and warnings are said.

Every problem visible from the arguments alone is collected, and all are raised together as one
:class:`UsageError`, which the entry point prints one line each.
"""

from __future__ import annotations

import contextlib
import os
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
    """Every problem visible before loading anything: input files that cannot be read
    (:func:`input_problem`) and bad metric names."""
    problems = [problem for name, p in paths.items() if p is not None and (problem := input_problem(name, p))]
    for name in metrics:
        try:
            parse_metrics([name], form)
        except ValueError as exc:
            problems.append(f"--metrics: {exc}")
    return problems


def below_one(args, *flags: str) -> list[str]:
    """One line per integer option among ``flags`` given below 1 (an option not given is None)."""
    values = ((flag, getattr(args, flag[2:].replace("-", "_"))) for flag in flags)
    return [f"{flag} must be >= 1; got {value}" for flag, value in values if value is not None and value < 1]


def input_problem(name: str, path: str) -> str | None:
    """What keeps the input file ``path`` (given as ``name``) from being read, in one line; None
    for a readable file. A pipe, a process substitution (``<(seq 1 200)``, ``/dev/fd/63``) and
    ``-`` (standard input) are refused with the reason: an input is read more than once (checked,
    then evaluated; a TREC file is read again to name a bad line), which a pipe cannot give."""
    once = "embedeval reads an input more than once (to check it, then to evaluate it); save it to a file first"
    if path == "-":
        return f"{name}: '-' (standard input) is not read here: {once}"
    p = Path(path)
    if p.is_file():
        return None if os.access(p, os.R_OK) else f"{name}: {path} cannot be read (permission denied)"
    if p.is_dir():
        return f"{name}: {path} is a folder, not a file"
    if p.exists():
        return f"{name}: {path} is a pipe or a device, not a file (as <(...) gives): {once}"
    return f"{name}: no such file: {path}"


def output_problem(flag: str, path: str) -> str | None:
    """What keeps ``flag`` from writing the file ``path``, in one line; None if it can be written.
    Checked before any work, so that an evaluation does not run to its end and then fail to
    write."""
    p = Path(path)
    folder = p.resolve().parent
    if p.is_dir():
        return f"{flag}: {path} is a folder; give a file name"
    if not folder.is_dir():
        return f"{flag}: no such folder for {path} ({folder}); create it first"
    if not os.access(folder, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        return f"{flag}: {path} cannot be written (permission denied)"
    return None


def folder_problems(flag: str, folder: str) -> list[str]:
    """What keeps ``flag`` from writing into ``folder`` (created with its parents if missing):
    a file in its place or on its path, or a folder that cannot be written."""
    existing = Path(folder).absolute()
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        return [f"{flag}: {existing} is a file; give a folder for the files (it is created if missing)"]
    if not os.access(existing, os.W_OK):
        return [f"{flag}: {existing} cannot be written (permission denied)"]
    return []


# The options that name a file to write, on every command that has them
_OUTPUTS = {"report": "--report", "plot": "--plot", "per_class": "--per-class", "explore": "--explore"}


def output_problems(args) -> list[str]:
    """Every problem of the files a command will write (:data:`_OUTPUTS`; ``--report``'s suffix
    too) and of ``--images`` (a readable UTF-8 text file), found before any work."""
    problems = report_problems(getattr(args, "report", None))
    for dest, flag in _OUTPUTS.items():
        value = getattr(args, dest, None)
        if isinstance(value, str) and (problem := output_problem(flag, value)):
            problems.append(problem)
    images = getattr(args, "images", None)
    if images is not None:
        problem = input_problem("--images", images)
        if problem is None and Path(images).suffix.lower() not in (".parquet", ".npz", ".npy"):
            try:
                Path(images).read_bytes().decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                problem = f"--images: {images} is not UTF-8 text ({exc.reason} at byte {exc.start})"
        if problem is None:
            problem = _images_problem(Path(images), getattr(args, "images_key", None))
        problems += [problem] if problem else []
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
    problems += output_problems(args)
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


def _images_problem(path: Path, key) -> str | None:
    """Whether ``--images`` reads as one thumbnail per line (or as its ``--images-key`` column)."""
    from ._loaders import load_labels

    try:
        load_labels(path, key, what="images")
    except (ValueError, KeyError, OSError) as exc:
        return f"--images: {exc}"
    return None
