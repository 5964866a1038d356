"""Evaluation of ranked result lists (the IR and tutorial form), through the same kernels.

Every input form (sequences, mappings, 2-D id arrays) is first normalised to padded arrays
(ranked ids per query; judged ids and grades per query), then turned into the (query, rank,
grade) triples of :mod:`embedeval._graded`, which builds the hits and the result.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from . import _budget, _kernels
from ._graded import check_threshold, conventions, finish, judged_hits
from ._inputs import _to_numpy, check_choice
from ._metrics import DEFAULT_RANKING_METRICS, RANKINGS, parse_metrics
from .result import EvaluationResult

TIE_RULE = "the order given; a TREC run or a {id: score} mapping is sorted by score, ties by id descending (trec_eval)"


def _order_by_score(scored: Mapping) -> list:
    """Ids of a {id: score} mapping in trec_eval's order: score descending, ties by id descending."""
    items = sorted(scored.items(), key=lambda kv: kv[0], reverse=True)
    return [doc for doc, _ in sorted(items, key=lambda kv: kv[1], reverse=True)]


def _judgements(entry, query: str) -> dict:
    """One query's relevance as {id: grade}: a mapping is taken as it is, a set or list means grade 1."""
    if isinstance(entry, Mapping):
        judged = dict(entry)
    elif isinstance(entry, (set, frozenset, Sequence, np.ndarray)) and not isinstance(entry, (str, bytes)):
        ids = list(entry.tolist() if isinstance(entry, np.ndarray) else entry)
        judged = dict.fromkeys(ids, 1.0)
        if len(judged) != len(ids):
            raise ValueError(f"'relevance' of query {query} lists an id twice")
    else:
        raise TypeError(
            f"'relevance' of query {query} must be a set or list of relevant ids or a mapping id -> grade; "
            f"got {type(entry).__name__}"
        )
    for doc, grade in judged.items():
        if isinstance(grade, bool) or not isinstance(grade, numbers.Real) or not np.isfinite(grade):
            raise ValueError(
                f"'relevance' grades must be finite numbers; got {grade!r} for id {doc!r} of query {query}"
            )
    return judged


def _from_python(rankings, relevance):
    """Sequences or mappings of Python ids -> (query ids, ranked codes, judged codes, grades)."""
    if isinstance(rankings, Mapping):
        if not isinstance(relevance, Mapping):
            raise TypeError("'relevance' must be a mapping query id -> judgements when 'rankings' is a mapping")
        missing = [q for q in rankings if q not in relevance]
        extra = [q for q in relevance if q not in rankings]
        if missing or extra:
            parts = []
            if missing:
                parts.append(
                    f"{len(missing)} ranked quer{'y' if len(missing) == 1 else 'ies'} without relevance "
                    f"(first: {missing[0]!r})"
                )
            if extra:
                parts.append(
                    f"{len(extra)} judged quer{'y' if len(extra) == 1 else 'ies'} without a ranking "
                    f"(first: {extra[0]!r})"
                )
            raise ValueError(
                "'rankings' and 'relevance' must cover the same queries; got "
                + " and ".join(parts)
                + "; select the common queries first (trec_eval evaluates only queries in both)"
            )
        query_ids = list(rankings)
        lists = [rankings[q] for q in query_ids]
        judged = [relevance[q] for q in query_ids]
    else:
        lists, judged = list(rankings), list(relevance)
        if len(lists) != len(judged):
            raise ValueError(
                f"'relevance' must have one entry per query of 'rankings' ({len(lists)}); got {len(judged)}"
            )
        query_ids = None
    codes: dict = {}
    ranked_rows, judged_rows, grade_rows = [], [], []
    for i, (ranking, entry) in enumerate(zip(lists, judged, strict=True)):
        q = repr(query_ids[i]) if query_ids is not None else str(i)
        ids = _order_by_score(ranking) if isinstance(ranking, Mapping) else list(ranking)
        if len(set(ids)) != len(ids):
            seen = set()
            dup = next(d for d in ids if d in seen or seen.add(d))
            raise ValueError(f"'rankings' of query {q} lists id {dup!r} more than once")
        ranked_rows.append([codes.setdefault(d, len(codes)) for d in ids])
        j = _judgements(entry, q)
        judged_rows.append([codes.setdefault(d, len(codes)) for d in j])
        grade_rows.append(list(j.values()))
    return query_ids, _pad(ranked_rows, -1, np.int64), _pad(judged_rows, -1, np.int64), _pad(grade_rows, 0.0, float)


def _pad(rows, fill, dtype) -> np.ndarray:
    width = max((len(r) for r in rows), default=0)
    out = np.full((len(rows), max(width, 1)), fill, dtype=dtype)
    for i, r in enumerate(rows):
        out[i, : len(r)] = r
    return out


def _from_arrays(rankings: np.ndarray, relevance: np.ndarray, grades, pad):
    """2-D id arrays padded with ``pad`` (trailing) -> the same padded form, checked."""
    for name, arr in (("rankings", rankings), ("relevance", relevance)):
        if arr.ndim != 2 or arr.dtype.kind not in "iu":
            raise ValueError(
                f"'{name}' as an array must be 2-D integer ids (n_queries, length); got {arr.dtype} {arr.shape}"
            )
    if relevance.shape[0] != rankings.shape[0]:
        raise ValueError(
            f"'relevance' must have one row per query of 'rankings' ({rankings.shape[0]}); got {relevance.shape[0]}"
        )
    for name, arr in (("rankings", rankings), ("relevance", relevance)):
        filled = arr != pad
        gap = (filled[:, 1:] & ~filled[:, :-1]).any(axis=1)
        if gap.any():
            raise ValueError(
                f"'{name}' rows must put the pad value {pad} only at the end; row {int(np.flatnonzero(gap)[0])} "
                "has an id after it"
            )
        srt = np.sort(arr, axis=1)
        dup = (srt[:, 1:] == srt[:, :-1]) & (srt[:, 1:] != pad)
        if dup.any():
            row = int(np.flatnonzero(dup.any(axis=1))[0])
            raise ValueError(f"'{name}' of query {row} lists id {srt[row, 1:][dup[row]][0]} more than once")
    if grades is None:
        grade_arr = (relevance != pad).astype(float)
    else:
        grade_arr = np.asarray(_to_numpy(grades, "grades"), dtype=float)
        if grade_arr.shape != relevance.shape:
            raise ValueError(f"'grades' must have the shape of 'relevance' {relevance.shape}; got {grade_arr.shape}")
        if not np.isfinite(grade_arr[relevance != pad]).all():
            raise ValueError("'grades' must be finite")
        grade_arr = np.where(relevance != pad, grade_arr, 0.0)
    if pad == -1 and rankings.min() >= -1 and relevance.min(initial=0) >= -1:
        # -1 is the pad, every real id is >= 0: already the internal form, no copy
        ranked, judged = rankings.astype(np.int64, copy=False), relevance.astype(np.int64, copy=False)
    else:
        real_r, real_j = rankings != pad, relevance != pad
        low = min(rankings[real_r].min(initial=0), relevance[real_j].min(initial=0))
        # Internally -1 means "empty": move the real ids to >= 0 first, so that a real id of -1
        # (possible with another pad value) is not mistaken for padding.
        shift = -min(int(low), 0)
        ranked = np.where(real_r, rankings.astype(np.int64) + shift, -1)
        judged = np.where(real_j, relevance.astype(np.int64) + shift, -1)
    return ranked, judged, grade_arr


def _ranked_relevance(ranked, judged, grades, threshold) -> _kernels.Hits:
    """:class:`~embedeval._kernels.Hits` of padded rankings against padded judgements.

    Each judged id is looked up in its query's ranking (ids are distinct within a ranking, so
    it appears at most once), which gives an (n_queries, n_judged) array of ranks directly.
    """
    n, length = ranked.shape
    rank_of = np.full(judged.shape, np.inf)
    rows_per_block = max(1, _budget.RANKING_ELEMENTS // length)
    for j in range(judged.shape[1]):
        column = judged[:, j : j + 1]
        for s in range(0, n, rows_per_block):
            eq = ranked[s : s + rows_per_block] == column[s : s + rows_per_block]
            pos = eq.argmax(axis=1)
            found = eq[np.arange(eq.shape[0]), pos] & (column[s : s + rows_per_block, 0] != -1)
            rank_of[s : s + rows_per_block, j] = np.where(found, pos + 1.0, np.inf)
    order = np.argsort(rank_of, axis=1, kind="stable")
    rank_sorted = np.take_along_axis(rank_of, order, 1)
    rows, cols = np.nonzero(np.isfinite(rank_sorted))  # by query, then by rank
    return judged_hits(
        rows, rank_sorted[rows, cols], np.take_along_axis(grades, order, 1)[rows, cols], n, threshold, grades
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
) -> EvaluationResult:
    r"""Evaluate ranked result lists against relevance judgements (the IR and tutorial form).

    Parameters
    ----------
    rankings : sequence of sequences, mapping, or array-like of shape (n_queries, length)
        Per query, the retrieved ids best first. A mapping ``{query_id: ids}`` (or
        ``{query_id: {id: score}}``, a pytrec_eval run, sorted by score with trec_eval's tie rule)
        keys the queries; a 2-D integer array is padded at the end of each row with ``pad``.
        An id may appear once per query.
    relevance : sequence, mapping, or array-like of shape (n_queries, n_judged)
        Per query, a set or list of relevant ids (grade 1), or a mapping ``{id: grade}``; a
        mapping of those by query id when ``rankings`` is a mapping (both must cover the same
        queries); a 2-D integer array of relevant ids padded with ``pad`` (grades from ``grades``).
    metrics : str or sequence of str
        Any of ``precision@k``, ``recall@k`` (trec_eval), ``capped_recall@k``, ``hit_rate@k``,
        ``f1@k``, ``r_precision``, ``map@r``, ``map[@k]``, ``map_hits@k``, ``mrr[@k]``,
        ``ndcg[@k]``, ``ndcg_exp[@k]``, ``dcg[@k]``, ``dcg_exp[@k]``, ``cg[@k]``.
    threshold : float
        Grade at which a judged item counts as relevant for the binary metrics (trec_eval's
        relevance level, default 1).
    grades : array-like of shape (n_queries, n_judged), optional
        Grades of the ids in an array ``relevance``.
    pad : int
        The filler value of array inputs.
    empty : {"skip", "zero"}
        Queries with no relevant item: skipped (NaN, counted, not averaged) or scored 0 and
        averaged, as trec_eval does.

    Returns
    -------
    EvaluationResult
        ``per_query`` in the order of the queries (``config["query_ids"]`` for mappings).

    Notes
    -----
    R is the number of judged items with grade >= ``threshold``. Cutoffs beyond a ranking's
    length count the missing ranks as not relevant. Metrics without a cutoff use the whole
    given ranking; relevant items never retrieved add nothing to AP but count in R.
    nDCG uses DCG@k = :math:`\sum_{i \le k} g(rel_i)/\log_2(i+1)` with g linear (``ndcg``, as
    trec_eval's ndcg_cut) or :math:`2^{rel}-1` (``ndcg_exp``), over the ideal DCG@k of all judged
    grades sorted in decreasing order.

    Examples
    --------
    >>> import embedeval
    >>> r = embedeval.evaluate_rankings([[3, 1, 2]], [{1, 5}], metrics=["precision@2", "recall@2", "mrr"])
    >>> r.summary
    {'precision@2': 0.5, 'recall@2': 0.5, 'mrr': 0.5}
    """
    parsed = parse_metrics(metrics, RANKINGS)
    threshold = check_threshold(threshold)
    check_choice(empty, "empty", ("skip", "zero"))
    query_ids = None
    is_array = lambda x: not isinstance(x, (Mapping, list, tuple)) and hasattr(x, "__array__")  # noqa: E731
    if is_array(rankings) and is_array(relevance):
        ranked, judged, grade_arr = _from_arrays(
            _to_numpy(rankings, "rankings"), _to_numpy(relevance, "relevance"), grades, pad
        )
    else:
        if is_array(rankings):  # an id array with per-query judgements: read rows up to the pad
            rankings = [[d for d in row if d != pad] for row in _to_numpy(rankings, "rankings").tolist()]
        if grades is not None:
            raise ValueError("'grades' goes with array 'relevance'; give grades as {id: grade} mappings otherwise")
        query_ids, ranked, judged, grade_arr = _from_python(rankings, relevance)
    if ranked.shape[0] == 0:
        raise ValueError("'rankings' must hold at least one query; got none")
    return finish(
        parsed,
        _ranked_relevance(ranked, judged, grade_arr, threshold),
        empty,
        conventions(threshold, empty, TIE_RULE),
        {"input": "rankings", "threshold": threshold, "max_length": int(ranked.shape[1])},
        query_ids,
    )
