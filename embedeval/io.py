"""Reading TREC run and qrels files (the formats trec_eval reads).

A run line is ``query_id Q0 doc_id rank score tag``; trec_eval ignores the rank column and
orders each query's documents by score, descending, ties by doc id descending, and so does
:func:`read_run`. A qrels line is ``query_id iteration doc_id grade``.
"""

from __future__ import annotations

from pathlib import Path

from ._rankings import _order_by_score


def _lines(path):
    with open(Path(path), encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            if line.strip():
                yield number, line.split()


def read_run(path) -> dict[str, list[str]]:
    """Read a TREC run file into ``{query_id: [doc_id, ...]}``, each list best first.

    Raises
    ------
    ValueError
        For a line without 6 fields, a score that is not a number, or a document listed twice
        for one query; the message names the file and line.
    """
    scored: dict[str, dict[str, float]] = {}
    for number, fields in _lines(path):
        if len(fields) != 6:
            raise ValueError(
                f"{path}:{number}: a run line needs 6 fields (qid Q0 docid rank score tag); got {len(fields)}"
            )
        qid, _, doc, _, score, _ = fields
        try:
            value = float(score)
        except ValueError:
            raise ValueError(f"{path}:{number}: score must be a number; got {score!r}") from None
        docs = scored.setdefault(qid, {})
        if doc in docs:
            raise ValueError(f"{path}:{number}: document {doc!r} is listed twice for query {qid!r}")
        docs[doc] = value
    return {qid: _order_by_score(docs) for qid, docs in scored.items()}


def read_qrels(path) -> dict[str, dict[str, float]]:
    """Read a TREC qrels file into ``{query_id: {doc_id: grade}}``.

    Raises
    ------
    ValueError
        For a line without 4 fields, a grade that is not a number, or a document judged twice.
    """
    qrels: dict[str, dict[str, float]] = {}
    for number, fields in _lines(path):
        if len(fields) != 4:
            raise ValueError(
                f"{path}:{number}: a qrels line needs 4 fields (qid iteration docid grade); got {len(fields)}"
            )
        qid, _, doc, grade = fields
        try:
            value = float(grade)
        except ValueError:
            raise ValueError(f"{path}:{number}: grade must be a number; got {grade!r}") from None
        judged = qrels.setdefault(qid, {})
        if doc in judged:
            raise ValueError(f"{path}:{number}: document {doc!r} is judged twice for query {qid!r}")
        judged[doc] = value
    return qrels


def common_queries(run: dict, qrels: dict) -> tuple[dict, dict]:
    """Keep the queries present in both, as trec_eval does (it evaluates judged queries only)."""
    keep = [q for q in run if q in qrels]
    return {q: run[q] for q in keep}, {q: qrels[q] for q in keep}
