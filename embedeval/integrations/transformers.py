"""``compute_metrics`` for the Hugging Face ``Trainer``: retrieval metrics of the evaluation
embeddings.

The model's evaluation output (``predictions``) is one embedding per example, and the dataset's
labels are class labels; the metrics are :func:`embedeval.evaluate`'s, leave-one-out over the
whole evaluation set::

    trainer = Trainer(model, args, eval_dataset=ds, compute_metrics=compute_metrics(["precision@1", "map@r"]))

With ``TrainingArguments(batch_eval_metrics=True)`` the Trainer calls the function once per batch
(``compute_result=False``) and once at the end (``True``): the batches are kept in an
:class:`embedeval.Accumulator` and evaluated together at the end, so the numbers are the same as
without it. The Trainer puts ``eval_`` before every key.
"""

from __future__ import annotations

from .._embeddings.evaluate import evaluate
from .._metrics.registry import DEFAULT_EMBEDDING_METRICS
from ..accumulator import Accumulator
from . import host, require

require("transformers", "embedeval.integrations.transformers")


def _host(x):
    """A tensor (any device) as a numpy array; a tuple of outputs as its first one."""
    return host(x[0] if isinstance(x, tuple | list) and x and hasattr(x[0], "shape") else x)


def compute_metrics(metrics=DEFAULT_EMBEDDING_METRICS, *, names: str = "safe", **evaluate_kwargs):
    """A function ``f(eval_prediction, compute_result=None) -> dict`` for ``Trainer(compute_metrics=f)``.

    Parameters
    ----------
    metrics : sequence of str
        As :func:`embedeval.evaluate` takes them (default: its default set).
    names : {"safe", "plain"}
        Key spelling, as :meth:`embedeval.EvaluationResult.to_dict`: ``"safe"`` (default) gives
        keys every logger accepts (``precision_at_1``).
    **evaluate_kwargs
        Passed to :func:`embedeval.evaluate` (``distance=``, ``ties=``, ...).

    Returns
    -------
    callable
        ``eval_prediction.predictions`` of shape (n, d) (or a tuple whose first item is) and
        ``eval_prediction.label_ids`` of shape (n,); returns ``{}`` for an intermediate batch.
        Its attribute ``last_result`` holds the last :class:`embedeval.EvaluationResult`.

    Examples
    --------
    >>> import numpy as np
    >>> from types import SimpleNamespace
    >>> f = compute_metrics(["precision@1"])
    >>> f(SimpleNamespace(predictions=np.array([[0.0], [0.1], [1.0], [1.1]]), label_ids=np.array([0, 0, 1, 1])))
    {'precision_at_1': 1.0, 'macro/precision_at_1': 1.0, 'n_evaluated': 4.0, 'n_skipped': 0.0}
    """
    accumulator = Accumulator()
    kwargs = {"metrics": list(metrics), **evaluate_kwargs}

    def values(result):
        compute.last_result = result
        return result.to_dict(names=names)

    def compute(eval_prediction, compute_result=None):
        embeddings, labels = _host(eval_prediction.predictions), _host(eval_prediction.label_ids)
        if compute_result is None:  # the whole evaluation set at once
            return values(evaluate(embeddings, labels, **kwargs))
        accumulator.update(embeddings, labels)
        if not compute_result:
            return {}
        try:
            return values(accumulator.compute(**kwargs))
        finally:
            accumulator.reset()

    compute.last_result = None
    return compute
