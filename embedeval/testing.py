"""Assertions for test suites: retrieval quality, regressions against a baseline, embedding health.

Every assertion raises :class:`AssertionError` with a readable table and passes silently
otherwise, so it works the same in pytest, unittest or a plain script. The health checks
(:func:`check_embeddings`, :class:`EmbeddingReport`) live in ``embedeval._inputs.health``.
"""

from __future__ import annotations

import json
import math
import os
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from ._core.text import aligned_table, format_value
from ._embeddings.evaluate import evaluate
from ._inputs.health import EmbeddingReport, check_embeddings
from ._metrics.registry import DEFAULT_EMBEDDING_METRICS, EMBEDDINGS, parse_metrics
from .result import EvaluationResult

__all__ = [
    "EmbeddingReport",
    "assert_healthy_embeddings",
    "assert_no_regression",
    "assert_retrieval_quality",
    "check_embeddings",
    "save_baseline",
]

UPDATE_ENV = "EMBEDEVAL_UPDATE_BASELINE"


def _evaluate_or_fail(embeddings, labels, metrics, **kwargs) -> EvaluationResult:
    """evaluate(), turning non-finite embeddings (a model failure, not a usage error) into a failure."""
    try:
        return evaluate(embeddings, labels, metrics=metrics, **kwargs)
    except ValueError as exc:
        if "must be finite" in str(exc):
            raise AssertionError(f"cannot evaluate the embeddings: {exc}") from exc
        raise


def assert_retrieval_quality(
    embeddings,
    labels,
    at_least: dict[str, float],
    *,
    reference=None,
    reference_labels=None,
    distance: str = "euclidean",
    macro: bool = False,
) -> EvaluationResult:
    """Assert that each metric reaches its threshold.

    Parameters
    ----------
    embeddings, labels, reference, reference_labels, distance
        As in :func:`embedeval.evaluate`.
    at_least : dict of str to float
        Metric name -> lowest acceptable value, e.g. ``{"map@r": 0.4, "precision@1": 0.9}``.
    macro : bool
        Compare the macro average (mean of class means) instead of the micro average.

    Returns
    -------
    EvaluationResult
        When every metric passes.

    Raises
    ------
    AssertionError
        Listing every metric with its value, threshold and PASS/FAIL.
    """
    if not at_least:
        raise ValueError("'at_least' must name at least one metric and its threshold; got an empty mapping")
    thresholds = _by_canonical_name(at_least, "at_least")
    result = _evaluate_or_fail(
        embeddings, labels, list(thresholds), reference=reference, reference_labels=reference_labels, distance=distance
    )
    values = result.per_class.macro if macro else result.summary
    rows, failed = [], 0
    for name, threshold in thresholds.items():
        value = values[name]
        ok = not math.isnan(value) and value >= threshold
        failed += not ok
        rows.append([name, format_value(value), f">= {threshold:g}", "pass" if ok else "FAIL"])
    if failed:
        kind = "macro average" if macro else "micro average"
        raise AssertionError(
            f"retrieval quality below threshold for {failed} of {len(rows)} metric(s) ({kind}, "
            f"{result.n_evaluated} of {result.n_queries} queries evaluated):\n"
            + aligned_table(["metric", "value", "threshold", "result"], rows, rule="columns")
        )
    return result


def _by_canonical_name(values: dict, what: str) -> dict[str, float]:
    """``{metric name: number}`` keyed by canonical names ("MAP@R" -> "map@r"); unknown names,
    two keys for one metric and values that are not real numbers raise, naming ``what``."""
    if not isinstance(values, dict):
        raise TypeError(f"'{what}' must be a dict of metric name to number; got {type(values).__name__}")
    out: dict[str, float] = {}
    for key, value in values.items():
        try:
            (metric,) = parse_metrics([key], EMBEDDINGS)
        except (ValueError, TypeError) as exc:
            raise ValueError(f"'{what}' has a key that is not a metric name: {exc}") from None
        if metric.name in out:
            raise ValueError(f"'{what}' names {metric.name!r} twice (keys are read as metric names); got {key!r}")
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"'{what}' values must be numbers; got {value!r} for {key!r}")
        out[metric.name] = float(value)
    return out


def _allowed_drops(tolerance, compared: list[str]) -> dict[str, float]:
    """The largest allowed drop of each compared metric: one number for all, or per metric
    (dict keys read as metric names; a compared metric missing from the dict allows none)."""
    if isinstance(tolerance, dict):
        drops = _by_canonical_name(tolerance, "tolerance")
        unknown = [name for name in drops if name not in compared]
        if unknown:
            raise ValueError(
                f"'tolerance' names metric(s) {unknown} that are not compared; compared: {compared} "
                "(set them with 'metrics' or in the baseline)"
            )
        drops = {name: drops.get(name, 0.0) for name in compared}
    elif isinstance(tolerance, bool) or not isinstance(tolerance, (int, float, np.integer, np.floating)):
        raise TypeError(f"'tolerance' must be a number or a dict of metric name to number; got {tolerance!r}")
    else:
        drops = dict.fromkeys(compared, float(tolerance))
    bad = {name: v for name, v in drops.items() if not v >= 0}
    if bad:
        raise ValueError(f"'tolerance' must be >= 0 (an allowed drop); got {bad}")
    return drops


def save_baseline(result: EvaluationResult, path) -> Path:
    """Write a result's summary to a JSON baseline file (metrics, settings, version, date)."""
    from . import __version__

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "metrics": result.summary,
        "config": {k: v for k, v in result.config.items() if isinstance(v, (str, int, float))},
        "embedeval": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }
    path.write_text(json.dumps(payload, indent=2, sort_keys=True) + "\n")
    return path


def assert_no_regression(
    embeddings,
    labels,
    baseline,
    *,
    tolerance: float | dict[str, float] = 0.01,
    metrics=None,
    update: bool = False,
    **evaluate_kwargs,
) -> EvaluationResult:
    """Assert that no metric dropped more than ``tolerance`` below a stored baseline.

    Parameters
    ----------
    baseline : str or Path
        A JSON file written by :func:`save_baseline` (or by this function with ``update``).
    tolerance : float or dict of str to float
        The largest allowed drop (absolute), for all metrics or per metric. Improvements always
        pass. Dict keys are metric names read like ``metrics`` (``"MAP@R"`` is ``"map@r"``); a
        key that is no metric, or a metric that is not compared, raises ValueError, and a
        compared metric missing from the dict allows no drop.
    metrics : sequence of str, optional
        Default: the metrics stored in the baseline, or, when a baseline is created (``update``)
        and none exists yet, the default metrics of :func:`embedeval.evaluate`
        (precision@1, r_precision, map@r).
    update : bool
        Write the current values as the new baseline and pass. Setting the environment
        variable ``EMBEDEVAL_UPDATE_BASELINE=1`` does the same, for a whole test run.
    **evaluate_kwargs
        ``reference``, ``reference_labels``, ``distance``, as in :func:`embedeval.evaluate`.

    Raises
    ------
    AssertionError
        If a metric dropped too far (a table of baseline, current, change, allowed drop), or if
        the baseline file does not exist (it is never created silently: a missing baseline in CI
        would otherwise pass forever).
    """
    path = Path(baseline)
    update = update or os.environ.get(UPDATE_ENV, "") not in ("", "0")
    stored = None
    if path.exists():
        stored = json.loads(path.read_text())["metrics"]
    elif not update:
        raise AssertionError(
            f"no baseline at {path}; create it once with update=True or {UPDATE_ENV}=1, then commit it"
        )
    if metrics is not None:
        names = [m.name for m in parse_metrics(metrics, EMBEDDINGS)]
    else:
        names = list(stored) if stored is not None else list(DEFAULT_EMBEDDING_METRICS)
    drops = _allowed_drops(tolerance, names)  # checked before the evaluation, and before an update
    result = _evaluate_or_fail(embeddings, labels, names, **evaluate_kwargs)
    if update:
        save_baseline(result, path)
        return result
    rows, failed = [], 0
    for name, value in result.summary.items():
        allowed = drops[name]
        if name not in stored:
            rows.append([name, "-", format_value(value), "-", f"{allowed:g}", "new (not in baseline)"])
            continue
        change = value - stored[name]
        ok = not math.isnan(value) and change >= -allowed
        failed += not ok
        verdict = "pass" if ok else "FAIL"
        rows.append([name, format_value(stored[name]), format_value(value), f"{change:+.4f}", f"{allowed:g}", verdict])
    if failed:
        raise AssertionError(
            f"{failed} metric(s) dropped below the baseline {path} by more than allowed:\n"
            + aligned_table(["metric", "baseline", "current", "change", "allowed drop", "result"], rows, rule="columns")
            + f"\n(if the drop is intended, update the baseline: update=True or {UPDATE_ENV}=1)"
        )
    return result


def assert_healthy_embeddings(embeddings, labels=None, **thresholds) -> EmbeddingReport:
    """Assert that :func:`check_embeddings` finds no problem; the message is the whole report."""
    report = check_embeddings(embeddings, labels, **thresholds)
    if not report.ok:
        raise AssertionError(f"unhealthy embeddings ({len(report.problems)} problem(s)):\n{report}")
    return report
