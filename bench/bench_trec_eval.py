"""Time ``embedeval trec_eval -m all_trec`` against trec_eval 10 itself, on the same files, in one run.

    python bench/bench_trec_eval.py --trec-eval /path/to/trec_eval     # 100,000 queries: 10M run lines
    python bench/bench_trec_eval.py --queries 10000 --trec-eval ./trec_eval

The files are bench_rankings.py's (``--trec-dir``, written once and reused): per query 100
retrieved documents and 5 judged with grades 1-3. Each row is one process, start to printed
output (sent to /dev/null), with its peak resident memory:

* trec_eval 10 built from its source (``--trec-eval``; not shipped, not run without the flag);
* ``embedeval trec_eval`` as installed without extras (pyarrow hidden: the line reader);
* ``embedeval trec_eval`` with pyarrow (``pip install 'embedeval[fast]'``).

The outputs of the measures both print are compared line by line (``-m all_trec`` of embedeval
prints the measures its registry has; the note says how many lines were compared).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rankings import make_data, write_trec

ROOT = Path(__file__).resolve().parents[1]
_NO_PYARROW = "import sys; sys.modules['pyarrow'] = None; from embedeval.cli import main; sys.exit(main(sys.argv[1:]))"
_WITH = "import sys; from embedeval.cli import main; sys.exit(main(sys.argv[1:]))"


def timed_process(argv: list[str]) -> tuple[float, float, str]:
    """(seconds, peak resident MB, stdout) of one process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"{argv[0]} ... failed with status {status}")
    return seconds, usage.ru_maxrss / 1024, out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--trec-dir", default="/tmp/embedeval-bench-trec", help="where the TREC files are written")
    parser.add_argument("--trec-eval", help="a trec_eval 10 binary built from its source (optional)")
    args = parser.parse_args()
    run, qrels = write_trec(Path(args.trec_dir), *make_data(args.queries))
    words = ["trec_eval", "-m", "all_trec", str(qrels), str(run)]
    rows = []
    if args.trec_eval:
        rows.append(("trec_eval 10 (C)", *timed_process([args.trec_eval, *words[1:]])))
    rows.append(("embedeval trec_eval, no extras", *timed_process([sys.executable, "-c", _NO_PYARROW, *words])))
    rows.append(("embedeval trec_eval, pyarrow", *timed_process([sys.executable, "-c", _WITH, *words])))
    lines = {name: {line.split("\t")[0]: line for line in out.splitlines()} for name, *_, out in rows}
    ours = lines[rows[-1][0]]
    print(f"{args.queries:,} queries, {args.queries * 100:,} run lines: {run}")
    print("| command | seconds | peak MB |")
    print("|---|---:|---:|")
    for name, seconds, peak, _ in rows:
        print(f"| {name} | {seconds:.1f} | {peak:,.0f} |")
    for name in lines:
        shared = [k for k in ours if k in lines[name]]
        same = sum(lines[name][k] == ours[k] for k in shared)
        print(f"{name}: {same} of {len(shared)} summary lines shared with embedeval's identical")


if __name__ == "__main__":
    main()
