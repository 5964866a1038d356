"""Time judged dense retrieval and re-identification against what users write today.

    python bench/bench_retrieval.py                        # both cases at the issue's sizes
    python bench/bench_retrieval.py --case dense --repeat 2
    python bench/bench_retrieval.py --queries 1000 --corpus 20000 --reid-scale 0.2   # a quick look
    python bench/bench_retrieval.py --peak                 # (c)'s peak memory beyond its inputs (Linux)

Dense retrieval (10,000 queries, a 200,000 x 384 corpus, cosine, 1-5 graded judgements per query;
ndcg@10, recall@100, mrr@10, map@100), all on the same L2-normalised float32 vectors:
  (a) faiss     faiss IndexFlatIP built on the corpus, search(k=100): the bare search.
  (b) +pytrec   (a), then the {qid: {docid: score}} run and qrels dicts and pytrec_eval's
                ndcg_cut.10, recall.100, map_cut.100, and recip_rank on the run cut to 10 (the
                pipeline BEIR-style evaluations write; pytrec_eval has no MRR@k).
  (c) embedeval embedeval.evaluate_retrieval on the arrays and the qrels dict: exact ranking
                (float64 order, ties by corpus row), validation and metrics included.
Values: (c) is compared with (b) per query; a query may differ only where faiss's float32 scores
of two documents of different grades are so close that their order is not certain (a tie decides).

Re-identification (3,400 queries, a 16,000-image gallery, 2048-d, 750 identities, 6 cameras;
cmc@1, cmc@5, cmc@10 and mAP, gallery images of the query's identity and camera ignored):
  (d) full matrix  the usual hand-written evaluation: the float32 query x gallery distance matrix
                   by BLAS, a sort of every row, per query the junk removed, CMC and AP.
  (e) embedeval    embedeval.evaluate with ignore_same=(identity, camera) keys.
  (f) CMC only     (e) with cmc@1, cmc@5, cmc@10 alone: no metric needs the whole ranking.
Each time is the best of --repeat runs.

With ``--peak``: (c) alone, once, and the most resident memory it added to what the process held
before the call (the kernel's high-water mark, reset just before: Linux only), in MB.
"""

from __future__ import annotations

import argparse
import platform

import faiss
import numpy as np
from _common import best_of

import embedeval

DENSE_METRICS = ["ndcg@10", "recall@100", "mrr@10", "map@100"]
REID_METRICS = ["cmc@1", "cmc@5", "cmc@10", "map"]


def unit(x):
    return np.ascontiguousarray(x / np.linalg.norm(x, axis=1, keepdims=True), dtype=np.float32)


def dense_data(n_queries, n_corpus, dim, seed=0):
    """A corpus of random directions; each query near the mean of its 1-5 judged documents (grades 1-3)."""
    rng = np.random.default_rng(seed)
    corpus = unit(rng.standard_normal((n_corpus, dim), dtype=np.float32))
    queries = np.empty((n_queries, dim), dtype=np.float32)
    qrels = {}
    for i in range(n_queries):
        judged = rng.choice(n_corpus, size=int(rng.integers(1, 6)), replace=False)
        grades = rng.integers(1, 4, size=judged.size)
        queries[i] = (grades[:, None] * corpus[judged]).sum(axis=0) / grades.sum()
        qrels[f"q{i}"] = {f"d{j}": int(g) for j, g in zip(judged, grades, strict=True)}
    queries = unit(queries + 0.08 * rng.standard_normal(queries.shape, dtype=np.float32))
    return queries, corpus, qrels


def faiss_search(queries, corpus, k=100):
    index = faiss.IndexFlatIP(corpus.shape[1])
    index.add(corpus)
    return index.search(queries, k)


def faiss_and_pytrec(queries, corpus, qrels):
    import pytrec_eval

    scores, idx = faiss_search(queries, corpus)
    run = {
        f"q{i}": {f"d{j}": float(s) for j, s in zip(row, srow, strict=True)}
        for i, (row, srow) in enumerate(zip(idx, scores, strict=True))
    }
    top10 = {q: dict(sorted(docs.items(), key=lambda kv: -kv[1])[:10]) for q, docs in run.items()}
    values = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100", "map_cut.100"}).evaluate(run)
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top10)
    return {
        q: {
            "ndcg@10": values[q]["ndcg_cut_10"],
            "recall@100": values[q]["recall_100"],
            "mrr@10": rr[q]["recip_rank"],
            "map@100": values[q]["map_cut_100"],
        }
        for q in run
    }, (scores, idx)


def near_tie_at_a_judged_document(scores, idx, judged, bound):
    """Whether faiss's top 100 (and the next) hold two scores within ``bound`` around a judged document."""
    close = np.diff(scores) > -bound  # scores descend
    near = np.zeros(scores.size, dtype=bool)
    near[:-1] |= close
    near[1:] |= close
    return bool(np.any(near & np.isin(idx, judged))) or bool(np.any(np.isin(idx[-2:], judged)))


def dense_setup(args):
    """The dense case's data, its query ids, and (c) as a call."""
    queries, corpus, qrels = dense_data(args.queries, args.corpus, args.dim)
    corpus_ids = [f"d{j}" for j in range(args.corpus)]
    query_ids = [f"q{i}" for i in range(args.queries)]

    def ours():
        return embedeval.evaluate_retrieval(
            queries, corpus, qrels, query_ids=query_ids, corpus_ids=corpus_ids, metrics=DENSE_METRICS
        )

    return queries, corpus, qrels, query_ids, ours


def dense_case(args):
    queries, corpus, qrels, query_ids, call = dense_setup(args)
    t_a, _ = best_of(args.repeat, lambda: faiss_search(queries, corpus))
    t_b, (theirs, (scores, idx)) = best_of(args.repeat, lambda: faiss_and_pytrec(queries, corpus, qrels))
    t_c, ours = best_of(args.repeat, call)
    print(f"\nDense retrieval: {args.queries} queries, corpus {args.corpus} x {args.dim}, cosine, 1-5 judgements")
    print("| (a) faiss IndexFlatIP.search k=100 s | (b) faiss + pytrec_eval s | (c) embedeval s | c/a | c/b |")
    print("|---|---|---|---|---|")
    print(f"| {t_a:.2f} | {t_b:.2f} | {t_c:.2f} | {t_c / t_a:.2f} | {t_c / t_b:.2f} |")
    bound = 1.01 * (args.dim + 3) * 2.0**-24 * 2  # twice the float32 error bound of unit vectors
    same = differ_tied = differ_untied = 0
    for i, q in enumerate(query_ids):
        equal = all(abs(ours.per_query[m][i] - theirs[q][m]) <= 1e-9 for m in DENSE_METRICS)
        if equal:
            same += 1
            continue
        judged = [int(d[1:]) for d in qrels[q]]
        if near_tie_at_a_judged_document(scores[i], idx[i], judged, bound):
            differ_tied += 1
        else:
            differ_untied += 1
    print(
        f"#  per query, (c) equals (b) to 1e-9 for {same} of {args.queries}; {differ_tied} differ where faiss's "
        f"float32 scores of a judged document are within {bound:.1e} of a neighbour's (a tie decides); "
        f"{differ_untied} differ otherwise"
    )
    print("#  means, (c): " + ", ".join(f"{m}={v:.4f}" for m, v in ours.summary.items()))
    print("#  means, (b): " + ", ".join(f"{m}={np.mean([theirs[q][m] for q in query_ids]):.4f}" for m in DENSE_METRICS))


def _status(field):
    """A field of /proc/self/status in MB (VmRSS: resident now; VmHWM: the most since the last reset)."""
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith(field + ":")) / 1024


def dense_peak(args):
    _, corpus, _, _, call = dense_setup(args)
    before = _status("VmRSS")
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")  # resets VmHWM to the resident memory now
    call()
    peak, corpus_mb = _status("VmHWM") - before, corpus.nbytes / 2**20
    print(f"\nDense retrieval, (c) once: peak {peak:.0f} MB beyond the inputs (the corpus: {corpus_mb:.0f} MB)")


def reid_data(scale, seed=1):
    rng = np.random.default_rng(seed)
    n_q, n_g, dim, n_ids, n_cams = int(3400 * scale), int(16000 * scale), 2048, max(2, int(750 * scale)), 6
    # identity centres N(0, 0.3^2), images centre + N(0, 1): cmc@1 about 0.98 and mAP about 0.66 at 1/5 scale
    centres = 0.3 * rng.standard_normal((n_ids, dim), dtype=np.float32)
    q_pids, g_pids = rng.integers(0, n_ids, n_q), rng.integers(0, n_ids, n_g)
    q_cams, g_cams = rng.integers(0, n_cams, n_q), rng.integers(0, n_cams, n_g)
    q = centres[q_pids] + rng.standard_normal((n_q, dim), dtype=np.float32)
    g = centres[g_pids] + rng.standard_normal((n_g, dim), dtype=np.float32)
    return q, g, q_pids, g_pids, q_cams, g_cams


def full_matrix_reid(q, g, q_pids, g_pids, q_cams, g_cams, max_rank=10):
    """The hand-written evaluation: float32 distance matrix, every row sorted, junk removed per query."""
    dist = (q * q).sum(axis=1)[:, None] + (g * g).sum(axis=1)[None, :] - 2.0 * (q @ g.T)
    order = np.argsort(dist, axis=1)
    cmc, aps = [], []
    for i in range(len(q)):
        keep = ~((g_pids[order[i]] == q_pids[i]) & (g_cams[order[i]] == q_cams[i]))
        matches = (g_pids[order[i]] == q_pids[i])[keep]
        if not matches.any():
            continue
        cmc.append(np.cumsum(matches)[:max_rank] > 0)
        hits = np.cumsum(matches)
        aps.append((hits / np.arange(1, matches.size + 1))[matches].sum() / matches.sum())
    cmc = np.mean(cmc, axis=0)
    return {"cmc@1": cmc[0], "cmc@5": cmc[4], "cmc@10": cmc[9], "map": float(np.mean(aps))}


def reid_case(args):
    q, g, q_pids, g_pids, q_cams, g_cams = reid_data(args.reid_scale)
    t_d, theirs = best_of(args.repeat, lambda: full_matrix_reid(q, g, q_pids, g_pids, q_cams, g_cams))
    keys = (np.column_stack([q_pids, q_cams]), np.column_stack([g_pids, g_cams]))
    t_e, ours = best_of(
        args.repeat,
        lambda: embedeval.evaluate(
            q, q_pids, reference=g, reference_labels=g_pids, ignore_same=keys, metrics=REID_METRICS
        ),
    )
    cmc = REID_METRICS[:3]
    t_f, _ = best_of(
        args.repeat,
        lambda: embedeval.evaluate(q, q_pids, reference=g, reference_labels=g_pids, ignore_same=keys, metrics=cmc),
    )
    print(f"\nRe-identification: {len(q)} queries, gallery {len(g)} x {q.shape[1]}, same identity and camera ignored")
    print("| (d) full matrix s | (e) embedeval s | (f) embedeval, CMC only s | e/d | f/d |")
    print("|---|---|---|---|---|")
    print(f"| {t_d:.2f} | {t_e:.2f} | {t_f:.2f} | {t_e / t_d:.2f} | {t_f / t_d:.2f} |")
    print("#  (e): " + ", ".join(f"{m}={v:.6f}" for m, v in ours.summary.items()))
    print("#  (d): " + ", ".join(f"{m}={v:.6f}" for m, v in theirs.items()))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", choices=["dense", "reid", "both"], default="both")
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--corpus", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--reid-scale", type=float, default=1.0, help="scale the re-ID sizes (1: the issue's)")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--peak", action="store_true", help="(c)'s peak memory alone (dense; Linux)")
    args = parser.parse_args()
    print(
        f"# {platform.machine()}, {faiss.omp_get_max_threads()} threads, faiss {faiss.__version__}, "
        f"numpy {np.__version__}, embedeval {embedeval.__version__}"
    )
    if args.peak:
        dense_peak(args)
        return
    if args.case in ("dense", "both"):
        dense_case(args)
    if args.case in ("reid", "both"):
        reid_case(args)


if __name__ == "__main__":
    main()
