"""``embedeval compare``: N systems (TREC runs with a qrels, or embeddings with a labels file),
told apart by their content; two embedding files alone keep the two-system table.

Runs take their qrels first (``compare QRELS RUN1 RUN2``, trec_eval's order); embeddings take
their labels last (``compare A B LABELS``, as ``evaluate EMBEDDINGS LABELS``). Every other
positional file is one system (named after its file); ``--system NAME=F1,F2`` gives a system
several runs (seeds, folds).
"""

from __future__ import annotations

import sys
from pathlib import Path

from .._metrics.registry import DEFAULT_EMBEDDING_METRICS, DEFAULT_RANKING_METRICS, EMBEDDINGS, RANKINGS
from . import _compare_dense as dense
from ._argparse import REMOVED_IN
from ._explore import explore_comparison
from ._output import interval_level
from ._problems import UsageError, argument_problems, below_one, output_problems, set_level_problems

_RUN = "run"
_QRELS = "qrels"
_TEXT_KINDS = {
    _RUN: "a TREC run (qid Q0 docid rank score tag)",
    _QRELS: "a TREC qrels file (qid iteration docid grade)",
}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _line_kind(fields: list[str]) -> str:
    """The kind one line of text reads as. A row of numbers whose first three fields are not all
    integers is a row of embeddings, whatever its width; ids of runs and qrels are words or integers."""
    if fields[:2] == ["query-id", "corpus-id"]:  # BEIR's qrels header
        return _QRELS
    if all(map(_is_number, fields)) and not all(f.lstrip("-").isdigit() for f in fields[:3]):
        return "other"
    if len(fields) == 6 and fields[3].lstrip("-").isdigit() and _is_number(fields[4]):
        return _RUN
    if len(fields) == 4 and _is_number(fields[3]):
        return _QRELS
    return "other"


def sniff(path: Path) -> str:
    """``"run"``, ``"qrels"`` or ``"other"`` (embeddings or labels), from the first line that is
    neither blank nor a ``#`` comment."""
    if path.suffix.lower() in (".npy", ".npz", ".parquet"):
        return "other"
    from .._forms.trec.lines import trec_lines  # the fields as every TREC reader splits them

    with path.open("rb") as f:
        for _, _, raw in trec_lines(f):
            fields = [field.decode("utf-8", errors="replace") for field in raw]
            if fields and not fields[0].startswith("#"):
                return _line_kind(fields)
    return "other"


def _systems(args) -> tuple[dict[str, list[str]], list[str]]:
    """({name: [file, ...]}, problems) from the positional files and --system."""
    systems: dict[str, list[str]] = {}
    problems = []
    for path in args.inputs[:-1]:
        name = Path(path).name.rsplit(".", 1)[0] if "." in Path(path).name else Path(path).name
        base, i = name, 2
        while name in systems:
            name, i = f"{base}_{i}", i + 1
        systems[name] = [path]
    for spec in args.system or []:
        name, sep, files = spec.partition("=")
        runs = [f for f in files.split(",") if f]
        if not sep or not name or not runs:
            problems.append(f"--system must be NAME=FILE[,FILE...] (the runs of one system); got {spec!r}")
        elif name in systems:
            problems.append(f"--system {name}: the name is taken; each system needs its own name")
        else:
            systems[name] = runs
    return systems, problems


def _kind_problems(systems: dict[str, list[str]], judgements: str) -> tuple[str, list[str]]:
    """("runs" or "embeddings", one line per file of the wrong kind)."""
    last = sniff(Path(judgements))
    kinds = {f: sniff(Path(f)) for files in systems.values() for f in files}
    problems = [
        f"{f} is {_TEXT_KINDS[_QRELS]}, not a system: give the qrels once, first"
        for f, k in kinds.items()
        if k == _QRELS
    ]
    if last == _RUN:
        return "runs", [
            f"the last file ({judgements}) is {_TEXT_KINDS[_RUN]} and the first is no qrels: give the qrels first "
            "(QRELS RUN1 RUN2), or embeddings then their labels last (A B LABELS)",
            *problems,
        ]
    if last == _QRELS:
        problems += [
            f"{f} is not a TREC run (qid Q0 docid rank score tag), and the last file ({judgements}) is a qrels: "
            "runs and embeddings cannot be compared in one table"
            for f, k in kinds.items()
            if k == "other"
        ]
        return "runs", problems
    problems += [
        f"{f} is {_TEXT_KINDS[_RUN]}, but the last file ({judgements}) is not a qrels: "
        "give a qrels first to compare runs, "
        "or only embedding files with a labels file"
        for f, k in kinds.items()
        if k == _RUN
    ]
    return "embeddings", problems


def _new_options(args) -> bool:
    return bool(
        args.system
        or args.baseline
        or args.all_pairs
        or args.test
        or args.correction
        or args.no_ci
        or args.format == "latex"
        or args.explore
    )


def _comparison_problems(args, names) -> list[str]:
    """The options of the comparison itself, whatever the systems' kind."""
    problems = output_problems(args) + below_one(args, "--resamples", "--bootstrap")
    if args.baseline is not None and args.baseline not in names:
        problems.append(f"--baseline must name a system ({', '.join(names)}); got {args.baseline!r}")
    if args.baseline is not None and args.all_pairs:
        problems.append("--baseline and --all-pairs exclude each other: a baseline, or every pair")
    return problems


def _judgements_last(args) -> None:
    """Runs take their qrels first (``compare QRELS RUN1 RUN2``), as trec_eval and every command
    that takes both; the qrels is moved last, where the embeddings' labels go (``compare A B
    LABELS``). A qrels given last (the order before 0.1) is read with a warning until 0.2."""
    files = [Path(f) for f in args.inputs or []]
    if len(files) < 2 or not files[0].is_file():
        return
    if sniff(files[0]) == _QRELS:
        args.inputs = [*args.inputs[1:], args.inputs[0]]
    elif files[-1].is_file() and sniff(files[-1]) == _QRELS and sniff(files[0]) == _RUN:
        print(
            f"embedeval compare: warning: the qrels last (RUN ... QRELS) is deprecated and goes in {REMOVED_IN}; "
            "give QRELS RUN1 RUN2 ..., judgements first as trec_eval",
            file=sys.stderr,
        )


def _twice(paths: dict[str, str]) -> list[str]:
    """One line per file given as two systems (or two runs of one): it would differ from itself
    by 0 everywhere, which says nothing about either."""
    first: dict[Path, str] = {}
    problems = []
    for name, f in paths.items():
        where = Path(f).resolve()
        if where in first:
            problems.append(
                f"{f} is given twice ({first[where]} and {name}): a file compared with itself differs by 0 "
                "everywhere; give each system its own file"
            )
        first.setdefault(where, name)
    return problems


def compare_command(args) -> int:
    """``embedeval compare``: per metric, each system's value and the paired comparisons."""
    if dense.asked(args):
        if args.distance is None:
            args.distance = "cosine"  # as embedeval retrieval
        results, inputs = dense.evaluate_pairs(args, lambda names: _comparison_problems(args, names))
        return _compare(args, results, inputs)
    if args.distance is None:
        args.distance = "euclidean"
    _judgements_last(args)
    systems, problems = _systems(args)
    problems += dense.other_form_problems(args)
    if len(systems) < 2:
        problems.append(
            f"give at least two systems and their judgements (QRELS RUN1 RUN2, or A B LABELS); got {len(systems)}"
        )
    paths = {
        f"{name} ({Path(f).name})" if len(files) > 1 else name: f for name, files in systems.items() for f in files
    }
    missing = argument_problems({**paths, "judgements": args.inputs[-1] if args.inputs else None}, [], EMBEDDINGS)
    problems += _comparison_problems(args, systems)
    problems += _twice(paths) if not missing else []
    kind, wrong = ("embeddings", []) if missing or not args.inputs else _kind_problems(systems, args.inputs[-1])
    form = RANKINGS if kind == "runs" else EMBEDDINGS
    if args.metrics is None:
        args.metrics = list(DEFAULT_RANKING_METRICS if kind == "runs" else DEFAULT_EMBEDDING_METRICS)
    wrong += argument_problems({}, args.metrics, form)
    if kind == "embeddings":
        wrong += set_level_problems(args.metrics)
    if problems or missing or wrong:
        raise UsageError(missing + wrong + problems)
    if kind == "embeddings" and len(systems) == 2 and not _new_options(args):
        from ._commands import two_embeddings

        return two_embeddings(args, *(files[0] for files in systems.values()), args.inputs[-1])
    results = _evaluate_runs(args, systems) if kind == "runs" else _evaluate_embeddings(args, systems)
    inputs = {name: ", ".join(files) for name, files in systems.items()}
    inputs["judgements"] = args.inputs[-1]
    return _compare(args, results, inputs)


def _compare(args, results: dict, inputs: dict[str, str]) -> int:
    """Compare the evaluated systems and print (and write) the tables."""
    from ..stats import compare_systems

    try:
        comparison = compare_systems(
            results,
            baseline=args.baseline,
            pairs="all" if args.all_pairs else "baseline",
            test=args.test,
            correction=args.correction or "holm",
            confidence=interval_level(args),
            n_resamples=args.resamples,
            n_bootstrap=args.bootstrap,
            seed=args.seed,
        )
    except ValueError as exc:
        raise UsageError([str(exc)]) from None
    print(comparison.table(args.format))
    if args.report:
        from ..report import write_comparison_report

        write_comparison_report(args.report, comparison, inputs=inputs, command=getattr(args, "command_line", None))
        print(f"wrote {args.report}", file=sys.stderr)
    explore_comparison(comparison, args)
    return 0


def _evaluate_runs(args, systems: dict[str, list[str]]) -> dict:
    from .._forms.trec.evaluate import evaluate_files
    from .._metrics.registry import parse_metrics

    parsed = parse_metrics(args.metrics, RANKINGS)
    out, unranked, problems = {}, {}, []
    for name, files in systems.items():
        runs = []
        for f in files:
            try:
                result, coverage = evaluate_files(f, args.inputs[-1], parsed, args.threshold, args.empty, True)
            except ValueError as exc:
                problems.append(f"{name} ({f}): {exc}")
                continue
            if not coverage.judged_with_run:  # scored 0 on every query: not a comparison, as rankings says
                problems.append(
                    f"{name} ({f}): no query of the run appears in the qrels ({coverage.run_without_judgements} "
                    f"ranked queries, {coverage.judged_without_run} judged); "
                    "check that both files use the same query ids"
                )
            unranked[f] = coverage.judged_without_run
            runs.append(result)
        out[name] = runs if len(runs) > 1 else runs[0] if runs else None
    if problems:
        raise UsageError(problems)
    for f, n in unranked.items():
        if n:
            print(
                f"embedeval compare: note: {f} ranks nothing for {n} judged "
                f"{'query' if n == 1 else 'queries'}: scored 0 there (trec_eval -c), so every run has the same queries",
                file=sys.stderr,
            )
    return out


def _evaluate_embeddings(args, systems: dict[str, list[str]]) -> dict:
    from .._embeddings.evaluate import evaluate
    from ._loaders import load_array, load_labels
    from ._problems import check_rows

    labels = load_labels(Path(args.inputs[-1]), args.label_key)
    out = {}
    for name, files in systems.items():
        runs = []
        for f in files:
            rows = load_array(Path(f), name, args.key)
            check_rows(labels, rows, f"LABELS ({args.inputs[-1]})", f"{name} ({f})")
            runs.append(evaluate(rows, labels, metrics=args.metrics, distance=args.distance))
        out[name] = runs if len(runs) > 1 else runs[0]
    return out
