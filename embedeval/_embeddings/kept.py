"""``keep_neighbors=k``: each query's top k kept on the result, with its relevance (for the explorer).

One more exact search over blocks of queries, after the evaluation, with the evaluation's
relevance and ignore rules: whatever route computed the metrics (the search, the deep ranking,
a tie-aware scan, an approximate index), the kept neighbours are the exact ones, ties by lower
index.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._core import budget as _budget
from .._core.neighbors import Neighbors
from .._inputs.arrays import prepare
from .._relevance import ClassLabels, Relevance
from .._search import FlatSearcher
from .neighbors import _distances, _unscale


def keep(queries: np.ndarray, references: np.ndarray, relevance: Relevance, k: int, distance: str, scale: float):
    """The first ``k`` neighbours of every query (skipped ones too), with their relevance, as
    :class:`~embedeval.Neighbors`.

    Parameters
    ----------
    queries, references : numpy.ndarray of shape (n, d) and (m, d), float32
        As the evaluation searched them (scaled, not normalised).
    relevance : Relevance
    k : int
        Capped at the number of references; a query with fewer rankable references gets -1.
    distance : {"euclidean", "cosine", "inner_product"}
    scale : float
        The power of two the inputs were multiplied by (undone in the distances).
    """
    searcher = FlatSearcher(references, distance)
    n = queries.shape[0]
    k = min(k, searcher.size)
    indices = np.full((n, k), -1, dtype=np.int64)
    distances = np.full((n, k), np.nan)
    relevant = np.zeros((n, k), dtype=bool)
    grades = None
    step = max(1, min(_budget.MAX_BLOCK_ROWS, _budget.BLOCK_ENTRIES // (2 * k + 16)))
    for start in range(0, n, step):
        rows = np.arange(start, min(start + step, n))
        judge = relevance.block(rows).judge(relevance.shared, ())
        local = np.arange(rows.size)
        ignored = judge.ignored(local)
        fewest = 0 if ignored is None else int(ignored.counts.min())
        depth = min(k, searcher.size - fewest)
        if depth < 1:
            continue
        block = prepare(np.asarray(queries[rows]), distance)
        found = searcher.search(block, depth, ignored)
        valid = found >= 0
        indices[rows, :depth] = found
        keys = _distances(searcher, block, np.where(valid, found, 0), distance)
        distances[rows, :depth] = np.where(valid, keys, np.nan)
        graded = judge.grades(local, np.where(valid, found, 0))
        if graded.dtype != bool:
            grades = np.zeros((n, k)) if grades is None else grades
            grades[rows, :depth] = np.where(valid, graded, 0.0)
        relevant[rows, :depth] = judge.relevant(graded) & valid
    _unscale(distances, scale, distance)
    codes, classes = None, None
    source = relevance.source
    if isinstance(source, ClassLabels):
        codes = np.where(indices >= 0, np.asarray(source.reference_codes)[np.maximum(indices, 0)], -1)
        classes = source.classes
    n_relevant = np.asarray(relevance.n_counted, dtype=np.int64)
    return Neighbors(
        indices,
        distances,
        distance,
        relevance.rules is not None and relevance.rules.leave_one_out,
        relevant=relevant,
        grades=grades,
        n_relevant=n_relevant,
        label_codes=codes,
        classes=classes,
    )


def with_kept(result, options, queries, references, relevance: Relevance, scale: float, reference_ids=None):
    """``result`` with ``neighbors`` kept when ``options.keep_neighbors`` asks for them (named by
    ``reference_ids``, a list of one id per reference row, where given)."""
    if options.keep_neighbors is None:
        return result
    kept = keep(queries, references, relevance, options.keep_neighbors, options.distance, scale)
    return dataclasses.replace(result, neighbors=dataclasses.replace(kept, reference_ids=reference_ids))
