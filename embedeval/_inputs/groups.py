"""Groups of queries (language, category, camera, subset, ...) and the summaries per group.

``groups`` is one hashable value per query, aligned with the queries (or, where the queries have
ids, a mapping ``{query id: group}``). Every entry point checks it before any work
(:func:`read_groups`); :meth:`embedeval.EvaluationResult.from_per_query` then averages each
per-query metric within each group (:func:`per_group_summaries`). Set-level metrics (``nmi``,
``eer``, ...) are one number for the whole set and are not split by group.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .arrays import encode_labels


@dataclass(frozen=True, repr=False)
class PerGroup:
    """Each per-query metric averaged within each group of queries, beside the overall summary.

    Attributes
    ----------
    groups : numpy.ndarray of shape (n_groups,)
        Every group given, sorted where orderable (a group whose queries were all skipped too).
    n_queries, n_evaluated : numpy.ndarray of shape (n_groups,), int64
        Queries of each group, and those of them that entered the averages.
    values : dict of str to numpy.ndarray of shape (n_groups,)
        Each per-query metric's mean over the group's evaluated queries; NaN for a group
        without an evaluated query.
    macro : dict of str to float
        The mean of the group means over the groups with an evaluated query: every group weighs
        the same, whatever its size (MTEB's average over languages or subsets).
    """

    groups: np.ndarray
    n_queries: np.ndarray
    n_evaluated: np.ndarray
    values: dict[str, np.ndarray]
    macro: dict[str, float]

    def summary(self, group) -> dict[str, float]:
        """``{metric: mean}`` of one group; KeyError naming the groups for an unknown one."""
        hits = [i for i, g in enumerate(self.groups.tolist()) if g == group]
        if not hits:
            raise KeyError(f"no group {group!r}; the groups are {self.groups.tolist()}")
        return {name: float(v[hits[0]]) for name, v in self.values.items()}

    def as_dict(self) -> dict[object, dict[str, float]]:
        """Deprecated spelling of :meth:`to_dict` (until 0.2)."""
        import warnings

        warnings.warn("PerGroup.as_dict() is deprecated: call PerGroup.to_dict()", DeprecationWarning, stacklevel=2)
        return self.to_dict()

    def to_dict(self) -> dict[object, dict[str, float]]:
        """``{group: {"n_queries": n, "n_evaluated": n, metric: mean, ...}}``, plain Python values."""
        out = {}
        for i, group in enumerate(self.groups.tolist()):
            counts = {"n_queries": int(self.n_queries[i]), "n_evaluated": int(self.n_evaluated[i])}
            out[group] = {**counts, **{name: float(v[i]) for name, v in self.values.items()}}
        return out

    def __repr__(self) -> str:
        more = "..." if self.groups.size > 5 else ""
        return f"PerGroup(n_groups={self.groups.size}, groups={self.groups.tolist()[:5]}{more})"


def read_groups(groups, n_queries: int, query_ids=None) -> np.ndarray | None:
    """``groups`` checked and aligned with the queries: an array of shape (n_queries,), or None.

    Parameters
    ----------
    groups : array-like of shape (n_queries,), mapping, or None
        One hashable value per query; or ``{query id: group}`` covering every query id.
    n_queries : int
    query_ids : sequence, optional
        The queries' ids, for a mapping.

    Raises
    ------
    ValueError
        For a length other than ``n_queries``, a value that is not hashable, more than one
        dimension, a mapping without query ids or one that misses a query (named).
    """
    if groups is None:
        return None
    if isinstance(groups, Mapping):
        if query_ids is None:
            raise ValueError(
                "'groups' as a mapping {query id: group} needs query ids; pass one group per query (in query order)"
            )
        missing = [q for q in query_ids if q not in groups]
        if missing:
            raise ValueError(
                f"'groups' must give a group for every query; {len(missing)} of {len(query_ids)} have none, "
                f"first {missing[0]!r}"
            )
        groups = [groups[q] for q in query_ids]
    if isinstance(groups, (str, bytes)) or not (isinstance(groups, Sequence) or hasattr(groups, "__array__")):
        raise TypeError(f"'groups' must be a sequence with one group per query; got {type(groups).__name__}")
    values = _as_array(groups)
    if values.ndim != 1:
        raise ValueError(f"'groups' must be 1-D, one group per query; got shape {values.shape}")
    if values.shape[0] != n_queries:
        raise ValueError(f"'groups' must hold one group per query ({n_queries}); got {values.shape[0]}")
    if values.dtype.kind == "f" and np.isnan(values).any():
        first = int(np.flatnonzero(np.isnan(values))[0])
        raise ValueError(f"'groups' must not hold NaN (a NaN is not equal to itself); first at query {first}")
    return values


def _as_array(groups) -> np.ndarray:
    """An array of the groups that never coerces one type into another (1 and '1' stay apart)."""
    if hasattr(groups, "__array__") and not isinstance(groups, np.ndarray):
        groups = np.asarray(groups)
    if isinstance(groups, np.ndarray):
        return groups
    items = list(groups)
    kinds = {type(v) for v in items}
    if len(kinds) == 1 and issubclass(next(iter(kinds)), (int, str, float, bool, np.generic)):
        return np.asarray(items)  # one type: no value can turn into another's
    out = np.empty(len(items), dtype=object)
    for i, v in enumerate(items):
        try:
            hash(v)
        except TypeError:
            raise TypeError(f"'groups' must hold hashable values; got {v!r} at query {i}") from None
        out[i] = v
    return out


def per_group_summaries(per_query: dict[str, np.ndarray], evaluated: np.ndarray, groups: np.ndarray) -> PerGroup:
    """Average each per-query metric within each group, over the evaluated queries only."""
    classes, (codes,) = encode_labels(groups)
    n_queries = np.bincount(codes, minlength=classes.size)
    n_evaluated = np.bincount(codes[evaluated], minlength=classes.size)
    values, macro = {}, {}
    with np.errstate(invalid="ignore", divide="ignore"):
        for name, v in per_query.items():
            sums = np.bincount(codes[evaluated], weights=v[evaluated], minlength=classes.size)
            means = np.where(n_evaluated > 0, sums / np.maximum(n_evaluated, 1), np.nan)
            values[name] = means
            present = means[n_evaluated > 0]
            macro[name] = float(present.mean()) if present.size else float("nan")
    return PerGroup(classes, n_queries.astype(np.int64), n_evaluated.astype(np.int64), values, macro)
