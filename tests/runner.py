"""The command line as the tests run it: ``python -m embedeval`` on the code of this checkout.

Written once for every test module. It runs this checkout's package (not whichever copy an
``embedeval`` script on the PATH belongs to), from any working directory.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


CLI = [sys.executable, "-m", "embedeval"]  # the argv that starts the command (with cli_env())


def cli_env(**extra) -> dict:
    """The environment in which ``CLI`` runs this checkout's package, plus ``extra`` variables."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, **extra}


def run_cli(*args, cwd=None, input=None) -> subprocess.CompletedProcess:
    """Run ``embedeval ARGS...``; the result has ``returncode``, ``stdout`` and ``stderr`` (text)."""
    return subprocess.run([*CLI, *map(str, args)], capture_output=True, text=True, cwd=cwd, env=cli_env(), input=input)


# A trec_eval 10 binary built from its source outside this repository (fetch usnistgov/trec_eval,
# then make): $TREC_EVAL or $TREC_EVAL_BINARY names it, else the usual place beside the checkout.
# The tests that compare with it skip where it is missing.
TREC_EVAL = os.environ.get("TREC_EVAL") or os.environ.get("TREC_EVAL_BINARY") or "/work/trec_eval_src/trec_eval"
HAS_TREC_EVAL = Path(TREC_EVAL).is_file()
