"""Exact neighbours (embedeval.neighbors) at n = 200,000: time, and peak memory beyond the inputs.

    python bench/bench_neighbors.py                  # 200,000 x 64, leave-one-out, k = 100
    python bench/bench_neighbors.py --n 50000 --d 128 --k 10 --distance cosine

Peak memory is the most resident memory the call added to what the process held before it
(Linux's VmHWM, reset just before the call), next to the size of the inputs, of the output
(16 bytes per neighbour) and of the one queries x references float32 matrix that the search
never makes. Also compared with faiss's own flat search (float32, ties in any order).
"""

from __future__ import annotations

import argparse

import faiss
import numpy as np
from _common import timed

import embedeval


def _status(field):
    """A field of /proc/self/status in MB (VmRSS: resident now; VmHWM: the most since the last reset)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200_000)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--distance", default="euclidean", choices=("euclidean", "cosine", "inner_product"))
    args = parser.parse_args()
    x = np.random.default_rng(0).standard_normal((args.n, args.d), dtype=np.float32)
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the resident memory now
    seconds, found = timed(lambda: embedeval.neighbors(x, k=args.k, distance=args.distance))
    peak = _status("VmHWM") - before
    mb = 2**20
    output = (found.indices.nbytes + found.distances.nbytes) / mb
    print(f"neighbors: n={args.n} d={args.d} k={args.k} {args.distance}, leave-one-out: {seconds:.1f} s")
    print(
        f"peak {peak:.0f} MB beyond the inputs ({x.nbytes / mb:.0f} MB); output {output:.0f} MB; "
        f"a queries x references float32 matrix would be {args.n * args.n * 4 / mb:,.0f} MB"
    )
    index = faiss.IndexFlatL2(args.d) if args.distance == "euclidean" else faiss.IndexFlatIP(args.d)
    y = x if args.distance != "cosine" else x / np.linalg.norm(x, axis=1, keepdims=True)
    index.add(y)
    faiss_seconds, (_, theirs) = timed(lambda: index.search(y, args.k + 1))
    same = np.mean(
        [set(a) == set(b[b != i][: args.k]) for i, (a, b) in enumerate(zip(found.indices, theirs, strict=True))]
    )
    print(f"faiss flat search (float32, k+1 with self): {faiss_seconds:.1f} s; same neighbour sets: {same:.4f}")


if __name__ == "__main__":
    main()
