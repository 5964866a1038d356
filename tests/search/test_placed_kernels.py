"""The collected placement's pieces (embedeval._search.placed_kernels) on hypothesis-drawn inputs:
the float32 order key against numpy's float order, the radix sort with its payload against numpy's
stable argsort, and whole placements against ``np.searchsorted``. The deep pass's use of them
(flushes at any point, rows with and without tables) is tested in test_deep_fused.py."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

numba = pytest.importorskip("numba")
from embedeval._search import placed_kernels as placed  # noqa: E402

FLOAT32 = st.floats(width=32, allow_nan=False)  # -0.0, subnormals, +-inf, float32's extremes


def _keys_of(values):
    """The collected keys of float32 ``values`` (row 0), as place_chunk writes them."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    negative = (bits & np.uint64(1 << 31)) != 0
    return np.where(negative, ~bits & np.uint64(0xFFFF_FFFF), bits | np.uint64(1 << 31))


@settings(max_examples=200, deadline=None)
@given(st.lists(FLOAT32, min_size=1, max_size=60))
def test_the_float32_order_key_orders_as_the_floats_do(values):
    """Unsigned order of the keys is numpy's float order (-0.0 and 0.0 equal as floats, -0.0's
    key first), and the key's inverse gives the float back bit for bit."""
    values = np.asarray(values, dtype=np.float32)
    keys = _keys_of(values)
    by_key = values[np.argsort(keys, kind="stable")]
    assert (by_key[1:] >= by_key[:-1]).all()
    ascending = np.sort(values)
    ordered = _keys_of(ascending)
    assert (ordered[1:] > ordered[:-1])[ascending[1:] > ascending[:-1]].all()
    back = np.array([placed._value32(key) for key in keys])  # float64 of the float32
    np.testing.assert_array_equal(back.astype(np.float32).view(np.uint32), values.view(np.uint32))
    collected = placed.new_collected(len(values))
    k, c, fill = collected.keys, collected.cols, collected.fill
    k[: len(values)], c[: len(values)], fill[0] = keys, np.arange(len(values)), len(values)
    padded = np.array([[-np.inf, np.inf]])  # no relevant value: every value placed at 0
    counts = np.zeros((1, 1), np.int64)
    near = placed.place_collected(collected, padded, np.array([0]), np.array([np.inf]), counts)
    # every value is a near-tie of the sentinels with an infinite window, listed by column
    assert counts[0, 0] == len(values) and sorted(near[:, 1].tolist()) == list(range(len(values)))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(0, 2**44 - 1), min_size=1, max_size=300),
    st.integers(33, 44),
)
def test_the_radix_sort_carries_the_columns_as_a_stable_sort(keys, n_bits):
    """_sort_pairs on the low ``n_bits`` of the keys (the row above bit 32): the keys ascending and
    each column beside its key, in the order of numpy's stable argsort (equal keys keep theirs)."""
    keys = np.asarray(keys, dtype=np.uint64) & np.uint64((1 << n_bits) - 1)
    n = keys.size
    collected = placed.new_collected(n + 3)  # spare room: only the first n are sorted
    k, c, sk, sc = collected.keys, collected.cols, collected.scratch_keys, collected.scratch_cols
    k[:n], c[:n] = keys, np.arange(n, dtype=np.int32)
    at = placed._sort_pairs(k, c, sk, sc, n, n_bits, collected.hist)
    out_keys, out_cols = (sk, sc) if at else (k, c)
    order = np.argsort(keys, kind="stable")
    np.testing.assert_array_equal(out_keys[:n], keys[order])
    np.testing.assert_array_equal(out_cols[:n], order)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.lists(FLOAT32, min_size=0, max_size=40), min_size=1, max_size=5),
    st.lists(FLOAT32, min_size=1, max_size=80),
    st.sampled_from([0.0, 1e-30, 1e-3, 10.0]),
)
def test_collected_values_are_placed_as_numpy_searchsorted_places_them(relevant, values, window):
    """Rows of relevant values (ascending float64, +inf after each row's own), values spread over
    the rows: the counts at min(place, ranked) and the near-ties are numpy's."""
    m = len(relevant)
    j = max(max(len(r) for r in relevant), 1)
    padded = np.full((m, j + 2), np.inf)
    padded[:, 0] = -np.inf
    for i, r in enumerate(relevant):
        padded[i, 1 : 1 + len(r)] = np.sort(np.asarray(r, dtype=np.float64))
    values = np.asarray(values, dtype=np.float32)
    rows = np.arange(values.size) % m
    ranked = np.array([len(r) for r in relevant])
    windows = np.full(m, window)
    collected = placed.new_collected(values.size)
    k, c, fill = collected.keys, collected.cols, collected.fill
    k[: values.size] = (rows.astype(np.uint64) << np.uint64(32)) | _keys_of(values)
    c[: values.size], fill[0] = np.arange(values.size), values.size
    counts = np.zeros((m, j + 1), np.int64)
    near = placed.place_collected(collected, padded, ranked, windows, counts)
    want, ties = np.zeros_like(counts), set()
    for col, (i, v) in enumerate(zip(rows, values.astype(np.float64), strict=True)):
        p = int(np.searchsorted(padded[i, 1:-1], v, side="right"))
        want[i, min(p, ranked[i])] += 1
        with np.errstate(invalid="ignore"):
            if v - padded[i, p] <= window or padded[i, p + 1] - v <= window:
                ties.add((int(i), col, p))
    np.testing.assert_array_equal(counts, want)
    assert {tuple(t) for t in near.tolist()} == ties and len(near) == len(ties)


@numba.njit
def _places_near(row, values, guesses, n):
    out = np.empty(values.size, np.int64)
    for k in range(values.size):
        out[k] = placed._search_near(row, values[k], guesses[k], n)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_the_search_near_a_guess_equals_searchsorted_wherever_the_guess_is(seed):
    """The float64 re-placement's search from the float32 place: numpy's searchsorted (side "right")
    whether the guess is the place, within the window around it or anywhere else in the row, on
    rows with duplicates, +-inf, ties with the value and values outside the row."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 40))
    values = np.sort(rng.choice(np.array([-np.inf, -1.0, 0.0, 0.5, 1.0, 2.0, 3.0, np.inf]), n))
    if seed % 3:
        values = np.sort(rng.normal(0, 1, n))
    row = np.concatenate([[-np.inf], values, [np.inf]])
    probes = np.concatenate([values, rng.normal(0, 2, 30), [-np.inf, np.inf, -5.0, 5.0]])
    want = np.searchsorted(values, probes, side="right")
    for guesses in (want, np.clip(want + rng.integers(-6, 7, want.size), 0, n), rng.integers(0, n + 1, want.size)):
        np.testing.assert_array_equal(_places_near(row, probes, guesses, n), want)
