"""The local thread runner: every block once, bounded read-ahead, errors surface."""

from __future__ import annotations

import threading

import pytest

from embedeval._pipeline.executors import run_threads


def test_every_block_once_with_bounded_read_ahead():
    read, finished = [], []
    lock = threading.Lock()

    def jobs():
        for i in range(50):
            with lock:  # blocks read but not yet handed back: never more than 2 per thread
                assert len(read) - len(finished) <= 2 * 3
            read.append(i)
            yield i, i

    for rows, value in run_threads(jobs(), lambda job: job * job, 3):
        assert value == rows * rows
        finished.append(rows)
    assert sorted(finished) == list(range(50))


def test_an_error_in_a_block_is_raised():
    def work(job):
        if job == 7:
            raise ValueError("block 7 failed")
        return job

    with pytest.raises(ValueError, match="block 7 failed"):
        list(run_threads(((i, i) for i in range(20)), work, 2))
