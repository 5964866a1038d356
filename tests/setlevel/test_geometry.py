"""Embedding geometry (OML's pcf): the blocked float64 scatter matrix against a direct
numpy/scikit-learn PCA, OML's counting rule, and the degenerate spaces."""

from __future__ import annotations

import math

import numpy as np
import pytest

from embedeval._setlevel.geometry import explained_variance, pcf, scatter_matrix

SHARES = (0.1, 0.5, 0.8, 0.9, 0.95, 0.99, 1.0)


def oml_rule(ratios, shares):
    """OML: n = searchsorted(cumsum(ratios), r, side='right') + 1, here capped at d."""
    cumulative = np.cumsum(ratios)
    return {r: min(len(ratios), int(np.searchsorted(cumulative, r, side="right")) + 1) / len(ratios) for r in shares}


def anisotropic(seed):
    """Gaussian rows with a decaying spectrum, off-centre (large mean: centring must be exact)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 300)), int(rng.integers(1, 40))
    scales = np.exp(-rng.uniform(0, 0.4) * np.arange(d))
    x = rng.standard_normal((n, d)) * scales @ np.linalg.qr(rng.standard_normal((d, d)))[0]
    return (x + rng.uniform(-50, 50, d)).astype(np.float32)


@pytest.mark.parametrize("seed", range(20))
def test_explained_variance_equals_the_squared_singular_values(seed):
    x = anisotropic(seed)
    centred = x.astype(np.float64) - x.astype(np.float64).mean(axis=0)
    singular = np.linalg.svd(centred, compute_uv=False)
    expected = np.zeros(x.shape[1])
    expected[: singular.size] = singular**2 / max(len(x) - 1, 1)
    np.testing.assert_allclose(explained_variance(x), expected, rtol=1e-9, atol=1e-12 * expected.max())


@pytest.mark.parametrize("seed", range(20))
def test_pcf_follows_oml_rule_on_scikit_learns_pca(seed):
    decomposition = pytest.importorskip("sklearn.decomposition")
    x = anisotropic(seed)
    if len(x) < 2 or np.ptp(x, axis=0).max() == 0:
        pytest.skip("no variance")
    ratios = decomposition.PCA().fit(x.astype(np.float64)).explained_variance_ratio_
    ratios = np.concatenate([ratios, np.zeros(x.shape[1] - ratios.size)])  # n < d: the rest explain nothing
    expected = oml_rule(ratios, SHARES)
    ours = pcf(x, SHARES)
    # a cumulative share within rounding of a requested share may fall either side; away from that, equal
    cumulative = np.cumsum(ratios)
    for r in SHARES:
        if r < 1 and np.abs(cumulative - r).min() > 1e-9:
            assert ours[r] == expected[r], r
    assert ours[1.0] == 1.0


def test_block_size_changes_nothing_beyond_rounding():
    x = anisotropic(3)
    _, base = scatter_matrix(x)
    for rows in (1, 7, 64):
        np.testing.assert_allclose(scatter_matrix(x, block_rows=rows)[1], base, rtol=1e-10, atol=1e-9)
    assert pcf(x, SHARES, block_rows=5) == pcf(x, SHARES)


def test_hand_computed_spectrum():
    """Variances 9, 4, 1, 1 along the axes: cumulative shares 0.6, 0.867, 0.933, 1."""
    x = np.vstack([np.diag([3.0, 2.0, 1.0, 1.0]), -np.diag([3.0, 2.0, 1.0, 1.0])])
    assert pcf(x, (0.5, 0.59, 0.61, 0.9, 0.95, 1.0)) == {
        0.5: 0.25,
        0.59: 0.25,
        0.61: 0.5,
        0.9: 0.75,
        0.95: 1.0,
        1.0: 1.0,
    }


def test_oml_docstring_example():
    """OML's example: 4 unit vectors in 10 dimensions span 3 centred directions of equal variance."""
    x = np.eye(4, 10)
    assert pcf(x, (0.5,)) == {0.5: 0.2}
    assert pcf(x, (0.9,)) == {0.9: 0.3}


def test_a_rank_deficient_space_needs_few_components():
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((500, 3)) @ rng.standard_normal((3, 32))).astype(np.float32)
    result = pcf(x, (0.5, 0.999, 1.0))
    assert result[0.5] <= 2 / 32 and result[0.999] <= 3 / 32 and result[1.0] == 1.0


def test_one_dimension_needs_its_only_component():
    assert pcf(np.arange(10.0)[:, None], (0.1, 0.5, 1.0)) == {0.1: 1.0, 0.5: 1.0, 1.0: 1.0}


@pytest.mark.parametrize(
    "x", [np.ones((5, 4)), np.ones((1, 4)) * 3, np.zeros((7, 1))], ids=["constant", "one row", "d=1"]
)
def test_spaces_without_variance_give_nan_and_a_warning(x):
    with pytest.warns(RuntimeWarning, match="no variance"):
        result = pcf(x, (0.5, 0.9))
    assert all(math.isnan(v) for v in result.values())
