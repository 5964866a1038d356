"""The deep ranking of one large class from the others' side (embedeval._search.deep_merged, numba)
against the sorted path's numpy passes and a full stable float64 sort: ties and duplicates on a
lattice (near-ties ranked exactly), crowded values far from the origin, a dominant class, ignored
references inside and outside the class, random depths, only the first few relevant references,
sampled thresholds too tight (rows ranked again), others past the guessed room (listed again);
its compiled pass against a slow count of each relevant value's place among the others; and an
evaluate whose large class takes the path at the default switch, against a full float64 sort."""

from __future__ import annotations

import numpy as np
import pytest
from test_deep import Codes, assert_ranks_equal, expected, searched, vectors

from embedeval._core import budget as _budget
from embedeval._core import compiled
from embedeval._search import deep_merged
from embedeval._search.deep import DeepRanker

pytest.importorskip("numba")


def ranks_both_ways(monkeypatch, x, codes, depth, ignored, first=None, **options):
    """(numpy passes' ranks, merged ranks, rows the merged path ranked)."""
    taken = {"rows": 0}
    original = deep_merged.ranks

    def spied(block, *into):
        out = original(block, *into)
        taken["rows"] += 0 if out is None else len(block.queries)
        return out

    monkeypatch.setattr(deep_merged, "ranks", spied)
    monkeypatch.setattr(_budget, "MERGED_FROM", 1)
    monkeypatch.setattr(_budget, "DEEP_FUSED_COMPILED_FROM", 0)
    found = []
    for kernels in ("numpy", "auto"):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, kernels)
        ranker = DeepRanker(x, True, codes, **options)
        same = (ignored >= 0) & (codes[np.maximum(ignored, 0)] == codes[:, None])
        counts = np.bincount(codes)[codes] - np.count_nonzero(same, axis=1)
        marked = Codes(codes, codes).marked(np.arange(len(x)), counts)
        found.append(ranker.ranks(x, marked, depth, first, ignored)[0])
    return found[0], found[1], taken["rows"]


@pytest.mark.parametrize("seed", range(24))
def test_merged_ranks_equal_the_numpy_passes_and_a_full_sort(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(200, 400)), int(rng.integers(1, 6))
    x, _ = searched(vectors(rng, n, d, ("lattice", "far", "normal")[seed % 3]), "euclidean")
    codes = np.where(rng.random(n) < rng.uniform(0.4, 0.9), 0, rng.integers(1, 5, n))
    # random depths the sample can reach, or nearly whole rankings (the sorted path, mostly)
    depth = rng.integers(1, max(2, n // 3), n) if seed % 2 else np.full(n, n - 2)
    ignored = np.arange(n)[:, None]
    if seed % 4 >= 2:  # one more ignored reference per row, of its class or another
        ignored = np.column_stack([np.arange(n), (np.arange(n) + rng.integers(1, n, n)) % n])
    first = rng.integers(1, 6, n) if seed % 6 == 5 else None  # J below the class: a selection
    if seed % 5 == 4:
        monkeypatch.setattr(_budget, "MERGED_ROOM", 0)  # rows past the guessed room listed again
    # guesses from the relevant values counted exactly, or every value estimated from the sample
    monkeypatch.setattr(deep_merged, "_counts_pay", lambda *_, counts=bool(seed // 2 % 2): counts)
    options = {
        "precision": ("auto", "float64", "mixed")[(seed // 3) % 3],  # mixed: the others listed in float32
        "block_elements": int(rng.integers(n, 4 * n * n)),
        "sample_sigmas": float(rng.uniform(-3, 3)),  # below 0: many sampled thresholds too tight
        "sample_columns": int(rng.integers(16, 64)),  # n // 16 at most: 12 to 24
    }
    ranks_np, ranks_m, taken = ranks_both_ways(monkeypatch, x, codes, depth, ignored, first, **options)
    assert taken > 0 or not seed % 2
    np.testing.assert_array_equal(ranks_m, ranks_np)
    relevant = codes[:, None] == codes[None, :]
    ignored_sets = [set(row[row >= 0].tolist()) for row in ignored]
    want = expected(x, x, "euclidean", relevant, depth, ignored_sets, first)[0]
    assert_ranks_equal((ranks_m, None), want)


def test_near_ties_are_ranked_exactly(monkeypatch):
    """A lattice and crowded values: near-ties found (the test fails if no row has one)."""
    from embedeval._search import merged_kernels

    rng = np.random.default_rng(5)
    original = merged_kernels.merged_ranks
    tied = []
    monkeypatch.setattr(merged_kernels, "merged_ranks", lambda *a: tied.append(original(*a)) or tied[-1])
    for x in (
        rng.integers(-2, 3, size=(300, 3)).astype(np.float32),
        (1000 + 1e-3 * rng.standard_normal((300, 2))).astype(np.float32),
    ):
        codes = np.where(rng.random(300) < 0.7, 0, rng.integers(1, 4, 300))
        for precision in ("float64", "mixed"):
            depth, ignored = np.full(300, 100), np.arange(300)[:, None]
            ranks_np, ranks_m, taken = ranks_both_ways(monkeypatch, x, codes, depth, ignored, precision=precision)
            assert taken > 0
            np.testing.assert_array_equal(ranks_m, ranks_np)
    assert any(t[0].any() for t in tied)


def slow_ranks(found, others, limit, n_ranked, depth):
    """Each row's ranks the obvious way: its relevant values up to ``limit`` sorted, each one's
    rank its position + 1 + the others at most it."""
    out = []
    for i in range(len(found)):
        ranked = np.sort(found[i][found[i] <= limit[i]])[: n_ranked[i]]
        ranks = np.arange(1, ranked.size + 1) + np.searchsorted(others[i], ranked, side="right")
        out.append([float(r) if r <= depth[i] else np.inf for r in ranks])
    return out


@pytest.mark.parametrize("seed", range(16))
def test_guesses_equal_a_scan_of_every_sampled_other(seed):
    """merged_kernels.guesses (a bisection) against the first sampled other that passes the test,
    tried one by one; on a lattice, so that relevant values equal to a sampled other are counted."""
    from embedeval._search import merged_kernels

    rng = np.random.default_rng(seed)
    b, s, n_found = int(rng.integers(1, 20)), int(rng.integers(1, 60)), int(rng.integers(0, 300))
    others = np.sort(rng.integers(0, 40, (b, s)).astype(np.float32) / 4, axis=1)
    found = rng.integers(0, 40, (b, n_found)) / 4
    found[rng.random(found.shape) < 0.1] = np.inf  # ignored
    n_other = int(rng.integers(s, 20 * s + 1))
    depth = rng.integers(1, n_found + n_other + 1, b)
    sigmas = float(rng.choice([0.0, 2.0, rng.uniform(0, 60)]))
    got = merged_kernels.guesses(others, found, depth, n_other, sigmas)
    want = np.full(b, np.inf)
    for r in range(b):
        for k in range(1, s + 1):
            t = float(others[r, k - 1])
            m = max(int(depth[r]) - int(np.count_nonzero(found[r] <= t)), 0) * s / n_other
            if k >= m + sigmas * np.sqrt(m) + 1:
                want[r] = t
                break
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(40))
def test_compiled_pass_equals_a_slow_count(seed):
    """merged_ranks on rows of every shape: no other, others all equal, crowded cells (duplicates),
    relevant values below, between and above the others, +inf (ignored) ones, extreme magnitudes;
    its near-ties and counts at most a threshold against the obvious ones."""
    from embedeval._search import merged_kernels

    rng = np.random.default_rng(seed)
    b, n = int(rng.integers(1, 8)), int(rng.integers(1, 300))
    scale = 10.0 ** rng.integers(-200, 200) if seed % 7 == 6 else 1.0
    pool = (rng.integers(-20, 20, 60) if seed % 3 == 0 else rng.standard_normal(60) * 10) * scale
    found = rng.choice(pool, (b, n)) + (0 if seed % 2 else rng.standard_normal((b, n)) * scale)
    found[rng.random((b, n)) < 0.05] = np.inf
    k = rng.integers(0, 3 * n, b)
    k[0] = 0
    width = max(int(k.max()), 1)
    others = np.full((b, width), np.nan)
    for i in range(b):
        row = np.sort(rng.choice(pool, k[i]) + (0 if seed % 4 < 2 else rng.standard_normal(k[i]) * scale))
        if i == 1 and k[i]:
            row[:] = row[0]  # every other equal
        others[i, : k[i]] = row
    limit = np.quantile(pool, rng.uniform(0.2, 1.0, b))
    threshold = np.where(rng.random(b) < 0.3, np.nan, np.quantile(pool, rng.uniform(0, 1, b)))
    n_ranked = rng.integers(0, n + 1, b)
    depth = rng.integers(1, 4 * n + 2, b).astype(np.float64)
    window = rng.choice([0.0, 1e-9 * scale, 0.5 * scale], b)
    ranks = np.empty((b, max(int(n_ranked.max()), 1)))
    tied, reached = merged_kernels.merged_ranks(found, others, k, limit, threshold, n_ranked, depth, window, ranks)
    want = slow_ranks(found, [others[i, : k[i]] for i in range(b)], limit, n_ranked, depth)
    for i in range(b):
        np.testing.assert_array_equal(ranks[i, : len(want[i])], want[i])
        assert np.isinf(ranks[i, len(want[i]) :]).all()
        o = others[i, : k[i]]
        v = found[i][found[i] <= limit[i]]
        near = (np.abs(v[:, None] - o[None, :]) <= window[i]).any() if o.size and v.size else False
        assert tied[i] == near
        assert reached[i] == np.count_nonzero(found[i] <= threshold[i]) + np.count_nonzero(o <= threshold[i])
    # written into other rows of a wider array (the deep ranking's result): the same rows, there
    at = rng.permutation(b + 3)[:b]
    into = np.full((b + 3, ranks.shape[1] + 2), np.nan)
    merged_kernels.merged_ranks(found, others, k, limit, threshold, n_ranked, depth, window, into, at)
    np.testing.assert_array_equal(into[at, : ranks.shape[1]], ranks)
    assert np.isinf(into[at, ranks.shape[1] :]).all() and np.isnan(np.delete(into, at, axis=0)).all()


def test_evaluate_through_the_merged_path_equals_a_full_sort(monkeypatch):
    """evaluate on 1,400 points, 1,100 of them in one class (J past MERGED_FROM at its default):
    the merged path ranks that class (spied), and the per-query values of queries of every class
    equal the float64 full-sort reference's and the numpy passes'."""
    from reference import binary_metric, full_ranking

    import embedeval

    rng = np.random.default_rng(11)
    n = 1400
    labels = np.where(np.arange(n) < 1100, 0, 1 + np.arange(n) % 6)
    x = (rng.standard_normal((7, 16))[labels] * 0.6 + rng.standard_normal((n, 16))).astype(np.float32)
    x[5] = x[900]  # an exact copy: a tie in the class
    metrics = ["precision@1", "r_precision", "map@r", "recall@10"]
    taken = []
    original = deep_merged.ranks
    monkeypatch.setattr(
        deep_merged, "ranks", lambda block, *into: taken.append(len(block.queries)) or original(block, *into)
    )
    monkeypatch.setattr(_budget, "DEEP_FUSED_COMPILED_FROM", 0)
    found = {}
    for kernels in ("numpy", "auto"):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, kernels)
        found[kernels] = embedeval.evaluate(x, labels, metrics=metrics).per_query
    assert sum(taken) >= 1000
    for m in metrics:
        np.testing.assert_array_equal(found["auto"][m], found["numpy"][m])
    for i in [*range(0, 1100, 97), 5, 900, *range(1100, n, 37)]:
        order = full_ranking(x[i], x, "euclidean", exclude=i)
        rel = [labels[j] == labels[i] for j in order]
        for m in metrics:
            assert found["auto"][m][i] == binary_metric(m, rel, sum(rel)), (i, m)


def test_wide_vectors_take_the_path_from_a_larger_j():
    assert deep_merged.switch(64) == deep_merged.switch(_budget.MERGED_NARROW_DIM) == _budget.MERGED_FROM
    assert deep_merged.switch(_budget.MERGED_NARROW_DIM + 1) == _budget.MERGED_FROM_WIDE > _budget.MERGED_FROM
