"""Executors: where query blocks run. One signature for all of them:
``executor.run(block_fn, searcher, shared, jobs)`` yields ``(rows, block_fn(searcher, shared, job))``
for each ``(rows, job)`` of ``jobs``, in any order, with a bounded number of blocks in flight.

* :class:`Sequential`: one block after another in this thread (faiss uses its own threads);
* :class:`Threads`: blocks on local threads, each searching with one faiss thread;
* :class:`embedeval._pipeline.cluster.DaskExecutor`: blocks on the workers of a Dask cluster.

On threads: faiss releases the GIL while it searches and numpy while it works on large arrays, so blocks
on separate threads run in parallel. One faiss (OpenMP and OpenBLAS) thread per block instead
of every thread on one block was no slower for the search alone (bench/NOTES.md, 'Figures
moved from the code (stop 52)'), and it also spreads the ranking and metric work, which is single-threaded numpy,
over the cores.

numpy's own BLAS (the deep ranking's products, :mod:`embedeval._search.deep`) must also run one
thread per block: OpenBLAS threads started from several threads at once oversubscribe the cores.
Its thread count can only be changed at run
time through threadpoolctl, a runtime dependency (it may be missing where installed by hand). With it,
:class:`Threads` limits numpy's BLAS to one thread per block while its blocks run
(:func:`one_blas_thread_each`); without it, deep blocks take turns (:func:`deep_turn`), each
using BLAS's own threads, while the other threads go on with faiss blocks.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import faiss

_DEEP_TURN = threading.Lock()  # deep blocks take turns while numpy's BLAS runs on several threads
_LIMITED = {"evaluations": 0}  # evaluations running with numpy's BLAS limited to one thread


def threadpoolctl():
    """The threadpoolctl module, or None where it is not installed."""
    try:
        import threadpoolctl
    except ImportError:
        return None
    return threadpoolctl


def default_threads() -> int:
    """Threads to run blocks or tiles on when the caller names none: faiss's thread count (the
    machine's cores, or ``OMP_NUM_THREADS``), at least 1."""
    return max(1, faiss.omp_get_max_threads())


@contextlib.contextmanager
def one_blas_thread_each(n_workers: int):
    """numpy's BLAS on one thread while ``n_workers`` > 1 blocks run on threads (needs threadpoolctl).

    The limit is process-wide while it lasts (threadpoolctl's), and restored afterwards.
    """
    module = threadpoolctl() if n_workers > 1 else None
    if module is None:
        yield
        return
    with module.threadpool_limits(limits=1, user_api="blas"):
        _LIMITED["evaluations"] += 1
        try:
            yield
        finally:
            _LIMITED["evaluations"] -= 1


def deep_turn():
    """Held around a deep block: nothing where numpy's BLAS runs one thread per block, else a turn
    (one deep block at a time, BLAS using its own threads)."""
    return contextlib.nullcontext() if _LIMITED["evaluations"] else _DEEP_TURN


def run_threads(jobs: Iterable[tuple], work: Callable, n_threads: int) -> Iterator[tuple]:
    """Yield ``(rows, work(job))`` for each ``(rows, job)`` of ``jobs`` as blocks finish.

    At most ``2 * n_threads`` blocks are in flight, so a lazily read input (a memory map)
    is never read far ahead.

    An exception in a block, or a KeyboardInterrupt (Ctrl-C) while waiting for one, is raised
    here at once: the blocks still queued are cancelled, and the ones already running (at most
    ``n_threads``; a faiss search cannot be stopped midway) finish in the background, their
    results discarded. Waiting for them, as leaving a ``with ThreadPoolExecutor`` block does,
    kept Ctrl-C waiting for up to two blocks per thread.
    """
    pool = ThreadPoolExecutor(n_threads, initializer=faiss.omp_set_num_threads, initargs=(1,))
    try:
        running = {}
        for rows, job in jobs:
            running[pool.submit(work, job)] = rows
            if len(running) >= 2 * n_threads:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield running.pop(future), future.result()
        for future in list(running):
            yield running.pop(future), future.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)  # after success every block has finished


def gather(results: Iterable[tuple], per_query: dict, total: int, progress=None) -> dict:
    """Write each finished block's ``(rows, {metric: values})`` into ``per_query``, in whatever
    order blocks finish, and report ``progress(done, total)`` after each; returns ``per_query``."""
    done = 0
    for rows, values in results:
        for name, v in values.items():
            per_query[name][rows] = v
        done += rows.size
        if progress is not None:
            progress(done, total)
    return per_query


class Sequential:
    """Blocks one after another in this thread."""

    n_workers = 1

    def run(self, block_fn: Callable, searcher, shared, jobs: Iterable[tuple]) -> Iterator[tuple]:
        for rows, job in jobs:
            yield rows, block_fn(searcher, shared, job)


class Threads:
    """Blocks on ``n_workers`` local threads (see :func:`run_threads`)."""

    def __init__(self, n_workers: int):
        self.n_workers = n_workers

    def run(self, block_fn: Callable, searcher, shared, jobs: Iterable[tuple]) -> Iterator[tuple]:
        with one_blas_thread_each(self.n_workers):
            yield from run_threads(jobs, lambda job: block_fn(searcher, shared, job), self.n_workers)
