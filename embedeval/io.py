"""Reading TREC run and qrels files (the formats trec_eval reads).

A run line is ``query_id Q0 doc_id rank score tag``; trec_eval ignores the rank column and
orders each query's documents by score, descending, ties by doc id descending, and so does
:func:`read_run`. A qrels line is ``query_id iteration doc_id grade``. Fields are separated by
whitespace. With pyarrow installed (``pip install 'embedeval[fast]'``) the files are parsed by its
CSV reader; without it, line by line (6 to 7 times slower); the results are the same.
:func:`evaluate_files` evaluates the files without making Python objects per line, as the
``embedeval rankings`` command does.
"""

from __future__ import annotations

from ._forms.rankings import check_options
from ._forms.trec.evaluate import evaluate_files as _evaluate_files
from ._forms.trec.evaluate import qrels_as_dicts, run_as_lists
from ._metrics.registry import DEFAULT_RANKING_METRICS


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


def evaluate_files(
    run,
    qrels,
    *,
    metrics=DEFAULT_RANKING_METRICS,
    threshold: float = 1,
    empty: str = "skip",
    complete: bool = False,
    ties: str | None = None,
):
    """Evaluate a TREC run file against a qrels file, as ``embedeval rankings RUN QRELS`` does.

    The files are read as columns (no Python object per line), which is several times faster
    and lighter than ``evaluate_rankings(*common_queries(read_run(run), read_qrels(qrels)))``,
    with the same numbers.

    Parameters
    ----------
    run, qrels : str or path
    metrics, threshold, empty
        As in :func:`embedeval.evaluate_rankings` (trec_eval's names are accepted).
    complete : bool
        Also evaluate every judged query without a run, as an empty ranking (trec_eval ``-c``).
        By default only the queries in both files are, as trec_eval does.
    ties : {None, "expected", "optimistic", "pessimistic"}
        Documents with exactly equal scores: None ranks them by trec_eval's rule (id
        descending); the others as in :func:`embedeval.evaluate_rankings`. A run lists only its
        top documents: a tie group cut off by the end of a query's list is taken to be the
        listed documents alone (what lies beyond is unknown), so ``"expected"`` averages over
        their orders only.

    Returns
    -------
    EvaluationResult
        ``config["query_ids"]``: the common queries in run order, then (``complete``) the judged
        queries without a run; ``config["judged_without_run"]`` and
        ``config["ranked_without_judgements"]`` count the queries found in one file only.

    Raises
    ------
    ValueError
        As :func:`read_run` and :func:`read_qrels`, naming the file and line; and when no query
        of the run is judged.
    """
    parsed, threshold, ties = check_options(metrics, threshold, empty, complete, ties)
    result, _ = _evaluate_files(run, qrels, parsed, threshold, empty, complete, ties)
    return result
