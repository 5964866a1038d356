"""The systems to compare, read into arrays: per system, its runs' per-query values.

A system is given as an evaluation result (anything with a ``per_query`` dict), a mapping
``{metric: per-query values}``, a 1-D array of per-query values (metric ``"value"``), or a list
of those: its runs (seeds, folds). Queries are paired by position, or by id where every result
carries its query ids (``config["query_ids"]``, as the ranked-list evaluators record them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Systems:
    """Per-query values ready to compare.

    Attributes
    ----------
    names : list of str
    metrics : list of str
    runs : list of numpy.ndarray of shape (n_runs, n_queries, n_metrics)
        Per system; only the queries every system and run evaluated (finite in every metric).
    n_given : int
        Queries given before that restriction.
    positions : numpy.ndarray of shape (n_queries,) or None
        The compared queries' positions among those given (the first system's order).
    left_out : dict of str to int
        Why the other queries were left out: for each, the reason the first result (system and
        run, in order) that skipped it gives, or "not evaluated (NaN) by every system and run"
        where no result says; with the count of queries.
    zero_hint : bool
        Whether some query was left out for having no relevant item by a result that could
        have scored it 0 (``empty='zero'``, trec_eval's convention).
    """

    names: list[str]
    metrics: list[str]
    runs: list[np.ndarray]
    n_given: int
    positions: np.ndarray | None = None
    left_out: dict = field(default_factory=dict)
    zero_hint: bool = False

    @property
    def run_means(self) -> np.ndarray:
        """Each system's per-query values averaged over its runs: (n_systems, n_queries, n_metrics)."""
        return np.stack([r.mean(axis=0) for r in self.runs])

    @property
    def n_queries(self) -> int:
        return self.runs[0].shape[1]


def system_name(i: int) -> str:
    """The name of the i-th system given without one: ``"A"``, ``"B"``, ... ``"Z"``, ``"S27"``, ..."""
    return chr(ord("A") + i) if i < 26 else f"S{i + 1}"


def index_pairs(names: list[str], baseline, every: bool) -> list[tuple[int, int]]:
    """The (a, b) positions of the pairs compared: every pair (a < b) with ``every``, else each
    other system against ``baseline`` (default: the first); ``baseline`` must name a system."""
    if baseline is not None and baseline not in names:
        raise ValueError(f"'baseline' must name one of the systems {names}; got {baseline!r}")
    if every:
        return [(i, j) for i in range(len(names)) for j in range(i + 1, len(names))]
    b = names.index(baseline) if baseline is not None else 0
    return [(b, j) for j in range(len(names)) if j != b]


def _as_named(systems) -> list[tuple[str, object]]:
    if isinstance(systems, Mapping):
        items = [(str(k), v) for k, v in systems.items()]
    elif isinstance(systems, Sequence) and not isinstance(systems, str):
        items = [(system_name(i), v) for i, v in enumerate(systems)]
    else:
        raise TypeError(
            f"'systems' must be a mapping {{name: result or per-query values}} or a list of them; "
            f"got {type(systems).__name__}"
        )
    if len(items) < 2:
        raise ValueError(f"'systems' must hold at least 2 systems to compare; got {len(items)}")
    return items


def _one_run(name: str, value) -> tuple[dict[str, np.ndarray], list | None, set]:
    """({metric: float64 array}, query ids or None, set-level metric names) of one run."""
    if hasattr(value, "per_query"):
        ids = (getattr(value, "config", None) or {}).get("query_ids")
        return dict(value.per_query), (list(ids) if ids is not None else None), set(value.set_metrics)
    if isinstance(value, Mapping):
        return dict(value), None, set()
    arr = np.asarray(value)
    if arr.ndim == 1 and arr.dtype.kind in "biuf":
        return {"value": arr}, None, set()
    raise TypeError(
        f"'systems' entry {name!r} must be an evaluation result, a mapping {{metric: per-query values}}, "
        f"a 1-D array or a list of those (runs); got {type(value).__name__}"
        + (f" of shape {arr.shape}" if arr.dtype.kind in "biuf" else "")
    )


def _runs_of(name: str, value) -> list:
    if isinstance(value, (list, tuple)) and value and not np.isscalar(value[0]):
        return list(value)
    if isinstance(value, (list, tuple)) and not value:
        raise ValueError(f"'systems' entry {name!r} must hold at least one run; got an empty list")
    return [value]


def _common_metrics(read: list, metrics) -> list[str]:
    whole = set().union(*(s for _, _, _, s in read))
    if metrics is None:
        first = read[0][2]
        names = [m for m in first if all(m in r for _, _, r, _ in read) and m not in whole]
        if not names:
            raise ValueError("'systems' share no per-query metric: every system needs the metrics compared")
        return names
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("'metrics' must name at least one metric; got an empty list")
    level = [m for m in names if m in whole]
    if level:
        raise ValueError(
            f"'metrics': {level} are set-level (one number per evaluation); a paired comparison needs per-query values"
        )
    for name, run, values, _ in read:
        missing = [m for m in names if m not in values]
        if missing:
            raise ValueError(f"'metrics': {missing} missing from system {name!r} (run {run}); it has {list(values)}")
    return names


def read_systems(systems, metrics=None) -> Systems:
    """:class:`Systems` from the ``systems`` and ``metrics`` arguments of ``compare_systems``."""
    read, id_lists, results = [], [], []
    for name, value in _as_named(systems):
        for r, run in enumerate(_runs_of(name, value)):
            values, ids, whole = _one_run(name, run)
            read.append((name, r, values, whole))
            id_lists.append(ids)
            results.append(run)
    names = _common_metrics(read, metrics)
    order = _id_order(read, id_lists)
    arrays = {}
    n_given = None
    for (name, r, values, _), pick in zip(read, order, strict=True):
        cols = []
        for m in names:
            v = np.asarray(values[m], dtype=np.float64)
            if v.ndim != 1:
                raise ValueError(
                    f"'systems' entry {name!r} (run {r}), metric {m!r}: "
                    f"per-query values must be 1-D; got shape {v.shape}"
                )
            cols.append(v if pick is None else v[pick])
        block = np.column_stack(cols)
        if n_given is None:
            n_given = block.shape[0]
        if block.shape[0] != n_given:
            raise ValueError(
                f"'systems' must cover the same queries (paired by position): {name!r} (run {r}) has "
                f"{block.shape[0]} per-query values, the first system {n_given}"
            )
        if np.isinf(block).any():
            raise ValueError(
                f"'systems' entry {name!r} (run {r}) holds an infinite "
                "per-query value; values must be finite or NaN (skipped)"
            )
        arrays.setdefault(name, []).append(block)
    runs = [np.stack(v) for v in arrays.values()]
    keep = ~np.any([np.isnan(r).any(axis=(0, 2)) for r in runs], axis=0)
    if not keep.any():
        raise ValueError("'systems': no query was evaluated by every system and run (each has a NaN somewhere)")
    left_out, zero_hint = _left_out(results, order, ~keep)
    return Systems(
        list(arrays), names, [r[:, keep] for r in runs], int(n_given), np.flatnonzero(keep), left_out, zero_hint
    )


_NOT_EVALUATED = "not evaluated (NaN) by every system and run"


def _left_out(results: list, order: list, dropped: np.ndarray) -> tuple[dict[str, int], bool]:
    """(``{reason: count}``, zero hint) of the ``dropped`` queries, from the results' skip codes."""
    why = np.full(dropped.size, None, dtype=object)
    zero_hint = False
    for result, pick in zip(results, order, strict=True):
        codes = getattr(result, "skip_codes", None)
        if codes is None:
            continue
        codes = np.asarray(codes) if pick is None else np.asarray(codes)[pick]
        keys = list(result.skipped)
        fresh = dropped & (why == None) & (codes >= 0)  # noqa: E711 (elementwise on objects)
        for q in np.flatnonzero(fresh):
            key = keys[codes[q]]
            why[q] = result.skipped.reasons.get(key, key)
            zero = result.conventions.get("queries without relevant items", "").startswith("skipped")
            zero_hint |= zero and key in ("no_relevant", "relevant_ignored")
    counts: dict[str, int] = {}
    for reason in why[dropped]:
        counts[reason or _NOT_EVALUATED] = counts.get(reason or _NOT_EVALUATED, 0) + 1
    return counts, zero_hint


def _id_order(read: list, id_lists: list) -> list:
    """Per run, the positions that put its queries in the first run's id order (None: as given)."""
    if any(ids is None for ids in id_lists) or all(ids == id_lists[0] for ids in id_lists):
        return [None] * len(read)
    first = {q: i for i, q in enumerate(id_lists[0])}
    out = []
    for (name, r, _, _), ids in zip(read, id_lists, strict=True):
        if len(ids) != len(first) or set(ids) != first.keys():
            extra = len(set(ids) - first.keys())
            raise ValueError(
                f"'systems' must cover the same queries: {name!r} (run {r}) has {len(ids)} query ids, "
                f"{extra} not in the first system's {len(first)}; evaluate every run on the same queries "
                "(complete=True / trec_eval -c scores a query without a ranking as 0)"
            )
        pos = {q: i for i, q in enumerate(ids)}
        out.append(np.array([pos[q] for q in id_lists[0]], dtype=np.intp))
    return out
