"""Rankings as a 2-D integer id array (the fast form), against judgements as an array or in Python.

Rows end with ``pad``. Internally every real id is shifted to be >= 0 and -1 means "the ranking
has ended", so that a real id equal to -1 (possible with another pad value) is never taken for
padding; with the default pad and non-negative ids this is the input itself, not a copy. The
rankings are checked and matched block by block (:mod:`embedeval._forms.match`).
"""

from __future__ import annotations

import numpy as np

from .._inputs.arrays import _to_numpy
from .graded import Judged
from .match import find, first_duplicate, gap_row, row_blocks

_NEVER = -2  # an internal judged id that no ranking holds (a judged id equal to the pad)


def _check_matrix(arr: np.ndarray, name: str) -> None:
    if arr.ndim != 2 or arr.dtype.kind not in "iu":
        raise ValueError(
            f"'{name}' as an array must be 2-D integer ids (n_queries, length); got {arr.dtype} {arr.shape}"
        )


def _lowest(arr: np.ndarray, pad: int) -> int:
    """The smallest real (non-pad) id, or 0 if none is negative."""
    low = int(arr.min(initial=0))
    if low < 0 and low == pad:
        low = int(np.where(arr != pad, arr, 0).min(initial=0))
    return min(low, 0)


def _internal(block: np.ndarray, pad: int, shift: int) -> np.ndarray:
    if shift == 0 and pad == -1:
        return block.astype(np.int64, copy=False)
    return np.where(block != pad, block.astype(np.int64) + shift, -1)


def _check_block(block: np.ndarray, start: int, name: str, pad: int, shift: int) -> None:
    row = gap_row(block)
    if row is not None:
        raise ValueError(
            f"'{name}' rows must put the pad value {pad} only at the end; row {start + row} has an id after it"
        )
    dup = first_duplicate(block)
    if dup is not None:
        raise ValueError(f"'{name}' of query {start + dup[0]} lists id {dup[1] - shift} more than once")


def _match(rankings: np.ndarray, pad: int, shift: int, rows, ids, grades, judged_rows, judged_grades) -> Judged:
    """Check ``rankings`` block by block and find the judged ``ids`` (internal, by sorted ``rows``)."""
    where = np.full(rows.size, -1, dtype=np.int64)
    n_retrieved = np.zeros(rankings.shape[0], dtype=np.int64)
    for start, raw in row_blocks(rankings):
        block = _internal(raw, pad, shift)
        _check_block(block, start, "rankings", pad, shift)
        sel = slice(*np.searchsorted(rows, [start, start + block.shape[0]]))
        where[sel] = find(block, rows[sel] - start, ids[sel])
        n_retrieved[start : start + block.shape[0]] = np.count_nonzero(block >= 0, axis=1)
    found = where >= 0
    n_zero = np.bincount(rows[np.asarray(grades) == 0], minlength=rankings.shape[0])
    return Judged(
        rankings.shape[0],
        rows[found],
        where[found] + 1.0,
        grades[found],
        judged_rows,
        judged_grades,
        n_retrieved=n_retrieved,
        n_zero=n_zero,
    )


def from_arrays(rankings, relevance, grades, pad: int) -> Judged:
    """Both as 2-D id arrays padded with ``pad``; ``grades`` of the shape of ``relevance`` or None."""
    rankings, relevance = _to_numpy(rankings, "rankings"), _to_numpy(relevance, "relevance")
    _check_matrix(rankings, "rankings")
    _check_matrix(relevance, "relevance")
    if relevance.shape[0] != rankings.shape[0]:
        raise ValueError(
            f"'relevance' must have one row per query of 'rankings' ({rankings.shape[0]}); got {relevance.shape[0]}"
        )
    real = relevance != pad
    if grades is None:
        grade_arr = real.astype(np.float64)
    else:
        grade_arr = np.asarray(_to_numpy(grades, "grades"), dtype=float)
        if grade_arr.shape != relevance.shape:
            raise ValueError(f"'grades' must have the shape of 'relevance' {relevance.shape}; got {grade_arr.shape}")
        if not np.isfinite(grade_arr[real]).all():
            raise ValueError("'grades' must be finite")
    shift = -min(_lowest(rankings, pad), _lowest(relevance, pad))
    judged = _internal(relevance, pad, shift)
    _check_block(judged, 0, "relevance", pad, shift)
    rows, cols = np.nonzero(real & (grade_arr > 0))
    positive = grade_arr[rows, cols]
    return _match(rankings, pad, shift, rows, judged[rows, cols], positive, rows, positive)


def from_array_and_ids(rankings: np.ndarray, judged, pad: int) -> Judged | None:
    """A 2-D id array against per-query judgements in Python (:class:`~embedeval._forms.mappings.Judgements`);
    None when a judged id is not an integer (the caller then compares ids as Python objects)."""
    _check_matrix(rankings, "rankings")
    if len(judged.offsets) - 1 != rankings.shape[0]:
        raise ValueError(
            f"'relevance' must have one entry per query of 'rankings' ({rankings.shape[0]}); "
            f"got {len(judged.offsets) - 1}"
        )
    if not set(map(type, judged.ids)) <= {int}:
        if not all(isinstance(d, (int, np.integer)) and not isinstance(d, bool) for d in judged.ids):
            return None
    try:
        ids = np.array(judged.ids, dtype=np.int64).reshape(-1)
    except OverflowError:
        return None
    keep = judged.grades > 0
    rows, ids, grades = judged.rows[keep], ids[keep], judged.grades[keep]
    shift = -min(_lowest(rankings, pad), int(ids[ids != pad].min(initial=0)), 0)
    internal = np.where(ids == pad, _NEVER, ids + shift)  # an id equal to the pad is never ranked
    return _match(rankings, pad, shift, rows, internal, grades, rows, grades)
