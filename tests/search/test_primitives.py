"""The compiled kernels' primitives (embedeval._search.primitives) against numpy: ``searchsorted``
for the bisections, the gallop and the bucket tables, ``argsort(kind="stable")`` and the float order for the
ordered keys, a plain loop for the ranks, on seeded and drawn inputs with ties, signed zeros,
infinities, subnormals, empty and one-element rows, and every value equal."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

numba = pytest.importorskip("numba")
from embedeval._search import primitives  # noqa: E402

AWKWARD = [0.0, -0.0, 1.0, -1.0, 5e-324, -5e-324, 2.2e-308, np.inf, -np.inf, 1e308, -1e308, 0.5, 0.5, 0.5]
FLOATS = st.floats(allow_nan=False, width=64)


def _rows(seed):
    """Ascending float64 rows: empty, one value, all equal, duplicates, the awkward values."""
    rng = np.random.default_rng(seed)
    yield np.empty(0)
    yield np.array([rng.standard_normal()])
    yield np.full(9, 3.0)
    yield np.sort(rng.integers(-3, 4, 40).astype(np.float64))
    yield np.sort(np.array(AWKWARD))
    yield np.sort(rng.standard_normal(200) * 10.0 ** rng.integers(-300, 300))


def _probes(row):
    return np.concatenate((row, np.nextafter(row, np.inf), np.nextafter(row, -np.inf), AWKWARD))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_bisections_are_searchsorted(seed):
    """count_at_most and count_below on every slice [low, high) equal low + numpy's searchsorted
    of the slice, right and left."""
    for row in _rows(seed):
        n = row.size
        for low, high in {(0, n), (0, n // 2), (n // 3, n), (n // 2, n // 2)}:
            for v in _probes(row):
                part = row[low:high]
                assert primitives.count_at_most(row, low, high, v) == low + np.searchsorted(part, v, "right")
                assert primitives.count_below(row, low, high, v) == low + np.searchsorted(part, v, "left")


@settings(max_examples=200, deadline=None)
@given(st.lists(FLOATS, max_size=60), FLOATS)
def test_the_bisections_are_searchsorted_on_drawn_rows(values, v):
    row = np.sort(np.array(values, dtype=np.float64))
    assert primitives.count_at_most(row, 0, row.size, v) == np.searchsorted(row, v, "right")
    assert primitives.count_below(row, 0, row.size, v) == np.searchsorted(row, v, "left")


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_gallop_is_searchsorted_from_any_lower_place(seed):
    """gallop_at_most from every low at or below the place equals numpy's searchsorted (right)."""
    for row in _rows(seed):
        for v in _probes(row):
            want = int(np.searchsorted(row, v, "right"))
            for low in {0, want // 2, max(want - 1, 0), want}:
                assert primitives.gallop_at_most(row, low, row.size, v) == want


def test_a_near_tie_is_within_the_window_on_either_side():
    assert primitives.near_tie(1.0, 0.5, 3.0, 0.5) and primitives.near_tie(1.0, -3.0, 1.5, 0.5)
    assert not primitives.near_tie(1.0, 0.25, 1.75, 0.5)


def _bucket_table(row, n):
    """(first, inverse, table) as the kernels build them over ascending ``row``'s n buckets."""
    table = np.full(n + 1, -7, dtype=np.int64)
    first = row[0] if row.size else 0.0
    inverse = primitives.span_inverse(first, row[-1], n) if row.size else 0.0
    primitives.fill_table(row, first, inverse, table)
    return first, inverse, table


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n_buckets", [1, 2, 16, 256])
def test_a_bucket_table_brackets_every_place(seed, n_buckets):
    """A value's place among the row's values (searchsorted right) lies in [table[k], table[k + 1]]
    for k its bucket, for values inside and outside the row's span; the table ends with the count."""
    top = float(n_buckets - 1)
    for row in _rows(seed):
        first, inverse, table = _bucket_table(row, n_buckets)
        assert table[-1] == row.size and (np.diff(table) >= 0).all() and table[0] == 0
        for v in _probes(row):
            k = primitives.bucket(v, first, inverse, top)
            assert 0 <= k <= top
            assert table[k] <= np.searchsorted(row, v, "right") <= table[k + 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(FLOATS, min_size=1, max_size=60), st.lists(FLOATS, max_size=20), st.sampled_from([1, 3, 16]))
def test_a_bucket_table_brackets_every_place_on_drawn_rows(values, probes, n_buckets):
    row = np.sort(np.array(values, dtype=np.float64))
    first, inverse, table = _bucket_table(row, n_buckets)
    for v in [*probes, *row]:
        k = primitives.bucket(v, first, inverse, float(n_buckets - 1))
        assert table[k] <= np.searchsorted(row, v, "right") <= table[k + 1]


@settings(max_examples=300, deadline=None)
@given(FLOATS, FLOATS, st.floats(min_value=0.0, max_value=1e300), st.sampled_from([0.0, 7.0, 4095.0]))
def test_the_bucket_is_monotone_and_clamped(v, w, inverse, top):
    """bucket(v) <= bucket(w) for v <= w, within [0, top], whatever first and inverse."""
    v, w = min(v, w), max(v, w)
    for first in (0.0, v, w, -1.5):
        a, b = primitives.bucket(v, first, inverse, top), primitives.bucket(w, first, inverse, top)
        assert 0 <= a <= b <= top


def test_no_buckets_without_a_finite_span():
    """span_inverse is 0 for one value repeated, an infinite or overflowing span, a subnormal one."""
    assert primitives.span_inverse(2.0, 2.0, 16) == 0.0
    assert primitives.span_inverse(-np.inf, 1.0, 16) == 0.0
    assert primitives.span_inverse(0.0, np.inf, 16) == 0.0
    assert primitives.span_inverse(-1e308, 1e308, 16) == 0.0
    assert primitives.span_inverse(0.0, 5e-324, 16) == 0.0
    assert primitives.span_inverse(1.0, 3.0, 16) == 8.0


def test_table_sizes_are_powers_of_two_from_16():
    assert [primitives.table_size.py_func(n) for n in (0, 1, 16, 17, 1000)] == [16, 16, 16, 32, 1024]


def _keys(values):
    bits = np.asarray(values, dtype=np.float64).view(np.uint64)
    return np.array([primitives.ordered_key(b) for b in bits], dtype=np.uint64)


@pytest.mark.parametrize("seed", [0, 1])
def test_ordered_keys_sort_as_the_floats(seed):
    """Sorting the keys (stably) orders the values as numpy's stable argsort does, -0.0 before
    0.0 (numpy keeps their order: both compare equal), and ordered_bits undoes ordered_key."""
    rng = np.random.default_rng(seed)
    values = np.concatenate((AWKWARD, rng.standard_normal(300) * 10.0 ** rng.integers(-320, 300, 300)))
    keys = _keys(values)
    by_key = values[np.argsort(keys, kind="stable")]
    by_value = values[np.argsort(values, kind="stable")]
    np.testing.assert_array_equal(by_key, by_value)  # equal as floats: -0.0 == 0.0
    assert not np.signbit(by_key[np.flatnonzero(by_key == 0.0)[-1]])  # +0.0 after every -0.0
    back = np.array([primitives.ordered_bits(k) for k in keys], dtype=np.uint64)
    np.testing.assert_array_equal(back, values.view(np.uint64))


@settings(max_examples=300, deadline=None)
@given(FLOATS, FLOATS)
def test_ordered_keys_compare_as_the_floats(x, y):
    kx, ky = _keys([x, y])
    assert (kx < ky) == (x < y or (x == y == 0.0 and np.signbit(x) and not np.signbit(y)))


def _ranks_by_loop(counts, n_ranked, depth, size):
    out, j = [], 0
    for p, c in enumerate(counts):
        for _ in range(c):
            out.append(float(j + 1 + p))
            j += 1
    out = [r if j < n_ranked and r <= depth else np.inf for j, r in enumerate(out)]
    return (out + [np.inf] * size)[:size]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 4), min_size=1, max_size=12),
    st.integers(0, 30),
    st.sampled_from([0.0, 3.0, 10.5, np.inf]),
    st.integers(0, 40),
)
def test_ranks_from_counts_are_the_loops(counts, n_ranked, depth, size):
    """The value at position j in gap p has rank j + 1 + p, kept below n_ranked and up to depth."""
    counts = np.array(counts, dtype=np.int64)
    size = max(size, min(int(counts.sum()), n_ranked))
    out = np.full(size, -7.0)
    primitives.write_ranks(counts, n_ranked, depth, out)
    np.testing.assert_array_equal(out, _ranks_by_loop(counts, n_ranked, depth, size))
