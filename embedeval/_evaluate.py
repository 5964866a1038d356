"""Evaluation of an embedding space with class labels: the one way through the data.

inputs checked once -> labels coded -> per-query R and ranking depth -> query blocks
(each: exact kNN -> hits -> per-query metric arrays) -> summary, per-class averages.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import faiss
import numpy as np

from . import _budget, _kernels
from ._inputs import (
    DISTANCES,
    as_embeddings,
    as_labels,
    check_choice,
    check_directions,
    check_positive_int,
    encode_labels,
    prepare,
)
from ._metrics import DEFAULT_EMBEDDING_METRICS, EMBEDDINGS, Metric, parse_metrics
from ._search import Device, FlatSearcher, gpu_device, make_searcher
from ._threads import run_threads
from .result import EvaluationResult, micro_averages, per_class_averages

TIE_RULE = "references at equal distance are ranked by index, lower first"


@dataclass(frozen=True)
class _Plan:
    """What a query block needs from the ranking, derived once from the metric list."""

    metrics: tuple[Metric, ...]
    fixed_k: int  # the largest cutoff of any @k metric
    needs_r: bool  # r_precision or map@r: rank at least R deep
    needs_first_hit: bool  # mrr over the whole ranking
    needs_all_hits: bool  # map over the whole ranking

    @classmethod
    def from_metrics(cls, metrics: list[Metric]) -> _Plan:
        return cls(
            tuple(metrics),
            max([m.k for m in metrics if m.k is not None], default=0),
            any(m.family in ("r_precision", "map@r") for m in metrics),
            any(m.family == "mrr" and m.k is None for m in metrics),
            any(m.family == "map" and m.k is None for m in metrics),
        )

    def depth(self, n_relevant: np.ndarray, n_rankable: int) -> np.ndarray:
        """How deep each query's ranking must go before the whole-ranking conditions."""
        depth = np.full(n_relevant.shape, max(self.fixed_k, 1), dtype=np.int64)
        if self.needs_r:
            depth = np.maximum(depth, n_relevant)
        return np.minimum(depth, n_rankable)


def evaluate_block(
    index,
    queries: np.ndarray,
    query_codes: np.ndarray,
    reference_codes: np.ndarray,
    n_relevant: np.ndarray,
    depth: int,
    plan: _Plan,
    exclude: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """Evaluate one block of queries: a self-contained unit, arrays in, per-query arrays out.

    Parameters
    ----------
    index : embedeval._search.ExactSearcher or ApproximateSearcher
        Over the reference vectors: anything with ``size``, ``exact`` and ``search``.
    queries : numpy.ndarray of shape (b, d), float32
    query_codes : numpy.ndarray of shape (b,)
    reference_codes : numpy.ndarray of shape (n_references,)
    n_relevant : numpy.ndarray of shape (b,)
        R of each query (>= 1).
    depth : int
        Rank every query this deep (at least the plan's depth for each of them).
    exclude : numpy.ndarray of shape (b,), optional
        Each query's own reference index, in leave-one-out evaluation.

    Returns
    -------
    dict of str to numpy.ndarray of shape (b,)
    """
    n_rankable = index.size - (exclude is not None)
    rows = np.arange(queries.shape[0])
    values: dict[str, np.ndarray] = {}
    while rows.size:
        sub_exclude = None if exclude is None else exclude[rows]
        if index.exact:  # only the relevance sequence must be exact: fewer near-ties to recompute
            ranked = index.search(queries[rows], depth, sub_exclude, query_codes[rows], reference_codes)
        else:
            ranked = index.search(queries[rows], depth, sub_exclude)
        hits = (ranked >= 0) & (reference_codes[ranked] == query_codes[rows, None])  # -1: nothing found
        for name, v in _kernels.compute(plan.metrics, _kernels.hits_from_dense(hits, n_relevant[rows])).items():
            values.setdefault(name, np.empty(queries.shape[0]))[rows] = v
        # Whole-ranking metrics need the first (mrr) or every (map) relevant item to be ranked:
        # rank the queries that lack them deeper, doubling, until they have them.
        found = np.count_nonzero(hits, axis=1)
        short = np.zeros(rows.size, dtype=bool)
        if plan.needs_first_hit:
            short |= found == 0
        if plan.needs_all_hits:
            short |= found < n_relevant[rows]
        if depth >= n_rankable:
            break
        rows = rows[short]
        depth = min(2 * depth, n_rankable)
    return values


def _blocks(depths: np.ndarray, block_size: int | None, n_workers: int = 1, dim: int = 1):
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
    distance = check_choice(distance, "distance", DISTANCES)
    if block_size is not None:
        block_size = check_positive_int(block_size, "block_size")
    if n_threads is not None:
        n_threads = check_positive_int(n_threads, "n_threads")
    if shard_size is not None:
        shard_size = check_positive_int(shard_size, "shard_size")
    if not isinstance(device, Device):
        device = check_choice(device, "device", ("cpu", "gpu"))
    if device != "cpu" and (index != "flat" or client is not None or shard_size is not None or stream_reference):
        raise ValueError(
            "'device' 'gpu' searches exactly with the references on the GPU; drop index, client, shard_size "
            "and stream_reference"
        )
    if device == "gpu":
        device = gpu_device()  # fails here, before any work, without a GPU
    approximate = index != "flat"
    if approximate:
        if not isinstance(index, str):
            raise TypeError(f"'index' must be 'flat' or a faiss index-factory string; got {type(index).__name__}")
        whole = [m.name for m in parsed if m.family in ("map", "mrr") and m.k is None]
        if whole:
            raise ValueError(
                f"{whole} rank every reference, which an approximate index cannot; use index='flat' or "
                "a cutoff (map@k, mrr@k)"
            )
        if client is not None or shard_size is not None or stream_reference:
            raise ValueError("an approximate 'index' runs in one process; drop client, shard_size and stream_reference")
        check_sample = check_positive_int(check_sample, "check_sample")
    queries = as_embeddings(embeddings, "embeddings")
    query_labels = as_labels(labels, queries.shape[0], "labels", "embeddings")
    if (reference is None) != (reference_labels is None):
        given, missing = (
            ("reference", "reference_labels") if reference is not None else ("reference_labels", "reference")
        )
        raise ValueError(f"'{missing}' is required when '{given}' is given; got None")
    leave_one_out = reference is None
    if leave_one_out:
        references, ref_labels = queries, query_labels
    else:
        references = as_embeddings(reference, "reference")
        ref_labels = as_labels(reference_labels, references.shape[0], "reference_labels", "reference")
        if references.shape[1] != queries.shape[1]:
            raise ValueError(
                f"'reference' must have the dimension of 'embeddings' ({queries.shape[1]}); got {references.shape[1]}"
            )
    if distance == "cosine":
        check_directions(queries, "embeddings")
        if not leave_one_out:
            check_directions(references, "reference")
    # Queries are read (and normalised) block by block, so memory-mapped queries are streamed
    # from disk; the index prepares the references itself.

    if leave_one_out:
        classes, (query_codes,) = encode_labels(query_labels)
        ref_codes = query_codes
    else:
        classes, (query_codes, ref_codes) = encode_labels(query_labels, ref_labels)
    ref_counts = np.bincount(ref_codes, minlength=classes.size)
    n_relevant = ref_counts[query_codes] - int(leave_one_out)
    n_rankable = references.shape[0] - int(leave_one_out)

    beyond = [m.name for m in parsed if m.k is not None and m.k > n_rankable]
    if beyond:
        warnings.warn(
            f"{beyond}: k exceeds the {n_rankable} rankable references; the whole reference set is ranked "
            "and precision@k still divides by k",
            UserWarning,
            stacklevel=2,
        )
    plan = _Plan.from_metrics(parsed)
    per_query = {m.name: np.full(queries.shape[0], np.nan) for m in parsed}
    evaluated = np.flatnonzero(n_relevant > 0)
    if evaluated.size:
        depths = plan.depth(n_relevant[evaluated], n_rankable)
        order = evaluated[np.argsort(depths, kind="stable")]
        depths = np.sort(depths, kind="stable")
        searcher = make_searcher(
            references,
            distance,
            index=index,
            index_params=index_params,
            shard_size=shard_size,
            stream=stream_reference,
            device=device,
            client=client,
            seed=seed,
        )
        codes_for_blocks = ref_codes
        if client is not None:
            from .distributed import run_blocks

            codes_for_blocks = client.scatter(ref_codes, broadcast=True, hash=False)

        def job_for(rows, depth):
            """The inputs of evaluate_block for these query rows."""
            return {
                "queries": prepare(np.asarray(queries[rows]), distance),
                "query_codes": query_codes[rows],
                "reference_codes": codes_for_blocks,
                "n_relevant": n_relevant[rows],
                "depth": depth,
                "plan": plan,
                "exclude": rows if leave_one_out else None,
            }

        n_workers = 1 if client is not None or approximate else n_threads or max(1, faiss.omp_get_max_threads())

        def jobs():
            for start, stop in _blocks(depths, block_size, n_workers, queries.shape[1]):
                rows = order[start:stop]
                yield rows, job_for(rows, int(depths[stop - 1]))

        if client is not None:
            finished = run_blocks(client, searcher, jobs(), evaluate_block)
        elif n_workers > 1:
            finished = run_threads(jobs(), lambda job: evaluate_block(searcher, **job), n_workers)
        else:
            finished = ((rows, evaluate_block(searcher, **job)) for rows, job in jobs())
        done = 0
        for rows, values in finished:
            for name, v in values.items():
                per_query[name][rows] = v
            done += rows.size
            if progress is not None:
                progress(done, evaluated.size)

    approximation = None
    if approximate and evaluated.size:
        approximation = _check_approximation(
            searcher,
            FlatSearcher(references, distance),
            job_for,
            evaluated,
            plan,
            n_rankable,
            check_sample,
            seed,
            per_query,
        )
        approximation.update(index=index, index_params=index_params)

    n_skipped = queries.shape[0] - evaluated.size
    if not evaluated.size:
        warnings.warn(
            "no query was evaluated: every query's label has no other member in the reference "
            "set (R = 0), so every summary value is NaN",
            UserWarning,
            stacklevel=2,
        )
    skip_reason = (
        "no other embedding shares the query's label (R = 0)"
        if leave_one_out
        else "no reference shares the query's label (R = 0)"
    )
    summary, _ = micro_averages(per_query)
    return EvaluationResult(
        summary=summary,
        per_query=per_query,
        definitions={m.name: m.definition for m in parsed},
        conventions=_conventions(distance, leave_one_out),
        n_queries=queries.shape[0],
        n_evaluated=int(evaluated.size),
        skipped={skip_reason: int(n_skipped)},
        per_class=per_class_averages(per_query, query_codes, classes),
        query_labels=query_labels,
        approximation=approximation,
        config={
            "distance": distance,
            "mode": "leave-one-out" if leave_one_out else "separate reference set",
            "n_references": int(references.shape[0]),
            "dim": int(queries.shape[1]),
            "n_classes": int(classes.size),
            "search": f"approximate: faiss {index!r} {index_params or ''}".strip()
            if approximate
            else f"exact: faiss flat candidates ({getattr(device, 'name', device)}), ranked by float64 distance",
            "tie_rule": TIE_RULE,
        },
    )


def _check_approximation(approx, exact, job_for, evaluated, plan, n_rankable, size, seed, per_query) -> dict:
    """Neighbour recall of an approximate index, and the metrics of a seeded sample of queries
    computed with exact search next to their approximate values."""
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(evaluated, size=min(size, evaluated.size), replace=False))
    job = job_for(sample, 0)
    depths = plan.depth(job["n_relevant"], n_rankable)
    job["depth"] = int(depths.max())
    found = approx.search(job["queries"], job["depth"], job["exclude"])
    truth = exact.search(job["queries"], job["depth"], job["exclude"])
    recall = np.mean([np.intersect1d(found[i, :d], truth[i, :d]).size / d for i, d in enumerate(depths)])
    exact_values = evaluate_block(exact, **job)
    return {
        "sample": int(sample.size),
        "seed": seed,
        "neighbour_recall": float(recall),
        "exact_on_sample": {m: float(v.mean()) for m, v in exact_values.items()},
        "approximate_on_sample": {m: float(per_query[m][sample].mean()) for m in exact_values},
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
