"""The result of :func:`embedeval.stats.compare_across`: plain dicts and lists."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._core.display import ShownAsTable
from .outcome import grid, plain


def _num(x) -> float | None:
    """A float, or None for NaN (JSON has no NaN)."""
    return None if x is None or math.isnan(float(x)) else float(x)


@dataclass(frozen=True, repr=False)
class AcrossComparison(ShownAsTable):
    """Every number of a comparison of systems over several datasets.

    Attributes
    ----------
    systems, datasets : list of str
        In the order given.
    metric : str or None
        The per-query metric compared, None for a table of scores.
    scores : dict of str to dict of str to float
        ``scores[dataset][system]``: the score given, or the mean of the per-query values over the
        queries every system evaluated.
    intervals : dict of str to dict of str to (float, float), or None
        ``intervals[dataset][system]``: the percentile bootstrap interval of that mean (queries
        resampled, the same draw for every system); None for a table of scores or without
        ``confidence``.
    n_queries : dict of str to int, or None
        Queries compared per dataset (None for a table of scores).
    ranks : dict of str to dict of str to float
        ``ranks[dataset][system]``: 1 for the highest score of the dataset, ties averaged.
    mean_ranks : dict of str to dict
        ``mean_ranks[system]``: ``mean_rank`` (over datasets), ``low``/``high`` (its bootstrap
        interval), ``place`` (1 = lowest mean rank) and ``place_low``/``place_high`` (the interval of
        its place over the same replicates); the interval entries are None without ``confidence``.
    best : str
        The system of lowest mean rank (the first given among equals).
    tied_for_first : list of str
        The best and every system the post-hoc test does not find significantly worse than it at
        ``alpha`` (Nemenyi's p, or Wilcoxon's with Holm over all k (k - 1) / 2 pairs).
    could_be_first : list of str or None
        The systems whose place interval includes 1 (None without ``confidence``).
    friedman : dict
        ``statistic`` (chi-square), ``df``, ``p_value``, ``f`` (Iman-Davenport), ``f_infinite``,
        ``df1``, ``df2``, ``p_f``, ``n_datasets``, ``n_systems``. F is infinite (p_f = 0) when every
        dataset ranks the systems alike; JSON has no infinity, so ``f`` is then None (null) and
        ``f_infinite`` True, here and in every format; the text says "infinite".
    nemenyi : dict
        ``q_alpha`` and ``critical_difference`` at ``alpha``.
    pairs : list of dict
        Per pair (A, B): ``a``, ``b``, ``mean_rank_a``, ``mean_rank_b``, ``p_nemenyi``,
        ``wilcoxon_statistic`` and ``p_wilcoxon`` (B against A over datasets), ``p_wilcoxon_holm``,
        ``significant`` (by the post-hoc test chosen, at ``alpha``), ``datasets_b_above``,
        ``datasets_b_below``, ``datasets_neither`` (per-query randomization test per dataset at
        ``alpha``; None for a table of scores), ``bayes`` (``{"p_b_worse", "p_equivalent",
        "p_b_better"}``, or None without ``rope``).
    settings : dict
    notes : list of str
    """

    systems: list[str]
    datasets: list[str]
    metric: str | None
    scores: dict
    intervals: dict | None
    n_queries: dict | None
    ranks: dict
    mean_ranks: dict
    best: str
    tied_for_first: list[str]
    could_be_first: list[str] | None
    friedman: dict
    nemenyi: dict
    pairs: list[dict]
    settings: dict
    notes: list[str] = field(default_factory=list)

    @classmethod
    def build(cls, data, o: dict, settings: dict) -> AcrossComparison:
        names, sets = data.systems, data.datasets
        info = o["rank_info"]
        mean_ranks = {}
        for j, s in enumerate(names):
            entry = {"mean_rank": float(o["mean_ranks"][j]), "mean_score": float(data.scores[:, j].mean())}
            entry["place"] = int(o["places"][j])
            for key in ("low", "high", "place_low", "place_high"):
                cast = float if key in ("low", "high") else int
                entry[key] = None if info is None else cast(info[key][j])
            mean_ranks[s] = entry
        vi = o["value_intervals"]
        intervals = None if vi is None else grid(sets, names, vi[:, 0], vi[:, 1])
        best, tied = o["tied"]
        f = o["friedman"]
        settings = {**settings, "n_pairs": len(o["pairs"]), "per_query": data.per_query is not None}
        return cls(
            systems=list(names),
            datasets=list(sets),
            metric=data.metric,
            scores=grid(sets, names, data.scores),
            intervals=intervals,
            n_queries=None
            if data.per_query is None
            else {d: int(v.shape[0]) for d, v in zip(sets, data.per_query, strict=True)},
            ranks=grid(sets, names, o["ranks"]),
            mean_ranks=mean_ranks,
            best=names[best],
            tied_for_first=[names[s] for s in tied],
            could_be_first=None if info is None else [s for s in names if mean_ranks[s]["place_low"] == 1],
            friedman={
                "statistic": f.statistic,
                "df": f.df,
                "p_value": f.p_value,
                "f": _num(f.f) if math.isfinite(f.f) else None,
                "f_infinite": math.isinf(f.f),
                "df1": f.df1,
                "df2": f.df2,
                "p_f": _num(f.p_f),
                "n_datasets": f.n_datasets,
                "n_systems": f.n_systems,
            },
            nemenyi={"q_alpha": o["q_alpha"], "critical_difference": o["cd"]},
            pairs=[cls._pair(o, data, p, settings) for p in range(len(o["pairs"]))],
            settings=settings,
            notes=_notes(data, f, len(o["pairs"]), settings),
        )

    @staticmethod
    def _pair(o: dict, data, p: int, settings: dict) -> dict:
        a, b = o["pairs"][p]
        w = o["wilcoxon"][p]
        p_post = o["p_nemenyi"][p] if settings["post_hoc"] == "nemenyi" else o["p_wilcoxon_holm"][p]
        counts = o["dataset_counts"]
        bayes = o["bayes"]
        return {
            "a": data.systems[a],
            "b": data.systems[b],
            "mean_rank_a": float(o["mean_ranks"][a]),
            "mean_rank_b": float(o["mean_ranks"][b]),
            "p_nemenyi": float(o["p_nemenyi"][p]),
            "wilcoxon_statistic": float(w.statistic),
            "p_wilcoxon": _num(w.p_value),
            "p_wilcoxon_holm": _num(o["p_wilcoxon_holm"][p]),
            "significant": bool(p_post < settings["alpha"]),
            "datasets_b_above": None if counts is None else int(counts[p, 0]),
            "datasets_b_below": None if counts is None else int(counts[p, 1]),
            "datasets_neither": None if counts is None else int(counts[p, 2]),
            "bayes": None
            if bayes is None
            else dict(zip(("p_b_worse", "p_equivalent", "p_b_better"), bayes[p], strict=True)),
        }

    def to_dict(self) -> dict:
        """Every attribute, in JSON's types (tuples as lists, NaN as None)."""
        return plain(self)

    def table(self, fmt: str = "table") -> str:
        """The comparison as ``fmt``: ``"table"``, ``"markdown"``, ``"html"``, ``"latex"``, ``"csv"``
        or ``"json"``."""
        from .across_tables import render

        return render(self, fmt)

    def to_pandas(self, what: str = "scores"):
        """The comparison as a pandas DataFrame: ``what`` is ``"scores"`` (datasets x systems),
        ``"ranks"`` (the same shape, 1 = best), ``"mean_ranks"`` (one row per system) or
        ``"pairs"`` (one row per pair); see :func:`embedeval._core.display.across_frames`."""
        from .._core.display import across_frames, frame_of

        return frame_of(across_frames(self), what, "AcrossComparison.to_pandas")

    def __repr__(self) -> str:
        return (
            f"AcrossComparison(systems={self.systems}, datasets={len(self.datasets)}, best={self.best!r}, "
            f"tied_for_first={self.tied_for_first}, friedman_p={self.friedman['p_value']:.3g})"
        )


def _notes(data, f, n_pairs: int, settings: dict) -> list[str]:
    notes = []
    alpha = settings["alpha"]
    smallest = min(1.0, n_pairs * 2.0 / 2.0**f.n_datasets)  # Holm's first step on the exact minimum
    if smallest >= alpha and settings["wilcoxon_method"] != "approx":
        notes.append(
            f"with {f.n_datasets} datasets the smallest exact two-sided Wilcoxon p is 2 / 2^{f.n_datasets}; "
            f"after Holm over {n_pairs} pairs it is {smallest:.3g}, so no pair can be significant by it at {alpha}"
        )
    if data.per_query is not None:
        lost = [
            f"{d} ({g - v.shape[0]} of {g})"
            for d, g, v in zip(data.datasets, data.n_given, data.per_query, strict=True)
            if v.shape[0] < g
        ]
        if lost:
            notes.append("queries left out (not evaluated by every system): " + ", ".join(lost))
    if not (f.n_datasets > 10 and f.n_systems > 5):
        notes.append(
            f"Friedman's p-value is a chi-square approximation, rough with {f.n_datasets} datasets and "
            f"{f.n_systems} systems (Demšar: N > 10, k > 5); Iman-Davenport's F is the better of the two"
        )
    if np.all(data.scores == data.scores[:, :1]):
        notes.append("every system has the same score on every dataset: nothing to tell apart")
    return notes
