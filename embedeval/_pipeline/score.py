"""What every search-based evaluation shares: its options, and searching and scoring its queries.

:func:`embedeval.evaluate` (class labels, label sets) and :func:`embedeval.evaluate_retrieval`
(judgements) read their inputs into a :class:`~embedeval._relevance.Relevance`, then both run
:func:`score`: a searcher (:mod:`embedeval._search`) -> query blocks planned
(:mod:`embedeval._pipeline.blocks`) -> blocks run on an executor (:mod:`embedeval._pipeline.executors`,
:mod:`embedeval._pipeline.cluster`), each one search -> hits -> kernels -> per-query arrays.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import faiss
import numpy as np

from .._core import budget as _budget
from .._inputs.arrays import DISTANCES, check_choice, check_positive_int
from .._inputs.codes import HAMMING
from .._metrics.registry import ALL_HITS, FIRST_HIT
from .._relevance import Relevance
from .._search import Device, FlatSearcher, gpu_device
from . import hamming_scan as _hamming
from .approximation import check_approximation
from .blocks import block_jobs, evaluate_block
from .executors import Sequential, Threads, gather
from .searchers import make_searcher

TIE_RULE = "references at equal distance are ranked by index, lower first"


@dataclass(frozen=True)
class Options:
    """The checked options of an evaluation: which searcher and which executor it runs."""

    distance: str
    block_size: int | None
    n_threads: int | None
    shard_size: int | None
    stream: bool
    client: object
    index: str
    index_params: str | None
    device: str | Device  # "cpu" or a Device ("gpu" is checked into one)

    @property
    def approximate(self) -> bool:
        return self.index != "flat"

    @classmethod
    def check(
        cls,
        metrics,
        distance,
        block_size,
        n_threads,
        shard_size,
        stream,
        client,
        index,
        index_params,
        device,
        ties=None,
    ):
        """Every option checked, and every conflict refused, before any work."""
        distance = check_choice(distance, "distance", (*DISTANCES, HAMMING))
        _hamming.check_options(metrics, distance, ties, index, device, client, shard_size, stream)
        if block_size is not None:
            block_size = check_positive_int(block_size, "block_size")
        if n_threads is not None:
            n_threads = check_positive_int(n_threads, "n_threads")
        if shard_size is not None:
            shard_size = check_positive_int(shard_size, "shard_size")
        if not isinstance(device, Device):
            device = check_choice(device, "device", ("cpu", "gpu"))
        if device != "cpu" and (index != "flat" or client is not None or shard_size is not None or stream):
            raise ValueError(
                "'device' 'gpu' searches exactly with the references on the GPU; drop index, client, shard_size "
                "and stream_reference"
            )
        if device == "gpu":
            device = gpu_device()  # fails here, before any work, without a GPU
        if index != "flat":
            if not isinstance(index, str):
                raise TypeError(f"'index' must be 'flat' or a faiss index-factory string; got {type(index).__name__}")
            whole = [m.name for m in metrics if m.uncut in (FIRST_HIT, ALL_HITS)]
            if whole:
                raise ValueError(
                    f"{whole} rank every reference, which an approximate index cannot; use index='flat' or "
                    "a cutoff (map@k, mrr@k)"
                )
            if client is not None or shard_size is not None or stream:
                raise ValueError(
                    "an approximate 'index' runs in one process; drop client, shard_size and stream_reference"
                )
        return cls(distance, block_size, n_threads, shard_size, stream, client, index, index_params, device)

    def searcher(self, references, seed: int):
        """The searcher over the references that these options ask for."""
        return make_searcher(
            references,
            self.distance,
            index=self.index,
            index_params=self.index_params,
            shard_size=self.shard_size,
            stream=self.stream,
            device=self.device,
            client=self.client,
            seed=seed,
        )

    def executor(self):
        """Where the blocks run: a Dask cluster, local threads, or one after another."""
        if self.client is not None:
            from .cluster import DaskExecutor

            return DaskExecutor(self.client)
        n_workers = 1 if self.approximate else self.n_threads or max(1, faiss.omp_get_max_threads())
        return Threads(n_workers) if n_workers > 1 else Sequential()

    def search_config(self) -> str:
        if self.distance == HAMMING:
            return "exact: every Hamming distance counted (faiss.hammings), in chunks of references"
        if self.approximate:
            return f"approximate: faiss {self.index!r} {self.index_params or ''}".strip()
        device = getattr(self.device, "name", self.device)
        return f"exact: faiss flat candidates ({device}), ranked by float64 distance"


def score(
    options: Options,
    queries,
    references,
    relevance: Relevance,
    metrics,
    evaluated,
    *,
    progress,
    seed,
    check_sample,
    ties=None,
):
    """Search and score the ``evaluated`` queries: (per-query arrays, NaN elsewhere; approximation or None).

    Binary codes (``distance="hamming"``) take :mod:`embedeval._pipeline.hamming_scan`'s scan instead of the
    search, under the tie rule ``ties``."""
    if options.distance == HAMMING:
        return _hamming.score(
            options, queries, references, relevance, metrics, evaluated, progress=progress, ties=ties
        ), None
    per_query = {m.name: np.full(queries.shape[0], np.nan) for m in metrics}
    if not evaluated.size:
        return per_query, None
    searcher = options.searcher(references, seed)
    executor = options.executor()
    deep_from = _budget.DEEP_FROM if searcher.exact and searcher.ranks_deep else None
    jobs = block_jobs(
        queries, relevance, evaluated, metrics, options.distance, options.block_size, executor.n_workers, deep_from
    )
    gather(executor.run(evaluate_block, searcher, relevance.shared, jobs), per_query, evaluated.size, progress)
    approximation = None
    if options.approximate:
        exact = FlatSearcher(references, options.distance)
        approximation = check_approximation(
            searcher, exact, queries, relevance, evaluated, metrics, options.distance, check_sample, seed, per_query
        )
        approximation.update(index=options.index, index_params=options.index_params)
    return per_query, approximation


def warn_if_k_exceeds(metrics, n_rankable: np.ndarray) -> None:
    """Warn when a cutoff exceeds what some evaluated query can rank (``n_rankable`` of them)."""
    fewest = int(n_rankable.min(initial=np.iinfo(np.int64).max))
    beyond = [m.name for m in metrics if m.k is not None and not m.spec.radius and m.k > fewest]
    if beyond:
        some = "" if (n_rankable == fewest).all() else " of some queries"
        warnings.warn(
            f"{beyond}: k exceeds the {fewest} rankable references{some}; the whole reference set is ranked "
            "and precision@k still divides by k",
            UserWarning,
            stacklevel=3,
        )
