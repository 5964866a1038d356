"""What a command imports: the trec_eval drop-in and ``import embedeval`` load no heavy module
they do not use (faiss, matplotlib, pandas, numba, pyarrow), whatever else is installed."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

HEAVY = ("faiss", "matplotlib", "pandas", "numba", "pyarrow", "scipy", "torch")


def _loaded(code: str, cwd, **env) -> list[str]:
    """The heavy top-level modules loaded once ``code`` has run in a fresh interpreter (with the
    default threshold for pyarrow's reader, as a user has it, unless ``env`` sets one)."""
    environment = {k: v for k, v in os.environ.items() if k != "EMBEDEVAL_ARROW_FROM"}
    environment.update(env)
    script = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}})))"
    out = subprocess.run([sys.executable, "-c", script], cwd=cwd, env=environment, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return [m for m in json.loads(out.stdout.splitlines()[-1]) if m in HEAVY]


def test_import_embedeval_loads_nothing_heavy(tmp_path):
    assert _loaded("import embedeval", tmp_path) == []


def test_the_public_names_still_load_on_first_use(tmp_path):
    code = "import embedeval\nfrom embedeval import evaluate, EvaluationResult\nassert callable(evaluate)"
    assert "faiss" in _loaded(code, tmp_path)  # evaluate's module needs faiss, and gets it


@pytest.mark.parametrize("measures", [[], ["-m", "all_trec"], ["-q", "-m", "map", "-m", "ndcg_cut.10"]])
def test_the_trec_eval_drop_in_imports_only_what_it_uses(tmp_path, measures):
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 9.5 r\n1 Q0 d2 2 9.1 r\n2 Q0 d4 1 3 r\n")
    argv = ["trec_eval", *measures, "qrels", "run"]
    code = f"from embedeval.cli import main\nassert main({argv!r}) == 0"
    assert _loaded(code, tmp_path) == []


@pytest.mark.parametrize("measures", [["-m", "all_trec"], ["-q", "-J", "-M", "2"]])
def test_files_read_by_pyarrow_load_no_pandas(tmp_path, measures):
    """pyarrow's conversions (``to_numpy``, ``pyarrow.array`` of a list) import pandas where it is
    installed; the readers build their arrays from buffers instead (both files hashed here)."""
    (tmp_path / "qrels").write_text("1 0 d1 1\n1 0 d2 0\n2 0 d3 2\n2 0 d9 1\n")
    (tmp_path / "run").write_text("1 Q0 d1 1 9.5 r\n1 Q0 d2 2 9.1 r\n2 Q0 d4 1 3 r\n2 Q0 d9 2 2 r\n")
    argv = ["trec_eval", *measures, "qrels", "run"]
    code = f"from embedeval.cli import main\nassert main({argv!r}) == 0"
    assert _loaded(code, tmp_path, EMBEDEVAL_ARROW_FROM="0") == ["pyarrow"]


def test_metrics_listing_imports_no_search(tmp_path):
    assert _loaded("from embedeval.cli import main\nassert main(['metrics']) == 0", tmp_path) == []
