"""The in-memory flat searcher: one faiss flat index over all the references, centred."""

from __future__ import annotations

import numpy as np

from .._core import budget as _budget
from .candidates import ArrayIndex, from_index
from .duplicates import DuplicateRows, distinct_rows
from .error_bound import error_bound, scale, terms
from .float64 import max_norm, norms
from .memory import InMemorySearcher

# How many extra unit roundoffs the centring costs the error bound (see FlatSearcher).
CENTRING_SLACK = 3


class FlatSearcher(InMemorySearcher):
    """A flat (brute-force) faiss search over reference vectors in memory, exact.

    faiss searches the array in place (:class:`~embedeval._search.candidates.ArrayIndex`), so no
    copy of the references is made unless they are centred.

    faiss searches the references minus their mean ``c`` (rounded to float32), and queries minus
    the same ``c`` for euclidean distances. Translation changes no euclidean distance, and for
    inner products it shifts every distance of a query by the same ``q . c``, so the order is
    unchanged; what changes is the error bound, which scales with the norms faiss sees. For
    embeddings that have collapsed around one point (noise of 1e-6 around a common vector), the
    centred norms are a millionth of the raw ones and so is the bound, so near-ties stay as rare
    as on spread-out data instead of joining every candidate into one run.

    The centred vectors are rounded to float32: each component is off by at most u times its
    size, which moves a squared euclidean distance by at most u (2 + u) (||q~|| + ||r~||)^2 /
    (1 - u)^2 and an inner product by at most u ||q|| ||r~|| / (1 - u) (q~, r~ the rounded centred
    vectors). ``CENTRING_SLACK`` = 3 more unit roundoffs in the bound's factor cover both. The
    float64 recomputation of near-ties reads the original rows, so the ranking is unchanged.

    Where ``||c|| <= CENTRE_FROM * max ||r||`` (:data:`embedeval._core.budget.CENTRE_FROM`;
    spread-out data: centring would shrink the bound by a quarter at most), faiss searches the
    references as they are, ``c`` is None and the bound takes their own norms; the ranking is the
    same exact one either way, only the near-ties that float64 settles may differ.

    Parameters
    ----------
    reference, distance
        As :class:`~embedeval._search.memory.InMemorySearcher` takes them.
    distinct_search : bool
        Where at most half of the references are distinct rows (exact copies), search those and
        expand them (:mod:`embedeval._search.duplicates`) instead of the references themselves.
    """

    def __init__(self, reference: np.ndarray, distance: str, *, distinct_search: bool = True):
        super().__init__(reference, distance)
        ref = self._reference
        mean = ref.mean(axis=0, dtype=np.float64)
        centring = np.linalg.norm(mean) > _budget.CENTRE_FROM * self.max_norm
        self._centre = mean.astype(np.float32) if centring else None
        centred = ref - self._centre if centring else ref
        self._centred_norm = max_norm(centred) if centring else self.max_norm
        self._index = ArrayIndex(centred, self.euclidean)  # searched in place: no copy in faiss
        self._duplicates = None
        distinct = distinct_rows(ref) if distinct_search else None
        if distinct is not None:
            first, inverse, counts = distinct
            # The rows are prepared already: cosine's are normalised, and ranked by inner product.
            kind = "euclidean" if self.euclidean else "inner_product"
            searcher = FlatSearcher(ref[first], kind, distinct_search=False)
            self._duplicates = DuplicateRows(searcher, ref, inverse, counts, self.euclidean)
        self.ranks_deep = self._duplicates is None and self._centred_norm >= _budget.DEEP_CENTRED_FROM * self.max_norm

    def search(self, queries, k, ignore=None, classes=None):
        if self._duplicates is not None:  # exact for every reference, so for every class too
            return self._duplicates.search(queries, k, ignore)
        return super().search(queries, k, ignore, classes)

    def _centred(self, queries):
        return queries - self._centre if self.euclidean and self._centre is not None else queries

    def _gather(self, queries, n):
        return from_index(self._index, self._centred(queries), n, self.euclidean)

    def _error_bound(self, queries, unit_roundoff):
        q = self._centred(queries)
        t = terms(q.shape[1], self.euclidean) + (0 if self._centre is None else CENTRING_SLACK)
        return error_bound(scale(norms(q), self._centred_norm, self.euclidean), t, unit_roundoff, q.shape[1])
