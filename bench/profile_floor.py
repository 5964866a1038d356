"""Where the time of one bench_floor.py regime goes: a cProfile of the call, by own time.

    python bench/profile_floor.py --row 5                # verification at n = 20,000, d = 128
    python bench/profile_floor.py --row 4 --n 10000      # whole-ranking map and mrr
    python bench/profile_floor.py --row 1 --top 30 --kernels numpy

Prints the seconds of the float32 product of the same data (the floor), the call's wall time,
and the functions with the most own time (numpy and BLAS calls appear by name: ``matmul`` is
the product, the rest is the work that follows it). The rows are those of bench_floor.py.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))  # this checkout's embedeval
from _common import timed
from bench_floor import product, rows_of, triangle_product

import embedeval


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--row", type=int, default=5, help="a row of bench_floor.py (1-6)")
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--top", type=int, default=20)
    parser.add_argument("--threads", type=int, default=1, help="n_threads of evaluate (cProfile sees one thread)")
    parser.add_argument("--kernels", choices=["auto", "numpy"], default="auto", help="EMBEDEVAL_KERNELS")
    args = parser.parse_args()
    os.environ["EMBEDEVAL_KERNELS"] = args.kernels
    number, name, make, metrics, keywords, *_ = rows_of(args.n, args.d)[args.row - 1]
    keywords = {**keywords, "n_threads": args.threads}
    x, labels = make()
    floor = triangle_product if number == 5 else product
    t_p, _ = timed(lambda: floor(x))
    embedeval.evaluate(x[:500], labels[:500], metrics=metrics, **keywords)  # imports, compilation
    profile = cProfile.Profile()
    t_e, _ = timed(lambda: profile.runcall(embedeval.evaluate, x, labels, metrics=metrics, **keywords))
    print(f"row {number} ({name}), n = {len(x)}, d = {x.shape[1]}: product {t_p:.2f} s, evaluate {t_e:.2f} s")
    print(f"(profiled: the evaluate time includes cProfile's overhead) ratio {t_e / t_p:.2f}")
    pstats.Stats(profile).sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
