"""Approximate search: any faiss index-factory string, ranked by its own distances."""

from __future__ import annotations

import faiss
import numpy as np

from .._inputs.arrays import prepare
from .ignored import as_ignored, drop_ignored


class ApproximateSearcher:
    """A faiss index built from an index-factory string, searched approximately.

    Neighbours are ordered by (approximate distance, index); ignored references (the query
    itself, in leave-one-out evaluation) are removed by index. An index that finds fewer than k
    neighbours pads with -1 (not relevant).

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

    exact = False

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

    def search(self, queries: np.ndarray, k: int, ignore=None) -> np.ndarray:
        """Indices of each query's ``k`` nearest references as the index finds them.

        Parameters
        ----------
        queries : numpy.ndarray of shape (n_queries, d), float32
            Prepared as the references are.
        k : int
        ignore : Ignored or numpy.ndarray of shape (n_queries,), optional
            References each query must not be given (see :meth:`ExactSearcher.search`): the
            index is asked for ``k`` plus the most any query ignores, and the ignored ones are
            removed by index.

        Returns
        -------
        numpy.ndarray of shape (n_queries, k), int64
            -1 where the index found fewer than ``k``.
        """
        ignore = as_ignored(ignore)
        extra = 0 if ignore is None else int(ignore.counts.max(initial=0))
        dist, idx = self._index.search(np.ascontiguousarray(queries, dtype=np.float32), min(k + extra, self.size))
        if not self.euclidean:
            dist = -dist
        dist = np.where(idx < 0, np.inf, dist)
        order = np.lexsort((np.where(idx < 0, np.iinfo(np.int64).max, idx), dist), axis=1)
        return drop_ignored(np.take_along_axis(idx, order, 1), k, np.arange(len(idx)), ignore)
