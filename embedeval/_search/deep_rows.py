"""The per-row float64 work of a deep-ranking block (:class:`~embedeval._search.deep_block.Block`):
product values recomputed in float64 where float32 cannot tell them apart, and the exact ranks of
one row from its candidates."""

from __future__ import annotations

import itertools

import numpy as np

from .deep_exact import error_bounds, exact_ranks


class ExactRows:
    """Methods of :class:`~embedeval._search.deep_block.Block` that compute in float64, shared with
    :mod:`~embedeval._search.deep_merged` (they read the block's ``ranker``, ``factors64``,
    ``bound_rel``, ``codes``, ``listed``, ``ignored_at``, ``queries``, ``depth`` and ``n_ranked``)."""

    def _bounds_and_factors(self):
        """``(bound32, bound64, factors32)``: each row's error bound on a float32 and on a float64
        product value (:func:`~embedeval._search.deep_exact.error_bounds`, (b,) each), and the
        rows' float32 factors (b, d [+ 1])."""
        rk = self.ranker
        q_norms = np.sqrt(np.einsum("ij,ij->i", self.queries, self.queries, dtype=np.float64))
        bound32, bound64 = error_bounds(q_norms, rk.max_norm, rk.dim, rk.euclidean)
        return bound32, bound64, rk._factors(self.queries, np.float32)

    def _class_values(self, rows, code: int):
        """The float64 product values of the block's ``rows`` (a slice or ascending positions, all
        of class ``code``) with their class's references, (m, class size), the ignored ones +inf;
        and where those are: (positions among ``rows``, columns in the class)."""
        rk = self.ranker
        lo, hi = int(rk._class_start[code]), int(rk._class_stop[code])
        found = self.factors64[rows] @ rk._matrix64.rows(lo, hi).T
        inside = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        if self.ignored_at is not None:
            r, c = self.ignored_at
            keep = (self.codes[r] == code) & (c >= lo) & (c < hi)
            inside = (np.searchsorted(np.arange(len(self.queries))[rows], r[keep]), c[keep] - lo)
            found[inside] = np.inf
        return found, inside

    def _float64_places(self, nearest, rows, at, cols):
        """float64 product values of the pairs (rows[at[i]], cols[i]), ``at`` ascending, and their places."""
        values, places = np.empty(at.size), np.empty(at.size, dtype=np.int64)
        ends = np.flatnonzero(np.diff(at, prepend=-1, append=len(rows)))
        # per row: faster than one einsum of gathered rows (bench/NOTES.md, stop 52)
        for s, e in itertools.pairwise(ends):
            r = at[s]
            # einsum, not matmul: a BLAS call this small costs more in thread hand-offs than it does
            values[s:e] = np.einsum("ij,j->i", self.ranker._matrix64[cols[s:e]], self.factors64[rows[r]])
            places[s:e] = np.searchsorted(nearest[r], values[s:e], side="right")
        return values, places

    def _candidates_row(self, r: int, limit: float, cols, values):
        """Row r's ranks (and classes: grades, or 1) from its candidates: the others at ``cols`` and the
        marked values within ``limit``.

        ``values`` holds the others' (values, bounds), or None to compute them again in float64;
        the relevant values are computed again in float64 (any value within its bound will do).
        """
        rk = self.ranker
        if values is None:
            values = (
                np.einsum("ij,j->i", rk._matrix64[cols], self.factors64[r]),
                np.full(cols.size, self.bound_rel[r]),
            )
        values, bounds = values
        rel_grades = None
        if rk._classes:
            code = self.codes[r]
            rel_cols = np.arange(rk._class_start[code], rk._class_stop[code])
        else:
            indptr, listed, grades = self.listed
            rel_cols = listed[indptr[r] : indptr[r + 1]]
            rel_grades = None if grades is None else grades[indptr[r] : indptr[r + 1]]
        rel_values = np.einsum("ij,j->i", rk._matrix64[rel_cols], self.factors64[r])
        if self.ignored_at is not None:
            rel_values[np.isin(rel_cols, self.ignored_at[1][self.ignored_at[0] == r])] = np.inf
        keep = np.flatnonzero(rel_values <= limit)
        classes = np.zeros(keep.size + cols.size)
        classes[: keep.size] = 1.0 if rel_grades is None else rel_grades[keep]
        ranks, grades = exact_ranks(
            self.queries[r],
            int(self.depth[r]),
            np.concatenate([rel_values[keep], values]),
            np.concatenate([np.full(keep.size, self.bound_rel[r]), bounds]),
            classes,
            rk._index[np.concatenate([rel_cols[keep], cols])],
            rk.reference,
            rk.euclidean,
        )
        n = int(self.n_ranked[r])  # only the first J marked references are asked for
        return ranks[:n], grades[:n]
