"""How far apart the tie rules put deep hashing's numbers, on a seeded example (values, not times).

    python bench/example_hamming_ties.py                  # prints a markdown table
    python bench/example_hamming_ties.py --plot plots/hamming_pr.png

Data (seeded, as in ``bench_hamming.py`` but smaller): 10 classes, each a random prototype code;
every code is its class's prototype with each bit flipped with probability 0.3; 1,000 queries
against a 20,000-code database, at 12, 32 and 64 bits. Shorter codes mean fewer distances and
larger tie groups, which is where the rule matters.

Rows: embedeval under each tie rule (``None``: ties by index, lower first; ``"expected"``; and
``"optimistic"`` / ``"pessimistic"``, the range), and DPSH's ``CalcMap`` / ``CalcTopMap`` loop
(numpy's quicksort ``argsort`` per query, whose order within a tie follows no stated rule);
then the index rule, the expected value and DPSH's loop again on the same database stored class
by class (as many datasets' lists are), where the index rule is no longer a random order.
Metrics: mAP over the database (``map``), DPSH's mAP@1000 (``map_hits@1000``) and precision
within Hamming radius 2 (``precision_radius@2``, which no tie rule changes). ``--plot`` draws
the precision-recall curve over Hamming radii of the 32-bit codes.
"""

from __future__ import annotations

import argparse

import numpy as np

import embedeval

CLASSES, FLIP, QUERIES, DATABASE = 10, 0.3, 1000, 20_000
METRICS = ["map", "map_hits@1000", "precision_radius@2"]
RULES = (None, "expected", "optimistic", "pessimistic")


def make_data(bits: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    prototypes = rng.random((CLASSES, bits)) < 0.5

    def codes(n):
        labels = rng.integers(0, CLASSES, n)
        return prototypes[labels] ^ (rng.random((n, bits)) < FLIP), labels

    database, database_labels = codes(DATABASE)
    queries, query_labels = codes(QUERIES)
    return queries, query_labels, database, database_labels


def dpsh_loop(queries, query_labels, database, database_labels, top=1000):
    """DPSH's CalcMap and CalcTopMap: quicksort argsort per query, AP over the hits."""
    bits = queries.shape[1]
    q = np.where(queries, 1.0, -1.0)
    db = np.where(database, 1.0, -1.0)
    full, at_top = [], []
    for i in range(q.shape[0]):
        gnd = (database_labels == query_labels[i]).astype(np.float64)
        gnd = gnd[np.argsort(0.5 * (bits - db @ q[i]))]
        for hits, out in ((gnd, full), (gnd[:top], at_top)):
            total = int(hits.sum())
            if total == 0:
                out.append(0.0)
                continue
            found = np.flatnonzero(hits == 1) + 1.0
            out.append(float(np.mean(np.arange(1, total + 1) / found)))
    return {"map": float(np.mean(full)), "map_hits@1000": float(np.mean(at_top))}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bits", type=int, nargs="+", default=[12, 32, 64])
    parser.add_argument("--plot", help="write the 32-bit precision-recall curve over radii to this PNG")
    args = parser.parse_args()
    print(f"# {QUERIES} queries, {DATABASE:,} codes, {CLASSES} classes, bits flipped with probability {FLIP}")
    print("| bits | rule | " + " | ".join(METRICS) + " |")
    print("|---|---|" + "---|" * len(METRICS))
    for bits in args.bits:
        q, ql, db, dbl = make_data(bits)
        for rule in RULES:
            r = embedeval.evaluate(
                q, ql, reference=db, reference_labels=dbl, distance="hamming", metrics=METRICS, ties=rule
            )
            name = "index (ties=None)" if rule is None else repr(rule)
            print(f"| {bits} | {name} | " + " | ".join(f"{r.summary[m]:.4f}" for m in METRICS) + " |")
        loop = dpsh_loop(q, ql, db, dbl)
        print(f"| {bits} | DPSH loop (quicksort) | " + " | ".join(f"{loop.get(m, np.nan):.4f}" for m in METRICS) + " |")
        # The same database stored class by class, as many dataset lists are: the index rule now
        # puts low class labels first within every tie (the other rules do not see the order).
        order = np.argsort(dbl, kind="stable")
        for rule in (None, "expected"):
            r = embedeval.evaluate(
                q, ql, reference=db[order], reference_labels=dbl[order], distance="hamming", metrics=METRICS, ties=rule
            )
            name = "index (ties=None)" if rule is None else repr(rule)
            print(
                f"| {bits} | {name}, database sorted by class | "
                + " | ".join(f"{r.summary[m]:.4f}" for m in METRICS)
                + " |"
            )
        per_class = [
            embedeval.evaluate(
                q, ql, reference=db[order], reference_labels=dbl[order], distance="hamming", metrics="map", ties=rule
            ).per_class.values["map"]
            for rule in (None, "expected")
        ]
        print(f"# {bits} bits, sorted by class, map per class: index " + " ".join(f"{v:.3f}" for v in per_class[0]))
        print(f"# {bits} bits, sorted by class, map per class: expected " + " ".join(f"{v:.3f}" for v in per_class[1]))
        loop = dpsh_loop(q, ql, db[order], dbl[order])
        row = " | ".join(f"{loop.get(m, np.nan):.4f}" for m in METRICS)
        print(f"| {bits} | DPSH loop (quicksort), database sorted by class | {row} |")
        if args.plot and bits == 32:
            from embedeval.hashing import pr_curve
            from embedeval.plotting import plot_hamming_pr

            curve = pr_curve(q, ql, reference=db, reference_labels=dbl)
            plot_hamming_pr(curve, args.plot, title="32-bit codes, 10 classes (bench/example_hamming_ties.py)")
            print(f"# {curve!r}; written to {args.plot}")


if __name__ == "__main__":
    main()
