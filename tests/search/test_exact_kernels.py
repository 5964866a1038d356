"""The compiled exact formula against numpy's, bit for bit.

:func:`embedeval._search.exact_kernels.pair_values` must give exactly the float64 numbers of
:func:`embedeval._search.float64.exact_distance` (numpy's rounded terms and pairwise sums):
every dimension from 1 to past two of numpy's summation blocks, signed zeros, magnitudes from
float32's smallest normal numbers to its largest, values with few bits (lattices: many exact
ties), and terms whose sum cancels. A kernel that adds in another order, fuses a multiply and
an add, or loses a zero's sign differs here in at least one bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embedeval._core import compiled
from embedeval._search.float64 import exact_distance

pytestmark = pytest.mark.skipif(compiled._numba() is None, reason="numba is not installed")


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype == np.float64 and np.array_equal(a.view(np.int64), b.view(np.int64))


def _check(q, r, rows, cols):
    from embedeval._search.exact_kernels import pair_values

    for euclidean in (True, False):
        got = pair_values(q, r, rows, cols, euclidean)
        want = exact_distance(q[rows], r[cols], euclidean)
        bad = np.flatnonzero(got.view(np.int64) != want.view(np.int64))
        assert _same_bits(got, want), (euclidean, q.shape[1], bad[:5], got[bad[:5]], want[bad[:5]])


@pytest.mark.parametrize("d", [*range(1, 41), 63, 64, 65, 127, 128, 129, 135, 136, 200, 255, 256, 257, 384, 768, 1000])
def test_every_dimension_equals_numpy(d):
    rng = np.random.default_rng(d)
    q = rng.standard_normal((30, d)).astype(np.float32)
    r = (rng.standard_normal((40, d)) * rng.choice([1e-3, 1.0, 1e3], size=(40, 1))).astype(np.float32)
    rows, cols = rng.integers(0, 30, 300), rng.integers(0, 40, 300)
    _check(q, r, rows, cols)


def test_signed_zeros_and_cancelling_terms():
    d = 24
    q = np.zeros((5, d), dtype=np.float32)
    r = np.zeros((5, d), dtype=np.float32)
    q[1], r[1] = -0.0, 1.0  # products -0.0: numpy's sum is +0.0, the negation -0.0
    q[2], r[2] = 1.0, -0.0
    q[3, ::2], q[3, 1::2] = 1e30, -1e30  # terms that cancel exactly, and overflow when squared
    r[3] = 1.0
    q[4, 0], r[4, 0] = 3.0, 3.0  # a zero distance
    rows, cols = np.repeat(np.arange(5), 5), np.tile(np.arange(5), 5)
    _check(q, r, rows, cols)


@settings(max_examples=60, deadline=None)
@given(
    d=st.integers(1, 300),
    exponent=st.integers(-60, 60),
    lattice=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_generated_inputs_equal_numpy(d, exponent, lattice, seed):
    rng = np.random.default_rng(seed)
    if lattice:
        q = rng.integers(-2, 3, size=(8, d)).astype(np.float32)
        r = rng.integers(-2, 3, size=(9, d)).astype(np.float32)
    else:
        q = rng.standard_normal((8, d)) * 2.0**exponent
        r = rng.standard_normal((9, d)) * 2.0 ** (exponent + rng.integers(-30, 31))
        q, r = q.astype(np.float32), r.astype(np.float32)
    rows, cols = rng.integers(0, 8, 50), rng.integers(0, 9, 50)
    _check(q, r, rows, cols)


def test_plan_is_numpys_split():
    from embedeval._search.exact_kernels import BLOCK, plan

    blocks, steps = plan(128)
    assert blocks.tolist() == [[0, 128]] and steps.tolist() == [0]
    blocks, steps = plan(384)  # 384 -> 192 + 192 -> (96 + 96) + (96 + 96)
    assert blocks.tolist() == [[0, 96], [96, 96], [192, 96], [288, 96]]
    assert steps.tolist() == [0, 1, -1, 2, 3, -1, -1]
    blocks, _ = plan(1001)
    assert blocks[:, 1].sum() == 1001 and blocks[:, 1].max() <= BLOCK
    assert (blocks[1:, 0] == blocks[:-1, 0] + blocks[:-1, 1]).all()
