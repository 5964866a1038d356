"""Every ```python block of the README and the docs runs as written.

Each Markdown file's python blocks are joined top to bottom into one script (a later block may
use what an earlier one made, as a reader would) and run in a fresh interpreter, in an empty
temporary folder, with this checkout first on the path. A block may be skipped only with a
marker on the line just before its fence that names the reason, for things a test machine
cannot have (a GPU, a cluster):

    <!-- docs-test: skip (needs a GPU) -->

The test fails when a block raises, when a file's blocks take more than the time limit, or when
a skip marker gives no reason.
"""

from __future__ import annotations

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


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_python_blocks_run_top_to_bottom(path: Path, tmp_path: Path):
    blocks, skipped = python_blocks(path)
    assert all(skipped), f"{path.name}: a docs-test skip marker must name its reason"
    script = "\n\n".join(f"# --- block {n}\n{block}" for n, block in enumerate(blocks, 1))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    env["MPLBACKEND"] = "Agg"
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
    )
    if done.returncode and "ImportError" in done.stderr and "pip install 'embedeval[integrations]'" in done.stderr:
        pytest.skip(f"{path.relative_to(ROOT)} needs the integrations extra, not installed here")
    assert done.returncode == 0, f"{path.relative_to(ROOT)}: its python blocks failed\n{done.stderr[-4000:]}"


def test_skip_markers_are_read(tmp_path: Path):
    """The marker grammar itself: a block after a marker is skipped with its reason."""
    text = "x\n<!-- docs-test: skip (needs a GPU) -->\n```python\nraise SystemExit(1)\n```\n```python\nok = 1\n```\n"
    path = tmp_path / "probe.md"
    path.write_text(text, encoding="utf-8")
    blocks, skipped = python_blocks(path)
    assert blocks == ["ok = 1"]
    assert skipped == ["needs a GPU"]
