"""Time embedeval's ranked-list evaluation on every input form, against pytrec_eval and ranx.

    python bench/bench_rankings.py                      # 100,000 queries x 100 retrieved, 5 judged
    python bench/bench_rankings.py --queries 20000 --skip-slow

Data: per query 100 distinct retrieved ids (from 10^6) and 5 judged ids with grades 1-3, about
3 of them retrieved. Metrics: precision@10, recall@100, mrr@10, ndcg@10, map@100 (trec_eval's
P_10, recall_100, ndcg_cut_10, map_cut_100; it has no reciprocal rank with a cutoff).

Rows, each on the same data:

* 2-D id arrays (graded, and binary), and 2-D rankings with the relevant ids as a list of sets;
* dicts of dicts ``{qid: {doc: score}}`` / ``{qid: {doc: grade}}`` with string ids: embedeval;
  pytrec_eval's ``evaluate`` (its evaluator built beforehand, shown in the note); ranx counting
  the construction of its ``Qrels``/``Run`` from those dicts (what a user of ranx pays), after a
  warm-up call that compiles it (numba);
* the scored forms again under ``ties="expected"`` (the exact expected value over tied orders),
  with its time against the default rule's: dicts of dicts (no ties), the same dicts with scores
  rounded into groups of 10 tied documents, a (queries x 100) score matrix, and the TREC files
  through ``embedeval.io.evaluate_files``;
* TREC files of the same data (``--trec-dir``, 10 million run lines at the default size, written
  once and reused): ``read_run`` + ``read_qrels`` + ``evaluate_rankings`` in Python, and
  ``embedeval rankings qrels.txt run.txt`` end to end (process start to printed table, its peak
  resident memory) with pyarrow and without it; for scale, the peak memory of a process that
  reads the same run into Python dicts (pytrec_eval's ``parse_run``).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
from _common import timed

import embedeval

METRICS = ["precision@10", "recall@100", "mrr@10", "ndcg@10", "map@100"]
TREC = {"precision@10": "P_10", "recall@100": "recall_100", "ndcg@10": "ndcg_cut_10", "map@100": "map_cut_100"}


def make_data(n_queries, length=100, n_relevant=5, seed=0):
    rng = np.random.default_rng(seed)
    ranked = rng.integers(0, 10**6, size=(n_queries, length))
    while True:  # make ids distinct within each row
        srt = np.sort(ranked, axis=1)
        bad = (srt[:, 1:] == srt[:, :-1]).any(axis=1)
        if not bad.any():
            break
        ranked[bad] = rng.integers(0, 10**6, size=(int(bad.sum()), length))
    relevant = np.empty((n_queries, n_relevant), dtype=np.int64)
    pos = np.argsort(rng.random((n_queries, length)), axis=1)[:, :3]
    relevant[:, :3] = np.take_along_axis(ranked, pos, 1)
    relevant[:, 3:] = 10**6 + rng.integers(0, 10**6, size=(n_queries, n_relevant - 3))  # never retrieved
    grades = rng.integers(1, 4, size=(n_queries, n_relevant))
    return ranked, relevant, grades


def as_dicts(ranked, relevant, grades):
    qids = [f"q{i}" for i in range(ranked.shape[0])]
    qrels = {
        q: {f"d{d}": int(g) for d, g in zip(rel, gr, strict=True)}
        for q, rel, gr in zip(qids, relevant.tolist(), grades.tolist(), strict=True)
    }
    run = {
        q: {f"d{d}": float(100 - i) for i, d in enumerate(row)} for q, row in zip(qids, ranked.tolist(), strict=True)
    }
    return run, qrels


def write_trec(folder: Path, ranked, relevant, grades, ids=("q{}", "d{}")) -> tuple[Path, Path]:
    """run.txt and qrels.txt of the same data (written once per shape: a 10M-line run is 300 MB),
    query and document ids written by the formats ``ids``."""
    query, doc = ids
    folder.mkdir(parents=True, exist_ok=True)
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    stamp = folder / f".made-for-{ranked.shape[0]}x{ranked.shape[1]}x{relevant.shape[1]}"
    if not stamp.exists():
        with open(run_path, "w") as f:
            for q, row in enumerate(ranked.tolist()):
                qid = query.format(q)
                f.write("".join(f"{qid} Q0 {doc.format(d)} {i + 1} {100 - i}.0 bench\n" for i, d in enumerate(row)))
        with open(qrels_path, "w") as f:
            for q, (rel, gr) in enumerate(zip(relevant.tolist(), grades.tolist(), strict=True)):
                qid = query.format(q)
                f.write("".join(f"{qid} 0 {doc.format(d)} {g}\n" for d, g in zip(rel, gr, strict=True)))
        stamp.touch()
    return run_path, qrels_path


def child_peak(argv: list[str]) -> tuple[float, float, str]:
    """Run ``argv`` under a tiny Python wrapper that reports the child's own peak memory."""
    wrapper = (
        "import resource, subprocess, sys, time; s = time.perf_counter(); "
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "t = time.perf_counter() - s; sys.stderr.write(p.stderr); "
        "print(t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024); print(p.stdout, end=''); "
        "sys.exit(p.returncode)"
    )
    done = subprocess.run([sys.executable, "-c", wrapper, *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{argv} failed: {done.stderr}")
    first, _, rest = done.stdout.partition("\n")
    seconds, peak = map(float, first.split())
    return seconds, peak, rest


def summary_of_table(text: str) -> dict[str, float]:
    """The values of ``embedeval rankings``'s table (four decimals)."""
    values = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) > 1 and parts[0] in METRICS:
            values[parts[0]] = float(parts[1])
    return values


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--trec-dir", default="/tmp/embedeval-bench-trec", help="where the TREC files are written")
    parser.add_argument("--skip-slow", action="store_true", help="skip ranx and the reader without pyarrow")
    args = parser.parse_args()
    ranked, relevant, grades = make_data(args.queries)
    rows = []  # (input, tool, seconds, note, values)

    def add(what, tool, seconds, note, values):
        rows.append((what, tool, seconds, note, dict(values)))

    t, r = timed(lambda: embedeval.evaluate_rankings(ranked, relevant, grades=grades, metrics=METRICS))
    add("2-D id arrays, graded", "embedeval", t, "validation included", r.summary)
    t_arrays, r = timed(lambda: embedeval.evaluate_rankings(ranked, relevant, metrics=METRICS))
    add("2-D id arrays, binary", "embedeval", t_arrays, "", r.summary)
    sets = [set(row) for row in relevant.tolist()]
    t, r = timed(lambda: embedeval.evaluate_rankings(ranked, sets, metrics=METRICS))
    add("2-D rankings + list of relevant-id sets", "embedeval", t, f"{t / t_arrays:.2f} x the binary arrays", r.summary)

    run, qrels = as_dicts(ranked, relevant, grades)
    t_dicts, r = timed(lambda: embedeval.evaluate_rankings(run, qrels, metrics=METRICS))
    add("dicts of dicts", "embedeval", t_dicts, "", r.summary)
    try:
        import pytrec_eval

        measures = set(TREC.values()) | {"recip_rank"}
        t_build, evaluator = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, measures))
        t, per_q = timed(lambda: evaluator.evaluate(run))
        means = {m: float(np.mean([v[name] for v in per_q.values()])) for m, name in TREC.items()}
        add("dicts of dicts", "pytrec_eval", t, f"evaluate only; evaluator built in {t_build:.2f} s", means)
    except ImportError:
        print("# pytrec_eval not installed: pip install pytrec-eval-terrier")
    if not args.skip_slow:
        try:
            import ranx

            few = dict(list(qrels.items())[:10]), dict(list(run.items())[:10])
            ranx.evaluate(ranx.Qrels.from_dict(few[0]), ranx.Run.from_dict(few[1]), METRICS)  # numba compiles
            t_build, (q_obj, r_obj) = timed(lambda: (ranx.Qrels.from_dict(qrels), ranx.Run.from_dict(run)))
            t_eval, scores = timed(lambda: ranx.evaluate(q_obj, r_obj, METRICS))
            add(
                "dicts of dicts",
                "ranx",
                t_build + t_eval,
                f"Qrels/Run {t_build:.2f} s + evaluate {t_eval:.2f} s",
                scores,
            )
        except ImportError:
            print("# ranx not installed: pip install ranx")
    t, r = timed(lambda: embedeval.evaluate_rankings(run, qrels, metrics=METRICS, ties="expected"))
    add("dicts of dicts", 'embedeval, ties="expected"', t, f"{t / t_dicts:.2f} x the default rule", r.summary)
    tied_run = {q: {d: float(int(s) // 10) for d, s in docs.items()} for q, docs in run.items()}
    t_tied, r = timed(lambda: embedeval.evaluate_rankings(tied_run, qrels, metrics=METRICS))
    add("dicts of dicts, 10 tied per score", "embedeval", t_tied, "trec_eval's rule (ties by id)", r.summary)
    t, r = timed(lambda: embedeval.evaluate_rankings(tied_run, qrels, metrics=METRICS, ties="expected"))
    add(
        "dicts of dicts, 10 tied per score",
        'embedeval, ties="expected"',
        t,
        f"{t / t_tied:.2f} x trec_eval's",
        r.summary,
    )
    tied_run = None
    scores = np.broadcast_to(np.arange(ranked.shape[1], 0, -1, dtype=np.float64), ranked.shape)
    matrix = np.zeros(ranked.shape)
    hit = ranked[:, :, None] == relevant[:, None, :3]  # the 3 retrieved judged ids of each query
    matrix[hit.any(axis=2)] = grades[:, :3][np.nonzero(hit)[0], np.nonzero(hit)[2]]
    for label, s in (("score matrix (queries x 100)", scores), ("score matrix, 10 tied per score", scores // 10)):
        t_plain, r = timed(lambda s=s: embedeval.evaluate_scores(s, matrix, metrics=METRICS))
        add(label, "embedeval", t_plain, "ties by column", r.summary)
        t, r = timed(lambda s=s: embedeval.evaluate_scores(s, matrix, metrics=METRICS, ties="expected"))
        add(label, 'embedeval, ties="expected"', t, f"{t / t_plain:.2f} x ties by column", r.summary)
    run = qrels = None  # free the dicts before the file rows

    run_path, qrels_path = write_trec(Path(args.trec_dir), ranked, relevant, grades)
    from embedeval.io import common_queries, read_qrels, read_run

    t_read, files = timed(lambda: common_queries(read_run(run_path), read_qrels(qrels_path)))
    t_eval, r = timed(lambda: embedeval.evaluate_rankings(*files, metrics=METRICS))
    add(
        "TREC files, read_run + read_qrels",
        "embedeval",
        t_read + t_eval,
        f"read {t_read:.2f} s + evaluate {t_eval:.2f} s",
        r.summary,
    )
    files = None
    from embedeval.io import evaluate_files

    t_files, r = timed(lambda: evaluate_files(run_path, qrels_path, metrics=METRICS))
    add("TREC files, io.evaluate_files", "embedeval", t_files, "trec_eval's rule", r.summary)
    t, r = timed(lambda: evaluate_files(run_path, qrels_path, metrics=METRICS, ties="expected"))
    add("TREC files, io.evaluate_files", 'embedeval, ties="expected"', t, f"{t / t_files:.2f} x trec_eval's", r.summary)
    n_lines = ranked.size
    command = [sys.executable, "-m", "embedeval.cli", "rankings", str(qrels_path), str(run_path), "--metrics", *METRICS]
    t, peak, out = child_peak(command)
    add(
        f"`embedeval rankings` ({n_lines:,}-line run)",
        "embedeval",
        t,
        f"end to end, peak {peak:.0f} MB",
        summary_of_table(out),
    )
    if not args.skip_slow:
        no_arrow = [
            sys.executable,
            "-c",
            "import sys; sys.modules['pyarrow'] = None; from embedeval.cli import main; sys.exit(main(sys.argv[1:]))",
            *command[3:],
        ]
        t, peak, out = child_peak(no_arrow)
        add(
            f"`embedeval rankings` ({n_lines:,}-line run)",
            "embedeval, no pyarrow",
            t,
            f"line reader, peak {peak:.0f} MB",
            summary_of_table(out),
        )
        dicts = [sys.executable, "-c", f"import pytrec_eval; pytrec_eval.parse_run(open({str(run_path)!r}))"]
        t, peak, _ = child_peak(dicts)
        add("the same run as Python dicts", "pytrec_eval.parse_run", t, f"reading only, peak {peak:.0f} MB", {})

    print(
        f"# {args.queries} queries x {ranked.shape[1]} retrieved, {relevant.shape[1]} judged each; metrics {METRICS}; "
        f"load average at the end {os.getloadavg()[0]:.2f}"
    )
    print("| input | tool | time s | note |")
    print("|---|---|---|---|")
    for what, tool, t, note, _ in rows:
        print(f"| {what} | {tool} | {t:.2f} | {note} |")
    for what, tool, _, _, values in rows:
        if values:
            print(f"#  {what}, {tool}: " + ", ".join(f"{k}={v:.6f}" for k, v in values.items()))


if __name__ == "__main__":
    main()
