"""The compiled kernel layer's switch: numba where it is installed, numpy otherwise.

Fused per-row (per-tile) passes that follow a BLAS product are written as plain loops in kernel
modules that import numba at their top (``*_kernels.py``, imported only when :func:`enabled`) and
compiled by numba (a runtime dependency where it has wheels) on first use, cached on disk
(``cache=True``: a later process loads the machine code instead of compiling). Kernel modules
import numba through :func:`kernel_numba`, which keys that cache by the sources of the whole
package (:func:`sources_stamp`): numba's own key is the one file that defines a function, so an
edit to a helper inlined from another module, or to a constant a kernel reads, used to leave the
old machine code in use. Without numba, or
with the environment variable ``EMBEDEVAL_KERNELS=numpy``, the same steps run as numpy passes;
the test suite runs both on the same cases and requires identical results.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import os
import sys
from pathlib import Path

KERNELS_VARIABLE = "EMBEDEVAL_KERNELS"


def enabled() -> bool:
    """Whether compiled kernels are used: numba importable and ``EMBEDEVAL_KERNELS`` not "numpy"
    (read at every call, so that a test or a benchmark may switch)."""
    if os.environ.get(KERNELS_VARIABLE, "auto") == "numpy":
        return False
    return _numba() is not None


@functools.cache
def _numba():
    try:
        import numba
    except ImportError:
        return None
    return numba


PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache
def sources_stamp(package: Path = PACKAGE) -> str:
    """SHA-256 of every ``.py`` file of ``package`` (paths and contents, in sorted order): the key
    of the compiled kernels' cache, so that any edit of the package's code compiles them again."""
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(str(path.relative_to(package)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def stamped_locators(caching, package: Path, stamp) -> list:
    """numba cache locators for the functions defined under ``package``, whose source stamp is
    ``stamp()`` instead of the defining file's: one before each of numba's file-backed locators
    (user-provided directory, in-tree ``__pycache__``, user-wide), each declining other files."""
    made = []
    for base in (caching.UserProvidedCacheLocator, caching.InTreeCacheLocator, caching.UserWideCacheLocator):

        class Stamped(base):
            @classmethod
            def from_function(cls, py_func, py_file):
                try:
                    inside = Path(py_file).resolve().is_relative_to(package)
                except (OSError, ValueError):
                    inside = False
                return super().from_function(py_func, py_file) if inside else None

            def get_source_stamp(self):
                return stamp()

            @classmethod
            def get_suitable_cache_subpath(cls, py_file):
                # The same folder wherever the package sits (a clone elsewhere finds the entries
                # a run of the same sources left in NUMBA_CACHE_DIR): the stamp keeps them fresh.
                parts = Path(py_file).resolve().parent.relative_to(package).parts
                return "_".join((package.name, *parts))

        Stamped.__name__ = Stamped.__qualname__ = f"PackageStamped{base.__name__}"
        made.append(Stamped)
    return made


@functools.cache
def kernel_numba():
    """numba, with the package's stamped cache locators in force (:func:`stamped_locators`):
    every kernel module imports numba through this, before it compiles anything."""
    numba = _numba()
    from numba.core import caching

    classes = caching.CacheImpl._locator_classes
    for locator in reversed(stamped_locators(caching, PACKAGE, sources_stamp)):
        base = locator.__mro__[1]
        classes.insert(classes.index(base) if base in classes else 0, locator)
    return numba


# Work (in a kernel's own units) each repaid() key's numpy path has done in this process, and
# whether its kernels were found in numba's on-disk cache (looked at by calls of CACHED_FROM
# units or more, by default: smaller ones do not import numba for it).
CACHED_FROM = 1 << 20
_done_by_numpy: dict[str, int] = {}
_found_cached: dict[str, bool] = {}


def repaid(key: str, units: int, after: int, cached=None, cached_from: int | None = None) -> bool:
    """Whether a compiled path (``key``) should run ``units`` of work: compiled kernels are on, and
    its kernels are in numba's cache or its numpy twin has done ``after`` units in this process.

    A kernel whose compilation (cold cache) would cost more than the small calls it serves save
    is compiled only once the numpy path has spent about that compilation's time (``after``
    units: a ski-rental rule, never more than twice the better choice's time), so that a small
    evaluation never compiles it. Where ``cached`` (a function of no argument: whether the
    kernels are in numba's on-disk cache, see :func:`cached`) says so, loading them costs
    milliseconds and a call of at least ``cached_from`` units (default :data:`CACHED_FROM`; less
    where the caller has imported numba anyway) takes them at once; while numba is not imported
    yet (its import is not free), only a call of ``after`` units looks. Nothing here imports
    numba before one of those. Both paths give identical results, so only speed depends on the
    switch; a race between threads only delays it.
    """
    done = _done_by_numpy.get(key, 0)
    if done >= after or _found_cached.get(key, False):
        return enabled()
    if cached is not None and key not in _found_cached:
        floor = CACHED_FROM if cached_from is None else cached_from
        if units >= (floor if "numba" in sys.modules else max(floor, after)):
            if not enabled():
                return False
            _found_cached[key] = bool(cached())
            if _found_cached[key]:
                return True
    _done_by_numpy[key] = done + units
    return False


def cached(*dispatchers) -> bool:
    """Whether numba's on-disk cache holds an index for each of the compiled functions
    ``dispatchers`` (their machine code then loads in milliseconds; an index left by an older
    version of the source means a compilation all the same, as it would without this check);
    False where numba's internals differ from those it was written against (numba 0.68)."""
    try:
        return all(os.path.exists(d._cache._cache_file._index_path) for d in dispatchers)
    except AttributeError:
        return False


def in_cache(module: str, *names: str):
    """A function of no argument for :func:`repaid`'s ``cached``: whether the compiled functions
    ``names`` of the kernel module ``module`` (imported only when it is called: it imports
    numba) are in numba's on-disk cache (:func:`cached`)."""

    def look() -> bool:
        kernels = importlib.import_module(module)
        return cached(*(getattr(kernels, name) for name in names))

    return look
