"""Evaluation of an embedding space with class labels: one short pipeline.

options checked -> inputs read and coded (:mod:`embedeval._relevance`) -> a searcher
(:mod:`embedeval._search`) -> query blocks planned (:mod:`embedeval._blocks`) -> blocks run on
an executor (:mod:`embedeval._executors`, :mod:`embedeval.distributed`), each one search -> hits
-> kernels -> per-query arrays -> the result (:meth:`EvaluationResult.from_per_query`).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import faiss
import numpy as np

from ._approximation import check_approximation
from ._blocks import block_jobs, evaluate_block
from ._executors import Sequential, Threads
from ._inputs import DISTANCES, as_embeddings, as_labels, check_choice, check_directions, check_positive_int
from ._metrics import ALL_HITS, DEFAULT_EMBEDDING_METRICS, EMBEDDINGS, FIRST_HIT, parse_metrics
from ._relevance import LabelSets
from ._search import Device, FlatSearcher, gpu_device, make_searcher
from .result import EvaluationResult

TIE_RULE = "references at equal distance are ranked by index, lower first"


def evaluate(
    embeddings,
    labels,
    *,
    reference=None,
    reference_labels=None,
    metrics=DEFAULT_EMBEDDING_METRICS,
    distance: str = "euclidean",
    block_size: int | None = None,
    n_threads: int | None = None,
    progress=None,
    shard_size: int | None = None,
    stream_reference: bool = False,
    client=None,
    index: str = "flat",
    index_params: str | None = None,
    device: str | Device = "cpu",
    check_sample: int = 1000,
    seed: int = 0,
) -> EvaluationResult:
    r"""Evaluate an embedding space for retrieval with class labels.

    Each query retrieves its nearest references by exact (faiss flat) search; a reference is
    relevant when it shares the query's label. By default every embedding is a query against
    all the others (leave-one-out); with ``reference`` given, the queries search that gallery.

    Parameters
    ----------
    embeddings : array-like of shape (n_queries, d)
        Query embeddings; numpy arrays, torch tensors (CPU or GPU, with or without grad) and
        anything with ``__array__`` are accepted. Searched in float32.
    labels : array-like of shape (n_queries,)
        Hashable class labels (ints of any width, strings, ...); compared by identity, never
        cast to float.
    reference, reference_labels : array-like of shape (n_references, d) and (n_references,), optional
        A separate gallery to search. Both or neither. Without them, the reference set is
        ``embeddings`` itself, and each query is excluded from its own ranking by its index.
    metrics : str or sequence of str
        Any of ``precision@k``, ``recall@k``, ``hit_rate@k``, ``r_precision``, ``map@r``,
        ``map``, ``map@k``, ``mrr``, ``mrr@k``, for any ``k >= 1``.
    distance : {"euclidean", "cosine", "inner_product"}
        ``cosine`` L2-normalises queries and references; ``inner_product`` ranks by
        :math:`q \cdot r`, larger first.
    block_size : int, optional
        Queries per block. Default: chosen so a block's working memory stays near 170 MB.
        Results do not depend on it.
    n_threads : int, optional
        Query blocks evaluated at once, on as many threads, each searching with one faiss
        thread. Default: ``faiss.omp_get_max_threads()`` (set by ``OMP_NUM_THREADS`` or
        ``faiss.omp_set_num_threads``). With 1, blocks run one after another and each faiss
        search uses faiss's own threads. Results do not depend on it; memory does not grow
        with it (the per-block budget is shared).
    progress : callable, optional
        Called as ``progress(done, total)`` with query counts after each block (for progress bars).
    shard_size : int, optional
        Split the references into shards of this many rows, each searched by its own faiss index
        and merged exactly (the results do not change). Default: one index, or 256 MB shards with
        ``stream_reference`` or ``client``.
    stream_reference : bool
        Rebuild each shard from ``reference`` (or ``embeddings``) at every search instead of
        keeping the indexes: memory is bounded by a shard and a query block per thread, not by
        the file, so a memory-mapped .npy larger than RAM can be evaluated (at the cost of
        re-reading it).
    client : distributed.Client, optional
        Run the query blocks on a Dask cluster, with the reference shards scattered over its
        workers (see :mod:`embedeval.distributed`); the numbers are identical.
    index : str
        ``"flat"`` (exact, the default) or a faiss index-factory string for approximate search,
        e.g. ``"HNSW32"`` or ``"IVF1024,Flat"``; ``index_params`` sets its search parameters
        (``"efSearch=128"``, ``"nprobe=16"``). An approximate result says so in ``conventions``
        and ``approximation``: the index's neighbour recall against exact search on
        ``check_sample`` queries drawn with ``seed``, and the metric values on them both ways.

    device : {"cpu", "gpu"} or embedeval._search.Device
        ``"gpu"`` computes the candidates with a faiss GPU build on every visible GPU (the
        references copied to each); k above faiss's GPU limit of 2048 is served by splitting
        the references into shards that each stay within it, merged exactly. Rankings deeper
        than an eighth of the references use float64 distances on the CPU either way. The
        numbers are identical to ``"cpu"``. A ``Device(max_k, move)`` is a stand-in device
        searched the same way (e.g. in tests: ``move=lambda index: index`` keeps the CPU index
        and ``max_k`` sets the limit per search).

    Returns
    -------
    EvaluationResult
        ``summary`` (micro averages), ``per_query``, ``per_class`` (with the macro average),
        ``definitions``, ``conventions``, counts of evaluated and skipped queries.

    Notes
    -----
    With R the number of references sharing the query's label (the query itself excluded):

    * ``recall@k`` is the metric-learning Recall@K: 1 if any of the k nearest references shares
      the label, else 0 (the same as ``hit_rate@k``; trec_eval's recall is in
      :func:`evaluate_rankings`).
    * :math:`\mathrm{P@k} = \frac{1}{k}\sum_{i \le k} rel_i`;
      :math:`\text{R-precision} = \frac{1}{R}\sum_{i \le R} rel_i`.
    * :math:`\mathrm{MAP@R} = \frac{1}{R}\sum_{i \le R} P(i)\,rel_i`, :math:`P(i)` the precision at rank i.
    * ``map`` is average precision over the whole ranking, :math:`\frac{1}{R}\sum_i P(i)\,rel_i`;
      ``mrr`` is the reciprocal rank of the first same-label reference in the whole ranking.
    * Ties in distance are broken by reference index, lower first, so results do not depend on
      block size, thread count or run.
    * A query with R = 0 (no other reference has its label) is skipped: NaN in ``per_query``,
      counted in ``skipped``, never averaged in.
    * If k exceeds the number of rankable references, the ranking is the whole reference set
      and precision@k still divides by k.

    References
    ----------
    K. Musgrave, S. Belongie, S.-N. Lim. "A Metric Learning Reality Check." ECCV 2020.

    Examples
    --------
    >>> import numpy as np, embedeval
    >>> x = np.array([[0.0], [0.1], [1.0], [1.2]])
    >>> r = embedeval.evaluate(x, ["a", "a", "b", "b"], metrics=["precision@1", "map@r"])
    >>> r.summary
    {'precision@1': 1.0, 'map@r': 1.0}
    """
    parsed = parse_metrics(metrics, EMBEDDINGS)
    options = _Options.check(
        parsed, distance, block_size, n_threads, shard_size, stream_reference, client, index, index_params, device
    )
    if options.approximate:
        check_sample = check_positive_int(check_sample, "check_sample")
    queries, references, query_labels, sets = _read_inputs(embeddings, labels, reference, reference_labels, distance)
    _warn_if_k_exceeds(parsed, sets.n_rankable)
    per_query = {m.name: np.full(queries.shape[0], np.nan) for m in parsed}
    evaluated = np.flatnonzero(sets.n_relevant > 0)
    approximation = None
    if evaluated.size:
        searcher = options.searcher(references, seed)
        executor = options.executor()
        jobs = block_jobs(queries, sets, evaluated, parsed, distance, options.block_size, executor.n_workers)
        done = 0
        for rows, values in executor.run(evaluate_block, searcher, sets.reference_codes, jobs):
            for name, v in values.items():
                per_query[name][rows] = v
            done += rows.size
            if progress is not None:
                progress(done, evaluated.size)
        if options.approximate:
            exact = FlatSearcher(references, distance)
            approximation = check_approximation(
                searcher, exact, queries, sets, evaluated, parsed, distance, check_sample, seed, per_query
            )
            approximation.update(index=index, index_params=index_params)
    else:
        warnings.warn(
            "no query was evaluated: every query's label has no other member in the reference "
            "set (R = 0), so every summary value is NaN",
            UserWarning,
            stacklevel=2,
        )
    return EvaluationResult.from_per_query(
        per_query,
        {m.name: m.definition for m in parsed},
        _conventions(distance, sets.leave_one_out),
        skip_reasons=(sets.skip_reason,),
        query_labels=query_labels,
        label_codes=(sets.classes, sets.query_codes),
        approximation=approximation,
        config=_config(options, sets, references.shape, queries.shape[1]),
    )


@dataclass(frozen=True)
class _Options:
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
    def check(cls, metrics, distance, block_size, n_threads, shard_size, stream, client, index, index_params, device):
        """Every option checked, and every conflict refused, before any work."""
        distance = check_choice(distance, "distance", DISTANCES)
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
            from .distributed import DaskExecutor

            return DaskExecutor(self.client)
        n_workers = 1 if self.approximate else self.n_threads or max(1, faiss.omp_get_max_threads())
        return Threads(n_workers) if n_workers > 1 else Sequential()


def _read_inputs(embeddings, labels, reference, reference_labels, distance: str):
    """(queries, references, query labels, LabelSets), every input checked before any work.

    Queries are not normalised here: they are read (and normalised) block by block, so that
    memory-mapped queries are streamed from disk; each searcher prepares the references itself.
    """
    queries = as_embeddings(embeddings, "embeddings")
    query_labels = as_labels(labels, queries.shape[0], "labels", "embeddings")
    if (reference is None) != (reference_labels is None):
        given, missing = (
            ("reference", "reference_labels") if reference is not None else ("reference_labels", "reference")
        )
        raise ValueError(f"'{missing}' is required when '{given}' is given; got None")
    if reference is None:
        references, ref_labels = queries, None
    else:
        references = as_embeddings(reference, "reference")
        ref_labels = as_labels(reference_labels, references.shape[0], "reference_labels", "reference")
        if references.shape[1] != queries.shape[1]:
            raise ValueError(
                f"'reference' must have the dimension of 'embeddings' ({queries.shape[1]}); got {references.shape[1]}"
            )
    if distance == "cosine":
        check_directions(queries, "embeddings")
        if reference is not None:
            check_directions(references, "reference")
    return queries, references, query_labels, LabelSets.from_labels(query_labels, ref_labels)


def _warn_if_k_exceeds(metrics, n_rankable: int) -> None:
    beyond = [m.name for m in metrics if m.k is not None and m.k > n_rankable]
    if beyond:
        warnings.warn(
            f"{beyond}: k exceeds the {n_rankable} rankable references; the whole reference set is ranked "
            "and precision@k still divides by k",
            UserWarning,
            stacklevel=3,
        )


def _config(options: _Options, sets: LabelSets, reference_shape, dim: int) -> dict:
    if options.approximate:
        search = f"approximate: faiss {options.index!r} {options.index_params or ''}".strip()
    else:
        device = getattr(options.device, "name", options.device)
        search = f"exact: faiss flat candidates ({device}), ranked by float64 distance"
    return {
        "distance": options.distance,
        "mode": "leave-one-out" if sets.leave_one_out else "separate reference set",
        "n_references": int(reference_shape[0]),
        "dim": int(dim),
        "n_classes": int(sets.classes.size),
        "search": search,
        "tie_rule": TIE_RULE,
    }


def _conventions(distance: str, leave_one_out: bool) -> dict[str, str]:
    return {
        "recall": "metric-learning Recall@K (hit rate): a same-label reference in the top k",
        "relevance": "a reference is relevant when it shares the query's label; R counts them"
        + (", the query excluded" if leave_one_out else ""),
        "ties": TIE_RULE,
        "distance": distance,
        "average": "summary = micro average over evaluated queries; per_class.macro = mean of class means",
    }
