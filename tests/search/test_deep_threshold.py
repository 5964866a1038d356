"""The sampled threshold's shortcut (embedeval._search.deep_count.may_bind): where it says no sampled
other can bound a row, the threshold itself (deep_count.threshold, the slow and obvious way: every
k tried) is +inf, on many seeded rows; and it says so for whole rankings, which skip the sample."""

from __future__ import annotations

import numpy as np
import pytest

from embedeval._core import budget
from embedeval._search import deep_count


def _rows(rng, m):
    """Sampled others (m, s) ascending, +inf padded, NaN-free; how many relevant values each reaches
    (non-decreasing, at most J); J, scale, depth and count per row."""
    s = int(rng.integers(0, 40))
    count = rng.integers(0, s + 1, m)
    others = np.sort(rng.normal(0, 1, (m, s)), axis=1)
    if rng.random() < 0.3:  # ties and duplicates among the sampled values
        others = np.sort(np.round(others), axis=1)
    others[np.arange(s)[None, :] >= count[:, None]] = np.inf
    n_ranked = rng.integers(0, 50, m)
    reached = np.sort(rng.integers(0, n_ranked[:, None] + 1, (m, s)), axis=1)
    nearer = rng.random(m) < 0.3  # every relevant value nearer than every sampled other
    reached[nearer] = n_ranked[nearer, None]
    scale = rng.choice([0.0, 0.5, 1.0, rng.uniform(0, 60)], m)
    most = n_ranked + count * scale  # everything a row has: depth from 1 to a little past it
    depth = np.maximum(1, np.round(most * rng.uniform(0.5, 1.2, m))).astype(np.int64)
    shallow = rng.random(m) < 0.3  # depth within the relevant values: the first sampled other may do
    depth[shallow] = rng.integers(1, n_ranked[shallow] + 2)
    return others, reached, scale, depth, count, n_ranked


@pytest.mark.parametrize("seed", range(60))
def test_no_finite_threshold_where_may_bind_says_none(seed):
    rng = np.random.default_rng(seed)
    bound = 0
    for sigmas in (-2.0, -0.5, 0.0, 0.5, 2.0, 4.0, 12.0, 52.0):
        others, reached, scale, depth, count, n_ranked = _rows(rng, 64)
        threshold = deep_count.threshold(others, reached, scale, depth, sigmas)
        may = deep_count.may_bind(count, scale, n_ranked, depth, sigmas)
        assert np.isinf(threshold[~may]).all()
        bound += int(np.isfinite(threshold).sum())
        assert np.isfinite(threshold[may]).sum() <= may.sum()
    assert bound > 0  # the rows include ones where the threshold binds


def test_at_the_edge_may_bind_is_the_threshold():
    """One row whose estimate at its last sampled other just reaches depth binds; one less does not."""
    sigmas, count, scale, n_ranked = 2.0, 100, 10.0, 30
    others = np.arange(count, dtype=np.float64)[None, :]
    reached = np.full((1, count), n_ranked)
    depth = int(np.floor(n_ranked + (count - sigmas * np.sqrt(count)) * scale))  # 830: k = 100 is enough
    args = (np.array([count]), np.array([scale]), np.array([n_ranked]))
    assert np.isfinite(deep_count.threshold(others, reached, np.array([scale]), np.array([depth]), sigmas))[0]
    assert deep_count.may_bind(*args, np.array([depth]), sigmas)[0]
    assert not deep_count.may_bind(*args, np.array([depth + 2]), sigmas)[0]
    assert np.isinf(deep_count.threshold(others, reached, np.array([scale]), np.array([depth + 2]), sigmas))[0]


def test_whole_rankings_skip_the_sample():
    """R ~ 200 of 20,000, ranked whole (depth: every other reference), a sample of 1,024: no row binds."""
    count, n_relevant, size = 1014, 199, 20000
    scale = (size - n_relevant) / count
    assert not deep_count.may_bind(np.array([count]), np.array([scale]), np.array([n_relevant]), size - 1, 2.0)[0]


@pytest.mark.parametrize("seed", range(12))
def test_at_most_searching_rows_equals_comparing_every_value(seed, monkeypatch):
    """deep_count.at_most by a binary search per row against counting every comparison: rows of
    ties, -inf, +inf and NaN values (NaN last within a row's n_ranked, +inf after), probes that are
    NaN, +inf, -inf, equal to a value or between values, and n_ranked of 0 and of the full width."""
    rng = np.random.default_rng(seed)
    m, w = int(rng.integers(1, 12)), int(rng.integers(1, 50))
    pool = np.concatenate([rng.integers(-3, 4, 8).astype(np.float64), [-np.inf, np.inf, np.nan, 0.25]])
    n_ranked = rng.integers(0, w + 1, m)
    n_ranked[0] = w
    nearest = np.sort(rng.choice(pool, (m, w)), axis=1)  # NaN last
    nearest[np.arange(w)[None, :] >= n_ranked[:, None]] = np.inf
    padded = np.concatenate([np.full((m, 1), -np.inf), nearest, np.full((m, 1), np.inf)], axis=1)
    probes = rng.choice(np.concatenate([pool, [0.5, -0.5, 3.5]]), m)
    want = np.count_nonzero(nearest <= probes[:, None], axis=1)
    monkeypatch.setattr(budget, "DEEP_SEARCH_FROM", 0)
    np.testing.assert_array_equal(deep_count.at_most(padded, n_ranked, probes), want)
    monkeypatch.setattr(budget, "DEEP_SEARCH_FROM", 1 << 30)
    np.testing.assert_array_equal(deep_count.at_most(padded, n_ranked, probes), want)
