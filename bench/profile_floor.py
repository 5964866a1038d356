"""Where the time of one bench_floor.py regime goes: a cProfile of the call, by own time.

    python bench/profile_floor.py --row 5                # verification at n = 20,000, d = 128
    python bench/profile_floor.py --row 4 --n 10000      # whole-ranking map and mrr
    python bench/profile_floor.py --row 1 --top 30 --kernels numpy
    python bench/profile_floor.py --row 5 --parts        # the verification's steps, tile threads included

Prints the seconds of the float32 product of the same data (the floor), the call's wall time,
and the functions with the most own time (numpy and BLAS calls appear by name: ``matmul`` is
the product, the rest is the work that follows it). The rows are those of bench_floor.py.

cProfile sees only the calling thread, and the verification's tiles run on worker threads
(even with ``--threads 1``), where it shows only the wait (``acquire``). ``--parts`` (row 5)
times the verification's steps instead, in CPU seconds of the thread that runs each (the tile
products, the compiled tile pass, the positive pairs' pass, the table of held positives, the
negatives left to numpy), with the call's own CPU seconds beside them.
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
    parser.add_argument("--parts", action="store_true", help="row 5: the verification's steps, not cProfile")
    args = parser.parse_args()
    os.environ["EMBEDEVAL_KERNELS"] = args.kernels
    if args.parts:
        if args.row != 5:
            sys.exit("--parts times the verification's steps: use it with --row 5")
        return verification_parts(args)
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


def verification_parts(args):
    """CPU seconds of the verification's steps (row 5), each on the thread that runs it."""
    import threading
    import time

    from embedeval._core.compiled import enabled
    from embedeval._setlevel import fused_pass, pair_auroc, pairs, verification

    _, _, make, metrics, keywords, *_ = rows_of(args.n, args.d)[4]
    x, labels = make()
    t_p, _ = timed(lambda: triangle_product(x))
    embedeval.evaluate(x[:2000], labels[:2000], metrics=metrics, n_threads=args.threads)  # kernels loaded
    seconds, lock = {}, threading.Lock()

    def timing(label, function):
        def timed_call(*a, **k):
            start = time.thread_time()
            try:
                return function(*a, **k)
            finally:
                with lock:
                    seconds[label] = seconds.get(label, 0.0) + time.thread_time() - start

        return timed_call

    steps = [
        (pairs.PairSpace, "approx", "tile products (float64 BLAS, all passes)"),
        (verification, "_positive_tile", "positive pairs' tiles (exact distances; products where made)"),
        (pair_auroc.HeldPositives, "__init__", "table of held positives"),
        (pair_auroc.HeldPositives, "neighbours", "negatives left to numpy (neighbours)"),
    ]
    if enabled():
        from embedeval._setlevel import pair_kernels

        steps.append((pair_kernels, "tile_pass", "compiled tile pass"))
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in steps]
    for (owner, attr, label), (_, _, function) in zip(steps, saved, strict=True):
        setattr(owner, attr, timing(label, function))
    if enabled():  # _TileWork took the kernel at import: hand it the timed one
        original_init = fused_pass._TileWork.__init__

        def init(self, *a):
            original_init(self, *a)
            self.kernel = pair_kernels.tile_pass

        fused_pass._TileWork.__init__ = init
    try:
        cpu, wall = time.process_time(), time.perf_counter()
        embedeval.evaluate(x, labels, metrics=metrics, **{**keywords, "n_threads": args.threads})
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    finally:
        for owner, attr, function in saved:
            setattr(owner, attr, function)
        if enabled():
            fused_pass._TileWork.__init__ = original_init
    print(f"row 5 (verification), n = {len(x)}, d = {x.shape[1]}, {args.threads} thread(s), kernels {args.kernels}:")
    print(f"triangle product {t_p:.2f} s; evaluate {wall:.2f} s wall, {cpu:.2f} s CPU (all threads)\n")
    print("| step | CPU s (its threads) |")
    print("|---|---:|")
    for _, _, label in steps:
        print(f"| {label} | {seconds.get(label, 0.0):.2f} |")
    print("\n(the positive pairs' tiles include any products they make, which the first line counts too)")


if __name__ == "__main__":
    main()
