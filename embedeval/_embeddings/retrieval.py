"""Judged dense retrieval: query and corpus embeddings with qrels, on the exact search of ``evaluate``.

The judgements and metric names are those of :func:`embedeval.evaluate_rankings` (trec_eval's
conventions); the ranking is that of :func:`embedeval.evaluate` (float64 distances, ties by the
lower corpus row). The pipeline is :func:`embedeval._pipeline.score` with
:class:`~embedeval._relevance.Judgements` as the relevance source.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._forms.graded import conventions, warn_no_relevant
from .._forms.rankings import check_options
from .._inputs.arrays import check_choice
from .._inputs.codes import HAMMING
from .._inputs.groups import read_groups
from .._inputs.magnitude import scale_config
from .._metrics.registry import DEFAULT_RANKING_METRICS
from .._pipeline import route
from .._pipeline.options import Options
from .._pipeline.score import warn_if_k_exceeds
from .._relevance import IgnoreRules, Relevance
from .._relevance.ignore import read_keys, read_lists
from .._relevance.judged import ABSENT_DOCS, id_positions, read_judgements
from .._search import Device
from ..result import EvaluationResult
from .kept import with_kept
from .pair import read_pair

SKIP_REASONS = (
    "no judged item reaches the relevance threshold (R = 0)",
    "every relevant item is ignored (R = 0 after ignoring)",
    "the query has no judgements in 'qrels'",
)


def evaluate_retrieval(
    queries,
    corpus,
    qrels,
    *,
    query_ids=None,
    corpus_ids=None,
    metrics=DEFAULT_RANKING_METRICS,
    distance: str = "cosine",
    ignore=None,
    ignore_same=None,
    threshold: float = 1,
    empty: str = "skip",
    absent_docs: str = "count",
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
    r"""Evaluate dense retrieval against relevance judgements: every query ranks the whole corpus.

    Parameters
    ----------
    queries : array-like of shape (n_queries, d)
        Query embeddings (numpy, torch, anything with ``__array__``); searched in float32. With
        ``distance="hamming"``, binary codes as in :func:`evaluate`.
    corpus : array-like of shape (n_corpus, d)
        Corpus embeddings; a memory-mapped .npy is read shard by shard with ``stream_reference``.
    qrels : mapping
        ``{query id: {corpus id: grade}}`` (a set or list of corpus ids means grade 1), as
        pytrec_eval and BEIR hold them; or a sequence with one such entry per query row.
        Every id must name a row. A query the qrels do not name is skipped and counted.
    query_ids, corpus_ids : sequence, optional
        The id of each row of ``queries`` / ``corpus`` (distinct). Default: the row positions
        0, 1, ...
    metrics : str or sequence of str
        As in :func:`evaluate_rankings`: ``precision@k``, ``recall@k`` (trec_eval),
        ``capped_recall@k``, ``hit_rate@k``, ``f1@k``, ``r_precision``, ``map@r``, ``map[@k]``,
        ``map_hits@k``, ``mrr[@k]``, ``ndcg[@k]``, ``ndcg_exp[@k]``, ``dcg[@k]``, ``dcg_exp[@k]``,
        ``cg[@k]``, and the protocol metrics ``cmc@k``, ``revisited_map``, ``revisited_mp@k``.
    distance : {"cosine", "inner_product", "euclidean", "hamming"}
        Default cosine (most text embedding models); ``inner_product`` ranks by :math:`q \cdot r`;
        ``hamming`` ranks binary codes (e.g. a binary passage retriever's) by differing bits.
    ignore : mapping or sequence, optional
        Corpus entries each query ignores: ``{query id: iterable of corpus ids}`` (positions
        without ids), e.g. the query's own document (Quora, ArguAna) or revisited Oxford's junk.
    ignore_same : (query_keys, corpus_keys), optional
        Each query ignores every corpus entry whose key equals its own, e.g.
        ``(query_ids, corpus_ids)`` to ignore documents that share the query's id.
    threshold : float
        Grade at which a judged entry is relevant for the binary metrics (trec_eval's relevance
        level, default 1).
    empty : {"skip", "zero"}
        Queries with no relevant entry (after ignoring): skipped (NaN, counted) or scored 0 and
        averaged, as trec_eval does.
    absent_docs : {"count", "drop", "error"}
        A judged document whose id ``corpus_ids`` lacks (BEIR's qrels name a few): ``"count"``
        (default) counts it as relevant and never retrieved, in R and in the ideal nDCG ranking,
        as trec_eval and pytrec_eval count a judged document that a run lacks; ``"drop"`` leaves
        the judgement out (R counts the corpus's documents only); ``"error"`` refuses it. Either
        of the first two is said in one warning line. Without ``corpus_ids`` (rows by position),
        a position out of range is always an error.
    ties : {None, "expected", "optimistic", "pessimistic"}, optional
        Corpus entries at equal distance ranked by row (None), or each metric's exact expected
        value over their orders, or the best / worst of them (as in :func:`evaluate`: equal
        Hamming distances, or exactly equal float64 distances of float embeddings).
    block_size, n_threads, progress, shard_size, stream_reference, client, index, index_params, device
        As in :func:`evaluate` (``corpus`` is the reference set), with ``check_sample`` and ``seed``.
    groups : array-like of shape (n_queries,) or mapping, optional
        One group per query row (language, subset, ...), or ``{query id: group}`` with
        ``query_ids``: each metric is also averaged within each group, in ``result.per_group``.
    keep_neighbors : int, optional
        As in :func:`evaluate`: each query's first corpus neighbours, kept on ``result.neighbors``.

    Returns
    -------
    EvaluationResult
        ``per_query`` in the order of the query rows (``config["query_ids"]`` when ids are given).

    Notes
    -----
    R is the number of judged corpus entries with grade >= ``threshold`` that no rule ignores;
    nDCG uses linear gain (trec_eval's ndcg_cut) over the ideal ranking of those entries'
    grades. The ranking is exact: float64 distances, ties by the lower corpus row, ignored
    entries removed by row, whatever the block size, thread count, shards or device. A run made
    of that ranking gives trec_eval's numbers (tested through pytrec_eval to 1e-9 per query).

    Examples
    --------
    >>> import numpy as np, embedeval
    >>> queries = np.array([[1.0, 0.0], [0.0, 1.0]])
    >>> corpus = np.array([[1.0, 0.1], [0.1, 1.0], [1.0, 1.0]])
    >>> qrels = {"q1": {"d1": 1}, "q2": {"d3": 2, "d2": 1}}
    >>> r = embedeval.evaluate_retrieval(
    ...     queries, corpus, qrels, query_ids=["q1", "q2"], corpus_ids=["d1", "d2", "d3"], metrics=["mrr", "ndcg@2"]
    ... )
    >>> {name: round(value, 4) for name, value in r.summary.items()}
    {'mrr': 1.0, 'ndcg@2': 0.9299}
    """
    parsed, threshold, ties = check_options(metrics, threshold, empty, False, ties)  # as the ranked lists' entries
    options = Options.from_arguments(parsed, locals())
    q, c, scale = read_pair(queries, corpus, ("queries", "corpus"), distance, optional=False)
    query_groups = read_groups(groups, q.shape[0], _id_list(query_ids))
    check_choice(absent_docs, "absent_docs", ABSENT_DOCS)
    relevance, judged = _read_relevance(
        qrels, q.shape[0], c.shape[0], query_ids, corpus_ids, threshold, ignore, ignore_same, absent_docs
    )
    codes = relevance.skip_codes()
    if not (relevance.n_counted[judged] > 0).any():
        warn_no_relevant(threshold, empty, "queries/corpus", 2)
    if empty == "zero":
        codes[:] = -1  # R = 0 counts as 0, as trec_eval counts it
    codes[~judged] = 2
    searched = np.flatnonzero((codes == -1) & (relevance.n_rankable > 0))
    warn_if_k_exceeds(parsed, relevance.n_rankable[searched])
    per_query, approximation = route.run(options, q, c, relevance, parsed, searched)
    if empty == "zero":
        for v in per_query.values():
            v[(codes == -1) & np.isnan(v)] = 0.0  # kernels give NaN where R = 0
    config = {
        "input": "embeddings with judgements",
        "distance": options.distance,
        "threshold": threshold,
        "n_corpus": int(c.shape[0]),
        ("n_bits" if distance == HAMMING else "dim"): int(c.shape[1]),
        "n_judged": int(relevance.source.indices.size),
        **route.search_settings(options),
        **relevance.counts(),
        **scale_config(scale),
    }
    if query_ids is not None:
        config["query_ids"] = _id_list(query_ids)
    result = EvaluationResult.from_per_query(
        per_query,
        {m.name: m.definition for m in parsed},
        _conventions(threshold, empty, options.distance, relevance, ties),
        skip_codes=codes,
        skip_reasons=SKIP_REASONS,
        config=config,
        approximation=approximation,
        groups=query_groups,
    )
    return with_kept(result, options, q, c, relevance, scale, _id_list(corpus_ids))


def _id_list(ids) -> list | None:
    """``query_ids`` as a list of Python values (None stays None)."""
    if ids is None:
        return None
    return list(np.asarray(ids).tolist() if hasattr(ids, "__array__") else ids)


def _read_relevance(
    qrels, n_queries, n_corpus, query_ids, corpus_ids, threshold, ignore, ignore_same, absent_docs="count"
):
    """(Relevance, which queries the qrels name), every id checked before any work."""
    query_positions = id_positions(query_ids, n_queries, "query_ids")
    corpus_positions = id_positions(corpus_ids, n_corpus, "corpus_ids")
    judgements = read_judgements(qrels, n_queries, n_corpus, query_positions, corpus_positions, threshold, absent_docs)
    _warn_absent(judgements.absent, absent_docs)
    keys = None if ignore_same is None else read_keys(ignore_same, n_queries, n_corpus, reference="corpus")
    lists = None
    if ignore is not None:
        names = ("query", "corpus")
        lists = read_lists(ignore, n_queries, n_corpus, query_positions, corpus_positions, names)
    rules = IgnoreRules.build(n_queries, n_corpus, False, keys, lists)
    return Relevance.build(judgements, n_corpus, rules), judgements.judged


def _warn_absent(absent, mode: str) -> None:
    """One warning line for the judgements of documents that ``corpus_ids`` lacks."""
    if absent is None:
        return
    query, doc = absent.example
    what = (
        "counted as relevant and never retrieved, as trec_eval counts them (absent_docs='count', "
        "--absent-docs on the command line)"
        if mode == "count"
        else "left out: R counts the corpus's documents only (absent_docs='drop')"
    )
    warnings.warn(
        f"{absent.count} judgement(s) name documents that are not in the corpus ids (first {doc!r} of query "
        f"{query!r}): {what}",
        UserWarning,
        stacklevel=4,
    )


def _conventions(threshold: float, empty: str, distance: str, relevance: Relevance, ties=None) -> dict[str, str]:
    own = "corpus entries at equal distance are ranked by corpus row, lower first"
    out = conventions(threshold, empty, route.describe_ties(ties, distance, own))
    if relevance.rules is not None:
        out["relevance"] += "; ignored entries are neither ranked nor counted"
        out["ignore"] = relevance.rules.describe("corpus entries")
    out["distance"] = "hamming: the number of differing bits of two binary codes" if distance == HAMMING else distance
    out["queries without judgements"] = "skipped: NaN, counted in 'skipped' (trec_eval evaluates judged queries only)"
    return out
