"""Collapsed embeddings against spread-out ones: evaluate's time on each, in one run.

    python bench/bench_degenerate.py                 # n = 20,000, d = 128, 100 classes
    python bench/bench_degenerate.py --n 4000 --repeat 3

Rows, same labels (100 classes drawn uniformly), same metrics (evaluate's defaults: precision@1,
r_precision, map@r), leave-one-out:
  random      standard normal vectors;
  identical   every row the same vector (a model collapsed to one point);
  collapsed   one common vector plus noise of standard deviation 1e-6 (collapsed up to noise).
Each time is the best of --repeat runs; the last column is the time over the random row's.
The values are printed so that they can be compared with a float64 reference.
"""

from __future__ import annotations

import argparse
import platform

import faiss
import numpy as np
from _common import best_of, summary_line

import embedeval


def data(kind, n, d, rng):
    if kind == "random":
        return rng.standard_normal((n, d)).astype(np.float32)
    if kind == "identical":
        return np.ones((n, d), dtype=np.float32)
    return (np.ones((n, d)) + 1e-6 * rng.standard_normal((n, d))).astype(np.float32)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    labels = rng.integers(0, args.classes, args.n)
    threads = faiss.omp_get_max_threads()
    print(f"# {platform.machine()}, faiss {faiss.__version__}, numpy {np.__version__}, {threads} threads")
    print("| data | n | d | evaluate s | / random | values |")
    print("|---|---|---|---|---|---|")
    base = None
    for kind in ("random", "identical", "collapsed"):
        x = data(kind, args.n, args.d, rng)
        seconds, result = best_of(args.repeat, lambda x=x: embedeval.evaluate(x, labels))
        base = seconds if base is None else base
        print(
            f"| {kind} | {args.n} | {args.d} | {seconds:.2f} | {seconds / base:.2f} | {summary_line(result.summary)} |"
        )


if __name__ == "__main__":
    main()
