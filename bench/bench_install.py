"""The default install against the `[fast]` one, each in a fresh virtualenv made by this script.

    python bench/bench_install.py                 # both venvs, every row (several minutes)
    python bench/bench_install.py --n 5000        # a quicker look
    python bench/bench_install.py --keep /tmp/venvs   # reuse the venvs of an earlier run

Each venv gets this checkout by ``pip install .`` (the default install) or ``pip install '.[fast]'``,
then runs, each in a fresh process with its own empty numba cache (first call: compilation
included), then again with that cache filled (cached):

  import      ``import embedeval``
  small       ``evaluate`` of 500 x 32 embeddings, 10 classes, precision@1, r_precision, map@r
  reality     ``embedeval reality-check --n 2000`` (the README's main job)
  whole       ``evaluate(x, labels, metrics=["map", "mrr", "precision@1"])``, 20,000 x 128, 100 classes
  verif.      fnmr@fmr=0.001, eer, pair_auroc over every pair of the same data
  ties        precision@1, r_precision, map@r with ties="expected" on the same data

Every per-query value and summary is compared between the two venvs (``identical``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

ROW = r"""
import json, sys, time
start = time.perf_counter()
import numpy as np
row, n = sys.argv[1], int(sys.argv[2])
if row == "import":
    import embedeval
    print(json.dumps({"seconds": time.perf_counter() - start, "values": {}}))
    raise SystemExit
import embedeval
rng = np.random.default_rng(0)
if row == "small":
    labels = rng.integers(0, 10, size=500)
    x = rng.normal(size=(10, 32))[labels] + rng.normal(size=(500, 32))
    kw = dict(metrics=["precision@1", "r_precision", "map@r"])
else:
    labels = rng.permutation(np.arange(n) % 100)
    x = (rng.standard_normal((100, 128), dtype=np.float32)[labels]
         + 1.5 * rng.standard_normal((n, 128), dtype=np.float32))
    kw = {"whole": dict(metrics=["map", "mrr", "precision@1"]),
          "verif.": dict(metrics=["fnmr@fmr=0.001", "eer", "pair_auroc"]),
          "ties": dict(metrics=["precision@1", "r_precision", "map@r"], ties="expected")}[row]
call = time.perf_counter()
result = embedeval.evaluate(x, labels, **kw)
end = time.perf_counter()
values = {m: np.asarray(v, dtype=float).tolist() for m, v in (result.per_query or {}).items()}
values.update({"summary " + m: float(v) for m, v in result.summary.items()})
print(json.dumps({"seconds": end - call, "process": end - start, "values": values}))
"""


def make_venv(folder: Path, spec: str) -> Path:
    python = folder / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", spec], check=True, cwd=ROOT)
    return python


def run_row(python: Path, row: str, n: int, cache: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "EMBEDEVAL_KERNELS")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    with tempfile.TemporaryDirectory() as cwd:  # the venv's embedeval, not this checkout's
        if row == "reality":
            start = time.perf_counter()
            command = [str(python.parent / "embedeval"), "reality-check", "--out", cwd, "--n", "2000", "--seed", "0"]
            out = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
            if out.returncode:
                raise SystemExit(out.stderr)
            return {"seconds": time.perf_counter() - start, "values": {"output": out.stdout}}
        out = subprocess.run([str(python), "-c", ROW, row, str(n)], cwd=cwd, env=env, capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(out.stderr)
    return json.loads(out.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=20_000)
    parser.add_argument("--rows", nargs="+", default=["import", "small", "reality", "whole", "verif.", "ties"])
    parser.add_argument("--keep", help="make (or reuse) the venvs here instead of a temporary folder")
    args = parser.parse_args()
    base = Path(args.keep or tempfile.mkdtemp(prefix="embedeval-venvs-"))
    base.mkdir(parents=True, exist_ok=True)
    installs = {"default (pip install .)": ".", "[fast] (pip install '.[fast]')": ".[fast]"}
    pythons = {name: make_venv(base / str(i), spec) for i, (name, spec) in enumerate(installs.items())}
    for name, python in pythons.items():
        numba = subprocess.run([str(python), "-c", "import numba; print(numba.__version__)"], capture_output=True)
        print(f"{name}: numba {numba.stdout.decode().strip() or 'not installed'}")
    print(f"\nn = {args.n:,}, d = 128, 100 classes; seconds of the call (import: of the import)\n")
    print("| row | " + " | ".join(f"{name}: first call | cached" for name in pythons) + " | identical |")
    print("|---|" + "---:|---:|" * len(pythons) + "---|")
    for row in args.rows:
        cells, values = [], []
        for i, python in enumerate(pythons.values()):
            cache = Path(tempfile.mkdtemp(prefix=f"numba-{i}-"))
            first = run_row(python, row, args.n, cache)
            cached = run_row(python, row, args.n, cache)
            cells += [f"{first['seconds']:.2f}", f"{cached['seconds']:.2f}"]
            values.append(first["values"])
        same = all(v == values[0] for v in values)
        print(f"| {row} | " + " | ".join(cells) + f" | {'yes' if same else 'NO'} |", flush=True)


if __name__ == "__main__":
    main()
