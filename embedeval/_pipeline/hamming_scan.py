"""Binary codes evaluated by Hamming distance: the ``distance="hamming"`` path of ``evaluate``
and ``evaluate_retrieval``.

Query blocks -> :class:`~embedeval._search.hamming.HammingScanner` (every reference counted by
distance and relevance) -> the tie groups of each query, one per distance -> per-query values:

* ties=None (the index rule: references at equal distance ranked by index, lower first): the
  ranks of the relevant references -> :class:`~embedeval._metrics.kernels.Hits` -> the ordinary kernels;
* ``"expected"``: the groups as :class:`~embedeval._metrics.ties.TiedHits` -> :mod:`embedeval._metrics.expected`;
* ``"optimistic"`` / ``"pessimistic"``: each group split into sub-groups of one grade, best
  (or worst) first; a group whose items all have one grade has one order, so the expected
  kernels give that order's value exactly.

The relevance sources, the ignore rules, the executors and the result are those of the float
path; only the search and the step from ranking to values differ.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._core import budget as _budget
from .._core.csr import offsets_within
from .._inputs.codes import Codes
from .._metrics import expected as _expected
from .._metrics.kernels import Hits, pack
from .._metrics.registry import Metric, Needs, per_query_values
from .._metrics.ties import tied_hits_from_groups
from .._relevance import QueryBlock, Relevance, Shared
from .._relevance.judged import JudgedPart
from .._search.hamming import Counts, HammingScanner

INDEX_RULE = "references at equal Hamming distance are ranked by index, lower first"
TIED = "equal Hamming distances (every reference at one distance is one tie group)"
_BINARY_LEVELS = np.array([1.0])


@dataclass(frozen=True)
class Job:
    """One query block: packed query codes, their relevance, what to compute and how deep."""

    queries: np.ndarray
    relevance: QueryBlock
    metrics: tuple[Metric, ...]
    ties: str | None
    need: np.ndarray  # index rule: each query's ranks that matter (shape (b,))
    radius: int  # the largest Hamming radius of a metric (-1: none)


def jobs(read, relevance: Relevance, evaluated, metrics, ties, block_size, n_workers: int):
    """``(rows, Job)`` per block of the ``evaluated`` queries, ``read(rows)`` giving a block's
    queries as scanned: under the index rule, queries sorted by the ranks they need and blocks
    keeping (rows x ranks needed) within the shared budget; otherwise blocks in the given order
    (the tie-aware scan's, by class), bounded by their length only."""
    needs = Needs.of(metrics)
    n_rankable = relevance.n_rankable[evaluated]  # the whole ranking, or as deep as the metrics need
    need = n_rankable if needs.whole_ranking else needs.depth(relevance.n_relevant[evaluated], n_rankable)
    if ties is None:
        order = np.argsort(need, kind="stable")
        evaluated, need = evaluated[order], need[order]
    budget = _budget.BLOCK_ENTRIES // n_workers
    start = 0
    while start < evaluated.size:
        if block_size is not None:
            stop = min(start + block_size, evaluated.size)
        else:
            stop = min(start + _budget.HAMMING_BLOCK_ROWS, evaluated.size)
            if ties is None:  # rows x widest need within the budget (at least one row)
                fits = np.arange(1, stop - start + 1) * need[start:stop] <= budget
                stop = start + max(1, int(np.count_nonzero(fits)))
        rows = evaluated[start:stop]
        yield rows, Job(read(rows), relevance.block(rows), tuple(metrics), ties, need[start:stop], needs.radius)
        start = stop


def plan(options, queries: Codes, references: Codes, relevance: Relevance, metrics, evaluated, n_workers, scanner=None):
    """The Hamming route: ``(evaluate_block, scanner, (rows, Job) per block)``; ``scanner`` (a
    :class:`HammingScanner` over ``references``) is made here unless given."""
    scanner = HammingScanner(references.packed, references.n_bits) if scanner is None else scanner
    read = queries.packed.__getitem__
    return (
        evaluate_block,
        scanner,
        jobs(read, relevance, evaluated, metrics, options.ties, options.block_size, n_workers),
    )


def _judged_chunk(part: JudgedPart, b: int, start: int, stop: int) -> np.ndarray:
    """The grades of references start..stop-1 for the block's b queries: a scatter of the judged
    pairs in range (a binary search per pair would cost far more than the scan)."""
    n = part.n_references
    base = np.arange(b, dtype=np.int64) * n
    lo, hi = np.searchsorted(part.keys, base + start), np.searchsorted(part.keys, base + stop)
    at = np.repeat(lo, hi - lo) + offsets_within(hi - lo)
    rows = np.repeat(np.arange(b), hi - lo)
    out = np.zeros((b, stop - start))
    out[rows, part.keys[at] - base[rows] - start] = part.values[at]
    return out


def evaluate_block(scanner: HammingScanner, shared: Shared, job: Job) -> dict[str, np.ndarray]:
    """Per-query values of one block (dict of metric name to array of shape (b,))."""
    judge = job.relevance.judge(shared, job.metrics)
    b = job.queries.shape[0]
    every = np.arange(b)
    part = job.relevance.source
    if isinstance(part, JudgedPart):
        positive = part.values[part.values > 0]
        levels = np.unique(positive) if positive.size else _BINARY_LEVELS

        def grades(start, stop):
            return _judged_chunk(part, b, start, stop)
    else:
        levels = _BINARY_LEVELS

        def grades(start, stop):
            return judge.grades(every, np.arange(start, stop)[None, :])

    rules = judge.ignored(every)
    ignored = None
    if rules is not None:

        def ignored(start, stop):
            return rules.test(every, np.broadcast_to(np.arange(start, stop), (b, stop - start)))

    keep = (job.need, job.radius) if job.ties is None else None
    # binary class relevance from the classes' indices instead of masks (read by the tied scan)
    counts = scanner.count(job.queries, grades, ignored, levels, keep, judge.class_pairs())
    threshold = 1.0 if job.relevance.threshold is None else job.relevance.threshold
    return values(job.metrics, counts, job.relevance, threshold, job.ties)


def values(metrics, counts: Counts, block: QueryBlock, threshold: float, ties) -> dict[str, np.ndarray]:
    """Per-query values from the counts of a scan, under the tie rule ``ties``."""
    # references within each radius: read only by the radius families
    within = np.cumsum(counts.total, axis=1) if any(m.spec.radius for m in metrics) else None
    if ties is None:
        return per_query_values(metrics, _hits(counts, block, threshold), within)
    if ties == "expected":
        groups = _groups(counts, threshold)
    else:
        groups = _split(counts, threshold, optimistic=ties == "optimistic")
    tied = tied_hits_from_groups(*groups[:4], block.n_counted, *groups[4:], ideal=block.ideal)
    return _expected.compute(metrics, tied, within)


def _group_arrays(q, start, size, grade_counts, levels, threshold):
    """(query, start, size, relevant, gain, gain_exp) of groups given their counts per grade level."""
    relevant = grade_counts[:, levels >= threshold].sum(axis=1).astype(np.float64)
    gain = grade_counts @ levels
    gain_exp = grade_counts @ (np.exp2(levels) - 1.0)
    return q, start, size, relevant, gain, gain_exp


def _groups(counts: Counts, threshold: float):
    """One tie group per (query, distance) holding a positively graded reference."""
    graded = counts.graded.reshape(-1, counts.graded.shape[2])
    at = np.flatnonzero(graded.any(axis=1))  # row-major: queries ascending, then distances
    q = at // counts.total.shape[1]
    start, size = counts.before.reshape(-1)[at], counts.total.reshape(-1)[at]
    return _group_arrays(q, start, size, graded[at], counts.levels, threshold)


def _split(counts: Counts, threshold: float, optimistic: bool):
    """Each (query, distance) group split into sub-groups of one grade: highest grade first
    (optimistic) or the ungraded first and then increasing grades (pessimistic)."""
    graded = counts.graded  # (b, d + 1, L), levels increasing
    others = counts.total - graded.sum(axis=2)
    if optimistic:
        sizes = np.concatenate([graded[..., ::-1], others[..., None]], axis=2)
        level_of = np.arange(graded.shape[2])[::-1]
    else:
        sizes = np.concatenate([others[..., None], graded], axis=2)
        level_of = np.arange(graded.shape[2])
    starts = counts.before[..., None] + np.cumsum(sizes, axis=2) - sizes
    q, t, j = np.nonzero(sizes[..., :-1] if optimistic else sizes[..., 1:])  # the graded sub-groups
    if not optimistic:
        j = j + 1
    level = level_of[j if optimistic else j - 1]
    one_hot = np.zeros((q.size, graded.shape[2]))
    one_hot[np.arange(q.size), level] = sizes[q, t, j]
    return _group_arrays(q, starts[q, t, j], sizes[q, t, j], one_hot, counts.levels, threshold)


def _hits(counts: Counts, block: QueryBlock, threshold: float) -> Hits:
    """The ranks of the kept items (index rule): nearer references + place + 1, sorted per query.

    One sort of the int64 keys ``row * 2**32 + rank`` (ranks stay below 2**31) puts them in
    (query, rank) order several times faster than a two-key lexsort.
    """
    row, dist, place, level = counts.items
    b = counts.total.shape[0]
    key = (row << 32) | (counts.before[row, dist] + place + 1)
    if counts.levels.size == 1 and counts.levels[0] >= threshold and block.ideal is None:
        # One grade that reaches the threshold and no graded metric: every kept item is relevant,
        # no gains are needed. (One grade below the threshold makes none relevant; gains are
        # needed as soon as a graded metric is asked for.)
        key = np.sort(key)
        return Hits(ranks=pack(key >> 32, (key & 0xFFFFFFFF).astype(np.float64), b), n_relevant=block.n_counted)
    order = np.argsort(key)
    key, grade = key[order], counts.levels[level[order]]
    row, rank = key >> 32, (key & 0xFFFFFFFF).astype(np.float64)
    relevant = grade >= threshold
    return Hits(
        ranks=pack(row[relevant], rank[relevant], b),
        n_relevant=block.n_counted,
        gain_ranks=pack(row, rank, b),
        gain_grades=pack(row, grade, b, fill=0.0),
        ideal=block.ideal,
    )
