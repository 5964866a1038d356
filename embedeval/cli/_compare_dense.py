"""``embedeval compare --qrels QRELS`` (or ``--beir DIR``): dense retrieval systems, each a
query-embeddings file and a corpus-embeddings file, against one set of judgements.

A system is ``--system NAME=QUERIES,CORPUS``; ``NAME=Q1,C1,Q2,C2`` gives it several runs (seeds,
folds), a pair each. Every run is evaluated as ``embedeval retrieval`` evaluates one (the same
ids, qrels and rules), then the per-query values are compared as for any other systems.
Problems are found in two rounds, each reported whole: the arguments before any file is read,
then the files' shapes (every pair's dimensions and rows) before any search.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .._metrics.registry import DEFAULT_RANKING_METRICS, RANKINGS
from ._judgements import add_id_options, beir_problems, load_judgements, restricted, retrieval_options
from ._loaders import load_array
from ._problems import UsageError, argument_problems

# the options only the dense form reads (each None when not given)
_DENSE_ONLY = ("--query-ids", "--corpus-ids", "--split", "--absent-docs")


def add_dense_arguments(cp) -> None:
    """compare's options for systems of query and corpus embeddings (as ``retrieval`` reads them)."""
    cp.add_argument(
        "--qrels",
        metavar="FILE",
        help="judgements for systems given as --system NAME=QUERIES,CORPUS: TREC qrels or a BEIR table, as retrieval",
    )
    add_id_options(
        cp,
        beir="a BEIR folder instead of --qrels (its ids, and qrels/SPLIT.tsv)",
        query_ids="with --qrels: an id per query row (default: the qrels' order)",
        corpus_ids="with --qrels: an id per corpus row (default: 0, 1, ...)",
    )
    cp.add_argument(
        "--absent-docs",
        choices=("count", "drop", "error"),
        default=None,
        help="judged documents missing from the corpus, as retrieval (default: count)",
    )


def asked(args) -> bool:
    """Whether the command line asks for the dense form (--qrels or --beir)."""
    return args.qrels is not None or args.beir is not None


@dataclass(frozen=True)
class Pair:
    """One run of a dense system: its query and corpus embedding files."""

    queries: str
    corpus: str

    def label(self, name: str, several: bool) -> str:
        return f"{name} ({Path(self.queries).name}, {Path(self.corpus).name})" if several else name


def other_form_problems(args) -> list[str]:
    """The dense form's own options, given without --qrels or --beir."""
    given = {
        "--query-ids": args.query_ids,
        "--corpus-ids": args.corpus_ids,
        "--split": args.split,
        "--absent-docs": args.absent_docs,
    }
    return [
        f"{flag} goes with --qrels or --beir (systems of query and corpus embeddings)"
        for flag in _DENSE_ONLY
        if given[flag] is not None
    ]


def systems_of(args) -> tuple[dict[str, list[Pair]], list[str]]:
    """({name: [Pair, ...]}, problems) from --system; positional files have no place."""
    problems = []
    if args.inputs:
        problems.append(
            "with --qrels or --beir, give each system as --system NAME=QUERIES,CORPUS (no positional files); "
            f"got {' '.join(args.inputs)}"
        )
    systems: dict[str, list[Pair]] = {}
    for spec in args.system or []:
        name, sep, text = spec.partition("=")
        files = [f for f in text.split(",") if f]
        if not sep or not name or not files:
            problems.append(f"--system must be NAME=QUERIES,CORPUS[,QUERIES,CORPUS...]; got {spec!r}")
        elif len(files) % 2:
            problems.append(
                f"--system {name}: an odd number of files ({len(files)}) makes no pairs; give QUERIES,CORPUS for "
                f"each run (seed, fold): NAME=Q1,C1,Q2,C2; got {text!r}"
            )
        elif name in systems:
            problems.append(f"--system {name}: the name is taken; each system needs its own name")
        else:
            systems[name] = [Pair(q, c) for q, c in zip(files[::2], files[1::2], strict=True)]
    if len(args.system or []) < 2:
        problems.append(
            f"give at least two systems, each as --system NAME=QUERIES,CORPUS; got {len(args.system or [])} "
            "(--system BASE=q.npy,c.npy --system NEW=q2.npy,c2.npy)"
        )
    return systems, problems


def argument_problems_of(args, systems: dict[str, list[Pair]]) -> list[str]:
    """Every problem visible before a file is read: missing files, metric names, the judgements'
    options (--qrels or --beir, and what goes with each)."""
    paths = {}
    for name, pairs in systems.items():
        for pair in pairs:
            label = pair.label(name, len(pairs) > 1)
            paths[f"{label} QUERIES"], paths[f"{label} CORPUS"] = pair.queries, pair.corpus
    paths |= {"--qrels": args.qrels, "--query-ids": args.query_ids, "--corpus-ids": args.corpus_ids}
    problems = argument_problems(paths, args.metrics, RANKINGS) + beir_problems(args, "--qrels FILE")
    if args.absent_docs is not None and args.beir is None and args.corpus_ids is None:
        problems.append(
            "--absent-docs needs --corpus-ids or --beir: without corpus ids the rows are named 0, 1, ... and a "
            "judged document that names no row is an error"
        )
    return problems


def _shape(path: str, what: str, key) -> tuple[tuple | None, str | None]:
    """(shape, None) of an embeddings file, or (None, the problem reading it)."""
    try:
        return load_array(Path(path), what, key).shape, None
    except ValueError as exc:
        return None, str(exc)


def _pair_problems(label: str, pair: Pair, q_shape, c_shape, n_queries: int, n_corpus: int | None) -> list[str]:
    files = f"{label}: {pair.queries} and {pair.corpus}"
    if len(q_shape) != 2 or len(c_shape) != 2:
        return [f"{files}: embeddings must be 2-D (rows, dimensions); got shapes {q_shape} and {c_shape}"]
    problems = []
    if q_shape[1] != c_shape[1]:
        problems.append(
            f"{files}: the queries have {q_shape[1]} dimensions and the corpus {c_shape[1]}; "
            "a system embeds both with one model"
        )
    if q_shape[0] != n_queries:
        problems.append(
            f"{label}: {pair.queries} has {q_shape[0]} rows but there are {n_queries} query ids "
            "(--query-ids, the BEIR folder's queries.jsonl, or the qrels' queries in order)"
        )
    if n_corpus is not None and c_shape[0] != n_corpus:
        problems.append(f"{label}: {pair.corpus} has {c_shape[0]} rows but there are {n_corpus} corpus ids")
    return problems


def shape_problems(args, systems: dict[str, list[Pair]], n_queries: int, corpus_ids) -> list[str]:
    """Every pair's files read for their shapes only (a .npy is memory-mapped): unreadable files,
    dimensions that differ within a pair, rows that do not match the ids; without corpus ids,
    every corpus must have as many rows as the first (the same documents, by position)."""
    problems, n_corpus = [], None if corpus_ids is None else len(corpus_ids)
    first_corpus = None
    for name, pairs in systems.items():
        for pair in pairs:
            label = pair.label(name, len(pairs) > 1)
            (q_shape, q_problem), (c_shape, c_problem) = (
                _shape(pair.queries, f"{label} queries", args.key),
                _shape(pair.corpus, f"{label} corpus", args.key),
            )
            problems += [p for p in (q_problem, c_problem) if p]
            if q_shape is None or c_shape is None:
                continue
            problems += _pair_problems(label, pair, q_shape, c_shape, n_queries, n_corpus)
            if n_corpus is None and len(c_shape) == 2:
                if first_corpus is None:
                    first_corpus = (pair.corpus, c_shape[0])
                elif c_shape[0] != first_corpus[1]:
                    problems.append(
                        f"{label}: {pair.corpus} has {c_shape[0]} rows but {first_corpus[0]} has {first_corpus[1]}; "
                        "without --corpus-ids the documents are named by row, so every corpus must hold the same "
                        "documents in the same order"
                    )
    return problems


def evaluate_pairs(args, comparison_problems) -> tuple[dict, dict[str, str]]:
    """({name: result or [result per run]}, the inputs for the report), every problem raised
    at once as a UsageError before any search; ``comparison_problems(names)`` gives those of
    the comparison's own options, reported with the first round."""
    from .._embeddings.retrieval import evaluate_retrieval

    if args.metrics is None:
        args.metrics = list(DEFAULT_RANKING_METRICS)
    systems, problems = systems_of(args)
    problems += argument_problems_of(args, systems) + comparison_problems(list(systems))
    if problems:
        raise UsageError(problems)
    query_ids, corpus_ids, qrels = load_judgements(args)
    problems = shape_problems(args, systems, len(query_ids), corpus_ids)
    if problems:
        raise UsageError(problems)
    qrels = restricted(args, qrels, query_ids)  # it warns of unjudged queries: after the problems above
    out = {}
    for name, pairs in systems.items():
        runs = []
        for pair in pairs:
            queries = load_array(Path(pair.queries), f"{name} queries", args.key)
            corpus = load_array(Path(pair.corpus), f"{name} corpus", args.key)
            options = retrieval_options(args, query_ids, corpus_ids, len(corpus))
            runs.append(evaluate_retrieval(queries, corpus, qrels, distance=args.distance, **options))
        out[name] = runs if len(runs) > 1 else runs[0]
    judged = args.qrels if args.beir is None else f"{args.beir} (BEIR, split {args.split or 'test'})"
    inputs = {name: ", ".join(f"{p.queries} + {p.corpus}" for p in pairs) for name, pairs in systems.items()}
    return out, {**inputs, "judgements": judged}
