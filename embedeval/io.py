"""Reading TREC run and qrels files (the formats trec_eval reads).

A run line is ``query_id Q0 doc_id rank score tag``; trec_eval ignores the rank column and
orders each query's documents by score, descending, ties by doc id descending, and so does
:func:`read_run`. A qrels line is ``query_id iteration doc_id grade``. Fields are separated by
whitespace. With pyarrow installed (``pip install 'embedeval[fast]'``) the files are parsed by its
CSV reader; without it, line by line (about 10 times slower); the results are the same.
"""

from __future__ import annotations

from ._trec import qrels_as_dicts, run_as_lists


def read_run(path) -> dict[str, list[str]]:
    """Read a TREC run file into ``{query_id: [doc_id, ...]}``, each list best first.

    Raises
    ------
    ValueError
        For a line without 6 fields (qid Q0 docid rank score tag), a score that is not a number
        or is NaN, or a document listed twice for one query; the message names the file and line.
    """
    return run_as_lists(path)


def read_qrels(path) -> dict[str, dict[str, float]]:
    """Read a TREC qrels file into ``{query_id: {doc_id: grade}}``.

    Raises
    ------
    ValueError
        For a line without 4 fields (qid iteration docid grade), a grade that is not a finite
        number, or a document judged twice; the message names the file and line.
    """
    return qrels_as_dicts(path)


def common_queries(run: dict, qrels: dict) -> tuple[dict, dict]:
    """Keep the queries present in both, as trec_eval does (it evaluates judged queries only)."""
    keep = [q for q in run if q in qrels]
    return {q: run[q] for q in keep}, {q: qrels[q] for q in keep}
