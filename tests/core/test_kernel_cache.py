"""numba's on-disk cache of the kernels is keyed by the package's sources: an edit anywhere compiles
them again, where numba's own key (the defining file) kept stale machine code."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("numba")

ROOT = Path(__file__).resolve().parents[2]
RUN = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    sys.path.insert(0, sys.argv[1])
    if sys.argv[2] == "stamped":
        from numba.core import caching

        from embedeval._core import compiled

        package = Path(sys.argv[1]) / "kpkg"
        stamp = lambda: compiled.sources_stamp.__wrapped__(package)
        for locator in reversed(compiled.stamped_locators(caching, package, stamp)):
            caching.CacheImpl._locator_classes.insert(0, locator)
    import kpkg.kernel

    print(kpkg.kernel.run(1.0))
    """
)


def _package(root: Path, add: float) -> None:
    (root / "kpkg").mkdir(exist_ok=True)
    (root / "kpkg" / "__init__.py").write_text("")
    helper = f"import numba\n\n\n@numba.njit(inline='always')\ndef helper(x):\n    return x + {add}\n"
    (root / "kpkg" / "helper.py").write_text(helper)
    kernel = (
        "import numba\n\nfrom .helper import helper\n\n\n@numba.njit(cache=True)\ndef run(x):\n    return helper(x)\n"
    )
    (root / "kpkg" / "kernel.py").write_text(kernel)


def _run(root: Path, mode: str) -> float:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(root / "cache"), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(root), mode], capture_output=True, text=True, env=env, check=True
    )
    return float(done.stdout.strip())


def test_an_edit_to_an_inlined_helper_recompiles_with_the_stamp_and_not_without(tmp_path):
    plain, stamped = tmp_path / "plain", tmp_path / "stamped"
    for root in (plain, stamped):
        root.mkdir()
        _package(root, 1.0)
    assert _run(plain, "plain") == 2.0 and _run(stamped, "stamped") == 2.0
    for root in (plain, stamped):
        _package(root, 5.0)  # the helper changes; the kernel's own file does not
    assert _run(plain, "plain") == 2.0  # numba's key: the stale machine code (the trap)
    assert _run(stamped, "stamped") == 6.0  # the package's key: compiled again


def test_every_kernel_module_compiles_under_the_stamp():
    """Each module that compiles kernels imports numba through kernel_numba (no bare import)."""
    package = ROOT / "embedeval"
    for path in package.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        if "njit" in text and path.name != "compiled.py":
            assert "numba = kernel_numba()" in text and "\nimport numba\n" not in text, path


def test_the_stamp_changes_with_any_source(tmp_path):
    from embedeval._core.compiled import sources_stamp

    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    first = sources_stamp.__wrapped__(tmp_path)
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")
    assert sources_stamp.__wrapped__(tmp_path) != first


def test_a_copy_of_the_package_elsewhere_finds_the_same_cache_folder(tmp_path):
    """With NUMBA_CACHE_DIR, a kernel's cache folder is named from its place in the package, not
    from the checkout's absolute path: a fresh clone of the same sources loads what was compiled."""
    from numba.core import caching

    from embedeval._core import compiled

    folders = []
    for root in (tmp_path / "one", tmp_path / "two"):
        (root / "kpkg" / "sub").mkdir(parents=True)
        module = root / "kpkg" / "sub" / "mod.py"
        module.write_text("def f():\n    return 1\n")
        located = next(
            cls
            for cls in compiled.stamped_locators(caching, root / "kpkg", lambda: "stamp")
            if cls.__mro__[1] is caching.UserProvidedCacheLocator
        )
        folders.append(located.get_suitable_cache_subpath(str(module)))
    assert folders[0] == folders[1] == "kpkg_sub"
