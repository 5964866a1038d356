"""Time compare_systems on 100,000 queries x 10 metrics, piece by piece, and measure the coverage
of its intervals on simulated data (the figures of docs/guides/comparisons.md).

    python bench/bench_compare.py                    # timings: n = 100,000 queries, 10 metrics
    python bench/bench_compare.py --queries 10000    # smaller
    python bench/bench_compare.py --coverage         # coverage of the intervals (simulations)
    python bench/bench_compare.py --draws            # the bootstrap's two ways of drawing weights

Timings, one run each on the same per-query values (uniform in [0, 1]; the numbers do not
depend on the values), with 2,000 bootstrap resamples and 10,000 sign flips / permutations:
  intervals only       2 systems, confidence 0.95 (bootstrap of values, differences, ranks), t-test
  + randomization      2 systems, the default: intervals and the paired randomization test
  t-test, no intervals 2 systems, confidence=None, test="t": the floor
  6 systems, baseline  5 pairs against a baseline, intervals and randomization test
  6 systems, all pairs 15 pairs, randomised Tukey HSD too (1,000 permutations: its cost grows with
                       queries x systems x metrics per permutation)
  3 systems x 5 seeds  intervals by the two-level bootstrap (runs, then queries)
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

sys.path.insert(0, ".")
from embedeval.stats import compare_systems

METRICS = [f"m{i}" for i in range(10)]


def _systems(rng, n_systems, n_queries, runs=1):
    def one():
        return {m: rng.random(n_queries) for m in METRICS}

    return {f"s{i}": [one() for _ in range(runs)] if runs > 1 else one() for i in range(n_systems)}


def timings(n_queries: int) -> None:
    rng = np.random.default_rng(0)
    two, six = _systems(rng, 2, n_queries), _systems(rng, 6, n_queries)
    seeds = _systems(rng, 3, n_queries, runs=5)
    cases = [
        ("intervals only (2 systems, t-test)", lambda: compare_systems(two, test="t")),
        ("default: intervals + randomization (2 systems)", lambda: compare_systems(two)),
        ("t-test, no intervals (2 systems)", lambda: compare_systems(two, test="t", confidence=None)),
        ("6 systems against a baseline", lambda: compare_systems(six)),
        (
            "6 systems, all pairs, Tukey HSD 1,000 permutations",
            lambda: compare_systems(six, pairs="all", n_resamples=1000),
        ),
        ("3 systems x 5 seeds (two-level bootstrap)", lambda: compare_systems(seeds)),
    ]
    print(f"{n_queries} queries x {len(METRICS)} metrics; python {platform.python_version()}, numpy {np.__version__}")
    print("| case | seconds |\n|---|---:|")
    for name, fn in cases:
        start = time.perf_counter()
        fn()
        print(f"| {name} | {time.perf_counter() - start:.2f} |", flush=True)


def _runs(rng, mean, n_runs, q, seed_sd):
    return [{"value": q + mean + rng.normal(0, seed_sd) + rng.normal(0, 0.01, q.size)} for _ in range(n_runs)]


def seed_coverage(rng, n_runs, trials=300, n_queries=100, seed_sd=0.03, level=0.9):
    """(two-level, query-only) coverage of B - A = 0.02 when seeds vary more than queries."""
    hits = np.zeros(2)
    for _ in range(trials):
        q = rng.random(n_queries)
        a, b = _runs(rng, 0.0, n_runs, q, seed_sd), _runs(rng, 0.02, n_runs, q, seed_sd)
        s = int(rng.integers(1 << 30))
        both = compare_systems({"A": a, "B": b}, confidence=level, n_bootstrap=1000, test="t", seed=s).pairs[0]
        flat = {k: np.mean([r["value"] for r in v], axis=0) for k, v in (("A", a), ("B", b))}
        one = compare_systems(flat, confidence=level, n_bootstrap=1000, test="t", seed=s).pairs[0]
        hits += [both["low"] <= 0.02 <= both["high"], one["low"] <= 0.02 <= one["high"]]
    return hits / trials


def query_coverage(rng, n_queries, trials=300, level=0.9):
    """Coverage of a known mean difference 0.03 (skewed per-query differences)."""
    hits = 0
    for _ in range(trials):
        a = rng.random(n_queries)
        d = rng.exponential(0.1, n_queries) - 0.07
        c = compare_systems([a, a + d], confidence=level, n_bootstrap=1000, test="t", seed=int(rng.integers(1 << 30)))
        hits += c.pairs[0]["low"] <= 0.03 <= c.pairs[0]["high"]
    return hits / trials


def coverage() -> None:
    rng = np.random.default_rng(0)
    print("Coverage of 90% intervals, 300 simulated comparisons each (binomial sd about 0.017)")
    print("| data | two-level bootstrap | query-only bootstrap |\n|---|---:|---:|")
    for n in (30, 100, 1000):
        print(f"| one run, {n} queries, skewed differences | - | {query_coverage(rng, n):.3f} |", flush=True)
    for runs in (3, 5, 10, 20):
        two, one = seed_coverage(rng, runs)
        print(f"| {runs} seeds per system, seed sd 0.03, 100 queries | {two:.3f} | {one:.3f} |", flush=True)


def draws(n_queries: int, n_resamples: int = 2000) -> None:
    """Bootstrap count weights for n_resamples x n_queries: numpy's multinomial (what
    embedeval.stats.bootstrap drew before) against indices counted per row (what it draws now)."""
    from embedeval._stats.resampling import query_weights

    rng = np.random.default_rng(0)
    values = rng.random((n_queries, len(METRICS)))
    block = max(1, (1 << 24) // n_queries)
    start = time.perf_counter()
    for done in range(0, n_resamples, block):
        w = rng.multinomial(n_queries, np.full(n_queries, 1 / n_queries), size=min(block, n_resamples - done))
        w @ values
    multinomial = time.perf_counter() - start
    start = time.perf_counter()
    for w in query_weights(n_queries, n_resamples, rng):
        w @ values
    indices = time.perf_counter() - start
    print(f"{n_resamples} bootstrap means of {n_queries} queries x {len(METRICS)} metrics")
    print(f"| draw | seconds |\n|---|---:|\n| multinomial | {multinomial:.2f} |\n| indices counted | {indices:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--coverage", action="store_true")
    parser.add_argument("--draws", action="store_true")
    args = parser.parse_args()
    if args.draws:
        draws(args.queries)
    else:
        coverage() if args.coverage else timings(args.queries)


if __name__ == "__main__":
    main()
