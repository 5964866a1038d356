"""Exact k-nearest-neighbour search: faiss proposes, float64 decides, ties go to the lower index.

The ranking this module returns is the one a full stable sort of float64 distances would give:
references ordered by their distance to the query computed in float64 from the (float32) input
vectors, and references at equal distance by index, lower first. It never depends on how
queries are blocked, on thread counts, on the BLAS kernel faiss happens to use, or on how the
references are split into shards.

faiss's flat search computes distances in float32 through BLAS, whose rounding depends on the
shape of each call, and among references tied at the k-th distance it keeps an arbitrary subset.
So each search gathers more candidates than needed, together with a distance ``worst`` that no
left-out reference beats, and uses a rigorous bound E on the float32 error of each distance
(|fl(d) - d| <= E for every reference):

* candidates whose faiss distances differ by more than 2E are in their true order;
* runs of candidates closer than that are recomputed in float64 and sorted by (distance, index);
* a query's top k is settled once such a gap lies after its k-th candidate (nothing left out can
  then come before it); a query that is not settled is searched again with twice as many.

For float32 sums of d products the bound is Higham's gamma_d (any summation order, FMA or not):
|fl(q.r) - q.r| <= d u ||q|| ||r|| / (1 - d u), u = 2**-24; faiss's euclidean distance
||q||^2 + ||r||^2 - 2 q.r adds two roundings, so E = (d + 4) u (||q|| + max ||r||)^2 for
euclidean and E = (d + 3) u ||q|| max ||r|| for inner products (with 1% slack).

Candidates come from one faiss index (:class:`ExactIndex`, which for searches deeper than an
eighth of the references uses float64 BLAS distances instead, with their much smaller bound),
from several shards of the reference
set merged exactly (:class:`ShardedIndex`, which can also rebuild each shard from a memory-mapped
file at every search so the references never sit in memory), from shards held by Dask workers
(:mod:`embedeval.distributed`), or from a device whose searches return a limited number of
results (:class:`SplitIndex`: faiss on a GPU, 2048), split as finely as a ranking's depth needs.
Merging keeps, per query, the candidates of every shard that are no farther than the nearest of
the shards' ``worst`` distances.

The float32 bound holds for any order of float32 operations, FMA or not, which covers faiss's
CPU kernels and its GPU search (cuBLAS with reduced-precision reductions disallowed; never
TF32 or float16 here).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

import faiss
import numpy as np

from . import _budget

_UNIT_ROUNDOFF = 2.0**-24
GPU_MAX_K = 2048  # the most results one faiss GPU search returns (faiss >= 1.7.3)


def check_directions(vectors: np.ndarray, name: str, chunk: int = _budget.SCAN_ROWS) -> None:
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


def flat_index(vectors: np.ndarray, euclidean: bool):
    index = faiss.IndexFlatL2(vectors.shape[1]) if euclidean else faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def exact_distance(queries: np.ndarray, references: np.ndarray, euclidean: bool) -> np.ndarray:
    """float64 distance of each (query, reference) row pair, smaller is nearer: the squared
    euclidean distance, or minus the inner product. Shapes (m, d) -> (m,)."""
    if euclidean:
        diff = np.subtract(references, queries, dtype=np.float64)
        return np.multiply(diff, diff, out=diff).sum(axis=1)
    return -np.multiply(references, queries, dtype=np.float64).sum(axis=1)


def exact_distances(queries: np.ndarray, references: np.ndarray, idx: np.ndarray, euclidean: bool) -> np.ndarray:
    """float64 distance of each query to each of its candidates ``references[idx[i]]``, in
    chunks that bound the temporaries; shapes (b, d), (n, d), (b, k) -> (b, k)."""
    out = np.empty(idx.shape)
    rows = max(1, _budget.RECOMPUTE_ELEMENTS // max(1, idx.shape[1] * queries.shape[1]))
    for s in range(0, len(idx), rows):
        block = idx[s : s + rows]
        q = np.repeat(queries[s : s + rows], block.shape[1], axis=0)
        out[s : s + rows] = exact_distance(q, references[block.ravel()], euclidean).reshape(block.shape)
    return out


def max_norm(vectors: np.ndarray) -> float:
    """The largest L2 norm of the rows (float64), for the float32 error bound."""
    return float(np.sqrt(np.einsum("ij,ij->i", vectors, vectors, dtype=np.float64).max()))


def shard_candidates(index, queries: np.ndarray, n: int, euclidean: bool):
    """One index's ``n`` best candidates as (distance, index, worst): distances ascending (inner
    products negated; negation is exact), and ``worst`` per query, the distance no reference
    of the index left out beats (+inf when the index returned everything)."""
    n = min(n, index.ntotal)
    dist, idx = index.search(np.ascontiguousarray(queries, dtype=np.float32), n)
    if not euclidean:
        dist = -dist
    worst = np.full(len(queries), np.inf) if n == index.ntotal else dist[:, -1].astype(np.float64)
    return dist, idx, worst


@dataclass
class Candidates:
    """Per query: candidate distances (ascending) and indices, padded with +inf / -1 after
    ``length``; every reference not among them has a faiss distance >= ``worst``."""

    dist: np.ndarray
    idx: np.ndarray
    length: np.ndarray
    worst: np.ndarray
    exact: np.ndarray | None = None  # float64 distances, when the gatherer already has them
    unit_roundoff: float = _UNIT_ROUNDOFF  # of ``dist``: float32 from faiss, 2**-53 from float64 BLAS


def searched(index, queries: np.ndarray, n: int, euclidean: bool) -> Candidates:
    """:class:`Candidates` from one index's ``n`` best (every row full, no padding)."""
    dist, idx, worst = shard_candidates(index, queries, n, euclidean)
    return Candidates(dist, idx, np.full(len(idx), idx.shape[1]), worst)


def merge(parts, offsets) -> Candidates:
    """Merge (dist, idx, worst[, exact]) of several shards: keep each query's candidates that are
    no farther than the nearest shard ``worst`` (beyond it a shard may have left a nearer one out)."""
    dist = np.concatenate([p[0] for p in parts], axis=1)
    idx = np.concatenate([p[1] + off for p, off in zip(parts, offsets, strict=True)], axis=1)
    exact = np.concatenate([p[3] for p in parts], axis=1) if len(parts[0]) > 3 else None
    worst = np.min(np.stack([p[2] for p in parts]), axis=0)
    order = np.argsort(dist, axis=1)  # ties in any order: _rank sorts runs by (distance, index)
    dist, idx = np.take_along_axis(dist, order, 1), np.take_along_axis(idx, order, 1)
    if exact is not None:
        exact = np.take_along_axis(exact, order, 1)
    keep = dist <= worst[:, None]
    dist = np.where(keep, dist, np.inf)
    idx = np.where(keep, idx, -1)
    return Candidates(dist, idx, keep.sum(axis=1), worst, exact)


class _Ranker:
    """Exact ranking over gathered candidates; subclasses say where candidates come from."""

    size: int
    euclidean: bool
    max_norm: float

    def _gather(self, queries: np.ndarray, n: int) -> Candidates:  # pragma: no cover - abstract
        raise NotImplementedError

    def _reference_rows(self, idx: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def _error_bound(self, queries: np.ndarray, unit_roundoff: float) -> np.ndarray:
        """E per query: no gathered distance of that query is off by more."""
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

        Returns ``(ranked, settled)``: ranked of shape (b, k), the excluded reference removed.
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
                exact = np.empty(rows.size)
                step = max(1, _budget.RECOMPUTE_ELEMENTS // queries.shape[1])  # small chunks stay in cache
                for s in range(0, rows.size, step):
                    sl = slice(s, s + step)
                    exact[sl] = exact_distance(queries[rows[sl]], self._reference_rows(members[sl]), self.euclidean)
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
    """
    by_distance = np.argsort(exact)
    rank = np.empty(exact.size, dtype=np.int64)
    rank[by_distance] = np.arange(exact.size)
    order = np.argsort(run * exact.size + rank)  # run ids are int64: no overflow
    sorted_run, sorted_exact = run[order], exact[order]
    if ((sorted_run[1:] == sorted_run[:-1]) & (sorted_exact[1:] == sorted_exact[:-1])).any():
        return np.lexsort((members, exact, run))
    return order


class _InMemory(_Ranker):
    """A ranker over prepared reference vectors held in memory: float64 rows for recomputation
    come from them, and so do the float64 distances of deep searches."""

    def __init__(self, reference: np.ndarray, distance: str):
        self.euclidean = distance == "euclidean"
        self._reference = prepare(reference, distance)
        self.size = self._reference.shape[0]
        self.max_norm = max_norm(self._reference)
        self._dense, self._dense_lock = None, threading.Lock()

    def _deep_candidates(self, queries: np.ndarray, n: int) -> Candidates:
        """Candidates from float64 BLAS distances to every reference in memory (``_reference``).

        Ranked deeper than an eighth of the references (a class holding much of the data),
        faiss's float32 candidates lie so close together that most would fall within their
        error bound and be recomputed; float64 distances have a 2**29 times smaller bound.
        The float64 copy is made once, by whichever thread gets here first.
        """
        with self._dense_lock:
            if self._dense is None:
                self._dense = _Float64Distances(self._reference, self.euclidean)
        return self._dense.candidates(queries, n)

    def _reference_rows(self, idx):
        return self._reference[idx]


class ExactIndex(_InMemory):
    """A flat (brute-force) faiss index over reference vectors in memory, searched exactly.

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
    distance : {"euclidean", "cosine", "inner_product"}
        Cosine normalises the references (:func:`prepare`) and ranks by inner product.
    """

    def __init__(self, reference: np.ndarray, distance: str):
        super().__init__(reference, distance)
        self._index = flat_index(self._reference, self.euclidean)

    def _gather(self, queries, n):
        if 8 * n > self.size:
            return self._deep_candidates(queries, n)
        return searched(self._index, queries, n, self.euclidean)


class ShardedIndex(_Ranker):
    """Reference rows split into shards of ``shard_size``, each searched by faiss, merged exactly.

    Parameters
    ----------
    reference : array-like of shape (n_references, d)
        Anything that slices into float32 rows, e.g. a memory-mapped .npy (prepared already).
    distance : {"euclidean", "cosine", "inner_product"}
    shard_size : int
        References per shard.
    in_memory : bool
        Keep every shard's index (fast); False rebuilds each shard from ``reference`` at every
        search, so only one shard is in memory at a time (for reference sets larger than RAM).
    """

    def __init__(self, reference, distance: str, shard_size: int, in_memory: bool = True):
        self.euclidean = distance == "euclidean"
        self._distance = distance
        self._reference = reference
        self.size = reference.shape[0]
        self._bounds = [(s, min(s + shard_size, self.size)) for s in range(0, self.size, shard_size)]
        self._indexes = [flat_index(self._shard(a, b), self.euclidean) for a, b in self._bounds] if in_memory else None
        # one read of the references, for the float32 error bound
        self.max_norm = max(max_norm(self._shard(a, b)) for a, b in self._bounds)

    def _shard(self, a: int, b: int) -> np.ndarray:
        return prepare(np.asarray(self._reference[a:b], dtype=np.float32), self._distance)

    def _gather(self, queries, n):
        parts = []
        for i, (a, b) in enumerate(self._bounds):
            index = self._indexes[i] if self._indexes is not None else flat_index(self._shard(a, b), self.euclidean)
            parts.append(shard_candidates(index, queries, n, self.euclidean))
        return merge(parts, [a for a, _ in self._bounds])

    def _reference_rows(self, idx):
        order = np.argsort(idx, kind="stable")  # sorted reads are kinder to a memory map
        rows = np.empty((idx.size, self._reference.shape[1]), dtype=np.float32)
        rows[order] = prepare(np.asarray(self._reference[idx[order]], dtype=np.float32), self._distance)
        return rows


class SplitIndex(_InMemory):
    """Flat search on a device whose searches return at most ``max_k`` results (faiss on a GPU:
    2048), for rankings of any depth.

    A search for ``n`` candidates with ``n`` above the limit splits the references into
    shards, each asked for at most ``max_k``, and merges them exactly (:func:`merge`). A query
    that the merge leaves unsettled is searched again with twice as many candidates, as
    everywhere; once a shard would have to return more than ``max_k``, the references are
    split twice as finely. Splits only get finer (the device holds one copy of the
    references), and a finer split costs no more distance computations, only more calls.
    Rankings deeper than an eighth of the references use float64 BLAS distances on the CPU,
    as :class:`ExactIndex` does: that choice is about precision, not about the limit.

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
    distance : {"euclidean", "cosine", "inner_product"}
    max_k : int
        The most results one device search returns.
    to_device : callable
        Moves a CPU faiss index to the device (e.g. :func:`gpu_mover`); searches on it are
        serialised, since faiss's GPU indexes are not safe to search from several threads.
    """

    def __init__(self, reference: np.ndarray, distance: str, max_k: int, to_device):
        super().__init__(reference, distance)
        self.max_k = max_k
        self._to_device = to_device
        self._split: tuple[list[int], list] = ([], [])  # shard offsets, device indexes
        self._lock = threading.Lock()  # one search on the device at a time

    def _shards(self, n_shards: int):
        """The references in at least ``n_shards`` equal shards on the device (made on demand)."""
        offsets, indexes = self._split
        if len(indexes) < n_shards:
            bounds = np.linspace(0, self.size, n_shards + 1).astype(np.int64)
            offsets = [int(a) for a in bounds[:-1]]
            indexes = [
                self._to_device(flat_index(self._reference[a:b], self.euclidean)) for a, b in itertools.pairwise(bounds)
            ]
            self._split = (offsets, indexes)
        return self._split

    def _gather(self, queries, n):
        if 8 * n > self.size:
            return self._deep_candidates(queries, n)
        with self._lock:
            n_shards = max(len(self._split[1]), 1)
            while -(-n // n_shards) > self.max_k:  # a shard would have to return more than it can
                n_shards *= 2
            offsets, indexes = self._shards(n_shards)
            if len(indexes) == 1:
                return searched(indexes[0], queries, n, self.euclidean)
            # Each shard returns a share of n with some to spare, within the limit; the merge
            # keeps only what is certain, and unsettled queries come back with twice the n.
            per_shard = min(self.max_k, -(-n // len(indexes)) + max(16, n // (4 * len(indexes))))
            parts = [shard_candidates(index, queries, per_shard, self.euclidean) for index in indexes]
        return merge(parts, offsets)


def gpu_mover():
    """A function that moves a CPU faiss index to every visible GPU (replicated, queries split
    between them), or a ValueError saying why there is no GPU to move to."""
    n_gpus = faiss.get_num_gpus() if hasattr(faiss, "get_num_gpus") else 0
    if n_gpus == 0 or not hasattr(faiss, "StandardGpuResources"):
        raise ValueError(
            "'device' 'gpu' needs a faiss build with GPU support and a visible GPU; "
            f"got faiss {faiss.__version__} reporting {n_gpus} GPU(s) (faiss-cpu has none: install a faiss GPU build)"
        )
    resources = [faiss.StandardGpuResources() for _ in range(n_gpus)]  # one per GPU, shared by all shards
    return lambda index: faiss.index_cpu_to_gpu_multiple_py(resources, index)


class ApproximateIndex:
    """A faiss index built from an index-factory string, searched approximately.

    Neighbours are ordered by (approximate distance, index); the query itself is removed by
    index. An index that finds fewer than k neighbours pads with -1 (not relevant).

    Parameters
    ----------
    reference : array-like of shape (n_references, d)
    distance : {"euclidean", "cosine", "inner_product"}
    factory : str
        A faiss index-factory string, e.g. ``"HNSW32"``, ``"IVF1024,Flat"``, ``"IVF256,PQ16"``.
    params : str, optional
        faiss search parameters, e.g. ``"efSearch=128"`` or ``"nprobe=16"``.
    seed : int
        Seeds the training sample of indexes that need training (IVF, PQ).
    """

    def __init__(self, reference, distance: str, factory: str, params: str | None = None, seed: int = 0):
        self.euclidean = distance == "euclidean"
        ref = prepare(np.ascontiguousarray(reference, dtype=np.float32), distance)
        metric = faiss.METRIC_L2 if self.euclidean else faiss.METRIC_INNER_PRODUCT
        try:
            self._index = faiss.index_factory(ref.shape[1], factory, metric)
        except RuntimeError as exc:
            raise ValueError(
                f"'index' must be 'flat' or a faiss index-factory string such as 'HNSW32' or 'IVF1024,Flat'; "
                f"got {factory!r} ({str(exc).strip().splitlines()[-1]})"
            ) from None
        if not self._index.is_trained:
            rng = np.random.default_rng(seed)
            sample = ref[np.sort(rng.choice(len(ref), size=min(len(ref), 100_000), replace=False))]
            self._index.train(sample)
        self._index.add(ref)
        if params:
            try:
                faiss.ParameterSpace().set_index_parameters(self._index, params)
            except RuntimeError as exc:
                raise ValueError(f"'index_params' {params!r} do not apply to {factory!r}: {str(exc).strip()}") from None
        self.size = ref.shape[0]

    def search(self, queries, k, exclude=None, query_groups=None, reference_groups=None):
        extra = 0 if exclude is None else 1
        dist, idx = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), min(k + extra, self.size))
        if not self.euclidean:
            dist = -dist
        dist = np.where(idx < 0, np.inf, dist)
        order = np.lexsort((np.where(idx < 0, np.iinfo(np.int64).max, idx), dist), axis=1)
        idx = np.take_along_axis(idx, order, 1)
        if exclude is not None:
            is_self = idx == exclude[:, None]
            keep = np.argsort(is_self, axis=1, kind="stable")  # self (if found) to the end
            idx = np.take_along_axis(idx, keep, 1)
        return idx[:, :k]


class _Float64Distances:
    """Candidates from float64 BLAS distances to every reference (for deep searches).

    Memory: a float64 copy of the references and one (rows x references) float64 block, with
    rows chosen to keep that block near 32 MB.
    """

    def __init__(self, reference: np.ndarray, euclidean: bool):
        self.euclidean = euclidean
        self.reference = reference.astype(np.float64)
        self.norms = np.einsum("ij,ij->i", self.reference, self.reference)
        self.size = reference.shape[0]

    def candidates(self, queries: np.ndarray, n: int) -> Candidates:
        rows = max(1, _budget.DENSE_ELEMENTS // self.size)
        parts = [self._rows(queries[s : s + rows], n) for s in range(0, len(queries), rows)]
        return Candidates(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in ("dist", "idx", "length", "worst")),
            unit_roundoff=2.0**-53,
        )

    def _rows(self, queries: np.ndarray, n: int) -> Candidates:
        q = queries.astype(np.float64)
        dist = -2.0 * (q @ self.reference.T)  # ||q||^2 is the same for a whole row: added after
        if self.euclidean:
            dist += self.norms
        else:
            dist *= 0.5
        if n < self.size:
            part = np.argpartition(dist, n, axis=1)
            idx = part[:, :n]
            # the (n+1)-th smallest: every reference left out is at least as far
            worst = np.take_along_axis(dist, part[:, n : n + 1], 1)[:, 0]
            cand = np.take_along_axis(dist, idx, 1)
        else:
            idx = np.broadcast_to(np.arange(self.size), dist.shape)
            cand, worst = dist, np.full(len(dist), np.inf)
        order = np.argsort(cand, axis=1)  # ties in any order: _rank sorts runs by (distance, index)
        idx, cand = np.take_along_axis(idx, order, 1), np.take_along_axis(cand, order, 1)
        if self.euclidean:
            q_norms = np.einsum("ij,ij->i", q, q)
            cand = cand + q_norms[:, None]
            worst = worst + q_norms
        return Candidates(cand, idx, np.full(len(idx), idx.shape[1]), worst)
