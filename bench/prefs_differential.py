"""``embedeval trec_eval`` against trec_eval 10 on generated preference and judgement-group files.

    python bench/prefs_differential.py --trec-eval /path/to/trec_eval --cases 300

Each case is a seeded set of files: a run (scores with ties, documents outside the judgements,
queries without judgements) and either a ``prefs`` file (several judgement groups per query,
groups of one sub-group with tied levels and level 0, groups of several consistent sub-groups,
documents judged in one group only) or a qrels file read as ``qrels_prefs`` and ``qrels_jg``
(several judgement groups per query, grades 0 to 3, and -1 for ``qrels_jg``). Some judged queries have no run; they are
generated only with ``-c`` (without it trec_eval 10 stops with status 4, where embedeval, as
for ``-R qrels``, leaves them out). Each case runs with ``-q`` and some of ``-c``, ``-M``,
``-J`` and ``-l``, and both outputs are compared byte for byte. Prints one line per differing
case and the count of identical ones; nothing is kept.

Levels are never negative in ``prefs`` files and the sub-groups of one group never contradict
each other: trec_eval aborts on a contradiction and reads past its arrays for negative levels
in ``prefs_avgjg_Rnonrel`` (see docs/guides/trec_eval.md).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_BINARY = os.environ.get("TREC_EVAL", "/work/trec_eval_src/trec_eval")


def _doc(rng: random.Random) -> str:
    """Ids of mixed widths, so that byte order and number order differ."""
    return f"d{rng.randint(1, 40)}" if rng.random() < 0.8 else f"D-{rng.randint(1, 9)}x"


def _prefs_lines(rng: random.Random, query: str) -> list[str]:
    lines = []
    for g in range(rng.randint(1, 4)):
        docs = list(dict.fromkeys(_doc(rng) for _ in range(rng.randint(2, 9))))
        truth = {d: rng.choice([0, 0, 1, 1, 2, 3]) for d in docs}  # the group's own levels: no contradiction
        n_sub = 1 if rng.random() < 0.5 else rng.randint(2, 3)
        for s in range(n_sub):
            chosen = docs if n_sub == 1 else rng.sample(docs, rng.randint(2, len(docs)) if len(docs) > 1 else 1)
            scale = rng.choice([1.0, 2.5, 10.0])  # levels differ across sub-groups, their order does not
            level = {d: truth[d] * scale + (0.5 if truth[d] > 0 and scale == 2.5 else 0.0) for d in chosen}
            for d in chosen:
                lines.append(f"{query} u{g} s{s} {d} {level[d]:g}")
            if n_sub == 1 and rng.random() < 0.15:  # a document named twice at one level counts twice
                d = rng.choice(chosen)
                lines.append(f"{query} u{g} s{s} {d} {level[d]:g}")
    return lines


def _qrels_lines(rng: random.Random, query: str, negative: bool) -> list[str]:
    grades = [-1, 0, 0, 1, 1, 2, 3] if negative else [0, 0, 1, 1, 2, 3]
    lines = []
    for g in range(rng.randint(1, 4)):
        for d in dict.fromkeys(_doc(rng) for _ in range(rng.randint(1, 12))):
            lines.append(f"{query} {g} {d} {rng.choice(grades)}")
    return lines


def make_case(seed: int) -> tuple[dict[str, str], list[str]]:
    """({file name: text}, trec_eval's arguments with the names) of case ``seed``."""
    rng = random.Random(seed)
    layout = ["prefs", "qrels_prefs", "qrels_jg"][seed % 3]
    complete = rng.random() < 0.4
    queries = [f"q{i}" for i in rng.sample(range(1, 30), rng.randint(1, 5))]
    judged = []
    for q in queries:
        judged += _prefs_lines(rng, q) if layout == "prefs" else _qrels_lines(rng, q, layout == "qrels_jg")
    rng.shuffle(judged)
    ranked = [q for q in queries if not complete or rng.random() < 0.7] or queries[:1]
    run = []
    for q in [*ranked, "q99"]:  # q99: a ranked query without judgements
        for d in dict.fromkeys(_doc(rng) for _ in range(rng.randint(1, 25))):
            run.append(f"{q} Q0 {d} 0 {rng.choice([1, 2, 2, 3, 3.5, 4, 5])} run{seed}")
    rng.shuffle(run)
    args = ["-q", "-R", layout, "-m", "qrels_jg" if layout == "qrels_jg" else "all_prefs"]
    if complete:
        args.append("-c")
    if rng.random() < 0.3:
        args.append(f"-M{rng.randint(1, 10)}")
    if rng.random() < 0.3:
        args.append("-J")
    if rng.random() < 0.3:  # -l: the relevant grade of qrels_jg; preferences ignore it, as in trec_eval
        args.append("-l2")
    files = {"judgements": "\n".join(judged) + "\n", "run": "\n".join(run) + "\n"}
    return files, [*args, "judgements", "run"]


def embedeval_output(args: list[str], folder: Path) -> tuple[int, str]:
    """(status, stdout) of ``embedeval trec_eval ARGS`` in this process, run in ``folder``."""
    from embedeval.cli import main

    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                status = main(["trec_eval", *args])
            except SystemExit as exc:
                status = exc.code
    finally:
        os.chdir(here)
    return status, out.getvalue()


def compare(seed: int, binary: str) -> str | None:
    """None when both outputs of case ``seed`` are identical, else what differs."""
    files, args = make_case(seed)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name, text in files.items():
            (folder / name).write_text(text)
        want = subprocess.run([binary, *args], cwd=folder, capture_output=True, text=True)
        status, got = embedeval_output(args, folder)
    if want.returncode != 0:
        return f"trec_eval failed ({want.returncode}): {want.stderr.strip()[:200]}"
    if status not in (0, None) or got != want.stdout:
        diff = [(a, b) for a, b in zip(want.stdout.splitlines(), got.splitlines(), strict=False) if a != b]
        return f"{' '.join(args)}: status {status}; first difference {diff[:1]}"
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trec-eval", default=DEFAULT_BINARY, help="trec_eval 10's binary ($TREC_EVAL)")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--first", type=int, default=0, help="the first seed")
    options = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    same = 0
    for seed in range(options.first, options.first + options.cases):
        problem = compare(seed, options.trec_eval)
        same += problem is None
        if problem:
            print(f"case {seed}: {problem}")
    print(f"{same} of {options.cases} cases byte-identical")
    return 0 if same == options.cases else 1


if __name__ == "__main__":
    sys.exit(main())
