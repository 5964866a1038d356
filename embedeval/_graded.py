"""What ranked lists and score matrices share after ranking: judged grades -> hits -> result.

A retrieved judged item is relevant when its grade reaches the threshold (trec_eval's relevance
level); graded metrics read the grades themselves. Every ranked input form (sequences, mappings,
2-D id arrays, TREC files, score matrices) is reduced to :class:`Judged`: flat arrays of the
(query, rank, grade) of each retrieved judged item and the (query, grade) of each judged item
with a positive grade. Only positive grades matter: R counts grades >= threshold > 0, and a
grade <= 0 adds no gain to DCG or its ideal.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from . import _kernels
from ._metrics import per_query_values
from .result import EvaluationResult


def check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not threshold > 0:
        raise ValueError(f"'threshold' must be a number > 0 (grade 0 is never relevant); got {threshold!r}")
    return float(threshold)


@dataclass(frozen=True)
class Judged:
    """The judged items of every query, and where the ranking put those it retrieved.

    Attributes
    ----------
    n_queries : int
    rows, ranks, grades : numpy.ndarray of shape (h,)
        Each retrieved judged item: its query, its 1-based rank (float) and its grade, in any order.
    judged_rows, judged_grades : numpy.ndarray of shape (m,)
        Each judged item with a grade > 0, retrieved or not: its query and its grade.
    """

    n_queries: int
    rows: np.ndarray
    ranks: np.ndarray
    grades: np.ndarray
    judged_rows: np.ndarray
    judged_grades: np.ndarray

    def hits(self, threshold: float) -> _kernels.Hits:
        """:class:`~embedeval._kernels.Hits` at relevance level ``threshold``."""
        n = self.n_queries
        rows, ranks, grade = _by_row(self.rows, np.asarray(self.ranks, dtype=np.float64), self.grades)
        positive = grade > 0
        # each query's items in rank order: a sort of short rows, not of every item at once
        gain_ranks = _kernels.pack(rows[positive], ranks[positive], n)
        by_rank = np.argsort(gain_ranks, axis=1, kind="stable")
        gain_ranks = np.take_along_axis(gain_ranks, by_rank, 1)
        gain_grades = np.take_along_axis(_kernels.pack(rows[positive], grade[positive], n, fill=0.0), by_rank, 1)
        relevant = np.sort(np.where(gain_grades >= threshold, gain_ranks, np.inf), axis=1)
        width = max(int(np.isfinite(relevant).sum(axis=1).max(initial=0)), 1)
        jr, jg = _by_row(self.judged_rows, np.asarray(self.judged_grades, dtype=np.float64))
        return _kernels.Hits(
            ranks=np.ascontiguousarray(relevant[:, :width]),
            n_relevant=np.bincount(jr[jg >= threshold], minlength=n),
            gain_ranks=gain_ranks,
            gain_grades=gain_grades,
            ideal=-np.sort(-_kernels.pack(jr, jg, n, fill=0.0), axis=1),  # each query's grades, largest first
        )


def _by_row(rows: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """``rows`` and ``columns`` ordered by row (stably), as :func:`embedeval._kernels.pack` needs."""
    if rows.size and (rows[1:] < rows[:-1]).any():
        order = np.argsort(rows, kind="stable")
        return (rows[order], *(c[order] for c in columns))
    return (rows, *columns)


def judged_hits(rows, ranks, grade, n, threshold, judged_grades) -> _kernels.Hits:
    """Hits from every retrieved judged item (row, rank, grade) and each query's judged grades
    ``judged_grades``, an array of shape (n, width), zero-padded."""
    judged_grades = np.asarray(judged_grades, dtype=np.float64)
    jr, jc = np.nonzero(judged_grades > 0)
    return Judged(n, np.asarray(rows), np.asarray(ranks), np.asarray(grade), jr, judged_grades[jr, jc]).hits(threshold)


def finish(parsed, hits, empty, conventions, config, query_ids=None, stacklevel=3):
    """The result of per-query values over ``hits``; warns when no query has a relevant item."""
    values = per_query_values(parsed, hits)
    no_relevant = hits.n_relevant == 0
    if no_relevant.all():
        level = config.get("threshold")
        grade = "a judged grade >= the threshold" if level is None else f"a judged grade >= {level:g}"
        warnings.warn(
            f"no query has a relevant item ({grade}), so every value is "
            + ("NaN" if empty == "skip" else "0")
            + "; check the relevance threshold and that the ids of rankings and judgements match",
            UserWarning,
            stacklevel=stacklevel,
        )
    reasons = ()
    if empty == "skip":
        for v in values.values():
            v[no_relevant] = np.nan
        reasons = ("no judged item reaches the relevance threshold (R = 0)",)
    else:
        for v in values.values():
            v[no_relevant & np.isnan(v)] = 0.0
    if query_ids is not None:
        config = {**config, "query_ids": list(query_ids)}
    return EvaluationResult.from_per_query(
        values, {m.name: m.definition for m in parsed}, conventions, skip_reasons=reasons, config=config
    )


def conventions(threshold: float, empty: str, ties: str) -> dict[str, str]:
    return {
        "recall": "trec_eval recall: relevant items in the top k / all relevant items (hit_rate@k is the "
        "metric-learning Recall@K; capped_recall@k divides by min(k, R))",
        "relevance": f"an item is relevant when its grade >= {threshold:g}; unjudged items are not relevant; "
        "graded metrics use the grades, negative grades count as 0",
        "ties": ties,
        "queries without relevant items": "skipped: NaN, counted in 'skipped', not averaged"
        if empty == "skip"
        else "scored 0 and averaged in (trec_eval's convention)",
        "average": "summary = mean over evaluated queries",
    }
