"""Accumulating validation batches in a training loop, on one process or under torch.distributed.

>>> acc = Accumulator()
>>> for batch in val_loader:                      # doctest: +SKIP
...     acc.update(model(batch.x), batch.y, indices=batch.idx)
>>> result = acc.compute(metrics=["precision@1", "map@r"])  # doctest: +SKIP
>>> acc.reset()                                   # doctest: +SKIP

Batches are kept as they come (a list of host arrays, concatenated once at the end), so storage
grows linearly, never by quadratic re-copying. Under ``torch.distributed`` (initialised, more
than one process) :meth:`Accumulator.compute` gathers every rank's rows, removes the duplicates
that a ``DistributedSampler`` pads in (by the ``indices`` given to :meth:`update`), evaluates
once on rank 0 and gives every rank the same result. torch is imported only in that case.
"""

from __future__ import annotations

import numpy as np

from ._embeddings.evaluate import evaluate
from ._inputs.arrays import _to_numpy, as_labels
from .result import EvaluationResult


class Accumulator:
    """Rows of embeddings, labels and sample indices collected batch by batch.

    Examples
    --------
    >>> import numpy as np
    >>> acc = Accumulator()
    >>> acc.update(np.array([[0.0], [0.1]]), ["a", "a"])
    >>> acc.update(np.array([[1.0], [1.2]]), ["b", "b"])
    >>> acc.compute(metrics=["precision@1"]).summary
    {'precision@1': 1.0}
    """

    def __init__(self):
        self.reset()

    def reset(self) -> None:
        """Forget every batch (call at the start of each validation)."""
        self._embeddings: list[np.ndarray] = []
        self._labels: list[np.ndarray] = []
        self._indices: list[np.ndarray] | None = None
        self._groups: list[np.ndarray] | None = None
        self._dim: int | None = None

    def __len__(self) -> int:
        return sum(len(e) for e in self._embeddings)

    def update(self, embeddings, labels, *, indices=None, groups=None) -> None:
        """Add one batch.

        Parameters
        ----------
        embeddings : array-like of shape (b, d)
            A torch tensor on any device (detached and copied to host memory), a numpy array, ...
        labels : array-like of shape (b,)
            One hashable label per row, read as :func:`embedeval.evaluate` reads labels (64-bit
            ids stay ints, ``1`` and ``"1"`` differ, tuples are labels, NaN is refused). Batches
            may differ in label type (an int64 batch, then a uint64 one, or an empty one): labels
            are joined without coercion.
        indices : array-like of shape (b,) of int, optional
            Each row's position in the validation set. Give them in every batch or in none;
            with them, rows seen twice (a ``DistributedSampler`` pads the last batch with
            repeats) count once, and rows are evaluated in index order.
        groups : array-like of shape (b,), optional
            Each row's group (category, language, camera, ...), read as labels are. Give them in
            every batch or in none; with them, :meth:`compute` also averages each metric within
            each group (``result.per_group``), as ``evaluate(..., groups=)`` does.
        """
        emb = _to_numpy(embeddings, "embeddings")
        if emb.ndim != 2 or emb.dtype.kind not in "biuf":
            raise ValueError(
                f"'embeddings' of a batch must be a 2-D array of numbers (b, d); got {emb.dtype} {emb.shape}"
            )
        if self._dim is not None and emb.shape[1] != self._dim:
            raise ValueError(
                f"'embeddings' must keep the dimension of earlier batches ({self._dim}); got {emb.shape[1]}"
            )
        lab = as_labels(labels, emb.shape[0], "labels", "embeddings of the batch")
        for name, given, seen in (("indices", indices, self._indices), ("groups", groups, self._groups)):
            if (given is None) != (seen is None) and self._embeddings:
                raise ValueError(f"'{name}' must be given with every batch or with none; got a mix")
        grp = None if groups is None else as_labels(groups, emb.shape[0], "groups", "embeddings of the batch")
        if indices is not None:
            idx = _to_numpy(indices, "indices")
            if idx.shape != (emb.shape[0],) or idx.dtype.kind not in "iu":
                raise ValueError(
                    f"'indices' must be one int per row of the batch ({emb.shape[0]}); got {idx.dtype} {idx.shape}"
                )
            self._indices = [*(self._indices or []), idx.astype(np.int64)]
        self._embeddings.append(np.array(emb, dtype=np.float32))  # a copy: the caller may reuse its buffer
        self._labels.append(lab.copy())
        if grp is not None:
            self._groups = [*(self._groups or []), grp.copy()]
        self._dim = emb.shape[1]

    def _local(self) -> tuple:
        if not self._embeddings:
            raise ValueError("the accumulator is empty: call update() with at least one batch before compute()")
        indices = None if self._indices is None else np.concatenate(self._indices)
        groups = None if self._groups is None else join_labels(self._groups)
        return np.concatenate(self._embeddings), join_labels(self._labels), indices, groups

    def compute(self, **evaluate_kwargs) -> EvaluationResult:
        """Evaluate everything accumulated (on every rank alike under torch.distributed).

        Parameters
        ----------
        **evaluate_kwargs
            As in :func:`embedeval.evaluate` (``metrics``, ``distance``, ...); ``groups`` come
            from :meth:`update`, not from here.

        Returns
        -------
        EvaluationResult
        """
        if "groups" in evaluate_kwargs:
            raise ValueError("'groups' of an Accumulator are given per batch, to update(); not to compute()")
        embeddings, labels, indices, groups = _gather(*self._local())
        if indices is not None:
            indices, first = np.unique(indices, return_index=True)  # sorted, each sample once
            embeddings, labels = embeddings[first], labels[first]
            groups = None if groups is None else groups[first]
        return _on_rank_zero(lambda: evaluate(embeddings, labels, groups=groups, **evaluate_kwargs))

    evaluate = compute


def join_labels(batches: list[np.ndarray]) -> np.ndarray:
    """Label batches as one array, without coercion: one dtype stays that dtype; several (int64 and
    uint64, ints and strings) give an object array of the Python values. Empty batches count for
    nothing, so an empty first batch fixes no type."""
    kept = [b for b in batches if b.size] or batches[:1]
    if len({b.dtype for b in kept}) == 1 and kept[0].dtype != object:
        return np.concatenate(kept)
    return np.fromiter((v for b in kept for v in b.tolist()), dtype=object, count=sum(b.size for b in kept))


def _distributed():
    """torch.distributed when it runs with more than one process, else None."""
    import sys

    if "torch" not in sys.modules:  # never import torch for a user who does not use it
        return None
    import torch.distributed as dist

    if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
        return dist
    return None


def _gather(embeddings, labels, indices, groups):
    """Every rank's rows, in rank order (all_gather_object: any label type, any row counts)."""
    dist = _distributed()
    if dist is None:
        return embeddings, labels, indices, groups
    parts = [None] * dist.get_world_size()
    dist.all_gather_object(parts, (embeddings, labels, indices, groups))
    for at, name, mine in ((2, "indices", indices), (3, "groups", groups)):
        if any((p[at] is None) != (mine is None) for p in parts):
            raise ValueError(f"'{name}' must be given on every rank or on none")
    return (
        np.concatenate([p[0] for p in parts]),
        join_labels([p[1] for p in parts]),
        None if indices is None else np.concatenate([p[2] for p in parts]),
        None if groups is None else join_labels([p[3] for p in parts]),
    )


def _on_rank_zero(work):
    """``work()`` on rank 0 only, its result (or its error) given to every rank."""
    dist = _distributed()
    if dist is None:
        return work()
    box = [None]
    if dist.get_rank() == 0:
        try:
            box[0] = ("ok", work())
        except Exception as exc:  # raised on every rank, not only on rank 0
            box[0] = ("error", exc)
    dist.broadcast_object_list(box, src=0)
    status, value = box[0]
    if status == "error":
        raise value
    return value
