"""Time embedeval.evaluate against its physical floor and against other tools, on the same data.

    python bench/bench_core.py                     # n = 20,000 and 50,000, d = 128, 100 classes
    python bench/bench_core.py --sizes 20000 --repeat 3

Columns, all on one machine in one run:
  (a) blas      the bare float32 product of all query-reference pairs, in blocks of 4096 queries
                (numpy matmul): the work no exact method can skip.
  (b) faiss     faiss IndexFlatL2.search with k = the largest class size (no metrics, no ties).
  (b2) threaded the same search split the way embedeval splits it: query blocks on as many threads
                as faiss has, each block searched with one faiss thread (c/b2 is the price of
                exactness and metrics alone).
  (c) embedeval embedeval.evaluate with precision@1, recall@1/5/10, r_precision, map@r.
  (d) pml       pytorch-metric-learning's AccuracyCalculator(k="max_bin_count") with the same
                metrics, when torch and pytorch-metric-learning are installed.
Each time is the best of --repeat runs.
"""

from __future__ import annotations

import argparse
import platform

import faiss
import numpy as np
from _common import best_of, faiss_search, gaussian_classes, product, summary_line

import embedeval
from embedeval._pipeline.executors import run_threads

METRICS = ["precision@1", "recall@1", "recall@5", "recall@10", "r_precision", "map@r"]


def faiss_threaded(x, k):
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    threads = faiss.omp_get_max_threads()
    rows = min(4096, -(-len(x) // (4 * threads)))
    blocks = ((s, x[s : s + rows]) for s in range(0, len(x), rows))
    return list(run_threads(blocks, lambda q: index.search(q, k), threads))


def pml_calculator():
    try:
        from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator
    except ImportError:
        return None
    return AccuracyCalculator(
        include=("precision_at_1", "r_precision", "mean_average_precision_at_r"), k="max_bin_count"
    )


def pml_run(calc, x, labels):
    import torch

    return calc.get_accuracy(torch.from_numpy(x), torch.from_numpy(labels), ref_includes_query=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[20000, 50000])
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    print(
        f"# {platform.machine()}, {faiss.omp_get_max_threads()} threads, "
        f"faiss {faiss.__version__}, numpy {np.__version__}"
    )
    calc = pml_calculator()
    print(
        "| n | d | classes | (a) blas s | (b) faiss k=max class s | (b2) same, threaded blocks s | (c) embedeval s "
        "| (d) pml s | c/a | c/b | c/b2 | d/c |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for n in args.sizes:
        x, labels = gaussian_classes(n, args.dim, args.classes)
        k_max = int(np.bincount(labels).max())
        t_a, _ = best_of(args.repeat, lambda x=x: product(x))
        t_b, _ = best_of(args.repeat, lambda x=x, k=k_max: faiss_search(x, k))
        t_b2, _ = best_of(args.repeat, lambda x=x, k=k_max: faiss_threaded(x, k))
        t_c, result = best_of(args.repeat, lambda x=x, y=labels: embedeval.evaluate(x, y, metrics=METRICS))
        t_d = float("nan")
        if calc is not None:
            t_d, pml = best_of(args.repeat, lambda x=x, y=labels: pml_run(calc, x, y))
            for ours, theirs in (("precision@1", "precision_at_1"), ("map@r", "mean_average_precision_at_r")):
                print(f"#   n={n} {ours}: embedeval {result.summary[ours]:.6f}, pml {pml[theirs]:.6f}")
        print(
            f"| {n} | {args.dim} | {args.classes} | {t_a:.2f} | {t_b:.2f} | {t_b2:.2f} | {t_c:.2f} | {t_d:.2f} "
            f"| {t_c / t_a:.2f} | {t_c / t_b:.2f} | {t_c / t_b2:.2f} | {t_d / t_c:.2f} |"
        )
        print("#  " + summary_line(result.summary))


if __name__ == "__main__":
    main()
