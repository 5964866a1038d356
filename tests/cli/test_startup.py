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
    default choice of TREC reader, as a user has it, unless ``env`` sets one)."""
    variables = ("EMBEDEVAL_BATCHES_FROM", "EMBEDEVAL_TREC_READER")
    environment = {k: v for k, v in os.environ.items() if k not in variables}
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
    assert _loaded(code, tmp_path, EMBEDEVAL_BATCHES_FROM="0", EMBEDEVAL_TREC_READER="pyarrow") == ["pyarrow"]


def test_a_run_over_4_mb_is_read_in_batches_without_pyarrow(tmp_path):
    """A run between 4 and 64 MB goes to numpy's reader (pyarrow alone takes 35 MB and its threads
    more, about trec_eval's whole footprint at this size); the numbers are trec_eval's format."""
    lines = (f"q{i // 1000} Q0 d{i % 1000:07d} {i % 1000 + 1} {1000 - i % 1000} r\n" for i in range(200_000))
    (tmp_path / "run").write_text("".join(lines))
    (tmp_path / "qrels").write_text("q0 0 d0000003 1\nq5 0 d0000000 2\n")
    assert (tmp_path / "run").stat().st_size > 4 << 20
    code = (
        "from embedeval._forms.trec.columns import RUN\nfrom embedeval._forms.trec.lines import read\n"
        "assert not read('run', RUN).exact  # a batch reader's hashes, not the line reader's codes\n"
        "from embedeval.cli import main\nassert main(['trec_eval', '-m', 'map', 'qrels', 'run']) == 0"
    )
    assert _loaded(code, tmp_path) == []


def test_metrics_listing_imports_no_search(tmp_path):
    assert _loaded("from embedeval.cli import main\nassert main(['metrics']) == 0", tmp_path) == []
