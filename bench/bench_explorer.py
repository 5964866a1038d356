"""The explorer page of a 100,000-query evaluation: the time to write it against the evaluation's
time, and its size (the goal: under 10% of the evaluation's time, at most 25 MB).

    python bench/bench_explorer.py                  # 100,000 x 32, 1,000 classes, leave-one-out
    python bench/bench_explorer.py --n 20000 --k 50
    python bench/bench_explorer.py --n 20000 --k 5000   # deep: the page holds 100 a query

It prints the page's size, its time and the process's peak resident memory (the evaluation
keeping k neighbours a query dominates it: about 25 bytes a neighbour).

The evaluation keeps each query's top k (``keep_neighbors``, one more exact search); its time
without keeping them is printed too, so the cost of keeping them shows.
"""

from __future__ import annotations

import argparse
import resource
import tempfile
from pathlib import Path

from _common import gaussian_classes, timed

import embedeval
from embedeval.stats import bootstrap

METRICS = ["precision@1", "recall@10", "map@r"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=100_000)
    parser.add_argument("--d", type=int, default=32)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--k", type=int, default=20, help="neighbours kept per query")
    args = parser.parse_args()
    x, labels = gaussian_classes(args.n, args.d, args.classes)
    plain, _ = timed(lambda: embedeval.evaluate(x, labels, metrics=METRICS))
    kept, result = timed(lambda: embedeval.evaluate(x, labels, metrics=METRICS, keep_neighbors=args.k))
    intervals = bootstrap(result)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "explorer.html"
        page, _ = timed(lambda: result.explore(path, intervals=intervals))
        size = path.stat().st_size
    print(f"n={args.n} d={args.d} classes={args.classes} metrics={METRICS} keep_neighbors={args.k}")
    print(f"evaluate: {plain:.1f} s without neighbours, {kept:.1f} s keeping them")
    print(f"explorer page: {page:.2f} s ({100 * page / kept:.1f}% of the evaluation), {size / 2**20:.1f} MB")
    print(f"peak resident memory: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**10:.0f} MB")


if __name__ == "__main__":
    main()
