"""Time the tie-aware kernels ("expected", "optimistic") against the ordinary ones on tied rankings.

    python bench/bench_ties.py                         # 100,000 queries x depth 100, scores in 20 levels
    python bench/bench_ties.py --levels 3 --queries 20000

Data: a (queries, depth) score matrix whose scores take ``--levels`` integer values (tie groups
of about depth / levels items), grades 0-3 with about 8% of items graded, R = graded >= 1 plus
2 judged items never ranked. Metrics: the ranking benchmark's (precision@10, recall@100,
mrr@10, ndcg@10, map@100) and map, map@r, r_precision, hit_rate@10.

Timed (best of ``--repeat``), at three levels:
* kernels: ordinary ``_metrics.per_query_values`` on Hits; expected ``_expected.compute`` on a fresh
  TiedHits each time (its lazily derived arrays are not reused between timings);
* build + kernels: from ranked (scores, grades) arrays, building Hits / TiedHits included;
* rank + build + kernels: from the unsorted score matrix, as a score-matrix evaluation does:
  a stable argsort by score (ordinary, expected) or a lexsort by (score, grade) (optimistic).
Ratios are to the ordinary rule at the same level.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
from _common import best_of

from embedeval._metrics import expected as _expected
from embedeval._metrics import kernels as _kernels
from embedeval._metrics.registry import RANKINGS, parse_metrics, per_query_values
from embedeval._metrics.ties import tie_order, tied_hits_from_dense

METRICS = parse_metrics(
    ["precision@10", "recall@100", "mrr@10", "ndcg@10", "map@100", "map", "map@r", "r_precision", "hit_rate@10"],
    RANKINGS,
)


def make_data(n_queries, depth, levels, seed=0):
    rng = np.random.default_rng(seed)
    scores = -np.sort(-rng.integers(0, levels, (n_queries, depth)).astype(np.float64), axis=1)
    grades = np.where(rng.random((n_queries, depth)) < 0.08, rng.integers(1, 4, (n_queries, depth)), 0).astype(float)
    unranked = rng.integers(1, 4, (n_queries, 2)).astype(float)
    judged = np.concatenate([grades, unranked], axis=1)
    n_relevant = np.count_nonzero(judged >= 1, axis=1)
    ideal = -np.sort(-judged, axis=1)[:, : max(int(np.count_nonzero(judged, axis=1).max()), 1)]
    return scores, grades, n_relevant, ideal


def ordinary_hits(grades, n_relevant, ideal, threshold=1.0):
    q, pos = np.nonzero(grades)  # graded items, by query then rank
    g = grades[q, pos]
    rel = g >= threshold
    n = grades.shape[0]
    return _kernels.Hits(
        ranks=_kernels.pack(q[rel], pos[rel] + 1.0, n),
        n_relevant=n_relevant,
        gain_ranks=_kernels.pack(q, pos + 1.0, n),
        gain_grades=_kernels.pack(q, g, n, fill=0.0),
        ideal=ideal,
    )


def rank(scores, grades, rule=None):
    """Ranked (scores, grades): by score, ties by column index, or by grade for a rule."""
    if rule is None:
        order = np.argsort(-scores, axis=1, kind="stable")
    else:
        order = np.lexsort((-grades if rule == "optimistic" else grades, -scores), axis=1)
    return np.take_along_axis(scores, order, 1), np.take_along_axis(grades, order, 1)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--levels", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    raw_scores, raw_grades, n_relevant, ideal = make_data(args.queries, args.depth, args.levels)
    scores, grades = rank(raw_scores, raw_grades)

    hits = ordinary_hits(grades, n_relevant, ideal)
    tied = tied_hits_from_dense(scores, grades, 1.0, n_relevant, ideal)
    best = ordinary_hits(np.take_along_axis(grades, tie_order(scores, grades, "optimistic"), 1), n_relevant, ideal)
    print(
        f"{args.queries} queries x depth {args.depth}, {args.levels} score levels: mean tie group "
        f"{scores.size / (np.count_nonzero(np.diff(scores, axis=1), axis=1) + 1).sum():.1f} items, "
        f"{tied.query.size} groups holding a graded item, {int((tied.size > 1).sum())} of them tied"
    )

    def expected_path(s, g):
        return _expected.compute(METRICS, tied_hits_from_dense(s, g, 1.0, n_relevant, ideal))

    def ordinary_path(g):
        return per_query_values(METRICS, ordinary_hits(g, n_relevant, ideal))

    timings = {
        "kernels": {
            "ordinary": lambda: per_query_values(METRICS, hits),
            "expected": lambda: _expected.compute(METRICS, dataclasses.replace(tied)),
            "optimistic": lambda: per_query_values(METRICS, best),
        },
        "build + kernels": {
            "ordinary": lambda: ordinary_path(grades),
            "expected": lambda: expected_path(scores, grades),
            "optimistic": lambda: ordinary_path(np.take_along_axis(grades, tie_order(scores, grades, "optimistic"), 1)),
        },
        "rank + build + kernels": {
            "ordinary": lambda: ordinary_path(rank(raw_scores, raw_grades)[1]),
            "expected": lambda: expected_path(*rank(raw_scores, raw_grades)),
            "optimistic": lambda: ordinary_path(rank(raw_scores, raw_grades, "optimistic")[1]),
        },
    }
    for level, paths in timings.items():
        base = None
        for rule, fn in paths.items():
            seconds, values = best_of(args.repeat, fn)
            base = base or seconds
            means = ", ".join(f"{k}={np.nanmean(v):.4f}" for k, v in list(values.items())[:5])
            print(f"{level:24s} {rule:11s} {seconds:7.3f} s  {seconds / base:5.2f}x   {means}")
    per_metric = []
    for m in METRICS:
        t_ord, _ = best_of(args.repeat, lambda m=m: per_query_values([m], hits))
        t_exp, _ = best_of(args.repeat, lambda m=m: _expected.compute([m], dataclasses.replace(tied)))
        per_metric.append(f"{m.name} {t_exp * 1e3:.1f}/{t_ord * 1e3:.1f} ms")
    print("expected / ordinary kernel time, per metric: " + ", ".join(per_metric))


if __name__ == "__main__":
    main()
