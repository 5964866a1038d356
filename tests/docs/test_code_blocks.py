"""Every ```python block of the README and the docs runs as pasted, on its own.

A reader copies one block, not the page: each block runs alone in a fresh interpreter, in an
empty temporary folder, with this checkout first on the path, so a block that uses a name or a
file an earlier block made fails. A block is skipped when it needs an optional framework that
is not installed (its import fails: ``No module named ...`` for a module this environment
lacks, or embedeval's own ``pip install 'embedeval[...]'`` message), or with a marker on the
line just before its fence that names the reason, for things a test machine cannot have (a
GPU, an MLflow run):

    <!-- docs-test: skip (needs a GPU) -->

The test fails when a block raises, takes more than the time limit, or when a skip marker gives
no reason.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SKIP = re.compile(r"<!--\s*docs-test:\s*skip\s*\((?P<reason>[^)]*)\)\s*-->")
FENCE = re.compile(r"^```python\s*$")


def markdown_files() -> list[Path]:
    docs = [p for p in sorted((ROOT / "docs").rglob("*.md")) if "_build" not in p.parts]
    return [ROOT / "README.md", *docs]


def python_blocks(path: Path) -> tuple[list[str], list[str]]:
    """The file's python blocks in order, and the reasons of the skipped ones."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, skipped, i = [], [], 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            marker = SKIP.search(lines[i - 1]) if i > 0 else None
            if marker:
                skipped.append(marker["reason"].strip())
            else:
                blocks.append("\n".join(lines[i + 1 : end]))
            i = end
        i += 1
    return blocks, skipped


FILES = [p for p in markdown_files() if any(FENCE.match(line) for line in p.read_text(encoding="utf-8").splitlines())]


def test_the_readme_and_the_docs_have_python_blocks():
    names = {p.relative_to(ROOT).as_posix() for p in FILES}
    assert "README.md" in names
    assert "docs/quickstart.md" in names


BLOCKS = [(path, n, block) for path in FILES for n, block in enumerate(python_blocks(path)[0], 1)]
_MISSING = re.compile(r"No module named '(?P<module>[^'.]+)")


def _missing_framework(stderr: str) -> str | None:
    """The optional framework a failed block lacks, or None when it failed for another reason."""
    if "ImportError" in stderr and "pip install 'embedeval[" in stderr:
        return stderr.rsplit("pip install ", 1)[1].split()[0]
    missing = _MISSING.search(stderr)
    if missing and importlib.util.find_spec(missing["module"]) is None:
        return missing["module"]
    return None


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_skip_markers_name_a_reason(path: Path):
    _, skipped = python_blocks(path)
    assert all(skipped), f"{path.name}: a docs-test skip marker must name its reason"


@pytest.mark.parametrize(
    ("path", "n", "block"), BLOCKS, ids=[f"{p.relative_to(ROOT).as_posix()}#{n}" for p, n, _ in BLOCKS]
)
def test_each_python_block_runs_as_pasted(path: Path, n: int, block: str, tmp_path: Path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env["MPLBACKEND"] = "Agg"
    done = subprocess.run(
        [sys.executable, "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    if done.returncode and (framework := _missing_framework(done.stderr)):
        pytest.skip(f"{path.relative_to(ROOT)} block {n} needs {framework}, not installed here")
    assert done.returncode == 0, f"{path.relative_to(ROOT)} block {n} fails when run on its own\n{done.stderr[-4000:]}"


def test_a_block_that_leans_on_an_earlier_one_fails(tmp_path: Path):
    """What the test is for: a block using a name an earlier block defined does not run alone."""
    path = tmp_path / "probe.md"
    path.write_text("```python\nx = 1\n```\n\n```python\nprint(x)\n```\n", encoding="utf-8")
    blocks, _ = python_blocks(path)
    done = subprocess.run([sys.executable, "-c", blocks[1]], cwd=tmp_path, capture_output=True, text=True)
    assert done.returncode != 0 and "NameError" in done.stderr and _missing_framework(done.stderr) is None


def test_missing_frameworks_are_told_apart_from_errors():
    assert _missing_framework("ModuleNotFoundError: No module named 'surely_not_installed_xyz'") == (
        "surely_not_installed_xyz"
    )
    assert _missing_framework("ModuleNotFoundError: No module named 'numpy'") is None  # installed: a real error
    assert _missing_framework("NameError: name 'rng' is not defined") is None


def test_skip_markers_are_read(tmp_path: Path):
    """The marker grammar itself: a block after a marker is skipped with its reason."""
    text = "x\n<!-- docs-test: skip (needs a GPU) -->\n```python\nraise SystemExit(1)\n```\n```python\nok = 1\n```\n"
    path = tmp_path / "probe.md"
    path.write_text(text, encoding="utf-8")
    blocks, skipped = python_blocks(path)
    assert blocks == ["ok = 1"]
    assert skipped == ["needs a GPU"]


def test_local_clusters_start_without_the_fixed_dashboard_port():
    """A LocalCluster started by a test or a docs block names its dashboard address (None or
    ":0"): Dask's default port 8787 is often taken, and then every run prints a warning."""
    sources = {p: p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py")}
    sources.update({p: "\n".join(python_blocks(p)[0]) for p in FILES})
    calls = [
        (path, text[m.end() : m.end() + 400].split(")")[0])
        for path, text in sources.items()
        for m in re.finditer(r"LocalCluster\(", text)
    ]
    fixed = [p.relative_to(ROOT).as_posix() for p, args in calls if "dashboard_address" not in args]
    assert calls and not fixed, f"LocalCluster without dashboard_address: {fixed}"


def test_the_quickstart_table_of_default_metrics_is_the_codes():
    """The quickstart's plain Markdown table of default metrics equals what the code declares."""
    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    try:
        from embedeval_docs import default_metrics_table
    finally:
        sys.path.pop(0)
    page = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")
    assert "\n".join(default_metrics_table()) in page
