"""Query blocks on local threads: one block per thread, each searching with one faiss thread.

faiss releases the GIL while it searches and numpy while it works on large arrays, so blocks
on separate threads run in parallel. One faiss (OpenMP and OpenBLAS) thread per block instead
of every thread on one block measured 0 to 8% faster for the search alone (bench_core's b2
against b), and it also spreads the ranking and metric work, which is single-threaded numpy,
over the cores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import faiss


def run_threads(jobs: Iterable[tuple], work: Callable, n_threads: int) -> Iterator[tuple]:
    """Yield ``(rows, work(job))`` for each ``(rows, job)`` of ``jobs`` as blocks finish.

    At most ``2 * n_threads`` blocks are in flight, so a lazily read input (a memory map)
    is never read far ahead. An exception in a block is raised here, once the blocks already
    running have finished.
    """
    with ThreadPoolExecutor(n_threads, initializer=faiss.omp_set_num_threads, initargs=(1,)) as pool:
        running = {}
        for rows, job in jobs:
            running[pool.submit(work, job)] = rows
            if len(running) >= 2 * n_threads:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    yield running.pop(future), future.result()
        for future in list(running):
            yield running.pop(future), future.result()
