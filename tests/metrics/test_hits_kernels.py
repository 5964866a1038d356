"""The compiled reductions of Hits ranks (embedeval._metrics.hits_kernels) against the numpy
expressions they replace: every kernel of embedeval._metrics.kernels that reads them (precision,
recall, R-precision, average precision and its variants) gives identical values, bit for bit,
with the compiled path forced on and off, on ranks with +inf padding, NaN, ties, empty rows,
zero-width arrays, and cutoffs None, an int, or one per query (0 included); the same with
``Hits.ascending`` (rows searched, sums stopped at the cutoff) on the NaN-free kinds; then a whole
evaluate of MAP@R on a deep class, both ways.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from embedeval._core import budget, compiled
from embedeval._metrics import kernels
from embedeval._metrics.kernels import Hits

pytest.importorskip("numba")

KERNELS = [
    kernels.precision,
    kernels.precision_within,
    kernels.recall,
    kernels.capped_recall,
    kernels.r_precision,
    kernels.average_precision,
    kernels.average_precision_over_hits,
    kernels.capped_average_precision,
]


def _hits(rng, kind):
    q, h = int(rng.integers(1, 40)), int(rng.integers(0, 60))
    if h == 0:
        return Hits(np.full((q, 0), np.inf), rng.integers(0, 5, q)), q
    ranks = np.sort(rng.integers(1, 4 * h + 2, (q, h)), axis=1).astype(np.float64)
    found = rng.integers(0, h + 1, q)
    ranks[np.arange(h)[None, :] >= found[:, None]] = np.inf
    if kind == "fractional":  # tie-aware expected ranks
        ranks += np.where(np.isfinite(ranks), rng.integers(0, 4, (q, h)) / 4, 0.0)
    if kind == "nan":
        ranks[rng.random((q, h)) < 0.05] = np.nan
    n_relevant = found + rng.integers(0, 5, q)
    if kind == "nan":
        n_relevant[0] = 0
    return Hits(ranks, n_relevant), q


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("kind", ["ranks", "fractional", "nan", "ascending ranks", "ascending fractional"])
def test_compiled_reductions_equal_the_numpy_ones(monkeypatch, seed, kind):
    rng = np.random.default_rng(seed)
    hits, q = _hits(rng, kind.removeprefix("ascending "))
    if kind.startswith("ascending"):  # fractional ranks of tied integers may not ascend: sorted
        hits = dataclasses.replace(hits, ranks=np.sort(hits.ranks, axis=1), ascending=True)
    width = hits.ranks.shape[1]
    cutoffs = [int(rng.integers(1, 3 * width + 3)), rng.integers(0, 3 * width + 3, q), hits.n_relevant]
    calls = []
    from embedeval._metrics import hits_kernels

    for name in ("within", "precision_sums"):
        original = getattr(hits_kernels, name)
        monkeypatch.setattr(hits_kernels, name, lambda *a, _o=original: calls.append(1) or _o(*a))
    for kernel in KERNELS:
        whole = kernel not in (
            kernels.precision,
            kernels.precision_within,
            kernels.capped_recall,
            kernels.capped_average_precision,
        )
        for cutoff in cutoffs + [None] * whole:
            found = []
            for mode in ("numpy", "auto"):
                monkeypatch.setenv(compiled.KERNELS_VARIABLE, mode)
                monkeypatch.setattr(budget, "HITS_COMPILED_FROM", 0)
                with np.errstate(divide="ignore", invalid="ignore"):
                    found.append(kernel(hits, cutoff))
            np.testing.assert_array_equal(found[0], found[1], err_msg=f"{kernel.__name__} {cutoff}")
            assert found[0].dtype == found[1].dtype
            np.testing.assert_array_equal(np.signbit(found[0]), np.signbit(found[1]))  # 0.0 is not -0.0
    assert calls  # the compiled path ran


def test_map_at_r_of_a_deep_class_is_the_same_both_ways(monkeypatch):
    import embedeval

    rng = np.random.default_rng(3)
    x = rng.standard_normal((600, 8)).astype(np.float32)
    labels = (rng.random(600) < 0.7).astype(np.int64)  # a class of about 420
    x[labels == 1] += 0.5
    metrics = ["precision@1", "r_precision", "map@r", "map", "mrr"]
    found = []
    for mode in ("numpy", "auto"):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, mode)
        monkeypatch.setattr(budget, "HITS_COMPILED_FROM", 0)
        result = embedeval.evaluate(x, labels, metrics=metrics).to_dict()
        found.append([result[m] for m in metrics])
    assert found[0] == found[1]


@pytest.mark.parametrize("seed", range(10))
def test_finite_count_is_numpys_both_ways(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    kind = ("ranks", "fractional", "nan")[seed % 3]
    hits, _ = _hits(rng, kind)
    want = np.count_nonzero(np.isfinite(hits.ranks), axis=1)
    for mode, ascending in (("numpy", False), ("auto", False), ("auto", kind != "nan")):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, mode)
        monkeypatch.setattr(budget, "HITS_COMPILED_FROM", 0)
        got = kernels.finite_count(hits.ranks, ascending)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == want.dtype
