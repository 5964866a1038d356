"""A TREC run evaluated against preference judgements or judgement groups, by trec_eval 10's rules.

- queries: the judged queries that have a run, in the byte order of their ids; with
  ``complete``, every judged query (one without a run is an empty ranking);
- each query's ranking: score descending, then cut to its first ``max_retrieved`` documents
  (``-M``). Equal scores are ordered by document id, *ascending* for preferences and descending
  for judgement groups, each as trec_eval's code for that format does;
- preferences (``prefs``, ``qrels_prefs``): counted by :mod:`.prefs_counts`, then each measure's
  kernel (:mod:`embedeval._metrics.trec_prefs`); ``judged_only`` (``-J``) and the relevance level
  change nothing, as in trec_eval;
- judgement groups (``qrels_jg``): each (query, group) pair is one ranking against that group's
  grades (``judged_only`` removes, per group, the documents without a grade >= 0 and ranks the
  rest anew), and each measure averages the group values (:mod:`embedeval._metrics.trec_groups`).
"""

from __future__ import annotations

import numpy as np

from ..._metrics.trec_groups import GroupedHits
from ...result import EvaluationResult
from ..graded import Judged
from .evaluate import run_as_lists
from .lines import no_run_lines
from .prefs import Judgements, read_judgements
from .prefs_counts import count_preferences

FORMATS = ("prefs", "qrels_prefs", "qrels_jg")


def _queries(judgements: Judgements, rankings: dict, complete: bool) -> list[str]:
    queries = [q for q in judgements.queries() if complete or q in rankings]
    if not queries:
        raise ValueError(
            f"no query of the run appears in {judgements.path} ({len(rankings)} ranked queries, "
            f"{len(judgements.queries())} judged); check that both files use the same query ids"
        )
    return queries


def evaluate_judgements(
    run_path,
    judgements_path,
    layout: str,
    parsed,
    *,
    level: float = 1.0,
    complete: bool = False,
    max_retrieved: int | None = None,
    judged_only: bool = False,
) -> EvaluationResult:
    """The result of a run against a ``prefs``, ``qrels_prefs`` or ``qrels_jg`` file (rules
    above); ``parsed`` are registry metrics of the format's form. ``config["query_ids"]`` holds
    the evaluated queries in trec_eval's order."""
    judgements = read_judgements(judgements_path, layout)
    grouped = layout == "qrels_jg"
    rankings = run_as_lists(run_path, ascending_ids=not grouped, max_retrieved=max_retrieved)
    if not rankings:
        raise no_run_lines(run_path)
    queries = _queries(judgements, rankings, complete)
    if grouped:
        source = group_hits(judgements, rankings, queries, level, judged_only)
    else:
        source = count_preferences(judgements, rankings, queries)
    values = {m.name: np.asarray(m.values(source), dtype=np.float64) for m in parsed}
    conventions = {
        "judgements": f"trec_eval's {layout} format",
        "queries": "judged queries with a run" + (", and the others as empty rankings" if complete else ""),
        "ties": "equal scores ordered by document id, "
        + ("descending (trec_eval's qrels_jg rule)" if grouped else "ascending (trec_eval's preference rule)"),
        "average": "summary = mean over evaluated queries",
    }
    config = {
        "input": layout,
        "threshold": level if grouped else None,
        "complete": complete,
        "max_retrieved": max_retrieved,
        "judged_only": judged_only and grouped,
        "query_ids": queries,
    }
    return EvaluationResult.from_per_query(values, {m.name: m.definition for m in parsed}, conventions, config=config)


def group_hits(judgements: Judgements, rankings: dict, queries: list[str], level: float, judged_only: bool):
    """:class:`~embedeval._metrics.trec_groups.GroupedHits` of ``queries``: one row per (query,
    judgement group), groups in the byte order of their names."""
    grades: dict[tuple, dict] = {}
    for q, g, d, x in zip(judgements.query, judgements.group, judgements.doc, judgements.level, strict=True):
        grades.setdefault((q, g), {})[d] = x
    rows, ranks, found, judged_rows, judged_grades, n_ret, n_zero, query_of = ([] for _ in range(8))
    wanted = {q: i for i, q in enumerate(queries)}
    for row, (q, g) in enumerate(sorted((k for k in grades if k[0] in wanted), key=lambda k: (wanted[k[0]], k[1]))):
        grade = grades[q, g]
        ranked = rankings.get(q, [])
        if judged_only:
            ranked = [d for d in ranked if grade.get(d, -1.0) >= 0]
        for rank, d in enumerate(ranked, start=1):
            if d in grade:
                rows.append(row)
                ranks.append(float(rank))
                found.append(grade[d])
        positive = [x for x in grade.values() if x > 0]
        judged_rows += [row] * len(positive)
        judged_grades += positive
        n_ret.append(len(ranked))
        n_zero.append(sum(x == 0 for x in grade.values()))
        query_of.append(wanted[q])
    as_int = lambda v: np.asarray(v, dtype=np.int64)  # noqa: E731
    judged = Judged(
        len(query_of),
        as_int(rows),
        np.asarray(ranks, dtype=np.float64),
        np.asarray(found, dtype=np.float64),
        as_int(judged_rows),
        np.asarray(judged_grades, dtype=np.float64),
        n_retrieved=as_int(n_ret),
        n_zero=as_int(n_zero),
    )
    return GroupedHits(judged.hits(level, with_listing=False), as_int(query_of), len(queries))
