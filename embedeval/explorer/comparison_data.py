"""The explorer's data for a comparison of systems (:func:`embedeval.stats.compare_systems`).

Every compared query's value per system and metric (run means) is kept: n_systems x n_queries x
n_metrics numbers, a few MB for 100,000 queries. The page draws the scatter of each pair from
them (points at the same place, to 0.01, drawn once and sized by their count) and lists the
queries with the largest differences; Python computes the summary, intervals, tests, win/tie/loss
and rank intervals (the comparison itself).
"""

from __future__ import annotations


def comparison_data(comparison, title: str = "", query_ids=None) -> dict:
    """Everything the comparison page draws, as JSON-ready values."""
    values = getattr(comparison, "query_values", None)
    positions = getattr(comparison, "query_positions", None)
    queries = None
    if values is not None:
        queries = {
            "values": {
                s: {m: values[i, :, j] for j, m in enumerate(comparison.metrics)}
                for i, s in enumerate(comparison.systems)
            },
            "positions": positions,
            "ids": None if query_ids is None or positions is None else [str(query_ids[p]) for p in positions.tolist()],
        }
    return {
        "kind": "comparison",
        "title": title or "embedeval comparison",
        "systems": comparison.systems,
        "metrics": comparison.metrics,
        "n_runs": comparison.n_runs,
        "n_queries": comparison.n_queries,
        "n_given": comparison.n_given,
        "values": comparison.values,
        "intervals": comparison.intervals,
        "ranks": comparison.ranks,
        "pairs": comparison.pairs,
        "settings": {
            k: v if isinstance(v, (int, float, str, bool, type(None))) else str(v)
            for k, v in comparison.settings.items()
        },
        "notes": comparison.notes,
        "queries": queries,
    }
