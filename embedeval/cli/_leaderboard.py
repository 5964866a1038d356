"""``embedeval leaderboard``: systems compared over several datasets (Friedman, Nemenyi, Wilcoxon with
Holm, the Bayesian signed-rank test), from a table of scores, MTEB result files, per-query values,
or TREC runs with a qrels per dataset; tables on stdout and the critical-difference diagram.
"""

from __future__ import annotations

import sys
from argparse import SUPPRESS
from pathlib import Path

from .._metrics.registry import RANKINGS
from ._argparse import confidence_level, deprecated
from ._output import interval_level
from ._problems import UsageError, argument_problems, below_one, output_problems

FORMATS = ("table", "markdown", "html", "latex", "csv", "json")
_FIGURES = (".png", ".svg", ".pdf")
_SOURCES = ("--scores", "--mteb", "--per-query-values", "--trec")


def add_leaderboard_command(sub, **kw) -> None:
    """The ``leaderboard`` subcommand on the parser's subparsers."""
    lp = sub.add_parser(
        "leaderboard",
        help="compare systems across datasets: mean ranks, Friedman, Nemenyi, Wilcoxon",
        description="Compare systems across datasets: which are really better overall.",
        **kw,
    )
    lp.add_argument(
        "--scores",
        metavar="FILE",
        help="scores per dataset and system: CSV/TSV (a row per dataset, a "
        "column per system; or the head dataset,system,score) or JSON {dataset: {system: score}}",
    )
    lp.add_argument("--mteb", metavar="DIR", help="a folder of MTEB results (<model>/<revision>/<Task>.json)")
    lp.add_argument("--split", help="--mteb: the split to read (default: test, or a file's only split)")
    lp.add_argument(
        "--per-query-values",
        metavar="FILE",
        help="per-query values: CSV/TSV with the head dataset,system,query,value",
    )
    lp.add_argument("--per-query", dest="per_query_values", action=deprecated("--per-query-values"), help=SUPPRESS)
    lp.add_argument(
        "--trec",
        nargs="+",
        action="append",
        metavar="ARG",
        help="one dataset: --trec NAME QRELS RUN [RUN ...], the systems named after their run files (or NAME=RUN); "
        "repeat per dataset, the same system names on each",
    )
    lp.add_argument(
        "--metrics", nargs="+", metavar="NAME", help="the per-query metric of --trec runs, one (default: ndcg@10)"
    )
    lp.add_argument("--metric", dest="metrics", action=deprecated("--metrics", lambda name: [name]), help=SUPPRESS)
    lp.add_argument(
        "--empty",
        choices=("skip", "zero"),
        default=None,
        help="--trec: queries without a relevant document, left out (skip, default; their number is said) or "
        "scored 0 and averaged in, as trec_eval does (zero)",
    )
    lp.add_argument(
        "--post-hoc",
        choices=("nemenyi", "wilcoxon"),
        default="nemenyi",
        help="which pairs differ, and who is tied for first: Nemenyi's test (default) or Wilcoxon's "
        "signed-rank over datasets with Holm's correction",
    )
    lp.add_argument("--baseline", metavar="NAME", help="compare every system with this one only")
    lp.add_argument("--control", dest="baseline", action=deprecated("--baseline"), help=SUPPRESS)
    lp.add_argument("--alpha", type=float, default=0.05, help="level of the tests (default 0.05)")
    levels = lp.add_mutually_exclusive_group()
    levels.add_argument("--ci", type=confidence_level, metavar="LEVEL", help="level of the intervals (default 0.95)")
    levels.add_argument("--no-ci", action="store_true", help="no bootstrap intervals")
    lp.add_argument("--bootstrap", type=int, default=2000, help="bootstrap resamples (default 2000)")
    lp.add_argument("--resamples", type=int, default=10000, help="sign flips of each dataset's test (default 10000)")
    lp.add_argument(
        "--zero-method",
        choices=("wilcox", "pratt", "zsplit"),
        default="wilcox",
        help="Wilcoxon's zero differences (scipy's names; default wilcox: dropped)",
    )
    lp.add_argument(
        "--wilcoxon-method",
        choices=("auto", "exact", "approx"),
        default="auto",
        help="Wilcoxon's null distribution: exact, approx (normal, tie-corrected) or auto (scipy's choice, default)",
    )
    lp.add_argument(
        "--rope",
        type=float,
        help="run the Bayesian signed-rank test with this region of practical "
        "equivalence (a score difference, e.g. 0.01)",
    )
    lp.add_argument("--bayes-samples", type=int, default=50000, help="Dirichlet samples (default 50000)")
    lp.add_argument("--seed", type=int, default=0)
    lp.add_argument("--plot", metavar="FILE", help="write the critical-difference diagram (.png, .svg or .pdf)")
    lp.add_argument("--format", choices=FORMATS, default="table", help="output on stdout (default: table)")
    lp.set_defaults(run=leaderboard_command)


def _source_problems(args) -> list[str]:
    given = [flag for flag in _SOURCES if getattr(args, flag[2:].replace("-", "_"))]
    problems = [] if len(given) == 1 else [f"give one source of scores, {', '.join(_SOURCES)}; got {len(given)}"]
    paths = {flag: getattr(args, flag[2:].replace("-", "_")) for flag in ("--scores", "--per-query-values")}
    problems += argument_problems(paths, [], RANKINGS)
    if args.mteb and not Path(args.mteb).is_dir():
        problems.append(f"--mteb: no such folder: {args.mteb}")
    if args.split and not args.mteb:
        problems.append("--split goes with --mteb")
    for spec in args.trec or []:
        if len(spec) < 3:
            problems.append(f"--trec needs NAME QRELS RUN [RUN ...]; got {' '.join(spec)!r}")
            continue
        files = {f"--trec {spec[0]} (qrels)": spec[1]}
        files.update({f"--trec {spec[0]} ({r})": r.partition("=")[2] or r for r in spec[2:]})
        problems += argument_problems(files, [], RANKINGS)
    if args.metrics is not None and len(args.metrics) != 1:
        problems.append(f"--metrics: a leaderboard ranks the systems by one metric; got {len(args.metrics)}")
    args.metric = args.metrics[0] if args.metrics else None
    if args.metric is not None and not args.trec:
        problems.append("--metrics goes with --trec (the other sources carry their own values)")
    if args.empty is not None and not args.trec:
        problems.append("--empty goes with --trec (the other sources carry their own values)")
    if args.trec:
        args.metric = args.metric or "ndcg@10"
        problems += argument_problems({}, [args.metric], RANKINGS)
    return problems


def _option_problems(args) -> list[str]:
    problems = []
    if not 0 < args.alpha < 1:
        problems.append(f"--alpha must be in (0, 1); got {args.alpha}")
    problems += below_one(args, "--bootstrap", "--resamples", "--bayes-samples")
    if args.rope is not None and not args.rope >= 0:
        problems.append(f"--rope must be a score difference >= 0; got {args.rope}")
    if args.plot and Path(args.plot).suffix.lower() not in _FIGURES:
        problems.append(f"--plot must end in {', '.join(_FIGURES)}; got {args.plot}")
    return problems


def _trec_data(args) -> dict:
    from .._forms.trec.evaluate import evaluate_files
    from .._metrics.registry import parse_metrics

    parsed = parse_metrics([args.metric], RANKINGS)
    data = {}
    for name, qrels, *runs in args.trec:
        row = {}
        for run in runs:
            system, sep, path = run.partition("=")
            path = path if sep else run
            system = system if sep else Path(run).name.rsplit(".", 1)[0]
            try:
                row[system] = evaluate_files(path, qrels, parsed, 1.0, args.empty or "skip", True)[0]
            except ValueError as exc:
                raise UsageError([f"--trec {name} ({run}): {exc}"]) from None
        data[name] = row
        left_out = max(result.n_skipped for result in row.values())  # the qrels decide: the same for every run
        if left_out:
            n = len(next(iter(row.values())).config["query_ids"])
            print(
                f"embedeval leaderboard: note: --trec {name}: {left_out} of {n} judged queries "
                f"{'has' if left_out == 1 else 'have'} no relevant document, left out of the mean; "
                "--empty zero scores them 0, as trec_eval does",
                file=sys.stderr,
            )
    return data


def _per_query_data(path: str) -> dict:
    """``{dataset: {system: values}}``, each system's values in its dataset's first system's query
    order (every system must give the same queries)."""
    import numpy as np

    from .._stats.across_files import read_per_query_table

    data = {}
    for dataset, systems in read_per_query_table(path).items():
        order = list(next(iter(systems.values())))
        row = {}
        for system, values in systems.items():
            if set(values) != set(order):
                raise UsageError(
                    [f"--per-query-values: dataset {dataset!r}: {system!r} gives other queries than the first system"]
                )
            row[system] = np.array([values[q] for q in order])
        data[dataset] = row
    return data


def _load(args) -> tuple[dict, str | None]:
    from .._stats.across_files import read_mteb_results, read_score_table

    if args.scores:
        return read_score_table(args.scores), None
    if args.mteb:
        return read_mteb_results(args.mteb, split=args.split), None
    if args.per_query_values:
        return _per_query_data(args.per_query_values), "value"
    return _trec_data(args), args.metric


def leaderboard_command(args) -> int:
    """``embedeval leaderboard``: the leaderboard, the scores per dataset, the pairs, the tests."""
    from .._stats.across import compare_across

    problems = _source_problems(args) + _option_problems(args) + output_problems(args)
    if problems:
        raise UsageError(problems)
    data, metric = _load(args)
    try:
        comparison = compare_across(
            data,
            metric=metric,
            post_hoc=args.post_hoc,
            baseline=args.baseline,
            alpha=args.alpha,
            confidence=interval_level(args),
            n_bootstrap=args.bootstrap,
            n_resamples=args.resamples,
            zero_method=args.zero_method,
            wilcoxon_method=args.wilcoxon_method,
            rope=args.rope,
            n_bayes_samples=args.bayes_samples,
            seed=args.seed,
        )
    except (ValueError, TypeError) as exc:  # compare_across's 'baseline' is the command's --baseline
        raise UsageError([str(exc).replace("'baseline'", "--baseline")]) from None
    print(comparison.table(args.format))
    if args.plot:
        from ..plotting import plot_critical_difference

        plot_critical_difference(comparison, args.plot)
        print(f"wrote {args.plot}", file=sys.stderr)
    return 0
