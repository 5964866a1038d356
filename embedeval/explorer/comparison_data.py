"""The explorer's data for a comparison of systems (:func:`embedeval.stats.compare_systems`).

Every compared query's value per system and metric (run means) is kept: n_systems x n_queries x
n_metrics numbers, a few MB for 100,000 queries. The page draws the scatter of each pair from
them (points at the same place, to 0.01, drawn once and sized by their count) and lists the
queries with the largest differences; Python computes the summary, intervals, tests, win/tie/loss
and rank intervals (the comparison itself).
"""

from __future__ import annotations


def check_query_ids(comparison, query_ids) -> list | None:
    """``query_ids`` as a list of one id per query given to the comparison (``n_given``), or None."""
    if query_ids is None:
        return None
    ids = list(query_ids)
    if len(ids) != comparison.n_given:
        raise ValueError(
            f"'query_ids' must give one id per query given to the comparison ({comparison.n_given:,}); got {len(ids):,}"
        )
    return ids


def comparison_data(comparison, title: str = "", query_ids=None, legend=None) -> dict:
    """Everything the comparison page draws, as JSON-ready values.

    ``legend`` (``{what: how}``, as the command line's tables print it) names each p-value and the
    rule that decides "significant"; the page lists it under the pairs."""
    query_ids = check_query_ids(comparison, query_ids)
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
        "legend": legend,
        "p_columns": p_columns(comparison, legend),
        "decides": "p_tukey" if any(r["p_tukey"] is not None for r in comparison.pairs) else "p_adjusted",
        "queries": queries,
    }


TUKEY = "p (Tukey HSD)"


def p_columns(comparison, legend) -> list[list[str]]:
    """``[key in a pair, column title]`` of every p-value the pairs hold, named as the legend
    names them (``p``, ``p (Holm)``, ``p (Tukey HSD)`` where all pairs are compared)."""
    named = [k for k in (legend or {}) if k.startswith("p (") and k != TUKEY]
    out = [["p_value", "p"], ["p_adjusted", named[0] if named else "p (adjusted)"]]
    if any(r["p_tukey"] is not None for r in comparison.pairs):
        out.append(["p_tukey", TUKEY])
    return out
