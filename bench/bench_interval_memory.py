"""Peak memory of ``embedeval evaluate`` with its default bootstrap interval and with ``--no-ci``.

    python bench/bench_interval_memory.py                      # 20,000 and 200,000 queries
    python bench/bench_interval_memory.py --n 20000 --repeat 1 # a quicker look

The embeddings are n x 32 float32 vectors around 1,000 class centres (saved as .npy, which the
command memory-maps), the labels a .npy; one metric (precision@1), leave-one-out. Each command
runs in its own process, which reports its peak resident set (``ru_maxrss``) when it ends; the
table gives the smallest peak of ``--repeat`` runs of each, and the interval's cost as a share of
the ``--no-ci`` peak (issue 55 item 19 asks for at most ~20%).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

# The child runs the command line in-process and prints its own peak resident set (MB).
_CHILD = (
    "import resource, sys\n"
    "from embedeval.cli import main\n"
    "code = main(sys.argv[1:])\n"
    "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def peak_mb(args: list[str]) -> float:
    out = subprocess.run([sys.executable, "-c", _CHILD, *args], capture_output=True, text=True, check=True)
    return float(out.stderr.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[20_000, 200_000])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    print("| queries | --no-ci peak MB | interval peak MB | interval's cost |")
    print("|---|---|---|---|")
    for n in args.n:
        rng = np.random.default_rng(0)
        labels = rng.integers(0, 1000, n)
        x = rng.standard_normal((1000, 32), dtype=np.float32)[labels] + rng.standard_normal((n, 32), dtype=np.float32)
        with tempfile.TemporaryDirectory() as d:
            np.save(Path(d) / "x.npy", x)
            np.save(Path(d) / "y.npy", labels)
            command = ["evaluate", str(Path(d) / "x.npy"), str(Path(d) / "y.npy"), "--metrics", "precision@1"]
            without = min(peak_mb([*command, "--no-ci"]) for _ in range(args.repeat))
            with_ci = min(peak_mb(command) for _ in range(args.repeat))
        print(f"| {n:,} | {without:.0f} | {with_ci:.0f} | {100 * (with_ci / without - 1):+.0f}% |", flush=True)
    print(f"(load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
