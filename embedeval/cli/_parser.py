"""The command line's grammar: commands, their arguments, defaults and help."""

from __future__ import annotations

import argparse

from .._inputs.arrays import DISTANCES
from .._inputs.codes import HAMMING
from .._metrics.registry import (
    DEFAULT_EMBEDDING_METRICS,
    DEFAULT_RANKING_METRICS,
    EMBEDDINGS,
    RANKINGS,
    valid_names,
)
from .._metrics.ties import RULES
from ._argparse import Parser, confidence_level, deprecated, make_lenient
from ._commands import evaluate_command, reality_check_command, retrieval_command
from ._compare import compare_command
from ._compare_dense import add_dense_arguments
from ._examples import EXAMPLES, examples_of
from ._explore import add_explorer_commands
from ._judgements import add_id_options
from ._leaderboard import add_leaderboard_command
from ._metrics_command import add_metrics_command
from ._output import FORMATS, RANKED_FORMATS
from ._ranked import rankings_command, scores_command

_KEY_HELP = "array name in .npz / column in .parquet embedding files"
_LABEL_KEY_HELP = "array name in .npz / column in .parquet label files"
_CI_HELP = "level of the percentile bootstrap intervals of per-query metrics (default 0.95)"


def _metrics_option(p, default, form: str, note: str = "") -> None:
    p.add_argument(
        "--metrics",
        nargs="+",
        default=list(default),
        metavar="NAME",
        help=f"metrics to compute (default: {' '.join(default)}); valid: {', '.join(valid_names(form))}, "
        f"with k an int from 1 to 10^9; case is ignored{note}",
    )


def _ties_option(p, default: str) -> None:
    p.add_argument(
        "--ties",
        choices=RULES,
        default=None,
        help="items with exactly equal scores (or distances): 'expected' averages every metric over all their "
        "orders (exactly, in closed form), 'optimistic'/'pessimistic' put relevant items first/last in each tie "
        f"group (default: {default})",
    )


def _search_options(p, threads: str, device: str) -> None:
    """--block-size, --threads and --device (evaluate, retrieval), each command's defaults said its way."""
    p.add_argument("--block-size", type=int, default=None, help="queries per block (default: automatic)")
    p.add_argument("--threads", type=int, default=None, help=f"query blocks run at once (default: {threads})")
    p.add_argument(
        "--device", choices=["cpu", "gpu"], default="cpu", help=f"where the distances are computed (gpu: {device})"
    )


def _output_options(p, ci_help=_CI_HELP, formats=FORMATS):
    p.add_argument("--format", choices=formats, default="table", help="output on stdout (default: table)")
    levels = p.add_mutually_exclusive_group()
    levels.add_argument("--ci", type=confidence_level, metavar="LEVEL", help=ci_help)
    levels.add_argument("--no-ci", action="store_true", help="no bootstrap intervals (they are on by default)")


def _group_options(p, by_id: bool = False) -> None:
    """--groups and --names (evaluate, retrieval, rankings, scores)."""
    rows = (
        "'query_id group' per line (the run's query ids)"
        if by_id
        else "one group per query row: .npy/.npz/.parquet, or text with one per line"
    )
    p.add_argument(
        "--groups",
        metavar="FILE",
        help=f"a group per query (language, category, camera, ...): {rows}; adds each metric's mean per group",
    )
    p.add_argument(
        "--names",
        choices=("plain", "safe"),
        default="plain",
        help="metric names as they are (plain, default: map@r) or in the characters every logger accepts "
        "(safe: map_at_r, tar_at_far_0.001)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``embedeval`` parser; each command's namespace carries its function as ``run`` and its
    own parser as ``command_parser``."""
    from .. import __version__

    parser = Parser(
        prog="embedeval",
        description="Exact retrieval metrics for embedding spaces.",
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"embedeval {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    sub_kw = {"formatter_class": argparse.RawDescriptionHelpFormatter}
    _add_evaluate(sub.add_parser("evaluate", help="evaluate saved embeddings with class labels", **sub_kw))
    _add_compare(sub.add_parser("compare", help=_COMPARE_HELP, **sub_kw))
    _add_retrieval(
        sub.add_parser("retrieval", help="evaluate query and corpus embeddings against TREC qrels", **sub_kw)
    )
    for name, helptext, run in (
        ("rankings", "evaluate a TREC run file against a TREC qrels file", rankings_command),
        ("scores", "evaluate a queries x items score matrix against a relevance matrix", scores_command),
    ):
        _add_ranked(sub.add_parser(name, help=helptext, **sub_kw), name, run)
    sub.add_parser(  # listed for --help; main() hands its words to trec_eval's own grammar (_trec_eval_args)
        "trec_eval",
        aliases=["trec-eval"],
        help="trec_eval 10's command: its flags, files and output (embedeval trec_eval -h)",
        add_help=False,
    )
    rc = sub.add_parser("reality-check", help="regenerate the toy examples of Musgrave et al. 2020", **sub_kw)
    rc.add_argument("--out-dir", metavar="DIR", default="plots", help="folder for the PNGs (default: plots)")
    rc.add_argument("--out", dest="out_dir", action=deprecated("--out-dir"), help=argparse.SUPPRESS)
    rc.add_argument("--n", type=int, default=2000, help="points per example (default: 2000)")
    rc.add_argument("--seed", type=int, default=0)
    rc.add_argument("--format", choices=FORMATS, default="table", help="output on stdout (default: table)")
    rc.add_argument("--markdown", action="store_true", help="deprecated: the same as --format markdown")
    rc.set_defaults(run=reality_check_command)
    add_metrics_command(sub, **sub_kw)
    add_leaderboard_command(sub, **sub_kw)
    add_explorer_commands(sub, **sub_kw)  # neighbors, and --explore on the commands that evaluate or compare
    for name, command in sub.choices.items():  # each command's help shows its own examples
        command.epilog = examples_of(name)
        command.set_defaults(command_parser=command)  # its usage for argument errors found later
    return make_lenient(parser)  # every bad value reported, one line each (cli._argparse)


def _add_evaluate(ev: argparse.ArgumentParser) -> None:
    ev.add_argument("embeddings", metavar="EMBEDDINGS", help=".npy (memory-mapped), .npz, .parquet, .csv, .tsv, .txt")
    ev.add_argument(
        "labels",
        metavar="LABELS",
        nargs="?",
        help=".npy/.npz/.parquet, or text with one label per line; not with --oml",
    )
    ev.add_argument(
        "--oml",
        metavar="CSV",
        help="an open-metric-learning table (label, is_query, is_gallery, optional category and sequence), one row "
        "per row of EMBEDDINGS, evaluated as OML does; its categories give the groups",
    )
    ev.add_argument("--reference", help="a separate gallery to search (default: leave-one-out)")
    ev.add_argument("--reference-labels", help="labels of the gallery")
    _metrics_option(
        ev,
        DEFAULT_EMBEDDING_METRICS,
        EMBEDDINGS,
        "; x a rate in (0, 1) in fnmr@fmr=x and tar@far=x, a share of the variance in (0, 1] in pcf@x; "
        "pytorch-metric-learning's names too (precision_at_1, mean_average_precision_at_r, NMI, AMI)",
    )
    ev.add_argument(
        "--distance",
        choices=(*DISTANCES, HAMMING),
        default="euclidean",
        help="hamming: binary codes, packed uint8 (n, bits/8) or bool/0-1 (n, bits) (default: euclidean)",
    )
    _ties_option(ev, "by index, lower first")
    ev.add_argument("--key", help=_KEY_HELP)
    ev.add_argument("--label-key", help=_LABEL_KEY_HELP)
    ev.add_argument("--per-class", metavar="FILE", help="write per-class averages as CSV")
    ev.add_argument("--plot", metavar="FILE", help="write a PNG: recall@k for k = 1..20 and per-class MAP@R")
    ev.add_argument(
        "--report",
        metavar="FILE",
        help="write a .md or .html report (date, command, table, figure, settings, versions)",
    )
    _search_options(ev, "faiss's thread count", "float64 on every visible CUDA GPU through torch; same numbers")
    ev.add_argument(
        "--multi-label",
        action="store_true",
        help="text label files hold a set of labels per line, separated by commas (cat,dog); "
        "a 2-D boolean .npy is read as label sets without it",
    )
    _ignore_options(ev, "reference", "--ignore: 'query reference' row positions per line")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    _output_options(ev)
    _group_options(ev)
    ev.set_defaults(run=evaluate_command)


def _ignore_options(p: argparse.ArgumentParser, reference: str, pairs_help: str) -> None:
    """--ignore and --ignore-same-query/--ignore-same-REFERENCE (evaluate, retrieval)."""
    p.add_argument("--ignore", metavar="FILE", help=f"references each query ignores; {pairs_help}")
    p.add_argument(
        "--ignore-same-query",
        metavar="KEYS",
        help="a key per query (.npy, or text: one per line, several fields make one key, e.g. 'identity camera'); "
        f"each query ignores every {reference} with its key",
    )
    p.add_argument(
        f"--ignore-same-{reference}",
        metavar="KEYS",
        help=f"a key per {reference}, as --ignore-same-query"
        + (" (default in leave-one-out: the query keys)" if reference == "reference" else ""),
    )


def _add_retrieval(rt: argparse.ArgumentParser) -> None:
    rt.add_argument("queries", metavar="QUERIES", help="query embeddings: .npy (memory-mapped), .npz, .parquet, text")
    rt.add_argument("corpus", metavar="CORPUS", help="corpus embeddings, same formats")
    rt.add_argument(
        "qrels",
        metavar="QRELS",
        nargs="?",
        help="TREC qrels (qid iteration docid grade), or a table with columns query-id, corpus-id, score "
        "(BEIR's .tsv with its header, .csv, .jsonl, .parquet); not with --beir",
    )
    add_id_options(
        rt,
        beir="a BEIR folder: queries.jsonl and corpus.jsonl (ids per row, in file order) and qrels/SPLIT.tsv",
        query_ids="an id per row of QUERIES: one per line, or JSON lines with _id or id (default: the qrels' order)",
        corpus_ids="an id per row of CORPUS, as --query-ids (default: 0, 1, ...)",
    )
    _metrics_option(rt, DEFAULT_RANKING_METRICS, RANKINGS)
    rt.add_argument(
        "--distance", choices=(*DISTANCES, HAMMING), default="cosine", help="hamming: binary codes (default: cosine)"
    )
    _ties_option(rt, "by corpus row, lower first")
    rt.add_argument("--threshold", type=float, default=1.0, help="grade at which an item is relevant (default 1)")
    rt.add_argument("--empty", choices=("skip", "zero"), default="skip", help="queries without relevant items")
    rt.add_argument(
        "--absent-docs",
        choices=("count", "drop", "error"),
        default="count",
        help="judged documents missing from the corpus: relevant and never retrieved (default, as trec_eval), "
        "left out, or an error",
    )
    rt.add_argument("--key", help=_KEY_HELP)
    _ignore_options(rt, "corpus", "'query_id doc_id' per line")
    rt.add_argument(
        "--ignore-same-id", action="store_true", help="each query ignores the corpus entry with its own id (BEIR)"
    )
    _search_options(rt, "faiss's threads", "through torch")
    rt.add_argument("--report", metavar="FILE", help="write a .md or .html report")
    rt.add_argument("--quiet", action="store_true", help="no progress bar")
    _output_options(rt)
    _group_options(rt)
    rt.set_defaults(run=retrieval_command)


def _add_compare(cp: argparse.ArgumentParser) -> None:
    cp.add_argument(
        "inputs",
        metavar="FILE",
        nargs="*",
        help="TREC runs: the qrels first, then one run per system (QRELS RUN1 RUN2, as trec_eval); embeddings: one "
        "file per system, then their labels last (A B LABELS, as evaluate); told apart by their content; none with "
        "--qrels or --beir",
    )
    cp.add_argument(
        "--system",
        action="append",
        metavar="NAME=FILE,FILE",
        help="a system given as several runs (seeds, folds), compared with a two-level bootstrap; with --qrels or "
        "--beir, a system of query and corpus embeddings: NAME=QUERIES,CORPUS (a pair per run: Q1,C1,Q2,C2); "
        "repeatable",
    )
    add_dense_arguments(cp)
    cp.add_argument(
        "--metrics",
        nargs="+",
        default=None,
        metavar="NAME",
        help=f"metrics to compute (default: {' '.join(DEFAULT_EMBEDDING_METRICS)} for embeddings, "
        f"{' '.join(DEFAULT_RANKING_METRICS)} for runs); valid: {', '.join(valid_names(EMBEDDINGS))} for embeddings; "
        f"{', '.join(valid_names(RANKINGS))} for runs; with k an int from 1 to 10^9; per-query metrics only",
    )
    cp.add_argument("--baseline", metavar="NAME", help="the system the others are compared with (default: the first)")
    cp.add_argument("--all-pairs", action="store_true", help="compare every pair, with the randomised Tukey HSD")
    cp.add_argument(
        "--test",
        choices=("randomization", "t", "bootstrap"),
        default=None,
        help="paired test (default: randomization; bootstrap when a system has several runs)",
    )
    cp.add_argument(
        "--correction",
        choices=("holm", "bonferroni", "bh", "none"),
        default=None,
        help="over every pair and metric (default: holm; bh: Benjamini-Hochberg)",
    )
    cp.add_argument("--distance", choices=DISTANCES, help="default: euclidean; cosine with --qrels or --beir")
    cp.add_argument("--threshold", type=float, default=1.0, help="runs: grade at which an item is relevant (default 1)")
    cp.add_argument("--empty", choices=("skip", "zero"), default="skip", help="queries without relevant items")
    cp.add_argument("--key", help=_KEY_HELP)
    cp.add_argument("--label-key", help=_LABEL_KEY_HELP)
    cp.add_argument("--resamples", type=int, default=10000, help="sign flips and Tukey permutations (default 10000)")
    cp.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples of the intervals (default 2000)")
    cp.add_argument("--seed", type=int, default=0)
    cp.add_argument("--report", metavar="FILE", help="also write a .md or .html report of the comparison")
    _output_options(cp, ci_help="level of the intervals (default 0.95)", formats=(*FORMATS, "latex"))
    cp.set_defaults(run=compare_command)


_COMPARE_HELP = "compare systems on the same queries: TREC runs with a qrels, or embeddings with labels"
_EMPTY_HELP = (
    "queries without relevant items: skipped (default) or scored 0 and averaged, as trec_eval does "
    "(the only choice with --format trec: trec_eval's format means its conventions)"
)


def _add_ranked(ir: argparse.ArgumentParser, name: str, run) -> None:
    """``rankings`` and ``scores``: the same options, different inputs."""
    if name == "rankings":  # judgements first, as trec_eval and every command that takes both
        ir.add_argument("qrels", metavar="QRELS", help="TREC qrels: qid iteration docid grade")
        ir.add_argument("run_file", metavar="RUN", help="TREC run: qid Q0 docid rank score tag")
    else:
        ir.add_argument("scores", metavar="SCORES", help=".npy/.npz/.csv/.tsv/.txt, higher is better")
        ir.add_argument("relevance", metavar="RELEVANCE", help="grades of the same shape (0 = not relevant)")
    _metrics_option(ir, DEFAULT_RANKING_METRICS, RANKINGS, "; trec_eval's names too (ndcg_cut_10, P.5,10, recip_rank)")
    ir.add_argument("--threshold", type=float, default=1.0, help="grade at which an item is relevant (default 1)")
    ir.add_argument("--empty", choices=("skip", "zero"), default=None, help=_EMPTY_HELP)
    if name == "rankings":
        ir.add_argument(
            "--complete",
            action="store_true",
            help="average over every judged query, a query without a run counting as 0 (trec_eval -c)",
        )
        ir.add_argument(
            "--max-retrieved",
            type=int,
            metavar="N",
            help="each query's first N documents only, in trec_eval's order (trec_eval -M)",
        )
        ir.add_argument(
            "--judged-only",
            action="store_true",
            help="rank only the documents judged with a grade >= 0, the others left out (trec_eval -J)",
        )
    _ties_option(
        ir,
        "the run's own rule: trec_eval's, by document id" if name == "rankings" else "lower column index first",
    )
    ir.add_argument("--per-query", action="store_true", help="each query's values too, then 'all' (trec_eval -q)")
    ir.add_argument("--report", metavar="FILE", help="write a .md or .html report")
    _output_options(ir, formats=RANKED_FORMATS)
    _group_options(ir, by_id=name == "rankings")
    ir.set_defaults(run=run)
