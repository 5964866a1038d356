"""Assertions for test suites: retrieval quality, regressions against a baseline, embedding health.

Every assertion raises :class:`AssertionError` with a readable table and passes silently
otherwise, so it works the same in pytest, unittest or a plain script.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from . import _budget
from ._evaluate import evaluate
from ._inputs import _to_numpy, as_labels, encode_labels
from ._metrics import DEFAULT_EMBEDDING_METRICS, EMBEDDINGS, parse_metrics
from ._text import aligned_table, format_value
from .result import EvaluationResult

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


@dataclass(frozen=True)
class EmbeddingReport:
    """Health of an embedding matrix; ``problems`` are failures, ``notes`` are for information.

    Attributes
    ----------
    n, dim : int
    nonfinite_rows : int
        Rows with NaN or inf.
    effective_rank : float
        exp of the entropy of the normalised singular values of the centred matrix
        (Roy & Vetterli 2007): 1 for points on a line, ``dim`` for an isotropic cloud.
    duplicate_fraction : float
        Rows that exactly repeat an earlier row, over n.
    zero_rows : int
        All-zero rows (undefined under cosine distance).
    norm_min, norm_median, norm_max : float
        Of the row norms.
    singleton_classes : int
        Labels with one member (their queries are skipped in leave-one-out evaluation).
    """

    n: int
    dim: int
    nonfinite_rows: int
    effective_rank: float
    duplicate_fraction: float
    zero_rows: int
    norm_min: float
    norm_median: float
    norm_max: float
    n_classes: int | None = None
    singleton_classes: int | None = None
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def __str__(self) -> str:
        rows = [
            ["rows x dims", f"{self.n} x {self.dim}"],
            ["non-finite rows", str(self.nonfinite_rows)],
            ["effective rank", f"{self.effective_rank:.2f} of {min(self.n, self.dim)}"],
            ["exact duplicate rows", f"{self.duplicate_fraction:.2%}"],
            ["all-zero rows", str(self.zero_rows)],
            ["norm min / median / max", f"{self.norm_min:.4g} / {self.norm_median:.4g} / {self.norm_max:.4g}"],
        ]
        if self.n_classes is not None:
            rows.append(["classes (of one member)", f"{self.n_classes} ({self.singleton_classes})"])
        text = aligned_table(["check", "value"], rows, rule="columns")
        text += "".join(f"\nPROBLEM: {p}" for p in self.problems) + "".join(f"\nnote: {n}" for n in self.notes)
        return text


def _effective_rank(x: np.ndarray) -> float:
    """From the eigenvalues of the d x d scatter matrix, accumulated in float64 blocks."""
    mean = x.mean(axis=0, dtype=np.float64)
    scatter = np.zeros((x.shape[1], x.shape[1]))
    for start in range(0, x.shape[0], _budget.SCAN_ROWS):
        block = x[start : start + _budget.SCAN_ROWS].astype(np.float64) - mean
        scatter += block.T @ block
    singular = np.sqrt(np.clip(np.linalg.eigvalsh(scatter), 0.0, None))
    total = singular.sum()
    if total <= 1e-12 * max(1.0, float(np.abs(mean).max(initial=0.0))):
        return 0.0  # every row equal: no direction at all
    p = singular[singular > 0] / total
    return float(np.exp(-(p * np.log(p)).sum()))


def check_embeddings(
    embeddings,
    labels=None,
    *,
    min_effective_rank: float = 0.05,
    max_duplicate_fraction: float = 0.05,
) -> EmbeddingReport:
    """The health checks people forget, as a report (nothing is raised for bad embeddings).

    Parameters
    ----------
    embeddings : array-like of shape (n, d)
    labels : array-like of shape (n,), optional
        Adds the class counts and singleton classes.
    min_effective_rank : float
        Below this fraction of min(n, d) (and always below 1.5, a line), the effective rank is
        reported as dimensional collapse.
    max_duplicate_fraction : float
        Above this fraction of exact duplicate rows, duplicates are reported as a problem.

    Returns
    -------
    EmbeddingReport
    """
    x = _to_numpy(embeddings, "embeddings")
    if x.ndim != 2 or x.shape[0] == 0 or x.dtype.kind not in "biuf":
        raise ValueError(f"'embeddings' must be a non-empty 2-D array of numbers; got {x.dtype} {x.shape}")
    finite_rows = np.isfinite(x).all(axis=1)
    problems, notes = [], []
    n_bad = int((~finite_rows).sum())
    if n_bad:
        problems.append(f"{n_bad} row(s) contain NaN or inf (first: row {int(np.flatnonzero(~finite_rows)[0])})")
    good = np.asarray(x[finite_rows], dtype=np.float32)
    norms = np.linalg.norm(good, axis=1) if good.size else np.zeros(1)
    eff = _effective_rank(good) if good.shape[0] else 0.0
    # Points on a line (effective rank ~1) are collapse whatever the dimension.
    limit = max(1.5, min_effective_rank * min(good.shape[0], x.shape[1])) if min(good.shape[0], x.shape[1]) > 1 else 0
    if good.shape[0] > 1 and eff == 0.0:
        problems.append("collapsed: every embedding is the same vector")
    elif good.shape[0] > 1 and eff < limit:
        problems.append(
            f"dimensional collapse: effective rank {eff:.2f} < {limit:.2f} "
            f"(the larger of 1.5 and {min_effective_rank:g} x min(n, d) = {min(good.shape[0], x.shape[1])})"
        )
    _, first = np.unique(good, axis=0, return_index=True) if good.size else (None, np.zeros(0))
    dup = 1.0 - first.size / good.shape[0] if good.shape[0] else 0.0
    if dup > max_duplicate_fraction:
        problems.append(f"{dup:.1%} of rows exactly repeat another row (more than {max_duplicate_fraction:.0%})")
    elif dup > 0:
        notes.append(f"{dup:.2%} of rows exactly repeat another row")
    zero_rows = int((norms == 0).sum())
    if zero_rows:
        notes.append(f"{zero_rows} all-zero row(s): undefined under cosine distance")
    n_classes = singletons = None
    if labels is not None:
        _, (codes,) = encode_labels(as_labels(labels, x.shape[0]))
        counts = np.bincount(codes)
        n_classes, singletons = int(counts.size), int((counts == 1).sum())
        if singletons:
            notes.append(f"{singletons} class(es) with a single member: their queries are skipped (R = 0)")
    return EmbeddingReport(
        n=int(x.shape[0]),
        dim=int(x.shape[1]),
        nonfinite_rows=n_bad,
        effective_rank=eff,
        duplicate_fraction=dup,
        zero_rows=zero_rows,
        norm_min=float(norms.min()) if norms.size else 0.0,
        norm_median=float(np.median(norms)) if norms.size else 0.0,
        norm_max=float(norms.max()) if norms.size else 0.0,
        n_classes=n_classes,
        singleton_classes=singletons,
        problems=problems,
        notes=notes,
    )


def assert_healthy_embeddings(embeddings, labels=None, **thresholds) -> EmbeddingReport:
    """Assert that :func:`check_embeddings` finds no problem; the message is the whole report."""
    report = check_embeddings(embeddings, labels, **thresholds)
    if not report.ok:
        raise AssertionError(f"unhealthy embeddings ({len(report.problems)} problem(s)):\n{report}")
    return report
