"""Where numba has no wheels, embedeval installs without it and runs the numpy passes: the
dependency's marker leaves it out there, and in a process where numba cannot be imported every
route (whole rankings, the deep ranking from either side, tie-aware values, pair verification)
still runs, on the numpy passes, and gives the values of a process that has numba, whose every
compiled path is taken from the first value (it reports which kernels ran, so that the test
fails if the comparison is numpy against numpy). (That the compiled kernels equal the numpy
passes on many more cases is the kernel tests' job: tests/search/test_deep_fused.py and others.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

tomllib = pytest.importorskip("tomllib")
requirements = pytest.importorskip("packaging.requirements")

ROOT = Path(__file__).parents[2]


def _dependency(name: str):
    for line in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]:
        requirement = requirements.Requirement(line)
        if requirement.name == name:
            return requirement
    raise AssertionError(f"{name} is not a runtime dependency")


def _environment(**changes) -> dict[str, str]:
    base = {"platform_python_implementation": "CPython", "python_version": "3.11", "platform_machine": "x86_64"}
    return {**base, **changes}


@pytest.mark.parametrize(
    ("changes", "installed"),
    [
        ({}, True),
        ({"platform_machine": "aarch64"}, True),
        ({"platform_machine": "AMD64"}, True),
        ({"platform_machine": "arm64", "python_version": "3.13"}, True),
        ({"platform_machine": "ppc64le"}, False),
        ({"platform_machine": "s390x"}, False),
        ({"platform_machine": "i686"}, False),
        ({"platform_python_implementation": "PyPy"}, False),
        ({"python_version": "3.15"}, False),
    ],
)
def test_numba_is_a_dependency_only_where_it_has_wheels(changes, installed):
    assert _dependency("numba").marker.evaluate(_environment(**changes)) is installed


SCRIPT = """
import json, sys
import numpy as np
import embedeval
from embedeval._core import compiled
rng = np.random.default_rng(0)
labels = rng.integers(0, 4, size=700)
x = (rng.standard_normal((4, 8))[labels] + rng.standard_normal((700, 8))).astype(np.float32)
x[::7] = x[1::7]  # exact copies: ties
out = {"enabled": compiled.enabled()}
for name, kw in {"whole": dict(metrics=["map", "mrr"]), "ties": dict(metrics=["map@r", "mrr"], ties="expected"),
                 "musgrave": dict(metrics=["precision@1", "r_precision", "map@r"]),
                 "pairs": dict(metrics=["pair_auroc", "eer"])}.items():
    r = embedeval.evaluate(x, labels, **kw)
    out[name] = {m: np.asarray(v, dtype=float).tolist() for m, v in (r.per_query or {}).items()}
    out[name + "_summary"] = {m: float(v) for m, v in r.summary.items()}
if compiled.enabled():
    import importlib
    ran = {}
    for module, kernel in KERNELS:
        ran[kernel] = bool(getattr(importlib.import_module(module), kernel).signatures)
    out["ran"] = ran
print(json.dumps(out))
"""
# Every compiled path from the first value, and the deep ranking from the others' side from J = 64
FORCED = """
from embedeval._core import compiled as _compiled
_compiled.repaid = lambda key, units, after, cached=None, cached_from=None: _compiled.enabled()
from embedeval._core import budget as _budget
_budget.MERGED_FROM = 64
"""
KERNELS = [
    ("embedeval._search.deep_kernels", "_place_chunk_into"),
    ("embedeval._search.merged_kernels", "_merged_rows_into"),
    ("embedeval._search.merged_kernels", "_guesses_into"),
    ("embedeval._metrics.hits_kernels", "_precision_sums_into"),
    ("embedeval._search.tied_kernels", "_window_pass_into"),
    ("embedeval._setlevel.pair_kernels", "tile_pass"),
    ("embedeval._search.exact_kernels", "_pair_values_into"),
]


def _run(hide_numba: bool) -> dict:
    prefix = "import sys; sys.modules['numba'] = None\n" if hide_numba else FORCED
    script = prefix + f"KERNELS = {KERNELS!r}\n" + SCRIPT
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_without_numba_the_numpy_passes_give_the_compiled_values():
    pytest.importorskip("numba")
    fallback, compiled = _run(hide_numba=True), _run(hide_numba=False)
    assert fallback.pop("enabled") is False and compiled.pop("enabled") is True
    ran = compiled.pop("ran")
    assert all(ran.values()), ran  # the compiled process took every compiled path named
    for key, values in compiled.items():
        for metric, value in values.items():
            np.testing.assert_array_equal(fallback[key][metric], value, err_msg=f"{key} {metric}")
