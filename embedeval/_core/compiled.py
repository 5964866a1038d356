"""The compiled kernel layer's switch: numba where it is installed, numpy otherwise.

Fused per-row (per-tile) passes that follow a BLAS product are written as plain loops in kernel
modules that import numba at their top (``*_kernels.py``, imported only when :func:`enabled`) and
compiled by numba (``pip install 'embedeval[fast]'``) on first use, cached on disk
(``cache=True``: a later process loads the machine code instead of compiling). Without numba, or
with the environment variable ``EMBEDEVAL_KERNELS=numpy``, the same steps run as numpy passes;
the test suite runs both on the same cases and requires identical results.
"""

from __future__ import annotations

import functools
import os

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


# Work (in a kernel's own units) each repaid() key's numpy path has done in this process.
_done_by_numpy: dict[str, int] = {}


def repaid(key: str, units: int, after: int) -> bool:
    """Whether a compiled path (``key``) should run ``units`` of work: compiled kernels are on and
    its numpy twin has already done ``after`` units in this process.

    A kernel whose compilation (cold cache) would cost more than the small calls it serves save
    is compiled only once the process has shown it does enough of that work to repay it; both
    paths give identical results, so only speed depends on the switch. A race between threads
    only delays it.
    """
    if not enabled():
        return False
    done = _done_by_numpy.get(key, 0)
    if done >= after:
        return True
    _done_by_numpy[key] = done + units
    return False
