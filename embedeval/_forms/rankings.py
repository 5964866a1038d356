"""Evaluation of ranked result lists (the IR and tutorial form), through the same kernels.

Every input form is reduced to :class:`~embedeval._forms.graded.Judged` (flat arrays of where the
judged items were ranked) by the module that knows it: 2-D id arrays by
:mod:`embedeval._forms.id_arrays`, Python sequences and ``{id: score}`` mappings by
:mod:`embedeval._forms.mappings`, TREC files by :mod:`embedeval._forms.trec.evaluate`. This module checks the
arguments, pairs the queries of mappings, and builds the result.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping

import numpy as np

from .._inputs.arrays import _to_numpy
from .._inputs.groups import read_groups
from .._metrics.registry import DEFAULT_RANKING_METRICS
from .._metrics.ties import describe, refuse_without_scores
from ..result import EvaluationResult
from . import id_arrays as _id_arrays
from . import mappings as _python_forms
from .graded import Judged, check_options, conventions, finish, per_query

TIE_RULE = "the order given; a TREC run or a {id: score} mapping is sorted by score, ties by id descending (trec_eval)"
# What "tied" means for the scored ranked forms, and what a ranking cut at its depth holds.
TIED = (
    "exactly equal scores (-0.0 ties 0.0); a ranking holds only the items it lists, so a tie group cut off by "
    "the end of a query's list (a run truncated at its depth) is taken to be the listed items alone"
)
GIVEN = "the order given"


def _is_array(x) -> bool:
    return not isinstance(x, (Mapping, list, tuple)) and hasattr(x, "__array__")


def _count(n: int, what: str) -> str:
    return f"{n} {what[0] if n == 1 else what[1]}"


def _key_types(a, b) -> str:
    """A hint when two collections of query ids hold different types (1 and '1')."""
    ta, tb = {type(k).__name__ for k in a}, {type(k).__name__ for k in b}
    if a and b and ta.isdisjoint(tb):
        return (
            f"; the query ids of 'rankings' are {'/'.join(sorted(ta))} and those of 'relevance' {'/'.join(sorted(tb))}"
        )
    return ""


def _pair_queries(rankings: Mapping, relevance, complete: bool) -> tuple[list, list, list]:
    """(query ids, rankings, judgements) of mappings keyed by query id."""
    if not isinstance(relevance, Mapping):
        raise TypeError("'relevance' must be a mapping query id -> judgements when 'rankings' is a mapping")
    missing = [q for q in rankings if q not in relevance]
    extra = [q for q in relevance if q not in rankings]
    if complete:
        if missing:
            warnings.warn(
                f"{_count(len(missing), ('ranked query has', 'ranked queries have'))} no judgements and "
                f"{'is' if len(missing) == 1 else 'are'} left out (first: {missing[0]!r}), as trec_eval -c does",
                UserWarning,
                stacklevel=5,
            )
        query_ids = [q for q in rankings if q in relevance] + extra
        scored = all(isinstance(r, Mapping) for r in rankings.values())
        lists = [rankings[q] if q in rankings else ({} if scored else []) for q in query_ids]
        return query_ids, lists, [relevance[q] for q in query_ids]
    if missing or extra:
        parts = []
        if missing:
            parts.append(
                f"{_count(len(missing), ('ranked query', 'ranked queries'))} without relevance (first: {missing[0]!r})"
            )
        if extra:
            parts.append(
                f"{_count(len(extra), ('judged query', 'judged queries'))} without a ranking (first: {extra[0]!r})"
            )
        raise ValueError(
            "'rankings' and 'relevance' must cover the same queries; got "
            + " and ".join(parts)
            + _key_types(list(rankings), list(relevance))
            + "; select the common queries first (trec_eval evaluates only queries in both), or pass "
            "complete=True to count judged queries without a ranking as empty rankings (trec_eval -c)"
        )
    query_ids = list(rankings)
    return query_ids, [rankings[q] for q in query_ids], [relevance[q] for q in query_ids]


def _relevance_rows(relevance, grades, pad: int) -> list[dict]:
    """A padded 2-D id array of judgements as one {id: grade} per row, read up to the pad."""
    ids = _to_numpy(relevance, "relevance")
    _id_arrays._check_matrix(ids, "relevance")
    g = np.ones(ids.shape) if grades is None else np.asarray(_to_numpy(grades, "grades"), dtype=float)
    if g.shape != ids.shape:
        raise ValueError(f"'grades' must have the shape of 'relevance' {ids.shape}; got {g.shape}")
    filled = ids != pad
    gap = (filled[:, 1:] & ~filled[:, :-1]).any(axis=1)
    if gap.any():
        row = int(np.flatnonzero(gap)[0])
        raise ValueError(f"'relevance' rows must put the pad value {pad} only at the end; row {row} has an id after it")
    counts = filled.sum(axis=1).tolist()
    rows = [dict(zip(r[:c], x[:c], strict=True)) for r, x, c in zip(ids.tolist(), g.tolist(), counts, strict=True)]
    for i, (row, c) in enumerate(zip(rows, counts, strict=True)):
        if len(row) != c:
            raise ValueError(f"'relevance' of query {i} lists an id more than once")
    return rows


def _check_each_ranking(lists: list, name) -> None:
    """TypeError naming the query whose ranking is neither a sequence of ids nor a mapping (None, a
    number, a string)."""
    for i, r in enumerate(lists):
        if isinstance(r, (str, bytes)) or not (isinstance(r, Mapping) or hasattr(r, "__len__")):
            raise TypeError(
                f"'rankings' of query {name(i)} must be a sequence of ids or an {{id: score}} mapping; "
                f"got {type(r).__name__} ({r!r:.40})"
            )


def _from_python(rankings, relevance, complete: bool, judged=None, ties=None) -> tuple[Judged, list | None, int, str]:
    """Sequences or mappings of Python ids -> (Judged, query ids or None, longest ranking, own tie rule)."""
    if isinstance(rankings, Mapping):
        query_ids, lists, entries = _pair_queries(rankings, relevance, complete)
        name = lambda i: repr(query_ids[i])  # noqa: E731
    else:
        if isinstance(relevance, Mapping):
            raise TypeError("'relevance' must be a sequence with one entry per query when 'rankings' is a sequence")
        query_ids, name = None, str
        lists, entries = list(rankings), list(relevance)
        if len(lists) != len(entries):
            raise ValueError(
                f"'relevance' must have one entry per query of 'rankings' ({len(lists)}); got {len(entries)}"
            )
    _check_each_ranking(lists, name)
    scored = [isinstance(r, Mapping) for r in lists]
    if not all(scored):
        i = scored.index(False)
        refuse_without_scores(ties, f"'rankings' of query {name(i)} (a list of ids)", GIVEN)
    if judged is None:
        judged = _python_forms.judgements(entries, name)
    if all(scored):
        reduced = _python_forms.from_scored(lists, judged, name, groups=ties is not None)
    else:
        if any(scored):  # some queries scored, others listed: list the scored ones in trec_eval's order
            _python_forms.check_scores([r for r, s in zip(lists, scored, strict=True) if s], name)
            lists = [_python_forms.order_by_score(r) if s else r for r, s in zip(lists, scored, strict=True)]
        reduced = _python_forms.from_lists(lists, judged, name)
    own = "trec_eval" if lists and all(scored) else "given"
    return reduced, query_ids, max(map(len, lists), default=0), own


def _reduce(rankings, relevance, grades, pad: int, complete: bool, ties=None) -> tuple[Judged, list | None, int, str]:
    """Any input form -> (Judged, query ids or None, longest ranking, the form's own tie rule)."""
    if _is_array(rankings):
        refuse_without_scores(ties, "'rankings' as an array of ids", GIVEN)
    if _is_array(rankings) and _is_array(relevance):
        ranked = _to_numpy(rankings, "rankings")
        return _id_arrays.from_arrays(ranked, relevance, grades, pad), None, int(ranked.shape[-1]), "given"
    if _is_array(relevance):  # judgements as a padded id array, rankings in Python
        relevance = _relevance_rows(relevance, grades, pad)
    elif grades is not None:
        raise ValueError("'grades' goes with array 'relevance'; give grades as {id: grade} mappings otherwise")
    if not _is_array(rankings):
        return _from_python(rankings, relevance, complete, ties=ties)
    ranked = _to_numpy(rankings, "rankings")
    if isinstance(relevance, Mapping):
        raise TypeError("'relevance' must be a sequence with one entry per row when 'rankings' is an array")
    judged = _python_forms.judgements(list(relevance), str)
    if ranked.dtype.kind in "iu":
        reduced = _id_arrays.from_array_and_ids(ranked, judged, pad)
        if reduced is not None:
            return reduced, None, int(ranked.shape[1]), "given"
    elif ranked.ndim != 2:
        raise ValueError(f"'rankings' as an array must be 2-D (n_queries, length); got shape {ranked.shape}")
    # string ids, or judged ids that are not integers: compare as Python objects, rows read up to the pad
    rows = [[d for d in row if d != pad] for row in ranked.tolist()]
    return _from_python(rows, relevance, complete, judged)


def result_of(
    reduced: Judged, parsed, threshold: float, empty: str, query_ids, config: dict, ties=None, own: str = "trec_eval"
) -> EvaluationResult:
    """The result of every input form once reduced: what the TREC file reader shares with this module.

    ``ties``: None (the ranks of ``reduced``, made by the form's own rule ``own``) or a tie-aware
    rule (``reduced`` then holds the tie groups)."""
    if reduced.n_queries == 0:
        raise ValueError("'rankings' must hold at least one query; got none")
    values, n_relevant = per_query(parsed, reduced, threshold, ties)
    return finish(
        parsed,
        values,
        n_relevant,
        empty,
        conventions(threshold, empty, describe(ties, TIE_RULE, TIED)),
        {"input": "rankings", "threshold": threshold, "ties": ties or own, **config},
        query_ids,
        stacklevel=4,
    )


def evaluate_rankings(
    rankings,
    relevance,
    *,
    metrics=DEFAULT_RANKING_METRICS,
    threshold: float = 1,
    grades=None,
    pad: int = -1,
    empty: str = "skip",
    complete: bool = False,
    ties: str | None = None,
    groups=None,
) -> EvaluationResult:
    r"""Evaluate ranked result lists against relevance judgements (the IR and tutorial form).

    Parameters
    ----------
    rankings : sequence of sequences, mapping, or array-like of shape (n_queries, length)
        Per query, the retrieved ids best first. A mapping ``{query_id: ids}`` (or
        ``{query_id: {id: score}}``, a pytrec_eval run, sorted by score with trec_eval's tie rule)
        keys the queries; a 2-D integer array is padded at the end of each row with ``pad``.
        An id may appear once per query. Scores must be real numbers, not NaN (+/-inf are allowed).
    relevance : sequence, mapping, or array-like of shape (n_queries, n_judged)
        Per query, a set or list of relevant ids (grade 1), or a mapping ``{id: grade}``; a
        mapping of those by query id when ``rankings`` is a mapping (both must cover the same
        queries unless ``complete``); a 2-D integer array of relevant ids padded with ``pad``
        (grades from ``grades``).
    metrics : str or sequence of str
        Any of ``precision@k``, ``recall@k`` (trec_eval), ``capped_recall@k``, ``hit_rate@k``,
        ``f1@k``, ``r_precision``, ``map@r``, ``map[@k]``, ``map_hits@k``, ``mrr[@k]``,
        ``ndcg[@k]``, ``ndcg_exp[@k]``, ``dcg[@k]``, ``dcg_exp[@k]``, ``cg[@k]``; trec_eval's
        names (``P_10``, ``ndcg_cut.10,20``, ``recip_rank``, ...) are accepted and reported under
        these names.
    threshold : float
        Grade at which a judged item counts as relevant for the binary metrics (trec_eval's
        relevance level, default 1).
    grades : array-like of shape (n_queries, n_judged), optional
        Grades of the ids in an array ``relevance``.
    pad : int
        The filler value of array inputs.
    empty : {"skip", "zero"}
        Queries with no relevant item: skipped (NaN, counted, not averaged) or evaluated and
        averaged in, as trec_eval does: binary metrics are 0 there, while graded ones (dcg, ndcg)
        still count judged items whose grade is below ``threshold``.
    complete : bool
        For mappings: evaluate every judged query, a judged query without a ranking counting as
        an empty ranking (trec_eval ``-c``); ranked queries without judgements are left out with a
        warning. Default False: both mappings must cover the same queries.
    ties : {None, "expected", "optimistic", "pessimistic"}
        How items with exactly equal scores are ranked. None: the form's own rule (the order
        given; trec_eval's, by id, for ``{id: score}`` mappings). ``"expected"``: the exact
        expected value of each metric over every order of the tied items, each equally likely
        (McSherry & Najork 2008), in closed form; ``"optimistic"`` / ``"pessimistic"``:
        relevant (higher-graded) items first / last within each tie group, so that the two
        bound what the tied orders allow. The tie-aware rules need scores: ``{id: score}``
        mappings (a ranked id list has none, and is refused with them). A mapping holds only
        the items it lists: a tie group cut off by a truncated run is taken to be its listed
        items.
    groups : array-like of shape (n_queries,) or mapping, optional
        One group per query, in the result's query order, or ``{query id: group}`` for
        mappings: each metric is also averaged within each group, in ``result.per_group``.

    Returns
    -------
    EvaluationResult
        ``per_query`` in the order of the queries (``config["query_ids"]`` for mappings).

    Raises
    ------
    ValueError
        For ``ties`` not among the rules, a tie-aware ``ties`` with rankings that hold no scores,
        an id listed twice in one ranking, a score that is NaN or not a real number, a grade
        that is not finite, mappings over different queries, or ids of rankings and judgements
        of different types (``5`` and ``'5'``) that leave every query without a retrieved judged id.

    Notes
    -----
    R is the number of judged items with grade >= ``threshold``. Cutoffs beyond a ranking's
    length count the missing ranks as not relevant. Metrics without a cutoff use the whole
    given ranking; relevant items never retrieved add nothing to AP but count in R.
    nDCG uses DCG@k = :math:`\sum_{i \le k} g(rel_i)/\log_2(i+1)` with g linear (``ndcg``, as
    trec_eval's ndcg_cut) or :math:`2^{rel}-1` (``ndcg_exp``), over the ideal DCG@k of all judged
    grades sorted in decreasing order. A warning says when no query has a relevant item.

    Examples
    --------
    >>> import embedeval
    >>> r = embedeval.evaluate_rankings([[3, 1, 2]], [{1, 5}], metrics=["precision@2", "recall@2", "mrr"])
    >>> r.summary
    {'precision@2': 0.5, 'recall@2': 0.5, 'mrr': 0.5}
    """
    parsed, threshold, ties = check_options(metrics, threshold, empty, complete, ties)
    reduced, query_ids, longest, own = _reduce(rankings, relevance, grades, pad, complete, ties)
    query_groups = read_groups(groups, reduced.n_queries, query_ids)
    result = result_of(reduced, parsed, threshold, empty, query_ids, {"max_length": longest}, ties, own)
    return result if query_groups is None else result.with_groups(query_groups)
