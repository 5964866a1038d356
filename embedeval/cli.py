"""The ``embedeval`` command.

Every problem with the arguments is printed at once, one line each on stderr, and the command
exits with status 2 without a traceback. Tables go to stdout; notes and progress to stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from ._inputs import DISTANCES
from ._metrics import DEFAULT_EMBEDDING_METRICS, DEFAULT_RANKING_METRICS, MUSGRAVE_METRICS
from ._text import aligned_table, markdown_table

EXAMPLES = """examples:
  embedeval evaluate emb.npy labels.txt --metrics precision@1 recall@10 map@r --ci 0.95
  embedeval evaluate q.npy q_labels.npy --reference g.npy --reference-labels g_labels.npy --format json
  embedeval evaluate emb.npz labels.txt --key val_embeddings --plot eval.png --report eval.html
  embedeval compare model_a.npy model_b.npy labels.txt --metrics precision@1 map@r
  embedeval rankings run.txt qrels.txt --metrics ndcg@10 map recall@100
  embedeval scores scores.npy relevance.npy --metrics ndcg@10 recall@20
  embedeval reality-check --out plots/ --n 2000 --seed 0
"""
FORMATS = ("table", "json", "csv", "markdown")
_PLOT_K = 20  # recall@1..20 are drawn by --plot


class UsageError(Exception):
    """Problems with the command line, one message each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


# ---------------------------------------------------------------------------------------- files
def _load_array(path: Path, what: str, key: str | None = None) -> np.ndarray:
    """An array from .npy (memory-mapped), .npz (``key``, or its only array), .parquet (numeric
    columns, or column ``key``) or text (.csv, .tsv, .txt: one row per line)."""
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return np.load(path, mmap_mode="r", allow_pickle=False)
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as archive:
            if key is None and len(archive.files) != 1:
                raise ValueError(f"{what} file {path} holds arrays {archive.files}; choose one with --key")
            name = key if key is not None else archive.files[0]
            if name not in archive.files:
                raise ValueError(f"{what} file {path} has no array {name!r}; it holds {archive.files}")
            return archive[name]
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise ValueError(f"reading {path} needs pyarrow: pip install 'embedeval[parquet]'") from None
        table = pq.read_table(path)
        if key is not None:
            return table.column(key).to_numpy()
        return np.column_stack([table.column(c).to_numpy() for c in table.column_names])
    if suffix in (".csv", ".tsv", ".txt"):
        delimiter = {".csv": ",", ".tsv": "\t"}.get(suffix)
        return np.loadtxt(path, delimiter=delimiter, ndmin=2)
    raise ValueError(f"{what} file {path} has an unknown type {suffix!r}; use .npy, .npz, .parquet, .csv, .tsv or .txt")


def _load_labels(path: Path, key: str | None = None) -> np.ndarray:
    """Labels from .npy/.npz/.parquet, or text with one label per line (ints if all are ints)."""
    if path.suffix.lower() in (".npy", ".npz", ".parquet"):
        labels = np.asarray(_load_array(path, "labels", key))
        return labels.reshape(-1) if labels.ndim == 2 and 1 in labels.shape else labels
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    try:
        return np.array([int(v) for v in lines], dtype=np.int64)
    except ValueError:
        return np.array(lines)


def _argument_problems(paths: dict[str, str | None], metrics, form: str) -> list[str]:
    """Every problem visible before loading anything: missing files and bad metric names."""
    from ._metrics import parse_metrics

    problems = [f"{name}: no such file: {p}" for name, p in paths.items() if p is not None and not Path(p).is_file()]
    for name in metrics:
        try:
            parse_metrics([name], form)
        except ValueError as exc:
            problems.append(f"--metrics: {exc}")
    return problems


# ---------------------------------------------------------------------------------------- output
class _Progress:
    """A one-line progress bar on stderr, drawn only on a terminal and after 2 seconds."""

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


def _only(result, names: list[str]):
    """The result with only the metrics ``names`` (extra metrics computed for figures dropped)."""
    pick = lambda d: {k: v for k, v in d.items() if k in names}  # noqa: E731
    per_class = result.per_class
    if per_class is not None:
        per_class = dataclasses.replace(per_class, values=pick(per_class.values), macro=pick(per_class.macro))
    return dataclasses.replace(
        result,
        summary=pick(result.summary),
        per_query=pick(result.per_query),
        definitions=pick(result.definitions),
        per_class=per_class,
    )


def _format(result, fmt: str, intervals=None) -> str:
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
        head = "metric,value" + (",low,high" if intervals else "")
        rows = [
            f"{k},{v!r}" + (f",{intervals[k].low!r},{intervals[k].high!r}" if intervals else "")
            for k, v in result.summary.items()
        ]
        return "\n".join([head, *rows])
    if fmt == "markdown":
        rows = [
            [k, str(intervals[k]) if intervals else f"{v:.4f}", result.definitions[k]]
            for k, v in result.summary.items()
        ]
        return markdown_table(["metric", "value", "definition"], rows)
    return result.table(intervals)


def _emit(result, args, inputs: dict, figure=None) -> None:
    """Print the result in the chosen format, and write the per-class file and the report."""
    intervals = None
    if args.ci is not None:
        from .stats import bootstrap

        intervals = bootstrap(result, confidence=args.ci, seed=0)
    print(_format(result, args.format, intervals))
    if getattr(args, "per_class", None) and result.per_class is not None:
        pc = result.per_class
        names = list(pc.values)
        lines = ["label,count," + ",".join(names)]
        lines += [
            f"{label},{count}," + ",".join(repr(float(pc.values[m][i])) for m in names)
            for i, (label, count) in enumerate(zip(pc.labels.tolist(), pc.counts.tolist(), strict=True))
        ]
        Path(args.per_class).write_text("\n".join(lines) + "\n")
        print(f"wrote {args.per_class}", file=sys.stderr)
    if getattr(args, "report", None):
        from .report import write_report

        write_report(args.report, result, inputs=inputs, figure=figure, intervals=intervals)
        print(f"wrote {args.report}", file=sys.stderr)


# ---------------------------------------------------------------------------------------- commands
def _cmd_evaluate(args) -> int:
    from ._evaluate import evaluate

    paths = {
        "EMBEDDINGS": args.embeddings,
        "LABELS": args.labels,
        "--reference": args.reference,
        "--reference-labels": args.reference_labels,
    }
    problems = _argument_problems(paths, args.metrics, "embeddings")
    if (args.reference is None) != (args.reference_labels is None):
        problems.append("--reference and --reference-labels go together; give both or neither")
    if args.report and Path(args.report).suffix.lower() not in (".md", ".html", ".htm"):
        problems.append(f"--report must end in .md or .html; got {args.report}")
    for flag, value in (("--block-size", args.block_size), ("--threads", args.threads)):
        if value is not None and value < 1:
            problems.append(f"{flag} must be >= 1; got {value}")
    if problems:
        raise UsageError(problems)
    embeddings = _load_array(Path(args.embeddings), "embeddings", args.key)
    kwargs = {}
    if args.reference is not None:
        kwargs = {
            "reference": _load_array(Path(args.reference), "reference", args.key),
            "reference_labels": _load_labels(Path(args.reference_labels), args.label_key),
        }
    metrics = list(args.metrics)
    drawing = bool(args.plot or args.report)
    extra = [f"recall@{k}" for k in range(1, _PLOT_K + 1)] + ["map@r"] if drawing else []
    progress = _Progress(not args.quiet)
    try:
        full = evaluate(
            embeddings,
            _load_labels(Path(args.labels), args.label_key),
            metrics=metrics + extra,
            distance=args.distance,
            block_size=args.block_size,
            n_threads=args.threads,
            device=args.device,
            progress=progress,
            **kwargs,
        )
    finally:
        progress.close()
    shown = [m.strip().lower() for m in metrics]
    result = _only(full, shown)
    figure = None
    if drawing:
        from .plotting import plot_evaluation

        figure = Path(args.plot) if args.plot else Path(args.report).with_suffix(".png")
        plot_evaluation(
            _only(full, [f"recall@{k}" for k in range(1, _PLOT_K + 1)] + ["map@r"]),
            figure,
            title=Path(args.embeddings).name,
        )
        print(f"wrote {figure}", file=sys.stderr)
    inputs = {"embeddings": f"{args.embeddings} {tuple(np.shape(embeddings))}", "labels": args.labels}
    if args.reference:
        inputs.update(reference=args.reference, reference_labels=args.reference_labels)
    _emit(result, args, inputs, figure)
    return 0


def _cmd_compare(args) -> int:
    from ._evaluate import evaluate
    from .stats import compare

    problems = _argument_problems({"A": args.a, "B": args.b, "LABELS": args.labels}, args.metrics, "embeddings")
    if problems:
        raise UsageError(problems)
    labels = _load_labels(Path(args.labels), args.label_key)
    a = evaluate(_load_array(Path(args.a), "A", args.key), labels, metrics=args.metrics, distance=args.distance)
    b = evaluate(_load_array(Path(args.b), "B", args.key), labels, metrics=args.metrics, distance=args.distance)
    rows = compare(a, b, confidence=args.ci or 0.95, n_resamples=args.resamples, seed=args.seed)
    if args.format == "json":
        print(
            json.dumps(
                [
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
                ],
                indent=2,
            )
        )
        return 0
    head = ["metric", "A", "B", f"B - A [{(args.ci or 0.95):.0%} interval]", "p", "p (Holm)"]
    body = [
        [r.metric, f"{r.mean_a:.4f}", f"{r.mean_b:.4f}", str(r.difference), f"{r.p_value:.4g}", f"{r.p_adjusted:.4g}"]
        for r in rows
    ]
    if args.format == "markdown":
        print(markdown_table(head, body))
    elif args.format == "csv":
        print(
            "\n".join(
                [",".join(["metric", "a", "b", "difference", "low", "high", "p", "p_holm"])]
                + [
                    f"{r.metric},{r.mean_a!r},{r.mean_b!r},{r.difference.estimate!r},{r.difference.low!r},"
                    f"{r.difference.high!r},{r.p_value!r},{r.p_adjusted!r}"
                    for r in rows
                ]
            )
        )
    else:
        print(aligned_table(head, body))
        print(
            f"\n{rows[0].n_queries if rows else 0} paired queries; p: paired randomization test "
            f"({args.resamples} sign flips); Holm-adjusted over {len(rows)} metric(s)"
        )
    return 0


def _cmd_rankings(args) -> int:
    from ._rankings import evaluate_rankings
    from .io import common_queries, read_qrels, read_run

    problems = _argument_problems({"RUN": args.run_file, "QRELS": args.qrels}, args.metrics, "rankings")
    if problems:
        raise UsageError(problems)
    run, qrels = read_run(args.run_file), read_qrels(args.qrels)
    run_common, qrels_common = common_queries(run, qrels)
    dropped = len(run) - len(run_common)
    if dropped:
        what = "query has no judgements and is" if dropped == 1 else "queries have no judgements and are"
        print(f"embedeval rankings: note: {dropped} ranked {what} left out, as in trec_eval", file=sys.stderr)
    if not run_common:
        raise UsageError(["no query of RUN appears in QRELS"])
    result = evaluate_rankings(
        run_common, qrels_common, metrics=args.metrics, threshold=args.threshold, empty=args.empty
    )
    _emit(result, args, {"run": args.run_file, "qrels": args.qrels})
    return 0


def _cmd_scores(args) -> int:
    from ._scores import evaluate_scores

    problems = _argument_problems({"SCORES": args.scores, "RELEVANCE": args.relevance}, args.metrics, "rankings")
    if problems:
        raise UsageError(problems)
    result = evaluate_scores(
        _load_array(Path(args.scores), "scores"),
        _load_array(Path(args.relevance), "relevance"),
        metrics=args.metrics,
        threshold=args.threshold,
        empty=args.empty,
    )
    _emit(result, args, {"scores": args.scores, "relevance": args.relevance})
    return 0


def _cmd_reality_check(args) -> int:
    from .plotting import plot_reality_check
    from .reality_check import evaluate_examples, table

    if args.n < 4:
        raise UsageError([f"--n must be an int >= 4 (one point per strip); got {args.n}"])
    results = evaluate_examples(n=args.n, seed=args.seed)
    print(table(results, markdown=args.markdown))
    paths = plot_reality_check(results, args.out)
    paths += _confidence_figures(args.n, args.seed, Path(args.out))
    for path in paths:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _confidence_figures(n: int, seed: int, out: Path) -> list[Path]:
    """The seed's confidence experiment on example 2, and its error-vs-reject curves."""
    from .confidence import error_reject_curves
    from .plotting import plot_confidence_experiment, plot_error_reject
    from .reality_check import confidence_experiment

    exp = confidence_experiment(n=n, seed=seed)
    level = 0.2
    confidence = np.where(exp["is_error"], level, exp["base_confidence"])
    curves = error_reject_curves(exp["result"], confidence)
    title = f"Example 2, {exp['is_error'].sum()} injected label errors at confidence {level}"
    return [
        plot_confidence_experiment(exp, out / "confidence_experiment.png"),
        plot_error_reject(curves, out / "error_reject.png", title=title),
    ]


# ---------------------------------------------------------------------------------------- parser
def _confidence_level(text: str) -> float:
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), e.g. 0.95; got {text}")
    return value


def _output_options(p, ci_help="add percentile bootstrap intervals at this level, e.g. 0.95"):
    p.add_argument("--format", choices=FORMATS, default="table", help="output on stdout (default: table)")
    p.add_argument("--ci", type=_confidence_level, metavar="LEVEL", help=ci_help)


def build_parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="embedeval",
        description="Exact retrieval metrics for embedding spaces.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"embedeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub_kw = {"epilog": EXAMPLES, "formatter_class": argparse.RawDescriptionHelpFormatter}

    ev = sub.add_parser("evaluate", help="evaluate saved embeddings with class labels", **sub_kw)
    ev.add_argument("embeddings", metavar="EMBEDDINGS", help=".npy (memory-mapped), .npz, .parquet, .csv, .tsv, .txt")
    ev.add_argument("labels", metavar="LABELS", help=".npy/.npz/.parquet, or text with one label per line")
    ev.add_argument("--reference", help="a separate gallery to search (default: leave-one-out)")
    ev.add_argument("--reference-labels", help="labels of the gallery")
    ev.add_argument("--metrics", nargs="+", default=list(MUSGRAVE_METRICS))
    ev.add_argument("--distance", choices=DISTANCES, default="euclidean")
    ev.add_argument("--key", help="array name in .npz / column in .parquet embedding files")
    ev.add_argument("--label-key", help="array name in .npz / column in .parquet label files")
    ev.add_argument("--per-class", metavar="FILE", help="write per-class averages as CSV")
    ev.add_argument("--plot", metavar="FILE", help="write a PNG: recall@k for k = 1..20 and per-class MAP@R")
    ev.add_argument("--report", metavar="FILE", help="write a .md or .html report (table, figure, settings, versions)")
    ev.add_argument("--block-size", type=int, default=None, help="queries per block (default: automatic)")
    ev.add_argument(
        "--threads", type=int, default=None, help="query blocks run at once (default: faiss's thread count)"
    )
    ev.add_argument(
        "--device",
        choices=["cpu", "gpu"],
        default="cpu",
        help="where faiss computes the candidates (gpu: a faiss GPU build; same numbers)",
    )
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    _output_options(ev)
    ev.set_defaults(run=_cmd_evaluate)

    cp = sub.add_parser("compare", help="compare two embedding sets of the same items (paired test)", **sub_kw)
    cp.add_argument("a", metavar="A", help="embeddings of model A")
    cp.add_argument("b", metavar="B", help="embeddings of model B, same items in the same order")
    cp.add_argument("labels", metavar="LABELS")
    cp.add_argument("--metrics", nargs="+", default=list(DEFAULT_EMBEDDING_METRICS))
    cp.add_argument("--distance", choices=DISTANCES, default="euclidean")
    cp.add_argument("--key", help="array name in .npz / column in .parquet embedding files")
    cp.add_argument("--label-key", help="array name in .npz / column in .parquet label files")
    cp.add_argument("--resamples", type=int, default=10000, help="sign flips and bootstrap replicates")
    cp.add_argument("--seed", type=int, default=0)
    _output_options(cp, ci_help="level of the interval of the difference (default 0.95)")
    cp.set_defaults(run=_cmd_compare)

    for name, helptext in (
        ("rankings", "evaluate a TREC run file against a TREC qrels file"),
        ("scores", "evaluate a queries x items score matrix against a relevance matrix"),
    ):
        ir = sub.add_parser(name, help=helptext, **sub_kw)
        if name == "rankings":
            ir.add_argument("run_file", metavar="RUN", help="TREC run: qid Q0 docid rank score tag")
            ir.add_argument("qrels", metavar="QRELS", help="TREC qrels: qid iteration docid grade")
        else:
            ir.add_argument("scores", metavar="SCORES", help=".npy/.npz/.csv/.tsv/.txt, higher is better")
            ir.add_argument("relevance", metavar="RELEVANCE", help="grades of the same shape (0 = not relevant)")
        ir.add_argument("--metrics", nargs="+", default=list(DEFAULT_RANKING_METRICS))
        ir.add_argument("--threshold", type=float, default=1.0, help="grade at which an item is relevant (default 1)")
        ir.add_argument("--empty", choices=("skip", "zero"), default="skip", help="queries without relevant items")
        ir.add_argument("--report", metavar="FILE", help="write a .md or .html report")
        _output_options(ir)
        ir.set_defaults(run=_cmd_rankings if name == "rankings" else _cmd_scores)

    rc = sub.add_parser("reality-check", help="regenerate the toy examples of Musgrave et al. 2020", **sub_kw)
    rc.add_argument("--out", default="plots", help="folder for the PNGs (default: plots)")
    rc.add_argument("--n", type=int, default=2000, help="points per example (default: 2000)")
    rc.add_argument("--seed", type=int, default=0)
    rc.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    rc.set_defaults(run=_cmd_reality_check)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as exc:
        for problem in exc.problems:
            print(f"embedeval {args.command}: error: {problem}", file=sys.stderr)
    except (ValueError, TypeError, OSError) as exc:
        print(f"embedeval {args.command}: error: {exc}", file=sys.stderr)
    return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
