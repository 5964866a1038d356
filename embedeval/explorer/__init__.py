"""Look, don't read: one self-contained HTML page to explore an evaluation or a comparison.

:func:`write_page` (``result.explore(path)``) draws an :class:`~embedeval.result.EvaluationResult`:
the summary with intervals, definitions and skip counts; metric-by-k curves; the distribution of
per-query values; a sortable, filterable per-class table; every query's row, sortable by any
metric and filterable by class; clicking a row shows its neighbours (id, label or grade,
distance, relevant or not, thumbnails when ``images`` are given) and the rank of its first
relevant one; and the class pairs that take each other's top 1. Neighbours come from
``keep_neighbors=k`` (:func:`embedeval.evaluate`). :func:`write_comparison_page`
(``comparison.explore(path)``) draws a comparison of systems: values with intervals, rank
intervals, win/tie/loss and tests per pair, the per-query scatter of each pair and the queries
with the largest differences.

The page is one file: data as JSON, one small script and one stylesheet (this package's data
files ``explorer.js``, ``explorer.css``, ``template.html``), no framework, nothing fetched.
Python computes every number; the script only draws, sorts and filters. What is left out to
bound its size is said on the page (:mod:`embedeval.explorer.result_data` states the rule).

This package imports only the lower stages (:mod:`embedeval._metrics`), so the result and the
comparison can offer ``explore`` without an import cycle.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .comparison_data import comparison_data
from .page import render, write
from .result_data import MAX_DEPTH, PAGE_NEIGHBOURS, result_data

__all__ = ["MAX_DEPTH", "PAGE_NEIGHBOURS", "per_query_table", "render", "write_comparison_page", "write_page"]


def _image_list(images, n: int, name: str) -> list | None:
    if images is None:
        return None
    items = list(images)
    if len(items) != n:
        raise ValueError(f"'{name}' must give one image path or URL per row ({n}); got {len(items)}")
    return [str(v) for v in items]


def write_page(result, path, *, images=None, query_images=None, intervals=None, title: str = "") -> Path:
    """Write the explorer page of an evaluation to ``path`` and return it.

    Parameters
    ----------
    result : EvaluationResult
        Evaluated with ``keep_neighbors=k`` to show neighbours, curves and confusions.
    path : str or Path
        The ``.html`` file to write.
    images : sequence of str of length n_references, optional
        A thumbnail (file path, relative to the page, or URL) per reference row, shown next to
        the neighbours; in leave-one-out also per query.
    query_images : sequence of str of length n_queries, optional
        A thumbnail per query (default: ``images`` in leave-one-out).
    intervals : dict of str to Interval, optional
        Intervals of the summary (:func:`embedeval.stats.bootstrap`).
    title : str

    Returns
    -------
    pathlib.Path
    """
    n_references = result.config.get("n_references", result.config.get("n_corpus"))
    refs = _image_list(images, n_references if n_references is not None else len(list(images or [])), "images")
    if query_images is None and refs is not None and result.config.get("mode") == "leave-one-out":
        query_images = refs
    queries = _image_list(query_images, result.n_queries, "query_images")
    return write(result_data(result, intervals, refs, queries, title), path)


def write_comparison_page(comparison, path, *, title: str = "", query_ids=None, legend=None) -> Path:
    """Write the explorer page of a comparison of systems (:func:`embedeval.stats.compare_systems`).

    Parameters
    ----------
    comparison : SystemComparison
    path : str or Path
        The ``.html`` file to write.
    title : str
    query_ids : sequence of length ``comparison.n_given``, optional
        An id per query given to the comparison, shown instead of its position.
    legend : dict of str to str, optional
        How each number was made and what decides "significant" (``{what: how}``, the command
        line's legend); ``comparison.explore`` passes it.

    Returns
    -------
    pathlib.Path
    """
    return write(comparison_data(comparison, title, query_ids, legend), path)


def per_query_table(result) -> dict:
    """``{"columns": [...], "data": [[...], ...]}``: one row per query (its position, id, label,
    skip reason, then each per-query metric, None for skipped queries), in the form that
    ``wandb.Table(columns=..., data=...)`` and ``mlflow.log_table(data=dict(zip(columns, zip(*data))))`` take."""
    ids = result.config.get("query_ids")
    reasons = list(result.skipped.reasons.values())
    codes = result.skip_codes if result.skip_codes is not None else np.full(result.n_queries, -1)
    labels = None if result.query_labels is None else np.asarray(result.query_labels, dtype=object)
    columns = ["query", "query_id", "label", "skipped", *result.per_query]
    values = [v.tolist() for v in result.per_query.values()]
    data = []
    for i in range(result.n_queries):
        row = [i, None if ids is None else str(ids[i]), None if labels is None else _plain(labels[i])]
        row.append(reasons[codes[i]] if codes[i] >= 0 else None)
        row += [None if v[i] != v[i] else v[i] for v in values]
        data.append(row)
    return {"columns": columns, "data": data}


def _plain(value):
    return value.item() if isinstance(value, np.generic) else value
