"""Fixtures shared by the test modules."""

from __future__ import annotations

import os

import pytest

# Small TREC files are read by the line reader in normal use (pyarrow's import costs more): the
# tests' small files go through the pyarrow reader too, in this process and in the commands it runs.
os.environ.setdefault("EMBEDEVAL_BATCHES_FROM", "0")


@pytest.fixture(scope="session")
def client():
    """One 2-process Dask LocalCluster for every test that evaluates on a cluster (starting one
    takes seconds); skipped where dask.distributed is not installed."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=40
    )
    with distributed.Client(cluster) as c:
        yield c
    cluster.close()
