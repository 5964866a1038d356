"""Evaluation on a Dask LocalCluster (2 worker processes, started here) equals one process."""

from __future__ import annotations

import numpy as np
import pytest

import embedeval

distributed = pytest.importorskip("distributed")

METRICS = ["precision@1", "recall@5", "r_precision", "map@r", "map", "mrr"]


def test_cluster_results_are_identical_to_one_process(client):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((700, 8)).astype(np.float32)
    x[600:] = x[:100]  # duplicates at distance 0
    labels = rng.integers(0, 9, 700)
    local = embedeval.evaluate(x, labels, metrics=METRICS)
    remote = embedeval.evaluate(x, labels, metrics=METRICS, client=client, shard_size=97, block_size=64)
    for name in METRICS:
        np.testing.assert_array_equal(remote.per_query[name], local.per_query[name], err_msg=name)
    assert remote.summary == local.summary


def test_cluster_with_a_separate_gallery_and_cosine(client):
    rng = np.random.default_rng(1)
    q, ref = rng.standard_normal((200, 5)), rng.standard_normal((450, 5))
    ql, rl = rng.integers(0, 4, 200), rng.integers(0, 4, 450)
    kwargs = dict(reference=ref, reference_labels=rl, distance="cosine", metrics=METRICS)
    local = embedeval.evaluate(q, ql, **kwargs)
    remote = embedeval.evaluate(q, ql, client=client, shard_size=100, **kwargs)
    for name in METRICS:
        np.testing.assert_array_equal(remote.per_query[name], local.per_query[name], err_msg=name)
