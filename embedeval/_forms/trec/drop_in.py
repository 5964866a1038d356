"""TREC files evaluated with every convention of trec_eval 10, for ``embedeval trec_eval``.

What differs from :func:`embedeval._forms.trec.evaluate.evaluate_files` (the ``rankings``
command), each one trec_eval's rule:

- queries: every judged query that has a run (with ``complete``, every judged query; one without
  a run is an empty ranking), in the byte order of their ids (trec_eval sorts with ``strcmp``);
  ranked queries without judgements are left out;
- grades: trec_eval reads them with ``atol``, so they are truncated towards zero (``1.7`` is 1);
  a query without a relevant document is scored 0 and averaged in;
- ``max_retrieved`` (``-M``): each query's ranking is cut to its first documents, in trec_eval's
  order, before anything else;
- ``judged_only`` (``-J``): then documents that are not judged with a grade >= 0 are removed and
  the rest ranked 1, 2, ... in the same order;
- counts: documents retrieved, relevant (grade >= level) and relevant retrieved, per query.

Every retrieved judged document, whatever its grade, is in :class:`~embedeval._forms.graded.Judged`
(``rows``, ``ranks``, ``grades``), so measures that read judged non-relevant documents (bpref)
find them; the registry's kernels read the positive grades only.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..graded import Judged
from ..rankings import result_of
from .columns import Columns, hash_strings
from .evaluate import _check_qrels, matched, no_common_queries, on_both_files, order
from .lines import no_run_lines


@dataclass(frozen=True)
class Counts:
    """Per evaluated query (arrays of shape (n_queries,)): documents retrieved (after ``-M`` and
    ``-J``), judged relevant (grade >= level) and relevant among those retrieved."""

    retrieved: np.ndarray
    relevant: np.ndarray
    relevant_retrieved: np.ndarray
    judged: Judged | None = None  # every retrieved judged document (for relstring)
    ranked: np.ndarray | None = None  # (n_queries,) bool: the query has a run (False: -c gave it none)
    # (n_queries,) judged documents with a grade > 0, whatever the level: what trec_eval sums as
    # num_rel's summary under -c (its own rule for that one line)
    positive: np.ndarray | None = None

    def relstrings(self, length: int) -> list[str]:
        """trec_eval's relstring of each query: one character per rank of its first ``length``
        documents: the grade (0-9), ``>`` above 9, ``.`` a negative grade, ``-`` not in the qrels."""
        n = self.retrieved.size
        width = max(int(length), 0)
        chars = np.full((n, width), ord("-"), dtype=np.uint8)
        j = self.judged
        at = np.asarray(j.ranks, dtype=np.int64) - 1
        keep = at < width
        g = j.grades[keep]
        code = np.where(g > 9, ord(">"), np.where(g >= 0, ord("0") + np.clip(g, 0, 9), ord("."))).astype(np.uint8)
        chars[j.rows[keep], at[keep]] = code
        lengths = np.minimum(self.retrieved, width)
        return [chars[i, : lengths[i]].tobytes().decode("ascii") for i in range(n)]

    def placeholder(self, i: int, named: bool) -> str | None:
        """trec_eval's relstring of a query that ``-c`` adds without a run: it ranks one document
        outside the qrels, then clears the string only under the bare name ``relstring``, so
        ``relstring_20`` keeps ``-``; None for a query with a run."""
        if self.ranked is None or self.ranked[i]:
            return None
        return "" if named else "-"


def evaluate_as_trec_eval(
    run_path,
    qrels_path,
    parsed,
    level: float,
    complete=False,
    max_retrieved=None,
    judged_only=False,
    ties=None,
    *,
    hasher=hash_strings,
):
    """(EvaluationResult, :class:`Counts`) of a run file against a qrels file by trec_eval's rules
    (above); ``parsed`` are registry metrics, ``level`` is ``-l``. The result's
    ``config["query_ids"]`` are the evaluated queries in trec_eval's order. ``ties``: None
    (trec_eval's order) or a tie-aware rule over the documents of equal score within each
    query's evaluated ranking (after ``-M`` and ``-J``). ``hasher``: the document ids' hash
    (:func:`~.columns.hash_strings`; the result does not depend on it, collisions included)."""
    options = (parsed, level, complete, max_retrieved, judged_only, ties)
    return on_both_files(run_path, qrels_path, lambda run, qrels: _evaluate(run, qrels, *options), hasher)


def _queries(run: Columns, qrels: Columns, complete: bool) -> tuple[list, np.ndarray]:
    """(query ids in byte order, each one's segment of the ordered run or -1)."""
    if not run.queries:
        raise no_run_lines(run.path)
    segment_of = {q: i for i, q in enumerate(run.queries)}
    ids = sorted((q for q in qrels.queries if complete or q in segment_of), key=lambda q: q.encode())
    if not ids:
        raise no_common_queries(run, qrels)
    return ids, np.array([segment_of.get(q, -1) for q in ids], dtype=np.int64)


def _evaluate(run: Columns, qrels: Columns, parsed, level, complete, max_retrieved, judged_only, ties=None):
    _check_qrels(qrels)
    ordered = order(run)
    query_ids, segments = _queries(run, qrels, complete)
    judged, counts, rows, grades, found = matched(
        run, qrels, ordered, query_ids, segments, ties, max_retrieved, judged_only, truncate=True
    )
    relevant = grades >= level
    tally = lambda mask: np.bincount(rows[mask], minlength=len(query_ids))  # noqa: E731
    found_mask = np.zeros(rows.size, dtype=bool)
    found_mask[found] = True
    counted = Counts(
        counts.astype(np.int64), tally(relevant), tally(relevant & found_mask), judged, segments >= 0, tally(grades > 0)
    )
    config = {"complete": complete, "max_retrieved": max_retrieved, "judged_only": judged_only}
    return result_of(judged, parsed, level, "zero", query_ids, config, ties), counted
