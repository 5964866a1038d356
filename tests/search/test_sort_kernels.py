"""The compiled radix sort of rows (embedeval._search.sort_kernels) against numpy's sort.

Every row must come out as ``np.sort`` gives it, bit for bit (0.0 and -0.0 compare equal, and
may trade places): magnitudes from subnormals to 1e308, both signs, infinities, runs of values
equal in their top 32 bits (short ones, ordered by insertion, and long ones, by a second radix
sort), long runs of equal values, collapsed rows, rows where only the low digits differ, and
a NaN (reported, the caller then sorting with numpy). :func:`deep_count.smallest_sorted` is run
in both paths, with slices and lists of rows and with a partition first.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embedeval._core import budget, compiled
from embedeval._search import deep_count

pytest.importorskip("numba")
from embedeval._search import sort_kernels

_sorted_rows = sort_kernels.sorted_rows
KINDS = ["gaussian", "wide", "signed", "specials", "near", "duplicates", "collapsed", "subnormal", "mixed"]


def _rows(kind, rng, g, m):
    if kind == "gaussian":
        return 100 + rng.standard_normal((g, m))
    if kind == "wide":  # exponents over the whole range: every digit varies
        return rng.standard_normal((g, m)) * 10.0 ** rng.integers(-300, 300, (g, m))
    if kind == "signed":
        return rng.standard_normal((g, m)) * 1e-3
    if kind == "specials":
        x = rng.standard_normal((g, m))
        x[rng.random((g, m)) < 0.1] = np.inf
        x[rng.random((g, m)) < 0.1] = -np.inf
        x[rng.random((g, m)) < 0.1] = 0.0
        x[rng.random((g, m)) < 0.1] = -0.0
        return x
    if kind == "near":  # equal in their top 32 bits, apart in the low ones: runs of every length
        base = 1.0 + rng.integers(0, max(1, m // 40), (g, m)) * 2.0**-18
        return base + rng.integers(0, 2**30, (g, m)) * 2.0**-52
    if kind == "duplicates":
        return rng.integers(-3, 4, (g, m)).astype(np.float64) / 7
    if kind == "collapsed":
        x = np.full((g, m), 0.3)
        x[:, : m // 10] = rng.standard_normal((g, m // 10))
        return x
    if kind == "subnormal":
        return rng.standard_normal((g, m)) * 5e-324 * rng.integers(0, 2**40, (g, m))
    rows = [_rows(k, rng, 1, m)[0] for k in rng.choice(KINDS[:-1], g)]
    return np.stack(rows)


def _assert_sorted_like_numpy(got, want):
    assert np.array_equal(got, want)  # == on floats: -0.0 and 0.0 may trade places
    assert np.array_equal(np.signbit(got[got != 0]), np.signbit(want[want != 0]))
    assert np.array_equal(got.view(np.uint64)[got != 0], want.view(np.uint64)[want != 0])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("kind", KINDS)
def test_rows_come_out_as_numpy_sorts_them(seed, kind):
    rng = np.random.default_rng(seed)
    g, m = int(rng.integers(1, 12)), int(rng.integers(1, 3000))
    values = _rows(kind, rng, g, m)
    k = m if seed % 2 else int(rng.integers(1, m + 1))
    out = np.full((g + 3, k + 2), 7.0)
    at = rng.permutation(g + 3)[:g]
    assert sort_kernels.sorted_rows(values, out[:, 1:-1], at)
    _assert_sorted_like_numpy(out[at, 1:-1], np.sort(values, axis=1)[:, :k])
    untouched = np.setdiff1d(np.arange(g + 3), at)
    assert (out[untouched] == 7.0).all() and (out[:, [0, -1]] == 7.0).all()


def test_a_long_run_of_equal_top_bits_is_ordered_by_the_low_bits():
    # one run longer than INSERTION, its order only in the low 32 bits, reversed on the way in
    m = 5 * sort_kernels.INSERTION
    values = (1.0 + np.arange(m)[::-1] * 2.0**-52)[None, :]
    out = np.empty((1, m))
    assert sort_kernels.sorted_rows(values, out, np.zeros(1, np.int64))
    assert np.array_equal(out[0], np.sort(values[0]))


def test_a_row_with_a_nan_is_reported():
    values = np.ones((2, 50))
    values[1, 7] = np.nan
    assert not sort_kernels.sorted_rows(values, np.empty((2, 50)), np.arange(2))
    values[1, 7] = -np.nan
    assert not sort_kernels.sorted_rows(values, np.empty((2, 50)), np.arange(2))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.floats(allow_nan=False, width=64), min_size=1, max_size=80), min_size=1, max_size=5))
def test_any_finite_or_infinite_rows(rows):
    m = min(len(r) for r in rows)
    values = np.array([r[:m] for r in rows])
    out = np.empty_like(values)
    assert sort_kernels.sorted_rows(values, out, np.arange(len(values)))
    _assert_sorted_like_numpy(out, np.sort(values, axis=1))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("shape", ["slice", "rows"])
def test_smallest_sorted_is_the_same_in_both_paths(monkeypatch, seed, shape):
    monkeypatch.setattr(budget, "SORT_COMPILED_FROM", 0)  # the compiled sort on rows of any size
    monkeypatch.setattr(deep_count, "RADIX_SORT", True)  # also where numpy's sort is vectorised
    calls = []
    monkeypatch.setattr(sort_kernels, "sorted_rows", lambda *a: calls.append(1) or _sorted_rows(*a))
    rng = np.random.default_rng(seed)
    g, m = int(rng.integers(1, 20)), int(rng.integers(1, 2000))
    values = _rows(KINDS[seed % len(KINDS)], rng, g, m)
    if seed == 5:
        values[g // 2, m // 2] = np.nan  # the compiled path hands the rows back to numpy
    k = int(rng.integers(1, m + 1)) if seed % 2 else m
    rows = slice(2, 2 + g) if shape == "slice" else rng.permutation(g + 4)[:g]
    found = []
    for mode in ("numpy", "auto"):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, mode)
        out = np.full((g + 4, m + 1), 5.0)
        deep_count.smallest_sorted(values.copy(), k, out, rows)
        found.append(out)
    assert calls == [1]
    np.testing.assert_array_equal(found[0], found[1])
    want = np.sort(values, axis=1)[:, :k]
    np.testing.assert_array_equal(found[1][rows, :k], want)


def test_the_radix_sort_starts_once_numpy_has_sorted_enough(monkeypatch):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "auto")
    monkeypatch.setattr(budget, "SORT_COMPILED_FROM", 100)
    monkeypatch.setattr(deep_count, "RADIX_SORT", True)
    monkeypatch.setattr(compiled, "_done_by_numpy", {})
    monkeypatch.setattr(compiled, "_found_cached", {})
    monkeypatch.setattr(deep_count, "_RADIX_CACHED", lambda: False)  # a cold cache
    calls = []
    monkeypatch.setattr(sort_kernels, "sorted_rows", lambda *a: calls.append(1) or _sorted_rows(*a))
    values = np.random.default_rng(0).standard_normal((6, 10))
    for expected_calls in (0, 0, 1, 2):  # 60 values, then 120 sorted by numpy: the radix sort after
        out = np.empty((6, 10))
        deep_count.smallest_sorted(values, 10, out, slice(None))
        assert len(calls) == expected_calls
        np.testing.assert_array_equal(out, np.sort(values, axis=1))
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "numpy")  # never with the numpy passes
    deep_count.smallest_sorted(values, 10, np.empty((6, 10)), slice(None))
    assert len(calls) == 2


def test_a_cached_radix_sort_is_taken_at_once(monkeypatch):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "auto")
    monkeypatch.setattr(budget, "SORT_COMPILED_FROM", 1000)
    monkeypatch.setattr(deep_count, "RADIX_SORT", True)
    monkeypatch.setattr(budget, "SORT_CACHED_FROM", 60)
    monkeypatch.setattr(compiled, "_done_by_numpy", {})
    monkeypatch.setattr(compiled, "_found_cached", {})
    calls = []
    monkeypatch.setattr(sort_kernels, "sorted_rows", lambda *a: calls.append(1) or _sorted_rows(*a))
    values = np.random.default_rng(0).standard_normal((6, 10))
    deep_count.smallest_sorted(values[:3], 10, np.empty((3, 10)), slice(None))  # 30 < CACHED_FROM: not asked
    assert calls == [] and compiled._found_cached == {}
    deep_count.smallest_sorted(values, 10, np.empty((6, 10)), slice(None))  # the kernel was compiled above
    assert calls == [1] and compiled._found_cached == {"radix sort": True}


def test_no_radix_sort_where_numpys_sort_is_vectorised(monkeypatch):
    """``RADIX_SORT`` False (a host with AVX-512): numpy's sort, whatever the switch says."""
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "auto")
    monkeypatch.setattr(budget, "SORT_COMPILED_FROM", 0)
    monkeypatch.setattr(deep_count, "RADIX_SORT", False)
    calls = []
    monkeypatch.setattr(sort_kernels, "sorted_rows", lambda *a: calls.append(1) or _sorted_rows(*a))
    values = np.random.default_rng(1).standard_normal((6, 10))
    out = np.empty((6, 10))
    deep_count.smallest_sorted(values, 10, out, slice(None))
    assert calls == []
    np.testing.assert_array_equal(out, np.sort(values, axis=1))
