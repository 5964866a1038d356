"""Query blocks: the self-contained unit of work of every search-based evaluation.

A block is a set of queries with similar ranking depth. :func:`evaluate_block` turns one block
into per-query metric values (search -> hits -> kernels), reading nothing but its :class:`Job`,
the searcher and the reference side of relevance (:class:`embedeval._relevance.Shared`), so the
same function runs in this process, on threads or on a Dask worker. :func:`block_jobs` plans the
blocks: queries sorted by the width of their search (depth plus ignored references) and cut so
that a block's working memory stays within :data:`embedeval._core.budget.BLOCK_ENTRIES`.

Two searches serve a block. Shallow rankings take the searcher's exact search (faiss
candidates, float64 near-ties); a block ranked deeper than the job's ``deep_from``, or needing
the whole ranking (map, mrr, ndcg without a cutoff), takes the deep ranking
(:class:`embedeval._search.deep.DeepRanker`) where the searcher holds its references in memory:
one exact pass that places every relevant reference without ordering the others. Both give the
same hits. Elsewhere (streamed shards, Dask) a whole-ranking metric is searched deeper and deeper,
doubling, until every query has what it needs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .._core import budget as _budget
from .._inputs.arrays import prepare
from .._metrics.registry import Metric, Needs, per_query_values
from .._relevance import QueryBlock, Relevance, Shared
from . import executors as _executors


@dataclass(frozen=True)
class Job:
    """The inputs of one query block.

    Attributes
    ----------
    queries : numpy.ndarray of shape (b, d), float32
        As searched (normalised for cosine).
    relevance : QueryBlock
        The query side of relevance: what the block's queries find relevant, R, what they ignore.
    depth : int
        Rank every query this deep (at least what the metrics need of each of them), not
        counting the references it ignores.
    metrics : tuple of Metric
    needs : Needs
    deep_from : int or None
        Rankings deeper than this take the deep ranking (None: never, the searcher has none).
    """

    queries: np.ndarray
    relevance: QueryBlock
    depth: int
    metrics: tuple[Metric, ...]
    needs: Needs
    deep_from: int | None = None


def evaluate_block(searcher, shared: Shared, job: Job) -> dict[str, np.ndarray]:
    """Per-query values of one block: dict of metric name to array of shape (b,).

    Parameters
    ----------
    searcher
        Any searcher of :mod:`embedeval._search` over the references.
    shared : Shared
        The reference side of relevance (labels, label sets or nothing; ``ignore_same`` keys).
    job : Job
    """
    judge = job.relevance.judge(shared, job.metrics)
    n_rankable = searcher.size - job.relevance.n_ignored
    n_relevant = job.relevance.n_relevant
    chase_gains = job.needs.all_hits and judge.by_grade  # nDCG of the whole ranking: every graded item
    queries = job.queries
    rows, depth = np.arange(queries.shape[0]), job.depth
    values: dict[str, np.ndarray] = {}
    if deep_search(searcher, job):
        hits = _deep_hits(searcher, shared, judge, job, n_rankable)
        return per_query_values(job.metrics, hits)
    while rows.size:
        ignored = judge.ignored(rows)
        if searcher.exact:  # only the sequence of relevance classes must be exact: fewer near-ties to recompute
            ranked = searcher.search(queries[rows], depth, ignored, judge.classes(rows))
        else:
            ranked = searcher.search(queries[rows], depth, ignored)
        hits, found, found_gains = judge.hits(rows, ranked)
        for name, v in per_query_values(job.metrics, hits).items():
            values.setdefault(name, np.empty(queries.shape[0]))[rows] = v
        # Whole-ranking metrics need the first (mrr) or every (map, ndcg) relevant item to be
        # ranked: rank the queries that lack them deeper, doubling, until they have them.
        short = np.zeros(rows.size, dtype=bool)
        if job.needs.first_hit:
            short |= (found == 0) & (n_relevant[rows] > 0)
        if job.needs.all_hits:
            short |= found < n_relevant[rows]
        if chase_gains:
            short |= found_gains < job.relevance.n_gain[rows]
        rows = rows[short & (depth < n_rankable[rows])]
        if rows.size:
            depth = min(2 * depth, int(n_rankable[rows].max()))
    return values


def deep_search(searcher, job: Job) -> bool:
    """Whether the block takes the deep ranking: it is ranked deeper than ``job.deep_from`` or needs
    the whole ranking, and the searcher has a deep ranking."""
    if job.deep_from is None or not getattr(searcher, "ranks_deep", False):
        return False
    return job.depth > job.deep_from or job.needs.whole_ranking


def _deep_hits(searcher, shared: Shared, judge, job: Job, n_rankable: np.ndarray):
    """The block's hits from one pass of the deep ranking.

    Without a whole-ranking metric each query is ranked ``job.depth`` deep. With one, it is
    ranked to its end: every relevant reference is placed (map, ndcg) or, for mrr, the first
    ``job.depth`` of them (at least the first, and every one the cut-off metrics can see).
    """
    ranker = searcher.deep_ranker(shared.class_codes)
    b = job.queries.shape[0]
    rows = np.arange(b)
    if job.needs.whole_ranking:
        depth, first = n_rankable, None if job.needs.all_hits else job.depth
    else:
        depth, first = np.minimum(job.depth, n_rankable), None
    with _executors.deep_turn():
        hits, _, _ = judge.deep_hits(ranker, job.queries, rows, depth, first)
    return hits


def block_bounds(widths: np.ndarray, block_size: int | None, n_workers: int = 1, dim: int = 1):
    """Consecutive (start, stop) slices of queries sorted by the width of their search.

    Without ``block_size``, each block is as long as the memory budget (shared by the
    ``n_workers`` blocks in flight) allows, up to a length that gives every worker several
    blocks and down to the length at which faiss's search switches to BLAS. The rows are then
    shared equally among as many blocks as the longest allowed needs, that count rounded up to
    whole rounds of the workers: blocks of similar cost on threads finish together, where a
    short remainder or one block more than the rounds would leave a worker idle at the end.
    """
    start, n = 0, widths.size
    budget = _budget.BLOCK_ENTRIES // n_workers
    floor = -(-_budget.FAISS_BLAS_THRESHOLD // dim)
    longest = min(_budget.MAX_BLOCK_ROWS, max(floor, -(-n // (4 * n_workers))))
    made = 0
    while start < n:
        if block_size is not None:
            stop = min(start + block_size, n)
        else:
            # Widths ascend, so a block's widest row is its last and the cost of a block,
            # rows x last width, grows with its end: take the longest block under the budget.
            ends = np.arange(start + 1, min(n, start + longest) + 1)
            fits = (ends - start) * widths[ends - 1] <= budget
            room = int(ends[fits][-1]) - start if fits[0] else 1
            stop = start + equal_share(n - start, room, made, n_workers, floor)
        yield start, stop
        start = stop
        made += 1


def equal_share(left: int, room: int, made: int, n_workers: int, floor: int) -> int:
    """Rows of the next block: ``left`` rows shared equally among the fewest blocks of at most
    ``room`` rows, their count with the ``made`` blocks before rounded up to a multiple of
    ``n_workers`` (where more than one block is needed); a block that ``room`` allows ``floor``
    rows (faiss's BLAS threshold) is not cut below them by the sharing."""
    blocks = -(-left // room)
    if made + blocks > 1:
        blocks = -(-(made + blocks) // n_workers) * n_workers - made
    return min(room, left, max(-(-left // blocks), floor if room >= floor else 1))


def job_for(
    queries, relevance: Relevance, rows: np.ndarray, depth: int, metrics, needs: Needs, distance: str, deep_from=None
) -> Job:
    """The job of the queries ``rows`` (read, and normalised for cosine, only now)."""
    return Job(
        queries=prepare(np.asarray(queries[rows]), distance),
        relevance=relevance.block(rows),
        depth=depth,
        metrics=tuple(metrics),
        needs=needs,
        deep_from=deep_from,
    )


def depths_of(relevance: Relevance, rows: np.ndarray, needs: Needs) -> np.ndarray:
    """How deep each of the queries ``rows`` is ranked at first (at least 1).

    A metric that needs every relevant item (map, ndcg) needs at least R ranks: starting there
    saves the rounds of doubling from the largest k up to R.
    """
    n_relevant, n_rankable = relevance.n_relevant[rows], relevance.n_rankable[rows]
    depth = needs.depth(n_relevant, n_rankable)
    if needs.all_hits:
        depth = np.maximum(depth, np.minimum(n_relevant, n_rankable))
    return np.maximum(depth, 1)


def block_jobs(
    queries,
    relevance: Relevance,
    evaluated: np.ndarray,
    metrics,
    distance: str,
    block_size,
    n_workers: int,
    deep_from: int | None = None,
) -> Iterator[tuple[np.ndarray, Job]]:
    """``(rows, job)`` for every block of the ``evaluated`` queries, narrowest first.

    Queries are read block by block, so memory-mapped queries are streamed from disk.
    ``deep_from``: see :class:`Job` (None where the searcher has no deep ranking).
    """
    needs = Needs.of(metrics)
    depths = depths_of(relevance, evaluated, needs)
    widths = depths + relevance.n_ignored[evaluated]  # the search ranks the ignored references too
    order = np.argsort(widths, kind="stable")
    rows_sorted, depths, widths = evaluated[order], depths[order], widths[order]
    for start, stop in block_bounds(widths, block_size, n_workers, queries.shape[1]):
        rows = rows_sorted[start:stop]
        depth = int(depths[start:stop].max())
        yield rows, job_for(queries, relevance, rows, depth, metrics, needs, distance, deep_from)
