"""Label sets, judgements and ignore rules on a Dask LocalCluster (2 worker processes) equal one process."""

from __future__ import annotations

import numpy as np
import pytest
from test_relevance import EMBEDDING_METRICS, RANKING_METRICS, judged_case, label_case, quietly

import embedeval

distributed = pytest.importorskip("distributed")


@pytest.mark.parametrize("seed", [18, 24, 40, 60])  # leave-one-out with keys and lists, a gallery
def test_labels_and_ignore_rules_on_a_cluster(client, seed):
    case = label_case(seed)
    run = lambda **o: quietly(  # noqa: E731
        embedeval.evaluate, case["x"], case["labels"], metrics=EMBEDDING_METRICS, distance=case["distance"], **o
    )
    local = run(**case["kwargs"])
    remote = run(**case["kwargs"], client=client, shard_size=7, block_size=5)
    for name in EMBEDDING_METRICS:
        np.testing.assert_array_equal(remote.per_query[name], local.per_query[name], err_msg=name)


@pytest.mark.parametrize("seed", [2, 6])
def test_judgements_on_a_cluster(client, seed):
    case = judged_case(seed)
    kwargs = {**case["kwargs"], "distance": case["distance"], "metrics": RANKING_METRICS}
    local = quietly(embedeval.evaluate_retrieval, case["x"], case["ref"], case["qrels"], **kwargs)
    remote = quietly(
        embedeval.evaluate_retrieval, case["x"], case["ref"], case["qrels"], client=client, shard_size=9, **kwargs
    )
    for name in RANKING_METRICS:
        np.testing.assert_array_equal(remote.per_query[name], local.per_query[name], err_msg=name)
