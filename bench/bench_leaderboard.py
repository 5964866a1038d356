"""Calibration of compare_across on simulated leaderboards (the figures of docs/guides/leaderboards.md).

    python bench/bench_leaderboard.py                  # 500 simulations of each scenario
    python bench/bench_leaderboard.py --sims 100       # fewer

Each simulation draws k = 6 systems on N = 8 datasets of n = 50 queries. Dataset t has a true
level mu_t ~ U(0.3, 0.7); query i of it a difficulty q_i ~ N(0, 0.15) shared by every system;
system s's value on query i is mu_t + delta_s + q_i + e_si, e_si ~ N(0, 0.10) independent. The
true value of system s on dataset t (its mean over the population of queries) is mu_t + delta_s.

  null      every delta_s = 0: all six systems are equally good, so each is a "true best"
  one best  delta_0 = 0.02, the others 0: system s0 is the true best (a small margin: about
            0.3 of the per-query noise of a difference, so it loses some datasets)

Measured, at alpha = 0.05 and 95% intervals (2,000 bootstrap resamples, 1,000 sign flips):
  tied for first (Nemenyi) contains every system (null) / s0 (one best), share of simulations
  tied for first (Wilcoxon + Holm over all pairs), the same; and the mean size of each set
  coverage of the per-dataset value intervals: the share of the (simulation, dataset, system)
    intervals that hold mu_t + delta_s
  coverage of the mean-rank intervals (null): the share of the (simulation, system) intervals that
    hold (k + 1) / 2, the expected mean rank of exchangeable systems; two-level (datasets, then
    queries) as compare_across computes them from per-query values, and from the datasets' scores
    alone (one level, as from a table of scores)
  Friedman's and Iman-Davenport's rejection rate at 0.05 (null): their type I error
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

sys.path.insert(0, ".")
from embedeval.stats import compare_across

K, N, N_QUERIES = 6, 8, 50


def simulate(rng, delta):
    mu = rng.uniform(0.3, 0.7, N)
    data = {}
    for t in range(N):
        q = rng.normal(0, 0.15, N_QUERIES)
        data[f"d{t}"] = {f"s{s}": mu[t] + delta[s] + q + rng.normal(0, 0.10, N_QUERIES) for s in range(K)}
    return data, mu


def run(sims: int, seed: int, delta) -> dict:
    rng = np.random.default_rng(seed)
    counts = dict(nemenyi_all=0, nemenyi_s0=0, wilcoxon_all=0, wilcoxon_s0=0, friedman=0, iman=0)
    counts.update(nemenyi_size=0, wilcoxon_size=0)
    value_cover, value_total, rank_cover, rank_total, flat_cover = 0, 0, 0, 0, 0
    for i in range(sims):
        data, mu = simulate(rng, delta)
        c = compare_across(data, n_bootstrap=2000, n_resamples=1000, seed=i)
        w = compare_across(data, post_hoc="wilcoxon", confidence=None, n_resamples=1, seed=i)
        table = {d: {s: float(v.mean()) for s, v in row.items()} for d, row in data.items()}
        flat = compare_across(table, n_bootstrap=2000, seed=i)  # one level: the datasets only
        for name, result in (("nemenyi", c), ("wilcoxon", w)):
            counts[f"{name}_all"] += len(result.tied_for_first) == K
            counts[f"{name}_s0"] += "s0" in result.tied_for_first
            counts[f"{name}_size"] += len(result.tied_for_first)
        counts["friedman"] += c.friedman["p_value"] < 0.05
        counts["iman"] += c.friedman["p_f"] < 0.05
        for t in range(N):
            for s in range(K):
                lo, hi = c.intervals[f"d{t}"][f"s{s}"]
                value_cover += lo <= mu[t] + delta[s] <= hi
                value_total += 1
        for s in range(K):
            r = c.mean_ranks[f"s{s}"]
            rank_cover += r["low"] <= (K + 1) / 2 <= r["high"]
            f = flat.mean_ranks[f"s{s}"]
            flat_cover += f["low"] <= (K + 1) / 2 <= f["high"]
            rank_total += 1
    out = {k: v / sims for k, v in counts.items()}
    out["value_coverage"] = value_cover / value_total
    out["rank_coverage"] = rank_cover / rank_total
    out["flat_rank_coverage"] = flat_cover / rank_total
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=500)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    start = time.perf_counter()
    null = run(args.sims, args.seed, np.zeros(K))
    best = run(args.sims, args.seed + 1, np.array([0.02] + [0.0] * (K - 1)))
    print(f"{args.sims} simulations each, k = {K} systems, N = {N} datasets, n = {N_QUERIES} queries, seed {args.seed}")
    rows = [
        ("tied for first (Nemenyi) holds every system", null["nemenyi_all"], None),
        ("tied for first (Nemenyi) holds s0", null["nemenyi_s0"], best["nemenyi_s0"]),
        ("tied for first (Wilcoxon+Holm) holds every system", null["wilcoxon_all"], None),
        ("tied for first (Wilcoxon+Holm) holds s0", null["wilcoxon_s0"], best["wilcoxon_s0"]),
        ("tied for first (Nemenyi): mean size", null["nemenyi_size"], best["nemenyi_size"]),
        ("tied for first (Wilcoxon+Holm): mean size", null["wilcoxon_size"], best["wilcoxon_size"]),
        ("per-dataset value intervals cover the true value", null["value_coverage"], best["value_coverage"]),
        ("mean-rank intervals cover (k + 1) / 2", null["rank_coverage"], None),
        ("  the same, datasets only (a table of scores)", null["flat_rank_coverage"], None),
        ("Friedman rejects at 0.05", null["friedman"], best["friedman"]),
        ("Iman-Davenport rejects at 0.05", null["iman"], best["iman"]),
    ]
    print(f"{'':52}  {'null':>6}  {'one best':>8}")
    for name, a, b in rows:
        print(f"{name:52}  {a:6.3f}  {'-' if b is None else f'{b:8.3f}':>8}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
