"""Deep rankings (issue 19): the deep ranking against the product floor and other tools, on the same data.

    python bench/bench_deep.py                    # the issue's five rows
    python bench/bench_deep.py --rows 4 5         # some of them (1-based)
    python bench/bench_deep.py --memory           # n = 200,000, d = 64, one class of 100,000: time, peak memory
                                                  # (its 100,000 deep queries through the deep ranking;
                                                  # --all-deep: the others too)
    python bench/bench_deep.py --memory --n 40000 # a quicker look
    python bench/bench_deep.py --pieces           # the measurements behind _budget.DEEP_TIE_COLUMNS

Columns of the table, all on one machine in one run (best of --repeat):
  (a) product   the float32 product of all query-reference pairs with numpy, in blocks of 4096
                queries: the work no exact method can skip.
  (b) faiss     faiss IndexFlatL2.search with k = the largest class (no metrics, no ties).
  (c) deep      embedeval._search.deep.DeepRanker: the exact ranks of every query's relevant
                references within its depth (max(10, R), leave-one-out), in query blocks cut as
                evaluate cuts them, on as many threads as faiss has (numpy's BLAS on one thread
                each, through threadpoolctl when installed), plus the metric kernels: what an
                evaluation whose search is the deep ranking costs.
  (d) pml       pytorch-metric-learning's AccuracyCalculator(k="max_bin_count"), when torch and
                pytorch-metric-learning are installed and the pairs fit (not the half-class row).
  (c') routed   as (c) for queries ranked deeper than --deep-from (256: where the deep ranking
                overtook today's search at n = 20,000, d = 128, between R = 200 and R = 500),
                evaluate's own blocks and search for the others: what an evaluation that uses the
                deep ranking for deep queries would cost.
  (e) evaluate  embedeval.evaluate as it is (its own search), for comparison in the same run.
Metrics: precision@1, recall@1, recall@10, r_precision, map@r. Rows: Gaussian classes (class
centres N(0, 1), points centre + N(0, 1.5^2)); the last row puts half of the points in one class
(centres N(0, 1), points centre + N(0, 1), the rest in classes of 100, as bench_memory.py).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import platform
import resource
import sys
import time

import faiss
import numpy as np
from _common import best_of, summary_line

import embedeval
from embedeval import _budget
from embedeval._blocks import block_jobs, evaluate_block
from embedeval._executors import run_threads
from embedeval._metrics import parse_metrics, per_query_values
from embedeval._relevance import LabelSets
from embedeval._search import FlatSearcher
from embedeval._search.deep import DeepRanker
from embedeval._search.relevant import ClassCodes

METRICS = ["precision@1", "recall@1", "recall@10", "r_precision", "map@r"]
# (n, d, number of classes or "half")
ROWS = [(20000, 128, 100), (20000, 512, 100), (60000, 128, 12000), (20000, 128, 10), (40000, 64, "half")]


def gaussian_classes(n, d, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.permutation(np.arange(n) % n_classes)
    centres = rng.standard_normal((n_classes, d), dtype=np.float32)
    return np.ascontiguousarray(centres[labels] + 1.5 * rng.standard_normal((n, d), dtype=np.float32)), labels


def half_in_one_class(n, d, seed=0):
    rng = np.random.default_rng(seed)
    half = n // 2
    labels = np.concatenate([np.zeros(half, np.int64), 1 + np.arange(n - half) // 100])
    centres = rng.standard_normal((labels.max() + 1, d), dtype=np.float32)
    return np.ascontiguousarray(centres[labels] + rng.standard_normal((n, d), dtype=np.float32)), labels


def product(x):
    for start in range(0, len(x), 4096):
        x[start : start + 4096] @ x.T


def faiss_search(x, k):
    index = faiss.IndexFlatL2(x.shape[1])
    index.add(x)
    return index.search(x, k)


def query_blocks(depth, select=None, most=4096):
    """Blocks of queries (indices), shallowest first, as ``evaluate`` cuts them: rows x depth within
    ``_budget.BLOCK_ENTRIES`` (so a block's ranks and the kernels' arrays stay bounded)."""
    ids = np.arange(depth.size) if select is None else select
    ids = ids[np.argsort(depth[ids], kind="stable")]
    start = 0
    while start < ids.size:
        rows = max(1, min(most, _budget.BLOCK_ENTRIES // int(depth[ids[start]])))
        stop = start + rows
        while stop > start + 1 and (stop - start) * int(depth[ids[min(stop, ids.size) - 1]]) > _budget.BLOCK_ENTRIES:
            stop = start + (stop - start) // 2
        yield ids[start:stop]
        start = stop


def deep_evaluation(x, labels, threads, **options):
    """Per-query metric values of every query, leave-one-out, with the deep ranking as the search."""
    codes = np.unique(labels, return_inverse=True)[1]
    ranker = DeepRanker(x, True, ClassCodes(codes, codes), **options)
    metrics = parse_metrics(METRICS, "embeddings")
    depth = np.maximum(np.bincount(codes)[codes] - 1, 10)
    values = {m.name: np.empty(len(x)) for m in metrics}

    def work(rows):
        hits = ranker.hits(x[rows], rows, depth[rows], rows[:, None])
        return per_query_values(metrics, hits)

    with blas_threads(1 if threads > 1 else None):
        for rows, out in run_threads(((b, b) for b in query_blocks(depth)), work, threads):
            for name, v in out.items():
                values[name][rows] = v
    return {name: float(np.nanmean(v)) for name, v in values.items()}


def blas_threads(limit):
    """numpy's BLAS limited to ``limit`` threads (each query block runs on its own thread).

    OpenBLAS threads inside threads that each call BLAS oversubscribe the cores: measured 6x
    slower on 2 busy cores. Needs threadpoolctl; without it, set OPENBLAS_NUM_THREADS=1.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=limit, user_api="blas") if limit else contextlib.nullcontext()


def routed_evaluation(x, labels, threads, deep_from):
    """As :func:`deep_evaluation`, but queries ranked no deeper than ``deep_from`` take today's path.

    Today's path: the query blocks and ``evaluate_block`` of embedeval.evaluate, with its exact
    FlatSearcher (faiss candidates, float64 near-ties; float64 distances to every reference
    beyond an eighth of them). This is what an evaluation that uses the deep ranking only for
    deep queries costs.
    """
    codes = np.unique(labels, return_inverse=True)[1]
    metrics = parse_metrics(METRICS, "embeddings")
    depth = np.maximum(np.bincount(codes)[codes] - 1, 10)
    deep = depth > deep_from
    sets = LabelSets.from_labels(labels)
    values = {m.name: np.empty(len(x)) for m in metrics}
    ranker = DeepRanker(x, True, ClassCodes(codes, codes)) if deep.any() else None
    searcher = FlatSearcher(x, "euclidean") if not deep.all() else None

    def work(job):
        if isinstance(job, np.ndarray):  # a block of deep queries
            return per_query_values(metrics, ranker.hits(x[job], job, depth[job], job[:, None]))
        return evaluate_block(searcher, sets.reference_codes, job)

    shallow = np.flatnonzero(~deep)
    jobs = list(block_jobs(x, sets, shallow, metrics, "euclidean", None, threads)) if shallow.size else []
    jobs += [(b, b) for b in query_blocks(depth, np.flatnonzero(deep))]
    with blas_threads(1 if threads > 1 else None):
        for rows, out in run_threads(iter(jobs), work, threads):
            for name, v in out.items():
                values[name][rows] = v
    return {name: float(np.nanmean(v)) for name, v in values.items()}


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
    print(f"# OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}, load {os.getloadavg()[0]:.2f}")
    print(
        "| data | (a) product s | (b) faiss s | (c) deep s | (c') routed s | (d) pml s | (e) evaluate s "
        "| c/a | c'/a | e/a |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
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
        t_c, summary = best_of(args.repeat, lambda x=x, y=labels: deep_evaluation(x, y, threads))
        deep_from = args.deep_from
        t_r, routed = best_of(args.repeat, lambda x=x, y=labels, f=deep_from: routed_evaluation(x, y, threads, f))
        t_d = float("nan")
        if classes != "half" and not args.no_pml:
            t_d, pml = best_of(args.repeat, lambda x=x, y=labels: pml_run(x, y))
            if pml is None:
                t_d = float("nan")
            else:
                for ours, theirs in (("precision@1", "precision_at_1"), ("map@r", "mean_average_precision_at_r")):
                    print(f"#   {ours}: deep {summary[ours]:.6f}, pml {pml[theirs]:.6f}")
        t_e = float("nan")
        if not args.no_evaluate:
            t_e, result = best_of(args.repeat, lambda x=x, y=labels: embedeval.evaluate(x, y, metrics=METRICS))
            for m in METRICS:
                for other, theirs in (("deep", summary[m]), ("routed", routed[m])):
                    if abs(result.summary[m] - theirs) > 1e-9:
                        print(f"#   MISMATCH {m}: {other} {theirs!r}, evaluate {result.summary[m]!r}")
        print(
            f"| {name} | {t_a:.2f} | {t_b:.2f} | {t_c:.2f} | {t_r:.2f} | {t_d:.2f} | {t_e:.2f} "
            f"| {t_c / t_a:.2f} | {t_r / t_a:.2f} | {t_e / t_a:.2f} |"
        )
        print("#  " + summary_line(summary))
        sys.stdout.flush()


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def memory(args):
    """bench_memory.py's case through the deep ranking: time and peak memory beyond the inputs."""
    x, labels = half_in_one_class(args.n, 64)
    before = rss_mb()
    start = time.perf_counter()
    threads = faiss.omp_get_max_threads()
    if args.all_deep:
        summary = deep_evaluation(x, labels, threads)
    else:  # the deep ranking for the class of n / 2, today's search for the classes of 100
        summary = routed_evaluation(x, labels, threads, args.deep_from)
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"{'all queries' if args.all_deep else 'deep queries'} through the deep ranking, "
        f"n={args.n} d=64 largest class={args.n // 2}: inputs {x.nbytes / 2**20:.0f} MB, "
        f"peak beyond inputs {peak - before:.0f} MB, time {seconds:.1f} s (load {os.getloadavg()[0]:.2f})"
    )
    print("  " + summary_line(summary))


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
    parser.add_argument("--memory", action="store_true")
    parser.add_argument("--pieces", action="store_true")
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--all-deep", action="store_true", help="--memory: every query through the deep ranking")
    parser.add_argument("--no-faiss", action="store_true", help="skip (b) (the half-class row takes a minute)")
    parser.add_argument("--no-pml", action="store_true", help="skip (d)")
    parser.add_argument("--no-evaluate", action="store_true", help="skip (e)")
    parser.add_argument(
        "--deep-from", type=int, default=256, help="(c'): the depth beyond which the deep ranking is used"
    )
    args = parser.parse_args()
    if args.pieces:
        pieces(args)
    elif args.memory:
        memory(args)
    else:
        table(args)


if __name__ == "__main__":
    main()
