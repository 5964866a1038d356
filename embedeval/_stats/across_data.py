"""The systems and datasets to compare across, read into arrays.

Two forms: a table of scores (one number per dataset and system), or per-query values per dataset
and system (evaluation results, ``{metric: per-query values}`` mappings or 1-D arrays), from which
each dataset's score is the mean over the queries every system evaluated (paired by position, or by
query id where the results record them, as :func:`embedeval.stats.compare_systems` pairs them).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .systems import read_systems, system_name


@dataclass(frozen=True)
class Across:
    """Scores of every system on every dataset, and the per-query values behind them where given.

    Attributes
    ----------
    systems, datasets : list of str
    scores : array of shape (n_datasets, n_systems)
    per_query : list of arrays of shape (n_queries_t, n_systems), or None
        Per dataset, the values of the queries every system evaluated.
    metric : str or None
        The per-query metric compared (None for a table of scores).
    n_given : list of int, or None
        Per dataset, the queries given before keeping those every system evaluated.
    """

    systems: list[str]
    datasets: list[str]
    scores: np.ndarray
    per_query: list[np.ndarray] | None
    metric: str | None
    n_given: list[int] | None


def _is_score(value) -> bool:
    if isinstance(value, np.ndarray):
        return value.ndim == 0
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _names(count: int, given, what: str, default) -> list[str]:
    if given is None:
        return [default(i) for i in range(count)]
    names = [str(n) for n in given]
    if len(names) != count or len(set(names)) != count:
        raise ValueError(f"'{what}' must hold {count} distinct names, one per {what[:-1]}; got {list(given)!r}")
    return names


def _from_array(data, systems, datasets) -> Across:
    table = np.asarray(data, dtype=np.float64)
    if table.ndim != 2:
        raise ValueError(
            f"'data' given as an array must be 2-D, (n_datasets, n_systems) of scores; got shape {table.shape}"
        )
    names = _names(table.shape[1], systems, "systems", system_name)
    sets = _names(table.shape[0], datasets, "datasets", lambda i: f"D{i + 1}")
    return _checked(Across(names, sets, table, None, None, None))


def _complete(data: Mapping) -> tuple[list[str], list[str]]:
    """(datasets, systems in the first dataset's order); every dataset must hold every system."""
    sets = [str(k) for k in data]
    if not sets:
        raise ValueError("'data' must hold at least 2 datasets; got none")
    first = next(iter(data.values()))
    if not isinstance(first, Mapping):
        raise TypeError(
            f"'data' must map each dataset to {{system: score or per-query values}}; "
            f"dataset {sets[0]!r} holds a {type(first).__name__}"
        )
    names = [str(s) for s in first]
    problems = []
    for d, row in data.items():
        if not isinstance(row, Mapping):
            raise TypeError(f"'data' dataset {str(d)!r} must be a mapping {{system: value}}; got {type(row).__name__}")
        have = {str(s) for s in row}
        missing, extra = [s for s in names if s not in have], sorted(have - set(names))
        if missing or extra:
            problems.append(f"{str(d)!r} lacks {missing} and adds {extra}" if extra else f"{str(d)!r} lacks {missing}")
    if problems:
        raise ValueError(
            f"'data' must give every system on every dataset (Friedman's test needs complete blocks): "
            f"the first dataset has {names}; " + "; ".join(problems)
        )
    return sets, names


def _pick_metric(table: dict, metric) -> str:
    """The per-query metric to compare: ``metric``, or the only one every system holds."""
    if metric is not None:
        return str(metric)
    common = None
    for row in table.values():
        for value in row.values():
            if hasattr(value, "per_query"):
                have = [m for m in value.per_query if m not in getattr(value, "set_metrics", ())]
            elif isinstance(value, Mapping):
                have = list(value)
            else:
                have = ["value"]
            common = have if common is None else [m for m in common if m in have]
    if not common or len(common) > 1:
        raise ValueError(f"'metric' must name the per-query metric to compare; the systems share {common or []}")
    return common[0]


def read_across(data, *, metric=None, systems=None, datasets=None) -> Across:
    """:class:`Across` from the arguments of ``compare_across``."""
    if not isinstance(data, Mapping):
        return _from_array(data, systems, datasets)
    if systems is not None or datasets is not None:
        raise ValueError("'systems' and 'datasets' name the rows and columns of an array; a mapping names its own")
    sets, names = _complete(data)
    table = {d: {str(s): v for s, v in row.items()} for d, row in zip(sets, data.values(), strict=True)}
    kinds = {_is_score(v) for row in table.values() for v in row.values()}
    if kinds == {True}:
        scores = np.array([[float(table[d][s]) for s in names] for d in sets])
        return _checked(Across(names, sets, scores, None, None, None))
    if kinds != {False}:
        raise ValueError("'data' mixes scores (numbers) with per-query values; give one form for every cell")
    metric = _pick_metric(table, metric)
    per_query, n_given = [], []
    for d in sets:
        try:
            read = read_systems({s: table[d][s] for s in names}, [metric])
        except (ValueError, TypeError) as exc:
            raise type(exc)(f"dataset {d!r}: {exc}") from None
        per_query.append(read.run_means[:, :, 0].T.copy())
        n_given.append(read.n_given)
    scores = np.stack([v.mean(axis=0) for v in per_query])
    return _checked(Across(names, sets, scores, per_query, metric, n_given))


def _checked(a: Across) -> Across:
    if len(a.systems) < 2:
        raise ValueError(f"'data' must hold at least 2 systems to compare; got {len(a.systems)}")
    if len(a.datasets) < 2:
        raise ValueError(f"'data' must hold at least 2 datasets to compare across; got {len(a.datasets)}")
    bad = [(d, s) for i, d in enumerate(a.datasets) for j, s in enumerate(a.systems) if not np.isfinite(a.scores[i, j])]
    if bad:
        raise ValueError(f"'data' scores must be finite numbers; not so for (dataset, system) {bad[:5]}")
    return a
