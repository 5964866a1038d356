"""How far embedeval is from the floor of any exact method, in every slow regime, in one sitting.

    python bench/bench_floor.py                  # the table of issue 28 (n = 20,000, d = 128; a few minutes)
    python bench/bench_floor.py --quick          # the same rows at n = 5,000 (d = 64 for the half-class row)
    python bench/bench_floor.py --rows 4 5       # some rows (1-based)
    python bench/bench_floor.py --kernels auto   # without the numpy column (compiled kernels only)
    python bench/bench_floor.py --threads 1      # everything on one thread (BLAS, faiss, blocks, tiles)
    python bench/bench_floor.py --repeat 1       # one call of each column (faster; the first call of the
                                                 # product is the slow one, so every ratio looks better)

Columns, all on one machine in one run, on the same data (best of --repeat calls, 3 by default):
  product    the float32 product of all query-reference pairs by numpy, in blocks of 4096 rows (for
             verification: the pairs i < j only): the work no exact method can skip.
  embedeval  the call in the row's name (leave-one-out, class labels), with the compiled kernels
             (numba) where installed, after calls on 2,000 of the points (as labelled, and in two
             classes so that a deep ranking runs: the kernels loaded).
  numpy      the same call with EMBEDEVAL_KERNELS=numpy (the numpy passes only; --kernels both).
  faiss      faiss IndexFlatL2.search with k = the largest class (the Musgrave rows only).
  pml        pytorch-metric-learning's AccuracyCalculator, when installed and the pairs fit in
             memory: k="max_bin_count" for the Musgrave rows, k=None for whole rankings.
  e/p, n/p, e/f, pml/e  the ratios.  target: issue 42's bound on e/p (the ties row: on e / index rule,
             the index rule timed in the same run on the same data).
  A "-" is a column not run (not asked for, not installed, not for this row, or too large).

Rows:
  1 R ~ 200   Gaussian classes of 200 (100 classes), precision@1, r_precision, map@r
  2 R ~ 2000  the same with 10 classes
  3 half      half of the points in one class, the rest in classes of 100 (n doubled, d = 64)
  4 whole     map and mrr of whole rankings (PML's mean_average_precision, re-ID mAP), R ~ 200
  5 verif.    fnmr@fmr=0.001, eer, pair_auroc over all n (n - 1) / 2 pairs
  6 ties      row 1 with ties="expected"; the same call with ties=None (the index rule) is timed on the
              same data in the same run, and the row prints e/index (the target) and e/p
"""

from __future__ import annotations

import argparse
import os
import platform
import sys

import faiss
import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))  # this checkout's embedeval
from _common import best_of, faiss_search, gaussian_classes, product

import embedeval

MUSGRAVE = ["precision@1", "r_precision", "map@r"]
VERIFICATION = ["fnmr@fmr=0.001", "eer", "pair_auroc"]
PML_NAMES = {
    "precision@1": "precision_at_1",
    "r_precision": "r_precision",
    "map@r": "mean_average_precision_at_r",
    "map": "mean_average_precision",
}


def half_in_one_class(n, d, seed=0):
    rng = np.random.default_rng(seed)
    half = n // 2
    labels = np.concatenate([np.zeros(half, np.int64), 1 + np.arange(n - half) // 100])
    centres = rng.standard_normal((labels.max() + 1, d), dtype=np.float32)
    return np.ascontiguousarray(centres[labels] + rng.standard_normal((n, d), dtype=np.float32)), labels


def triangle_product(x):
    """The float32 product of the pairs i < j, in blocks of 4096 rows."""
    for start in range(0, len(x), 4096):
        x[start : start + 4096] @ x[start:].T


def pml_run(x, labels, metrics, k):
    try:
        import torch
        from pytorch_metric_learning.utils.accuracy_calculator import AccuracyCalculator
    except ImportError:
        return None
    include = tuple(PML_NAMES[m] for m in metrics if m in PML_NAMES)
    calc = AccuracyCalculator(include=include, k=k)
    return calc.get_accuracy(torch.from_numpy(x), torch.from_numpy(labels), ref_includes_query=True)


def rows_of(n, d):
    """(number, name, data maker, metrics, evaluate keywords, faiss?, pml k or False, target)."""
    return [
        (1, "R ~ 200, Musgrave", lambda: gaussian_classes(n, d, n // 200), MUSGRAVE, {}, True, "max_bin_count", 1.6),
        (2, "R ~ 2000, Musgrave", lambda: gaussian_classes(n, d, 10), MUSGRAVE, {}, True, "max_bin_count", 2.6),
        (3, "half in one class (2n, d/2)", lambda: half_in_one_class(2 * n, d // 2), MUSGRAVE, {}, True, False, 3.5),
        (4, "whole-ranking map, mrr", lambda: gaussian_classes(n, d, n // 200), ["map", "mrr"], {}, False, None, 2.3),
        (5, "verification", lambda: gaussian_classes(n, d, 100), VERIFICATION, {}, False, False, 4.0),
        (6, "ties=expected", lambda: gaussian_classes(n, d, n // 200), MUSGRAVE, {"ties": "expected"}, 0, False, 1.5),
    ]


def _index_rule(args, call, keywords):
    """Seconds of the same call under the index rule (ties=None), with the kernels of the
    embedeval column: the denominator of the ties row's target."""
    index_keywords = {**keywords, "ties": None}
    t_i, _ = best_of(args.repeat, lambda: call(k=index_keywords))
    return t_i


def table(args):
    if args.threads:
        faiss.omp_set_num_threads(args.threads)  # also the verification's tiles at once
        import threadpoolctl

        threadpoolctl.threadpool_limits(args.threads, user_api="blas")
    n, d = (5000, 64) if args.quick else (args.n, args.d)
    print(f"# {platform.machine()}, {os.cpu_count()} cores, {cpu_model()}")
    print(f"# faiss {faiss.__version__}, numpy {np.__version__}")
    print(f"# n = {n}, d = {d}; kernels {args.kernels}; threads {args.threads or 'all'}; best of {args.repeat}")
    print(f"# load {os.getloadavg()[0]:.2f}")
    print("| row | regime | product s | embedeval s | numpy s | faiss s | pml s | e/p | n/p | e/f | pml/e | target |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for number, name, make, metrics, keywords, with_faiss, pml_k, target in rows_of(n, d):
        if number not in args.rows:
            continue
        x, labels = make()
        size = len(x)
        floor = triangle_product if metrics is VERIFICATION else product
        t_p, _ = best_of(args.repeat, lambda x=x, f=floor: f(x))

        if args.threads and metrics is not VERIFICATION:
            keywords = {**keywords, "n_threads": args.threads}

        def call(x=x, y=labels, m=metrics, k=keywords):
            return embedeval.evaluate(x, y, metrics=m, **k)

        os.environ["EMBEDEVAL_KERNELS"] = "numpy" if args.kernels == "numpy" else "auto"
        # compiled code loaded before timing: as the row runs, and in two classes (deep rankings)
        for warm in (labels[:2000], labels[:2000] % 2):
            embedeval.evaluate(x[:2000], warm, metrics=metrics, **keywords)
        t_e, result = best_of(args.repeat, call)
        t_n = float("nan")
        if args.kernels == "both":
            os.environ["EMBEDEVAL_KERNELS"] = "numpy"
            t_n, other = best_of(args.repeat, call)
            os.environ["EMBEDEVAL_KERNELS"] = "auto"
            assert other.summary == result.summary, (other.summary, result.summary)
        index_rule = _index_rule(args, call, keywords) if "ties" in keywords else None
        t_f = t_m = float("nan")
        if with_faiss and not args.no_faiss and (number != 3 or args.half_faiss):
            k_max = int(np.bincount(labels).max())
            t_f, _ = best_of(args.repeat, lambda x=x, k=k_max: faiss_search(x, k))
        if pml_k is not False and not args.no_pml and (pml_k is not None or size * size * 4 <= args.pml_bytes):
            t_m, pml = best_of(args.repeat, lambda x=x, y=labels, m=metrics, k=pml_k: pml_run(x, y, m, k))
            if pml is None:
                t_m = float("nan")
            else:
                pairs = [(m, result.summary[m], pml[PML_NAMES[m]]) for m in metrics if m in PML_NAMES]
                agree = ", ".join(f"{m} {ours:.6f}/{theirs:.6f}" for m, ours, theirs in pairs)
                print(f"#   row {number} embedeval/pml: {agree}")
        goal = f"<= {target}" + (" x index rule" if index_rule else "")
        ratio = t_e / index_rule if index_rule else t_e / t_p
        extra = ""
        if index_rule:  # row 6: the target is expected / index rule, same data, metrics, kernels
            extra = f" (index rule {index_rule:.2f} s; e/index {ratio:.2f}, e/p {t_e / t_p:.2f})"
        cells = [t_p, t_e, t_n, t_f, t_m, t_e / t_p, t_n / t_p, t_e / t_f, t_m / t_e]
        shown = " | ".join("-" if np.isnan(v) else f"{v:.2f}" for v in cells)  # - : not run
        print(f"| {number} | {name}{extra} | {shown} | {goal}: {'met' if ratio <= target else 'not met'} |")
        print("#   " + ", ".join(f"{k}={v:.5f}" for k, v in result.summary.items()))
        sys.stdout.flush()


def cpu_model():
    """The CPU's model name and whether it has AVX-512 (from /proc/cpuinfo where there is one): the
    ratios to the product move with it, since BLAS uses the widest vectors and the kernels may not."""
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
    except OSError:
        return platform.processor() or "cpu unknown"
    fields = {}
    for line in text.splitlines():  # the first processor's fields
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    name, family, model = (fields.get(k, "?") for k in ("model name", "cpu family", "model"))
    return f"{name} (family {family}, model {model}, {'AVX-512' if 'avx512f' in text else 'no AVX-512'})"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--quick", action="store_true", help="n = 5,000, d = 64")
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 2, 3, 4, 5, 6])
    parser.add_argument("--repeat", type=int, default=3, help="best of this many calls, every column (3)")
    parser.add_argument("--no-faiss", action="store_true")
    parser.add_argument("--no-pml", action="store_true")
    parser.add_argument("--threads", type=int, default=None, help="threads of everything (default: all cores)")
    parser.add_argument("--half-faiss", action="store_true", help="faiss on row 3 too (k = n/2: minutes)")
    parser.add_argument("--pml-bytes", type=float, default=1e9, help="whole rankings: no PML past n^2 floats")
    parser.add_argument("--kernels", choices=["both", "auto", "numpy"], default="both", help="EMBEDEVAL_KERNELS")
    args = parser.parse_args()
    table(args)


if __name__ == "__main__":
    main()
