"""Candidates: what a source hands to the exact ranking, and the exact merge of several sources."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import faiss
import numpy as np

from .error_bound import FLOAT32_UNIT_ROUNDOFF


@dataclass
class Candidates:
    """Each query's candidate references, nearest first by a rounded distance.

    Distances are "smaller is nearer": the squared euclidean distance, or the inner product
    negated (negation is exact, so the error bound is unchanged).

    Attributes
    ----------
    dist : numpy.ndarray of shape (n_queries, m)
        Candidate distances, ascending along each row, padded with +inf after ``length``.
    idx : numpy.ndarray of shape (n_queries, m), int64
        Candidate reference indices, padded with -1 after ``length``.
    length : numpy.ndarray of shape (n_queries,)
        How many entries of each row are real candidates.
    worst : numpy.ndarray of shape (n_queries,), float64
        No reference left out of a row has a distance below its ``worst`` (+inf when the
        source left nothing out).
    exact : numpy.ndarray of shape (n_queries, m), float64, optional
        The candidates' float64 distances, when their source has computed them already.
    unit_roundoff : float
        The unit roundoff u of ``dist``: 2**-24 for faiss's float32, 2**-53 for float64 BLAS.
    """

    dist: np.ndarray
    idx: np.ndarray
    length: np.ndarray
    worst: np.ndarray
    exact: np.ndarray | None = None
    unit_roundoff: float = FLOAT32_UNIT_ROUNDOFF


def flat_index(vectors: np.ndarray, euclidean: bool):
    """A faiss flat (brute-force) index holding ``vectors`` of shape (n, d), as float32."""
    index = faiss.IndexFlatL2(vectors.shape[1]) if euclidean else faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


class ArrayIndex:
    """A flat index over an array it does not copy: what :func:`flat_index` gives, without
    faiss's own copy of the vectors.

    ``search`` is faiss's exhaustive search (``faiss.knn``: the kernels ``IndexFlatL2`` and
    ``IndexFlatIP`` run, with the same distances, neighbours and order) over ``vectors``, which
    must not change while the index is in use.

    Parameters
    ----------
    vectors : numpy.ndarray of shape (n, d)
        Kept as float32, C-contiguous (a copy only where it is neither).
    euclidean : bool
        Squared L2 distances, ascending; else inner products, descending.
    """

    def __init__(self, vectors: np.ndarray, euclidean: bool):
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.ntotal = len(self.vectors)
        self._metric = faiss.METRIC_L2 if euclidean else faiss.METRIC_INNER_PRODUCT

    def search(self, queries: np.ndarray, k: int):
        """``(distances (b, k) float32, indices (b, k) int64)``, as ``faiss.Index.search``."""
        return faiss.knn(queries, self.vectors, k, metric=self._metric)


def from_index(index, queries: np.ndarray, n: int, euclidean: bool) -> Candidates:
    """One faiss search: the ``n`` best candidates of every query (fewer if the index is smaller).

    Parameters
    ----------
    index : faiss.Index or ArrayIndex
        A flat index (CPU or device) over references, indexed from 0.
    queries : numpy.ndarray of shape (b, d)
    n : int
    euclidean : bool
        True for an L2 index (squared distances), False for an inner-product index.

    Returns
    -------
    Candidates
        Every row full (``length`` = min(n, index.ntotal)); ``worst`` is the last candidate's
        distance, or +inf when the index returned every reference.
    """
    n = min(n, index.ntotal)
    dist, idx = index.search(np.ascontiguousarray(queries, dtype=np.float32), n)
    if not euclidean:
        dist = -dist
    worst = np.full(len(queries), np.inf) if n == index.ntotal else dist[:, -1].astype(np.float64)
    return Candidates(dist, idx, np.full(len(idx), idx.shape[1]), worst)


def merge(parts: Sequence[Candidates], offsets: Sequence[int]) -> Candidates:
    """Merge the candidates of several shards of the references, exactly.

    Each query keeps the candidates no farther than the nearest of the shards' ``worst``
    distances: beyond it, a shard may have left out a nearer reference.

    Parameters
    ----------
    parts : sequence of Candidates
        One per shard, for the same queries, every row full (as :func:`from_index` gives), all
        with ``exact`` or all without.
    offsets : sequence of int
        The index of each shard's first reference in the whole reference set.

    Returns
    -------
    Candidates
        Of shape (b, sum of the parts' widths), padded after ``length``.
    """
    dist = np.concatenate([p.dist for p in parts], axis=1)
    idx = np.concatenate([p.idx + off for p, off in zip(parts, offsets, strict=True)], axis=1)
    exact = None if parts[0].exact is None else np.concatenate([p.exact for p in parts], axis=1)
    worst = np.min(np.stack([p.worst for p in parts]), axis=0)
    order = np.argsort(dist, axis=1)  # ties in any order: the ranking sorts runs by (distance, index)
    dist, idx = np.take_along_axis(dist, order, 1), np.take_along_axis(idx, order, 1)
    if exact is not None:
        exact = np.take_along_axis(exact, order, 1)
    keep = dist <= worst[:, None]
    dist = np.where(keep, dist, np.inf)
    idx = np.where(keep, idx, -1)
    return Candidates(dist, idx, keep.sum(axis=1), worst, exact, max(p.unit_roundoff for p in parts))
