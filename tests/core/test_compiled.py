"""The compiled kernels' switches (embedeval._core.compiled): ``enabled`` follows
EMBEDEVAL_KERNELS, ``repaid`` counts the numpy path's work before a kernel is compiled and takes
a kernel found in numba's on-disk cache at once, and ``cached`` tells a cached kernel from one
never compiled or one numba does not cache."""

from __future__ import annotations

import numpy as np
import pytest

from embedeval._core import budget, compiled

numba = pytest.importorskip("numba")


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "auto")
    monkeypatch.setattr(compiled, "_done_by_numpy", {})
    monkeypatch.setattr(compiled, "_found_cached", {})


def test_repaid_after_enough_numpy_work(fresh):
    assert [compiled.repaid("k", 40, 100) for _ in range(4)] == [False, False, False, True]
    assert not compiled.repaid("other", 40, 100)  # each key counts its own work


def test_repaid_never_without_kernels(fresh, monkeypatch):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "numpy")
    assert not any(compiled.repaid("k", 1000, 100) for _ in range(3))


def test_repaid_at_once_when_cached_and_the_call_is_not_tiny(fresh, monkeypatch):
    asked = []

    def cached():
        asked.append(1)
        return True

    monkeypatch.setattr(compiled, "CACHED_FROM", 10)
    assert not compiled.repaid("k", 5, 160, cached)  # below CACHED_FROM: the cache is not looked at
    assert asked == []
    assert compiled.repaid("k", 10, 160, cached)
    assert compiled.repaid("k", 1, 160, cached) and asked == [1]  # looked at once


def test_repaid_counts_on_when_not_cached(fresh, monkeypatch):
    monkeypatch.setattr(compiled, "CACHED_FROM", 10)
    assert [compiled.repaid("k", 60, 160, lambda: False) for _ in range(4)] == [False, False, False, True]


def test_cached_tells_the_cache_apart():
    from embedeval._search import sort_kernels

    sort_kernels.sorted_rows(np.ones((1, 3)), np.empty((1, 3)), np.zeros(1, np.int64))
    assert compiled.cached(sort_kernels._sorted_rows_into)

    @numba.njit  # no cache=True: nothing on disk
    def plain(x):
        return x

    plain(1)
    assert not compiled.cached(plain)
    assert not compiled.cached(sort_kernels._sorted_rows_into, plain)


def test_a_small_ranked_list_evaluation_does_not_import_numba():
    # the Hits reductions' switch is asked at every call; importing numba (0.15-0.2 s) for a
    # call of a few thousand ranks would cost far more than the call
    import subprocess
    import sys

    program = """
import sys
import numpy as np
import embedeval
rng = np.random.default_rng(0)
ranked = np.array([rng.permutation(1000)[:50] for _ in range(100)])
relevant = [set(rng.integers(0, 1000, 10).tolist()) for _ in range(100)]
embedeval.evaluate_rankings(ranked, relevant, metrics=["map", "recall@10", "r_precision"])
print("numba" in sys.modules)
"""
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_small_evaluations_with_deep_classes_compile_nothing(tmp_path):
    """``embedeval reality-check``'s size (2,000 points in two classes: R ~ 1,000, the deep
    ranking) with an empty numba cache: the numpy passes run, so no kernel is compiled (its 1.3 s
    would be most of the call). With the threshold lowered below the call's work, the same call
    compiles the deep pass (the switch is not simply off)."""
    import os
    import subprocess
    import sys

    program = """
import sys
import numpy as np
import embedeval
from embedeval._core import budget
budget.DEEP_FUSED_COMPILED_FROM = int(sys.argv[1])
rng = np.random.default_rng(0)
n = 2000
labels = np.arange(n) % 2
x = rng.standard_normal((n, 2)).astype(np.float32) + labels[:, None]
for _ in range(2):  # the numpy passes' work is counted after each call: a second call may switch
    embedeval.evaluate(x, labels, metrics=["precision@1", "r_precision", "map@r"])
"""

    def compiled_files(threshold: int) -> list[str]:
        cache = tmp_path / f"cache-{threshold}"
        env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
        env.pop(compiled.KERNELS_VARIABLE, None)
        subprocess.run(
            [sys.executable, "-c", program, str(threshold)], capture_output=True, text=True, check=True, env=env
        )
        return sorted(p.name for p in cache.rglob("*.nbi"))

    assert compiled_files(budget.DEEP_FUSED_COMPILED_FROM) == []
    assert any("deep_kernels" in name for name in compiled_files(1))
