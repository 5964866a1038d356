"""Mean ranks over datasets with bootstrap intervals, and the systems tied for first.

The bootstrap draws the datasets with replacement; where per-query values exist it is two-level:
each drawn dataset's scores are one of its query-bootstrap replicates (the queries drawn with
replacement, the same draw for every system), chosen at random for every draw, so a dataset
drawn twice gets two independent query resamples.
"""

from __future__ import annotations

import numpy as np

from .distributions import average_ranks

_BLOCK = 64  # replicates per block: (block, n_datasets, n_systems, n_systems) booleans in ranking


def bootstrap_mean_ranks(
    scores: np.ndarray, query_replicates: np.ndarray | None, n_resamples: int, rng: np.random.Generator
) -> np.ndarray:
    """Replicate mean ranks, shape (n_resamples, n_systems).

    Parameters
    ----------
    scores : array of shape (n_datasets, n_systems)
        The datasets' scores (used where ``query_replicates`` is None).
    query_replicates : array of shape (n_datasets, n_query_resamples, n_systems), or None
        Per dataset, its replicate means over resampled queries.
    """
    n_datasets, n_systems = scores.shape
    out = np.empty((n_resamples, n_systems))
    for start in range(0, n_resamples, _BLOCK):
        size = min(_BLOCK, n_resamples - start)
        drawn = rng.integers(0, n_datasets, size=(size, n_datasets))
        if query_replicates is None:
            values = scores[drawn]
        else:
            which = rng.integers(0, query_replicates.shape[1], size=(size, n_datasets))
            values = query_replicates[drawn, which]
        out[start : start + size] = average_ranks(values).mean(axis=1)
    return out


def places(mean_ranks: np.ndarray) -> np.ndarray:
    """The place of each system when the systems are ordered by mean rank (1 = lowest mean rank),
    systems with equal mean ranks sharing the best place; the last axis holds the systems."""
    return 1 + (mean_ranks[..., None, :] < mean_ranks[..., :, None]).sum(axis=-1)


def rank_intervals(point: np.ndarray, replicates: np.ndarray, confidence: float) -> dict[str, np.ndarray]:
    """Percentile intervals at ``confidence`` of the mean ranks (``low``, ``high``) and of the
    places (``place_low``, ``place_high``: the lower and higher order statistics, so whole
    places), with the point ``place``."""
    tail = (1 - confidence) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail], axis=0)
    where = places(replicates)
    return {
        "low": low,
        "high": high,
        "place": places(point),
        "place_low": np.quantile(where, tail, axis=0, method="lower"),
        "place_high": np.quantile(where, 1 - tail, axis=0, method="higher"),
    }


def tied_for_first(mean_ranks: np.ndarray, worse_than_best) -> tuple[int, list[int]]:
    """(the best system, the systems tied for first): the system with the lowest mean rank (the
    first in the order given among equals), and every system that ``worse_than_best(best, s)``
    does not declare significantly worse than it, the best included."""
    best = int(np.argmin(mean_ranks))
    return best, [s for s in range(mean_ranks.size) if s == best or not worse_than_best(best, s)]


def not_different_groups(order: list[str], different: set[frozenset]) -> list[list[str]]:
    """The maximal runs of consecutive systems in ``order`` (by mean rank) within which no pair is
    in ``different`` (the pairs the post-hoc test separates): the bars of a critical-difference
    diagram. Runs of one system are left out; a run inside a longer one is left out."""
    runs = []
    for i in range(len(order)):
        j = i
        while j + 1 < len(order) and all(frozenset((order[m], order[j + 1])) not in different for m in range(i, j + 1)):
            j += 1
        if j > i and not any(lo <= i and j <= hi for lo, hi in runs):
            runs.append((i, j))
    return [order[lo : hi + 1] for lo, hi in runs]
