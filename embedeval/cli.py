"""The ``embedeval`` command.

Every problem with the arguments is printed at once, one line each on stderr, and the command
exits with status 2 without a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from ._inputs import DISTANCES

EXAMPLES = """examples:
  embedeval reality-check --out plots/ --n 2000 --seed 0
  embedeval evaluate emb.npy labels.txt --metrics precision@1 recall@10 map@r
  embedeval evaluate queries.npy q_labels.npy --reference gallery.npy --reference-labels g_labels.npy --format json
  embedeval rankings run.txt qrels.txt --metrics ndcg@10 map recall@100
  embedeval scores scores.npy relevance.npy --metrics ndcg@10 recall@20
"""


class UsageError(Exception):
    """Problems with the command line, one message each."""

    def __init__(self, problems: list[str]):
        super().__init__("; ".join(problems))
        self.problems = problems


def _load_array(path: Path, what: str) -> np.ndarray:
    """Embeddings from .npy (memory-mapped), .npz (its only array) or text (.csv, .tsv, .txt)."""
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return np.load(path, mmap_mode="r", allow_pickle=False)
    if suffix == ".npz":
        with np.load(path, allow_pickle=False) as archive:
            if len(archive.files) != 1:
                raise ValueError(f"{what} file {path} holds arrays {archive.files}; give a file with exactly one")
            return archive[archive.files[0]]
    if suffix in (".csv", ".tsv", ".txt"):
        return np.loadtxt(path, delimiter="\t" if suffix == ".tsv" else ("," if suffix == ".csv" else None), ndmin=2)
    raise ValueError(f"{what} file {path} has an unknown type {suffix!r}; use .npy, .npz, .csv, .tsv or .txt")


def _load_labels(path: Path) -> np.ndarray:
    """Labels from .npy/.npz, or text with one label per line (kept as strings unless all integers)."""
    if path.suffix.lower() in (".npy", ".npz"):
        labels = _load_array(path, "labels")
        return np.asarray(labels).reshape(-1) if np.ndim(labels) == 2 and 1 in np.shape(labels) else np.asarray(labels)
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


def _cmd_evaluate(args) -> int:
    from ._evaluate import evaluate

    problems = _argument_problems(
        {
            "EMBEDDINGS": args.embeddings,
            "LABELS": args.labels,
            "--reference": args.reference,
            "--reference-labels": args.reference_labels,
        },
        args.metrics,
        "embeddings",
    )
    if (args.reference is None) != (args.reference_labels is None):
        problems.append("--reference and --reference-labels go together; give both or neither")
    if problems:
        raise UsageError(problems)
    kwargs = {}
    if args.reference is not None:
        kwargs = {
            "reference": _load_array(Path(args.reference), "reference"),
            "reference_labels": _load_labels(Path(args.reference_labels)),
        }
    result = evaluate(
        _load_array(Path(args.embeddings), "embeddings"),
        _load_labels(Path(args.labels)),
        metrics=args.metrics,
        distance=args.distance,
        block_size=args.block_size,
        **kwargs,
    )
    print(_format(result, args.format))
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
        print(
            f"embedeval rankings: note: {dropped} ranked queries have no judgements and are left out", file=sys.stderr
        )
    if not run_common:
        raise UsageError(["no query of RUN appears in QRELS"])
    result = evaluate_rankings(
        run_common, qrels_common, metrics=args.metrics, threshold=args.threshold, empty=args.empty
    )
    print(_format(result, args.format))
    return 0


def _cmd_scores(args) -> int:
    from ._rankings import evaluate_scores

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
    print(_format(result, args.format))
    return 0


def _format(result, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(
            {
                "summary": result.summary,
                "macro": result.per_class.macro if result.per_class is not None else None,
                "n_queries": result.n_queries,
                "n_evaluated": result.n_evaluated,
                "skipped": result.skipped,
                "definitions": result.definitions,
                "conventions": result.conventions,
                "config": result.config,
            },
            indent=2,
        )
    if fmt == "csv":
        return "metric,value\n" + "\n".join(f"{k},{v!r}" for k, v in result.summary.items())
    if fmt == "markdown":
        rows = [f"| {k} | {v:.4f} | {result.definitions[k]} |" for k, v in result.summary.items()]
        return "\n".join(["| metric | value | definition |", "|---|---|---|", *rows])
    return result.table()


def _cmd_reality_check(args) -> int:
    from .plotting import plot_reality_check
    from .reality_check import evaluate_examples, table

    problems = []
    if args.n < 4:
        problems.append(f"--n must be an int >= 4 (one point per strip); got {args.n}")
    if problems:
        raise UsageError(problems)
    results = evaluate_examples(n=args.n, seed=args.seed)
    print(table(results, markdown=args.markdown))
    paths = plot_reality_check(results, args.out)
    paths += _confidence_figures(args.n, args.seed, Path(args.out))
    for path in paths:
        print(f"wrote {path}", file=sys.stderr)
    return 0


def _confidence_figures(n: int, seed: int, out: Path) -> list[Path]:
    """The seed's confidence experiment on example 2, and its error-vs-reject curves."""
    import numpy as np

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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="embedeval",
        description="Exact retrieval metrics for embedding spaces.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from . import __version__

    parser.add_argument("--version", action="version", version=f"embedeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    ev = sub.add_parser(
        "evaluate",
        help="evaluate saved embeddings with class labels",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ev.add_argument("embeddings", metavar="EMBEDDINGS", help=".npy (memory-mapped), .npz, .csv, .tsv or .txt")
    ev.add_argument("labels", metavar="LABELS", help=".npy/.npz, or text with one label per line")
    ev.add_argument("--reference", help="a separate gallery to search (default: leave-one-out)")
    ev.add_argument("--reference-labels", help="labels of the gallery")
    ev.add_argument("--metrics", nargs="+", default=["precision@1", "recall@1", "recall@10", "r_precision", "map@r"])
    ev.add_argument("--distance", choices=DISTANCES, default="euclidean")
    ev.add_argument("--format", choices=("table", "json", "csv", "markdown"), default="table")
    ev.add_argument("--block-size", type=int, default=None, help="queries per block (default: automatic)")
    ev.set_defaults(run=_cmd_evaluate)

    for name, helptext, first, second in (
        ("rankings", "evaluate a TREC run file against a TREC qrels file", "run_file", "qrels"),
        ("scores", "evaluate a queries x items score matrix against a relevance matrix", "scores", "relevance"),
    ):
        ir = sub.add_parser(name, help=helptext, epilog=EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter)
        if name == "rankings":
            ir.add_argument(first, metavar="RUN", help="TREC run: qid Q0 docid rank score tag")
            ir.add_argument(second, metavar="QRELS", help="TREC qrels: qid iteration docid grade")
        else:
            ir.add_argument(first, metavar="SCORES", help=".npy/.npz/.csv/.tsv/.txt, higher is better")
            ir.add_argument(second, metavar="RELEVANCE", help="grades of the same shape (0 = not relevant)")
        ir.add_argument("--metrics", nargs="+", default=["precision@10", "recall@10", "mrr@10", "ndcg@10", "map"])
        ir.add_argument("--threshold", type=float, default=1.0, help="grade at which an item is relevant (default 1)")
        ir.add_argument("--empty", choices=("skip", "zero"), default="skip", help="queries without relevant items")
        ir.add_argument("--format", choices=("table", "json", "csv", "markdown"), default="table")
        ir.set_defaults(run=_cmd_rankings if name == "rankings" else _cmd_scores)

    rc = sub.add_parser(
        "reality-check",
        help="regenerate the toy examples of Musgrave et al. 2020 with their metrics",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
