"""Search on a device whose searches return a limited number of results (faiss on a GPU: 2048)."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable
from dataclasses import dataclass

import faiss
import numpy as np

from .candidates import Candidates, flat_index, from_index, merge
from .memory import InMemorySearcher

GPU_MAX_K = 2048  # the most results one faiss GPU search returns (faiss >= 1.7.3)


@dataclass(frozen=True)
class Device:
    """Where candidates are searched, and the most results one search there returns.

    Parameters
    ----------
    max_k : int
        The most results one search on the device returns.
    move : callable
        Moves a CPU faiss index to the device and returns the index to search there.
    name : str
        What the result's ``config`` calls the device.

    Examples
    --------
    A stand-in device on the CPU (for tests) that returns at most 4 results per search:

    >>> stand_in = Device(max_k=4, move=lambda index: index)
    """

    max_k: int
    move: Callable
    name: str = "gpu"


def gpu_device() -> Device:
    """Every visible GPU (the references replicated, queries split between them), through faiss.

    Raises
    ------
    ValueError
        When faiss has no GPU support or sees no GPU, saying which.
    """
    n_gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    if n_gpus == 0 or not hasattr(faiss, "StandardGpuResources"):
        raise ValueError(
            "'device' 'gpu' needs a faiss build with GPU support and a visible GPU; "
            f"got faiss {faiss.__version__} reporting {n_gpus} GPU(s) (faiss-cpu has none: install a faiss GPU build)"
        )
    resources = [faiss.StandardGpuResources() for _ in range(n_gpus)]  # one per GPU, shared by all shards
    return Device(GPU_MAX_K, lambda index: faiss.index_cpu_to_gpu_multiple_py(resources, index))


class DeviceSearcher(InMemorySearcher):
    """Flat search on a :class:`Device`, exact for rankings of any depth.

    A search for ``n`` candidates with ``n`` above the device's ``max_k`` splits the
    references into shards, each asked for at most ``max_k``, and merges them exactly
    (:func:`~embedeval._search.candidates.merge`). A query that the merge leaves unsettled is
    searched again with twice as many candidates, as everywhere; once a shard would have to
    return more than ``max_k``, the references are split twice as finely. Splits only get finer
    (the device holds one copy of the references), and a finer split costs no more distance
    computations, only more calls. Deep rankings of an evaluation use the deep ranking on the CPU
    (:meth:`~embedeval._search.memory.InMemorySearcher.deep_ranker`).

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
    distance : {"euclidean", "cosine", "inner_product"}
    device : Device
        Searches on it are serialised, since faiss's GPU indexes are not safe to search from
        several threads.
    """

    def __init__(self, reference: np.ndarray, distance: str, device: Device):
        super().__init__(reference, distance)
        self.device = device
        self._split: tuple[list[int], list] = ([], [])  # shard offsets, device indexes
        self._lock = threading.Lock()  # one search on the device at a time

    def _shards(self, n_shards: int):
        """The references in at least ``n_shards`` equal shards on the device (made on demand)."""
        offsets, indexes = self._split
        if len(indexes) < n_shards:
            bounds = np.linspace(0, self.size, n_shards + 1).astype(np.int64)
            offsets = [int(a) for a in bounds[:-1]]
            indexes = [
                self.device.move(flat_index(self._reference[a:b], self.euclidean))
                for a, b in itertools.pairwise(bounds)
            ]
            self._split = (offsets, indexes)
        return self._split

    def _gather(self, queries, n) -> Candidates:
        max_k = self.device.max_k
        with self._lock:
            n_shards = max(len(self._split[1]), 1)
            while -(-n // n_shards) > max_k:  # a shard would have to return more than it can
                n_shards *= 2
            n_shards = min(n_shards, self.size)  # no empty shard: one reference each at most
            offsets, indexes = self._shards(n_shards)
            if len(indexes) == 1:
                return from_index(indexes[0], queries, n, self.euclidean)
            # Each shard returns a share of n with some to spare, within the limit; the merge
            # keeps only what is certain, and unsettled queries come back with twice the n.
            per_shard = min(max_k, -(-n // len(indexes)) + max(16, n // (4 * len(indexes))))
            parts = [from_index(index, queries, per_shard, self.euclidean) for index in indexes]
        return merge(parts, offsets)
