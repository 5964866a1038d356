"""Queries that are rows of the reference set: excluded by index on request, detected otherwise.

pytorch-metric-learning's ``ref_includes_query`` situation: the queries are rows of the
reference set (often its first rows), and each query's own row must leave its ranking, or every
query finds itself at distance 0 and precision@1 is 1.0. ``query_in_reference`` names each
query's row (-1 for a query that is not in the reference); it is sugar over the ``ignore``
mechanism (:mod:`embedeval._relevance.ignore`): the own rows join the explicit ignore lists.

When a reference set is given without it and without ignore rules (which say the caller has
decided what a query must not find), :func:`warn_if_self_reference` looks for the mistake:
the reference is the query array itself, or at least half of the queries have a bit-identical
reference row with their own label (found by hashing the rows, then comparing the candidates).
A gallery holding true duplicates of a few queries is legitimate and stays silent.
"""

from __future__ import annotations

import warnings

import numpy as np

from .._core import budget as _budget
from .._inputs.arrays import _to_numpy

# A query set counts as drawn from the reference when at least this share of its queries has an
# identical same-label reference row (true duplicates in a gallery are a few percent at most).
SELF_SHARE = 0.5
# Reference rows with one hash compared per query (identical rows beyond it are not examined).
_RUN = 8

_FIX = (
    "if the queries are rows of the reference set (pytorch-metric-learning's ref_includes_query), pass "
    "query_in_reference=<each query's row in reference> (np.arange(n_queries) when they are its first rows) "
    "to exclude them by index; if both sets are the same, drop reference and reference_labels (leave-one-out)"
)


def read_query_rows(value, reference, n_queries: int, n_references: int) -> np.ndarray | None:
    """``query_in_reference`` checked: int64 array of shape (n_queries,), a reference row or -1
    each; None when not given."""
    if value is None:
        return None
    if reference is None:
        raise ValueError(
            "'query_in_reference' needs 'reference' (the set holding the queries' rows); without it each query is "
            "already excluded from its own ranking (leave-one-out)"
        )
    rows = _to_numpy(value, "query_in_reference")
    if rows.dtype.kind not in "iu" or rows.ndim != 1:
        raise TypeError(
            "'query_in_reference' must be a 1-D array of ints (each query's row in 'reference', -1 for none); "
            f"got {rows.dtype} of shape {rows.shape}"
        )
    if rows.shape[0] != n_queries:
        raise ValueError(
            f"'query_in_reference' must hold one reference row per query ({n_queries}); got {rows.shape[0]}"
        )
    bad = np.flatnonzero((rows < -1) | (rows >= n_references))
    if bad.size:
        raise ValueError(
            f"'query_in_reference' must hold rows of 'reference' (0 to {n_references - 1}) or -1 (not in it); "
            f"got {rows[bad[0]]} for query {bad[0]}" + (f" and {bad.size - 1} more" if bad.size > 1 else "")
        )
    return rows.astype(np.int64)


def with_own_rows(lists, own: np.ndarray | None, n_references: int):
    """The explicit ignore lists (CSR ``(indptr, indices)`` or None) joined with each query's own
    row: sorted, without repeats."""
    if own is None:
        return lists
    queries = np.flatnonzero(own >= 0)
    keys = queries * np.int64(n_references) + own[queries]
    if lists is not None:
        indptr, indices = lists
        listed = np.repeat(np.arange(indptr.size - 1), np.diff(indptr)) * np.int64(n_references) + indices
        keys = np.union1d(keys, listed)
    rows, cols = np.divmod(keys, n_references)
    return np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=own.size))]), cols


def warn_if_rows_differ(queries: np.ndarray, references: np.ndarray, own: np.ndarray) -> None:
    """Warn when ``query_in_reference`` names rows that are not the queries' own vectors."""
    mapped = np.flatnonzero(own >= 0)
    step = max(1, _budget.SELF_CHECK_ELEMENTS // queries.shape[1])
    differ = np.concatenate(
        [
            part[~np.all(queries[part] == references[own[part]], axis=1)]
            for part in (mapped[s : s + step] for s in range(0, mapped.size, step))
        ]
        or [np.zeros(0, dtype=np.int64)]
    )
    if differ.size:
        warnings.warn(
            f"'query_in_reference' maps {differ.size} of {mapped.size} queries to reference rows that differ from "
            f"them (first: query {differ[0]} -> row {own[differ[0]]}); those rows are excluded all the same",
            UserWarning,
            stacklevel=3,
        )


def _row_hashes(x: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row's float32 bits (equal rows, equal hashes), block by block."""
    coefficients = np.random.default_rng(0).integers(1, 2**63, size=x.shape[1], dtype=np.uint64) | np.uint64(1)
    out = np.empty(x.shape[0], dtype=np.uint64)
    step = max(1, _budget.SELF_CHECK_ELEMENTS // x.shape[1])
    for start in range(0, x.shape[0], step):
        bits = np.ascontiguousarray(x[start : start + step]).view(np.uint32).astype(np.uint64)
        out[start : start + step] = (bits * coefficients).sum(axis=1, dtype=np.uint64)  # modulo 2^64
    return out


def count_self_matches(queries, references, query_codes, reference_codes) -> int:
    """Queries with a bit-identical reference row of the same class code (None: codes not compared)."""
    hashed = _row_hashes(references)
    order = np.argsort(hashed, kind="stable")
    sorted_hashes = hashed[order]
    wanted = _row_hashes(queries)
    first = np.searchsorted(sorted_hashes, wanted, "left")
    run = np.searchsorted(sorted_hashes, wanted, "right") - first
    found = np.zeros(wanted.size, dtype=bool)
    for offset in range(min(int(run.max(initial=0)), _RUN)):
        candidates = np.flatnonzero((run > offset) & ~found)
        step = max(1, _budget.SELF_CHECK_ELEMENTS // queries.shape[1])
        for part in (candidates[s : s + step] for s in range(0, candidates.size, step)):
            rows = order[first[part] + offset]
            same = np.all(queries[part] == references[rows], axis=1)
            if query_codes is not None:
                same &= query_codes[part] == reference_codes[rows]
            found[part[same]] = True
    return int(found.sum())


def warn_if_self_reference(embeddings, reference, queries, references, codes) -> None:
    """Warn when the reference set holds the queries themselves and nothing excludes them.

    Parameters
    ----------
    embeddings, reference
        The arguments as given (to recognise one object passed twice).
    queries, references : numpy.ndarray of shape (n_q, d) and (n_r, d), float32
    codes : (query codes, reference codes) or None
        Class codes in one coding, to require the same label; None for label sets.
    """
    n = queries.shape[0]
    if reference is embeddings or (queries is references):
        warnings.warn(
            f"'reference' is the 'embeddings' array itself: every query finds itself at distance 0, so "
            f"precision@1 is 1.0 and every metric is inflated; {_FIX}",
            UserWarning,
            stacklevel=3,
        )
        return
    matches = count_self_matches(queries, references, *(codes or (None, None)))
    if matches >= SELF_SHARE * n:
        warnings.warn(
            f"{matches} of {n} queries have an identical row with their label in 'reference' (at distance 0), so "
            f"each can find itself first and precision@1 is inflated (1.0 when every query does); {_FIX}",
            UserWarning,
            stacklevel=3,
        )
