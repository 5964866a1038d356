"""The one place that decides how an embedding evaluation is scored.

Three routes, chosen from the checked :class:`~embedeval._pipeline.options.Options` alone:

* ``"exact search"``: float embeddings under the index rule; faiss proposes, float64 decides
  (:func:`embedeval._pipeline.score.plan`);
* ``"hamming scan"``: binary codes (``distance="hamming"``), every distance counted, under any
  tie rule (:mod:`embedeval._pipeline.hamming_scan`);
* ``"tie-aware scan"``: float embeddings under ``ties="expected"``, ``"optimistic"`` or
  ``"pessimistic"`` (:mod:`embedeval._pipeline.tied_scan`).

Each route plans the same thing, ``(block function, searcher or scanner, (rows, job) per block)``;
:func:`run` gives the result every route shares (NaN for the queries not evaluated), runs the
blocks on the executor and gathers them, so the entry points never ask which route runs; the
configuration they report (:func:`search_settings`) reads the same choice.
"""

from __future__ import annotations

import numpy as np

from .._inputs.codes import HAMMING
from .._metrics.ties import describe
from .._search import FlatSearcher
from . import hamming_scan, tied_scan
from .executors import gather
from .options import Options
from .score import TIE_RULE, check_approximation, plan

EXACT_SEARCH, HAMMING_SCAN, TIED_SCAN = "exact search", "hamming scan", "tie-aware scan"


def choose(options: Options) -> str:
    """The route of an evaluation: one of :data:`EXACT_SEARCH`, :data:`HAMMING_SCAN`, :data:`TIED_SCAN`."""
    if options.distance == HAMMING:
        return HAMMING_SCAN
    return EXACT_SEARCH if options.ties is None else TIED_SCAN


_PLANS = {EXACT_SEARCH: plan, HAMMING_SCAN: hamming_scan.plan, TIED_SCAN: tied_scan.plan}


def run(options: Options, queries, references, relevance, metrics, evaluated, searcher=None):
    """Score the ``evaluated`` queries by the route that ``options`` choose.

    ``searcher``: the route's searcher or scanner over ``references``, made from ``options``
    unless given.

    Returns
    -------
    per_query : dict of str to ndarray of shape (n_queries,)
        Each metric's value for the evaluated queries, NaN for the others.
    approximation : dict or None
        How far an approximate index is from the exact search (approximate indexes only).
    """
    per_query = {m.name: np.full(queries.shape[0], np.nan) for m in metrics}
    if not evaluated.size:
        return per_query, None
    executor = options.executor()
    block_fn, searcher, jobs = _PLANS[choose(options)](
        options, queries, references, relevance, metrics, evaluated, executor.n_workers, searcher
    )
    gather(executor.run(block_fn, searcher, relevance.shared, jobs), per_query, evaluated.size, options.progress)
    if not options.approximate:  # the scans are never approximate
        return per_query, None
    exact = FlatSearcher(references, options.distance)
    return per_query, check_approximation(options, searcher, exact, queries, relevance, evaluated, metrics, per_query)


def describe_ties(ties, distance: str, index_rule: str = TIE_RULE) -> str:
    """The ``ties`` convention of an embedding evaluation in words (``index_rule``: the words of
    the default rule, which ``evaluate_retrieval`` words in corpus rows)."""
    if distance == HAMMING:
        return describe(ties, hamming_scan.INDEX_RULE, hamming_scan.TIED)
    return describe(ties, index_rule, tied_scan.TIED)


def search_settings(options: Options, searched: bool = True) -> dict:
    """The ``config`` entries every embedding evaluation reports on its search and tie rule:
    ``search`` (the scan, the searcher, or none when no per-query metric was asked for),
    ``tie_rule`` in words and ``ties`` (``"index"`` for the default)."""
    if not searched:
        search = "none: no per-query metric was asked for"
    else:
        search = tied_scan.SEARCH if choose(options) == TIED_SCAN else options.search_config()
    return {
        "search": search,
        "tie_rule": describe_ties(options.ties, options.distance),
        "ties": options.ties or "index",
    }
