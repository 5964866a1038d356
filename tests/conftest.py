"""Fixtures shared by the test modules, and numba's cache kept apart for each version of the kernels."""

from __future__ import annotations

import hashlib
import os
import pathlib
import tempfile

import pytest

# numba's on-disk cache of a compiled function is invalidated when its own source file changes,
# not when a function it inlines from another module does (deep_kernels inlines placed_kernels'
# searches): a suite run after such an edit would test the machine code of the old one. The
# tests' cache lives in a directory named after a hash of every kernel source instead.
_PACKAGE = pathlib.Path(__file__).parents[1] / "embedeval"
_KERNELS = [*sorted(_PACKAGE.rglob("*_kernels.py")), _PACKAGE / "_core" / "prefetch.py"]
_DIGEST = hashlib.sha256(b"".join(p.read_bytes() for p in _KERNELS)).hexdigest()[:16]
# Small TREC files are read by the line reader in normal use (pyarrow's import costs more): the
# tests' small files go through the pyarrow reader too, in this process and in the commands it runs.
os.environ.setdefault("EMBEDEVAL_BATCHES_FROM", "0")
os.environ.setdefault("NUMBA_CACHE_DIR", os.path.join(tempfile.gettempdir(), f"embedeval-numba-{_DIGEST}"))


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
