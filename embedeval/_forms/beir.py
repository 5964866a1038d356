"""A BEIR folder: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``.

The ids come in file order, so that row ``i`` of embeddings made from the file in its order is
the id ``i``. Rules (each said in one warning line; see :func:`read_beir`):

* a query of ``queries.jsonl`` without judgements in the split is kept (its row stays), and
  :func:`embedeval.evaluate_retrieval` skips and counts it;
* a judged query that ``queries.jsonl`` lacks is left out (nothing ranks for it; trec_eval
  evaluates only the queries it has a ranking for);
* a judgement of a document that ``corpus.jsonl`` lacks is kept: :func:`embedeval.evaluate_retrieval`
  counts it as relevant and never retrieved (its ``absent_docs="count"``), as pytrec_eval does
  given BEIR's qrels, and says so in one warning line.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import NamedTuple

from .tables import is_table, read_id_file

QRELS_SUFFIXES = (".tsv", ".csv", ".jsonl", ".parquet")


class BeirFolder(NamedTuple):
    """What :func:`read_beir` returns: unpack it as ``query_ids, corpus_ids, qrels``."""

    query_ids: list[str]
    corpus_ids: list[str]
    qrels: dict[str, dict[str, float]]


def _one(folder: Path, stem: str, suffixes: tuple[str, ...], what: str) -> Path:
    found = [folder / f"{stem}{s}" for s in suffixes if (folder / f"{stem}{s}").is_file()]
    if not found:
        names = ", ".join(f"{stem}{s}" for s in suffixes)
        raise ValueError(f"BEIR folder {folder} has no {what} (looked for {names})")
    if len(found) > 1:
        raise ValueError(f"BEIR folder {folder} has several {what} files: {[p.name for p in found]}; keep one")
    return found[0]


def qrels_file(folder, split: str) -> Path:
    """The qrels file of ``split`` in a BEIR folder: ``qrels/<split>`` as .tsv, .csv, .jsonl or .parquet."""
    return _one(Path(folder) / "qrels", split, QRELS_SUFFIXES, f"qrels for split {split!r}")


def read_beir(folder, split: str, read_qrels) -> BeirFolder:
    """The ids and judgements of a BEIR folder (``read_qrels``: the qrels reader of :mod:`embedeval.io`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"BEIR folder {folder} is not a folder")
    queries_path = _one(folder, "queries", (".jsonl",), "queries")
    corpus_path = _one(folder, "corpus", (".jsonl",), "corpus")
    qrels_path = qrels_file(folder, split)
    _check_header(qrels_path)
    query_ids, corpus_ids = read_id_file(queries_path), read_id_file(corpus_path)
    judged = read_qrels(qrels_path)
    qrels = restrict(judged, query_ids, str(qrels_path), queries_path.name)
    return BeirFolder(query_ids, corpus_ids, qrels)


def _check_header(path: Path) -> None:
    """ValueError naming the file if a BEIR qrels ``.tsv`` lacks its header row (BEIR's own
    loader would take the first judgement for the header; the TREC reader would ask for 4 fields)."""
    if path.suffix.lower() != ".tsv" or is_table(path):
        return
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        first = next((line.rstrip("\r\n") for line in f if line.strip()), "")
    raise ValueError(
        f"{path}:1: a BEIR qrels file begins with the header row 'query-id<TAB>corpus-id<TAB>score'; "
        f"the first line is {first!r}: add the header"
    )


def restrict(judged: dict, query_ids, source: str, queries: str, stacklevel: int = 4) -> dict:
    """The judgements of the known queries, each rule of the module said in one warning line
    (``source``, ``queries``: the names the lines give the files)."""
    known_queries = set(query_ids)
    absent_queries = [q for q in judged if q not in known_queries]
    if absent_queries:
        n = len(absent_queries)
        warnings.warn(
            f"{n} judged quer{'y' if n == 1 else 'ies'} of {source} {'is' if n == 1 else 'are'} not in {queries} "
            f"(first {absent_queries[0]!r}) and left out: nothing ranks for {'it' if n == 1 else 'them'}",
            UserWarning,
            stacklevel=stacklevel,
        )
    # judgements of documents the corpus lacks stay: the evaluation counts them (absent_docs)
    qrels = {query: judged[query] for query in judged if query in known_queries}
    unjudged = sum(q not in qrels for q in query_ids)
    if unjudged:
        warnings.warn(
            f"{unjudged} of {len(query_ids)} queries in {queries} have no judgements in {source}; they are "
            "skipped and counted in 'skipped'",
            UserWarning,
            stacklevel=stacklevel,
        )
    return qrels
