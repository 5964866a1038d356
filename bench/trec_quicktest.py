"""Run trec_eval 10's ``make quicktest`` with ``embedeval trec_eval`` in place of ``./trec_eval``.

    python bench/trec_quicktest.py /path/to/trec_eval        # a checkout of usnistgov/trec_eval 10
    python bench/trec_quicktest.py --trec-eval /path/to/trec_eval/trec_eval   # the same, by its binary

Each ``./trec_eval ARGS | diff - test/EXPECTED`` line of the Makefile's ``quicktest`` target is
run as ``python -m embedeval trec_eval ARGS`` from that folder (this checkout's embedeval), and
its output compared byte for byte with the expected file. One line per command: PASS, or FAIL
with the number of differing lines and the first difference (or the error); all 15 commands,
the preference formats (``-R prefs``, ``qrels_prefs``, ``qrels_jg``) included. Nothing of
trec_eval is shipped with embedeval; its test files are read where they are.
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def quicktest_lines(makefile: Path) -> list[tuple[list[str], str]]:
    """(trec_eval's arguments, the expected output file) of each quicktest command."""
    lines, inside = [], False
    for line in makefile.read_text().splitlines():
        if line.startswith("quicktest:"):
            inside = True
            continue
        if inside and not line.startswith("\t"):
            break
        match = re.match(r"\t\./trec_eval (.*?)\s*\|\s*diff - (\S+)", line) if inside else None
        if match:
            lines.append((shlex.split(match[1]), match[2]))
    return lines


def run_one(folder: Path, args: list[str], expected: str) -> tuple[bool, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(
        [sys.executable, "-m", "embedeval", "trec_eval", *args], cwd=folder, capture_output=True, env=env
    )
    want = (folder / expected).read_bytes()
    if done.returncode != 0:
        return False, f"exit {done.returncode}: {done.stderr.decode(errors='replace').strip().splitlines()[:1]}"
    if done.stdout == want:
        return True, f"{len(want.splitlines())} lines identical"
    got, exp = done.stdout.decode().splitlines(), want.decode().splitlines()
    diff = [
        d for d in difflib.unified_diff(exp, got, lineterm="", n=0) if d[:1] in "+-" and d[:3] not in ("+++", "---")
    ]
    return False, f"{len(diff)} differing lines; first: {diff[:2]}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "trec_eval_folder", type=Path, nargs="?", help="a checkout of trec_eval 10 (its Makefile and test/)"
    )
    parser.add_argument("--trec-eval", type=Path, help="trec_eval's binary, in the checkout's top folder")
    options = parser.parse_args()
    if (options.trec_eval_folder is None) == (options.trec_eval is None):
        parser.error("give the checkout's folder or --trec-eval BINARY (one of them)")
    folder = options.trec_eval_folder or options.trec_eval.resolve().parent
    commands = quicktest_lines(folder / "Makefile")
    passed = 0
    for args, expected in commands:
        ok, note = run_one(folder, args, expected)
        passed += ok
        print(f"{'PASS' if ok else 'FAIL'}  trec_eval {' '.join(args)}  ({expected}: {note})")
    print(f"{passed} of {len(commands)} quicktest commands byte-identical")
    return 0 if passed == len(commands) else 1


if __name__ == "__main__":
    sys.exit(main())
