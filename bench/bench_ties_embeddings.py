"""Time ties="expected" on float embeddings against the default rule (ties by lower index).

    python bench/bench_ties_embeddings.py                    # n = 20,000, d = 128, 100 classes
    python bench/bench_ties_embeddings.py --n 5000 --repeat 3

Data: Gaussian class centres plus noise (leave-one-out, class labels), once as float32 embeddings
(continuous: no two float64 distances of a query tie) and once rounded to one decimal (quantised:
exact float64 ties occur). Metrics: ``evaluate``'s defaults (precision@1, r_precision, map@r).
The default rule searches (faiss candidates, exact float64 order); a tie-aware rule scans every
reference in float64 (embedeval._search.tied_scan). Best of ``--repeat`` runs; ratios are to the
default rule on the same data. The machine's other load is printed (timings are noisy).
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from _common import best_of, summary_line

import embedeval


def make_data(n, d, classes, seed=0):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, n)
    centres = rng.standard_normal((classes, d))
    x = (centres[labels] + 1.5 * rng.standard_normal((n, d))).astype(np.float32)
    return x, labels


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    x, labels = make_data(args.n, args.d, args.classes)
    print(f"n={args.n}, d={args.d}, {args.classes} classes; load average {os.getloadavg()[0]:.2f}")
    for name, data in (("continuous", x), ("rounded to 0.1", np.round(x, 1).astype(np.float32))):
        base = None
        for rule in (None, "expected"):
            seconds, result = best_of(
                args.repeat, lambda rule=rule, data=data: embedeval.evaluate(data, labels, ties=rule)
            )
            base = base or seconds
            values = summary_line(result.summary)
            print(f"{name:15s} ties={rule!s:9s} {seconds:7.2f} s  {seconds / base:5.2f}x   {values}")


if __name__ == "__main__":
    main()
