"""Collapsed embeddings: exact, and without the quadratic float64 work they used to cost.

A model that has collapsed maps its inputs to one point (exact copies) or to a tiny cloud
around one point (noise of 1e-6 on a common vector). Both used to join every candidate into
one run of near-ties, searched again with twice as many candidates until it held every
reference, each time recomputed in float64 pair by pair.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import full_ranking

import embedeval
import embedeval._search.float64 as float64
from embedeval._core import budget
from embedeval._inputs.arrays import prepare
from embedeval._search import FlatSearcher


def collapsed(rng, n, d, n_points, noise, offset):
    """n rows drawn from ``n_points`` points near ``offset``, plus relative ``noise``."""
    points = offset + rng.integers(-2, 3, size=(n_points, d)).astype(np.float64)
    x = points[rng.integers(0, n_points, n)]
    if noise:
        x = x * (1 + noise * rng.standard_normal(x.shape))
    return x.astype(np.float32)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 90),
    d=st.integers(1, 6),
    n_points=st.integers(1, 4),
    noise=st.sampled_from([0.0, 1e-6, 1e-3]),
    offset=st.sampled_from([0.0, 1.0, 1000.0]),
    distance=st.sampled_from(["euclidean", "inner_product", "cosine"]),
    leave_one_out=st.booleans(),
)
def test_collapsed_references_are_searched_exactly(seed, n, d, n_points, noise, offset, distance, leave_one_out):
    rng = np.random.default_rng(seed)
    x = collapsed(rng, n, d, n_points, noise, offset)
    if distance == "cosine" and not (np.abs(x).sum(axis=1) > 0).all():
        x[np.abs(x).sum(axis=1) == 0] = 1.0
    prepared = prepare(x, distance)
    # The prepared (normalised) rows are what cosine ranks: their inner products.
    ref_distance = "inner_product" if distance == "cosine" else distance
    k = int(rng.integers(1, n)) if leave_one_out else int(rng.integers(1, n + 1))
    searcher = FlatSearcher(x, distance)
    got = searcher.search(prepared, k, np.arange(n) if leave_one_out else None)
    for i in range(n):
        expected = full_ranking(prepared[i], prepared, ref_distance, exclude=i if leave_one_out else None)[:k]
        np.testing.assert_array_equal(got[i], expected)


@pytest.mark.parametrize("noise", [0.0, 1e-6])
def test_collapsed_embeddings_cost_no_quadratic_float64_work(noise, monkeypatch):
    """float64 recomputation is per (query, reference) pair; a collapsed set of n rows used to
    recompute all n * n pairs, and now recomputes about as many as spread-out data."""
    rng = np.random.default_rng(0)
    n, d = 1500, 32
    x = (np.ones((n, d)) + noise * rng.standard_normal((n, d))).astype(np.float32)
    labels = rng.integers(0, 30, n)
    pairs = []
    plain = float64.exact_distance
    monkeypatch.setattr(float64, "exact_distance", lambda q, r, e: pairs.append(len(q)) or plain(q, r, e))
    result = embedeval.evaluate(x, labels, metrics=["precision@1", "r_precision", "map@r"], n_threads=1)
    assert sum(pairs) < 20 * n * 60, sum(pairs)  # R is about 50 here: n * n would be 2,250,000
    # and the values are exact: the reference computed from a full stable float64 sort
    ranked = np.array([full_ranking(q, x, "euclidean", exclude=i) for i, q in enumerate(x)])
    hits = labels[ranked] == labels[:, None]
    p1 = hits[:, 0].mean()
    assert result.summary["precision@1"] == pytest.approx(p1, abs=1e-12)


@pytest.mark.parametrize("block", [1, 15, 64, 1 << 20])
def test_row_hashes_are_blocked_and_equal_for_equal_rows(block, monkeypatch):
    """The distinct-rows test hashes whole rows a block at a time: the same hashes whatever the
    block (one row, 3 rows with a shorter last block, 12 rows, all at once), equal for rows equal
    bit for bit, and the
    distinct rows found exactly (-0.0 and 0.0 differ in their bits, so they are two rows)."""
    from embedeval._search import duplicates

    rng = np.random.default_rng(5)
    rows = rng.standard_normal((6, 5)).astype(np.float32)
    rows[4] = 0.0
    rows[5] = -0.0
    x = rows[rng.integers(0, 6, 40)]
    words = x.view(np.uint32).astype(np.uint64)
    weights = np.random.default_rng(0).integers(1, 2**61, size=5, dtype=np.uint64) | np.uint64(1)
    with np.errstate(over="ignore"):
        want = (words * weights).sum(axis=1)
    monkeypatch.setattr(budget, "HASH_BLOCK", block)
    hashes = duplicates._row_hashes(x)
    np.testing.assert_array_equal(hashes, want)
    same = (x.view(np.uint32)[:, None, :] == x.view(np.uint32)[None, :, :]).all(axis=2)
    assert (hashes[:, None] == hashes[None, :])[same].all()
    first, inverse, counts = duplicates.distinct_rows(x)
    assert first.size == np.unique(x.view(np.uint32), axis=0).shape[0]
    np.testing.assert_array_equal(x[first][inverse].view(np.uint32), x.view(np.uint32))
    assert counts.sum() == x.shape[0]


@pytest.mark.parametrize("distance", ["euclidean", "inner_product", "cosine"])
@pytest.mark.parametrize("shift", [0.0, 0.1, 0.5, 3.0])
def test_references_are_centred_only_where_their_mean_is_large(distance, shift):
    """faiss searches the references minus their mean only where the mean's norm exceeds
    ``CENTRE_FROM`` of the largest norm (centring a spread-out set could shrink the error bound
    by a quarter at most, and costs a copy); either way the ranking is the float64 sort's."""

    rng = np.random.default_rng(int(shift * 10))
    n, d = 300, 8
    # rows of norm about 1 around a common vector of norm ``shift``, rounded to a coarse grid
    # so that ties and duplicates occur
    x = np.round(shift * np.ones(d) / np.sqrt(d) + rng.standard_normal((n, d)) / np.sqrt(d), 1).astype(np.float32)
    x[np.abs(x).sum(axis=1) == 0] = 1.0
    prepared = prepare(x, distance)
    searcher = FlatSearcher(x, distance)
    mean = np.linalg.norm(prepared.mean(axis=0, dtype=np.float64))
    largest = np.sqrt(np.einsum("ij,ij->i", prepared, prepared, dtype=np.float64).max())
    assert (searcher._centre is not None) == (mean > budget.CENTRE_FROM * largest)
    assert (searcher._centre is not None) == (shift >= 0.5)  # the cases cover both sides
    ref_distance = "inner_product" if distance == "cosine" else distance
    got = searcher.search(prepared, 20, np.arange(n))
    for i in range(n):
        np.testing.assert_array_equal(got[i], full_ranking(prepared[i], prepared, ref_distance, exclude=i)[:20])


@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
@pytest.mark.parametrize("shift", [0.0, 3.0])
def test_the_error_bound_takes_the_norms_faiss_sees(distance, shift):
    """The float32 error bound is 1.01 (d + 4 or 3 [+ CENTRING_SLACK]) u times (||q~|| + max ||r~||)^2
    (euclidean) or ||q~|| max ||r~|| (inner product), q~ and r~ as faiss sees them: centred where
    the references are, as they are where not. (The bound is rarely approached by real float32
    errors, so a smaller one would pass the ranking tests: this pins its formula.)"""
    from embedeval._search import flat
    from embedeval._search.error_bound import underflow_bound

    rng = np.random.default_rng(3)
    d = 6
    x = (shift + rng.standard_normal((50, d))).astype(np.float32)
    q = (shift + rng.standard_normal((7, d))).astype(np.float32)
    searcher = FlatSearcher(x, distance)
    centred = searcher._centre is not None
    assert centred == (shift > 0)
    c = searcher._centre.astype(np.float64) if centred else np.zeros(d)
    r_max = np.linalg.norm(x.astype(np.float64) - (c if centred else 0), axis=1).max()
    q_norm = np.linalg.norm(q.astype(np.float64) - (c if distance == "euclidean" else 0), axis=1)
    u = 2.0**-24
    factor = 1.01 * (d + (4 if distance == "euclidean" else 3) + (flat.CENTRING_SLACK if centred else 0)) * u
    scale = (q_norm + r_max) ** 2 if distance == "euclidean" else q_norm * r_max
    np.testing.assert_allclose(searcher._error_bound(q, u), factor * scale + underflow_bound(d, u), rtol=1e-6)


@pytest.mark.parametrize("kind", ["identical", "collapsed", "spread", "offset"])
def test_collapsed_references_keep_faiss_route_past_the_deep_switch(kind, monkeypatch):
    """Past the deep ranking's depth switch, collapsed references (exact copies, or a cloud of
    1e-6 around a far point) stay on faiss's route, which searches distinct and centred rows (the
    deep ranking recomputed nearly every pair there: 20,000 identical rows took minutes); spread
    out references, offset ones included, take the deep ranking. The values are the full stable
    float64 sort's either way."""
    from embedeval._search import deep

    rng = np.random.default_rng(1)
    n, d = 1500, 16
    base = {
        "identical": np.ones((n, d)),
        "collapsed": 1.0 + 1e-6 * rng.standard_normal((n, d)),
        "spread": rng.standard_normal((n, d)),
        "offset": np.abs(rng.standard_normal((n, d))),  # all-positive features: a large mean
    }[kind]
    x = base.astype(np.float32)
    labels = rng.integers(0, 2, n)  # R ~ 750: past the switch with either kernels (150, 512)
    ranked_deep = []
    plain = deep.DeepRanker.ranks
    monkeypatch.setattr(deep.DeepRanker, "ranks", lambda self, *a, **k: ranked_deep.append(1) or plain(self, *a, **k))
    assert FlatSearcher(x, "euclidean").ranks_deep == (kind in ("spread", "offset"))
    result = embedeval.evaluate(x, labels, metrics=["precision@1", "r_precision"])
    assert bool(ranked_deep) == (kind in ("spread", "offset"))
    ranked = np.array([full_ranking(q, x, "euclidean", exclude=i) for i, q in enumerate(x)])
    hits = labels[ranked] == labels[:, None]
    r = np.bincount(labels)[labels] - 1
    assert result.summary["precision@1"] == pytest.approx(hits[:, 0].mean(), abs=1e-12)
    r_precision = np.mean([hits[i, : r[i]].mean() for i in range(n)])
    assert result.summary["r_precision"] == pytest.approx(r_precision, abs=1e-12)
