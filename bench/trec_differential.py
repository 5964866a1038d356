"""``embedeval trec_eval`` against trec_eval 10 itself, byte for byte, on generated files.

    python bench/trec_differential.py /path/to/trec_eval                  # 300 cases
    python bench/trec_differential.py /path/to/trec_eval --cases 50 --seed 7 --keep /tmp/diffs
    python bench/trec_differential.py /path/to/trec_eval --subprocess     # python -m embedeval per case

Each case is a run and a qrels file from ``tests/forms/trec_cases.py``: ids of mixed widths and
scripts (64-bit numbers, unicode letters, unicode spaces inside ids), many tied scores, queries
ranked and never judged or judged and never ranked, grades 0-3; written with spaces or tabs, LF
or CRLF; some with a document listed twice in a query, a blank line in the qrels or a UTF-8
byte-order mark. Both programs run ``-m all_trec`` with a random set of ``-q -c -M -l -J -n``;
their standard output and whether they succeeded are compared.

A difference is put down to one of trec_eval's own failures when the case has its cause and
embedeval's output is trec_eval's own on the files without it (each failure is described in
docs/guides/trec_eval.md); any other is printed with its first differing lines, and with
``--keep`` its files are kept. By default embedeval runs in this process (``embedeval.cli.main``,
the command's own entry point, without a process start per case), once with each of its readers:
numpy's and pyarrow's batch readers (in batches of 512 bytes to 256 KB) and the line reader
(``--reader`` picks one).
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "forms")]
from trec_cases import Case, make_case, write_case  # noqa: E402

# trec_eval's own failures, each recognised by what the case holds and what trec_eval did
FAILURES = {
    "orphan": "a judged query without a run, without -c: trec_eval 10 stops with status 4 after the queries before it",
    "nan": "-J leaves a query without documents: trec_eval prints -nan (0/0) where embedeval prints 0",
    "duplicate": "a document listed twice: trec_eval checks only the queries it evaluates, within the -M cut",
    "blank": "a blank line in the qrels: trec_eval refuses the file ('Malformed line')",
    "bom": "a byte-order mark: trec_eval reads it as part of the first query id",
}


def random_flags(rng: np.random.Generator) -> list[str]:
    flags = ["-m", "all_trec"]
    flags += ["-q"] if rng.random() < 0.6 else []
    flags += ["-c"] if rng.random() < 0.4 else []
    flags += [f"-M{int(rng.integers(1, 30))}"] if rng.random() < 0.3 else []
    flags += [f"-l{int(rng.integers(1, 4))}"] if rng.random() < 0.3 else []
    flags += ["-J"] if rng.random() < 0.25 else []
    flags += ["-n"] if rng.random() < 0.15 else []
    return flags


@dataclasses.dataclass
class Trial:
    """A case written to ``folder``, with what it holds that trec_eval may fail on."""

    case: Case
    folder: Path
    layout: dict
    features: set[str]

    @property
    def files(self) -> tuple[Path, Path]:
        return self.folder / "run", self.folder / "qrels"

    def repaired(self, flags: list[str]) -> tuple[Path, Path]:
        """The same files without what trec_eval fails on: no byte-order mark, no blank line and,
        without -c, no judged query without a run."""
        keep = lambda line: line and ("-c" in flags or line.split(" ")[0] in self.case.run)  # noqa: E731
        fixed = dataclasses.replace(self.case, qrels_lines=[line for line in self.case.qrels_lines if keep(line)])
        return write_case(fixed, self.folder / "repaired", **self.layout)


def write(rng: np.random.Generator, folder: Path) -> Trial:
    """One case's files, written."""
    case = make_case(
        rng,
        unicode=rng.random() < 0.7,
        duplicates=rng.random() < 0.1,
        orphans=rng.random() < 0.3,
        shuffle=rng.random() < 0.5,
    )
    features = {"duplicate"} if "duplicate in run" in case.features else set()
    features |= {"orphan"} if "judged query without run" in case.features else set()
    if rng.random() < 0.04:
        case.qrels_lines.insert(int(rng.integers(len(case.qrels_lines) + 1)), "")
        features.add("blank")
    bom = rng.random() < 0.04
    features |= {"bom"} if bom else set()
    layout = {"sep": str(rng.choice([" ", "\t", "  \t "])), "crlf": rng.random() < 0.2}
    write_case(case, folder, bom=bom, **layout)
    return Trial(case, folder, layout, features)


def run_trec_eval(binary: str, args: list[str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run([binary, *args], capture_output=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


# embedeval's readers, as the environment of a run sets them: numpy's or pyarrow's batch reader
# (from 0 bytes: every file), or the line reader (from no size)
READERS = {
    "numpy": {"EMBEDEVAL_BATCHES_FROM": "0", "EMBEDEVAL_TREC_READER": "numpy"},
    "pyarrow": {"EMBEDEVAL_BATCHES_FROM": "0", "EMBEDEVAL_TREC_READER": "pyarrow"},
    "line": {"EMBEDEVAL_BATCHES_FROM": str(1 << 62)},
}


def run_embedeval(args: list[str], in_process: bool, reader: str = "numpy", batch: int = 1 << 18):
    """embedeval trec_eval's (status, stdout, stderr) with the given reader; ``batch``: a batch
    reader's bytes per batch (in this process only; small ones split queries across batches)."""
    if not in_process:
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        env = {**os.environ, "PYTHONPATH": path, **READERS[reader]}
        done = subprocess.run(
            [sys.executable, "-m", "embedeval", "trec_eval", *args], capture_output=True, env=env, timeout=300
        )
        return done.returncode, done.stdout, done.stderr
    from embedeval._forms.trec import arrow, blocks
    from embedeval.cli import main

    out, err = io.StringIO(), io.StringIO()
    names = ("EMBEDEVAL_BATCHES_FROM", "EMBEDEVAL_TREC_READER")
    before = {name: os.environ.get(name) for name in names}, arrow.BATCH_BYTES, blocks.BLOCK_BYTES
    for name in names:
        os.environ.pop(name, None)
    os.environ.update(READERS[reader])
    arrow.BATCH_BYTES = blocks.BLOCK_BYTES = batch
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["trec_eval", *args])
    except SystemExit as exc:  # argparse's own exits
        status = exc.code if isinstance(exc.code, int) else 1
    finally:
        variables, arrow.BATCH_BYTES, blocks.BLOCK_BYTES = before
        for name, value in variables.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return status, out.getvalue().encode("utf-8"), err.getvalue().encode("utf-8")


def classify(trial: Trial, flags: list[str], theirs, ours, rerun) -> str:
    """'identical', 'both refuse', one of FAILURES' keys, or 'unexplained'. A failure of trec_eval's
    counts only where its cause is in the case and embedeval's output is trec_eval's own on the
    repaired files (``rerun(run, qrels)``: trec_eval's (status, out, err) there; -nan for 0 aside),
    or, for a duplicate, where embedeval refuses it by name."""
    (t_status, t_out, t_err), (o_status, o_out, o_err) = theirs, ours
    if t_status == o_status == 0 and t_out == o_out:
        return "identical"
    if t_status != 0 and o_status != 0:
        return "both refuse"
    if "duplicate" in trial.features and t_status == 0 and b"listed twice" in o_err:
        return "duplicate"
    causes = trial.features & {"bom", "blank", "orphan"}
    if causes:
        fixed = rerun(*trial.repaired(flags))
        if not (fixed[0] == o_status == 0 and _same(fixed[1], o_out, flags)):
            return "unexplained"
        if "bom" in causes:
            return "bom"
        if "blank" in causes and b"Malformed line" in t_err:
            return "blank"
        if "orphan" in causes and t_status == 4 and b"not found in qrels" in t_err:
            return "orphan"
    if t_status == o_status == 0 and "-J" in flags and _same(t_out, o_out, flags):
        return "nan"
    return "unexplained"


def _same(theirs: bytes, ours: bytes, flags: list[str]) -> bool:
    """Equal, or with -J equal but where trec_eval prints -nan (0/0) and embedeval 0."""
    return theirs == ours or ("-J" in flags and _only_nan_lines_differ(theirs, ours))


def _only_nan_lines_differ(theirs: bytes, ours: bytes) -> bool:
    """Whether the outputs differ only where trec_eval prints -nan and embedeval 0."""
    a, b = theirs.split(b"\n"), ours.split(b"\n")
    same = len(a) == len(b) and all(x == y or _nan_for_zero(x, y) for x, y in zip(a, b, strict=True))
    return same and a != b


def _nan_for_zero(theirs: bytes, ours: bytes) -> bool:
    """A query's -nan where embedeval has 0; in the summary, -nan where embedeval has the mean."""
    t, o = theirs.split(b"\t"), ours.split(b"\t")
    same_line = len(t) == len(o) == 3 and t[:2] == o[:2] and t[2].strip() == b"-nan"
    return same_line and (t[1] == b"all" or float(o[2]) == 0)


def first_difference(theirs, ours) -> str:
    if theirs[0] != 0 or ours[0] != 0:
        return f"trec_eval status {theirs[0]} {theirs[2][:200]!r}; embedeval status {ours[0]} {ours[2][:200]!r}"
    a, b = theirs[1].split(b"\n"), ours[1].split(b"\n")
    for x, y in zip(a, b, strict=False):
        if x != y:
            return f"trec_eval {x!r} / embedeval {y!r}"
    return f"{len(a)} lines against {len(b)}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trec_eval", help="a trec_eval 10 binary built from its source")
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="a folder for the files of unexplained differences")
    parser.add_argument("--subprocess", action="store_true", help="run python -m embedeval per case")
    parser.add_argument("--reader", choices=[*READERS, "all"], default="all", help="embedeval's TREC reader")
    args = parser.parse_args()
    readers = list(READERS) if args.reader == "all" else [args.reader]
    counts = {reader: Counter() for reader in readers}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.cases):
            rng = np.random.default_rng([args.seed, i])
            trial = write(rng, Path(tmp) / str(i))
            flags = random_flags(rng)
            batch = int(rng.choice([512, 4096, 1 << 18]))
            words = [*flags, str(trial.files[1]), str(trial.files[0])]
            theirs = run_trec_eval(args.trec_eval, words)
            rerun = lambda r, q, flags=flags: run_trec_eval(args.trec_eval, [*flags, str(q), str(r)])  # noqa: E731
            for reader in readers:
                ours = run_embedeval(words, not args.subprocess, reader, batch)
                verdict = classify(trial, flags, theirs, ours, rerun)
                counts[reader][verdict] += 1
                if verdict == "unexplained":
                    _report(i, reader, trial, flags, theirs, ours, args.keep)
    for reader, count in counts.items():
        print(f"{args.cases} cases, embedeval's {reader} reader: {count['identical']} identical, ", end="")
        print(f"{count['both refuse']} refused by both")
        for key, text in FAILURES.items():
            print(f"  {count[key]:4d}  trec_eval's failure: {text}")
        print(f"  {count['unexplained']:4d}  unexplained")
    return 1 if any(count["unexplained"] for count in counts.values()) else 0


def _report(i: int, reader: str, trial: Trial, flags: list[str], theirs, ours, keep: Path | None) -> None:
    """One line for an unexplained difference; with ``keep``, its files."""
    print(f"case {i}, {reader} ({' '.join(flags)}; {sorted(trial.features)}): {first_difference(theirs, ours)}")
    if keep:
        kept = keep / str(i)
        kept.mkdir(parents=True, exist_ok=True)
        for path in trial.files:
            (kept / path.name).write_bytes(path.read_bytes())
        (kept / "flags").write_text(" ".join(flags) + "\n")


if __name__ == "__main__":
    sys.exit(main())
