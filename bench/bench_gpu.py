"""Time evaluate(device="gpu") against pytorch-metric-learning and a bare GPU search, on one card.

    python bench/bench_gpu.py                       # every case (a machine with a CUDA card)
    python bench/bench_gpu.py --cases r200 r2000 --budget 300
    python bench/bench_gpu.py --small               # every case on 4,000 rows: torch's CPU device without a card
    python bench/bench_gpu.py --json out.json       # also the rows as JSON

Needs torch (the card's build) and pytorch-metric-learning (pure Python: carry its wheel to the
card's machine and ``pip install --no-deps`` it); faiss's GPU build is not needed. PML's kNN is
faiss's GPU search where faiss has one, else its torch ``CustomKNN`` on the card (the row says
which). Cases (each skipped once --budget seconds have passed, so a short lease still gets the
first ones):

  peak       the card's float64 and float32 (TF32 off) product rates, 8192^3, best of 5
  r200       n = 200,000 x 128, 1,000 classes (R ~ 200), leave-one-out, precision@1,
             r_precision, map@r: embedeval on the card against PML's
             AccuracyCalculator(k="max_bin_count") on CUDA tensors, in the same run
  r2000      the same with 100 classes (R ~ 2,000)
  r2000_1m   n = 1,000,000 x 128, 500 classes (R ~ 2,000), map@r (PML too, unless --no-pml-1m)
  shallow1m  n = 1,000,000 x 128, 100 classes, precision@1, recall@10, against the bare search
  dense      judged dense retrieval: 10,000 queries, a 1,000,000 x 384 corpus, cosine,
             ndcg@10, recall@100, mrr@10, map@100 (bench_retrieval.py's data), against the bare search

*bare search*: the card's float32 product (TF32 off) and torch.topk alone, in query blocks, at
the depth the metrics need. Every row also runs device="cpu" on --cpu-queries queries (against
every reference) and compares their per-query values with the card's: "equal" is the count of
identical values (NaN equal to NaN) over those compared. PML's values are compared by their
means (it computes in float32). The rows are printed as a markdown table at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np
from _common import gaussian_classes, timed
from bench_retrieval import DENSE_METRICS, dense_data

import embedeval
from embedeval._search import Device

CASES = ["peak", "r200", "r2000", "r2000_1m", "shallow1m", "dense"]
MUSGRAVE = ["precision@1", "r_precision", "map@r"]
PML_NAMES = {"precision@1": "precision_at_1", "r_precision": "r_precision", "map@r": "mean_average_precision_at_r"}


def sync(torch, device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def peak_tflops(torch, device, dtype, size=8192):
    """The product rate in TFLOP/s of one size^3 product (best of 5)."""
    torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(size, size, device=device, dtype=dtype)
    b = torch.randn(size, size, device=device, dtype=dtype)
    a @ b
    sync(torch, device)
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        a @ b
        sync(torch, device)
        best = min(best, time.perf_counter() - start)
    return 2 * size**3 / best / 1e12


def bare_search(torch, device, queries, references, k, inner_product, block=4096):
    """float32 product (TF32 off) and topk per query block on ``device``; the inputs moved there first."""
    torch.backends.cuda.matmul.allow_tf32 = False
    q = torch.from_numpy(queries).to(device)
    r = torch.from_numpy(references).to(device)
    norms = (r * r).sum(dim=1)
    k = min(k, len(references))
    for start in range(0, len(q), block):
        scores = q[start : start + block] @ r.T
        if not inner_product:
            scores = 2 * scores - norms  # -(||r||^2 - 2 q.r): larger is nearer
        torch.topk(scores, k, dim=1)
    sync(torch, device)


def pml_accuracy(torch, device, x, labels):
    """PML's AccuracyCalculator(k="max_bin_count") on tensors on ``device``: (means, knn used)."""
    from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator

    kwargs, knn = {}, "faiss"
    try:
        import faiss

        on_gpu = device.type == "cuda" and faiss.get_num_gpus() > 0
    except ImportError:
        on_gpu = False
    if device.type == "cuda" and not on_gpu:
        from pytorch_metric_learning.distances import LpDistance
        from pytorch_metric_learning.utils.inference import CustomKNN

        kwargs["knn_func"], knn = CustomKNN(LpDistance(normalize_embeddings=False), batch_size=4096), "torch CustomKNN"
    calc = AccuracyCalculator(include=tuple(PML_NAMES.values()), k="max_bin_count", device=device, **kwargs)
    xt, lt = torch.from_numpy(x).to(device), torch.from_numpy(labels).to(device)
    sync(torch, device)
    return calc.get_accuracy(xt, lt), knn


def compared(on_device, x, labels, metrics, cpu_queries, seed=0):
    """(equal, compared, CPU seconds): the card's per-query values against device="cpu" on a sample."""
    n = len(x)
    part = np.sort(np.random.default_rng(seed).choice(n, size=min(cpu_queries, n), replace=False))
    cpu_s, on_cpu = timed(
        lambda: embedeval.evaluate(
            x[part], labels[part], reference=x, reference_labels=labels, metrics=metrics, query_in_reference=part
        )
    )
    equal = sum(int(np.sum(same(on_device.per_query[m][part], on_cpu.per_query[m]))) for m in metrics)
    return equal, part.size * len(metrics), cpu_s


def same(a, b):
    return (a == b) | (np.isnan(a) & np.isnan(b))


def case_labels(ctx, name, n, n_classes, metrics, pml=True, bare_k=None):
    torch, device = ctx["torch"], ctx["device"]
    x, labels = gaussian_classes(n, 128, n_classes)
    ours_s, ours = timed(lambda: embedeval.evaluate(x, labels, metrics=metrics, device=ctx["embedeval_device"]))
    out = {"case": name, "shape": f"{n:,} x 128, {n_classes:,} classes", "metrics": ", ".join(metrics)}
    out["embedeval_s"] = ours_s
    if pml:
        pml_s, (theirs, knn) = timed(lambda: pml_accuracy(torch, device, x, labels))
        out["pml_s"], out["pml_knn"] = pml_s, knn
        out["pml_gap"] = max(abs(ours.summary[m] - theirs[PML_NAMES[m]]) for m in metrics if m in PML_NAMES)
    if bare_k is not None:
        out["bare_s"], _ = timed(lambda: bare_search(torch, device, x, x, bare_k + 1, False))
    out["equal"], out["compared"], out["cpu_sample_s"] = compared(ours, x, labels, metrics, ctx["cpu_queries"])
    return out


def case_dense(ctx, n_queries, n_corpus, dim):
    torch, device = ctx["torch"], ctx["device"]
    queries, corpus, qrels = dense_data(n_queries, n_corpus, dim)
    ids = dict(query_ids=[f"q{i}" for i in range(n_queries)], corpus_ids=[f"d{j}" for j in range(n_corpus)])
    kw = dict(metrics=DENSE_METRICS, distance="cosine", **ids)
    ours_s, ours = timed(
        lambda: embedeval.evaluate_retrieval(queries, corpus, qrels, device=ctx["embedeval_device"], **kw)
    )
    bare_s, _ = timed(lambda: bare_search(torch, device, queries, corpus, 100, True))
    part = np.arange(min(ctx["cpu_queries"], n_queries))
    sub = {f"q{i}": qrels[f"q{i}"] for i in part}
    cpu_s, on_cpu = timed(
        lambda: embedeval.evaluate_retrieval(queries[part], corpus, sub, **{**kw, "query_ids": [f"q{i}" for i in part]})
    )
    equal = sum(int(np.sum(same(ours.per_query[m][part], on_cpu.per_query[m]))) for m in DENSE_METRICS)
    return {
        "case": "dense", "shape": f"{n_queries:,} x {n_corpus:,} x {dim}", "metrics": ", ".join(DENSE_METRICS),
        "embedeval_s": ours_s, "bare_s": bare_s, "equal": equal, "compared": part.size * len(DENSE_METRICS),
        "cpu_sample_s": cpu_s,
    }  # fmt: skip


def table(rows):
    """The rows as a markdown table: embedeval against PML and against the bare search."""
    lines = [
        "| case | data | metrics | embedeval | PML (kNN) | embedeval / PML | bare search | embedeval / bare "
        '| equal to device="cpu" |',
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pml = f"{r['pml_s']:.2f} s ({r['pml_knn']})" if "pml_s" in r else ""
        ratio = f"{r['embedeval_s'] / r['pml_s']:.2f}" if "pml_s" in r else ""
        bare = f"{r['bare_s']:.2f} s" if "bare_s" in r else ""
        over = f"{r['embedeval_s'] / r['bare_s']:.2f}" if "bare_s" in r else ""
        lines.append(
            f"| {r['case']} | {r['shape']} | {r['metrics']} | {r['embedeval_s']:.2f} s | {pml} | {ratio} | {bare} "
            f"| {over} | {r['equal']:,} / {r['compared']:,} |"
        )
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", nargs="+", choices=CASES, default=CASES)
    parser.add_argument("--budget", type=float, default=float("inf"), help="skip cases started after this many s")
    parser.add_argument("--cpu-queries", type=int, default=2000, help="queries compared with device='cpu'")
    parser.add_argument("--small", action="store_true", help="small data, torch's CPU device without a card")
    parser.add_argument("--no-pml-1m", action="store_true", help="skip PML on r2000_1m")
    parser.add_argument("--json", help="write the rows here too")
    args = parser.parse_args(argv)
    import torch

    cuda = torch.cuda.is_available()
    if not cuda and not args.small:
        raise SystemExit("bench_gpu.py needs torch with a visible CUDA device; --small runs on torch's CPU device")
    device = torch.device("cuda:0" if cuda else "cpu")
    ctx = {
        "torch": torch,
        "device": device,
        "embedeval_device": "gpu" if cuda else Device(("cpu",)),
        "cpu_queries": min(args.cpu_queries, 300) if args.small else args.cpu_queries,
    }
    s = 50 if args.small else 1  # --small: sizes of 200,000 divided by 50, of 1,000,000 by 250
    m = 250 if args.small else 1
    peaks = {}
    if "peak" in args.cases:
        size = 1024 if args.small else 8192
        peaks = {
            str(dt).removeprefix("torch."): peak_tflops(torch, device, dt, size)
            for dt in (torch.float64, torch.float32)
        }
    name = torch.cuda.get_device_name(device) if cuda else "torch CPU device"
    print(
        f"{platform.node()}: {name}, torch {torch.__version__}, {os.cpu_count()} CPUs, "
        f"product peaks (TFLOP/s) { ({k: round(v, 2) for k, v in peaks.items()}) }",
        flush=True,
    )
    plan = {
        "r200": lambda: case_labels(ctx, "r200", 200_000 // s, 1000 // s, MUSGRAVE),
        "r2000": lambda: case_labels(ctx, "r2000", 200_000 // s, 100 // s, MUSGRAVE),
        "r2000_1m": lambda: case_labels(ctx, "r2000_1m", 1_000_000 // m, 500 // m, ["map@r"], pml=not args.no_pml_1m),
        "shallow1m": lambda: case_labels(
            ctx, "shallow1m", 1_000_000 // m, 100 // s, ["precision@1", "recall@10"], pml=False, bare_k=10
        ),
        "dense": lambda: case_dense(ctx, 10_000 // s, 1_000_000 // m, 384),
    }
    start, rows = time.perf_counter(), []
    for case in [c for c in args.cases if c in plan]:
        if time.perf_counter() - start > args.budget:
            print(f"{case}: skipped (budget)", flush=True)
            continue
        rows.append(plan[case]())
        print(json.dumps(rows[-1]), flush=True)
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"device": name, "peak_tflops": peaks, "rows": rows}, f, indent=1)
    print(table(rows))


if __name__ == "__main__":
    main()
