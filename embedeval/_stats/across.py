"""``compare_across``: systems compared over several datasets, from their scores or per-query values."""

from __future__ import annotations

import numbers
import warnings

import numpy as np

from .._inputs.arrays import check_choice, check_fraction, check_positive_int, check_seed
from .across_bayes import bayes_signed_rank
from .across_data import Across, read_across
from .across_friedman import critical_difference, friedman, nemenyi_p_values, nemenyi_q
from .across_outcome import AcrossComparison
from .across_ranks import bootstrap_mean_ranks, places, rank_intervals, tied_for_first
from .across_wilcoxon import METHODS, ZERO_METHODS, signed_rank
from .corrections import adjust
from .distributions import average_ranks
from .resampling import bootstrap_means, sign_flip_exceedances
from .systems import index_pairs

POST_HOC = ("nemenyi", "wilcoxon")


def _checked(o: dict) -> dict:
    """The options ``o`` checked, the numbers as Python's (a numpy integer count would stop JSON)."""
    check_choice(o["post_hoc"], "post_hoc", POST_HOC)
    check_choice(o["zero_method"], "zero_method", ZERO_METHODS)
    check_choice(o["wilcoxon_method"], "wilcoxon_method", METHODS)
    rope = o["rope"]
    if rope is not None and (isinstance(rope, bool) or not isinstance(rope, numbers.Real) or not rope >= 0):
        raise ValueError(f"'rope' must be a number >= 0 (half-width of practical equivalence), or None; got {rope!r}")
    counts = {name: check_positive_int(o[name], name) for name in ("n_bootstrap", "n_resamples", "n_bayes_samples")}
    return (
        o
        | counts
        | dict(
            alpha=check_fraction(o["alpha"], "alpha"),
            confidence=check_fraction(o["confidence"], "confidence", none_means="no interval"),
            rope=None if rope is None else float(rope),
            seed=check_seed(o["seed"]),
        )
    )


def _wilcoxon(scores: np.ndarray, pairs, o: dict) -> list:
    return [
        signed_rank(scores[:, b], scores[:, a], zero_method=o["zero_method"], method=o["wilcoxon_method"])
        for a, b in pairs
    ]


def _post_hoc_worse(data: Across, mean_ranks: np.ndarray, o: dict):
    """``worse(best, s)``: whether the post-hoc test finds system s significantly worse than the
    best: Nemenyi's p, or Wilcoxon's with Holm's correction over all k (k - 1) / 2 pairs (the
    best is chosen from the same data, so only a family of every pair covers that choice)."""
    n = len(data.datasets)
    if o["post_hoc"] == "nemenyi":
        return lambda best, s: nemenyi_p_values(mean_ranks, n, [(best, s)])[0] < o["alpha"]
    every = index_pairs(data.systems, None, True)
    adjusted = adjust([t.p_value for t in _wilcoxon(data.scores, every, o)], "holm")
    p = {frozenset(pair): q for pair, q in zip(every, adjusted, strict=True)}
    return lambda best, s: p[frozenset((best, s))] < o["alpha"] and mean_ranks[s] > mean_ranks[best]


def _dataset_tests(data: Across, pairs, o: dict, rng) -> np.ndarray | None:
    """(n_pairs, 3) counts of datasets where B is significantly above A, below A, neither, by the
    paired randomization test on the dataset's per-query differences at ``alpha``."""
    if data.per_query is None:
        return None
    counts = np.zeros((len(pairs), 3), dtype=np.int64)
    a, b = np.array([p[0] for p in pairs]), np.array([p[1] for p in pairs])
    for values in data.per_query:
        d = values[:, b] - values[:, a]
        p = (1 + sign_flip_exceedances(d, o["n_resamples"], rng)) / (1 + o["n_resamples"])
        mean = d.mean(axis=0)
        significant = p < o["alpha"]
        counts[:, 0] += significant & (mean > 0)
        counts[:, 1] += significant & (mean < 0)
        counts[:, 2] += ~(significant & (mean != 0))
    return counts


def _intervals(data: Across, o: dict, rng) -> tuple[np.ndarray | None, np.ndarray | None]:
    """(per-dataset value intervals (n_datasets, 2, n_systems), query replicates (n_datasets,
    n_bootstrap, n_systems)), both None without per-query values or intervals."""
    if data.per_query is None or o["confidence"] is None:
        return None, None
    tail = (1 - o["confidence"]) / 2
    reps = np.stack(
        [
            bootstrap_means([v[None, :, j, None] for j in range(v.shape[1])], o["n_bootstrap"], rng)[:, :, 0]
            for v in data.per_query
        ]
    )
    return np.quantile(reps, [tail, 1 - tail], axis=1).transpose(1, 0, 2), reps


def compare_across(
    data,
    *,
    metric=None,
    systems=None,
    datasets=None,
    post_hoc: str = "nemenyi",
    baseline=None,
    alpha: float = 0.05,
    confidence: float | None = 0.95,
    n_bootstrap: int = 2000,
    n_resamples: int = 10000,
    zero_method: str = "wilcox",
    wilcoxon_method: str = "auto",
    rope: float | None = None,
    n_bayes_samples: int = 50000,
    seed: int = 0,
    control=None,
) -> AcrossComparison:
    """Compare systems over several datasets: which are really better overall.

    Parameters
    ----------
    data : mapping, or array of shape (n_datasets, n_systems)
        ``{dataset: {system: value}}`` where every value is a score (a number: a leaderboard's
        table), or every value is per-query: an :class:`~embedeval.result.EvaluationResult`, a
        mapping ``{metric: per-query values}`` or a 1-D array, paired by position or by query id
        as in :func:`compare_systems`; a dataset's score is then the mean over the queries every
        system evaluated. Every system must appear on every dataset. An array holds scores, its
        rows and columns named by ``datasets`` and ``systems`` (default ``D1``.. and ``A``..).
    metric : str, optional
        The per-query metric (default: the only one the systems share).
    systems, datasets : list of str, optional
        Names of the columns and rows of an array ``data`` (a mapping names its own).
    post_hoc : {"nemenyi", "wilcoxon"}
        The test that says which pairs differ, and so which systems are tied for first:
        Nemenyi's (mean ranks, studentized range) or Wilcoxon's signed-rank over the datasets'
        scores with Holm's correction over the pairs compared.
    baseline : str, optional
        Compare every system with this one only (k - 1 pairs) instead of all pairs (the word
        :func:`compare_systems` and ``embedeval leaderboard --baseline`` use).
    control : str, optional
        Deprecated spelling of ``baseline`` (a DeprecationWarning; removed in 0.2).
    alpha : float
        Level of the post-hoc tests, the critical difference and the per-dataset tests.
    confidence : float or None
        Level of the bootstrap intervals; None for none.
    n_bootstrap : int
        Resamples of the intervals.
    n_resamples : int
        Sign flips of each dataset's paired randomization test (per-query values only).
    zero_method, wilcoxon_method : str
        Wilcoxon's zero handling (``"wilcox"``, ``"pratt"``, ``"zsplit"``) and method
        (``"auto"``, ``"exact"``, ``"approx"``), as scipy names them; no continuity correction.
    rope : float or None
        Half-width of the region of practical equivalence of a score difference, for the Bayesian
        signed-rank test (None: not run). 0.01 on a score in [0, 1] calls a difference under one
        point equivalent. With 0 there is no region of equivalence, and a posterior sample where
        B is as probably better as worse counts half to each (identical systems: 0.5/0/0.5).
    n_bayes_samples : int
        Dirichlet samples of the Bayesian test.
    seed : int
        The same seed gives the same numbers.

    Returns
    -------
    AcrossComparison
        Plain dicts and lists; ``table(fmt)`` for text, Markdown, HTML, LaTeX, CSV and JSON;
        :func:`embedeval.plotting.plot_critical_difference` draws its critical-difference diagram.

    Notes
    -----
    Within each dataset the systems are ranked, 1 for the highest score, ties averaged; R_j is
    system j's mean rank over the N datasets. Friedman's statistic,
    chi2_F = 12 N / (k (k + 1)) (sum_j R_j^2 - k (k + 1)^2 / 4) (with the tie correction of
    ``scipy.stats.friedmanchisquare``), has k - 1 degrees of freedom; Iman and Davenport's
    F_F = (N - 1) chi2_F / (N (k - 1) - chi2_F) has (k - 1, (k - 1)(N - 1)). Nemenyi's critical
    difference is CD = q_alpha sqrt(k (k + 1) / (6 N)), q_alpha the studentized range quantile
    (infinite degrees of freedom) over sqrt(2); a pair's Nemenyi p-value is the studentized range
    tail at sqrt(2) abs(R_i - R_j) / sqrt(k (k + 1) / (6 N)).

    Intervals: each dataset's values by the percentile bootstrap of its queries (the same draw
    for every system); the mean ranks by the bootstrap of the datasets, two-level where
    per-query values exist (each drawn dataset takes one of its query resamples, at random).
    *Tied for first*: the system of lowest mean rank and every system the post-hoc test does not
    find significantly worse than it at ``alpha`` (Nemenyi's p; or Wilcoxon's with Holm over all
    pairs, whatever ``baseline``: the best is picked from the same data, and only a family of
    every pair covers that pick); *could be first*: the systems whose place in
    the bootstrap's replicates has an interval that includes 1. Per pair, the datasets where B is
    above A, below A, or neither, by the paired randomization test of that dataset's per-query
    differences at ``alpha`` (no correction over datasets: each count answers its dataset's
    question). The Bayesian signed-rank test (Benavoli et al. 2017) gives P(B worse), P(practically
    equivalent), P(B better).

    References
    ----------
    Demšar, J. (2006). Statistical comparisons of classifiers over multiple data sets. JMLR 7,
    1-30. Benavoli, A., Corani, G., Demšar, J. and Zaffalon, M. (2017). Time for a change: a
    tutorial for comparing multiple classifiers through Bayesian analysis. JMLR 18(77), 1-36.

    Examples
    --------
    >>> from embedeval.stats import compare_across
    >>> scores = {"scifact": {"bm25": 0.665, "e5": 0.72}, "nfcorpus": {"bm25": 0.325, "e5": 0.35},
    ...           "fiqa": {"bm25": 0.236, "e5": 0.39}}
    >>> c = compare_across(scores, confidence=None)
    >>> c.best, c.mean_ranks["e5"]["mean_rank"], round(c.friedman["p_value"], 4)
    ('e5', 1.0, 0.0833)
    """
    if control is not None:
        warnings.warn(
            "compare_across(control=...) is deprecated: pass baseline=... (as compare_systems takes it)",
            DeprecationWarning,
            stacklevel=2,
        )
        baseline = control if baseline is None else baseline
    o = _checked(
        dict(
            post_hoc=post_hoc,
            baseline=baseline,
            alpha=alpha,
            confidence=confidence,
            n_bootstrap=n_bootstrap,
            n_resamples=n_resamples,
            zero_method=zero_method,
            wilcoxon_method=wilcoxon_method,
            rope=rope,
            n_bayes_samples=n_bayes_samples,
            seed=seed,
        )
    )
    confidence, n_bootstrap, rope, seed = o["confidence"], o["n_bootstrap"], o["rope"], o["seed"]
    data = read_across(data, metric=metric, systems=systems, datasets=datasets)
    rng = np.random.default_rng(seed)
    pairs = index_pairs(data.systems, baseline, baseline is None)
    ranks = average_ranks(data.scores)
    mean_ranks = ranks.mean(axis=0)
    n, k = data.scores.shape
    value_intervals, query_reps = _intervals(data, o, rng)
    rank_info = None
    if confidence is not None:
        replicates = bootstrap_mean_ranks(data.scores, query_reps, n_bootstrap, rng)
        rank_info = rank_intervals(mean_ranks, replicates, confidence)
    wilcoxon = _wilcoxon(data.scores, pairs, o)
    outcome = dict(
        ranks=ranks,
        mean_ranks=mean_ranks,
        places=places(mean_ranks),
        value_intervals=value_intervals,
        rank_info=rank_info,
        friedman=friedman(data.scores),
        q_alpha=nemenyi_q(alpha, k),
        cd=critical_difference(alpha, k, n),
        pairs=pairs,
        p_nemenyi=nemenyi_p_values(mean_ranks, n, pairs),
        wilcoxon=wilcoxon,
        p_wilcoxon_holm=adjust([t.p_value for t in wilcoxon], "holm"),
        dataset_counts=_dataset_tests(data, pairs, o, rng),
        bayes=None
        if rope is None
        else [
            bayes_signed_rank(data.scores[:, a], data.scores[:, b], rope=rope, n_samples=n_bayes_samples, rng=rng)
            for a, b in pairs
        ],
        tied=tied_for_first(mean_ranks, _post_hoc_worse(data, mean_ranks, o)),
    )
    return AcrossComparison.build(data, outcome, o)
