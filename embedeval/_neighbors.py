"""Exact k-nearest-neighbour search: faiss proposes, float64 decides, ties go to the lower index.

The ranking this module returns is the one a full stable sort of float64 distances would give:
references ordered by their distance to the query computed in float64 from the (float32) input
vectors, and references at equal distance by index, lower first. It never depends on how
queries are blocked, on thread counts or on the BLAS kernel faiss happens to use.

faiss's flat search computes distances in float32 through BLAS, whose rounding depends on the
shape of each call, and among references tied at the k-th distance it keeps an arbitrary subset.
So each search asks faiss for more candidates than needed and uses a rigorous bound E on the
float32 error of each distance (|fl(d) - d| <= E for every reference):

* candidates whose faiss distances differ by more than 2E are in their true order;
* runs of candidates closer than that are recomputed in float64 and sorted by (distance, index);
* a query's top k is settled once such a gap lies after its k-th candidate (nothing faiss left
  out can then come before it); a query that is not settled is searched again with twice as
  many candidates.

For float32 sums of d products the bound is Higham's gamma_d (any summation order, FMA or not):
|fl(q.r) - q.r| <= d u ||q|| ||r|| / (1 - d u), u = 2**-24; faiss's euclidean distance
||q||^2 + ||r||^2 - 2 q.r adds two roundings, so E = (d + 4) u (||q|| + max ||r||)^2 for
euclidean and E = (d + 3) u ||q|| max ||r|| for inner products (with 1% slack).
"""

from __future__ import annotations

import faiss
import numpy as np

_UNIT_ROUNDOFF = 2.0**-24
_EXACT_CHUNK = 1 << 21  # float64 elements per recomputation chunk (16 MB)


def check_directions(vectors: np.ndarray, name: str, chunk: int = 65536) -> None:
    """Raise ValueError if a row is all zeros (its cosine is undefined); reads in chunks."""
    zero = np.concatenate(
        [start + np.flatnonzero(~vectors[start : start + chunk].any(axis=1)) for start in range(0, len(vectors), chunk)]
    )
    if zero.size:
        raise ValueError(
            f"cosine distance is undefined for zero vectors; got {zero.size} all-zero row(s) in '{name}', "
            f"first at row {zero[0]}"
        )


def prepare(vectors: np.ndarray, distance: str) -> np.ndarray:
    """Vectors as searched: L2-normalised (in float32) for cosine, unchanged otherwise.

    Rows must not be all zeros under cosine (see :func:`check_directions`).
    """
    if distance != "cosine":
        return vectors
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return np.ascontiguousarray(vectors / norms, dtype=np.float32)


class ExactIndex:
    """A flat (brute-force) faiss index over reference vectors, searched exactly.

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
        Already prepared with :func:`prepare`.
    distance : {"euclidean", "cosine", "inner_product"}
        Cosine vectors are normalised, so cosine ranks by inner product.
    """

    def __init__(self, reference: np.ndarray, distance: str):
        d = reference.shape[1]
        self._euclidean = distance == "euclidean"
        self._index = faiss.IndexFlatL2(d) if self._euclidean else faiss.IndexFlatIP(d)
        self._index.add(reference)
        self._reference = reference
        self._max_norm = float(np.sqrt(np.einsum("ij,ij->i", reference, reference, dtype=np.float64).max()))
        self._slack = 1.01 * (d + (4 if self._euclidean else 3)) * _UNIT_ROUNDOFF
        self.size = reference.shape[0]

    def _error_bound(self, queries: np.ndarray) -> np.ndarray:
        """E per query: no faiss distance of that query is off by more."""
        q_norm = np.sqrt(np.einsum("ij,ij->i", queries, queries, dtype=np.float64))
        if self._euclidean:
            return self._slack * (q_norm + self._max_norm) ** 2
        return self._slack * q_norm * self._max_norm

    def exact_distance(self, queries: np.ndarray, references: np.ndarray) -> np.ndarray:
        """float64 distance of each (query, reference) row pair; smaller is nearer.

        Parameters
        ----------
        queries, references : numpy.ndarray of shape (m, d)

        Returns
        -------
        numpy.ndarray of shape (m,): squared euclidean distance, or minus the inner product.
        """
        if self._euclidean:
            diff = np.subtract(references, queries, dtype=np.float64)
            return np.multiply(diff, diff, out=diff).sum(axis=1)
        return -np.multiply(references, queries, dtype=np.float64).sum(axis=1)

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
        n_candidates = k + n_excluded + max(8, k // 16)
        while pending.size:
            n_candidates = min(n_candidates, self.size)
            relevant_to = None if query_groups is None else (query_groups[pending], reference_groups)
            ranked, settled = self._rank_candidates(
                queries[pending], k, n_candidates, None if exclude is None else exclude[pending], relevant_to
            )
            out[pending[settled]] = ranked[settled, :k]
            pending = pending[~settled]
            n_candidates *= 2
        return out

    def _rank_candidates(self, queries, k, n_candidates, exclude, relevant_to=None):
        """Exactly ordered faiss candidates, and whether each row's top k is certain."""
        dist, idx = self._index.search(queries, n_candidates)
        if not self._euclidean:
            dist = -dist  # nearer first for every distance; negation is exact
        complete = n_candidates == self.size
        if exclude is not None:
            # Drop the excluded reference by index; a row that does not contain it drops its
            # last candidate instead, so every row keeps n_candidates - 1 (still sorted).
            is_self = idx == exclude[:, None]
            drop = np.where(is_self.any(axis=1), is_self.argmax(axis=1), idx.shape[1] - 1)
            keep = np.ones(idx.shape, dtype=bool)
            keep[np.arange(idx.shape[0]), drop] = False
            dist = dist[keep].reshape(idx.shape[0], -1)
            idx = idx[keep].reshape(idx.shape[0], -1)
        bound = self._error_bound(queries)
        separated = np.diff(dist, axis=1) > 2 * bound[:, None]  # true order certain across it
        # Runs: maximal stretches of candidates not separated from their neighbours.
        run = np.zeros(dist.shape, dtype=np.int64)
        run[:, 1:] = np.cumsum(separated, axis=1)
        joined = ~separated
        if relevant_to is not None:
            query_groups, reference_groups = relevant_to
            relevant = reference_groups[idx] == query_groups[:, None]
            # Only a run holding both relevant and other references needs ordering.
            mixed_pair = joined & (relevant[:, 1:] != relevant[:, :-1])
            rows, cols = np.nonzero(mixed_pair)
            mixed_runs = np.unique(rows * dist.shape[1] + run[rows, cols])
            uncertain = np.isin(np.arange(dist.shape[0])[:, None] * dist.shape[1] + run, mixed_runs)
        else:
            uncertain = np.zeros(dist.shape, dtype=bool)
            uncertain[:, 1:] |= joined
            uncertain[:, :-1] |= joined
        rows, cols = np.nonzero(uncertain)  # row-major: grouped by row, then by run
        if rows.size:
            members = idx[rows, cols]
            exact = np.empty(rows.size)
            step = max(1, _EXACT_CHUNK // queries.shape[1])  # bounds the float64 temporaries
            for s in range(0, rows.size, step):
                exact[s : s + step] = self.exact_distance(
                    queries[rows[s : s + step]], self._reference[members[s : s + step]]
                )
            # Each run occupies contiguous positions; sorting its members by (distance, index)
            # and writing them back into the same positions orders the run exactly.
            order = np.lexsort((members, exact, run[rows, cols], rows))
            idx[rows, cols] = members[order]
        settled = separated[:, k - 1 :].any(axis=1) if not complete else np.ones(len(idx), bool)
        return idx, settled
