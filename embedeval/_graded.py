"""What ranked lists and score matrices share after ranking: judged grades -> hits -> result.

A retrieved judged item is relevant when its grade reaches the threshold (trec_eval's relevance
level); graded metrics read the grades themselves. Both :mod:`embedeval._rankings` and
:mod:`embedeval._scores` reduce their input to (query, rank, grade) triples of retrieved judged
items plus each query's judged grades, and finish here.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import _kernels
from ._metrics import per_query_values
from .result import EvaluationResult


def check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not threshold > 0:
        raise ValueError(f"'threshold' must be a number > 0 (grade 0 is never relevant); got {threshold!r}")
    return float(threshold)


def judged_hits(rows, ranks, grade, n, threshold, judged_grades) -> _kernels.Hits:
    """Hits from every retrieved judged item (row, rank, grade), rows ascending and ranks ascending
    within a row; ``judged_grades`` holds each query's judged grades (zero-padded)."""
    relevant = grade >= threshold
    positive = grade > 0
    return _kernels.Hits(
        ranks=_kernels.pack(rows[relevant], ranks[relevant], n),
        n_relevant=np.count_nonzero(judged_grades >= threshold, axis=1),
        gain_ranks=_kernels.pack(rows[positive], ranks[positive], n),
        gain_grades=_kernels.pack(rows[positive], grade[positive], n, fill=0.0),
        ideal=-np.sort(-np.maximum(judged_grades, 0.0), axis=1),
    )


def finish(parsed, hits, empty, conventions, config, query_ids=None):
    values = per_query_values(parsed, hits)
    no_relevant = hits.n_relevant == 0
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
