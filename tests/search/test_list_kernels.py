"""The deep pass's listing (embedeval._search.list_kernels) against ``np.flatnonzero(values <= limit)``,
the slow and obvious reference: the vector path (AVX-512, where the host has it), the scalar
fallback, and the two together on rows of every length around the vector's width, with ties at
the limit, duplicates, NaN, infinities, signed zeros, subnormals and float extremes."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

numba = pytest.importorskip("numba")
from reference import without_vectors  # noqa: E402

from embedeval._core import intrinsics  # noqa: E402
from embedeval._search import list_kernels  # noqa: E402


@numba.njit
def _listed(values, limit, listed):
    return list_kernels.list_within(values, limit, listed)


_listed_scalar = numba.njit(_listed.py_func)  # compiled by without_vectors alone


@numba.njit
def _compresses():
    return intrinsics.compresses()


def _check(values, limit):
    """Both paths list what numpy lists, and write no entry of ``listed`` past the row's length."""
    expected = np.flatnonzero(values <= limit)
    for scalar in (False, True):
        listed = np.full(values.size + 16, -7, dtype=np.int32)
        args = (values, values.dtype.type(limit), listed[: values.size])
        n = without_vectors(_listed_scalar, *args) if scalar else _listed(*args)
        assert n == expected.size
        np.testing.assert_array_equal(listed[:n], expected)
        assert (listed[values.size :] == -7).all()


def _row(rng, kind, w, dtype):
    """A row of ``w`` values of one of the hard kinds, and a limit for it."""
    info = np.finfo(dtype)
    if kind == "normal":
        values = rng.standard_normal(w)
    elif kind == "ties":  # few distinct values, the limit one of them
        values = rng.integers(-3, 4, w).astype(np.float64)
    elif kind == "collapsed":  # every value equal
        values = np.full(w, 1.25)
    elif kind == "extreme":
        pool = np.array([-np.inf, np.inf, np.nan, -0.0, 0.0, info.max, -info.max, info.tiny, info.smallest_subnormal])
        values = rng.choice(pool, w)
    else:  # "nan": a third NaN
        values = rng.standard_normal(w)
        values[rng.random(w) < 0.33] = np.nan
    values = values.astype(dtype)
    finite = values[np.isfinite(values)]
    choices = [0.0, -0.0, np.inf, -np.inf, np.nan, info.max]
    if finite.size:
        choices += [finite[rng.integers(finite.size)]] * 4  # a limit equal to a value (ties)
    return values, dtype(choices[rng.integers(len(choices))])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("kind", ["normal", "ties", "collapsed", "extreme", "nan"])
def test_the_listing_equals_flatnonzero_on_seeded_rows(dtype, kind):
    """Rows of 0 to 70 values (around one and several blocks of 8 and 16 lanes) and of 2,048, many seeds."""
    rng = np.random.default_rng(42)
    for w in [*range(71), 2048]:
        for _ in range(4):
            _check(*_row(rng, kind, w, dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_row_inside_a_chunk_is_listed_from_its_own_columns(dtype):
    """A chunk row (a view at an offset not a multiple of 64 bytes) lists its own columns only."""
    rng = np.random.default_rng(7)
    chunk = rng.standard_normal((5, 37)).astype(dtype)
    for a in range(5):
        _check(chunk[a], chunk[a, 3])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.floats(width=32), max_size=80),
    st.floats(width=32),
    st.sampled_from([np.float32, np.float64]),
)
def test_the_listing_equals_flatnonzero_on_drawn_rows(values, limit, dtype):
    _check(np.asarray(values, dtype=dtype), limit)


def test_the_vector_path_runs_where_the_host_has_avx512():
    """The tests above exercise the vector path wherever numpy sees AVX-512 (numba compiles for the
    host), and the scalar loop everywhere (what ``without_vectors`` compiles)."""
    from numpy._core._multiarray_umath import __cpu_features__

    assert without_vectors(numba.njit(_compresses.py_func)) is False

    assert _compresses() == bool(__cpu_features__.get("AVX512F", False))


def test_the_compressing_store_of_older_llvm_lists_the_same(monkeypatch):
    """Before LLVM 19 the block is written by LLVM's masked compressing store: the same columns."""
    monkeypatch.setattr(intrinsics, "REGISTER_COMPRESS", False)

    @numba.njit  # compiled now, with the store of older LLVM
    def listed_by_store(values, limit, listed):
        return list_kernels.list_within(values, limit, listed)

    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        for w in (0, 15, 16, 17, 40, 2048):
            values, limit = _row(rng, "nan", w, dtype)
            listed = np.full(w, -7, dtype=np.int32)
            n = listed_by_store(values, limit, listed)
            np.testing.assert_array_equal(listed[:n], np.flatnonzero(values <= limit))
