"""The resampling kernels, vectorised and in blocks of replicates so memory stays bounded.

- :func:`query_weights`: bootstrap resamples of the queries as count weights (how often each
  query is drawn), the same draws for every system so that differences stay paired.
- :func:`bootstrap_means`: replicate means of every system and metric, each system's runs
  resampled too (two levels) when it has several.
- :func:`sign_flip_exceedances`: the paired randomization test's counts.
- :func:`range_exceedances`: the randomised Tukey HSD's counts (Sakai).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from .._core import budget as _budget
from .rounding import tolerance

# Systems up to this many have their permutations tabulated (8! = 40,320 rows); more are drawn by sorting.
_TABLED_SYSTEMS = 8


def _blocks(n_resamples: int, per_replicate: int) -> Iterator[tuple[int, int]]:
    """(start, size) of blocks of replicates, each of at most RESAMPLE_ELEMENTS elements."""
    step = max(1, _budget.RESAMPLE_ELEMENTS // max(per_replicate, 1))
    for start in range(0, n_resamples, step):
        yield start, min(step, n_resamples - start)


def query_weights(n_queries: int, n_resamples: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """Blocks of bootstrap weights, float64 of shape (block, n_queries): row b counts how often
    each query is drawn in n_queries draws with replacement (a multinomial, drawn as indices).

    A block holds at most ``BOOTSTRAP_ELEMENTS`` weights (8 MB), and each row's indices are drawn
    and counted on their own, so an interval costs little memory beside the evaluation that made
    the values, at any number of queries (``bench/bench_interval_memory.py``). The draws are
    those of one (n_resamples, n_queries) array of indices, whatever the block size.
    """
    step = max(1, _budget.BOOTSTRAP_ELEMENTS // max(n_queries, 1))
    for start in range(0, n_resamples, step):
        weights = np.empty((min(step, n_resamples - start), n_queries))
        for row in weights:
            row[:] = np.bincount(rng.integers(0, n_queries, size=n_queries, dtype=np.int64), minlength=n_queries)
        yield weights


def bootstrap_means(runs: list[np.ndarray], n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Replicate means of shape (n_resamples, n_systems, n_metrics).

    Parameters
    ----------
    runs : list of numpy.ndarray of shape (n_runs_s, n_queries, n_metrics)
        Per system, its runs' per-query values (finite, the same queries for all).
    n_resamples : int
    rng : numpy.random.Generator

    Each replicate draws the queries once with replacement (shared by every system: a paired
    bootstrap) and, per system, its runs with replacement (independently across systems); the
    replicate mean is the mean over the drawn runs of each drawn run's mean over the drawn
    queries. A system with one run has only the query level. The runs are drawn from their
    deviations from the run mean scaled by sqrt(k / (k - 1)) for k runs, so that the variance
    between drawn runs is the unbiased one (drawing k of k runs otherwise shrinks it by
    (k - 1) / k, which matters with 3 to 10 seeds).
    """
    n_queries, n_metrics = runs[0].shape[1], runs[0].shape[2]
    runs = [_widened(r) for r in runs]
    columns = np.concatenate([r.transpose(1, 0, 2).reshape(n_queries, -1) for r in runs], axis=1)
    out = np.empty((n_resamples, len(runs), n_metrics))
    start = 0
    for weights in query_weights(n_queries, n_resamples, rng):
        size = weights.shape[0]
        per_run = (weights @ columns) / n_queries  # (size, sum of runs * metrics)
        offset = 0
        for s, r in enumerate(runs):
            k = r.shape[0]
            block = per_run[:, offset : offset + k * n_metrics].reshape(size, k, n_metrics)
            offset += k * n_metrics
            if k == 1:
                out[start : start + size, s] = block[:, 0]
                continue
            drawn = rng.multinomial(k, np.full(k, 1.0 / k), size=size) / k
            out[start : start + size, s] = np.einsum("br,brm->bm", drawn, block)
        start += size
    return out


def _widened(runs: np.ndarray) -> np.ndarray:
    """Runs (k, n_queries, n_metrics) as their mean plus their deviations times sqrt(k / (k - 1))."""
    k = runs.shape[0]
    if k == 1:
        return runs
    mean = runs.mean(axis=0)
    return mean + np.sqrt(k / (k - 1)) * (runs - mean)


def sign_flip_exceedances(
    d: np.ndarray, n_resamples: int, rng: np.random.Generator, slack: np.ndarray | None = None
) -> np.ndarray:
    """Per column of the paired differences ``d`` (n_queries, n_columns), how many of
    ``n_resamples`` random sign flips give a mean difference at least as far from 0 as the observed.

    The flips are shared by the columns (each column's count is a valid test on its own);
    ``slack`` as in :func:`flip_exceedances`.
    """
    n = d.shape[0]
    count = np.zeros(d.shape[1], dtype=np.int64)
    for _, size in _blocks(n_resamples, n):
        bits = np.unpackbits(rng.integers(0, 256, size=(size, (n + 7) // 8), dtype=np.uint8), axis=1, count=n)
        count += flip_exceedances(d, 2.0 * bits - 1.0, slack)
    return count


def flip_exceedances(d: np.ndarray, signs: np.ndarray, slack: np.ndarray | None = None) -> np.ndarray:
    """Per column of ``d`` (n_queries, n_columns), how many rows of ``signs`` (size, n_queries),
    each +1 or -1 per query, give |sum_i s_i d_i| >= |sum_i d_i|, equal sums counted.

    Sums equal in exact arithmetic may differ in float64, so a flip counts when its sum is at
    most ``slack`` (n_columns,) below the observed one: by default
    :func:`embedeval._stats.rounding.tolerance` of n_queries terms of magnitudes sum |d_i|;
    callers whose ``d`` is itself rounded (a difference of means) pass the tolerance of what it
    was computed from. No flip whose exact sum is at least as extreme is then missed.
    """
    slack = tolerance(d.shape[0], np.abs(d).sum(axis=0)) if slack is None else slack
    threshold = np.abs(d.sum(axis=0)) - slack
    return np.count_nonzero(np.abs(signs @ d) >= threshold, axis=0)


def _permutations(n_systems: int, shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """Uniform random permutations of range(n_systems), shape (*shape, n_systems)."""
    if n_systems <= _TABLED_SYSTEMS:
        table = np.array(list(itertools.permutations(range(n_systems))), dtype=np.intp)
        return table[rng.integers(0, len(table), size=shape)]
    return np.argsort(rng.random((*shape, n_systems)), axis=-1)


def range_exceedances(
    values: np.ndarray, gaps: np.ndarray, n_resamples: int, rng: np.random.Generator, slack: np.ndarray | float = 0.0
) -> np.ndarray:
    """Randomised Tukey HSD counts (Sakai): per metric and pair, how many of ``n_resamples``
    permutations give a range of system means (largest minus smallest) at least ``gaps``.

    Parameters
    ----------
    values : numpy.ndarray of shape (n_systems, n_queries, n_metrics)
    gaps : numpy.ndarray of shape (n_pairs, n_metrics)
        The observed absolute differences of means of the pairs.
    slack : float or numpy.ndarray broadcastable to ``gaps``
        How far below a gap a range still counts: the rounding bound of
        :func:`embedeval._stats.rounding.tolerance`, so that ranges equal to a gap in exact
        arithmetic count whatever their float64 rounding.

    Each permutation shuffles the systems' values within every query independently (under the
    null hypothesis that no system differs, the labels of one query's values are exchangeable);
    comparing every pair with the largest range over all systems controls the family-wise error
    over the pairs.
    """
    n_systems, n_queries, n_metrics = values.shape
    flat = values.transpose(1, 0, 2).reshape(n_queries * n_systems, n_metrics)
    base = (np.arange(n_queries) * n_systems)[None, :, None]
    threshold = gaps - slack
    count = np.zeros(gaps.shape, dtype=np.int64)
    for _, size in _blocks(n_resamples, n_queries * n_systems * n_metrics):
        index = base + _permutations(n_systems, (size, n_queries), rng)  # (size, n_queries, n_systems)
        means = flat[index].sum(axis=1) / n_queries  # (size, n_systems, n_metrics)
        spread = means.max(axis=1) - means.min(axis=1)  # (size, n_metrics)
        count += (spread[:, None, :] >= threshold[None]).sum(axis=0)
    return count
