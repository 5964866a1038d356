"""One function per command: check the arguments, load the files, evaluate, emit.

Each takes the parsed ``argparse.Namespace`` and returns the exit status. Problems visible
before any file is read are collected and raised together as
:class:`~embedeval.cli._problems.UsageError`; the ranked-list commands are in :mod:`._ranked`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from .._core.progress import TerminalBar as Progress
from .._core.skips import coverage
from .._metrics.registry import EMBEDDINGS, RANKINGS, parse_metrics
from ._explore import explore_depth
from ._judgements import beir_problems, load_judgements, restricted, retrieval_options
from ._loaders import load_array, load_groups, load_keys, load_label_sets, load_labels, load_pairs
from ._output import emit, format_comparison, format_examples, interval_level
from ._problems import UsageError, argument_problems, below_one, check_rows, folder_problems, output_problems

_PLOT_METRICS = [f"recall@{k}" for k in range(1, 21)] + ["map@r"]  # what --plot draws


def _searched(evaluate_function, args, *inputs, **options):
    """``evaluate_function`` (evaluate or evaluate_retrieval) with the search options every
    embedding command shares, and the progress line on stderr unless --quiet."""
    progress = Progress(not args.quiet)
    try:
        return evaluate_function(
            *inputs,
            distance=args.distance,
            block_size=args.block_size,
            n_threads=args.threads,
            device=args.device,
            progress=progress,
            ties=args.ties,
            keep_neighbors=explore_depth(args, len(inputs[0])),
            **options,
        )
    finally:
        progress.close()


def evaluate_command(args) -> int:
    """``embedeval evaluate``: embeddings with class labels, leave-one-out or against a gallery."""
    from .._embeddings.evaluate import evaluate

    paths = {
        "EMBEDDINGS": args.embeddings,
        "LABELS": args.labels,
        "--reference": args.reference,
        "--reference-labels": args.reference_labels,
        "--groups": args.groups,
        "--oml": args.oml,
        **_ignore_paths(args, "reference"),
    }
    problems = argument_problems(paths, args.metrics, EMBEDDINGS) + _oml_problems(args)
    if (args.reference is None) != (args.reference_labels is None):
        problems.append("--reference and --reference-labels go together; give both or neither")
    problems += _ignore_problems(args, "reference", separate=args.reference is not None)
    problems += output_problems(args)
    problems += below_one(args, "--block-size", "--threads")
    if problems:
        raise UsageError(problems)
    # Canonical names ("recall@010" -> "recall@10"): the result is keyed by them, and the extra
    # metrics the figure needs are dropped by them.
    shown = [m.name for m in parse_metrics(args.metrics, EMBEDDINGS)]
    embeddings = load_array(Path(args.embeddings), "embeddings", args.key)
    embeddings, labels, gallery = _labelled_inputs(args, embeddings)
    drawing = bool(args.plot or args.report)
    full = _searched(evaluate, args, embeddings, labels, metrics=shown + (_PLOT_METRICS if drawing else []), **gallery)
    figure = None
    if drawing and full.n_evaluated == 0:
        flag = "--plot" if args.plot else "--report"
        raise UsageError([f"{flag}: no figure to draw, no query was evaluated (every label has a single member)"])
    if drawing:
        from ..plotting import plot_evaluation

        figure = Path(args.plot) if args.plot else Path(args.report).with_suffix(".png")
        plot_evaluation(full.select(_PLOT_METRICS), figure, title=Path(args.embeddings).name)
        print(f"wrote {figure}", file=sys.stderr)
    inputs = {"embeddings": f"{args.embeddings} {tuple(np.shape(embeddings))}", "labels": args.labels or args.oml}
    if args.reference:
        inputs.update(reference=args.reference, reference_labels=args.reference_labels)
    emit(full.select(shown), args, inputs, figure)
    return 0


def _oml_problems(args) -> list[str]:
    """LABELS or --oml, one of them; --oml brings its own gallery, sequences and groups."""
    problems = ["give LABELS or --oml CSV, one of them"] if (args.labels is None) == (args.oml is None) else []
    if args.oml is None:
        return problems
    clashes = {
        "--reference": args.reference,
        "--reference-labels": args.reference_labels,
        "--ignore-same-query": args.ignore_same_query,
        "--ignore-same-reference": args.ignore_same_reference,
        "--ignore": args.ignore,
        "--groups": args.groups,
        "--multi-label": args.multi_label or None,
    }
    return problems + [
        f"{flag} has no place with --oml (the table gives the gallery, the sequences to ignore and the groups)"
        for flag, value in clashes.items()
        if value is not None
    ]


def _labelled_inputs(args, embeddings):
    """(queries, labels, other arguments of evaluate) from LABELS and the gallery options, or from --oml."""
    if args.oml is not None:
        from ..io import read_oml

        inputs = read_oml(args.oml).inputs(embeddings)
        return inputs.pop("embeddings"), inputs.pop("labels"), inputs
    read_labels = load_label_sets if args.multi_label else load_labels
    labels = read_labels(Path(args.labels), args.label_key)
    check_rows(labels, embeddings, f"LABELS ({args.labels})", f"EMBEDDINGS ({args.embeddings})")
    gallery = _ignore_arguments(args, "reference", positions=True)
    gallery.update(row_groups(args, embeddings, f"EMBEDDINGS ({args.embeddings})"))
    if args.reference is not None:
        gallery.update(
            reference=load_array(Path(args.reference), "reference", args.key),
            reference_labels=read_labels(Path(args.reference_labels), args.label_key),
        )
        check_rows(
            gallery["reference_labels"],
            gallery["reference"],
            f"--reference-labels ({args.reference_labels})",
            f"--reference ({args.reference})",
        )
    return embeddings, labels, gallery


def two_embeddings(args, a_path: str, b_path: str, labels_path: str) -> int:
    """``embedeval compare A B LABELS`` (two embedding files, no option of the N-system table):
    the two-system table of :func:`embedeval.stats.compare`, as before the N-system form."""
    from .._embeddings.evaluate import evaluate
    from ..stats import compare

    args.a, args.b, args.labels = a_path, b_path, labels_path
    a_rows, b_rows = load_array(Path(args.a), "A", args.key), load_array(Path(args.b), "B", args.key)
    if len(a_rows) != len(b_rows):
        raise UsageError(
            [f"A ({args.a}) and B ({args.b}) must embed the same items; got {len(a_rows)} and {len(b_rows)} rows"]
        )
    labels = load_labels(Path(args.labels), args.label_key)
    check_rows(labels, a_rows, f"LABELS ({args.labels})", f"A and B ({args.a}, {args.b})")
    a = evaluate(a_rows, labels, metrics=args.metrics, distance=args.distance)
    b = evaluate(b_rows, labels, metrics=args.metrics, distance=args.distance)
    level = interval_level(args)
    rows = compare(a, b, confidence=level, n_resamples=args.resamples, seed=args.seed)
    print(format_comparison(rows, args.format, level, args.resamples, coverage(a)))
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
    problems = [] if args.n >= 4 else [f"--n must be an int >= 4 (one point per strip); got {args.n}"]
    problems += folder_problems("--out-dir", args.out_dir)
    if problems:
        raise UsageError(problems)
    results = evaluate_examples(n=args.n, seed=args.seed)
    print(format_examples(results, fmt))
    paths = plot_reality_check(results, args.out_dir)
    paths += _confidence_figures(args.n, args.seed, Path(args.out_dir))
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


def row_groups(args, rows, rows_arg: str) -> dict:
    """``{"groups": ...}`` from --groups (one per row of ``rows``, checked), or nothing."""
    if args.groups is None:
        return {}
    groups = load_groups(Path(args.groups))
    check_rows(groups, rows, f"--groups ({args.groups})", rows_arg)
    return {"groups": groups}


def retrieval_command(args) -> int:
    """``embedeval retrieval``: query and corpus embeddings against a TREC qrels file."""
    from .._embeddings.retrieval import evaluate_retrieval

    paths = {
        "QUERIES": args.queries,
        "CORPUS": args.corpus,
        "QRELS": args.qrels,
        "--query-ids": args.query_ids,
        "--corpus-ids": args.corpus_ids,
        "--groups": args.groups,
        **_ignore_paths(args, "corpus"),
    }
    problems = argument_problems(paths, args.metrics, RANKINGS) + output_problems(args)
    problems += _ignore_problems(args, "corpus", separate=True) + beir_problems(args, "QRELS")
    if args.ignore_same_id and args.ignore_same_query is not None:
        problems.append("--ignore-same-id and --ignore-same-query are two ways to give keys; choose one")
    problems += below_one(args, "--block-size", "--threads")
    if problems:
        raise UsageError(problems)
    queries = load_array(Path(args.queries), "queries", args.key)
    corpus = load_array(Path(args.corpus), "corpus", args.key)
    query_ids, corpus_ids, qrels = _judgements(args, len(queries), len(corpus))
    options = retrieval_options(args, query_ids, corpus_ids, len(corpus))
    extra = _ignore_arguments(args, "corpus", positions=False)
    extra.update(row_groups(args, queries, f"QUERIES ({args.queries})"))
    if args.ignore_same_id:
        extra["ignore_same"] = (query_ids, options["corpus_ids"])
    result = _searched(evaluate_retrieval, args, queries, corpus, qrels, **options, **extra)
    qrels_input = args.qrels if args.beir is None else f"{args.beir} (BEIR, split {args.split or 'test'})"
    inputs = {"queries": f"{args.queries} {tuple(np.shape(queries))}", "corpus": args.corpus, "qrels": qrels_input}
    emit(result, args, inputs)
    return 0


def _judgements(args, n_queries: int, n_corpus: int):
    """(query ids, corpus ids or None, qrels), the numbers of ids checked against the rows of
    QUERIES and CORPUS."""
    query_ids, corpus_ids, qrels = load_judgements(args)
    if args.beir is not None:
        problems = [
            f"{name} has {n} rows but {Path(args.beir) / file} lists {len(ids)}; embed every line, in file order"
            for name, n, file, ids in (
                ("QUERIES", n_queries, "queries.jsonl", query_ids),
                ("CORPUS", n_corpus, "corpus.jsonl", corpus_ids),
            )
            if n != len(ids)
        ]
    elif args.query_ids is None and len(query_ids) != n_queries:
        raise UsageError([f"QUERIES has {n_queries} rows but QRELS names {len(query_ids)} queries; give --query-ids"])
    else:  # the counts first: a wrong one is an error, reported before any warning about the qrels
        problems = [
            f"{flag} ({path}) must hold one id per row of {what} ({rows_path}) ({n}); got {len(ids)}"
            for flag, path, ids, what, rows_path, n in (
                ("--query-ids", args.query_ids, query_ids, "QUERIES", args.queries, n_queries),
                ("--corpus-ids", args.corpus_ids, corpus_ids, "CORPUS", args.corpus, n_corpus),
            )
            if path and len(ids) != n
        ]
    if problems:
        raise UsageError(problems)
    return query_ids, corpus_ids, restricted(args, qrels, query_ids)
