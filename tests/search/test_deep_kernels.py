"""The deep pass's search near a guessed place (embedeval._search.deep_kernels._place_near) against
``np.searchsorted``. The pass itself (rows with and without bucket tables) is tested in
test_deep_fused.py, the primitives it builds on in test_primitives.py."""

from __future__ import annotations

import numpy as np
import pytest

numba = pytest.importorskip("numba")
from embedeval._search import deep_kernels  # noqa: E402


@numba.njit
def _places_near(row, values, guesses, n):
    out = np.empty(values.size, np.int64)
    for k in range(values.size):
        out[k] = deep_kernels._place_near(row, values[k], guesses[k], n)
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
