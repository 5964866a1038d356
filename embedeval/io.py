"""Reading TREC run and qrels files (the formats trec_eval reads).

A run line is ``query_id Q0 doc_id rank score tag``; trec_eval ignores the rank column and
orders each query's documents by score, descending, ties by doc id descending, and so does
:func:`read_run`. A qrels line is ``query_id iteration doc_id grade``.
"""

from __future__ import annotations

from pathlib import Path

from ._rankings import _order_by_score


def _read(path, layout: str, value_field: str, twice: str) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: value}}`` from a whitespace-separated file whose fields are named by
    ``layout``; errors name the file and line."""
    names = layout.split()
    table: dict[str, dict[str, float]] = {}
    with open(Path(path), encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) != len(names):
                raise ValueError(f"{path}:{number}: a line needs {len(names)} fields ({layout}); got {len(fields)}")
            row = dict(zip(names, fields, strict=True))
            try:
                value = float(row[value_field])
            except ValueError:
                raise ValueError(f"{path}:{number}: {value_field} must be a number; got {row[value_field]!r}") from None
            docs = table.setdefault(row["qid"], {})
            if row["docid"] in docs:
                raise ValueError(f"{path}:{number}: document {row['docid']!r} is {twice} for query {row['qid']!r}")
            docs[row["docid"]] = value
    return table


def read_run(path) -> dict[str, list[str]]:
    """Read a TREC run file into ``{query_id: [doc_id, ...]}``, each list best first.

    Raises
    ------
    ValueError
        For a line without 6 fields (qid Q0 docid rank score tag), a score that is not a number,
        or a document listed twice for one query; the message names the file and line.
    """
    scored = _read(path, "qid Q0 docid rank score tag", "score", "listed twice")
    return {qid: _order_by_score(docs) for qid, docs in scored.items()}


def read_qrels(path) -> dict[str, dict[str, float]]:
    """Read a TREC qrels file into ``{query_id: {doc_id: grade}}``.

    Raises
    ------
    ValueError
        For a line without 4 fields (qid iteration docid grade), a grade that is not a number,
        or a document judged twice.
    """
    return _read(path, "qid iteration docid grade", "grade", "judged twice")


def common_queries(run: dict, qrels: dict) -> tuple[dict, dict]:
    """Keep the queries present in both, as trec_eval does (it evaluates judged queries only)."""
    keep = [q for q in run if q in qrels]
    return {q: run[q] for q in keep}, {q: qrels[q] for q in keep}
