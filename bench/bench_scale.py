"""Exact evaluation in one process vs a Dask LocalCluster, and approximate indexes vs exact.

    python bench/bench_scale.py                   # n = 200,000, d = 128, 1000 classes
    python bench/bench_scale.py --n 20000         # a quick look
    python bench/bench_scale.py --exact-only      # the one-process exact row alone

One run each, the same data (Gaussian classes, R ~ n/1000), metrics precision@1, recall@10,
r_precision, map@r. Peak memory is the largest resident set of this process plus its children
(the cluster's workers), sampled every 0.1 s, minus the resident set before the step; the
per-block costs printed last feed the extrapolation in docs/scale.md.
"""

from __future__ import annotations

import argparse
import threading

import numpy as np
import psutil
from _common import timed

import embedeval

METRICS = ["precision@1", "recall@10", "r_precision", "map@r"]


class PeakMemory:
    """Peak resident memory of this process and its children while the block runs, in MB."""

    def __enter__(self):
        self.proc = psutil.Process()
        self.base = self._rss()
        self.peak = self.base
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)
        self.thread.start()
        return self

    def _rss(self):
        total = self.proc.memory_info().rss
        for child in self.proc.children(recursive=True):
            try:
                total += child.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _watch(self):
        while not self.stop.wait(0.1):
            self.peak = max(self.peak, self._rss())

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()
        self.mb = (self.peak - self.base) / 2**20


def make_data(n, d, n_classes, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, n)
    centres = rng.standard_normal((n_classes, d), dtype=np.float32)
    return (centres[labels] + 1.5 * rng.standard_normal((n, d), dtype=np.float32)).astype(np.float32), labels


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=128)
    parser.add_argument("--classes", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--exact-only", action="store_true", help="the one-process exact row alone")
    args = parser.parse_args()
    x, y = make_data(args.n, args.dim, args.classes)
    print(f"# n={args.n} d={args.dim} classes={args.classes}, {psutil.cpu_count()} cores")
    print("| run | time s | peak memory beyond inputs MB | " + " | ".join(METRICS) + " |")
    print("|---|---|---|" + "---|" * len(METRICS))

    def row(name, t, mb, summary):
        print(f"| {name} | {t:.1f} | {mb:.0f} | " + " | ".join(f"{summary[m]:.4f}" for m in METRICS) + " |")

    with PeakMemory() as mem:
        t_exact, exact = timed(lambda: embedeval.evaluate(x, y, metrics=METRICS))
    row("exact, one process", t_exact, mem.mb, exact.summary)
    if args.exact_only:
        return

    try:
        import distributed
    except ImportError:
        print("# dask.distributed not installed: pip install 'embedeval[dask]'")
    else:
        with PeakMemory() as mem:
            cluster = distributed.LocalCluster(
                n_workers=args.workers, threads_per_worker=1, dashboard_address=None, silence_logs=40
            )
            with distributed.Client(cluster) as client:
                t_dask, remote = timed(
                    lambda: embedeval.evaluate(x, y, metrics=METRICS, client=client, shard_size=args.n // args.workers)
                )
            cluster.close()
        same = all(np.array_equal(remote.per_query[m], exact.per_query[m]) for m in METRICS)
        row(f"exact, Dask LocalCluster ({args.workers} workers, {args.workers} shards)", t_dask, mem.mb, remote.summary)
        print(f"#   identical per-query values to the single process: {same}")

    nlist = 1 << round(float(np.log2(4 * np.sqrt(args.n))))
    for factory, params in (("HNSW32", "efSearch=128"), (f"IVF{nlist},Flat", "nprobe=16")):
        with PeakMemory() as mem:
            t, approx = timed(
                lambda f=factory, p=params: embedeval.evaluate(x, y, metrics=METRICS, index=f, index_params=p)
            )
        row(f"approximate {factory} ({params})", t, mem.mb, approx.summary)
        err = ", ".join(f"{m} {approx.summary[m] - exact.summary[m]:+.4f}" for m in METRICS)
        print(
            f"#   neighbour recall {approx.approximation['neighbour_recall']:.4f} on "
            f"{approx.approximation['sample']} queries; error vs exact: {err}"
        )
    per_pair = t_exact / (args.n * args.n * args.dim)
    print(f"# exact cost per (query, reference, dim): {per_pair * 1e12:.3f} ps on this machine")


if __name__ == "__main__":
    main()
