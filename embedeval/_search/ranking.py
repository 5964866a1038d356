"""The exact ranking: candidates from any source, ordered as a full stable float64 sort would."""

from __future__ import annotations

import numpy as np

from .candidates import Candidates
from .float64 import pair_distances


class ExactSearcher:
    """Exact k-nearest-neighbour search over gathered candidates (see :mod:`embedeval._search`).

    Subclasses say where candidates come from (:meth:`_gather`) and where float64 rows for
    recomputation come from (:meth:`_reference_rows`), and set ``size`` (the number of
    references), ``euclidean`` and ``max_norm`` (the largest norm of a prepared reference).
    """

    exact = True  # every searcher but the approximate one
    size: int
    euclidean: bool
    max_norm: float

    def _gather(self, queries: np.ndarray, n: int) -> Candidates:  # pragma: no cover - abstract
        """At least the ``n`` best candidates of each query (all, if ``n`` >= ``size``)."""
        raise NotImplementedError

    def _reference_rows(self, idx: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        """The prepared float32 reference vectors at ``idx`` (c,), shape (c, d)."""
        raise NotImplementedError

    def _error_bound(self, queries: np.ndarray, unit_roundoff: float) -> np.ndarray:
        """E per query, shape (b,): no gathered distance of that query is off by more."""
        slack = 1.01 * (queries.shape[1] + (4 if self.euclidean else 3)) * unit_roundoff
        q_norm = np.sqrt(np.einsum("ij,ij->i", queries, queries, dtype=np.float64))
        if self.euclidean:
            return slack * (q_norm + self.max_norm) ** 2
        return slack * q_norm * self.max_norm

    def search(
        self,
        queries: np.ndarray,
        k: int,
        exclude: np.ndarray | None = None,
        query_groups: np.ndarray | None = None,
        reference_groups: np.ndarray | None = None,
    ) -> np.ndarray:
        """Indices of each query's ``k`` nearest references, nearest first, ties by lower index.

        Parameters
        ----------
        queries : numpy.ndarray of shape (n_queries, d), float32
            Prepared (:func:`embedeval._inputs.prepare`) as the references are.
        k : int
            At most the number of references (minus one with ``exclude``).
        exclude : numpy.ndarray of shape (n_queries,), optional
            A reference index per query that must not be returned (the query itself in
            leave-one-out evaluation). It is removed by index, never by position, so duplicate
            embeddings at distance 0 cannot push a real neighbour out of the top k.
        query_groups, reference_groups : numpy.ndarray of shape (n_queries,) and (n_references,), optional
            Class codes. When given, only the relevance sequence (``reference_groups[i] ==
            query_groups``) of the result is guaranteed exact: candidates whose float32
            distances are too close to order are recomputed only where their relevance differs,
            since reordering references of equal relevance changes no metric.

        Returns
        -------
        numpy.ndarray of shape (n_queries, k), int64
        """
        n_excluded = 0 if exclude is None else 1
        if not 1 <= k <= self.size - n_excluded:
            raise ValueError(f"k must be in [1, {self.size - n_excluded}]; got {k}")
        out = np.empty((queries.shape[0], k), dtype=np.int64)
        pending = np.arange(queries.shape[0])
        n_candidates = k + n_excluded + max(8, k // 64)
        while pending.size:
            n_candidates = min(n_candidates, self.size)
            relevant_to = None if query_groups is None else (query_groups[pending], reference_groups)
            ranked, settled = self._rank(
                queries[pending], k, n_candidates, None if exclude is None else exclude[pending], relevant_to
            )
            out[pending[settled]] = ranked[settled]
            pending = pending[~settled]
            n_candidates *= 2
        return out

    def _rank(self, queries, k, n_candidates, exclude, relevant_to):
        """Each row's top k in exact order, and whether that top k is certain.

        Returns ``(ranked, settled)``: ranked of shape (b, k), the excluded reference removed;
        settled of shape (b,), bool.
        """
        c = self._gather(queries, n_candidates)
        idx = c.idx
        b, m = idx.shape
        with np.errstate(invalid="ignore"):  # inf - inf in the padding of merged shards
            gap = np.diff(c.dist, axis=1) > 2 * self._error_bound(queries, c.unit_roundoff)[:, None]
        if (c.length < m).any():
            gap &= np.arange(1, m)[None, :] < c.length[:, None]  # between two real candidates
            joined = ~gap & (np.arange(1, m)[None, :] < c.length[:, None])
        else:
            joined = ~gap
        # The excluded reference stays in place until the end: a run through it only joins
        # candidates that are then ordered exactly. So rows are ranked one column deeper.
        last = min(k if exclude is not None else k - 1, m - 1)
        if relevant_to is not None:
            # Only a run holding both relevant and other references needs ordering.
            query_groups, reference_groups = relevant_to
            relevant = reference_groups[idx] == query_groups[:, None]
            pair = joined & (relevant[:, 1:] != relevant[:, :-1])
        else:
            pair = joined
        # Runs: maximal stretches of joined candidates, numbered across the block, row by row.
        starts = np.ones((b, m), dtype=bool)
        starts[:, 1:] = ~joined
        run = np.cumsum(starts, dtype=np.int64).reshape(b, m)
        r, col = np.nonzero(pair)
        run_of_pair = run[r, col]
        needed = run_of_pair <= run[r, last]  # runs that begin after column ``last`` cannot matter
        if needed.any():
            to_order = np.zeros(int(run[-1, -1]) + 1, dtype=bool)
            to_order[run_of_pair[needed]] = True
            rows, cols = np.nonzero(to_order[run])  # row-major: grouped by row, then by run
            members = idx[rows, cols]
            if c.exact is not None:
                exact = c.exact[rows, cols]
            else:
                exact = pair_distances(queries, rows, members, self._reference_rows, self.euclidean)
            # Each run occupies contiguous positions; sorting its members by (distance, index)
            # and writing them back into the same positions orders the run exactly.
            idx[rows, cols] = members[_order_runs(run[rows, cols], exact, members)]
        # Settled: a gap after column ``last`` (nothing left out can come before it), or nothing
        # was left out at all.
        settled = np.isinf(c.worst) | gap[:, last:].any(axis=1)
        if exclude is None:
            return idx[:, :k], settled
        head = idx[:, : k + 1]
        is_self = head == exclude[:, None]
        at = np.where(is_self.any(axis=1), is_self.argmax(axis=1), k)
        return np.where(np.arange(k)[None, :] < at[:, None], head[:, :k], head[:, 1:]), settled


def _order_runs(run: np.ndarray, exact: np.ndarray, members: np.ndarray) -> np.ndarray:
    """The permutation that sorts entries by (run, exact distance, reference index).

    One sort of the distances and one of an integer (run, rank of the distance) key is about
    4 times faster than a three-key lexsort; it is exact unless two members of one run have
    equal distances, in which case the index must decide and the lexsort is used.

    Parameters
    ----------
    run, exact, members : numpy.ndarray of shape (m,)
        Run id (int64), float64 distance and reference index of each entry.

    Returns
    -------
    numpy.ndarray of shape (m,), int64
    """
    by_distance = np.argsort(exact)
    rank = np.empty(exact.size, dtype=np.int64)
    rank[by_distance] = np.arange(exact.size)
    order = np.argsort(run * exact.size + rank)  # run ids are int64: no overflow
    sorted_run, sorted_exact = run[order], exact[order]
    if ((sorted_run[1:] == sorted_run[:-1]) & (sorted_exact[1:] == sorted_exact[:-1])).any():
        return np.lexsort((members, exact, run))
    return order
