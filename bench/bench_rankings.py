"""Time embedeval.evaluate_rankings against ranx and pytrec_eval on the same ranked lists.

    python bench/bench_rankings.py                    # 100,000 queries x 100 retrieved, ~5 relevant
    python bench/bench_rankings.py --queries 20000

Data: per query 100 distinct retrieved ids (from 10^6) and 5 judged relevant ids with grades
1-3, about 3 of them retrieved. Metrics: precision@10, recall@100, mrr@10, ndcg@10, map@100.

Timed: embedeval on 2-D id arrays (validation included); ranx.evaluate on prebuilt Qrels/Run
after a warm-up call (its numba compilation excluded; building Qrels/Run is shown separately);
pytrec_eval's evaluate on prebuilt dicts (building the evaluator shown separately).
"""

from __future__ import annotations

import argparse

import numpy as np
from _common import timed

import embedeval

METRICS = ["precision@10", "recall@100", "mrr@10", "ndcg@10", "map@100"]
TREC = {"precision@10": "P_10", "recall@100": "recall_100", "ndcg@10": "ndcg_cut_10", "map@100": "map_cut_100"}


def make_data(n_queries, length=100, n_relevant=5, seed=0):
    rng = np.random.default_rng(seed)
    ranked = rng.integers(0, 10**6, size=(n_queries, length))
    while True:  # make ids distinct within each row
        srt = np.sort(ranked, axis=1)
        bad = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
        if not bad.any():
            break
        ranked[bad] = rng.integers(0, 10**6, size=(int(bad.sum()), length))
    relevant = np.empty((n_queries, n_relevant), dtype=np.int64)
    pos = np.argsort(rng.random((n_queries, length)), axis=1)[:, :3]
    relevant[:, :3] = np.take_along_axis(ranked, pos, 1)
    relevant[:, 3:] = 10**6 + rng.integers(0, 10**6, size=(n_queries, n_relevant - 3))  # never retrieved
    grades = rng.integers(1, 4, size=(n_queries, n_relevant))
    return ranked, relevant, grades


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    args = parser.parse_args()
    ranked, relevant, grades = make_data(args.queries)
    t_ours, ours = timed(lambda: embedeval.evaluate_rankings(ranked, relevant, grades=grades, metrics=METRICS))
    rows = [("embedeval (arrays)", t_ours, "", ours.summary)]

    qids = [f"q{i}" for i in range(args.queries)]
    qrels_dict = {
        q: {f"d{d}": int(g) for d, g in zip(rel, gr, strict=True)}
        for q, rel, gr in zip(qids, relevant.tolist(), grades.tolist(), strict=True)
    }
    run_dict = {
        q: {f"d{d}": float(100 - i) for i, d in enumerate(row)} for q, row in zip(qids, ranked.tolist(), strict=True)
    }

    try:
        import ranx

        t_build, (qrels, run) = timed(lambda: (ranx.Qrels.from_dict(qrels_dict), ranx.Run.from_dict(run_dict)))
        small_q, small_r = (
            ranx.Qrels.from_dict(dict(list(qrels_dict.items())[:10])),
            ranx.Run.from_dict(dict(list(run_dict.items())[:10])),
        )
        ranx.evaluate(small_q, small_r, METRICS)  # warm-up: numba compiles here
        t_ranx, scores = timed(lambda: ranx.evaluate(qrels, run, METRICS))
        rows.append(("ranx (after warm-up)", t_ranx, f"Qrels/Run built in {t_build:.1f} s", scores))
    except ImportError:
        print("# ranx not installed: pip install ranx")

    try:
        import pytrec_eval

        measures = set(TREC.values()) | {"recip_rank"}
        t_build, evaluator = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels_dict, measures))
        t_trec, per_q = timed(lambda: evaluator.evaluate(run_dict))
        means = {m: float(np.mean([v[t] for v in per_q.values()])) for m, t in TREC.items()}
        means["mrr@10 (trec: recip_rank, no cutoff)"] = float(np.mean([v["recip_rank"] for v in per_q.values()]))
        rows.append(("pytrec_eval", t_trec, f"evaluator built in {t_build:.1f} s", means))
    except ImportError:
        print("# pytrec_eval not installed: pip install pytrec-eval-terrier")

    print(
        f"# {args.queries} queries x {ranked.shape[1]} retrieved, {relevant.shape[1]} judged relevant each; "
        f"metrics {METRICS}"
    )
    print("| tool | time s | x embedeval | note |")
    print("|---|---|---|---|")
    for name, t, note, _ in rows:
        print(f"| {name} | {t:.2f} | {t / t_ours:.1f} | {note} |")
    for name, _, _, values in rows:
        print(f"#  {name}: " + ", ".join(f"{k}={v:.6f}" for k, v in values.items()))


if __name__ == "__main__":
    main()
