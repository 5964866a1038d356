"""What ranked lists and score matrices share after ranking: judged grades -> hits -> result.

A retrieved judged item is relevant when its grade reaches the threshold (trec_eval's relevance
level); graded metrics read the grades themselves. Every ranked input form (sequences, mappings,
2-D id arrays, TREC files, score matrices) is reduced to :class:`Judged`: flat arrays of the
(query, rank, grade) of each retrieved judged item and the (query, grade) of each judged item
with a positive grade. Only positive grades matter: R counts grades >= threshold > 0, and a
grade <= 0 adds no gain to DCG or its ideal.

Input forms with scores also give each retrieved judged item its *tie group* (the items ranked
before the group, and the group's size), so that :func:`per_query` can evaluate them under a
tie-aware rule (``ties=``, :mod:`embedeval._metrics.ties`): ``"expected"`` through
:class:`~embedeval._metrics.ties.TiedHits` and :mod:`embedeval._metrics.expected`, ``"optimistic"`` and
``"pessimistic"`` by re-ranking each group's judged items before the ordinary kernels.
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings
from dataclasses import dataclass

import numpy as np

from .._inputs.arrays import check_choice
from .._metrics import expected as _expected
from .._metrics import kernels as _kernels
from .._metrics.listing import listing_of, tied_listing_of
from .._metrics.registry import RANKINGS, parse_metrics, per_query_values
from .._metrics.ties import TIE_RULES, TiedHits, check_ties, tied_hits_from_groups
from ..result import EvaluationResult

# Queries whose whole listings (trec_eval's bpref, infAP, set and utility measures) are
# evaluated together: their matrices hold block x retrieved entries (2 MB per float64 matrix at
# 1,000 retrieved); larger blocks were slower and took more memory, smaller ones no faster
# (bench/NOTES.md, 'Figures moved from the code (stop 52)').
LISTING_QUERY_BLOCK = 256


def check_threshold(threshold) -> float:
    if isinstance(threshold, bool) or not isinstance(threshold, numbers.Real) or not threshold > 0:
        raise ValueError(f"'threshold' must be a number > 0 (grade 0 is never relevant); got {threshold!r}")
    return float(threshold)


def check_options(metrics, threshold, empty, complete, ties):
    """The options every ranked-list and score-matrix entry point shares, checked before any
    work: (parsed metrics, threshold, tie rule)."""
    parsed = parse_metrics(metrics, RANKINGS)
    threshold = check_threshold(threshold)
    check_choice(empty, "empty", ("skip", "zero"))
    if not isinstance(complete, bool):
        raise TypeError(f"'complete' must be True or False; got {complete!r}")
    return parsed, threshold, check_ties(ties)


@dataclass(frozen=True)
class Judged:
    """The judged items of every query, and where the ranking put those it retrieved.

    Attributes
    ----------
    n_queries : int
    rows, ranks, grades : numpy.ndarray of shape (h,)
        Each retrieved judged item: its query, its 1-based rank (float) and its grade, in any order.
    judged_rows, judged_grades : numpy.ndarray of shape (m,)
        Each judged item with a grade > 0, retrieved or not: its query and its grade.
    group_start, group_size : numpy.ndarray of shape (h,), optional
        Forms with scores: the items ranked before each retrieved judged item's tie group (its
        positions are ``group_start + 1 .. group_start + group_size``) and the group's size.
        Items of one group share ``group_start``. Needed by the tie-aware rules only; an item
        given here may lie beyond the ranking's depth if its group reaches into it (its
        ``rank`` then says nothing).
    """

    n_queries: int
    rows: np.ndarray
    ranks: np.ndarray
    grades: np.ndarray
    judged_rows: np.ndarray
    judged_grades: np.ndarray
    group_start: np.ndarray | None = None
    group_size: np.ndarray | None = None
    # What trec_eval's measures of a whole listing read (bpref, infAP, set_P, unj, G, ...):
    # each query's number of retrieved items, and of judged items graded exactly 0. Forms that
    # know them give them; without them those measures refuse (their kernels name what is missing).
    n_retrieved: np.ndarray | None = None
    n_zero: np.ndarray | None = None

    def _judged_side(self, threshold: float) -> tuple[np.ndarray, np.ndarray]:
        """(R, ideal): each query's relevant judged items and its judged grades, largest first."""
        jr, jg = _by_row(self.judged_rows, np.asarray(self.judged_grades, dtype=np.float64))
        ideal = -np.sort(-_kernels.pack(jr, jg, self.n_queries, fill=0.0), axis=1)
        return np.bincount(jr[jg >= threshold], minlength=self.n_queries), ideal

    def _grouped(self, key: np.ndarray | None = None):
        """The positively graded items sorted by (row, group, ``key``): (rows, start, size, grade,
        each item's group label, the first item of each group)."""
        keep = self.grades > 0
        rows, start = self.rows[keep], np.asarray(self.group_start, dtype=np.float64)[keep]
        size, grade = np.asarray(self.group_size, dtype=np.float64)[keep], np.asarray(self.grades[keep], np.float64)
        order = np.lexsort((start, rows) if key is None else (key[keep], start, rows))
        rows, start, size, grade = rows[order], start[order], size[order], grade[order]
        new = np.ones(rows.size, dtype=bool)
        new[1:] = (rows[1:] != rows[:-1]) | (start[1:] != start[:-1])
        return rows, start, size, grade, np.cumsum(new) - 1, np.flatnonzero(new)

    def tied_hits(self, threshold: float, with_listing: bool = False) -> TiedHits:
        """:class:`~embedeval._metrics.ties.TiedHits` at relevance level ``threshold`` (needs the
        groups); with ``with_listing``, also the whole listing with each position's tie group
        where the form gave what it needs."""
        rows, start, size, grade, label, first = self._grouped()
        n_relevant, ideal = self._judged_side(threshold)
        per_group = lambda w: np.bincount(label, weights=w, minlength=first.size)  # noqa: E731
        tied_listing = None
        if with_listing and self.n_retrieved is not None:
            tied_listing = self._tied_listing(threshold, ideal)
        tied = tied_hits_from_groups(
            rows[first],
            start[first],
            size[first],
            per_group((grade >= threshold).astype(np.float64)),
            n_relevant,
            gain=per_group(grade),
            gain_exp=per_group(np.exp2(grade) - 1.0),
            ideal=ideal,
        )
        return dataclasses.replace(tied, tied_listing=tied_listing) if tied_listing is not None else tied

    def _tied_listing(self, threshold: float, ideal: np.ndarray):
        """The whole listing in one order the ties allow, each judged item placed at its group's
        next free position (forms with scores may give every item of a group the group's first
        rank), with each position's tie group."""
        start, size = np.asarray(self.group_start, np.int64), np.asarray(self.group_size, np.int64)
        order = np.lexsort((start, self.rows))
        rows, start, size = self.rows[order], start[order], size[order]
        new = np.ones(rows.size, dtype=bool)
        new[1:] = (rows[1:] != rows[:-1]) | (start[1:] != start[:-1])
        within = np.arange(rows.size) - np.flatnonzero(new)[np.cumsum(new) - 1]
        grades = np.asarray(self.grades, dtype=np.float64)[order]
        lst = listing_of(rows, start + 1 + within, grades, self.n_retrieved, ideal, self.n_zero, threshold)
        return tied_listing_of(lst, rows, start, size)

    def blocks(self, size: int | None):
        """The same items in blocks of ``size`` consecutive queries (each numbered from 0), or
        ``self`` alone when ``size`` is None or covers every query. Without the tie groups."""
        if size is None or self.n_queries <= size:
            yield self
            return
        for lo in range(0, self.n_queries, size):
            hi = min(lo + size, self.n_queries)
            hit = (self.rows >= lo) & (self.rows < hi)
            kept = (self.judged_rows >= lo) & (self.judged_rows < hi)
            yield Judged(
                hi - lo,
                self.rows[hit] - lo,
                self.ranks[hit],
                self.grades[hit],
                self.judged_rows[kept] - lo,
                self.judged_grades[kept],
                n_retrieved=None if self.n_retrieved is None else self.n_retrieved[lo:hi],
                n_zero=None if self.n_zero is None else self.n_zero[lo:hi],
            )

    def ordered(self, rule: str) -> Judged:
        """The same items ranked by ``rule`` within their tie groups: higher grades first
        (``"optimistic"``) or last (``"pessimistic"``); items without a positive grade fill the
        group's other positions and are dropped (they count in no metric)."""
        if rule not in TIE_RULES:
            raise ValueError(f"'ties' for a reordering must be one of {', '.join(TIE_RULES)}; got {rule!r}")
        if self.n_retrieved is not None:
            return self._reordered_listing(rule)
        grades = np.asarray(self.grades, dtype=np.float64)
        rows, start, size, grade, label, first = self._grouped(-grades if rule == "optimistic" else grades)
        within = np.arange(rows.size) - first[label]  # 0-based place among the group's graded items
        if rule == "optimistic":
            ranks = start + 1.0 + within
        else:
            ranks = start + size - np.bincount(label)[label] + 1.0 + within
        return Judged(self.n_queries, rows, ranks, grade, self.judged_rows, self.judged_grades, None, None, None)

    def _reordered_listing(self, rule: str) -> Judged:
        """:meth:`ordered` keeping every judged item, for trec_eval's measures of the whole listing:
        within a tie group, ``"optimistic"`` ranks the items with a grade >= 0 first (highest grade
        first) and those with a negative grade last; ``"pessimistic"`` the reverse; documents
        outside the qrels take the positions between."""
        grades = np.asarray(self.grades, dtype=np.float64)
        start, size = np.asarray(self.group_start, np.float64), np.asarray(self.group_size, np.float64)
        graded = grades >= 0
        first_class = graded if rule == "optimistic" else ~graded  # the class that goes to the top
        order = np.lexsort((-grades if rule == "optimistic" else grades, ~first_class, start, self.rows))
        rows, start, size, grades, top = self.rows[order], start[order], size[order], grades[order], first_class[order]
        new = np.ones(rows.size, dtype=bool)
        new[1:] = (rows[1:] != rows[:-1]) | (start[1:] != start[:-1]) | (top[1:] != top[:-1])
        label = np.cumsum(new) - 1
        within = np.arange(rows.size) - np.flatnonzero(new)[label]
        count = np.bincount(label)[label]
        ranks = np.where(top, start + 1.0 + within, start + size - count + 1.0 + within)
        return Judged(
            self.n_queries,
            rows,
            ranks,
            grades,
            self.judged_rows,
            self.judged_grades,
            n_retrieved=self.n_retrieved,
            n_zero=self.n_zero,
        )

    def hits(self, threshold: float, with_listing: bool = True) -> _kernels.Hits:
        """:class:`~embedeval._metrics.kernels.Hits` at relevance level ``threshold``; with
        ``with_listing``, also the whole listing where the form gave what it needs."""
        n = self.n_queries
        rows, ranks, grade = _by_row(self.rows, np.asarray(self.ranks, dtype=np.float64), self.grades)
        positive = grade > 0
        # each query's items in rank order: a sort of short rows, not of every item at once
        gain_ranks = _kernels.pack(rows[positive], ranks[positive], n)
        by_rank = np.argsort(gain_ranks, axis=1, kind="stable")
        gain_ranks = np.take_along_axis(gain_ranks, by_rank, 1)
        gain_grades = np.take_along_axis(_kernels.pack(rows[positive], grade[positive], n, fill=0.0), by_rank, 1)
        relevant = np.sort(np.where(gain_grades >= threshold, gain_ranks, np.inf), axis=1)
        width = max(int(np.isfinite(relevant).sum(axis=1).max(initial=0)), 1)
        n_relevant, ideal = self._judged_side(threshold)
        listing = None
        if with_listing and self.n_retrieved is not None:
            listing = listing_of(rows, ranks, grade, self.n_retrieved, ideal, self.n_zero, threshold)
        return _kernels.Hits(
            ranks=np.ascontiguousarray(relevant[:, :width]),
            n_relevant=n_relevant,
            gain_ranks=gain_ranks,
            gain_grades=gain_grades,
            ideal=ideal,
            listing=listing,
        )


def _by_row(rows: np.ndarray, *columns: np.ndarray) -> tuple[np.ndarray, ...]:
    """``rows`` and ``columns`` ordered by row (stably), as :func:`embedeval._metrics.kernels.pack` needs."""
    if rows.size and (rows[1:] < rows[:-1]).any():
        order = np.argsort(rows, kind="stable")
        return (rows[order], *(c[order] for c in columns))
    return (rows, *columns)


def _needs_listing(parsed) -> bool:
    """Whether a metric reads the whole listing (trec_eval's bpref, set_P, G, ...): built only then."""
    return any(m.spec.listing for m in parsed)


def per_query(parsed, judged: Judged, threshold: float, ties: str | None) -> tuple[dict, np.ndarray]:
    """(per-query values of each metric, R) of ``judged`` under the tie rule ``ties`` (None: the
    ranks as given; the other rules need the tie groups)."""
    if ties == "expected":
        derived = [m for m in parsed if m.spec.forms[m.form].expected is not None]
        tied = judged.tied_hits(threshold, _needs_listing(derived))
        values = _expected.compute(derived, tied)
        rest = [m for m in parsed if m.name not in values]
        undefined = [m.name for m in rest if not m.spec.order_free]
        if undefined:
            raise ValueError(
                f"ties='expected' has no value for {', '.join(undefined)} (no tie-aware expected value is "
                "derived for them: see docs/guides/trec_eval.md); use 'optimistic' or 'pessimistic'"
            )
        if rest:  # the same value in every order of the tied items
            values |= per_query_values(rest, judged.ordered("optimistic").hits(threshold, _needs_listing(rest)))
        return {m.name: values[m.name] for m in parsed}, tied.n_relevant
    if ties is not None:
        judged = judged.ordered(ties)
    listing = _needs_listing(parsed)
    values: dict[str, list] = {m.name: [] for m in parsed}
    n_relevant = []
    # The whole listing's measures read a (queries x retrieved) matrix or several: in blocks of
    # queries, so that memory follows the block, not the run (a run of 50,000 queries x 1,000).
    for block in judged.blocks(LISTING_QUERY_BLOCK if listing and judged.n_retrieved is not None else None):
        hits = block.hits(threshold, listing)
        for name, v in per_query_values(parsed, hits).items():
            values[name].append(v)
        n_relevant.append(hits.n_relevant)
    return {name: np.concatenate(v) for name, v in values.items()}, np.concatenate(n_relevant)


def warn_no_relevant(threshold, empty: str, what: str, stacklevel: int) -> None:
    """The warning for an evaluation in which no query has a relevant item.

    With ``empty="skip"`` every value is NaN. With ``empty="zero"`` the binary metrics are 0, but
    the graded ones (dcg, ndcg, cg) still count the gains of judged items below the threshold.
    """
    grade = "a judged grade >= the threshold" if threshold is None else f"a judged grade >= {threshold:g}"
    if empty == "skip":
        outcome = "every value is NaN"
    else:
        outcome = "every binary metric is 0 (graded ones still count the gains of grades below the threshold)"
    warnings.warn(
        f"no query has a relevant item ({grade}), so {outcome}; check the relevance threshold and that the ids "
        f"of {what} and judgements match",
        UserWarning,
        stacklevel=stacklevel + 1,
    )


def finish(parsed, values, n_relevant, empty, conventions, config, query_ids=None, stacklevel=3):
    """The result of per-query ``values`` (R = ``n_relevant``); warns when no query has a relevant item."""
    no_relevant = n_relevant == 0
    if no_relevant.all():
        warn_no_relevant(config.get("threshold"), empty, "rankings", stacklevel)
    reasons = ()
    if empty == "skip":
        for v in values.values():
            v[no_relevant] = np.nan
        reasons = ("no judged item reaches the relevance threshold (R = 0)",)
    else:
        for v in values.values():
            v[no_relevant & np.isnan(v)] = 0.0
    if query_ids is not None:
        config = {**config, "query_ids": list(query_ids)}
    return EvaluationResult.from_per_query(
        values, {m.name: m.definition for m in parsed}, conventions, skip_reasons=reasons, config=config
    )


def conventions(threshold: float, empty: str, ties: str) -> dict[str, str]:
    """The conventions of the ranked forms; ``ties`` says how ties were broken (or averaged)."""
    return {
        "recall": "trec_eval recall: relevant items in the top k / all relevant items (hit_rate@k is the "
        "metric-learning Recall@K; capped_recall@k divides by min(k, R))",
        "relevance": f"an item is relevant when its grade >= {threshold:g}; unjudged items are not relevant; "
        "graded metrics use the grades, negative grades count as 0",
        "ties": ties,
        "queries without relevant items": "skipped: NaN, counted in 'skipped', not averaged"
        if empty == "skip"
        else "evaluated and averaged in (trec_eval's convention): binary metrics are 0, graded metrics still "
        "count judged items below the threshold",
        "average": "summary = mean over evaluated queries",
    }
