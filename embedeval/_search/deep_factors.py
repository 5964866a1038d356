"""The references' side of the deep ranking's products (:mod:`embedeval._search.deep`): the
factor matrix, and its float64 rows made only where asked for."""

from __future__ import annotations

import threading

import numpy as np

from .._core import budget as _budget


class Float64Factors:
    """The references' float64 factors (``factor_matrix(columns, norms, euclidean, np.float64)``),
    made for the rows asked for only, from their float32 factors and float64 squared norms.

    ``factors[key]`` (a slice, an index array, or ``...`` for all) is a new C-contiguous float64
    array of shape (rows, d [+ 1]), equal bit for bit to the same rows of the whole matrix: the
    float32 values widen exactly, and for euclidean distances the last column is the float64
    squared norm computed once. A compiled kernel reads the two parts itself: ``float32`` and
    ``norms`` (empty for inner products).

    Parameters
    ----------
    float32 : numpy.ndarray of shape (n, d [+ 1]), float32
        ``factor_matrix(columns, norms, euclidean, np.float32)``.
    norms : numpy.ndarray of shape (n,), float64
    euclidean : bool
    """

    def __init__(self, float32: np.ndarray, norms: np.ndarray, euclidean: bool):
        self.float32 = float32
        self.norms = norms if euclidean else np.zeros(0)
        self.shape = float32.shape
        self.dtype = np.dtype(np.float64)
        self._kept = threading.local()  # rows(): each thread's last slice

    def __len__(self) -> int:
        return self.shape[0]

    def __getstate__(self):  # the kept slices stay with their threads
        return {k: v for k, v in self.__dict__.items() if k != "_kept"}

    def __setstate__(self, state):
        self.__dict__.update(state, _kept=threading.local())

    def __getitem__(self, key) -> np.ndarray:
        out = np.array(self.float32[key], dtype=np.float64, order="C")
        if self.norms.size:
            out[:, -1] = self.norms[key]
        return out

    def rows(self, start: int, stop: int) -> np.ndarray:
        """``self[start:stop]``, read-only, kept by the calling thread for its next call while it
        is at most ``_budget.DEEP_ELEMENTS`` values (one block's product): the blocks of a large
        class each multiply by its slice (half of the points in one class: about a hundred
        blocks widened the same 10 MB)."""
        kept = getattr(self._kept, "slice", None)
        if kept is not None and kept[0] == (start, stop):
            return kept[1]
        out = self[start:stop]
        out.flags.writeable = False
        self._kept.slice = ((start, stop), out) if out.size <= _budget.DEEP_ELEMENTS else None
        return out


def factor_matrix(columns: np.ndarray, norms: np.ndarray, euclidean: bool, dtype) -> np.ndarray:
    """The references' side of the product: (r, ||r||^2) (euclidean) or r, in ``dtype``."""
    if not euclidean:
        return np.ascontiguousarray(columns, dtype=dtype)
    out = np.empty((len(columns), columns.shape[1] + 1), dtype=dtype)
    out[:, :-1] = columns
    out[:, -1] = norms
    return out
