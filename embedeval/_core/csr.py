"""Rows of compressed sparse rows (CSR): per-query lists held as one flat array and row bounds."""

from __future__ import annotations

import numpy as np


def take_rows(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Where the entries of the CSR rows ``rows`` lie, in the order of ``rows``.

    Parameters
    ----------
    indptr : numpy.ndarray of shape (n_rows + 1,)
        Row ``i`` holds the flat entries ``indptr[i]:indptr[i + 1]``.
    rows : numpy.ndarray of shape (b,)

    Returns
    -------
    local : numpy.ndarray of shape (e,)
        For each taken entry, the position in ``rows`` of its row.
    at : numpy.ndarray of shape (e,)
        Its position in the flat arrays.
    """
    starts, lengths = indptr[rows], indptr[rows + 1] - indptr[rows]
    return np.repeat(np.arange(rows.size), lengths), np.repeat(starts, lengths) + offsets_within(lengths)


def offsets_within(lengths: np.ndarray) -> np.ndarray:
    """0, 1, ... within each of consecutive segments of the given lengths (shape (sum of lengths,))."""
    return np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
