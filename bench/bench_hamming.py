"""Time binary codes evaluated by Hamming distance: embedeval's two tie rules against the usual
hand-written evaluation.

    python bench/bench_hamming.py                    # 1,000 queries x 50,000 and 500,000 64-bit codes
    python bench/bench_hamming.py --sizes 50000 --slow

Data (seeded): 10 classes, each a random 64-bit prototype; every code is its class's prototype
with each bit flipped with probability 0.3, so same-class codes lie about 27 bits apart and
others about 32, and a few thousand references share each distance (deep hashing's usual
regime: CIFAR-10 has 10 classes and a 59,000-code database). Metric: mAP over the whole
database (``map``, DPSH's CalcMap).

Each row runs in its own process, which reports its time (data generation excluded) and its
peak resident memory (``ru_maxrss``, the interpreter, numpy and faiss included):

* embedeval, ``ties=None`` (references at equal distance by index, lower first) and
  ``ties="expected"`` (the exact expected value over the tied orders), on faiss's threads;
* hand-written, vectorised: the full (queries x database) Hamming matrix, a stable argsort per
  row, AP from cumulative sums (the index rule, so it must give embedeval's number), where it
  fits in memory (50,000; at 500,000 its int64 argsort alone would take 4 GB);
* hand-written, one query at a time (``--slow``): DPSH's ``CalcMap`` loop, a quicksort argsort
  per query (its ties fall in whatever order quicksort leaves them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

BITS, CLASSES, FLIP, QUERIES = 64, 10, 0.3, 1000


def make_data(n_db: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    prototypes = rng.random((CLASSES, BITS)) < 0.5

    def codes(n):
        labels = rng.integers(0, CLASSES, n)
        return prototypes[labels] ^ (rng.random((n, BITS)) < FLIP), labels

    database, database_labels = codes(n_db)
    queries, query_labels = codes(QUERIES)
    return queries, query_labels, database, database_labels


def embedeval_map(queries, query_labels, database, database_labels, ties):
    import embedeval

    packed_q = np.packbits(queries, axis=1, bitorder="little")
    packed_db = np.packbits(database, axis=1, bitorder="little")
    result = embedeval.evaluate(
        packed_q,
        query_labels,
        reference=packed_db,
        reference_labels=database_labels,
        distance="hamming",
        metrics=["map"],
        ties=ties,
    )
    return result.summary["map"]


def vectorised_map(queries, query_labels, database, database_labels):
    """The full Hamming matrix, a stable argsort, AP by cumulative sums (ties by index)."""
    q = np.where(queries, 1.0, -1.0).astype(np.float32)
    db = np.where(database, 1.0, -1.0).astype(np.float32)
    hamming = 0.5 * (BITS - q @ db.T)  # exact integers in float32
    order = np.argsort(hamming, axis=1, kind="stable")
    relevant = np.take_along_axis(query_labels[:, None] == database_labels[None, :], order, 1)
    precision = np.cumsum(relevant, axis=1) / np.arange(1, database.shape[0] + 1)
    return float(((precision * relevant).sum(axis=1) / relevant.sum(axis=1)).mean())


def loop_map(queries, query_labels, database, database_labels):
    """DPSH's CalcMap: one query at a time, quicksort argsort, AP over the hits."""
    q = np.where(queries, 1.0, -1.0).astype(np.float32)
    db = np.where(database, 1.0, -1.0).astype(np.float32)
    aps = []
    for i in range(q.shape[0]):
        gnd = (database_labels == query_labels[i]).astype(np.float32)
        hamming = 0.5 * (BITS - db @ q[i])
        gnd = gnd[np.argsort(hamming)]
        total = int(gnd.sum())
        count = np.linspace(1, total, total)
        found = np.flatnonzero(gnd == 1) + 1.0
        aps.append(np.mean(count / found))
    return float(np.mean(aps))


CASES = {
    "embedeval, ties=None (index)": lambda *data: embedeval_map(*data, ties=None),
    'embedeval, ties="expected"': lambda *data: embedeval_map(*data, ties="expected"),
    "hand-written, full matrix + stable argsort": vectorised_map,
    "hand-written, DPSH CalcMap loop": loop_map,
}


def run_case(case: str, n_db: int) -> None:
    """In a child process: time one case and print a JSON line."""
    data = make_data(n_db)
    start = time.perf_counter()
    value = CASES[case](*data)
    seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"case": case, "n_db": n_db, "seconds": seconds, "peak_mb": peak_mb, "map": value}))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50_000, 500_000])
    parser.add_argument("--slow", action="store_true", help="also DPSH's loop (a minute at 500,000)")
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--n-db", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.case:
        run_case(args.case, args.n_db)
        return
    rows = []
    for n_db in args.sizes:
        for case in CASES:
            if case.startswith("hand-written, full") and n_db > 100_000:
                continue  # 1,000 x 500,000 needs 4 GB for the argsort alone
            if case.startswith("hand-written, DPSH") and not args.slow:
                continue
            done = subprocess.run(
                [sys.executable, __file__, "--case", case, "--n-db", str(n_db)], capture_output=True, text=True
            )
            if done.returncode:
                raise RuntimeError(done.stderr)
            rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(f"# {QUERIES} queries, {BITS}-bit codes, {CLASSES} classes; load average {os.getloadavg()[0]:.2f}")
    print("| database | evaluation | time s | peak MB | mAP |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n_db']:,} | {r['case']} | {r['seconds']:.2f} | {r['peak_mb']:.0f} | {r['map']:.6f} |")


if __name__ == "__main__":
    main()
