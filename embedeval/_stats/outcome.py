"""The result of :func:`embedeval.stats.compare_systems`: plain dicts, lists and one array."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._core.display import ShownAsTable
from .._core.skips import ZERO_HINT

# Below this many resampled units (queries, or classes with by="class") a percentile bootstrap
# interval is not meaningful: with n units there are few distinct resamples (3 queries: 10),
# the replicates' spread understates the uncertainty (by sqrt((n - 1) / n) and more in the
# tails), and a tail quantile is one of a handful of values. Intervals and tables say so.
MIN_BOOTSTRAP_UNITS = 10


@dataclass(frozen=True, repr=False)
class SystemComparison(ShownAsTable):
    """Every number of a comparison of systems on the same queries.

    Attributes
    ----------
    systems : list of str
        In the order given.
    metrics : list of str
    n_runs : dict of str to int
        Runs (seeds, folds) per system; 1 for a system given once.
    n_queries : int
        Queries compared: those every system and run evaluated (finite in every metric).
    n_given : int
        Queries given, before that restriction.
    values : dict of str to dict of str to float
        ``values[system][metric]``: the mean over queries (and over runs).
    intervals : dict of str to dict of str to (float, float), or None
        ``intervals[system][metric]``: the percentile bootstrap interval of that mean (queries
        resampled; with several runs, runs too). None with ``confidence=None``.
    ranks : dict of str to dict of str to dict
        ``ranks[metric][system]``: ``{"rank": r, "low": lo, "high": hi}``; rank 1 is the highest
        value, tied values share the best rank; ``low``/``high`` bound the ranks of the bootstrap
        replicates at the interval's level (None without intervals).
    pairs : list of dict
        One per compared pair and metric, B minus A: ``a``, ``b``, ``metric``, ``difference``,
        ``low``, ``high`` (its interval, None without), ``p_value``, ``p_adjusted`` (after the
        correction, over every pair and metric of this comparison), ``p_tukey`` (randomised Tukey
        HSD, all pairs only, else None), ``effect_size`` (mean difference / standard deviation of
        the per-query differences, Cohen's d_z), ``wins``/``ties``/``losses`` (queries where B is
        above, equal to, below A, on run means), ``significant`` (``p_adjusted < alpha``, or
        ``p_tukey < alpha`` where given) and ``n_queries``.
    settings : dict
        The test, correction, pairs, baseline, confidence, numbers of resamples, alpha, seed, and
        each method in a sentence.
    notes : list of str
        What a reader must know (queries left out, a test that ignores run variance, ...).
    coverage : str or None
        Over how many of the given queries every number is, and why the others were left out
        (``"2 of 3 queries (no judged item reaches the relevance threshold (R = 0); ...)"``);
        None when every query was compared. The text tables open with it.
    replicates : numpy.ndarray of shape (n_bootstrap, n_systems, n_metrics) or None
        The bootstrap replicate means, for any further statistic.
    query_values : numpy.ndarray of shape (n_systems, n_queries, n_metrics) or None
        Each compared query's value per system (mean over its runs), for :meth:`explore`.
    query_positions : numpy.ndarray of shape (n_queries,) or None
        The compared queries' positions among the queries given.
    """

    systems: list[str]
    metrics: list[str]
    n_runs: dict[str, int]
    n_queries: int
    n_given: int
    values: dict[str, dict[str, float]]
    intervals: dict[str, dict[str, tuple[float, float]]] | None
    ranks: dict[str, dict[str, dict]]
    pairs: list[dict]
    settings: dict
    notes: list[str] = field(default_factory=list)
    replicates: np.ndarray | None = None
    query_values: np.ndarray | None = None
    query_positions: np.ndarray | None = None
    coverage: str | None = None

    @classmethod
    def build(cls, data, o: dict, settings: dict, replicates) -> SystemComparison:
        names, metrics = data.names, data.metrics
        values = grid(names, metrics, o["point"])
        intervals = None if o["intervals"] is None else grid(names, metrics, *o["intervals"])
        ranks = {
            m: {
                s: {
                    "rank": int(o["ranks"][i, j, 0]),
                    "low": int(o["ranks"][i, j, 1]) if intervals is not None else None,
                    "high": int(o["ranks"][i, j, 2]) if intervals is not None else None,
                }
                for i, s in enumerate(names)
            }
            for j, m in enumerate(metrics)
        }
        pairs = [
            cls._pair(o, settings["alpha"], data, p, a, b, j)
            for p, (a, b) in enumerate(o["index"])
            for j in range(len(metrics))
        ]
        return cls(
            systems=list(names),
            metrics=list(metrics),
            n_runs={s: int(r.shape[0]) for s, r in zip(names, data.runs, strict=True)},
            n_queries=data.n_queries,
            n_given=data.n_given,
            values=values,
            intervals=intervals,
            ranks=ranks,
            pairs=pairs,
            settings=settings,
            notes=_notes(data, settings),
            replicates=replicates,
            query_values=data.run_means,
            query_positions=data.positions,
            coverage=None
            if data.n_queries == data.n_given
            else f"{data.n_queries} of {data.n_given} queries ({left_out(data)})",
        )

    @staticmethod
    def _pair(o: dict, alpha: float, data, p: int, a: int, b: int, j: int) -> dict:
        ci = o["diff_intervals"]
        tukey = None if o["p_tukey"] is None else float(o["p_tukey"][p, j])
        adjusted = float(o["p_adjusted"][p, j])
        return {
            "a": data.names[a],
            "b": data.names[b],
            "metric": data.metrics[j],
            "difference": float(o["difference"][p, j]),
            "low": None if ci is None else float(ci[0, p, j]),
            "high": None if ci is None else float(ci[1, p, j]),
            "p_value": float(o["p"][p, j]),
            "p_adjusted": adjusted,
            "p_tukey": tukey,
            "effect_size": float(o["effect"][p, j]),
            "wins": int(o["wins"][p, j]),
            "ties": int(o["ties"][p, j]),
            "losses": int(o["losses"][p, j]),
            "significant": bool((tukey if tukey is not None else adjusted) < alpha),
            "n_queries": data.n_queries,
        }

    def pair(self, a: str, b: str, metric: str) -> dict:
        """The entry of :attr:`pairs` for A = ``a``, B = ``b`` and ``metric``."""
        for row in self.pairs:
            if (row["a"], row["b"], row["metric"]) == (a, b, metric):
                return row
        compared = sorted({(r["a"], r["b"]) for r in self.pairs})
        raise KeyError(
            f"no pair (a={a!r}, b={b!r}, metric={metric!r}); compared pairs: {compared}, metrics: {self.metrics}"
        )

    def to_dict(self) -> dict:
        """Everything but the arrays (replicates, query values and positions), in JSON's types
        (tuples as lists)."""
        return plain(self, ("replicates", "query_values", "query_positions"))

    def explore(self, path, *, title: str = "", query_ids=None):
        """Write one self-contained HTML page to explore this comparison (per-query scatter of each
        pair, win/tie/loss, largest differences, rank intervals); see :mod:`embedeval.explorer`."""
        from ..explorer import write_comparison_page
        from .tables import legend

        return write_comparison_page(self, path, title=title, query_ids=query_ids, legend=legend(self))

    def table(self, fmt: str = "table") -> str:
        """The comparison as ``fmt``: ``"table"``, ``"markdown"``, ``"html"``, ``"csv"``, ``"json"`` or ``"latex"``."""
        from .tables import render

        return render(self, fmt)

    def to_pandas(self, what: str = "values"):
        """The comparison as a pandas DataFrame: ``what`` is ``"values"`` (one row per system and
        metric: value, interval, rank and rank interval) or ``"pairs"`` (one row per pair and
        metric, the keys of :attr:`pairs`); see :func:`embedeval._core.display.comparison_frames`."""
        from .._core.display import comparison_frames, frame_of

        return frame_of(comparison_frames(self), what, "SystemComparison.to_pandas")

    def __repr__(self) -> str:
        return (
            f"SystemComparison(systems={self.systems}, metrics={self.metrics}, n_queries={self.n_queries}, "
            f"test={self.settings['test']!r}, correction={self.settings['correction']!r})"
        )


def grid(rows: list[str], columns: list[str], *arrays) -> dict:
    """``{row: {column: value}}`` of 2-D ``arrays`` (rows x columns): a float, or with two arrays
    a (low, high) tuple of floats."""

    def cell(i: int, j: int):
        values = tuple(float(a[i, j]) for a in arrays)
        return values if len(values) > 1 else values[0]

    return {r: {c: cell(i, j) for j, c in enumerate(columns)} for i, r in enumerate(rows)}


def plain(c, arrays=()) -> dict:
    """The attributes of a comparison ``c`` but ``arrays``, in their order, its ``intervals``
    (``{name: {name: (low, high)}}`` or None) with lists for tuples, as JSON writes them."""
    out = {name: getattr(c, name) for name in c.__dataclass_fields__ if name not in arrays}
    if c.intervals is not None:
        out["intervals"] = {k: {n: list(v) for n, v in row.items()} for k, row in c.intervals.items()}
    return out


def left_out(data) -> str:
    """Why queries were left out of a comparison, with counts where there are several reasons."""
    reasons = data.left_out  # read_systems gives a reason for every query it leaves out
    text = "; ".join(f"{n} {why}" if len(reasons) > 1 else why for why, n in reasons.items())
    return text + (f"; {ZERO_HINT}" if data.zero_hint else "")


def _notes(data, settings: dict) -> list[str]:
    notes = []
    if data.n_queries < data.n_given:
        notes.append(f"{data.n_given - data.n_queries} of {data.n_given} queries left out: {left_out(data)}")
    if settings["confidence"] is not None and data.n_queries < MIN_BOOTSTRAP_UNITS:
        notes.append(
            f"intervals not meaningful: a bootstrap over {data.n_queries} queries (fewer than "
            f"{MIN_BOOTSTRAP_UNITS}); the value, difference and rank intervals say little"
        )
    if settings["hierarchical"] and settings["test"] != "bootstrap":
        notes.append(
            f"the {settings['test']} test ran on per-query values averaged over each system's runs: it ignores the "
            "variance between runs (seeds); test='bootstrap' accounts for it"
        )
    return notes
