"""The tied scan's window pass in isolation, on chunks captured from a real call (issue 42, row 6).

    python bench/bench_window_pass.py                   # bench_floor.py's row 6, n = 20,000
    python bench/bench_window_pass.py --chunks 24 --save /tmp/pass.npz
    PYTHONPATH=../other python bench/bench_window_pass.py --compare /tmp/pass.npz   # another checkout

Runs one ``evaluate`` of the row (``ties="expected"``, one thread) and keeps the first
``--chunks`` chunks that the compiled window pass
(:func:`embedeval._search.tied_kernels.window_pass`) receives, with their windows; then builds
each block's bucket tables (``tied_kernels.bucket_tables``, not timed) and times the pass on
each chunk (copied first into a buffer of its shape, so that it is in cache as the product
leaves it; wall seconds, best of ``--repeat`` runs over the chunks), in ns a value. Prints the
share of values within a row's windows' span and the members found; ``--save`` writes the
results (below counts, members in order) and ``--compare`` checks them equal to a saved run
(another checkout's: the captured chunks are the same data).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))  # this checkout's embedeval
from _common import in_cache, save_or_compare
from bench_floor import rows_of

import embedeval


def capture(n, d, k):
    """The first ``k`` chunks of row 6's window pass: [(products, excluded, norms, euclidean, low, high, n_windows)]."""
    from embedeval._search import tied_kernels

    _, _, make, metrics, keywords, *_ = rows_of(n, d)[5]
    x, labels = make()
    kept, original = [], tied_kernels.window_pass

    def window_pass(products, excluded, norms, euclidean, low, high, n_windows, *rest):
        if len(kept) < k:
            kept.append((products.copy(), excluded.copy(), norms.copy(), euclidean, low, high, n_windows))
        return original(products, excluded, norms, euclidean, low, high, n_windows, *rest)

    tied_kernels.window_pass = window_pass
    try:
        embedeval.evaluate(x, labels, metrics=metrics, **{**keywords, "n_threads": 1})
    finally:
        tied_kernels.window_pass = original
    return kept


def run(kept, tables):
    """(seconds, [(below, rows, ks, cols) per chunk]) of the pass over the chunks."""
    from embedeval._search import tied_kernels

    seconds, found = 0.0, []
    for (products, excluded, norms, euclidean, low, high, n_windows), table in zip(kept, tables, strict=True):
        hot = in_cache(products)
        start = time.perf_counter()
        below, rows, ks, cols, count = tied_kernels.window_pass(
            hot, excluded, norms, euclidean, low, high, n_windows, table, 1 << 20
        )
        seconds += time.perf_counter() - start
        found.append((below, rows[:count], ks[:count], cols[:count]))
    return seconds, found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--chunks", type=int, default=48)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--save", help="write the pass's results to this .npz")
    parser.add_argument("--compare", help="check the pass's results equal those of this .npz (another checkout's)")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = "1"
    from embedeval._core import budget
    from embedeval._search import tied_kernels

    kept = capture(args.n, args.d, args.chunks)
    tables, built = [], {}
    for _, _, _, _, low, high, n_windows in kept:  # one table per block, as the scan builds it
        if id(low) not in built:
            n_buckets = int(min(budget.TIED_BUCKETS_PER_WINDOW * low.shape[1], budget.TIED_MAX_BUCKETS))
            built[id(low)] = tied_kernels.bucket_tables(low, high, n_windows, n_buckets)
        tables.append(built[id(low)])
    values = sum(c[0].size for c in kept)
    run(kept, tables)  # compiled or loaded
    seconds = min(run(kept, tables)[0] for _ in range(args.repeat))
    _, found = run(kept, tables)
    flat = [part for chunk in found for part in chunk]
    members = sum(chunk[1].size for chunk in found)
    print(f"row 6, n = {args.n}: {len(kept)} chunks, {values} values, load {os.getloadavg()[0]:.2f}")
    print(f"| window pass | {seconds / values * 1e9:.2f} ns a value | members {members} |")
    save_or_compare(flat, args.save, args.compare)


if __name__ == "__main__":
    main()
