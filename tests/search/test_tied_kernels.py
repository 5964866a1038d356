"""The tied scan against a float64 full sort, its compiled path against its numpy path, and its bound.

Both paths of :class:`~embedeval._search.tied_scan.TiedScanner` (``EMBEDEVAL_KERNELS=numpy``
and the numba kernels) run on the same inputs: ties, duplicates, integer lattices, collapsed
embeddings, magnitudes from 1e-15 to 1e15 (and beyond float32's useful range, where the scan
multiplies in float64), chunks of one reference to all, queries drawn from the references or
apart from them. Every count must equal the one a full sort of the exact float64 distances
gives, in both paths. A kernel that miscounts a reference below a window, drops or repeats a
member, or a bound too tight for the float32 products, changes ``total`` here.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embedeval._core import compiled
from embedeval._inputs.arrays import prepare
from embedeval._search import tied_scan
from embedeval._search.deep_exact import error_bounds
from embedeval._search.tied_scan import TiedScanner

# "auto": the compiled window pass with the numpy bookkeeping (a small call's, before the
# compiled bookkeeping has repaid its compilation); "books": the compiled bookkeeping too.
MODES = ["numpy", "auto", "books"] if compiled._numba() is not None else ["numpy"]
KINDS = ["gaussian", "wide", "lattice", "duplicates", "collapsed", "extreme", "huge", "tiny"]


def _inputs(kind, rng, n, d):
    if kind == "lattice":
        x = rng.integers(-2, 3, size=(n, d)).astype(np.float32)
        x[~x.any(axis=1), 0] = 1.0  # no zero vector (the cosine has no direction for it)
        return x
    if kind == "duplicates":
        base = rng.standard_normal((max(2, n // 4), d)).astype(np.float32)
        return base[rng.integers(0, base.shape[0], n)]
    if kind == "collapsed":  # every vector the same, but a few
        x = np.tile(rng.standard_normal((1, d)).astype(np.float32), (n, 1))
        x[: n // 10] += 1.0
        return x
    x = rng.standard_normal((n, d)).astype(np.float32)
    if kind == "extreme":
        return x * np.float32(10.0) ** rng.integers(-15, 16, size=(n, 1)).astype(np.float32)
    if kind == "huge":  # (||q|| + M)^2 past 2**100: float64 products
        return x * np.float32(1e19)
    if kind == "tiny":  # below 2**-100: float64 products
        return x * np.float32(1e-30)
    return x


def full_sort_counts(queries, reference, euclidean, graded, left_out, n_levels):
    """(total, graded) of the scan's layout from every exact float64 distance, query by query."""
    rows = []
    for i, q in enumerate(queries):
        diff = reference.astype(np.float64) - q.astype(np.float64)
        e = (diff * diff).sum(axis=1) if euclidean else -(reference.astype(np.float64) * q).sum(axis=1)
        kept = ~left_out[i]
        positive = kept & (graded[i] > 0)
        thresholds = np.unique(e[positive])
        row_total, row_graded, previous = [], [], -np.inf
        for t in thresholds:
            row_total += [int((kept & (e > previous) & (e < t)).sum()), int((kept & (e == t)).sum())]
            at = np.bincount(graded[i][positive & (e == t)] - 1, minlength=n_levels)
            row_graded += [np.zeros(n_levels, dtype=np.int64), at]
            previous = t
        rows.append((row_total, row_graded))
    width = max(len(t) for t, _ in rows)
    total = np.zeros((len(rows), width), dtype=np.int64)
    by_level = np.zeros((len(rows), width, n_levels), dtype=np.int64)
    for i, (t, g) in enumerate(rows):
        total[i, : len(t)] = t
        if g:
            by_level[i, : len(g)] = np.array(g)
    return total, by_level


def _scan(monkeypatch, mode, scanner, queries, graded, left_out, levels):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "numpy" if mode == "numpy" else "auto")
    monkeypatch.setattr(tied_scan, "_compiled_books", lambda units: mode == "books")
    return scanner.count(queries, lambda s, e: graded[:, s:e], lambda s, e: left_out[:, s:e], levels)


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("distance", ["euclidean", "cosine", "inner_product"])
@pytest.mark.parametrize("pairs", [1, 37, 1 << 20])
@pytest.mark.parametrize("separate", [False, True])
def test_both_paths_equal_a_full_sort(monkeypatch, kind, distance, pairs, separate):
    rng = np.random.default_rng([len(kind), len(distance), pairs, separate])
    n, b = 90, 17
    d = 40 if kind == "wide" else 3
    reference = prepare(_inputs(kind, rng, n, d), distance)
    if separate:
        queries = prepare(_inputs(kind, rng, b, d), distance)
    else:
        queries = reference[rng.integers(0, n, b)]
    graded = rng.integers(0, 3, size=(b, n))  # grades 0, 1, 2
    graded[rng.random((b, n)) < 0.6] = 0
    graded[0] = 0  # a query with nothing graded
    left_out = rng.random((b, n)) < 0.1
    levels = np.array([1, 2])
    scanner = TiedScanner(reference, distance == "euclidean", pairs=pairs)
    want_total, want_graded = full_sort_counts(queries, reference, distance == "euclidean", graded, left_out, 2)
    assert want_total.shape[1] > 2  # several tie groups per query
    for mode in MODES:
        counts = _scan(monkeypatch, mode, scanner, queries, graded, left_out, levels)
        np.testing.assert_array_equal(counts.total, want_total, err_msg=mode)
        np.testing.assert_array_equal(counts.graded, want_graded, err_msg=mode)


def _misplaced_by_float32():
    """A query q = (4096, 1) and references q itself (distance 0, not graded) and (4096, 0)
    (distance 1, graded). In float32, q.q = 2**24 + 1 rounds to 2**24, so the value of q itself
    lands 1 above the graded one's: only a window as wide as the float32 bound catches it."""
    q = np.array([[4096.0, 1.0]], dtype=np.float32)
    reference = np.array([[4096.0, 1.0], [4096.0, 0.0], [0.0, 0.0]], dtype=np.float32)
    graded = np.array([[0, 1, 0]])
    return q, reference, graded


@pytest.mark.parametrize("mode", MODES)
def test_a_reference_misplaced_by_float32_rounding_is_counted_nearer(monkeypatch, mode):
    q, reference, graded = _misplaced_by_float32()
    product = (q @ reference.T)[0]
    assert product[0] == np.float32(2.0**24) and product[1] == np.float32(2.0**24)  # the premise
    counts = _scan(monkeypatch, mode, TiedScanner(reference, True), q, graded, np.zeros((1, 3), bool), np.array([1]))
    np.testing.assert_array_equal(counts.total, [[1, 1]])  # q itself strictly nearer, then the graded one


@pytest.mark.parametrize("mode", MODES)
def test_a_bound_too_tight_for_float32_is_caught(monkeypatch, mode):
    """The same case with the float64 bound in place of the float32 one (the scan's windows then
    miss q itself): the count is wrong, so the test above fails for such a bound."""

    def float64_only(*args):
        _, bound64 = error_bounds(*args)
        return bound64, bound64

    monkeypatch.setattr(tied_scan, "error_bounds", float64_only)
    q, reference, graded = _misplaced_by_float32()
    counts = _scan(monkeypatch, mode, TiedScanner(reference, True), q, graded, np.zeros((1, 3), bool), np.array([1]))
    assert counts.total.tolist() == [[0, 1]]


@pytest.mark.skipif(compiled._numba() is None, reason="numba not installed")
def test_window_pass_matches_sort_andsearch_slices(monkeypatch):
    """Overlapping windows, values on their ends, +inf, pairs left out (by their flat
    positions) and rows with no window, and a member capacity that overflows (the kernel is
    called again)."""
    from embedeval._search import tied_kernels

    rng = np.random.default_rng(3)
    b, m, g = 9, 200, 6
    dist = rng.integers(0, 20, size=(b, m)).astype(np.float64)
    dist[rng.random((b, m)) < 0.1] = np.inf
    centre = np.sort(rng.integers(0, 20, size=(b, g)).astype(np.float64), axis=1)
    low, high = centre - 1.0, centre + 1.0
    n_windows = rng.integers(0, g + 1, b)
    n_windows[0] = 0
    excluded, norms = np.flatnonzero(rng.random(b * m) < 0.2), np.zeros(m)
    results = []
    for n_buckets in (0, 1, 7, 64):
        tables = tied_kernels.bucket_tables(low, high, n_windows, n_buckets) if n_buckets else None
        products = -dist
        if tables is None:  # the numpy pass reads the pairs left out as -inf products
            products.reshape(-1)[excluded] = -np.inf
        below, rows, ks, cols = tied_scan._windows(products, excluded, norms, False, low, high, n_windows, tables, 4)
        order = np.lexsort((cols, ks, rows))
        results.append((below, rows[order], ks[order], cols[order]))
    assert results[0][1].size > 4  # more members than the first capacity
    for got in results[1:]:
        for want, part in zip(results[0], got, strict=True):
            np.testing.assert_array_equal(part, want)


needs_numba = pytest.mark.skipif(compiled._numba() is None, reason="numba not installed")


@needs_numba
@settings(max_examples=60, deadline=None)
@given(
    b=st.integers(1, 9), m=st.integers(1, 40), share=st.floats(0.0, 1.0), ignore=st.booleans(), seed=st.integers(0, 99)
)
def test_graded_pairs_match_numpy(b, m, share, ignore, seed):
    """Every shape (flat sizes that are and are not whole 8-byte words), dense and sparse masks,
    with and without pairs left out, a non-contiguous mask."""
    from embedeval._search import tied_kernels

    rng = np.random.default_rng(seed)
    positive = (rng.random((b, 2 * m)) < share)[:, ::2]
    left_out = rng.random((b, m)) < share / 2 if ignore else None
    rows, cols, excluded = tied_kernels.graded_pairs(positive, left_out)
    kept = positive & ~left_out if ignore else positive
    want_rows, want_cols = np.nonzero(kept)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(cols, want_cols)
    np.testing.assert_array_equal(excluded, np.flatnonzero(positive | left_out if ignore else positive))


@needs_numba
@settings(max_examples=60, deadline=None)
@given(
    values=st.lists(
        st.sampled_from([0.0, -0.0, 1.0, 600.0, 600.0 + 2**-40, -3.5, np.inf, -np.inf, np.nan]), max_size=60
    ),
    lo=st.integers(0, 5),
)
def test_shell_sort_orders_as_numpy(values, lo):
    """Ties, signed zeros, infinities and NaN (last), on a slice of the array; the payload follows."""
    from embedeval._search import tied_group_kernels

    keys = np.array([7.0] * lo + values, dtype=np.float64)
    order = np.arange(keys.size)
    original = keys.copy()
    tied_group_kernels.shell_sort(keys, order, lo, keys.size)
    np.testing.assert_array_equal(keys[lo:], np.sort(original[lo:]))
    np.testing.assert_array_equal(keys, original[order])
    assert sorted(order[lo:]) == list(range(lo, keys.size))


@needs_numba
@pytest.mark.parametrize("spread", [1.0, 1e-12, 0.0])
def test_compiled_arrange_matches_numpy(spread):
    """The compiled sort (a packed 64-bit key, then the ties in its top bits by a itself: values
    1e-12 apart here) gives numpy's arrangement; equal values (spread 0) may
    stand in either order, the windows and chains are the same."""
    from embedeval._search import tied_group_kernels
    from embedeval._search.tied_groups import Items

    rng = np.random.default_rng(5)
    b, n = 7, 300
    rows = rng.integers(0, b - 1, n)  # the last query has no graded pair
    cols, level = rng.integers(0, 1000, n), rng.integers(0, 3, n)
    a = 600.0 + spread * (rng.permutation(n) - n // 2)  # distinct, or all equal
    a[:3] = [np.nan, np.inf, -np.inf]
    chain_gap, window_half = np.full(b, 2e-13 * (spread > 0) + 1e-3), np.full(b, 3e-13 + 2e-3)
    want = Items.arrange(b, rows, cols, level, a, chain_gap, window_half)
    got = tied_group_kernels.arrange(b, rows, cols, level, a, chain_gap, window_half)
    for name in ("rows", "a", "chain_head", "window", "window_start", "window_stop", "window_first", "low", "high"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name), err_msg=name)
    np.testing.assert_array_equal(got.n_windows, want.n_windows)
    if spread:  # distinct values: one order
        np.testing.assert_array_equal(got.cols, want.cols)
        np.testing.assert_array_equal(got.level, want.level)
