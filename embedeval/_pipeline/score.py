"""The exact search route: searching and scoring the queries of an embedding evaluation.

:func:`embedeval.evaluate` (class labels, label sets) and :func:`embedeval.evaluate_retrieval`
(judgements) read their inputs into a :class:`~embedeval._relevance.Relevance`, then both run
:func:`plan` (through :func:`embedeval._pipeline.route.run`): a searcher (:mod:`embedeval._search`)
-> query blocks planned (:mod:`embedeval._pipeline.blocks`) -> blocks run on an executor
(:mod:`embedeval._pipeline.executors`, :mod:`embedeval._pipeline.cluster`), each one search -> hits
-> kernels -> per-query arrays.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import budget as _budget
from .._relevance import Relevance
from .blocks import block_jobs, evaluate_block

TIE_RULE = "references at equal distance are ranked by index, lower first"


def plan(options, queries, references, relevance: Relevance, metrics, evaluated, n_workers: int, searcher=None):
    """The exact search route (or an approximate index): ``(evaluate_block, searcher, (rows, Job)
    per block)``; ``searcher`` (over ``references``) is made from ``options`` unless given."""
    searcher = options.searcher(references) if searcher is None else searcher
    deep_from = _budget.deep_from() if searcher.exact and searcher.ranks_deep else None
    jobs = block_jobs(
        queries, relevance, evaluated, metrics, options.distance, options.block_size, n_workers, deep_from
    )
    return evaluate_block, searcher, jobs


def warn_if_k_exceeds(metrics, n_rankable: np.ndarray) -> None:
    """Warn when a cutoff exceeds what some evaluated query can rank (``n_rankable`` of them)."""
    fewest = int(n_rankable.min(initial=np.iinfo(np.int64).max))
    over = [m for m in metrics if m.k is not None and not m.spec.radius and m.k > fewest]
    if over:
        beyond = [m.name for m in over]
        some = "" if (n_rankable == fewest).all() else " of some queries"
        divides = [m.name for m in over if m.family == "precision"]
        tail = f", and {', '.join(divides)} still divide{'s' if len(divides) == 1 else ''} by k" if divides else ""
        warnings.warn(
            f"{beyond}: k exceeds the {fewest} rankable references{some}; the whole reference set is ranked{tail}",
            UserWarning,
            stacklevel=3,
        )
