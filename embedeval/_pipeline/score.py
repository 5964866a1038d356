"""The exact search route: searching and scoring the queries of an embedding evaluation.

:func:`embedeval.evaluate` (class labels, label sets) and :func:`embedeval.evaluate_retrieval`
(judgements) read their inputs into a :class:`~embedeval._relevance.Relevance`, then both run
:func:`plan` (through :func:`embedeval._pipeline.route.run`): a searcher (:mod:`embedeval._search`)
-> query blocks planned (:mod:`embedeval._pipeline.blocks`) -> blocks run on an executor
(:mod:`embedeval._pipeline.executors`, :mod:`embedeval._pipeline.cluster`), each one search -> hits
-> kernels -> per-query arrays; with an approximate index, :func:`check_approximation` then
compares a sample of queries with the exact search.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import budget as _budget
from .._metrics.registry import Needs
from .._relevance import Relevance
from .blocks import block_jobs, depths_of, evaluate_block, job_for

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


def check_approximation(options, approximate, exact, queries, relevance: Relevance, evaluated, metrics, per_query):
    """Compare an approximate searcher with an exact one on ``options.check_sample`` evaluated
    queries drawn with ``options.seed``.

    Returns
    -------
    dict
        ``sample``, ``seed``, ``neighbour_recall`` (the mean, over the sample, of the share of each
        query's exact top-depth neighbours that the approximate index found), ``exact_on_sample``
        and ``approximate_on_sample`` (each metric's mean over the sample), and the ``index`` and
        ``index_params`` checked.
    """
    rng = np.random.default_rng(options.seed)
    sample = np.sort(rng.choice(evaluated, size=min(options.check_sample, evaluated.size), replace=False))
    needs = Needs.of(metrics)
    depths = depths_of(relevance, sample, needs)
    job = job_for(queries, relevance, sample, int(depths.max()), metrics, needs, options.distance)
    shared = relevance.shared
    ignored = job.relevance.judge(shared, metrics).ignored(np.arange(sample.size))
    found = approximate.search(job.queries, job.depth, ignored)
    truth = exact.search(job.queries, job.depth, ignored)
    recall = np.mean([np.intersect1d(found[i, :d], truth[i, :d]).size / d for i, d in enumerate(depths)])
    exact_values = evaluate_block(exact, shared, job)
    return {
        "sample": int(sample.size),
        "seed": options.seed,
        "neighbour_recall": float(recall),
        "exact_on_sample": {m: float(v.mean()) for m, v in exact_values.items()},
        "approximate_on_sample": {m: float(per_query[m][sample].mean()) for m in exact_values},
        "index": options.index,
        "index_params": options.index_params,
    }


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
