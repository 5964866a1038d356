"""Sharded search: the references in shards of a fixed size, each its own faiss index, merged exactly."""

from __future__ import annotations

import numpy as np

from .._core import budget as _budget
from .._inputs.arrays import prepare
from .candidates import flat_index, from_index, merge
from .float64 import max_norm
from .memory import DeepRankers
from .ranking import ExactSearcher


def default_shard_size(dim: int) -> int:
    """Rows of one shard of ``_budget.DEFAULT_SHARD_BYTES`` float32 vectors of dimension ``dim``."""
    return max(1, _budget.DEFAULT_SHARD_BYTES // (4 * dim))


def shard_bounds(size: int, shard_size: int) -> list[tuple[int, int]]:
    """(start, stop) of each shard of ``shard_size`` consecutive rows (the last may be shorter)."""
    return [(s, min(s + shard_size, size)) for s in range(0, size, shard_size)]


def read_shard(reference, start: int, stop: int, distance: str) -> np.ndarray:
    """Rows ``start:stop`` of ``reference`` (any array-like, e.g. a memory map) as prepared float32,
    shape (stop - start, d)."""
    return prepare(np.asarray(reference[start:stop], dtype=np.float32), distance)


class ShardedSearcher(ExactSearcher):
    """Reference rows split into shards of ``shard_size``, each searched by faiss, merged exactly.

    Parameters
    ----------
    reference : array-like of shape (n_references, d)
        Anything that slices into float32 rows, e.g. a memory-mapped .npy (not prepared: each
        shard is prepared as it is read).
    distance : {"euclidean", "cosine", "inner_product"}
    shard_size : int
        References per shard.
    stream : bool
        False keeps every shard's index (fast); True rebuilds each shard from ``reference`` at
        every search, so only one shard is in memory at a time (for reference sets larger than
        RAM). Kept shards are in memory, so deep rankings use the deep ranking over all of them
        (:meth:`deep_ranker`); streamed ones keep faiss's search at every depth.
    """

    def __init__(self, reference, distance: str, shard_size: int, stream: bool = False):
        self.euclidean = distance == "euclidean"
        self._distance = distance
        self._reference = reference
        self.size = reference.shape[0]
        self._bounds = shard_bounds(self.size, shard_size)
        self._indexes = None if stream else [flat_index(self._shard(a, b), self.euclidean) for a, b in self._bounds]
        # one read of the references, for the float32 error bound
        self.max_norm = max(max_norm(self._shard(a, b)) for a, b in self._bounds)
        self.ranks_deep = not stream
        self._rankers = None if stream else DeepRankers(self._whole, self.euclidean)

    def _whole(self) -> np.ndarray:
        """Every reference, prepared, shard by shard (for the deep ranking)."""
        return np.concatenate([self._shard(a, b) for a, b in self._bounds])

    def _shard(self, a: int, b: int) -> np.ndarray:
        return read_shard(self._reference, a, b, self._distance)

    def _gather(self, queries, n):
        parts = []
        for i, (a, b) in enumerate(self._bounds):
            index = self._indexes[i] if self._indexes is not None else flat_index(self._shard(a, b), self.euclidean)
            parts.append(from_index(index, queries, n, self.euclidean))
        return merge(parts, [a for a, _ in self._bounds])

    def reference_rows(self, idx):
        order = np.argsort(idx, kind="stable")  # sorted reads are kinder to a memory map
        rows = np.empty((idx.size, self._reference.shape[1]), dtype=np.float32)
        rows[order] = prepare(np.asarray(self._reference[idx[order]], dtype=np.float32), self._distance)
        return rows
