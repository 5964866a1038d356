"""Peak memory of embedeval.evaluate beyond its inputs, with one label holding half the points.

    python bench/bench_memory.py                   # n = 200,000, d = 64 (the issue's case)
    python bench/bench_memory.py --n 20000         # a quicker look

Half of the points share label 0; the rest are in classes of 100. Every query of label 0 needs
its top R = n/2 - 1 ranked exactly for MAP@R and R-precision, so that class dominates the time.
Peak memory is the process's peak resident set (ru_maxrss) minus its size once the inputs exist.
The deep queries go through the deep ranking (embedeval._search.deep), the others through faiss.
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import numpy as np
from _common import summary_line

import embedeval


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=64)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    half = args.n // 2
    labels = np.concatenate([np.zeros(half, np.int64), 1 + np.arange(args.n - half) // 100])
    centres = rng.standard_normal((labels.max() + 1, args.dim), dtype=np.float32)
    x = centres[labels] + rng.standard_normal((args.n, args.dim), dtype=np.float32)
    before = rss_mb()
    start = time.perf_counter()
    result = embedeval.evaluate(x, labels, metrics=["precision@1", "recall@10", "r_precision", "map@r"])
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"n={args.n} d={args.dim} largest class={half}: inputs {x.nbytes / 2**20:.0f} MB, "
        f"peak beyond inputs {peak - before:.0f} MB, time {seconds:.1f} s (load {os.getloadavg()[0]:.2f})"
    )
    print("  " + summary_line(result.summary))


if __name__ == "__main__":
    main()
