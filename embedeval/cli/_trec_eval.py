"""``embedeval trec_eval [flags] QRELS RUN``: a drop-in for trec_eval 10's command.

trec_eval's arguments (:mod:`._trec_eval_args`), measures (:mod:`._trec_measures`), conventions
(:mod:`embedeval._forms.trec.drop_in`) and output: ``NAME<TAB>QUERY<TAB>VALUE`` with the name
left-aligned in 22 columns, values as ``%6.4f`` (counts as integers), with ``-q`` each query's
lines first (queries in byte order of their ids, measures in trec_eval's order), then the
summary under the query ``all`` unless ``-n``. ``-Z FILE`` prints z-scores, ``(value - mean) /
sd`` from the file's ``qid measure mean sd`` lines, each name prefixed by ``Z``; a value with
no line in the file, or a zero sd with another value than the mean, is -1000000.
"""

from __future__ import annotations

import math
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np

from .._forms.trec.lines import trec_lines, trec_number
from .._metrics.families import GM_FLOOR
from .._metrics.registry import RANKINGS, parse_metrics
from ._problems import UsageError, input_problem, warnings_as_lines
from ._trec_eval_args import parse
from ._trec_measures import FORMAT_OF, NICKNAMES, selection

MISSING_Z = -1000000.0
HELP = """usage: embedeval trec_eval [-h] [-q] [-c] [-n] [-J] [-m MEASURE[.PARAMS]]... [-l LEVEL] [-M MAX]
                           [-Z ZSCORE_FILE] QRELS RUN

trec_eval 10's command, its arguments in its order (the judgements first), with its output.

  -q             each query's values too, before the summary
  -c             average over every judged query; one without a run counts as an empty ranking
  -m NAME[.P]    measures (repeatable): a name (P, map, ndcg_cut, ...), parameters after a dot
                 (P.5,10, ndcg.1=3,2=9), or a set: official (the default), all_trec, set;
                 with -R prefs or qrels_prefs: all_prefs, prefs; with -R qrels_jg: qrels_jg
  -l LEVEL       the grade at which a document is relevant (default 1)
  -M MAX         evaluate the first MAX documents of each query's ranking
  -J             remove the documents without a judgement (grade >= 0) before ranking
  -n             no summary lines
  -Z FILE        z-scores from 'qid measure mean sd' lines instead of values
  -R FORMAT      the judgements: qrels (the default), prefs, qrels_prefs or qrels_jg
  -T trec_results  the only run format read; -N and -o change nothing
  --ties RULE    embedeval's own: expected, optimistic or pessimistic values over documents of
                 equal score (trec_eval orders them by document id); see the trec_eval guide
"""


def trec_eval_command(argv: list[str]) -> int:
    """Run ``embedeval trec_eval`` on ``argv`` (the words after the command name)."""
    args, problems = parse(argv)
    if args.help and not problems:
        print(HELP, end="")
        return 0
    if args.version and not problems:
        from .. import __version__

        print(f"embedeval trec_eval {__version__} (trec_eval 10.0's command line and output)", file=sys.stderr)
        return 0
    files = dict(zip(("QRELS", "RUN"), args.files, strict=False)) if len(args.files) == 2 else {}
    problems += [
        problem
        for what, p in files.items()
        if not (what == "RUN" and p == "-") and not _pipe(p) and (problem := input_problem(what, p))
    ]  # '-' (the run on stdin) and pipes (<(zcat run.gz)) are copied into files (_output_of)
    if args.zscores is not None and (problem := input_problem("-Z", args.zscores)):
        problems.append(problem)
    try:
        values, own = selection(args.measures)
    except ValueError as exc:
        raise UsageError(problems + str(exc).splitlines()) from None
    problems += _formats_agree(values, args)
    if args.rel_format != "qrels":
        if problems:
            raise UsageError(problems)
        zscores = _read_zscores(args.zscores) if args.zscores else None
        print(_judgement_output(args, values, files["QRELS"], files["RUN"], zscores), end="")
        return 0
    values, missing, dropped = _available(values, own, args.ties)
    problems += missing
    if problems:
        raise UsageError(problems)
    if dropped:
        print(
            f"embedeval trec_eval: warning: left out of {'/'.join(NICKNAMES)}: {', '.join(dropped)} "
            + (
                "(no tie-aware expected value is derived for them)"
                if args.ties == "expected"
                else "(embedeval cannot compute them yet)"
            ),
            file=sys.stderr,
        )
    zscores = _read_zscores(args.zscores) if args.zscores else None
    if files["RUN"] != "-" and not any(map(_pipe, files.values())):
        print(_output(args, values, files["QRELS"], files["RUN"], zscores), end="")
        return 0
    with tempfile.TemporaryDirectory() as folder:  # the readers read files more than once: copied into files
        copies = {}
        for what, given in files.items():
            if given != "-" and not _pipe(given):
                copies[what] = given
                continue
            copies[what] = Path(folder) / ("stdin" if given == "-" else what.lower())
            with open(copies[what], "wb") as f, open(given, "rb") if given != "-" else sys.stdin.buffer as source:
                shutil.copyfileobj(source, f)
        print(_output(args, values, copies["QRELS"], copies["RUN"], zscores), end="")
    return 0


def _pipe(path: str) -> bool:
    """Whether ``path`` is a pipe (a FIFO, or a process substitution's ``/dev/fd/63``), which
    trec_eval reads as a file and the drop-in copies into one."""
    import stat

    try:
        return path != "-" and stat.S_ISFIFO(Path(path).stat().st_mode)
    except OSError:
        return False


def _formats_agree(values, args) -> list[str]:
    """Problems of measures that read another judgement format than ``-R`` gives (trec_eval stops
    at the first such measure), and of what only the qrels format supports."""
    wanted = "prefs" if args.rel_format == "qrels_prefs" else args.rel_format
    other = [m for m in dict.fromkeys(v.measure for v in values) if m not in ("runid", "num_q")]
    other = [m for m in other if FORMAT_OF.get(m, "qrels") != wanted]
    problems = [f"-R {args.rel_format}: trec_eval cannot compute {', '.join(other)} from it"] if other else []
    if args.rel_format != "qrels" and args.ties is not None:
        problems.append(f"--ties: tie rules apply to -R qrels only; got -R {args.rel_format}")
    if args.rel_format != "qrels" and "-" in args.files[1:]:
        problems.append(f"RUN '-': the run is read from stdin with -R qrels only; got -R {args.rel_format}")
    return problems


def _judgement_output(args, values, judgements, run, zscores) -> str:
    """trec_eval's output for preference judgements and judgement groups: per query (``-q``),
    then the summary (the sum of a count, the mean of the rest)."""
    from .._forms.trec.preferences import evaluate_judgements
    from .._metrics.registry import JUDGEMENT_GROUPS, PREFERENCES

    grouped = args.rel_format == "qrels_jg"
    form = JUDGEMENT_GROUPS if grouped else PREFERENCES
    shown = [v for v in values if v.metric is not None]
    metric_of = {v.name: parse_metrics([v.metric], form)[0] for v in shown}
    parsed = list({m.name: m for m in metric_of.values()}.values())
    with warnings_as_lines("trec_eval"):
        result = evaluate_judgements(
            run,
            judgements,
            args.rel_format,
            parsed or parse_metrics(["map_avgjg" if grouped else "prefs_simp"], form),
            level=float(args.level),
            complete=args.complete,
            max_retrieved=args.max_retrieved,
            judged_only=args.judged_only,
        )
    queries = [str(q) for q in result.config["query_ids"]]
    table = {v.name: np.asarray(result.per_query[metric_of[v.name].name], dtype=np.float64) for v in shown}
    return _lines(args, values, queries, table, {}, set(), run, zscores)


def _tie_aware(name: str, ties: str | None) -> None:
    """ValueError where ``ties="expected"`` has no value for the metric ``name``."""
    metric = parse_metrics([name], RANKINGS)[0]
    if ties == "expected" and metric.spec.forms[RANKINGS].expected is None and not metric.spec.order_free:
        raise ValueError(name)


def _available(values, own: set, ties: str | None = None) -> tuple[list, list[str], list[str]]:
    """(the values the registry can compute, problems, measures left out): a measure named in
    ``-m`` that it cannot compute (or has no expected value under ``--ties expected``) is a
    problem, one that came with a set (all_trec) is left out."""
    kept, problems, dropped = [], [], []
    for v in values:
        name = None if v.kind == "string" else v.metric  # relstring: made from the listing, not the registry
        if name is not None:
            try:
                _tie_aware(name, ties)
            except ValueError:
                if v.measure in own:
                    why = "with --ties expected (no tie-aware value is derived)" if ties == "expected" else "yet"
                    problems.append(f"-m {v.measure}: embedeval cannot compute trec_eval's {v.name!r} {why}")
                elif v.measure not in dropped:
                    dropped.append(v.measure)
                continue
        kept.append(v)
    return kept, problems, dropped


def _output(args, values, qrels, run, zscores) -> str:
    from .._forms.trec.drop_in import evaluate_as_trec_eval

    metrics = sorted({v.metric for v in values if v.metric and v.kind != "string"})
    parsed = parse_metrics(metrics or ["map"], RANKINGS)
    with warnings_as_lines("trec_eval"):
        result, counts = evaluate_as_trec_eval(
            run, qrels, parsed, float(args.level), args.complete, args.max_retrieved, args.judged_only, args.ties
        )
    queries = [str(q) for q in result.config["query_ids"]]
    return _lines(args, values, queries, *_table(values, metrics, result, counts), run, zscores, counts)


def _lines(args, values, queries, table, strings, summary_only, run, zscores, counts=None) -> str:
    """trec_eval's lines: with -q each query's (a relstring from ``strings``, none of a measure
    printed as a summary only), then unless -n each measure's summary: the sum of a count, the
    geometric mean of a measure in ``summary_only``, the mean of the rest."""
    from .._forms.trec.lines import run_tag

    if zscores is not None:
        table = {name: _z(zscores, queries, name, x) for name, x in table.items()}
    lines = []
    for i, q in enumerate(queries if args.per_query else []):
        for v in values:
            if v.kind == "string":
                text = counts.placeholder(i, v.name == v.measure)
                lines.append(f"{v.name:<22}\t{q}\t'{strings[v.name][i] if text is None else text}'")
            elif v.kind not in ("runid", "num_q") and v.name not in summary_only:
                lines.append(_line(v, q, table[v.name][i], zscores))
    if args.summary:
        if args.complete and "num_rel" in table and zscores is None:
            table["num_rel"] = counts.positive.astype(np.float64)  # trec_eval -c: qrels lines with a grade > 0
        tag = run_tag(run)
        for v in values:
            if v.kind != "string":
                kind = "gm" if v.name in summary_only else v.kind
                lines.append(_summary(v, kind, table.get(v.name), len(queries), tag, zscores))
    return "".join(f"{line}\n" for line in lines)


def _table(values, metrics, result, counts) -> tuple[dict, dict, set]:
    """({printed name: per-query values}, {relstring name: strings}, the names printed as a
    summary only): the registry's values under trec_eval's names, a measure whose declared
    summary is the geometric mean (gm_map) as the logs of its floored values."""
    spec_of = {name: parse_metrics([name], RANKINGS)[0] for name in metrics}
    registry = {name: np.asarray(result.per_query[spec_of[name].name], dtype=np.float64) for name in metrics}
    summary_only = {v.name for v in values if v.metric in spec_of and spec_of[v.metric].spec.summary == "gm"}
    columns = {
        "num_ret": counts.retrieved.astype(np.float64),
        "num_rel": counts.relevant.astype(np.float64),
        "num_rel_ret": counts.relevant_retrieved.astype(np.float64),
    }
    table, strings = {}, {}
    for v in values:
        if v.name in summary_only:
            table[v.name] = np.log(np.maximum(registry[v.metric], GM_FLOOR))
        elif v.kind in ("count", "long", "double"):
            table[v.name] = columns[v.name] if v.kind == "count" else registry[v.metric]
        elif v.kind == "string":
            strings[v.name] = counts.relstrings(int(v.metric))
    return table, strings, summary_only


def _line(v, query: str, value: float, zscores) -> str:
    if zscores is not None:
        return f"Z{v.name:<22}\t{query}\t{value:6.4f}"
    if v.kind in ("count", "long", "num_q"):
        return f"{v.name:<22}\t{query}\t{int(value)}"
    return f"{v.name:<22}\t{query}\t{value:6.4f}"


def _summary(v, kind: str, values, n: int, tag: str, zscores) -> str:
    if kind == "runid":
        return f"{'runid':<22}\tall\t{tag}"
    if kind == "num_q":
        return _line(v, "all", float(n), zscores) if zscores is None else f"Z{v.name:<22}\tall\t{n:6.4f}"
    if kind == "gm":
        return _line(v, "all", math.exp(_sequential_sum(values) / n), None if zscores is None else zscores)
    if kind in ("count", "long"):
        return _line(v, "all", _sequential_sum(values), zscores)
    return _line(v, "all", _sequential_sum(values) / n, zscores)


def _read_zscores(path) -> dict:
    """{(query, measure): (mean, sd)} of a z-score file (``qid measure mean sd`` per line), its
    lines and fields split and its numbers read as every TREC file's (:func:`trec_lines`,
    :func:`trec_number`)."""
    out = {}
    with open(path, "rb") as f:
        for number, _, parts in trec_lines(f):
            where = f"{path}:{number}"
            if not parts:
                continue
            if len(parts) != 4:
                raise ValueError(f"{where}: a z-score line needs 4 fields (qid measure mean sd); got {len(parts)}")
            query, measure = (part.decode("utf-8", "surrogateescape") for part in parts[:2])
            out[query, measure] = (trec_number(parts[2], "mean", where), trec_number(parts[3], "sd", where))
    return out


def _z(zscores: dict, queries: list, name: str, values: np.ndarray) -> np.ndarray:
    out = np.empty_like(values)
    for i, (q, x) in enumerate(zip(queries, values.tolist(), strict=True)):
        mean, sd = zscores.get((q, name), (None, None))
        if mean is None:
            out[i] = MISSING_Z
        elif sd:
            out[i] = (x - mean) / sd
        else:
            out[i] = 0.0 if x == mean else MISSING_Z
    return out


def _sequential_sum(values: np.ndarray) -> float:
    """The values added one after another in query order, as trec_eval accumulates them (a
    pairwise sum can differ in the last bit, which moves a value at a rounding boundary)."""
    return float(np.cumsum(values)[-1]) if len(values) else 0.0
