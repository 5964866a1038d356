"""The judgements of query and corpus embeddings, for ``retrieval`` and ``compare --qrels/--beir``:
a qrels file with the id files, or a BEIR folder; how they are declared, checked, read and passed
to :func:`embedeval.evaluate_retrieval`."""

from __future__ import annotations

from pathlib import Path


def add_id_options(p, beir: str, query_ids: str, corpus_ids: str) -> None:
    """--beir, --split, --query-ids and --corpus-ids, with each command's help."""
    p.add_argument("--beir", metavar="DIR", help=beir)
    p.add_argument("--split", default=None, help="the qrels of --beir to read (default: test)")
    p.add_argument("--query-ids", metavar="FILE", help=query_ids)
    p.add_argument("--corpus-ids", metavar="FILE", help=corpus_ids)


def beir_problems(args, qrels: str) -> list[str]:
    """``qrels`` (how the command names its qrels file) or --beir, one of them; --beir gives the
    ids; --split goes with --beir."""
    if args.beir is None:
        problems = [] if args.qrels is not None else [f"give {qrels} or --beir DIR, one of them"]
        return problems + (["--split goes with --beir"] if args.split is not None else [])
    problems = [] if Path(args.beir).is_dir() else [f"--beir: no such folder: {args.beir}"]
    if args.qrels is not None:
        problems.append(f"give {qrels} or --beir DIR, one of them (the folder holds its qrels)")
    return problems + [
        f"{flag} has no place with --beir (the folder's queries.jsonl and corpus.jsonl give the ids)"
        for flag, value in (("--query-ids", args.query_ids), ("--corpus-ids", args.corpus_ids))
        if value is not None
    ]


def load_judgements(args) -> tuple[list, list | None, dict]:
    """(query ids, corpus ids or None for row positions, qrels) from --beir, or from the qrels and
    the id files; the qrels as read (:func:`restricted` once the ids are checked)."""
    from .._forms.tables import read_id_file
    from ..io import read_beir, read_qrels

    if args.beir is not None:
        query_ids, corpus_ids, qrels = read_beir(args.beir, args.split or "test")
        return list(query_ids), list(corpus_ids), qrels
    qrels = read_qrels(args.qrels)
    query_ids = read_id_file(args.query_ids) if args.query_ids else list(qrels)
    corpus_ids = read_id_file(args.corpus_ids) if args.corpus_ids else None
    return query_ids, corpus_ids, qrels


def restricted(args, qrels: dict, query_ids: list) -> dict:
    """With every id known (--query-ids and --corpus-ids), BEIR's rules for the other judgements,
    one warning line each (:func:`embedeval._forms.beir.restrict`); a BEIR folder has had them."""
    if args.beir is not None or not (args.query_ids and args.corpus_ids):
        return qrels
    from .._forms.beir import restrict

    return restrict(qrels, query_ids, args.qrels, args.query_ids)


def retrieval_options(args, query_ids: list, corpus_ids: list | None, n_corpus: int) -> dict:
    """The options of :func:`embedeval.evaluate_retrieval` that the judgements' arguments give.
    Without corpus ids the rows are named by position, and a judged document that names no row
    is an error."""
    return {
        "query_ids": query_ids,
        "corpus_ids": corpus_ids if corpus_ids is not None else [str(i) for i in range(n_corpus)],
        "metrics": args.metrics,
        "threshold": args.threshold,
        "empty": args.empty,
        "absent_docs": (args.absent_docs or "count") if corpus_ids is not None else "error",
    }
