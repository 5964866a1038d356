"""Routing: queries through the deep ranking or faiss's search give identical per-query values.

:func:`embedeval._pipeline.blocks.evaluate_block` sends a block to the deep ranking when it is ranked
deeper than the job's ``deep_from`` or needs the whole ranking. Here every case is evaluated
three ways (never deep; always deep; deep beyond a few ranks) on class labels, label sets, binary
and graded judgements, with every ignore rule, and the per-query values must agree bit for bit
(they are also compared with a float64 full sort in test_relevance.py, and the deep ranking's
ranks themselves in test_deep.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import embedeval
from embedeval._core import budget as _budget
from embedeval._embeddings import labelled as _labelled
from embedeval._embeddings import retrieval as _retrieval
from embedeval._metrics.registry import parse_metrics
from embedeval._pipeline.blocks import block_jobs, evaluate_block
from embedeval._pipeline.executors import Threads, deep_turn, one_blas_thread_each, threadpoolctl
from embedeval._search import FlatSearcher, ShardedSearcher

LABEL_METRICS = ["precision@1", "recall@4", "r_precision", "map@r", "map", "map@5", "mrr", "mrr@2"]
JUDGED_METRICS = [*LABEL_METRICS, "ndcg", "ndcg@5", "dcg@4", "cg@3", "revisited_map", "map_hits@4", "capped_map@3"]


def lattice(rng, n, d):
    return rng.integers(-2, 3, size=(n, d)).astype(np.float32)


def label_case(seed):
    """(queries, references, Relevance, metrics): class labels or label sets, with ignore rules."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 90)), int(rng.integers(1, 4))
    x = lattice(rng, n, d)
    separate = seed % 3 == 1
    ref = lattice(rng, int(rng.integers(20, 90)), d) if separate else None
    n_r = n if ref is None else len(ref)
    if seed % 2:
        labels = np.where(rng.random(n) < 0.5, 0, rng.integers(1, 6, n))
        ref_labels = None if ref is None else rng.integers(0, 4, n_r)
    else:
        labels = [set(rng.choice(5, size=int(rng.integers(1, 3)), replace=False).tolist()) for _ in range(n)]
        ref_labels = None if ref is None else [{int(v)} for v in rng.integers(0, 5, n_r)]
    ignore = {i: rng.choice(n_r, size=2, replace=False).tolist() for i in range(0, n, 3)} if seed % 4 == 1 else None
    keys = (rng.integers(0, 4, n), rng.integers(0, 4, n_r)) if seed % 4 >= 2 else None
    references = x if ref is None else ref
    _, relevance = _labelled.read_relevance(labels, ref_labels, x, references, ignore, keys)
    return x, references, relevance, parse_metrics(LABEL_METRICS, "embeddings")


def judged_case(seed):
    """(queries, corpus, Relevance, metrics): graded judgements (grades -1 to 3), ignore rules."""
    rng = np.random.default_rng(100 + seed)
    n, n_c, d = int(rng.integers(5, 40)), int(rng.integers(20, 90)), int(rng.integers(1, 4))
    q, c = lattice(rng, n, d), lattice(rng, n_c, d)
    qrels = {}
    for i in range(n):
        judged = rng.choice(n_c, size=int(rng.integers(0, 12)), replace=False)
        qrels[i] = {int(j): int(rng.integers(-1, 4)) for j in judged}
        if seed % 2:  # judged documents the corpus lacks: in R and the ideal ranking, never found
            qrels[i].update({n_c + int(j): int(rng.integers(0, 4)) for j in range(int(rng.integers(0, 3)))})
    ignore = {i: rng.choice(n_c, size=3, replace=False).tolist() for i in range(0, n, 2)} if seed % 3 == 1 else None
    keys = (rng.integers(0, 3, n), rng.integers(0, 3, n_c)) if seed % 3 == 2 else None
    threshold = 2 if seed % 4 == 3 else 1
    corpus_ids = list(range(n_c))  # ids, so that the absent documents are absent rather than wrong
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        relevance, _ = _retrieval._read_relevance(qrels, n, n_c, None, corpus_ids, threshold, ignore, keys)
    metrics = JUDGED_METRICS if seed % 2 else [m for m in JUDGED_METRICS if not m.startswith(("ndcg", "dcg", "cg"))]
    return q, c, relevance, parse_metrics(metrics, "rankings")


def values_by_route(queries, references, relevance, metrics, distance, deep_from, searcher=None, block_size=7):
    """Per-query values of every query with blocks routed by ``deep_from`` (None: never deep)."""
    searcher = searcher or FlatSearcher(references, distance)
    rows = np.arange(queries.shape[0])[relevance.n_relevant > 0]
    out = {m.name: np.full(queries.shape[0], np.nan) for m in metrics}
    jobs = block_jobs(queries, relevance, rows, metrics, distance, block_size, 1, deep_from)
    for block_rows, job in jobs:
        for name, v in evaluate_block(searcher, relevance.shared, job).items():
            out[name][block_rows] = v
    return out


def assert_same(a, b):
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product", "cosine"])
def test_labels_give_the_same_values_through_either_route(seed, distance):
    """Class labels and label sets, leave-one-out or a gallery, with ignore lists and keys."""
    x, ref, relevance, metrics = label_case(seed)
    if distance == "cosine":  # no direction for a zero vector
        x, ref = (np.where((v == 0).all(axis=1, keepdims=True), np.float32(1), v) for v in (x, ref))
    faiss_only = values_by_route(x, ref, relevance, metrics, distance, None)
    for deep_from in (0, 3):
        assert_same(values_by_route(x, ref, relevance, metrics, distance, deep_from), faiss_only)


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
def test_judgements_give_the_same_values_through_either_route(seed, distance):
    """Binary and graded judgements (nDCG: every positive grade in exact order), ignore rules."""
    q, c, relevance, metrics = judged_case(seed)
    faiss_only = values_by_route(q, c, relevance, metrics, distance, None)
    for deep_from in (0, 5):
        assert_same(values_by_route(q, c, relevance, metrics, distance, deep_from), faiss_only)


@pytest.mark.parametrize("seed", [1, 2, 5])
def test_sharded_references_in_memory_take_the_deep_ranking_streamed_ones_do_not(seed):
    """In-memory shards offer the deep ranking (the same values); streamed shards keep faiss's search."""
    x, ref, relevance, metrics = label_case(seed)
    kept = ShardedSearcher(ref, "euclidean", 7)
    streamed = ShardedSearcher(ref, "euclidean", 7, stream=True)
    assert kept.ranks_deep and kept.deep_ranker(None) is not None
    assert not streamed.ranks_deep and streamed.deep_ranker(None) is None
    expected = values_by_route(x, ref, relevance, metrics, "euclidean", None)
    assert_same(values_by_route(x, ref, relevance, metrics, "euclidean", 0, searcher=kept), expected)
    assert_same(values_by_route(x, ref, relevance, metrics, "euclidean", 0, searcher=streamed), expected)


def test_a_large_class_through_evaluate_equals_faiss_everywhere():
    """Deeper than the routing depth for real (R about 600): evaluate equals the never-deep route."""
    rng = np.random.default_rng(3)
    n = 1500
    labels = np.where(rng.random(n) < 0.4, 0, rng.integers(1, 40, n))
    x = (rng.standard_normal((41, 8))[labels] + 1.5 * rng.standard_normal((n, 8))).astype(np.float32)
    names = ["precision@1", "recall@10", "r_precision", "map@r", "map", "mrr"]
    assert int(np.bincount(labels).max()) > _budget.DEEP_FROM
    result = embedeval.evaluate(x, labels, metrics=names, n_threads=2)
    _, relevance = _labelled.read_relevance(labels, None, x, x, None, None)
    faiss_only = values_by_route(x, x, relevance, parse_metrics(names, "embeddings"), "euclidean", None, block_size=256)
    for name in names:
        np.testing.assert_array_equal(result.per_query[name], faiss_only[name], err_msg=name)


def test_deep_blocks_take_turns_unless_blas_runs_one_thread_each():
    """With threads, numpy's BLAS is limited to one thread (threadpoolctl) or deep blocks take turns."""
    module = threadpoolctl()
    with one_blas_thread_each(2):
        turn = deep_turn()
        if module is None:
            assert hasattr(turn, "acquire")  # a lock: one deep block at a time
        else:
            assert not hasattr(turn, "acquire")
            blas = [p for p in module.threadpool_info() if p["user_api"] == "blas"]
            assert all(p["num_threads"] == 1 for p in blas)
    assert hasattr(deep_turn(), "acquire")  # outside threaded evaluation: a turn (free when alone)
    assert Threads(2).n_workers == 2


def test_without_threadpoolctl_deep_blocks_take_turns_and_values_are_unchanged(monkeypatch):
    """threadpoolctl is optional: where it cannot be imported, threaded deep blocks take turns
    (a lock) and evaluate gives the same values as on one thread."""
    import sys

    monkeypatch.setitem(sys.modules, "threadpoolctl", None)  # import raises ImportError
    assert threadpoolctl() is None
    with one_blas_thread_each(2):
        assert hasattr(deep_turn(), "acquire")
    rng = np.random.default_rng(5)
    labels = np.where(rng.random(1200) < 0.5, 0, rng.integers(1, 30, 1200))
    x = (rng.standard_normal((31, 6))[labels] + rng.standard_normal((1200, 6))).astype(np.float32)
    names = ["precision@1", "r_precision", "map@r", "map"]
    assert int(np.bincount(labels).max()) > _budget.DEEP_FROM
    threaded = embedeval.evaluate(x, labels, metrics=names, n_threads=2, block_size=64)
    single = embedeval.evaluate(x, labels, metrics=names, n_threads=1)
    for name in names:
        np.testing.assert_array_equal(threaded.per_query[name], single.per_query[name], err_msg=name)
