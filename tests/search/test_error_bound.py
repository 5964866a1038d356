"""The one error bound: every exact path's bound is error_bound with its own terms, and it holds."""

from __future__ import annotations

import numpy as np
import pytest

from embedeval._inputs.arrays import encode_labels
from embedeval._search import FlatSearcher
from embedeval._search.deep_exact import error_bounds
from embedeval._search.error_bound import (
    FLOAT32_UNIT_ROUNDOFF,
    FLOAT64_UNIT_ROUNDOFF,
    error_bound,
    scale,
    terms,
    underflow_bound,
)
from embedeval._setlevel.pairs import PairSpace, Tile


def test_error_bound_is_the_written_formula():
    s = np.array([1.0, 4.0, 1e6])
    for u in (FLOAT32_UNIT_ROUNDOFF, FLOAT64_UNIT_ROUNDOFF):
        expected = 1.01 * 132 * u * s + (2 * 128 + 4) * {FLOAT32_UNIT_ROUNDOFF: 2.0**-149}.get(u, 2.0**-1074)
        np.testing.assert_array_equal(error_bound(s, 132, u, 128), expected)
    assert terms(128, True) == 132 and terms(128, False) == 131
    np.testing.assert_array_equal(scale(np.array([1.0, 2.0]), 3.0, True), [16.0, 25.0])
    np.testing.assert_array_equal(scale(np.array([1.0, 2.0]), 3.0, False), [3.0, 6.0])


@pytest.mark.parametrize("euclidean", [True, False])
def test_every_path_cites_the_one_bound(euclidean):
    """The searchers' bound, the deep ranking's two and the pair tiles' are error_bound with the
    terms each states (faiss's; the exact formula's added; 2d more in the pairs' float64 sums)."""
    rng = np.random.default_rng(0)
    d = 16
    x = rng.standard_normal((40, d)).astype(np.float32)
    distance = "euclidean" if euclidean else "inner_product"
    q = x[:5]
    q_norms = np.sqrt(np.einsum("ij,ij->i", q, q, dtype=np.float64))
    searcher = FlatSearcher(x, distance)
    assert searcher._centre is None  # centred data: no centring term, M the largest norm
    s = scale(q_norms, searcher._centred_norm, euclidean)
    np.testing.assert_array_equal(
        searcher._error_bound(q, FLOAT32_UNIT_ROUNDOFF), error_bound(s, terms(d, euclidean), 2.0**-24, d)
    )
    max_norm = float(np.sqrt(np.einsum("ij,ij->i", x, x, dtype=np.float64)).max())
    s = scale(q_norms, max_norm, euclidean)
    exact = error_bound(s, terms(d, euclidean), FLOAT64_UNIT_ROUNDOFF, d)
    b32, b64 = error_bounds(q_norms, max_norm, d, euclidean)
    np.testing.assert_array_equal(b32, error_bound(s, terms(d, euclidean), FLOAT32_UNIT_ROUNDOFF, d) + exact)
    t64 = terms(d, euclidean) + (d if euclidean else 0)
    np.testing.assert_array_equal(b64, error_bound(s, t64, FLOAT64_UNIT_ROUNDOFF, d) + exact)
    assert b32.min() > underflow_bound(d, FLOAT32_UNIT_ROUNDOFF)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
def test_pair_tiles_stay_within_their_bound(seed, distance):
    """|tile distance - exact formula| <= E on offsets, spreads and dimensions that stress it."""
    rng = np.random.default_rng(900 + seed)
    n, d = 60, int(rng.choice([1, 3, 64, 257]))
    x = rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-4, 4) + rng.uniform(-1e3, 1e3) * (seed % 2)
    x = x.astype(np.float32)
    codes = encode_labels(rng.integers(0, 4, n))[1][0]
    space = PairSpace(x, codes, None, None, distance, 64)
    tile = Tile(slice(0, n), slice(0, n), False)
    dist, bound = space.approx(tile)
    rows, cols = np.divmod(np.arange(n * n), n)
    exact = space.exact(rows, cols).reshape(n, n)
    assert np.abs(dist - exact).max() <= bound
