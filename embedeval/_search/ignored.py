"""References that queries must not be given back: removed from a ranking by index, never by position."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Ignored:
    """The references each query of a search ignores.

    An ignored reference takes no rank: the search ranks ``k + counts[i]`` references of query i
    exactly and then drops the ignored ones, so duplicates of an ignored reference (at the same
    distance) keep their ranks.

    Attributes
    ----------
    counts : numpy.ndarray of shape (b,), int64
        How many references query i ignores in all (an upper bound is enough for exactness; the
        exact count keeps searches shallowest).
    test : callable
        ``test(rows, idx)`` with ``rows`` an int array of shape (c,) (positions among the
        searched queries) and ``idx`` an int64 array of shape (c, m) of reference indices;
        returns a boolean array of shape (c, m), True where ``idx[i, j]`` is ignored by query
        ``rows[i]``. Entries of ``idx`` may be -1 (padding); their answer is not read.

    Examples
    --------
    Leave-one-out evaluation: query i ignores reference i.

    >>> ignored = Ignored.one_each(np.arange(4))
    >>> ignored.test(np.array([2]), np.array([[1, 2, 3]])).tolist()
    [[False, True, False]]
    """

    counts: np.ndarray
    test: Callable[[np.ndarray, np.ndarray], np.ndarray]

    @classmethod
    def one_each(cls, exclude: np.ndarray) -> Ignored:
        """One reference per query: ``exclude[i]`` (of shape (b,)) for query i."""
        exclude = np.asarray(exclude, dtype=np.int64)
        return cls(np.ones(exclude.shape[0], dtype=np.int64), lambda rows, idx: idx == exclude[rows, None])


def as_ignored(ignore) -> Ignored | None:
    """``ignore`` as :class:`Ignored`: None stays None, an int array of shape (b,) is one reference each."""
    if ignore is None or isinstance(ignore, Ignored):
        return ignore
    return Ignored.one_each(ignore)


def drop_ignored(idx: np.ndarray, k: int, rows: np.ndarray, ignore: Ignored | None) -> np.ndarray:
    """Each row's first ``k`` references that are neither ignored nor padding, -1 where it has fewer
    (without ``ignore``: each row's first ``k``, as they are).

    Parameters
    ----------
    idx : numpy.ndarray of shape (c, m), int64
        Ranked references, best first, -1 after a row's last; for query i the first
        ``k + ignore.counts[rows[i]]`` of them (or all of them) are in their exact order.
    k : int
    rows : numpy.ndarray of shape (c,)
        The searched positions of the rows (what ``ignore.test`` reads).
    ignore : Ignored or None

    Returns
    -------
    numpy.ndarray of shape (c, k), int64
    """
    if ignore is None:
        return idx[:, :k]
    counts = ignore.counts[rows]
    width = min(k + int(counts.max(initial=0)), idx.shape[1])
    head = idx[:, :width]
    drop = ignore.test(rows, head) | (head < 0)
    n_drop = np.count_nonzero(drop, axis=1)
    if width == k + 1 and n_drop.max(initial=0) <= 1:
        # At most one per query (leave-one-out): shift the columns after it left by one.
        at = np.where(n_drop > 0, drop.argmax(axis=1), k)
        return np.where(np.arange(k)[None, :] < at[:, None], head[:, :k], head[:, 1:])
    # A stable sort of booleans moves each row's kept columns to its front, in order.
    order = np.argsort(drop, axis=1, kind="stable")[:, :k]
    out = np.take_along_axis(head, order, 1)
    out[np.take_along_axis(drop, order, 1)] = -1
    if out.shape[1] < k:  # fewer references than k in all: pad
        out = np.concatenate([out, np.full((out.shape[0], k - out.shape[1]), -1, dtype=out.dtype)], axis=1)
    return out
