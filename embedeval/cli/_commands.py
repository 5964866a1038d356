"""One function per command: check the arguments, load the files, evaluate, emit.

Each takes the parsed ``argparse.Namespace`` and returns the exit status. Problems visible
before any file is read are collected and raised together as :class:`UsageError`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .._metrics import EMBEDDINGS, RANKINGS, parse_metrics
from ._loaders import load_array, load_ids, load_keys, load_label_sets, load_labels, load_pairs
from ._output import Progress, emit, format_comparison, format_examples

_PLOT_METRICS = [f"recall@{k}" for k in range(1, 21)] + ["map@r"]  # what --plot draws


class UsageError(Exception):
    """Problems with the command line, one message each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def _argument_problems(paths: dict[str, str | None], metrics: list[str], form: str) -> list[str]:
    """Every problem visible before loading anything: missing files and bad metric names."""
    problems = [f"{name}: no such file: {p}" for name, p in paths.items() if p is not None and not Path(p).is_file()]
    for name in metrics:
        try:
            parse_metrics([name], form)
        except ValueError as exc:
            problems.append(f"--metrics: {exc}")
    return problems


def _set_level_problems(metrics: list[str]) -> list[str]:
    """compare pairs per-query values: set-level metrics (nmi, eer, ...) have none."""
    problems = []
    for name in metrics:
        try:
            parsed = parse_metrics([name], EMBEDDINGS)
        except ValueError:
            continue  # reported by _argument_problems
        problems += [
            f"--metrics: {m.name!r} is one number for the whole set; compare pairs per-query values, so evaluate "
            "it with 'embedeval evaluate' for each set"
            for m in parsed
            if not m.per_query
        ]
    return problems


def _report_problems(report: str | None) -> list[str]:
    if report and Path(report).suffix.lower() not in (".md", ".html", ".htm"):
        return [f"--report must end in .md or .html; got {report}"]
    return []


def _check_rows(labels, rows, labels_arg: str, rows_arg: str) -> None:
    """One label per row, said in the command's terms (the arguments and their files); an array
    of another shape than (n, d) is left to evaluate's own message."""
    if rows.ndim == 2 and len(labels) != len(rows):
        raise UsageError([f"{labels_arg} must hold one label per row of {rows_arg} ({len(rows)}); got {len(labels)}"])


def evaluate_command(args) -> int:
    """``embedeval evaluate``: embeddings with class labels, leave-one-out or against a gallery."""
    from .._evaluate import evaluate

    paths = {
        "EMBEDDINGS": args.embeddings,
        "LABELS": args.labels,
        "--reference": args.reference,
        "--reference-labels": args.reference_labels,
        **_ignore_paths(args, "reference"),
    }
    problems = _argument_problems(paths, args.metrics, EMBEDDINGS)
    if (args.reference is None) != (args.reference_labels is None):
        problems.append("--reference and --reference-labels go together; give both or neither")
    problems += _ignore_problems(args, "reference", separate=args.reference is not None)
    problems += _report_problems(args.report)
    for flag, value in (("--block-size", args.block_size), ("--threads", args.threads)):
        if value is not None and value < 1:
            problems.append(f"{flag} must be >= 1; got {value}")
    if problems:
        raise UsageError(problems)
    # Canonical names ("recall@010" -> "recall@10"): the result is keyed by them, and the extra
    # metrics the figure needs are dropped by them.
    shown = [m.name for m in parse_metrics(args.metrics, EMBEDDINGS)]
    embeddings = load_array(Path(args.embeddings), "embeddings", args.key)
    read_labels = load_label_sets if args.multi_label else load_labels
    labels = read_labels(Path(args.labels), args.label_key)
    _check_rows(labels, embeddings, f"LABELS ({args.labels})", f"EMBEDDINGS ({args.embeddings})")
    gallery = _ignore_arguments(args, "reference", positions=True)
    if args.reference is not None:
        gallery.update(
            reference=load_array(Path(args.reference), "reference", args.key),
            reference_labels=read_labels(Path(args.reference_labels), args.label_key),
        )
        _check_rows(
            gallery["reference_labels"],
            gallery["reference"],
            f"--reference-labels ({args.reference_labels})",
            f"--reference ({args.reference})",
        )
    drawing = bool(args.plot or args.report)
    progress = Progress(not args.quiet)
    try:
        full = evaluate(
            embeddings,
            labels,
            metrics=shown + (_PLOT_METRICS if drawing else []),
            distance=args.distance,
            block_size=args.block_size,
            n_threads=args.threads,
            device=args.device,
            progress=progress,
            ties=args.ties,
            **gallery,
        )
    finally:
        progress.close()
    figure = None
    if drawing and full.n_evaluated == 0:
        flag = "--plot" if args.plot else "--report"
        raise UsageError([f"{flag}: no figure to draw, no query was evaluated (every label has a single member)"])
    if drawing:
        from ..plotting import plot_evaluation

        figure = Path(args.plot) if args.plot else Path(args.report).with_suffix(".png")
        plot_evaluation(full.select(_PLOT_METRICS), figure, title=Path(args.embeddings).name)
        print(f"wrote {figure}", file=sys.stderr)
    inputs = {"embeddings": f"{args.embeddings} {tuple(np.shape(embeddings))}", "labels": args.labels}
    if args.reference:
        inputs.update(reference=args.reference, reference_labels=args.reference_labels)
    emit(full.select(shown), args, inputs, figure)
    return 0


def compare_command(args) -> int:
    """``embedeval compare``: two embedding sets of the same items, paired per query."""
    from .._evaluate import evaluate
    from ..stats import compare

    problems = _argument_problems({"A": args.a, "B": args.b, "LABELS": args.labels}, args.metrics, EMBEDDINGS)
    problems += _set_level_problems(args.metrics)
    if args.resamples < 1:
        problems.append(f"--resamples must be >= 1; got {args.resamples}")
    if problems:
        raise UsageError(problems)
    a_rows, b_rows = load_array(Path(args.a), "A", args.key), load_array(Path(args.b), "B", args.key)
    if len(a_rows) != len(b_rows):
        raise UsageError(
            [f"A ({args.a}) and B ({args.b}) must embed the same items; got {len(a_rows)} and {len(b_rows)} rows"]
        )
    labels = load_labels(Path(args.labels), args.label_key)
    _check_rows(labels, a_rows, f"LABELS ({args.labels})", f"A and B ({args.a}, {args.b})")
    a = evaluate(a_rows, labels, metrics=args.metrics, distance=args.distance)
    b = evaluate(b_rows, labels, metrics=args.metrics, distance=args.distance)
    level = args.ci or 0.95
    rows = compare(a, b, confidence=level, n_resamples=args.resamples, seed=args.seed)
    print(format_comparison(rows, args.format, level, args.resamples))
    return 0


def _ranked_problems(args, paths: dict[str, str]) -> list[str]:
    """Every problem of a ranked-list command's arguments, found before any file is read."""
    from .._graded import check_threshold

    problems = _argument_problems(paths, args.metrics, RANKINGS)
    problems += _report_problems(args.report)
    if args.report and not Path(args.report).resolve().parent.is_dir():
        problems.append(f"--report: no such folder for {args.report}")
    try:
        check_threshold(args.threshold)
    except ValueError:
        problems.append(f"--threshold must be a number > 0 (grade 0 is never relevant); got {args.threshold}")
    if args.format == "trec" and args.ci is not None:
        problems.append("--ci has no place in --format trec (trec_eval prints no intervals); drop one of them")
    return problems


def _warnings_as_lines(command: str, caught) -> None:
    """Warnings of the evaluation as one line each on stderr, the way the command reports notes."""
    for w in caught:
        print(f"embedeval {command}: warning: {w.message}", file=sys.stderr)


def rankings_command(args) -> int:
    """``embedeval rankings``: a TREC run file against a TREC qrels file."""
    import warnings

    from .._trec import evaluate_files

    problems = _ranked_problems(args, {"RUN": args.run_file, "QRELS": args.qrels})
    if problems:
        raise UsageError(problems)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result, coverage = evaluate_files(
            args.run_file,
            args.qrels,
            parse_metrics(args.metrics, RANKINGS),
            args.threshold,
            args.empty,
            args.complete,
            args.ties,
        )
    _coverage_notes(coverage, args.complete)
    _warnings_as_lines("rankings", caught)
    emit(result, args, {"run": args.run_file, "qrels": args.qrels})
    return 0


def _coverage_notes(coverage, complete: bool) -> None:
    def queries(n: int, one: str, many: str) -> str:
        return f"{n} {one if n == 1 else many}"

    if coverage.run_without_judgements:
        n = coverage.run_without_judgements
        print(
            f"embedeval rankings: note: {queries(n, 'ranked query has', 'ranked queries have')} no judgements "
            f"and {'is' if n == 1 else 'are'} left out, as in trec_eval",
            file=sys.stderr,
        )
    if coverage.judged_without_run:
        n = coverage.judged_without_run
        what = queries(n, "judged query has", "judged queries have")
        if complete:
            print(f"embedeval rankings: note: {what} no run and count as empty rankings (--complete)", file=sys.stderr)
        else:
            print(
                f"embedeval rankings: note: {what} no run and {'is' if n == 1 else 'are'} left out; --complete counts "
                "them as 0, as trec_eval -c",
                file=sys.stderr,
            )


def scores_command(args) -> int:
    """``embedeval scores``: a queries x items score matrix against a relevance matrix."""
    import warnings

    from .._scores import evaluate_scores

    problems = _ranked_problems(args, {"SCORES": args.scores, "RELEVANCE": args.relevance})
    if problems:
        raise UsageError(problems)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = evaluate_scores(
            load_array(Path(args.scores), "scores"),
            load_array(Path(args.relevance), "relevance"),
            metrics=args.metrics,
            threshold=args.threshold,
            empty=args.empty,
            ties=args.ties,
        )
    _warnings_as_lines("scores", caught)
    emit(result, args, {"scores": args.scores, "relevance": args.relevance})
    return 0


def reality_check_command(args) -> int:
    """``embedeval reality-check``: the toy examples' table on stdout and their figures."""
    from ..plotting import plot_reality_check
    from ..reality_check import evaluate_examples

    fmt = args.format
    if args.markdown:  # kept working for scripts that use it
        if fmt not in ("table", "markdown"):
            raise UsageError([f"--markdown (deprecated) conflicts with --format {fmt}; use --format alone"])
        print("embedeval reality-check: warning: --markdown is deprecated; use --format markdown", file=sys.stderr)
        fmt = "markdown"
    if args.n < 4:
        raise UsageError([f"--n must be an int >= 4 (one point per strip); got {args.n}"])
    results = evaluate_examples(n=args.n, seed=args.seed)
    print(format_examples(results, fmt))
    paths = plot_reality_check(results, args.out)
    paths += _confidence_figures(args.n, args.seed, Path(args.out))
    for path in paths:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _confidence_figures(n: int, seed: int, out: Path) -> list[Path]:
    """The seed's confidence experiment on example 2, and its error-vs-reject curves."""
    from ..confidence import error_reject_curves
    from ..plotting import plot_confidence_experiment, plot_error_reject
    from ..reality_check import confidence_experiment

    exp = confidence_experiment(n=n, seed=seed)
    level = 0.2
    confidence = np.where(exp["is_error"], level, exp["base_confidence"])
    curves = error_reject_curves(exp["result"], confidence)
    title = f"Example 2, {exp['is_error'].sum()} injected label errors at confidence {level}"
    return [
        plot_confidence_experiment(exp, out / "confidence_experiment.png"),
        plot_error_reject(curves, out / "error_reject.png", title=title),
    ]


def _ignore_paths(args, reference: str) -> dict:
    return {
        "--ignore": args.ignore,
        "--ignore-same-query": args.ignore_same_query,
        f"--ignore-same-{reference}": getattr(args, f"ignore_same_{reference}"),
    }


def _ignore_problems(args, reference: str, separate: bool) -> list[str]:
    """--ignore-same-query and --ignore-same-REFERENCE go together (in leave-one-out the second may be left out)."""
    other = getattr(args, f"ignore_same_{reference}")
    if other is not None and args.ignore_same_query is None:
        return [f"--ignore-same-{reference} needs --ignore-same-query"]
    if separate and args.ignore_same_query is not None and other is None:
        return [f"--ignore-same-query needs --ignore-same-{reference} (a key per {reference})"]
    return []


def _ignore_arguments(args, reference: str, positions: bool) -> dict:
    """The ``ignore`` and ``ignore_same`` arguments the ignore options ask for (files read now)."""
    out = {}
    if args.ignore is not None:
        out["ignore"] = load_pairs(Path(args.ignore), positions)
    if args.ignore_same_query is not None:
        query_keys = load_keys(Path(args.ignore_same_query))
        other = getattr(args, f"ignore_same_{reference}")
        out["ignore_same"] = (query_keys, query_keys if other is None else load_keys(Path(other)))
    return out


def retrieval_command(args) -> int:
    """``embedeval retrieval``: query and corpus embeddings against a TREC qrels file."""
    from .._retrieval import evaluate_retrieval
    from ..io import read_qrels

    paths = {
        "QUERIES": args.queries,
        "CORPUS": args.corpus,
        "QRELS": args.qrels,
        "--query-ids": args.query_ids,
        "--corpus-ids": args.corpus_ids,
        **_ignore_paths(args, "corpus"),
    }
    problems = _argument_problems(paths, args.metrics, RANKINGS) + _report_problems(args.report)
    problems += _ignore_problems(args, "corpus", separate=True)
    if args.ignore_same_id and args.ignore_same_query is not None:
        problems.append("--ignore-same-id and --ignore-same-query are two ways to give keys; choose one")
    for flag, value in (("--block-size", args.block_size), ("--threads", args.threads)):
        if value is not None and value < 1:
            problems.append(f"{flag} must be >= 1; got {value}")
    if problems:
        raise UsageError(problems)
    queries = load_array(Path(args.queries), "queries", args.key)
    corpus = load_array(Path(args.corpus), "corpus", args.key)
    qrels = read_qrels(args.qrels)
    query_ids = load_ids(Path(args.query_ids)) if args.query_ids else list(qrels)
    if args.query_ids is None and len(query_ids) != len(queries):
        raise UsageError(
            [f"QUERIES has {len(queries)} rows but QRELS names {len(query_ids)} queries; give --query-ids"]
        )
    corpus_ids = load_ids(Path(args.corpus_ids)) if args.corpus_ids else [str(i) for i in range(len(corpus))]
    extra = _ignore_arguments(args, "corpus", positions=False)
    if args.ignore_same_id:
        extra["ignore_same"] = (query_ids, corpus_ids)
    progress = Progress(not args.quiet)
    try:
        result = evaluate_retrieval(
            queries,
            corpus,
            qrels,
            query_ids=query_ids,
            corpus_ids=corpus_ids,
            metrics=args.metrics,
            distance=args.distance,
            threshold=args.threshold,
            empty=args.empty,
            block_size=args.block_size,
            n_threads=args.threads,
            device=args.device,
            progress=progress,
            ties=args.ties,
            **extra,
        )
    finally:
        progress.close()
    inputs = {"queries": f"{args.queries} {tuple(np.shape(queries))}", "corpus": args.corpus, "qrels": args.qrels}
    emit(result, args, inputs)
    return 0
