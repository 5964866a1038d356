"""The self-check of an approximate index: neighbour recall against exact search, and the metrics
of a seeded sample of queries computed both ways."""

from __future__ import annotations

import numpy as np

from .._metrics.registry import Needs
from .._relevance import Relevance
from .blocks import depths_of, evaluate_block, job_for


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
