"""``compare_systems``: every number of a comparison of systems, from their per-query values."""

from __future__ import annotations

import numpy as np

from .._inputs.arrays import check_choice, check_fraction, check_positive_int, check_seed
from .corrections import CORRECTIONS, adjust
from .outcome import SystemComparison
from .resampling import bootstrap_means, range_exceedances, sign_flip_exceedances
from .rounding import tolerance
from .systems import Systems, index_pairs, read_systems

TESTS = {
    "randomization": "paired randomization test (random sign flips of the per-query differences, "
    "p = (1 + count) / (1 + resamples))",
    "t": "paired t-test (Student's t on the per-query differences, n - 1 degrees of freedom)",
    "bootstrap": "hierarchical bootstrap (p = twice the smaller share of replicate differences on either side "
    "of 0, with +1)",
}
PAIRS = ("baseline", "all")


def _mean_difference(d: np.ndarray, slack: np.ndarray) -> np.ndarray:
    """Mean of each column of ``d``, 0 where the sum is within ``slack`` of 0 (0 in exact arithmetic)."""
    return np.where(np.abs(d.sum(axis=0)) <= slack, 0.0, d.mean(axis=0))


def _t_p_values(d: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """Student's paired t-test of each column of ``d``: t = mean / (sd / sqrt(n)), its two-sided
    tail from ``scipy.special.stdtr``, with ``mean`` 0 where it is 0 in exact arithmetic (so p is
    then exactly 1); where every difference is equal, p = 1 if they are 0, else 0."""
    from scipy.special import stdtr

    n = d.shape[0]
    if n < 2:
        return np.full(d.shape[1], np.nan)
    sd = d.std(axis=0, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.minimum(1.0, 2.0 * stdtr(n - 1, -np.abs(mean / (sd / np.sqrt(n)))))
    return np.where(sd == 0, np.where(mean == 0, 1.0, 0.0), p)


def _bootstrap_p_values(diff_reps: np.ndarray, slack: np.ndarray) -> np.ndarray:
    """Two-sided p-values of replicate differences (n_resamples, n_columns): twice the smaller
    tail share around 0, each with +1, capped at 1; a difference within ``slack`` (n_columns,)
    of 0 counts on both sides (it may be 0 in exact arithmetic)."""
    b = diff_reps.shape[0]
    below = 1 + np.count_nonzero(diff_reps <= slack, axis=0)
    above = 1 + np.count_nonzero(diff_reps >= -slack, axis=0)
    return np.minimum(1.0, 2 * np.minimum(below, above) / (1 + b))


def _effect_sizes(d: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """mean / sd (ddof 1) of each column: 0 where every difference is 0, +-inf where all are equal and not 0."""
    sd = d.std(axis=0, ddof=1) if d.shape[0] > 1 else np.zeros(d.shape[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(sd > 0, mean / np.where(sd > 0, sd, 1), np.sign(mean) * np.inf)
    return np.where((sd == 0) & (mean == 0), 0.0, out)


def _mean_slack(data: Systems) -> np.ndarray:
    """(n_metrics,): how far apart two means of the systems' values (a system's value, a
    replicate, a permutation's mean) may be in float64 while equal in exact arithmetic: the
    tolerance of :mod:`embedeval._stats.rounding` for n * k + n + k terms of magnitude at most
    4 max |value| (the widened runs of the two-level bootstrap reach (1 + 2 sqrt 2) max |value|)."""
    k = max(r.shape[0] for r in data.runs)
    n = data.n_queries
    largest = np.max([np.abs(r).max(axis=(0, 1)) for r in data.runs], axis=0)
    return tolerance(n * k + n + k, 4 * largest)


def _rank_intervals(point: np.ndarray, reps: np.ndarray | None, tail: float, slack: np.ndarray) -> np.ndarray:
    """(n_systems, n_metrics, 3): each system's rank (1 = highest value; values within ``slack``
    (n_metrics,) of each other are tied and share the best rank) and, from the replicates, the
    interval of its ranks (-1 without replicates)."""

    def ranks(v):  # v (..., n_systems, n_metrics)
        return 1 + (v[..., None, :, :] > v[..., :, None, :] + slack).sum(axis=-2)

    out = np.full((*point.shape, 3), -1, dtype=np.int64)
    out[..., 0] = ranks(point)
    if reps is not None:
        r = ranks(reps)  # (n_resamples, n_systems, n_metrics)
        out[..., 1] = np.quantile(r, tail, axis=0, method="lower")
        out[..., 2] = np.quantile(r, 1 - tail, axis=0, method="higher")
    return out


def _check(confidence, n_resamples, n_bootstrap, alpha, pairs, test, correction, seed) -> tuple:
    check_fraction(confidence, "confidence", none_means="no interval")
    check_fraction(alpha, "alpha")
    check_choice(pairs, "pairs", PAIRS)
    if test is not None:
        check_choice(test, "test", tuple(TESTS))
    check_choice(correction, "correction", tuple(CORRECTIONS))
    counts = check_positive_int(n_resamples, "n_resamples"), check_positive_int(n_bootstrap, "n_bootstrap")
    return *counts, check_seed(seed)


def compare_systems(
    systems,
    *,
    metrics=None,
    baseline=None,
    pairs: str = "baseline",
    test: str | None = None,
    correction: str = "holm",
    confidence: float | None = 0.95,
    n_resamples: int = 10000,
    n_bootstrap: int = 2000,
    alpha: float = 0.05,
    seed: int = 0,
) -> SystemComparison:
    """Compare several systems on the same queries: values with intervals, paired tests with a
    correction, effect sizes, win/tie/loss counts, randomised Tukey HSD and rank intervals.

    Parameters
    ----------
    systems : mapping of str to system, or list of systems
        A system is an :class:`~embedeval.result.EvaluationResult`, a mapping ``{metric:
        per-query values of shape (n_queries,)}``, a 1-D array (metric ``"value"``), or a list
        of those: its runs (seeds, folds), compared with a two-level bootstrap. A list of
        systems is named ``"A"``, ``"B"``, ... Queries are paired by position, or by query id
        where every result records its ids (the ranked-list evaluators do); only queries every
        system and run evaluated (no NaN) are compared.
    metrics : list of str, optional
        Per-query metrics to compare (default: those every system holds).
    baseline : str, optional
        The system the others are compared with (default: the first); ``pairs="baseline"`` only.
    pairs : {"baseline", "all"}
        Each system against the baseline, or every pair (then also the randomised Tukey HSD).
    test : {"randomization", "t", "bootstrap"}, optional
        The paired test of each pair and metric on the per-query differences d = B - A:
        ``"randomization"`` flips the sign of each d at random, p = (1 + count of flips whose
        mean is as far from 0) / (1 + n_resamples), never 0; ``"t"``: Student's paired t,
        ``mean(d) / (sd(d) / sqrt(n))`` with n - 1 degrees of freedom; ``"bootstrap"``:
        twice the smaller share (with +1) of the bootstrap replicates of the difference on
        either side of 0. Default: ``"randomization"``, or ``"bootstrap"`` when a system has
        several runs (the other two see only run means and ignore the variance between runs).
    correction : {"holm", "bonferroni", "bh", "none"}
        Adjusts the p-values over the family of every pair and metric of this call: Holm's
        step-down and Bonferroni control the family-wise error rate, Benjamini-Hochberg the
        false discovery rate.
    confidence : float or None
        Level of the percentile bootstrap intervals (values, differences, ranks); None for none.
    n_resamples : int
        Sign flips of the randomization test, and permutations of the randomised Tukey HSD.
    n_bootstrap : int
        Bootstrap replicates of the intervals (and of ``test="bootstrap"``). Each draws the
        queries with replacement, the same draw for every system (paired), and, for a system
        with several runs, its runs with replacement (independently of the other systems').
    alpha : float
        The level at which a pair is marked ``significant`` (by its corrected p-value, or by
        its Tukey HSD p-value with ``pairs="all"``).
    seed : int
        The same seed gives the same numbers.

    Returns
    -------
    SystemComparison
        Plain dicts and lists (``values``, ``intervals``, ``ranks``, ``pairs``, ``settings``),
        the bootstrap ``replicates`` as an array, ``table(fmt)`` for text, Markdown, CSV, JSON
        and LaTeX.

    Notes
    -----
    The effect size is Cohen's d_z = mean(d) / sd(d) (sd with n - 1). The randomised Tukey HSD
    (Sakai, *Laboratory Experiments in Information Retrieval*, 2018) permutes the systems'
    values within each query and compares each pair's absolute difference of means with the range
    (largest minus smallest system mean) of every permutation. Rank 1 is the highest value;
    ranks of tied values share the best one. Values equal in exact arithmetic compare equal
    (flips, permutations, bootstrap signs, ranks, ties) whatever their float64 rounding: within
    a stated bound of it (:mod:`embedeval._stats.rounding`). The two-level bootstrap assumes that
    each system's runs are independent draws of its training randomness (seeds) or folds, that runs of
    different systems are unrelated, and that the queries are a sample from the queries of
    interest; see the comparisons guide.
    """
    n_resamples, n_bootstrap, seed = _check(confidence, n_resamples, n_bootstrap, alpha, pairs, test, correction, seed)
    data: Systems = read_systems(systems, metrics)
    several = any(r.shape[0] > 1 for r in data.runs)
    test = test or ("bootstrap" if several else "randomization")
    rng = np.random.default_rng(seed)
    index = index_pairs(data.names, baseline, pairs == "all")
    means = data.run_means  # (S, n, K)
    point = np.stack([r.mean(axis=(0, 1)) for r in data.runs])  # (S, K)
    tail = (1 - (confidence or 0.95)) / 2
    reps = None
    if confidence is not None or test == "bootstrap":
        reps = bootstrap_means(data.runs, n_bootstrap, rng)
    a, b = np.array([p[0] for p in index]), np.array([p[1] for p in index])
    d = (means[b] - means[a]).transpose(1, 0, 2).reshape(data.n_queries, -1)  # (n, P * K)
    k = len(data.metrics)
    slack = _mean_slack(data)  # (K,)
    # per query, |run mean| <= mean |run value|: bounds what each difference was computed from
    magnitude = np.stack([np.abs(r).mean(axis=0) for r in data.runs])  # (S, n, K)
    runs = max(r.shape[0] for r in data.runs)
    flip_slack = tolerance(data.n_queries + runs, (magnitude[a] + magnitude[b]).sum(axis=1)).ravel()
    d_mean = _mean_difference(d, flip_slack)
    if test == "randomization":
        p = (1 + sign_flip_exceedances(d, n_resamples, rng, flip_slack)) / (1 + n_resamples)
    elif test == "t":
        p = _t_p_values(d, d_mean)
    else:
        p = _bootstrap_p_values((reps[:, b] - reps[:, a]).reshape(n_bootstrap, -1), np.tile(slack, len(index)))
    p = p.reshape(len(index), k)
    p_tukey = None
    if pairs == "all":
        gaps = np.abs(point[b] - point[a])
        p_tukey = (1 + range_exceedances(means, gaps, n_resamples, rng, slack)) / (1 + n_resamples)
    diff_intervals = None
    if confidence is not None:
        diff_intervals = np.quantile(reps[:, b] - reps[:, a], [tail, 1 - tail], axis=0)  # (2, P, K)
    dd = d.reshape(data.n_queries, len(index), k)
    tie = tolerance(runs, (magnitude[a] + magnitude[b]).transpose(1, 0, 2))  # (n, P, K): equal values
    outcome = dict(
        point=point,
        intervals=None if confidence is None else np.quantile(reps, [tail, 1 - tail], axis=0),
        ranks=_rank_intervals(point, None if confidence is None else reps, tail, slack),
        index=index,
        difference=np.where(np.abs(point[b] - point[a]) <= slack, 0.0, point[b] - point[a]),
        diff_intervals=diff_intervals,
        p=p,
        p_adjusted=adjust(p.ravel(), correction).reshape(p.shape),
        p_tukey=p_tukey,
        effect=_effect_sizes(d, d_mean).reshape(len(index), k),
        wins=(dd > tie).sum(axis=0),
        ties=(np.abs(dd) <= tie).sum(axis=0),
        losses=(dd < -tie).sum(axis=0),
    )
    settings = dict(
        test=test,
        test_method=TESTS[test],
        correction=correction,
        correction_method=CORRECTIONS[correction][1],
        pairs=pairs,
        baseline=data.names[index[0][0]] if pairs == "baseline" else None,
        confidence=confidence,
        n_resamples=n_resamples,
        n_bootstrap=n_bootstrap,
        alpha=alpha,
        seed=seed,
        hierarchical=several,
    )
    return SystemComparison.build(data, outcome, settings, reps)
