"""The binary search of the compiled deep-ranking pass (where a value falls among a row's sorted
relevant values), as written in :mod:`embedeval._search.deep_kernels`, against two rewrites that
often help elsewhere: a branch-free search (a select instead of a branch per step) and eight
branch-free searches in lockstep (independent loads in flight at once).

    python bench/bench_search.py
    python bench/bench_search.py --evaluate    # whole evaluate calls, tables on and off (slower)
    python bench/bench_search.py --chunk-rows 100000 256   # whole evaluate calls, rows per chunk
    python bench/bench_search.py --partition   # a row's k smallest sorted: partition first, or sort all

Prints nanoseconds per value for rows of 200, 2,000 and 20,000 sorted values (200 rows, 5,000
Gaussian probes each), after checking that the three agree on every probe. Then the kernel's
whole pass (``deep_kernels.place_chunk``) per value, with binary searches only and with each
row's bucket table: 64 rows of 200 relevant values N(300, 30²) and 9,800 other values each,
interleaved with them (N(330, 30²)) or beyond them (N(600, 30²)). With ``--evaluate``:
CPU seconds of embedeval.evaluate on one thread (n = 10,000, d = 128, Gaussian classes) with the
tables and with binary searches only, alternating, three times: R ~ 2,000 (precision@1,
r_precision, map@r) and R ~ 200 whole rankings (map, mrr). With ``--chunk-rows``: the same
calls with the deep ranking's chunks holding at most each given number of rows
(``_budget.DEEP_CHUNK_ROWS``; 100000: every row of a block, as before it existed). Needs numba.
With ``--partition``: ns per value of two ways to the k smallest values of each row sorted
(``deep_count.smallest_sorted``), a partition then a sort of k, or a sort of the row and its
first k, each with numpy's sort and with the compiled radix sort (``sort_kernels``), for rows of
2,000 and 20,000 N(0, 1) values (4 million values in all, best of 3) and k from 5% to 99% of a
row: where they cross sets ``budget.SORT_PARTITION_BELOW`` (numpy) and ``SORT_PARTITION_BELOW_RADIX``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import gaussian_classes

import embedeval
from embedeval._search import deep_kernels
from embedeval._search.primitives import count_at_most

GROUP = 8
N = 10000  # points of the whole evaluate calls (--n)


@numba.njit(inline="always")
def branchy(row, v, low, high):
    """The kernels' own search (:func:`embedeval._search.primitives.count_at_most`): how many of
    ``row[low + 1:high + 1]`` are <= v, plus low."""
    return count_at_most(row, low + 1, high + 1, v) - 1


@numba.njit(inline="always")
def branch_free(row, v, low, high):
    """The same count with a select per step and a fixed number of steps."""
    n = high - low
    if n <= 0:
        return low
    base = low + 1
    while n > 1:
        half = n >> 1
        base = base + half if row[base + half] <= v else base
        n -= half
    return base - 1 + (1 if row[base] <= v else 0)


@numba.njit
def one_at_a_time(rows, probes, free):
    total = 0
    n = rows.shape[1] - 2
    for i in range(rows.shape[0]):
        for k in range(probes.shape[1]):
            if free:
                total += branch_free(rows[i], probes[i, k], 0, n)
            else:
                total += branchy(rows[i], probes[i, k], 0, n)
    return total


@numba.njit
def lockstep(rows, probes):
    total = 0
    n = rows.shape[1] - 2
    base = np.empty(GROUP, np.int64)
    for i in range(rows.shape[0]):
        row = rows[i]
        for k0 in range(0, probes.shape[1] - GROUP + 1, GROUP):
            base[:] = 1
            m = n
            while m > 1:
                half = m >> 1
                for g in range(GROUP):
                    b = base[g]
                    base[g] = b + half if row[b + half] <= probes[i, k0 + g] else b
                m -= half
            for g in range(GROUP):
                total += base[g] - 1 + (1 if row[base[g]] <= probes[i, k0 + g] else 0)
    return total


def main():
    rng = np.random.default_rng(0)
    print("| sorted values per row | kernel's search ns/value | branch-free ns/value | 8 in lockstep ns/value |")
    print("|---|---|---|---|")
    for width in (200, 2000, 20000):
        rows = np.sort(rng.standard_normal((200, width)), axis=1)
        rows = np.concatenate([np.full((200, 1), -np.inf), rows, np.full((200, 1), np.inf)], axis=1)
        probes = rng.standard_normal((200, 5000))
        probes[:, :100] = rows[:, width // 2][:, None]  # ties with a sorted value
        runs = [(one_at_a_time, (rows, probes, False)), (one_at_a_time, (rows, probes, True))]
        runs.append((lockstep, (rows, probes)))
        results = [fn(*a) for fn, a in runs]  # compiled here
        assert len(set(results)) == 1, results
        times = []
        for fn, a in runs:
            best = float("inf")
            for _ in range(3):
                start = time.perf_counter()
                fn(*a)
                best = min(best, time.perf_counter() - start)
            times.append(best / probes.size * 1e9)
        print(f"| {width} | " + " | ".join(f"{t:.1f}" for t in times) + " |")
    place_pass()


def place_pass():
    """place_chunk's ns per value, binary searches only (tables refused) and with tables."""
    rng = np.random.default_rng(0)
    m, j, w = 64, 200, 9800
    padded = np.full((m, j + 2), np.inf)
    padded[:, 0] = -np.inf
    padded[:, 1:-1] = np.sort(rng.normal(300, 30, (m, j)), axis=1)
    print()
    print("| others | binary searches ns/value | bucket tables ns/value |")
    print("|---|---|---|")
    for label, centre in (("interleaved", 330), ("beyond", 600)):
        chunk = rng.normal(centre, 30, (m, w)).astype(np.float32)
        out = np.empty((chunk.size, 3), np.int32)
        times, results = [], []
        for state in (-2, 10**9):  # -2: a row never fills its table; 10**9: it fills it at once
            best = float("inf")
            for _ in range(5):
                counts, below = np.zeros((m, j + 1), np.int64), np.zeros(m, np.int64)
                tables = deep_kernels.new_tables(m, j)
                tables[2][:] = state
                limit = np.full(m, np.inf, np.float32)  # in the chunk's dtype, as the deep pass gives it
                args = (limit, padded, np.full(m, j), np.full(m, np.nan), np.full(m, 1e-4))
                start = time.perf_counter()
                deep_kernels.place_chunk(chunk, 0, 0, *args, counts, below, out, tables)
                best = min(best, time.perf_counter() - start)
            times.append(best / chunk.size * 1e9)
            results.append(counts)
        assert (results[0] == results[1]).all()
        print(f"| {label} | {times[0]:.1f} | {times[1]:.1f} |")


def evaluate_both_ways():
    """CPU seconds of whole evaluate calls with the bucket tables and without (state -2)."""
    filled = deep_kernels.new_tables

    def refused(m, n_nearest):
        tables = filled(m, n_nearest)
        tables[2][:] = -2
        return tables

    makers = (filled, refused)
    _alternate(
        ["bucket tables s", "binary searches only s"],
        lambda j: setattr(deep_kernels, "new_tables", makers[j]),
        lambda: setattr(deep_kernels, "new_tables", filled),
    )


def evaluate_chunk_rows(choices):
    """CPU seconds of whole evaluate calls with each DEEP_CHUNK_ROWS."""
    from embedeval._core import budget

    kept = budget.DEEP_CHUNK_ROWS
    _alternate(
        [f"{c} rows s" for c in choices],
        lambda j: setattr(budget, "DEEP_CHUNK_ROWS", choices[j]),
        lambda: setattr(budget, "DEEP_CHUNK_ROWS", kept),
    )


def _alternate(columns, apply, restore):
    """A table of CPU seconds of whole evaluate calls (n = 10,000, d = 128, one thread) under each
    variant, ``apply(j)`` setting variant j, alternating, three times; R ~ 2000 and R ~ 200 whole
    rankings. Every variant must give the same values; ``restore()`` runs at the end."""
    print("| case | run | " + " | ".join(columns) + " |")
    print("|---|---|" + "---|" * len(columns))
    cases = (("R ~ 2000", 5, ["precision@1", "r_precision", "map@r"]), ("R ~ 200, whole", 50, ["map", "mrr"]))
    try:
        for label, n_classes, metrics in cases:
            x, labels = gaussian_classes(N, 128, n_classes * N // 10000)
            embedeval.evaluate(x[:2000], labels[:2000] % 2, metrics=metrics, n_threads=1)  # kernels loaded
            for run in range(3):
                seconds, values = [], set()
                for j in range(len(columns)):
                    apply(j)
                    start = time.process_time()
                    result = embedeval.evaluate(x, labels, metrics=metrics, n_threads=1)
                    seconds.append(time.process_time() - start)
                    values.add(tuple(result.to_dict()[m] for m in metrics))
                assert len(values) == 1, values
                print(f"| {label} | {run + 1} | " + " | ".join(f"{t:.2f}" for t in seconds) + " |")
    finally:
        restore()


def partition_or_sort():
    """The table of ``--partition`` (module docstring)."""
    from embedeval._search import sort_kernels

    def radix(values, k):
        out = np.empty((len(values), k))
        assert sort_kernels.sorted_rows(np.ascontiguousarray(values), out, np.arange(len(values)))
        return out

    rng = np.random.default_rng(0)
    shares = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 0.99]
    radix(rng.standard_normal((2, 10)), 5)  # compiled
    print("| row length | way | " + " | ".join(f"k = {share:.0%}" for share in shares) + " |")
    print("|---|---|" + "---|" * len(shares))
    ways = {
        "numpy: partition, sort k": lambda v, k: np.sort(np.partition(v, k - 1, axis=1)[:, :k], axis=1),
        "numpy: sort all, first k": lambda v, k: np.sort(v, axis=1)[:, :k],
        "radix: partition, sort k": lambda v, k: radix(np.partition(v, k - 1, axis=1)[:, :k], k),
        "radix: sort all, first k": radix,
    }
    for m in (2000, 20000):
        values = rng.standard_normal((4_000_000 // m, m))
        cells = {way: [] for way in ways}
        for share in shares:
            k = int(share * m)
            best, results = {way: np.inf for way in ways}, []
            for _ in range(3):
                for way, call in ways.items():
                    start = time.perf_counter()
                    results.append(call(values, k))
                    best[way] = min(best[way], time.perf_counter() - start)
            assert all(np.array_equal(results[0], r) for r in results)
            for way in cells:
                cells[way].append(f"{best[way] / values.size * 1e9:.1f}")
        for way, row in cells.items():
            print(f"| {m:,} | {way} | " + " | ".join(row) + " |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--evaluate", action="store_true", help="whole evaluate calls, tables on and off")
    parser.add_argument("--chunk-rows", type=int, nargs="+", help="whole evaluate calls with these DEEP_CHUNK_ROWS")
    parser.add_argument("--partition", action="store_true", help="partition then sort, or sort all (numpy and radix)")
    parser.add_argument("--n", type=int, default=N, help="points of the whole evaluate calls (10,000)")
    args = parser.parse_args()
    N = args.n
    if args.partition:
        partition_or_sort()
    elif args.chunk_rows:
        evaluate_chunk_rows(args.chunk_rows)
    elif args.evaluate:
        evaluate_both_ways()
    else:
        main()
