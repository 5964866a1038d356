"""The deep ranking's compiled count (embedeval._search.deep_fused, numba) against the numpy
passes: identical ranks on the same cases (ties and duplicates on a lattice, float32 near-ties far
from the origin, a dominant class, ignored references, every precision, blocks of any size), and
both against a full stable float64 sort."""

from __future__ import annotations

import numpy as np
import pytest
from test_deep import Codes, assert_ranks_equal, class_codes, expected, searched, vectors

from embedeval._core import compiled
from embedeval._search import deep_fused
from embedeval._search.deep import DeepRanker

pytest.importorskip("numba")


def ranks_both_ways(monkeypatch, x, codes, depth, ignored, **options):
    """(numpy ranks, compiled ranks, rows the compiled count handled, rows it handed back)."""
    calls = {"rows": 0, "redone": 0}
    count = deep_fused.count

    def spied(block, mixed, rows, top, threshold):
        calls["rows"] += rows.size
        ranks, short = count(block, mixed, rows, top, threshold)
        return ranks, short

    def spied_redo(self, values, mixed, rows, top, threshold, fused=True):
        if not fused:
            calls["redone"] += rows.size
        return original(self, values, mixed, rows, top, threshold, fused)

    from embedeval._search.deep_block import Block

    original = Block._count
    monkeypatch.setattr(deep_fused, "count", spied)
    monkeypatch.setattr(Block, "_count", spied_redo)
    found = []
    for kernels in ("numpy", "auto"):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, kernels)
        ranker = DeepRanker(x, True, codes, **options)
        counts = np.bincount(codes)[codes] - (ignored is not None)
        marked = Codes(codes, codes).marked(np.arange(len(x)), counts)
        found.append(ranker.ranks(x, marked, depth, None, ignored))
    return found[0], found[1], calls


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("precision", ["auto", "float64", "mixed"])
def test_compiled_count_equals_the_numpy_passes_and_a_full_sort(monkeypatch, seed, precision):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 200)), int(rng.integers(1, 6))
    x, _ = searched(vectors(rng, n, d, ("lattice", "far", "normal")[seed % 3]), "euclidean")
    codes = class_codes(rng, n, ("dominant", "singletons", "few")[(seed // 3) % 3])
    depth = rng.integers(1, n, n) if seed % 2 else np.full(n, n - 1)  # random depths, or whole rankings
    ignored = np.arange(n)[:, None]
    options = {"precision": precision, "block_elements": int(rng.integers(1, 4 * n * n))}
    (ranks_np, _), (ranks_c, _), calls = ranks_both_ways(monkeypatch, x, codes, depth, ignored, **options)
    np.testing.assert_array_equal(ranks_c, ranks_np)
    assert calls["rows"] > 0
    relevant = codes[:, None] == codes[None, :]
    want = expected(x, x, "euclidean", relevant, depth, [{i} for i in range(n)])[0]
    assert_ranks_equal((ranks_c, None), want)


def test_near_ties_are_handed_back_and_ranked_exactly(monkeypatch):
    """Crowded float32 values far from the origin and a lattice: rows with near-ties go back to
    the numpy passes (the test fails if none does), and the ranks still equal theirs."""
    rng = np.random.default_rng(3)
    redone = 0
    for x in (
        (1000 + 1e-3 * rng.standard_normal((300, 2))).astype(np.float32),
        rng.integers(-2, 3, size=(300, 3)).astype(np.float32),
    ):
        codes = np.where(rng.random(300) < 0.5, 0, rng.integers(1, 4, 300))
        depth = np.full(300, 299)
        (ranks_np, _), (ranks_c, _), calls = ranks_both_ways(
            monkeypatch, x, codes, depth, np.arange(300)[:, None], precision="mixed"
        )
        np.testing.assert_array_equal(ranks_c, ranks_np)
        redone += calls["redone"]
    assert redone > 0


def test_the_compiled_count_is_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "numpy")
    assert not compiled.enabled()
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "auto")
    assert compiled.enabled()
