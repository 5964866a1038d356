"""Evaluation on a Dask cluster: query blocks run on the workers, references sharded across them.

``embedeval.evaluate(..., client=client)`` ships each query block (the self-contained unit of
:func:`embedeval._pipeline.blocks.evaluate_block`) to a worker. The reference set is cut into shards of
``shard_size`` rows scattered over the workers; a block's worker asks every shard for its
candidates (each shard task builds, and caches, a faiss flat index of its rows and returns
its candidates with their float64 distances), merges them exactly and computes the metrics.
Only per-query metric arrays travel back to the client, and the ranking rule is the one of a
single process, so the numbers are identical.

dask.distributed is an optional extra (``pip install 'embedeval[dask]'``), imported only here.
Point ``client`` at any cluster: ``Client("tcp://scheduler:8786")`` for a running one,
``Client(LocalCluster(n_workers=4))`` for the local machine; the workers need embedeval installed.
"""

from __future__ import annotations

import collections
import concurrent.futures
import contextlib

import numpy as np

from .._core import budget as _budget
from .._search.candidates import Candidates, flat_index, from_index, merge
from .._search.float64 import max_norm, pair_distances
from .._search.ranking import ExactSearcher
from .._search.sharded import read_shard, shard_bounds

_INDEX_CACHE: collections.OrderedDict = collections.OrderedDict()  # per worker process: shard key -> index


def _require_distributed():
    try:
        import distributed
    except ImportError:
        raise ImportError("evaluation on a cluster needs dask.distributed: pip install 'embedeval[dask]'") from None
    return distributed


def _shard_task(shard: np.ndarray, key: str, queries: np.ndarray, n: int, euclidean: bool) -> Candidates:
    """On a worker: the shard's ``n`` best candidates of ``queries`` (b, d), with their float64 distances."""
    index = _INDEX_CACHE.get(key)
    if index is None:
        index = flat_index(shard, euclidean)
        _INDEX_CACHE[key] = index
        while len(_INDEX_CACHE) > _budget.CACHED_SHARDS:
            _INDEX_CACHE.popitem(last=False)
    _INDEX_CACHE.move_to_end(key)
    found = from_index(index, queries, n, euclidean)
    b, m = found.idx.shape
    rows = np.repeat(np.arange(b), m)
    found.exact = pair_distances(queries, rows, found.idx.ravel(), shard.__getitem__, euclidean).reshape(b, m)
    return found


class DaskSearcher(ExactSearcher):
    """Exact search over reference shards held by Dask workers (see the module docstring).

    Parameters
    ----------
    client : distributed.Client
    reference : array-like of shape (n_references, d)
        Read shard by shard (a memory map is fine), prepared and scattered to the workers.
    distance : {"euclidean", "cosine", "inner_product"}
    shard_size : int
    """

    def __init__(self, client, reference, distance: str, shard_size: int):
        self.euclidean = distance == "euclidean"
        self.size = reference.shape[0]
        self._bounds = shard_bounds(self.size, shard_size)
        self._shards, norms = [], []
        for a, b in self._bounds:
            shard = read_shard(reference, a, b, distance)
            norms.append(max_norm(shard))
            self._shards.append(client.scatter(shard, hash=False))
        self.max_norm = max(norms)

    def _gather(self, queries: np.ndarray, n: int) -> Candidates:
        distributed = _require_distributed()
        try:
            distributed.get_worker()
            context = distributed.worker_client()  # inside a task: secede while shards work
        except ValueError:
            context = contextlib.nullcontext(distributed.get_client())
        with context as client:
            futures = [
                client.submit(_shard_task, shard, shard.key, queries, n, self.euclidean, pure=False)
                for shard in self._shards
            ]
            parts = client.gather(futures)
        return merge(parts, [a for a, _ in self._bounds])

    def reference_rows(self, idx):  # pragma: no cover - float64 distances come with the candidates
        raise AssertionError("shard tasks return float64 distances for every candidate")


class DaskExecutor:
    """Query blocks on the workers of a Dask cluster (the executor signature of
    :mod:`embedeval._pipeline.executors`), with a bounded number of blocks in flight.

    ``shared`` (the reference side of relevance: labels or label sets, ignore keys) is scattered to
    every worker once; each block is one task.
    A worker lost mid-evaluation takes the shards scattered to it: the evaluation then stops
    with a RuntimeError saying so, never with a partial result.
    """

    n_workers = 1  # the local memory budget is not split: blocks run on the workers' memory

    def __init__(self, client, in_flight: int | None = None):
        self.client = client
        self.in_flight = in_flight

    def run(self, block_fn, searcher, shared, jobs):
        distributed = _require_distributed()
        client = self.client
        in_flight = self.in_flight or 2 * max(1, len(client.scheduler_info().get("workers", {})))
        shared = client.scatter(shared, broadcast=True, hash=False)
        pending = distributed.as_completed()
        rows_of = {}
        try:
            for rows, job in jobs:
                future = client.submit(block_fn, searcher, shared, job, pure=False)
                rows_of[future.key] = rows
                pending.add(future)
                if pending.count() >= in_flight:
                    done = next(pending)
                    yield rows_of.pop(done.key), done.result()
            for done in pending:
                yield rows_of.pop(done.key), done.result()
        except (concurrent.futures.CancelledError, distributed.KilledWorker) as exc:
            # A worker died: the reference shards scattered to it are gone (Dask cannot recompute
            # scattered data), so the evaluation stops rather than return a partial result.
            raise RuntimeError(
                "a Dask worker was lost during the evaluation, and with it reference shards or query blocks; "
                f"the evaluation stopped without a result: run it again ({type(exc).__name__}: {exc})"
            ) from exc
