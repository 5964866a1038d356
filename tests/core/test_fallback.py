"""Where numba has no wheels, embedeval installs without it and runs the numpy passes: the
dependency's marker leaves it out there, and in a process where numba cannot be imported every
route (whole rankings, tie-aware values, pair verification) still runs, on the numpy passes, and
gives the values of a process that has numba. (That the compiled kernels equal the numpy passes
on the same cases is the kernel tests' job: tests/search/test_deep_fused.py and others.)"""

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
                 "pairs": dict(metrics=["pair_auroc", "eer"])}.items():
    r = embedeval.evaluate(x, labels, **kw)
    out[name] = {m: np.asarray(v, dtype=float).tolist() for m, v in (r.per_query or {}).items()}
    out[name + "_summary"] = {m: float(v) for m, v in r.summary.items()}
print(json.dumps(out))
"""


def _run(hide_numba: bool) -> dict:
    prefix = "import sys; sys.modules['numba'] = None\n" if hide_numba else ""
    out = subprocess.run([sys.executable, "-c", prefix + SCRIPT], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_without_numba_the_numpy_passes_give_the_compiled_values():
    pytest.importorskip("numba")
    fallback, compiled = _run(hide_numba=True), _run(hide_numba=False)
    assert fallback.pop("enabled") is False and compiled.pop("enabled") is True
    for key, values in compiled.items():
        for metric, value in values.items():
            np.testing.assert_array_equal(fallback[key][metric], value, err_msg=f"{key} {metric}")
