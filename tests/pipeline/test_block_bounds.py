"""Query blocks' bounds (:func:`embedeval._pipeline.blocks.block_bounds`): every row once, in
order; within the memory budget; shared equally in whole rounds of the workers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from embedeval._core import budget as _budget
from embedeval._pipeline.blocks import block_bounds, equal_share


def _bounds(widths, n_workers, dim=128, block_size=None):
    return list(block_bounds(np.asarray(widths), block_size, n_workers, dim))


@pytest.mark.parametrize("seed", range(20))
def test_blocks_cover_the_rows_within_the_budget(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30_000))
    widths = np.sort(rng.integers(1, rng.choice([10, 3_000, 10**6]), n))
    n_workers = int(rng.integers(1, 5))
    bounds = _bounds(widths, n_workers, dim=int(rng.choice([16, 128, 768])))
    assert bounds[0][0] == 0 and bounds[-1][1] == n
    assert all(a < z for a, z in bounds)
    assert all(z == a2 for (_, z), (a2, _) in itertools.pairwise(bounds))
    budget = _budget.BLOCK_ENTRIES // n_workers
    assert all(z - a == 1 or (z - a) * widths[z - 1] <= budget for a, z in bounds)


@pytest.mark.parametrize("n_workers", [1, 2, 3, 4])
def test_equal_widths_give_equal_blocks_in_whole_rounds(n_workers):
    # R ~ 2,000 at n = 20,000 (the floor table's row 2): the budget allows 1,048 rows with two
    # workers, which left 19 blocks and a remainder of 88 rows; now 20 blocks of 1,000
    n = 20_000
    bounds = _bounds(np.full(n, 2_000), n_workers)
    sizes = [z - a for a, z in bounds]
    assert max(sizes) - min(sizes) <= 1
    assert len(bounds) % n_workers == 0
    if n_workers == 2:
        assert sizes == [1_000] * 20


def test_sharing_never_cuts_below_the_blas_floor():
    # 3,000 rows of d = 128: four blocks for two workers would be 750 rows each, below faiss's
    # BLAS threshold (1,000 rows); three of 1,000 instead
    sizes = [z - a for a, z in _bounds(np.full(3_000, 5), 2)]
    assert sizes == [1_000] * 3


def test_equal_share():
    assert equal_share(20_000, 1_048, 0, 2, 1_000) == 1_000  # 20 blocks
    assert equal_share(19_000, 1_048, 1, 2, 1_000) == 1_000  # still 20 in all: no drift
    assert equal_share(900, 4_096, 0, 2, 1_000) == 900  # one block: no sharing
    assert equal_share(5, 1, 3, 2, 1_000) == 1  # the budget allows one row


def test_a_block_size_is_kept():
    assert [z - a for a, z in _bounds(np.ones(10), 2, block_size=4)] == [4, 4, 2]
