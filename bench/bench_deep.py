"""Deep rankings (issue 19): embedeval.evaluate against the product floor and other tools, on the same data.

    python bench/bench_deep.py                    # the issue's five rows
    python bench/bench_deep.py --rows 4 5         # some of them (1-based)
    python bench/bench_deep.py --no-faiss         # without (b) (the half-class row's faiss takes a minute)
    python bench/bench_deep.py --pieces           # the measurements behind _budget.DEEP_TIE_COLUMNS
    python bench/bench_deep.py --crossover        # the depths behind _budget.deep_from()
    python bench/bench_deep.py --crossover --sizes 20000x128 40000x64 10000x384 --threads 1

The memory case (n = 200,000, d = 64, one class of 100,000) is bench/bench_memory.py.

Columns of the table, all on one machine in one run (best of --repeat):
  (a) product   the float32 product of all query-reference pairs with numpy, in blocks of 4096
                queries: the work no exact method can skip.
  (b) faiss     faiss IndexFlatL2.search with k = the largest class (no metrics, no ties).
  (c) evaluate  embedeval.evaluate (leave-one-out): faiss's search for blocks ranked no deeper
                than _budget.deep_from(), the deep ranking (embedeval._search.deep) for deeper ones;
                after two small calls that load the compiled kernels (or compile them).
  (d) pml       pytorch-metric-learning's AccuracyCalculator(k="max_bin_count"), when torch and
                pytorch-metric-learning are installed and the pairs fit (not the half-class row).
Metrics: precision@1, recall@1, recall@10, r_precision, map@r. Rows: Gaussian classes (class
centres N(0, 1), points centre + N(0, 1.5^2)); the last row puts half of the points in one class
(centres N(0, 1), points centre + N(0, 1), the rest in classes of 100, as bench_memory.py).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import faiss
import numpy as np
from _common import best_of, faiss_search, gaussian_classes, product, summary_line, timed

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))  # this checkout's embedeval
import embedeval
from embedeval._core import budget as _budget
from embedeval._core import compiled

METRICS = ["precision@1", "recall@1", "recall@10", "r_precision", "map@r"]
# (n, d, number of classes or "half")
ROWS = [(20000, 128, 100), (20000, 512, 100), (60000, 128, 12000), (20000, 128, 10), (40000, 64, "half")]


def half_in_one_class(n, d, seed=0):
    rng = np.random.default_rng(seed)
    half = n // 2
    labels = np.concatenate([np.zeros(half, np.int64), 1 + np.arange(n - half) // 100])
    centres = rng.standard_normal((labels.max() + 1, d), dtype=np.float32)
    return np.ascontiguousarray(centres[labels] + rng.standard_normal((n, d), dtype=np.float32)), labels


def pml_run(x, labels):
    try:
        import torch
        from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator
    except ImportError:
        return None
    calc = AccuracyCalculator(
        include=("precision_at_1", "r_precision", "mean_average_precision_at_r"), k="max_bin_count"
    )
    return calc.get_accuracy(torch.from_numpy(x), torch.from_numpy(labels), ref_includes_query=True)


def table(args):
    threads = faiss.omp_get_max_threads()
    print(f"# {platform.machine()}, {threads} threads, faiss {faiss.__version__}, numpy {np.__version__}")
    print(
        f"# OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, "
        f"threadpoolctl {'installed' if threadpoolctl_installed() else 'absent'}, "
        f"deep from R > {_budget.deep_from()}, load {os.getloadavg()[0]:.2f}"
    )
    print("| data | (a) product s | (b) faiss s | (c) evaluate s | (d) pml s | c/a | c/b | d/c |")
    print("|---|---|---|---|---|---|---|---|")
    for row in args.rows:
        n, d, classes = ROWS[row - 1]
        if classes == "half":
            x, labels = half_in_one_class(n, d)
            name = f"n={n}, d={d}, half of the points in one class"
        else:
            x, labels = gaussian_classes(n, d, classes)
            name = f"n={n}, d={d}, {classes} classes"
        k_max = int(np.bincount(labels).max())
        t_a, _ = best_of(args.repeat, lambda x=x: product(x))
        t_b = float("nan")
        if not args.no_faiss:
            t_b, _ = best_of(args.repeat, lambda x=x, k=k_max: faiss_search(x, k))
        # compiled code loaded (or compiled, from an empty cache) before timing: the rows' own
        # classes, then two classes of 2,000 (the merged path of large classes)
        for size, warm in ((2000, labels[:2000]), (4000, labels[:4000] % 2)):
            embedeval.evaluate(x[:size], warm, metrics=METRICS)
        t_c, result = best_of(args.repeat, lambda x=x, y=labels: embedeval.evaluate(x, y, metrics=METRICS))
        t_d = float("nan")
        if classes != "half" and not args.no_pml:
            t_d, pml = best_of(args.repeat, lambda x=x, y=labels: pml_run(x, y))
            if pml is None:
                t_d = float("nan")
            else:
                for ours, theirs in (("precision@1", "precision_at_1"), ("map@r", "mean_average_precision_at_r")):
                    print(f"#   {ours}: evaluate {result.summary[ours]:.6f}, pml {pml[theirs]:.6f}")
        print(
            f"| {name} | {t_a:.2f} | {t_b:.2f} | {t_c:.2f} | {t_d:.2f} "
            f"| {t_c / t_a:.2f} | {t_c / t_b:.2f} | {t_d / t_c:.2f} |"
        )
        print(f"#  load {os.getloadavg()[0]:.2f}; " + summary_line(result.summary))
        sys.stdout.flush()


def crossover(args):
    """evaluate with every block through faiss's search, then every block through the deep ranking,
    for each (n, d) of --sizes and growing R (where the second wins sets _budget.DEEP_FROM and
    DEEP_FROM_COMPILED), with the kernels of EMBEDEVAL_KERNELS (compiled where numba is installed,
    or the numpy passes)."""
    kernels = "numpy passes" if not compiled.enabled() else "compiled kernels"
    load = os.getloadavg()[0]
    clock = "CPU seconds of this process" if args.threads == 1 else "seconds"
    print(f"# {kernels}; n_threads {args.threads or 'all'}; load {load:.2f}; {clock}, best of {args.repeat}")
    print("| n | d | R | faiss route s | deep route s | deep / faiss |")
    print("|---|---|---|---|---|---|")
    saved = _budget.DEEP_FROM, _budget.DEEP_FROM_COMPILED
    try:
        for size in args.sizes:
            n, d = (int(v) for v in size.lower().split("x"))
            for r in args.depths:
                x, labels = gaussian_classes(n, d, n // r)
                embedeval.evaluate(x[:2000], labels[:2000], metrics=METRICS)  # imports, kernels loaded
                times = []
                for deep_from in (10**9, 0):
                    _budget.DEEP_FROM = _budget.DEEP_FROM_COMPILED = deep_from
                    run = lambda x=x, y=labels: embedeval.evaluate(x, y, metrics=METRICS, n_threads=args.threads)  # noqa: E731
                    clocked = cpu_seconds if args.threads == 1 else (lambda fn: timed(fn)[0])
                    times.append(min(clocked(run) for _ in range(args.repeat)))
                print(f"| {n} | {d} | {r} | {times[0]:.2f} | {times[1]:.2f} | {times[1] / times[0]:.2f} |")
                sys.stdout.flush()
    finally:
        _budget.DEEP_FROM, _budget.DEEP_FROM_COMPILED = saved


def cpu_seconds(fn) -> float:
    """The CPU time of one call of ``fn`` (on one thread, what the call costs whatever else runs)."""
    start = time.process_time()
    fn()
    return time.process_time() - start


def threadpoolctl_installed() -> bool:
    try:
        import threadpoolctl  # noqa: F401
    except ImportError:
        return False
    return True


def pieces(args):
    """The measurements behind the design (single thread, per query row, best of 5)."""

    def per_row(fn, rows, repeat=5):
        best = min(timed_cpu(fn) for _ in range(repeat))
        return best / rows * 1e6

    rng = np.random.default_rng(0)
    n, d, b = 20000, 128, 256
    refs = rng.standard_normal((n, d + 1))
    rows = rng.standard_normal((b, d + 1))
    r32, q32 = refs.astype(np.float32), rows.astype(np.float32)
    t32 = per_row(lambda: q32 @ r32.T, b)
    t64 = per_row(lambda: rows @ refs.T, b)
    print(f"# n={n}, d={d}, {b} rows; microseconds per row, single thread")
    print(f"float32 product: {t32:.1f}; float64 product: {t64:.1f} ({t64 / t32:.2f}x)")
    # near-ties recomputed one row at a time (gathered float64 rows), ~100 per row
    ties = 100
    cols = rng.integers(0, n, (b, ties))
    t_tie = per_row(lambda: [np.einsum("ij,j->i", refs[c], q) for c, q in zip(cols, rows, strict=True)], b) / ties
    extra = (t64 - t32) / n
    print(f"one near-tie in float64: {t_tie * 1e3:.0f} ns = {t_tie / extra:.0f} columns of the float64 product's extra")
    raw = rng.standard_normal((b, 2000))
    values = np.sort(raw, axis=1)
    wide = rng.standard_normal((b, n))
    t_sort = per_row(lambda: np.sort(raw, axis=1), b)
    t_argsort = per_row(lambda: np.argsort(raw, axis=1), b)
    t_part = per_row(lambda: np.partition(wide, 2000, axis=1), b)
    print(
        f"2000 float64: np.sort {t_sort:.1f}, np.argsort {t_argsort:.1f}; np.partition of 20000 at 2000: {t_part:.1f}"
    )
    needles = rng.standard_normal((b, 600))
    unsorted = per_row(lambda: [np.searchsorted(v, x) for v, x in zip(values, needles, strict=True)], b)
    ordered = np.sort(needles, axis=1)
    presorted = per_row(lambda: [np.searchsorted(v, x) for v, x in zip(values, ordered, strict=True)], b)
    print(f"600 places among 2000 sorted values: unsorted {unsorted:.1f}, sorted {presorted:.1f}")
    block = rng.standard_normal((b, n)).astype(np.float32)
    limit = np.quantile(block, 0.03, axis=1).astype(np.float32)[:, None]
    print(f"compare + flatnonzero of a float32 row (3% kept): {per_row(lambda: np.flatnonzero(block <= limit), b):.1f}")


def timed_cpu(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, nargs="+", default=list(range(1, len(ROWS) + 1)))
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--pieces", action="store_true")
    parser.add_argument("--crossover", action="store_true")
    parser.add_argument("--depths", type=int, nargs="+", default=[100, 200, 400, 800], help="--crossover: R")
    parser.add_argument("--sizes", nargs="+", default=["20000x128"], help="--crossover: n x d, e.g. 20000x128 40000x64")
    parser.add_argument("--threads", type=int, default=None, help="--crossover: evaluate's n_threads (and faiss's)")
    parser.add_argument("--no-faiss", action="store_true", help="skip (b) (the half-class row takes a minute)")
    parser.add_argument("--no-pml", action="store_true", help="skip (d)")
    args = parser.parse_args()
    if args.threads:
        faiss.omp_set_num_threads(args.threads)
    if args.pieces:
        pieces(args)
    elif args.crossover:
        crossover(args)
    else:
        table(args)


if __name__ == "__main__":
    main()
