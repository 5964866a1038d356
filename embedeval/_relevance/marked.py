"""What a deep ranking reads of relevance: each query's marked references.

The deep ranking (:class:`embedeval._search.deep.DeepRanker`) reports where a query's *marked*
references fall in its ranking: its relevant references, or, when graded metrics are computed,
every positively graded reference with its grade (relevant ones are graded at least the
threshold, which is > 0). It reads them from the same query parts that the rest of the search
path ships (:mod:`embedeval._relevance.labels`, :mod:`embedeval._relevance.judged`), through
:class:`Marked`:

* class labels give each query's class code; the ranker, made with the references' codes,
  keeps them sorted by class, so a query's marked references are one slice of them;
* label sets and judgements list each query's marked references (:meth:`Marked.columns`),
  computed block by block as the ranker asks, so no (queries x references) array is made.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Marked:
    """The marked references of the queries of one search.

    Attributes
    ----------
    counts : numpy.ndarray of shape (b,), int64
        How many marked references each query has that it does not ignore.
    codes : numpy.ndarray of shape (b,), int64, or None
        Class codes: a query's marked references are the references of its class.
    lister : callable or None
        Otherwise ``lister(rows) -> (indptr, references, grades)`` lists the marked references
        of the queries ``rows`` (positions among these queries, shape (c,)) as CSR rows:
        ``references[indptr[i]:indptr[i + 1]]`` ascending, ignored ones included; ``grades``
        (same shape as ``references``) or None for binary relevance.
    graded : bool
        Whether the lister gives grades (and the ranker must order marked references of
        different grades exactly).
    """

    counts: np.ndarray
    codes: np.ndarray | None = None
    lister: Callable | None = None
    graded: bool = False

    def part(self, rows: np.ndarray) -> Marked:
        """The marked references of the queries ``rows`` (positions among these queries)."""
        lister = None if self.lister is None else (lambda local: self.lister(rows[local]))
        return Marked(self.counts[rows], None if self.codes is None else self.codes[rows], lister, self.graded)

    def columns(self):
        """``(indptr (b + 1,), references, grades or None)`` of every query (listed marks only)."""
        return self.lister(np.arange(self.counts.size))


def csr_from_mask(mask: np.ndarray):
    """``(indptr, columns)`` of the True entries of a boolean (c, n) matrix, row by row."""
    rows, cols = np.nonzero(mask)
    indptr = np.zeros(mask.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=mask.shape[0]), out=indptr[1:])
    return indptr, cols
