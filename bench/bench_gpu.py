"""Time evaluate(device="gpu") against device="cpu" and bare faiss GPU search, with the card's floor.

    python bench/bench_gpu.py                     # every case (a machine with a GPU and a faiss GPU build)
    python bench/bench_gpu.py --cases dense loo200k --budget 300
    python bench/bench_gpu.py --json out.json     # also the table as JSON

Cases (each skipped once --budget seconds have passed, so a short lease still gets the first ones):
  peak      the card's float32 matrix-product rate (torch, TF32 off; 8192^3, best of 5): the floor
  dense     judged dense retrieval: 10,000 queries, a 1,000,000 x 384 corpus, cosine, 1-5 graded
            judgements per query, ndcg@10, recall@100, mrr@10, map@100 (bench_retrieval.py's data)
  loo200k   n = 200,000 x 128, 100 classes, leave-one-out, precision@1, recall@1, recall@10
  musgrave  the same data, precision@1, recall@10, r_precision, map@r (R ~ 2,000: the deep ranking)
  loo1m     n = 1,000,000 x 128, 100 classes, leave-one-out, precision@1, recall@10 (the CPU row
            times 20,000 queries against the 1,000,000 and scales by the query count)

Each row: embedeval on the GPU, embedeval on the CPU (all cores), faiss's GPU flat search alone at
the depth the metrics need, and the floor = 2 n_q n_r d / peak. Values of the GPU and CPU runs are
compared per query (identical, or the row says how many differ).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import faiss
import numpy as np
from _common import gaussian_classes, timed
from bench_retrieval import DENSE_METRICS, dense_data

import embedeval

CASES = ["peak", "dense", "loo200k", "musgrave", "loo1m"]


def gpu_peak_tflops():
    """The card's float32 product rate in TFLOP/s (torch, TF32 off), or None without torch."""
    try:
        import torch
    except ImportError:
        return None
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(8192, 8192, device="cuda")
    b = torch.randn(8192, 8192, device="cuda")
    a @ b
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        a @ b
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return 2 * 8192**3 / best / 1e12


def bare_gpu_search(queries, references, k, inner_product):
    """faiss's GPU flat search alone (index built and searched), k capped at its 2048."""
    res = faiss.StandardGpuResources()
    index = faiss.IndexFlatIP(references.shape[1]) if inner_product else faiss.IndexFlatL2(references.shape[1])
    gpu = faiss.index_cpu_to_gpu(res, 0, index)
    gpu.add(references)
    return gpu.search(queries, min(k, 2048))


def differing(a, b):
    return {
        m: int((~np.isclose(a.per_query[m], b.per_query[m], rtol=0, atol=0, equal_nan=True)).sum()) for m in a.per_query
    }


def row(name, n_q, n_r, d, peak, gpu_s, cpu_s, faiss_s, diff, note=""):
    floor = 2 * n_q * n_r * d / (peak * 1e12) if peak else float("nan")
    return {
        "case": name, "queries": n_q, "references": n_r, "d": d, "gpu_s": gpu_s, "cpu_s": cpu_s,
        "faiss_gpu_s": faiss_s, "floor_s": floor, "gpu_over_floor": gpu_s / floor if peak else None,
        "cpu_over_gpu": cpu_s / gpu_s if cpu_s else None, "differing": diff, "note": note,
    }  # fmt: skip


def case_dense(peak):
    queries, corpus, qrels = dense_data(10_000, 1_000_000, 384)
    ids = dict(query_ids=[f"q{i}" for i in range(len(queries))], corpus_ids=[f"d{j}" for j in range(len(corpus))])
    args = (queries, corpus, qrels)
    kw = dict(metrics=DENSE_METRICS, distance="cosine", **ids)
    faiss_s, _ = timed(lambda: bare_gpu_search(queries, corpus, 100, True))
    gpu_s, on_gpu = timed(lambda: embedeval.evaluate_retrieval(*args, device="gpu", **kw))
    cpu_s, on_cpu = timed(lambda: embedeval.evaluate_retrieval(*args, **kw))
    return row("dense", len(queries), len(corpus), 384, peak, gpu_s, cpu_s, faiss_s, differing(on_gpu, on_cpu))


def case_loo(name, n, metrics, k, peak, cpu_queries=None):
    x, labels = gaussian_classes(n, 128, 100)
    faiss_s, _ = timed(lambda: bare_gpu_search(x, x, k + 1, False))
    gpu_s, on_gpu = timed(lambda: embedeval.evaluate(x, labels, metrics=metrics, device="gpu"))
    if cpu_queries is None:
        cpu_s, on_cpu = timed(lambda: embedeval.evaluate(x, labels, metrics=metrics))
        diff, note = differing(on_gpu, on_cpu), ""
    else:  # the CPU on a slice of the queries against every reference, scaled by the query count
        part = np.arange(cpu_queries)
        cpu_part, on_cpu = timed(
            lambda: embedeval.evaluate(x[part], labels[part], reference=x, reference_labels=labels, metrics=metrics,
                                       query_in_reference=part)
        )  # fmt: skip
        cpu_s = cpu_part * n / cpu_queries
        diff = {m: int((on_gpu.per_query[m][part] != on_cpu.per_query[m]).sum()) for m in metrics}
        note = f"CPU: {cpu_queries} queries timed ({cpu_part:.1f} s), scaled by {n // cpu_queries}"
    return row(name, n, n, 128, peak, gpu_s, cpu_s, faiss_s, diff, note)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", choices=CASES, default=CASES)
    parser.add_argument("--budget", type=float, default=float("inf"), help="skip cases started after this many s")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args(argv)
    if faiss.get_num_gpus() == 0:
        raise SystemExit("bench_gpu.py needs a faiss GPU build and a visible GPU; faiss sees none")
    start, rows = time.perf_counter(), []
    peak = gpu_peak_tflops() if "peak" in args.cases else None
    print(f"{platform.node()}: faiss {faiss.__version__}, {faiss.get_num_gpus()} GPU(s), {os.cpu_count()} CPUs, "
          f"float32 product peak {peak and round(peak, 1)} TFLOP/s", flush=True)  # fmt: skip
    plan = {
        "dense": lambda: case_dense(peak),
        "loo200k": lambda: case_loo("loo200k", 200_000, ["precision@1", "recall@1", "recall@10"], 10, peak),
        "musgrave": lambda: case_loo("musgrave", 200_000, ["precision@1", "recall@10", "r_precision", "map@r"],
                                     2048, peak),
        "loo1m": lambda: case_loo("loo1m", 1_000_000, ["precision@1", "recall@10"], 10, peak, cpu_queries=20_000),
    }  # fmt: skip
    for name in [c for c in args.cases if c in plan]:
        if time.perf_counter() - start > args.budget:
            print(f"{name}: skipped (budget)", flush=True)
            continue
        rows.append(plan[name]())
        print(json.dumps(rows[-1]), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"peak_tflops": peak, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
