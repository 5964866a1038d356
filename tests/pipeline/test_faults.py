"""Faults in the middle of an evaluation: an interrupt, a lost Dask worker, a file cut short.

Each ends in the numbers a clean run gives or in a clear error, never in a partial result or a
crash of the process.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import embedeval
from embedeval._pipeline.executors import run_threads


def test_an_interrupt_is_raised_at_once_and_queued_blocks_never_start():
    """Ctrl-C while blocks run: the caller gets it without waiting, and blocks not yet started are dropped."""
    started, finished = [], []
    release = threading.Event()

    def work(job):
        if job == 0:
            raise KeyboardInterrupt  # as if Ctrl-C arrived while waiting for the first block
        started.append(job)
        release.wait(10)  # the other blocks run until the test lets them go
        finished.append(job)
        return job

    with pytest.raises(KeyboardInterrupt):
        for _ in run_threads(((i, i) for i in range(100)), work, 2):
            pass
    assert finished == []  # raised while the running blocks were still running, not after them
    release.set()
    time.sleep(0.2)
    assert set(started) <= {1, 2}  # at most one block per thread had started; the queued one never did


distributed = pytest.importorskip("distributed")


@pytest.fixture
def cluster():
    """Its own 2-process LocalCluster: the test kills one of its workers."""
    local = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None, silence_logs=50
    )
    with distributed.Client(local) as client:
        yield local, client
    local.close()


@pytest.mark.parametrize("victim", [0, 1])
def test_a_worker_killed_mid_evaluation_gives_the_same_numbers_or_a_clear_error(cluster, victim):
    local, client = cluster
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3000, 8)).astype(np.float32)
    labels = rng.integers(0, 9, 3000)
    metrics = ["precision@1", "map@r"]
    expected = embedeval.evaluate(x, labels, metrics=metrics)
    killed = []

    def kill_a_worker_after_the_first_block(done, total):
        if not killed:
            nanny = list(local.workers.values())[victim]
            os.kill(nanny.process.process.pid, signal.SIGKILL)
            killed.append(done)

    try:
        result = embedeval.evaluate(
            x,
            labels,
            metrics=metrics,
            client=client,
            shard_size=700,
            block_size=100,
            progress=kill_a_worker_after_the_first_block,
        )
    except RuntimeError as exc:
        assert "a Dask worker was lost during the evaluation" in str(exc)
        assert "the evaluation stopped without a result" in str(exc)
    else:
        for name in metrics:
            np.testing.assert_array_equal(result.per_query[name], expected.per_query[name], err_msg=name)
    assert killed and killed[0] < len(x)  # the worker died in the middle


@pytest.mark.parametrize("stream_reference", [False, True])
def test_a_memory_mapped_file_cut_short_after_opening_is_a_clear_error(tmp_path, stream_reference):
    """Reading the missing pages would kill the process (SIGBUS); the check names the file instead."""
    path = tmp_path / "emb.npy"
    x = np.random.default_rng(0).standard_normal((2000, 16)).astype(np.float32)
    np.save(path, x)
    mapped = np.load(path, mmap_mode="r")
    os.truncate(path, path.stat().st_size // 2)  # another process cuts the file while it is mapped
    labels = np.arange(2000) % 7
    with pytest.raises(
        ValueError, match=rf"'embeddings' is memory-mapped from {path}, which is now \d+ bytes, shorter"
    ):
        embedeval.evaluate(mapped, labels, stream_reference=stream_reference)
    q = np.zeros((3, 16), np.float32)
    with pytest.raises(ValueError, match=r"'reference' is memory-mapped from .*cut short after it was opened"):
        embedeval.evaluate(q, [0, 1, 2], reference=mapped[100:], reference_labels=labels[100:])
