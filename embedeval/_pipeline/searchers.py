"""Which searcher an evaluation's options ask for (:func:`make_searcher`).

It lives with the pipeline rather than in :mod:`embedeval._search` because one of its choices,
the Dask cluster's searcher (:mod:`embedeval._pipeline.cluster`), is an execution concern that the
search package knows nothing of.
"""

from __future__ import annotations

import numpy as np

from .._search import (
    ApproximateSearcher,
    Device,
    DeviceSearcher,
    FlatSearcher,
    ShardedSearcher,
    gpu_device,
)
from .._search.sharded import default_shard_size
from .cluster import DaskSearcher


def make_searcher(
    references,
    distance: str,
    *,
    index: str = "flat",
    index_params: str | None = None,
    shard_size: int | None = None,
    stream: bool = False,
    device: str | Device = "cpu",
    client=None,
    seed: int = 0,
):
    """The searcher for a set of options (checked already: they must not conflict).

    In order of precedence: a faiss index-factory string other than ``"flat"`` gives an
    :class:`ApproximateSearcher`; a Dask ``client`` a
    :class:`~embedeval._pipeline.cluster.DaskSearcher`; a device other than ``"cpu"`` a
    :class:`DeviceSearcher`; a ``shard_size`` or ``stream`` a :class:`ShardedSearcher`;
    otherwise a :class:`FlatSearcher`.

    Parameters
    ----------
    references : array-like of shape (n_references, d)
        float32 rows, not prepared (each searcher prepares them); a memory map is read shard by
        shard when sharded.
    distance : {"euclidean", "cosine", "inner_product"}
    index, index_params : str
        See :class:`ApproximateSearcher` (``factory``, ``params``).
    shard_size : int, optional
        References per shard. Default with ``stream`` or ``client``: shards of
        ``_budget.DEFAULT_SHARD_BYTES`` (256 MB).
    stream : bool
        Rebuild each shard at every search (see :class:`ShardedSearcher`).
    device : "cpu", "gpu" or Device
        ``"gpu"`` is :func:`gpu_device` (which raises without torch or a CUDA GPU); a
        :class:`Device` is used as given (torch's CPU device, e.g. in tests).
    client : distributed.Client, optional
    seed : int
        Seeds the training sample of an approximate index.

    Returns
    -------
    ExactSearcher or ApproximateSearcher
    """
    if index != "flat":
        return ApproximateSearcher(references, distance, index, index_params, seed)
    if shard_size is None and (stream or client is not None):
        shard_size = default_shard_size(references.shape[1])
    if client is not None:
        return DaskSearcher(client, references, distance, shard_size)
    if device != "cpu":  # "gpu" or a Device
        return DeviceSearcher(np.asarray(references), distance, gpu_device() if device == "gpu" else device)
    if shard_size is not None:
        return ShardedSearcher(references, distance, shard_size, stream=stream)
    return FlatSearcher(references, distance)
