"""Fixtures shared by the test modules."""

from __future__ import annotations

import os
import tempfile

import pytest

# Small TREC files are read by the line reader in normal use (pyarrow's import costs more): the
# tests' small files go through the pyarrow reader too, in this process and in the commands it runs.
os.environ.setdefault("EMBEDEVAL_BATCHES_FROM", "0")
# The compiled kernels' cache in one folder that outlives a checkout, so that a run in a fresh clone
# of the same sources (CI's) loads what an earlier run compiled instead of compiling every kernel
# again; the key is the package's sources (embedeval._core.compiled.kernel_numba), so an edit
# anywhere still compiles again.
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(tempfile.gettempdir(), "embedeval-numba"))


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
