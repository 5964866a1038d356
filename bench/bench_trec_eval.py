"""Time ``embedeval trec_eval -m all_trec`` against trec_eval 10 itself, on the same files, in one run.

    python bench/bench_trec_eval.py --trec-eval /path/to/trec_eval     # 100,000 queries: 10M run lines
    python bench/bench_trec_eval.py --queries 10000 --trec-eval ./trec_eval
    python bench/bench_trec_eval.py --queries 1000 5000 --docs 1000 --trec-eval ./trec_eval   # issue 41's sizes
    python bench/bench_trec_eval.py --start-up --trec-eval ./trec_eval   # trec_eval's own test files
    python bench/bench_trec_eval.py --queries 1000 5000 --docs 1000 --ids short long --judged 50 --default-only
        # issue 55's peak memory table (docs/performance.md): ids of both lengths, 50 judged per query

(Build trec_eval 10 outside this repository: fetch github:usnistgov/trec_eval, then ``make`` there.)

The files are bench_rankings.py's data (``--trec-dir``, written once and reused): per query 100
(``--docs``) retrieved documents among 10^6 and 5 (``--judged``) judged with grades 1-3, three of
them retrieved. ``--ids short`` writes ids as bench_rankings.py does (``q12``, ``d123456``);
``--ids long`` as web collections name them (``query-000012``, ``clueweb12-0000tw-00-123456``:
26 bytes), which is what a reader's memory per line grows with. ``--start-up`` times trec_eval's own
test files instead (``test/qrels.test``, ``test/results.test`` beside the binary: 3,681 qrels
lines, 1,500 run lines), where a process's start-up is its speed. Each row is one process, start to printed
output (sent to /dev/null), with its peak resident memory:

* trec_eval 10 built from its source (``--trec-eval``; not shipped, not run without the flag);
* ``embedeval trec_eval`` as installed (files of 4 to 64 MB: numpy's reader, which never imports
  pyarrow; from 64 MB: pyarrow's multithreaded reader);
* the same with each batch reader forced (``EMBEDEVAL_TREC_READER=numpy`` or ``pyarrow``).

Every output is compared with trec_eval's byte for byte (``identical`` column) where trec_eval ran,
else with the first embedeval row's.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rankings import make_data, write_trec

ROOT = Path(__file__).resolve().parents[1]
_COMMAND = "import sys; from embedeval.cli import main; sys.exit(main(sys.argv[1:]))"


def timed_process(argv: list[str], **variables) -> tuple[float, float, str]:
    """(seconds, peak resident MB, stdout) of one process. The peak is GNU time's (``/usr/bin/time``,
    which forks the command from its own small process): the ``ru_maxrss`` that ``wait4`` reports
    for a child forked from this Python counts the parent's pages it held until ``exec``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    env.pop("EMBEDEVAL_BATCHES_FROM", None)
    env.pop("EMBEDEVAL_TREC_READER", None)
    env.update(variables)
    with tempfile.NamedTemporaryFile("r") as peak_file:
        start = time.perf_counter()
        child = subprocess.run(
            ["/usr/bin/time", "-f", "%M", "-o", peak_file.name, *argv],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True,
        )  # fmt: skip
        seconds = time.perf_counter() - start
        if child.returncode != 0:
            raise SystemExit(f"{argv[0]} ... failed with status {child.returncode}")
        peak_kb = float(peak_file.read().split()[-1])
    return seconds, peak_kb / 1024, child.stdout


def rows_for(words: list[str], trec_eval: str | None, default_only: bool = False):
    """(name, seconds, peak MB, output) of each command on the same arguments."""
    rows = []
    if trec_eval:
        rows.append(("trec_eval 10 (C)", *timed_process([trec_eval, *words[1:]])))
    command = [sys.executable, "-c", _COMMAND, *words]
    rows.append(("embedeval trec_eval", *timed_process(command)))
    for reader in () if default_only else ("numpy", "pyarrow"):
        rows.append((f"  {reader}'s reader forced", *timed_process(command, EMBEDEVAL_TREC_READER=reader)))
    return rows


_LONG = ("query-{:06d}", "clueweb12-0000tw-00-{:06d}")  # 12 and 26 bytes
_SHORT = ("q{}", "d{}")


def corpus_data(n_queries: int, length: int, judged: int, corpus: int, seed: int = 0):
    """(ranked, judged, grades) with every id drawn from ``corpus`` documents, so that ids recur
    across queries (as in a real collection: issue 55's file, 200,000 documents); a fifth of each
    query's judged documents are among its retrieved ones."""
    rng = np.random.default_rng(seed)
    ranked = np.empty((n_queries, length), dtype=np.int64)
    relevant = np.empty((n_queries, judged), dtype=np.int64)
    inside = judged // 5
    for q in range(n_queries):
        row = rng.choice(corpus, size=length + judged, replace=False)
        ranked[q] = row[:length]
        relevant[q, :inside] = rng.choice(row[:length], size=inside, replace=False)
        relevant[q, inside:] = row[length : length + judged - inside]
    return ranked, relevant, rng.integers(0, 4, size=(n_queries, judged))


def write_files(folder: Path, ranked, relevant, grades, ids: str) -> tuple[Path, Path]:
    """run.txt and qrels.txt with ``ids`` "short" or "long" (written once per shape)."""
    return write_trec(folder, ranked, relevant, grades, _LONG if ids == "long" else _SHORT)


def print_rows(title: str, rows) -> None:
    print(title)
    print("| command | seconds | peak MB | identical |")
    print("|---|---:|---:|---|")
    reference = rows[0][3]
    for name, seconds, peak, out in rows:
        print(f"| {name} | {seconds:.2f} | {peak:,.0f} | {'yes' if out == reference else 'NO'} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, nargs="+", default=[100_000])
    parser.add_argument("--docs", type=int, default=100, help="retrieved documents per query")
    parser.add_argument("--measures", nargs="+", default=["all_trec"], help="-m arguments ('' for the defaults)")
    parser.add_argument("--start-up", action="store_true", help="trec_eval's own test files instead")
    parser.add_argument("--repeat", type=int, default=1, help="best of this many runs (--start-up: 5)")
    parser.add_argument("--trec-dir", default="/tmp/embedeval-bench-trec", help="where the TREC files are written")
    parser.add_argument("--trec-eval", help="a trec_eval 10 binary built from its source (optional)")
    parser.add_argument("--ids", nargs="+", choices=("short", "long"), default=["short"], help="id lengths")
    parser.add_argument("--judged", type=int, default=5, help="judged documents per query (3 of them retrieved)")
    parser.add_argument("--default-only", action="store_true", help="embedeval's default reader only")
    parser.add_argument("--corpus", type=int, help="draw every id from this many documents (ids recur across queries)")
    args = parser.parse_args()
    measures = [w for m in args.measures if m for w in ("-m", m)]
    if args.start_up:
        if not args.trec_eval:
            raise SystemExit("--start-up reads trec_eval's test files beside its binary: give --trec-eval")
        test = Path(args.trec_eval).resolve().parent / "test"
        words = ["trec_eval", *measures, str(test / "qrels.test"), str(test / "results.test")]
        runs = [rows_for(words, args.trec_eval) for _ in range(max(args.repeat, 5))]
        best = [min((r[i] for r in runs), key=lambda row: row[1]) for i in range(len(runs[0]))]
        print_rows(f"trec_eval's test files, -m {' '.join(args.measures) or '(defaults)'}, best of {len(runs)}", best)
        return
    for n_queries in args.queries:
        for ids in args.ids:
            shape = f"{n_queries}x{args.docs}" + ("" if args.judged == 5 else f"x{args.judged}")
            folder = Path(args.trec_dir) / (shape + ("" if ids == "short" else "-long"))
            if args.corpus:
                data = corpus_data(n_queries, args.docs, args.judged, args.corpus)
                shape += f"of{args.corpus}"
                folder = Path(args.trec_dir) / (shape + ("" if ids == "short" else "-long"))
            else:
                data = make_data(n_queries, length=args.docs, n_relevant=args.judged)
            if args.judged > 5 and not args.corpus:  # the never-retrieved judged ids, distinct within each query
                offset = np.random.default_rng(1).integers(0, 10**4, size=(n_queries, 1)) * 100
                data[1][:, 3:] = 10**6 + offset + np.arange(args.judged - 3)
            run, qrels = write_files(folder, *data, ids)
            words = ["trec_eval", *measures, str(qrels), str(run)]
            runs = [rows_for(words, args.trec_eval, args.default_only) for _ in range(args.repeat)]
            best = [min((r[i] for r in runs), key=lambda row: row[1]) for i in range(len(runs[0]))]
            size = run.stat().st_size / 2**20
            print_rows(f"{n_queries:,} queries x {args.docs:,} documents ({n_queries * args.docs:,} run lines, "
                       f"{ids} ids, {size:,.0f} MB), {args.judged} judged per query, "
                       f"-m {' '.join(args.measures) or '(defaults)'}", best)  # fmt: skip


if __name__ == "__main__":
    main()
