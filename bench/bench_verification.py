"""Time exact pair verification (all n(n-1)/2 pairs) against the bare distance product.

    python bench/bench_verification.py                    # n = 20,000, d = 128: 2 x 10^8 pairs
    python bench/bench_verification.py --n 5000 --blas-threads 1
    python bench/bench_verification.py --prefetch 0 8 32 128   # CPU s on one thread per setting

Columns, on the same data in one run:
  float32 product   the float32 matrix product of all pairs i < j in blocks of 4096 rows
                    (numpy matmul): the floor of any method that looks at every pair.
  float64 product   the same in float64, the precision the exact binning needs.
  verification      embedeval's pair verification: FNMR at FMR 1e-4, 1e-3, 1e-2, EER and AUROC,
                    exact over every pair, without holding the pairs.
  through evaluate  the same five numbers asked of embedeval.evaluate by name (fnmr@fmr=x, eer,
                    pair_auroc): no search runs, only the pair verification and input checks.
One run each (the machine is shared: expect noise). ``--blas-threads`` sets
OPENBLAS_NUM_THREADS/OMP_NUM_THREADS before numpy loads: on a loaded machine OpenBLAS's
waiting threads slow the element-wise work between the many small products.

``--prefetch A B ...``: instead, CPU seconds of the same verification on one thread (tiles and
BLAS) with the compiled tile pass prefetching the AUROC table that many columns ahead
(``_budget.VERIFICATION_PREFETCH``; 0 = no prefetch), alternating, ``--repeat`` times; every
setting must give the same values.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--blas-threads", type=int, default=None)
    parser.add_argument("--prefetch", type=int, nargs="+", help="compare these prefetch distances")
    parser.add_argument("--repeat", type=int, default=3, help="rounds of --prefetch")
    args = parser.parse_args()
    if args.prefetch:
        args.blas_threads = 1
    if args.blas_threads is not None:
        os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = str(args.blas_threads)

    import numpy as np  # after the thread settings
    from _common import timed

    import embedeval
    from embedeval._setlevel.verification import pair_verification

    rng = np.random.default_rng(0)
    labels = rng.permutation(np.arange(args.n) % args.classes)
    centres = rng.standard_normal((args.classes, args.d), dtype=np.float32)
    x = np.ascontiguousarray(centres[labels] + 1.5 * rng.standard_normal((args.n, args.d), dtype=np.float32))
    if args.prefetch:
        compare_prefetch(x, labels, args.prefetch, args.repeat)
        return
    x64 = x.astype(np.float64)

    def product(a):
        for start in range(0, len(a), 4096):
            a[start : start + 4096] @ a[start:].T

    t32, _ = timed(lambda: product(x))
    t64, _ = timed(lambda: product(x64))
    tv, result = timed(lambda: pair_verification(x, labels, fmr=(1e-4, 1e-3, 1e-2)))
    names = ["fnmr@fmr=1e-4", "fnmr@fmr=1e-3", "fnmr@fmr=1e-2", "eer", "pair_auroc"]
    te, through = timed(lambda: embedeval.evaluate(x, labels, metrics=names))
    assert through.summary["eer"] == result.eer and through.summary["pair_auroc"] == result.auroc
    pairs = args.n * (args.n - 1) // 2
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "default")
    print(f"\n{platform.processor() or platform.machine()}, {os.cpu_count()} cores, BLAS threads: {threads}")
    print(f"n = {args.n}, d = {args.d}, {args.classes} classes: {pairs:,} pairs ({result.n_positive:,} positive)\n")
    print("| step | seconds | x float32 product |")
    print("|---|---:|---:|")
    steps = [("float32 product", t32), ("float64 product", t64), ("verification (exact)", tv)]
    for name, t in [*steps, ("the same through evaluate(metrics=...)", te)]:
        print(f"| {name} | {t:.2f} | {t / t32:.1f} |")
    print()
    values = ", ".join(f"fnmr@fmr={k:g}: {v:.4f}" for k, v in result.fnmr_at_fmr.items())
    print(f"{values}, eer: {result.eer:.4f}, pair_auroc: {result.auroc:.5f}")
    sys.stdout.flush()


def compare_prefetch(x, labels, distances, repeat):
    """CPU seconds of pair_verification on one thread with each prefetch distance, alternating."""
    import time

    import faiss

    from embedeval._core import budget
    from embedeval._core.compiled import enabled
    from embedeval._setlevel.verification import pair_verification

    if not enabled():
        sys.exit("--prefetch times the compiled tile pass: install numba (pip install numba)")
    faiss.omp_set_num_threads(1)  # the tiles' threads
    pair_verification(x[:2000], labels[:2000])  # kernels compiled or loaded
    default = budget.VERIFICATION_PREFETCH
    print(f"n = {len(x)}, d = {x.shape[1]}: CPU seconds of pair_verification on one thread")
    print("| run | " + " | ".join(f"prefetch {a}" for a in distances) + " |")
    print("|---|" + "---:|" * len(distances))
    try:
        for run in range(repeat):
            seconds, values = [], set()
            for a in distances:
                budget.VERIFICATION_PREFETCH = a
                start = time.process_time()
                result = pair_verification(x, labels, fmr=(1e-4, 1e-3, 1e-2))
                seconds.append(time.process_time() - start)
                values.add((result.eer, result.auroc, *result.fnmr_at_fmr.values()))
            assert len(values) == 1, values
            print(f"| {run + 1} | " + " | ".join(f"{t:.2f}" for t in seconds) + " |")
            sys.stdout.flush()
    finally:
        budget.VERIFICATION_PREFETCH = default


if __name__ == "__main__":
    main()
