"""A Lightning callback: retrieval metrics of the validation embeddings, every epoch.

``validation_step`` returns the batch's embeddings and labels (and, under a
``DistributedSampler``, the samples' dataset indices, so that padded duplicates are dropped)::

    def validation_step(self, batch, batch_idx):
        x, y, idx = batch
        return {"embeddings": self(x), "labels": y, "indices": idx}

    trainer = lightning.Trainer(callbacks=[RetrievalMetrics(metrics=["precision@1", "map@r"])])

At the end of each validation epoch the callback evaluates every validation embedding at once
(leave-one-out by class label, as :func:`embedeval.evaluate`), through
:class:`embedeval.Accumulator`: under ``torch.distributed`` every rank's rows are gathered and
each rank logs the same values, so a ``ModelCheckpoint`` that monitors one of them works on every
rank. Nothing is logged during Lightning's sanity check.
"""

from __future__ import annotations

from .._metrics.registry import DEFAULT_EMBEDDING_METRICS
from ..accumulator import Accumulator
from . import host, require

_lightning = require("lightning.pytorch", "embedeval.integrations.lightning")


class RetrievalMetrics(_lightning.Callback):
    """Evaluate the validation embeddings at each epoch's end and log the values.

    Parameters
    ----------
    metrics : sequence of str
        As :func:`embedeval.evaluate` takes them (default: its default set).
    prefix : str
        Put before every logged key (``"val/precision_at_1"``).
    names : {"safe", "plain"}
        ``"safe"`` (default): keys in the characters every logger accepts
        (:meth:`embedeval.EvaluationResult.to_dict`); ``"plain"``: the metric names as they are.
    embeddings_key, labels_key, indices_key, groups_key : str
        Where the callback finds each batch's embeddings (n, d), labels (n,), optional dataset
        indices (n,) and optional groups (n,: category, language, ...; each metric is then also
        logged per group, ``val/group/<group>/<metric>``) in ``validation_step``'s returned dict.
    **evaluate_kwargs
        Passed to :func:`embedeval.evaluate` (``distance=``, ``ties=``, ...).

    Attributes
    ----------
    result : embedeval.EvaluationResult or None
        The last epoch's result, with per-query values and definitions.
    """

    def __init__(
        self,
        metrics=DEFAULT_EMBEDDING_METRICS,
        *,
        prefix: str = "val/",
        names: str = "safe",
        embeddings_key: str = "embeddings",
        labels_key: str = "labels",
        indices_key: str = "indices",
        groups_key: str = "groups",
        **evaluate_kwargs,
    ):
        super().__init__()
        self.metrics, self.prefix, self.names = list(metrics), prefix, names
        self.keys = (embeddings_key, labels_key, indices_key, groups_key)
        self.evaluate_kwargs = evaluate_kwargs
        self.accumulator = Accumulator()
        self.result = None

    def on_validation_epoch_start(self, trainer, pl_module) -> None:
        self.accumulator.reset()

    def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0) -> None:
        embeddings_key, labels_key, indices_key, groups_key = self.keys
        if not isinstance(outputs, dict) or embeddings_key not in outputs or labels_key not in outputs:
            raise ValueError(
                f"RetrievalMetrics needs validation_step to return a dict with {embeddings_key!r} and "
                f"{labels_key!r}; got {type(outputs).__name__}"
                + (f" with keys {sorted(outputs)}" if isinstance(outputs, dict) else "")
            )
        labels, groups = (host(outputs.get(key)) for key in (labels_key, groups_key))
        self.accumulator.update(outputs[embeddings_key], labels, indices=outputs.get(indices_key), groups=groups)

    def on_validation_epoch_end(self, trainer, pl_module) -> None:
        if trainer.sanity_checking or not len(self.accumulator):
            self.accumulator.reset()
            return
        self.result = self.accumulator.compute(metrics=self.metrics, **self.evaluate_kwargs)
        for key, value in self.result.to_dict(self.prefix, names=self.names).items():
            # every rank holds the same value (the Accumulator evaluates once and shares it)
            pl_module.log(key, float(value), sync_dist=False, rank_zero_only=False)
        self.accumulator.reset()
