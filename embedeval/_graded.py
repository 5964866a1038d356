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
        order = np.lexsort((self.ranks, self.rows))  # pack needs rows ascending, ranks ascending within
        rows, ranks, grade = self.rows[order], np.asarray(self.ranks, dtype=np.float64)[order], self.grades[order]
        relevant, positive = grade >= threshold, grade > 0
        jr, jg = self.judged_rows, np.asarray(self.judged_grades, dtype=np.float64)
        ideal_order = np.lexsort((-jg, jr))  # each query's judged grades, largest first
        return _kernels.Hits(
            ranks=_kernels.pack(rows[relevant], ranks[relevant], n),
            n_relevant=np.bincount(jr[jg >= threshold], minlength=n),
            gain_ranks=_kernels.pack(rows[positive], ranks[positive], n),
            gain_grades=_kernels.pack(rows[positive], grade[positive], n, fill=0.0),
            ideal=_kernels.pack(jr[ideal_order], jg[ideal_order], n, fill=0.0),
        )


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
        warnings.warn(
            f"no query has a relevant item (a judged grade >= {level:g}), so every value is "
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
