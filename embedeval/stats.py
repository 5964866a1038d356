"""Uncertainty of the averages: bootstrap intervals, paired comparisons, multiple-testing correction.

Every metric is a mean over a finite set of queries. These functions work on the per-query
arrays an evaluation already returns, so no neighbour is searched again per replicate.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from ._core.text import format_p_value
from ._inputs.arrays import check_choice, check_fraction, check_positive_int, check_seed, encode_labels
from ._stats.across import compare_across
from ._stats.across_files import read_mteb_results
from ._stats.across_outcome import AcrossComparison
from ._stats.compare import compare_systems
from ._stats.outcome import MIN_BOOTSTRAP_UNITS, SystemComparison
from .result import EvaluationResult

__all__ = [
    "MIN_BOOTSTRAP_UNITS",
    "AcrossComparison",
    "Comparison",
    "Interval",
    "SystemComparison",
    "bootstrap",
    "compare",
    "compare_across",
    "compare_systems",
    "holm",
    "no_interval",
    "paired_randomization_test",
    "read_mteb_results",
]


def __dir__() -> list[str]:
    """The public names only (not the helpers this module imports)."""
    return sorted(__all__)


def _replicate_means(sums: np.ndarray, counts: np.ndarray, n_resamples: int, rng) -> np.ndarray:
    """Means of ``n_resamples`` bootstrap resamples of the units (their value sums and counts).

    Each replicate draws len(sums) units with replacement (multinomial count weights w, drawn as
    indices: :func:`embedeval._stats.resampling.query_weights`) and returns
    sum(w * sums) / sum(w * counts); shape (n_resamples, n_metrics).
    """
    from ._stats.resampling import query_weights

    out = np.empty((n_resamples, sums.shape[1]))
    start = 0
    for w in query_weights(sums.shape[0], n_resamples, rng):
        out[start : start + w.shape[0]] = (w @ sums) / (w @ counts)[:, None]
        start += w.shape[0]
    return out


@dataclass(frozen=True)
class Interval:
    """A point estimate with a confidence interval; ``level`` is its coverage (0.95), where known.
    ``n`` units (queries, or classes) were resampled, where known; below :data:`MIN_BOOTSTRAP_UNITS`
    it is not meaningful (:attr:`meaningful` False, :attr:`caveat` says why, and so does its text)."""

    estimate: float
    low: float
    high: float
    level: float | None = None
    n: int | None = None
    unit: str = "queries"

    @property
    def meaningful(self) -> bool:
        """False when the bootstrap resampled fewer than :data:`MIN_BOOTSTRAP_UNITS` units."""
        return self.n is None or self.n >= MIN_BOOTSTRAP_UNITS

    @property
    def caveat(self) -> str | None:
        """Why the interval is not meaningful, or None."""
        if self.meaningful:
            return None
        return f"not meaningful: a bootstrap over {self._units} (fewer than {MIN_BOOTSTRAP_UNITS})"

    def __str__(self) -> str:
        text = f"{self.estimate:.4f} [{self.low:.4f}, {self.high:.4f}]"
        return text if self.meaningful else f"{text} (over {self._units}: not meaningful)"

    @property
    def _units(self) -> str:  # "3 queries", "1 query"
        return f"{self.n} {self.unit if self.n != 1 else {'queries': 'query', 'classes': 'class'}[self.unit]}"


def bootstrap(
    result: EvaluationResult,
    *,
    confidence: float = 0.95,
    n_bootstrap: int = 2000,
    by: str = "query",
    seed: int = 0,
    n_resamples: int | None = None,
) -> dict[str, Interval]:
    """Percentile bootstrap intervals for every summary value of an evaluation.

    Parameters
    ----------
    result : EvaluationResult
        From any evaluator; only its per-query arrays are used.
    confidence : float
        Coverage of the interval, e.g. 0.95.
    n_bootstrap : int
        Bootstrap replicates (as in :func:`compare` and :func:`compare_systems`).
    by : {"query", "class"}
        Resample evaluated queries, or whole classes with all their queries (a cluster
        bootstrap: queries of one class share references and are not independent). "class"
        needs a result of :func:`embedeval.evaluate`.
    seed : int
        The same seed gives the same intervals.
    n_resamples : int, optional
        Deprecated spelling of ``n_bootstrap`` (a DeprecationWarning; removed in the release after
        next): ``n_resamples`` counts a test's sign flips or permutations everywhere else.

    Returns
    -------
    dict of str to Interval
        The micro average (``result.summary``) and its interval, per per-query metric, with
        ``level`` set to ``confidence`` and ``n`` to the queries (or classes) resampled: below
        :data:`MIN_BOOTSTRAP_UNITS` (10) the interval is marked not meaningful. Set-level metrics
        (``result.set_metrics``: ``nmi``, ``ami``, verification, ``pcf``) get none: they are one
        number for the whole set, not a mean over queries, so resampling per-query values says nothing about them;
        :func:`no_interval` gives each one's reason (tables print it under the intervals).
    """
    confidence = check_fraction(confidence, "confidence")
    if n_resamples is not None:
        warnings.warn(
            "bootstrap(n_resamples=...) is deprecated: pass n_bootstrap (n_resamples counts sign flips elsewhere)",
            DeprecationWarning,
            stacklevel=2,
        )
        n_bootstrap = n_resamples
    n_bootstrap, seed = check_positive_int(n_bootstrap, "n_bootstrap"), check_seed(seed)
    check_choice(by, "by", ("query", "class"))
    names = [name for name in result.summary if name in result.per_query]
    if not names:
        return {}
    values = np.column_stack([result.per_query[m] for m in names])
    evaluated = ~np.isnan(values).any(axis=1)
    if not evaluated.any():
        return {m: Interval(np.nan, np.nan, np.nan, confidence, 0) for m in names}
    values = values[evaluated]
    if by == "class":
        if result.query_labels is None:
            raise ValueError("by='class' needs a result of embedeval.evaluate (class labels); got a ranking result")
        _, (codes,) = encode_labels(result.query_labels[evaluated])
        sums = np.stack([np.bincount(codes, weights=values[:, j]) for j in range(len(names))], axis=1)
        counts = np.bincount(codes).astype(float)
    else:
        sums, counts = values, np.ones(values.shape[0])
    replicates = _replicate_means(sums, counts, n_bootstrap, np.random.default_rng(seed))
    tail = (1 - confidence) / 2
    low, high = np.quantile(replicates, [tail, 1 - tail], axis=0)
    unit = "classes" if by == "class" else "queries"
    return {
        m: Interval(result.summary[m], float(low[j]), float(high[j]), confidence, sums.shape[0], unit)
        for j, m in enumerate(names)
    }


def no_interval(result: EvaluationResult) -> dict[str, str]:
    """``{metric: why it has no bootstrap interval}`` for the set-level metrics of ``result``."""
    from ._metrics.set_families import no_interval_reasons

    return {name: why for why, names in no_interval_reasons(result.set_metrics).items() for name in names}


@dataclass(frozen=True)
class Comparison:
    """Model B minus model A on one metric, over the queries both evaluated."""

    metric: str
    mean_a: float
    mean_b: float
    difference: Interval
    p_value: float
    p_adjusted: float
    n_queries: int

    def __str__(self) -> str:
        return (
            f"{self.metric}: A {self.mean_a:.4f}  B {self.mean_b:.4f}  B-A {self.difference}  "
            f"p {format_p_value(self.p_value)} (Holm {format_p_value(self.p_adjusted)}, n={self.n_queries})"
        )


def paired_randomization_test(a: np.ndarray, b: np.ndarray, *, n_resamples: int = 10000, seed: int = 0) -> float:
    """Two-sided p-value that paired values ``a`` and ``b`` have the same mean.

    Under the null hypothesis the labels A and B of each pair are exchangeable, so each
    per-query difference is as likely with either sign: the p-value is the share of random
    sign flips whose mean difference is at least as far from 0 as the observed one,
    (1 + count) / (1 + n_resamples), never 0.

    The p-value of :func:`compare_systems` for the pair (A, B) with ``test="randomization"``
    and the same ``n_resamples`` and ``seed``. A flip whose sum equals the observed one in exact
    arithmetic counts, whatever the rounding of either in float64 (within a bound of it:
    :mod:`embedeval._stats.rounding`), so no flip at least as extreme is missed, and for values
    on a grid of step 1/m (0, 1/3, 2/3, 1) the count is exact.
    """
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if not np.any(b - a):
        return 1.0
    pair = compare_systems({"A": a, "B": b}, confidence=None, correction="none", n_resamples=n_resamples, seed=seed)
    return pair.pairs[0]["p_value"]


def holm(p_values) -> np.ndarray:
    """Holm-Bonferroni adjusted p-values (control the family-wise error rate); NaN left out."""
    from ._stats.corrections import adjust

    return adjust(p_values, "holm")


def compare(
    result_a: EvaluationResult,
    result_b: EvaluationResult,
    *,
    metrics=None,
    confidence: float = 0.95,
    n_resamples: int = 10000,
    n_bootstrap: int = 2000,
    seed: int = 0,
) -> list[Comparison]:
    """Paired comparison of two evaluations of the same queries (B minus A), per metric: a view
    of :func:`compare_systems` for one pair.

    The queries are paired by position, so both results must come from the same queries in
    the same order (two embedding sets with one label set, or two runs over the same queries).
    Each metric is compared over the queries both results evaluated in it, as
    ``compare_systems({"A": result_a, "B": result_b}, metrics=[metric], test="randomization",
    ...)`` compares it, with the same ``confidence``, ``n_resamples``, ``n_bootstrap`` and
    ``seed``: the same difference, percentile-bootstrap interval and randomization-test p-value.
    The p-values are then Holm-adjusted over the metrics compared. By default every per-query
    metric both results hold; set-level metrics (``nmi``, ``eer``, ...) have no per-query values
    to pair, and asking for one raises ValueError.

    Parameters
    ----------
    n_resamples : int
        Sign flips of the randomization test.
    n_bootstrap : int
        Bootstrap replicates of the interval (``n_resamples`` counted these too before; see the changelog).

    Returns
    -------
    list of Comparison
    """
    confidence = check_fraction(confidence, "confidence")
    n_resamples = check_positive_int(n_resamples, "n_resamples")
    n_bootstrap, seed = check_positive_int(n_bootstrap, "n_bootstrap"), check_seed(seed)
    if result_a.n_queries != result_b.n_queries:
        raise ValueError(
            f"results must cover the same queries; got {result_a.n_queries} and {result_b.n_queries} queries"
        )
    if (
        result_a.query_labels is not None
        and result_b.query_labels is not None
        and not np.array_equal(result_a.query_labels, result_b.query_labels)
    ):
        raise ValueError("results must pair the same queries: their query labels differ")
    names = list(metrics) if metrics is not None else [m for m in result_a.per_query if m in result_b.per_query]
    whole = [m for m in names if m in result_a.set_metrics or m in result_b.set_metrics]
    if whole:
        raise ValueError(
            f"metric(s) {whole} are set-level (one number per result): a paired comparison needs per-query values; "
            "compare them as two numbers"
        )
    missing = [m for m in names if m not in result_a.per_query or m not in result_b.per_query]
    if missing:
        common = sorted(set(result_a.summary) & set(result_b.summary))
        raise ValueError(f"metric(s) {missing} are not in both results; common: {common}")
    rows = []
    for m in names:
        a, b = result_a.per_query[m], result_b.per_query[m]
        both = ~(np.isnan(a) | np.isnan(b))
        n = int(both.sum())
        if n == 0:
            rows.append(
                Comparison(m, np.nan, np.nan, Interval(np.nan, np.nan, np.nan, confidence, 0), np.nan, np.nan, 0)
            )
            continue
        pair = compare_systems(
            {"A": a[both], "B": b[both]}, test="randomization", correction="none", confidence=confidence,
            n_resamples=n_resamples, n_bootstrap=n_bootstrap, seed=seed,
        )  # fmt: skip
        r, (mean_a, mean_b) = pair.pairs[0], (pair.values[s]["value"] for s in "AB")
        difference = Interval(r["difference"], r["low"], r["high"], confidence, n)
        rows.append(Comparison(m, mean_a, mean_b, difference, r["p_value"], np.nan, n))
    adjusted = holm([r.p_value for r in rows])
    return [replace(r, p_adjusted=float(q)) for r, q in zip(rows, adjusted, strict=True)]
