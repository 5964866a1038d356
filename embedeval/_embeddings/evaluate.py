"""Evaluation of an embedding space with class labels (one per item, or sets): one short pipeline.

options checked -> inputs read and coded into a :class:`~embedeval._relevance.Relevance` (class
labels or label sets, and the ignore rules) -> set-level metrics checked
(:class:`~embedeval._setlevel.steps.SetStep`) -> :func:`embedeval._pipeline.score` for the
per-query metrics (searcher, blocks, executor; each block search -> hits -> kernels) -> the
set-level metrics (clustering, verification, geometry) -> the result
(:meth:`EvaluationResult.from_per_query`).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

from .._inputs.codes import HAMMING
from .._inputs.groups import read_groups
from .._inputs.magnitude import scale_config
from .._metrics.registry import DEFAULT_EMBEDDING_METRICS, EMBEDDINGS, parse_metrics
from .._metrics.set_families import VERIFICATION
from .._metrics.ties import check_ties
from .._pipeline import route
from .._pipeline.options import Options
from .._pipeline.score import warn_if_k_exceeds
from .._relevance import ClassLabels
from .._relevance.self_reference import read_query_rows, warn_if_rows_differ, warn_if_self_reference
from .._search import Device
from .._setlevel.steps import SetStep, split
from ..result import EvaluationResult
from .kept import with_kept
from .labelled import (
    class_codes,
    config,
    conventions,
    nothing_evaluated,
    read_embeddings,
    read_relevance,
    rows,
    skip_reasons,
)
from .neighbors import reported_curves


def evaluate(
    embeddings,
    labels,
    *,
    reference=None,
    reference_labels=None,
    metrics=DEFAULT_EMBEDDING_METRICS,
    distance: str = "euclidean",
    ignore=None,
    ignore_same=None,
    query_in_reference=None,
    ties: str | None = None,
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
    groups=None,
    keep_neighbors: int | None = None,
) -> EvaluationResult:
    r"""Evaluate an embedding space for retrieval with class labels.

    Each query retrieves its nearest references by exact (faiss flat) search; a reference is
    relevant when it shares the query's label. By default every embedding is a query against
    all the others (leave-one-out); with ``reference`` given, the queries search that gallery.

    Parameters
    ----------
    embeddings : array-like of shape (n_queries, d)
        Query embeddings; numpy arrays, torch tensors (CPU or GPU, with or without grad) and
        anything with ``__array__`` are accepted. Searched in float32. With
        ``distance="hamming"``, binary codes: packed ``uint8`` of shape (n_queries, d / 8)
        (faiss's layout), or bool / 0-1 values of shape (n_queries, d).
    labels : array-like of shape (n_queries,), sequence of label sets, or bool array of shape (n_queries, n_labels)
        Hashable class labels (ints of any width, strings, tuples such as ``(identity, camera)``,
        ...); compared by identity, never cast to float. Multi-label: a sequence with a set,
        frozenset or list of labels per item, or a boolean indicator array; a reference is then
        relevant when it shares at least one label with the query. An empty label set is an
        error.
    reference, reference_labels : array-like of shape (n_references, d) and (n_references,), optional
        A separate gallery to search. Both or neither. Without them, the reference set is
        ``embeddings`` itself, and each query is excluded from its own ranking by its index.
        ``reference_labels`` take the forms of ``labels`` (single labels on one side and label
        sets on the other are sets of one label).
    metrics : str or sequence of str
        Per-query metrics: any of ``precision@k``, ``recall@k``, ``hit_rate@k``, ``cmc@k``,
        ``capped_recall@k`` (OML's precision@k), ``r_precision``, ``map@r``, ``map``, ``map@k``,
        ``map_hits@k`` (OML's map@k, deep hashing's mAP@k), ``mrr``, ``mrr@k``, for any
        ``k >= 1``; with ``distance="hamming"`` also ``precision_radius@r`` and
        ``recall_radius@r`` for a Hamming radius ``r >= 0``. Set-level metrics, one number for
        the whole set (float embeddings only): ``nmi``, ``ami`` (k-means clustering),
        ``fnmr@fmr=x``, ``tar@far=x``, ``eer``, ``pair_auroc`` (pair verification, x in (0, 1)),
        ``pcf@r`` (geometry, r in (0, 1]). pytorch-metric-learning's names are accepted too
        (``precision_at_1``, ``mean_average_precision_at_r``, ``NMI``, ...) and reported under
        these. The search runs only for per-query metrics; each set-level computation only when
        one of its metrics is asked for.
    distance : {"euclidean", "cosine", "inner_product", "hamming"}
        ``cosine`` L2-normalises queries and references; ``inner_product`` ranks by
        :math:`q \cdot r`, larger first; ``hamming`` ranks binary codes by the number of
        differing bits, every distance computed exactly (``block_size``, ``n_threads`` and
        ``progress`` apply; ``index``, ``device``, ``client``, ``shard_size`` and
        ``stream_reference`` do not).
    ignore : mapping or sequence, optional
        References each query ignores: ``{query position: iterable of reference positions}``,
        or one iterable per query. An ignored reference takes no rank and does not count in R.
    ignore_same : (query_keys, reference_keys), optional
        Each query ignores every reference whose key equals its own: keys are hashables
        (tuples too) or rows of 2-D arrays, e.g. ``(identity, camera)`` for re-identification's
        junk (``np.column_stack([ids, cams])`` on both sides). In leave-one-out evaluation
        both are keys of ``embeddings``.
    query_in_reference : array-like of int of shape (n_queries,), optional
        With ``reference``: the row of ``reference`` that holds each query, or -1 for a query
        that is not in it (pytorch-metric-learning's ``ref_includes_query``: the queries are the
        first rows of the reference, ``np.arange(n_queries)``). That row is ignored by index,
        as ``ignore`` would: it takes no rank and does not count in R. Without it (and without
        ``ignore``/``ignore_same``), a reference that is the query array, or holds identical
        same-label rows for at least half the queries, draws a warning (every query would find
        itself at distance 0). Binary codes repeat by design, so with ``distance="hamming"``
        only the query array passed again as ``reference`` draws it.
    ties : {None, "expected", "optimistic", "pessimistic"}, optional
        None ranks references at equal distance by index, lower first; ``"expected"`` gives
        each metric's exact expected value over every order of them (McSherry & Najork 2008,
        in closed form); ``"optimistic"`` / ``"pessimistic"`` the order with relevant
        references first / last in each tie group, the range a tie rule can move a value in.
        Tied means equal Hamming distances for codes, and exactly equal float64 distances
        (computed from the float32 vectors as searched) for float embeddings, which are then
        scanned exactly in this process: no ``index``, ``device``, ``client``, ``shard_size``
        or ``stream_reference``.
    block_size : int, optional
        Queries per block. Default: chosen so a block's working memory stays near 170 MB.
        Results do not depend on it.
    n_threads : int, optional
        Query blocks evaluated at once, on as many threads, each searching with one faiss
        thread. Default: ``faiss.omp_get_max_threads()`` (set by ``OMP_NUM_THREADS`` or
        ``faiss.omp_set_num_threads``). With 1, blocks run one after another and each faiss
        search uses faiss's own threads. Results do not depend on it; memory does not grow
        with it (the per-block budget is shared).
    progress : bool or callable, optional
        ``True``: a progress bar (tqdm's ``tqdm.auto``, a widget in Jupyter, where tqdm is
        installed; else a line on stderr when it is a terminal). A callable is called as
        ``progress(done, total)`` with query counts after each block.
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
        ``"gpu"`` computes float64 distances to every reference on every visible CUDA GPU
        through torch (an optional extra: ``pip install torch``), a block of references at a
        time within the card's free memory, each query's top k kept there; near-ties are
        decided on the CPU by its own float64 formula, so the numbers are identical to
        ``"cpu"``, at every depth. Hamming distances and the tie-aware rules (``ties``) scan on
        the CPU and refuse a device. A ``Device(("cpu",), reference_block=b)`` runs the same
        path on torch's CPU device (e.g. in tests).
    groups : array-like of shape (n_queries,), optional
        One group per query (language, category, camera, ...): each per-query metric is also
        averaged within each group, in ``result.per_group`` (set-level metrics are not split).
    keep_neighbors : int, optional
        Keep each query's first ``keep_neighbors`` neighbours on the result (``result.neighbors``:
        ids, distances, relevance, R), for :meth:`EvaluationResult.explore`: the exact ones, ties
        by lower index, found by one more search after the metrics. Float embeddings only.

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
      counted in ``skipped``, never averaged in. A query whose relevant references are all
      ignored is skipped for that reason, counted separately.
    * Ignored references (the query itself in leave-one-out evaluation, ``ignore_same``,
      ``ignore``) are removed from the ranking by index, never by position: duplicates of them
      keep their ranks. ``config`` counts them (``n_ignored``, ``n_relevant_ignored``).
    * Multi-label relevance is binary: a reference sharing one label with the query is as
      relevant as one sharing all of them. No graded variant (gain = number of shared labels)
      is offered here; ``evaluate_retrieval`` takes grades as judgements.
    * ``cmc@k`` is re-identification's CMC rank-k, the same number as ``recall@k`` here.
    * If k exceeds the number of rankable references, the ranking is the whole reference set
      and precision@k still divides by k.
    * Set-level metrics describe the query embeddings (``embeddings``): k-means of the queries
      into as many clusters as query labels (pytorch-metric-learning's settings, in
      ``config["clustering"]``); pcf of the queries' covariance; verification over every pair
      of distinct embeddings, or every (query, reference) pair with a separate reference set.
      They appear in ``summary`` and ``definitions`` but not in ``per_query`` or ``per_class``.
      Verification needs single class labels, both same-label and different-label pairs, and
      no ignore rule beyond leave-one-out.

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
    ranked, whole = split(parsed)  # per-query metrics (searched) and set-level ones
    ties = check_ties(ties)
    if distance == HAMMING and whole:
        raise ValueError(
            f"{[m.name for m in whole]} are computed from float embeddings; distance='hamming' (binary codes) "
            "takes per-query metrics only"
        )
    options = Options.from_arguments(ranked, locals())
    queries, references, scale = read_embeddings(embeddings, reference, reference_labels, distance)
    own = read_query_rows(query_in_reference, reference, queries.shape[0], references.shape[0])
    query_groups = read_groups(groups, queries.shape[0])
    query_labels, relevance = read_relevance(labels, reference_labels, queries, references, ignore, ignore_same, own)
    given = {"ignore": ignore, "ignore_same": ignore_same, "query_in_reference": own}
    step = SetStep.check(whole, relevance, reference is None, [k for k, v in given.items() if v is not None])
    if own is not None:
        warn_if_rows_differ(*rows(queries, references), own)
    elif reference is not None and ignore is None and ignore_same is None and (ranked or step.of(VERIFICATION)):
        # Binary codes repeat by design (2**d values shared by a whole database): an identical
        # same-label code is no sign of the query itself, so only the same array passed twice is.
        if distance != HAMMING or reference is embeddings:
            warn_if_self_reference(embeddings, reference, queries, references, class_codes(relevance))
    evaluated = np.flatnonzero(relevance.n_relevant > 0) if ranked else np.zeros(0, dtype=np.int64)
    warn_if_k_exceeds(ranked, relevance.n_rankable[evaluated])
    per_query, approximation = route.run(options, queries, references, relevance, ranked, evaluated)
    if ranked and not evaluated.size:
        warnings.warn(nothing_evaluated(relevance), UserWarning, stacklevel=2)
    set_values, set_config, set_conventions, curves = step.run(queries, references, options.distance)
    single = isinstance(relevance.source, ClassLabels)
    own_only = own is not None and ignore is None and ignore_same is None  # PML's ref_includes_query
    reasons = skip_reasons(relevance, reference is None, own is not None, own_only) if ranked else ()
    codes = relevance.skip_codes() if ranked else np.full(queries.shape[0], -1, dtype=np.int8)
    if len(reasons) == 1:  # leave-one-out alone: a query without another member of its class
        codes = np.minimum(codes, 0)
    result = EvaluationResult.from_per_query(
        per_query,
        {m.name: m.definition for m in parsed},
        {**conventions(distance, relevance, reference is None, own, own_only, ties), **set_conventions},
        skip_codes=codes,
        skip_reasons=reasons,
        query_labels=query_labels,
        label_codes=(relevance.source.classes, relevance.source.query_codes) if single else None,
        approximation=approximation,
        config={
            **config(options, relevance, references.shape, queries.shape[1], reference is None, bool(ranked), ties),
            **set_config,
            **scale_config(scale),
        },
        set_values=set_values,
        groups=query_groups,
    )
    if curves is not None:
        result = dataclasses.replace(result, pair_curves=reported_curves(curves, scale, options.distance))
    return with_kept(result, options, queries, references, relevance, scale)
