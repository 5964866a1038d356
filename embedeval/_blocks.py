"""Query blocks: the self-contained unit of work of an evaluation with class labels.

A block is a set of queries with similar ranking depth. :func:`evaluate_block` turns one block
into per-query metric values (search -> hits -> kernels), reading nothing but its :class:`Job`,
the searcher and the reference codes, so the same function runs in this process, on threads or
on a Dask worker. :func:`block_jobs` plans the blocks: queries sorted by depth and cut so that a
block's working memory stays within :data:`embedeval._budget.BLOCK_ENTRIES`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from . import _budget
from ._inputs import prepare
from ._kernels import hits_from_dense
from ._metrics import Metric, Needs, per_query_values
from ._relevance import LabelSets


@dataclass(frozen=True)
class Job:
    """The inputs of one query block.

    Attributes
    ----------
    queries : numpy.ndarray of shape (b, d), float32
        As searched (normalised for cosine).
    query_codes : numpy.ndarray of shape (b,)
    n_relevant : numpy.ndarray of shape (b,)
        R of each query (>= 1).
    depth : int
        Rank every query this deep (at least what the metrics need of each of them).
    exclude : numpy.ndarray of shape (b,) or None
        Each query's own reference index, in leave-one-out evaluation.
    metrics : tuple of Metric
    needs : Needs
    """

    queries: np.ndarray
    query_codes: np.ndarray
    n_relevant: np.ndarray
    depth: int
    exclude: np.ndarray | None
    metrics: tuple[Metric, ...]
    needs: Needs


def evaluate_block(searcher, reference_codes: np.ndarray, job: Job) -> dict[str, np.ndarray]:
    """Per-query values of one block: dict of metric name to array of shape (b,).

    Parameters
    ----------
    searcher
        Any searcher of :mod:`embedeval._search` over the references.
    reference_codes : numpy.ndarray of shape (n_references,)
        Class code of every reference.
    job : Job
    """
    n_rankable = searcher.size - (job.exclude is not None)
    queries, query_codes, n_relevant = job.queries, job.query_codes, job.n_relevant
    rows, depth = np.arange(queries.shape[0]), job.depth
    values: dict[str, np.ndarray] = {}
    while rows.size:
        exclude = None if job.exclude is None else job.exclude[rows]
        if searcher.exact:  # only the relevance sequence must be exact: fewer near-ties to recompute
            ranked = searcher.search(queries[rows], depth, exclude, query_codes[rows], reference_codes)
        else:
            ranked = searcher.search(queries[rows], depth, exclude)
        hits = (ranked >= 0) & (reference_codes[ranked] == query_codes[rows, None])  # -1: nothing found
        for name, v in per_query_values(job.metrics, hits_from_dense(hits, n_relevant[rows])).items():
            values.setdefault(name, np.empty(queries.shape[0]))[rows] = v
        # Whole-ranking metrics need the first (mrr) or every (map) relevant item to be ranked:
        # rank the queries that lack them deeper, doubling, until they have them.
        found = np.count_nonzero(hits, axis=1)
        short = np.zeros(rows.size, dtype=bool)
        if job.needs.first_hit:
            short |= found == 0
        if job.needs.all_hits:
            short |= found < n_relevant[rows]
        if depth >= n_rankable:
            break
        rows = rows[short]
        depth = min(2 * depth, n_rankable)
    return values


def block_bounds(depths: np.ndarray, block_size: int | None, n_workers: int = 1, dim: int = 1):
    """Consecutive (start, stop) slices of queries sorted by depth.

    Without ``block_size``, each block is as long as the memory budget (shared by the
    ``n_workers`` blocks in flight) allows, up to a length that gives every worker several
    blocks and down to the length at which faiss's search switches to BLAS.
    """
    start, n = 0, depths.size
    budget = _budget.BLOCK_ENTRIES // n_workers
    longest = min(_budget.MAX_BLOCK_ROWS, max(-(-_budget.FAISS_BLAS_THRESHOLD // dim), -(-n // (4 * n_workers))))
    longest = -(-n // -(-n // longest))  # equal blocks: no short remainder below the BLAS threshold
    while start < n:
        if block_size is not None:
            stop = min(start + block_size, n)
        else:
            # Depths ascend, so a block's widest row is its last and the cost of a block,
            # rows x last depth, grows with its end: take the longest block under the budget.
            ends = np.arange(start + 1, min(n, start + longest) + 1)
            fits = (ends - start) * depths[ends - 1] <= budget
            stop = int(ends[fits][-1]) if fits[0] else start + 1
        yield start, stop
        start = stop


def job_for(queries, sets: LabelSets, rows: np.ndarray, depth: int, metrics, needs: Needs, distance: str) -> Job:
    """The job of the queries ``rows`` (read, and normalised for cosine, only now)."""
    return Job(
        queries=prepare(np.asarray(queries[rows]), distance),
        query_codes=sets.query_codes[rows],
        n_relevant=sets.n_relevant[rows],
        depth=depth,
        exclude=sets.excluded(rows),
        metrics=tuple(metrics),
        needs=needs,
    )


def block_jobs(
    queries, sets: LabelSets, evaluated: np.ndarray, metrics, distance: str, block_size, n_workers: int
) -> Iterator[tuple[np.ndarray, Job]]:
    """``(rows, job)`` for every block of the ``evaluated`` queries, shallowest first.

    Queries are read block by block, so memory-mapped queries are streamed from disk.
    """
    needs = Needs.of(metrics)
    depths = needs.depth(sets.n_relevant[evaluated], sets.n_rankable)
    order = evaluated[np.argsort(depths, kind="stable")]
    depths = np.sort(depths, kind="stable")
    for start, stop in block_bounds(depths, block_size, n_workers, queries.shape[1]):
        rows = order[start:stop]
        yield rows, job_for(queries, sets, rows, int(depths[stop - 1]), metrics, needs, distance)
