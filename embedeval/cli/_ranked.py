"""The ranked-list commands: ``embedeval rankings`` (TREC files) and ``embedeval scores`` (matrices)."""

from __future__ import annotations

import sys
from pathlib import Path

from .._metrics.registry import RANKINGS, parse_metrics
from ._argparse import REMOVED_IN
from ._commands import row_groups
from ._loaders import load_array, load_groups
from ._output import emit
from ._problems import UsageError, below_one, ranked_problems, warnings_as_lines


def rankings_command(args) -> int:
    """``embedeval rankings``: a TREC run file against a TREC qrels file."""
    from .._forms.trec.evaluate import evaluate_files

    problems = ranked_problems(args, {"QRELS": args.qrels, "RUN": args.run_file, "--groups": args.groups})
    problems += below_one(args, "--max-retrieved")
    if not problems:
        problems = _order_problems(args)
    if problems:
        raise UsageError(problems)
    groups = None if args.groups is None else load_groups(Path(args.groups), by_id=True)
    with warnings_as_lines("rankings"):
        result, coverage = evaluate_files(
            args.run_file,
            args.qrels,
            parse_metrics(args.metrics, RANKINGS),
            args.threshold,
            args.empty,
            args.complete,
            args.ties,
            args.max_retrieved,
            args.judged_only,
        )
        _coverage_notes(coverage, args.complete)  # the notes first, then the warnings
    if groups is not None:
        try:
            result = result.with_groups(groups)
        except ValueError as exc:
            raise UsageError([f"--groups ({args.groups}): {exc}"]) from None
    emit(result, args, {"run": args.run_file, "qrels": args.qrels})
    return 0


def _order_problems(args) -> list[str]:
    """QRELS RUN, judgements first (trec_eval's order): the swapped form (RUN QRELS, this
    command's order before 0.1) is read with a warning until 0.2; a run or a qrels given for both
    is said."""
    from ._compare import sniff

    qrels, run = sniff(Path(args.qrels)), sniff(Path(args.run_file))
    if qrels == "run" and run == "qrels":
        print(
            f"embedeval rankings: warning: RUN QRELS (the run first) is deprecated and goes in {REMOVED_IN}; "
            f"give QRELS RUN, judgements first as trec_eval: embedeval rankings {args.run_file} {args.qrels}",
            file=sys.stderr,
        )
        args.qrels, args.run_file = args.run_file, args.qrels
        return []
    problems = []
    if qrels == "run":
        problems.append(
            f"QRELS ({args.qrels}) is a TREC run (qid Q0 docid rank score tag: 6 fields), not a qrels (4 fields): "
            "give QRELS RUN, judgements first as trec_eval"
        )
    if run == "qrels":
        problems.append(
            f"RUN ({args.run_file}) is a TREC qrels (qid iteration docid grade: 4 fields), not a run (6 fields): "
            "give QRELS RUN, judgements first as trec_eval"
        )
    return problems


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
            counts = "counts as an empty ranking" if n == 1 else "count as empty rankings"
            print(f"embedeval rankings: note: {what} no run and {counts} (--complete)", file=sys.stderr)
        else:
            print(
                f"embedeval rankings: note: {what} no run and {'is' if n == 1 else 'are'} left out; --complete counts "
                "them as 0, as trec_eval -c",
                file=sys.stderr,
            )


def scores_command(args) -> int:
    """``embedeval scores``: a queries x items score matrix against a relevance matrix."""
    from .._forms.scores import evaluate_scores

    problems = ranked_problems(args, {"SCORES": args.scores, "RELEVANCE": args.relevance, "--groups": args.groups})
    if problems:
        raise UsageError(problems)
    scores = load_array(Path(args.scores), "scores")
    groups = row_groups(args, scores, f"SCORES ({args.scores})")
    with warnings_as_lines("scores"):
        result = evaluate_scores(
            scores,
            load_array(Path(args.relevance), "relevance"),
            metrics=args.metrics,
            threshold=args.threshold,
            empty=args.empty,
            ties=args.ties,
            **groups,
        )
    emit(result, args, {"scores": args.scores, "relevance": args.relevance})
    return 0
