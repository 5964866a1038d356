"""The tied scan's window pass and its listing against slow, obvious references.

* :func:`embedeval._search.list_kernels.list_between` (the vector path where the host has
  AVX-512, the scalar fallback, and the masked store of older LLVM) against numpy's
  ``flatnonzero`` of ``first <= v <= last`` and a bucket computed in numpy, on rows of every
  length around the vector's width, with values on both ends, duplicates, NaN, infinities,
  collapsed rows and ends that are equal, crossed, infinite or NaN;
* :func:`embedeval._search.tied_kernels.window_pass` (bucket tables of every size, int16 and
  int32) against the numpy pass of :func:`embedeval._search.tied_scan._windows` (a sort and
  binary searches) on chunks with windows that touch, overlap or collapse to a point, windows
  at infinity, rows without a window, values on the window ends, NaN and infinities, pairs left
  out, and rows shorter than a vector.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

numba = pytest.importorskip("numba")
from reference import without_vectors  # noqa: E402

from embedeval._core import intrinsics  # noqa: E402
from embedeval._search import list_kernels, tied_kernels, tied_scan  # noqa: E402


@numba.njit
def _between_vectors(products, norms, scale, first, last, inverse, top, listed, buckets):
    return list_kernels.list_between(products, norms, scale, first, last, inverse, top, listed, buckets)


_between_scalar = numba.njit(_between_vectors.py_func)  # compiled by without_vectors alone


def _between(*args, scalar):
    return without_vectors(_between_scalar, *args) if scalar else _between_vectors(*args)


def _expected(products, norms, scale, first, last, inverse, top):
    """numpy's listing, buckets and count below, value by value."""
    v = norms - scale * products.astype(np.float64)
    listed = np.flatnonzero((v >= first) & (v <= last))
    with np.errstate(invalid="ignore", over="ignore"):
        f = (v[listed] - first) * inverse
    f = np.where(f > 0.0, f, 0.0)
    buckets = np.where(f < top, f, top).astype(np.int64)
    return listed, buckets, int(np.count_nonzero(v < first))


def _check(products, norms, scale, first, last, inverse, top, between=_between):
    """Every path lists what numpy lists, with numpy's buckets, and writes nothing past the row."""
    want_listed, want_buckets, want_below = _expected(products, norms, scale, first, last, inverse, top)
    w = products.size
    for scalar in (False, True):
        listed, buckets = np.full(w + 16, -7, dtype=np.int32), np.full(w + 16, -7, dtype=np.int32)
        args = (first, last, inverse, top, listed[:w], buckets[:w])
        n, below = between(products, norms, scale, *args, scalar=scalar)
        assert (n, below) == (want_listed.size, want_below)
        np.testing.assert_array_equal(listed[:n], want_listed)
        np.testing.assert_array_equal(buckets[:n], want_buckets)
        assert (listed[w:] == -7).all() and (buckets[w:] == -7).all()


def _row(rng, kind, w, dtype):
    """A row of ``w`` products of one of the hard kinds, with norms (euclidean) or none."""
    if kind == "ties":  # few distinct values: many on the ends
        products = rng.integers(-3, 4, w).astype(np.float64)
    elif kind == "collapsed":
        products = np.full(w, 1.25)
    elif kind == "extreme":
        pool = np.array([-np.inf, np.inf, np.nan, -0.0, 0.0, 1e30, -1e30, 2.0**-140])
        products = rng.choice(pool, w)
    else:
        products = rng.standard_normal(w)
        if kind == "nan":
            products[rng.random(w) < 0.3] = np.nan
    euclidean = rng.random() < 0.5
    norms = rng.integers(0, 3, w).astype(np.float64) if euclidean else np.zeros(w)
    return products.astype(dtype), norms, 2.0 if euclidean else 1.0


def _ends(rng, products, norms, scale):
    """(first, last, inverse, top): ends on values, crossed, equal, infinite or NaN."""
    v = norms - scale * products.astype(np.float64)
    finite = v[np.isfinite(v)]
    pool = [-np.inf, np.inf, np.nan, 0.0, -1.0, 2.5]
    if finite.size:
        pool += list(rng.choice(finite, 6))  # ends equal to values (ties)
    first, last = sorted(rng.choice(np.array(pool), 2)) if rng.random() < 0.8 else rng.choice(np.array(pool), 2)
    top = float(rng.choice([0, 1, 7, 4095]))
    inverse = float(rng.choice([0.0, 1.0, 3.0, 1e300]))
    return float(first), float(last), inverse, top


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["normal", "ties", "collapsed", "extreme", "nan"])
def test_the_listing_equals_numpy_on_seeded_rows(dtype, kind):
    """Rows of 0 to 70 values (around one and several blocks of 8 and 16 lanes) and of 2,048."""
    rng = np.random.default_rng(11)
    for w in [*range(71), 2048]:
        for _ in range(3):
            products, norms, scale = _row(rng, kind, w, dtype)
            _check(products, norms, scale, *_ends(rng, products, norms, scale))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(width=32), max_size=70),
    st.floats(width=32),
    st.floats(width=32),
    st.sampled_from([np.float32, np.float64]),
)
def test_the_listing_equals_numpy_on_drawn_rows(values, first, last, dtype):
    products = np.asarray(values, dtype=dtype)
    _check(products, np.zeros(products.size), 1.0, first, last, 2.0, 15.0)


def test_the_compressing_store_of_older_llvm_lists_the_same(monkeypatch):
    """Before LLVM 19 the blocks are written by LLVM's masked compressing store: the same lists."""
    monkeypatch.setattr(intrinsics, "REGISTER_COMPRESS", False)  # compress_store reads it there

    by_store = numba.njit(_between_vectors.py_func)  # compiled below, with the store of older LLVM

    def between_by_store(*args, scalar):
        return by_store(*args)

    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        for w in (0, 15, 16, 17, 40, 2048):
            products, norms, scale = _row(rng, "nan", w, dtype)
            _check(products, norms, scale, -0.5, 0.5, 4.0, 7.0, between_by_store)


def _chunk(rng, b, m, g, dtype, euclidean):
    """Products, norms and windows (low, high, n_windows) of the kinds the docstring names."""
    products = (rng.integers(-6, 7, size=(b, m)) / 2.0).astype(dtype)
    products[rng.random((b, m)) < 0.05] = np.nan
    products[rng.random((b, m)) < 0.05] = rng.choice([np.inf, -np.inf])
    norms = rng.integers(0, 3, m).astype(np.float64) if euclidean else np.zeros(m)
    centre = np.sort(rng.integers(-8, 9, size=(b, g)).astype(np.float64), axis=1)
    radius = rng.choice([0.0, 0.5, 1.0])  # points, windows that touch (on the half-integer lattice), overlap
    low, high = centre - radius, centre + radius
    n_windows = rng.integers(0, g + 1, b)
    n_windows[0] = 0  # a row with no window
    if b > 2:  # a window at infinity: no table for that row
        low[1, 0] = -np.inf
        high[2, max(n_windows[2] - 1, 0)] = np.inf
    for i in range(b):  # +inf past each row's windows, as the scan lays them out
        low[i, n_windows[i] :] = np.inf
        high[i, n_windows[i] :] = np.inf
    return products, norms, low, high, n_windows


def _by_member(result):
    below, rows, ks, cols = result
    order = np.lexsort((cols, ks, rows))
    return below, rows[order], ks[order], cols[order]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("euclidean", [True, False])
def test_the_window_pass_equals_the_numpy_pass(dtype, euclidean):
    """Seeded chunks of 1 to 70 columns, tables of 1 to 4,096 buckets (int16 and int32), and a
    members' capacity that overflows (the kernel is called again)."""
    rng = np.random.default_rng([dtype == np.float32, euclidean])
    for m in (1, 5, 15, 16, 17, 33, 70):
        products, norms, low, high, n_windows = _chunk(rng, 7, m, 5, dtype, euclidean)
        excluded = np.flatnonzero(rng.random(products.size) < 0.15)
        numpy_products = products.copy()
        numpy_products.reshape(-1)[excluded] = -np.inf
        want = tied_scan._windows(numpy_products, excluded, norms, euclidean, low, high, n_windows)
        assert want[1].size or m < 16  # members to compare
        for n_buckets in (1, 2, 7, 64, 4096):
            table, first, inverse = tied_kernels.bucket_tables(low, high, n_windows, n_buckets)
            for wide in (False, True):
                tables = tied_kernels.BucketTables(table.astype(np.int32) if wide else table, first, inverse)
                window = (low, high, n_windows, tables, 2)
                got = tied_scan._windows(products.copy(), excluded, norms, euclidean, *window)
                for part, expected in zip(_by_member(got), _by_member(want), strict=True):
                    np.testing.assert_array_equal(part, expected, err_msg=f"m={m} buckets={n_buckets}")


def test_the_bucket_tables_place_every_low_end():
    """In each row with a table, a bucket's entry is the number of low ends in earlier buckets
    (negative, -1 - that, where a window end falls in it or a window covers it): a value of an
    unmarked bucket has exactly that many low ends at or below it."""
    rng = np.random.default_rng(5)
    b, g = 40, 9
    n_windows = rng.integers(1, g + 1, b)
    low, high = np.full((b, g), np.inf), np.full((b, g), np.inf)
    for i, n in enumerate(n_windows):  # windows apart, some of them within one bucket
        centre = np.sort(rng.choice(np.arange(-20.0, 21.0), n, replace=False))
        radius = rng.choice([0.01, 0.25])
        low[i, :n], high[i, :n] = centre - radius, centre + radius
    table, first, inverse = tied_kernels.bucket_tables(low, high, n_windows, 64)
    assert (inverse > 0).sum() > 30  # most rows have a table
    for i in np.flatnonzero((inverse > 0) & (n_windows > 1)):
        n = n_windows[i]
        values = np.linspace(low[i, 0], high[i, n - 1], 2000)
        f = np.minimum(np.maximum((values - first[i]) * inverse[i], 0.0), 63.0).astype(np.int64)
        entry = table[i, f].astype(np.int64)
        places = np.searchsorted(low[i, :n], values, side="right")
        unmarked = entry >= 0
        assert unmarked.any() and (~unmarked).any()
        np.testing.assert_array_equal(entry[unmarked], places[unmarked])
        assert ((-1 - entry[~unmarked]) <= places[~unmarked]).all()


@pytest.mark.parametrize("n_pairs", [0, 1, 7, 8, 9, 500])
def test_pair_values_are_within_the_float64_bound(n_pairs):
    """:func:`~embedeval._search.tied_kernels.pair_values` (its loop prefetches the row of the pair
    8 on, clamped to the last pair) against float64 numpy, within the bound E_a."""
    from embedeval._search.deep_exact import error_bounds

    rng = np.random.default_rng(n_pairs)
    d = 37
    queries = rng.standard_normal((6, d)).astype(np.float32)
    reference = (rng.standard_normal((50, d)) * 10).astype(np.float32)
    norms = np.einsum("ij,ij->i", reference, reference, dtype=np.float64)
    rows, cols = rng.integers(0, 6, n_pairs), rng.integers(0, 50, n_pairs)
    q_norms = np.sqrt(np.einsum("ij,ij->i", queries, queries, dtype=np.float64))
    m_norm = np.sqrt(norms.max())
    for euclidean in (True, False):
        got = tied_kernels.pair_values(queries, reference, norms, euclidean, rows, cols)
        dots = (queries[rows].astype(np.float64) * reference[cols].astype(np.float64)).sum(axis=1)
        want = norms[cols] - 2.0 * dots if euclidean else -dots
        _, bound = error_bounds(q_norms, m_norm, d, euclidean)
        assert got.shape == (n_pairs,)
        assert (np.abs(got - want) <= 2 * bound[rows]).all()


@pytest.mark.parametrize("shape", [(1, 64), (3, 100), (7, 1000), (256, 300)])
@pytest.mark.parametrize("share", [0.0, 0.01, 0.3, 1.0])
def test_graded_pairs_read_64_bytes_at_a_time_as_numpy_lists(shape, share):
    """:func:`~embedeval._search.tied_kernels.graded_pairs` (64 mask bytes a step, bits visited
    lowest first, the row followed without a division) against numpy on masks of many 64-byte
    steps, rows that are and are not whole steps, every density, with and without pairs left out."""
    rng = np.random.default_rng([shape[0], shape[1], int(share * 100)])
    positive = rng.random(shape) < share
    own = np.zeros(shape, dtype=bool)
    own[np.arange(shape[0]), rng.integers(0, shape[1], shape[0])] = True  # leave-one-out's pair
    for left_out in (None, own, own | (rng.random(shape) < share / 3)):
        rows, cols, excluded = tied_kernels.graded_pairs(positive, left_out)
        kept = positive if left_out is None else positive & ~left_out
        np.testing.assert_array_equal(rows, np.nonzero(kept)[0])
        np.testing.assert_array_equal(cols, np.nonzero(kept)[1])
        named = positive if left_out is None else positive | left_out
        np.testing.assert_array_equal(excluded, np.flatnonzero(named))
