"""The toy embedding spaces of Musgrave et al. 2020, "A Metric Learning Reality Check".

Two classes in 2-D, points uniform in y in [0, 1] and in x over each class's strips:

1. four strips: class A fills x in [-1, -2/3] and [-1/3, 0], class B x in [0, 1/3] and
   [2/3, 1] (each class split in two, the classes touching at x = 0);
2. two touching halves: class A fills x in [-1, 0], class B x in [0, 1];
3. two separated blocks: class A fills x in [-1, -1/3], class B x in [1/3, 1].

Precision@1 barely tells them apart; R-precision and MAP@R do. The numbers are computed by
:func:`embedeval.evaluate`, the same code that evaluates real models.
"""

from __future__ import annotations

import numpy as np

from ._core.text import aligned_table, format_value, markdown_table
from ._embeddings.evaluate import evaluate
from ._inputs.arrays import check_positive_int
from ._metrics.registry import MUSGRAVE_METRICS
from .result import EvaluationResult

METRICS = MUSGRAVE_METRICS
CLASS_NAMES = ("A", "B")

# (label, x_low, x_high) for every strip, in order.
_STRIPS = {
    1: ((0, -1.0, -2 / 3), (0, -1 / 3, 0.0), (1, 0.0, 1 / 3), (1, 2 / 3, 1.0)),
    2: ((0, -1.0, 0.0), (1, 0.0, 1.0)),
    3: ((0, -1.0, -1 / 3), (1, 1 / 3, 1.0)),
}
TITLES = {1: "four strips (classes split)", 2: "two touching halves", 3: "two separated blocks"}


def make_example(number: int, n: int = 2000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Generate toy example ``number`` (1, 2 or 3) of Musgrave et al. 2020.

    Parameters
    ----------
    number : {1, 2, 3}
        Which example (see the module docstring).
    n : int
        Number of points, split as evenly as possible over the strips (earlier strips take
        the remainder).
    seed : int
        Seed of the generator; the same (number, n, seed) always gives the same points.

    Returns
    -------
    embeddings : numpy.ndarray of shape (n, 2), float32
    labels : numpy.ndarray of shape (n,), int64
        0 for class A, 1 for class B.
    """
    if number not in _STRIPS:
        raise ValueError(f"'number' must be 1, 2 or 3; got {number!r}")
    strips = _STRIPS[number]
    n = check_positive_int(n, "n", minimum=len(strips))
    rng = np.random.default_rng(seed)
    sizes = np.full(len(strips), n // len(strips))
    sizes[: n % len(strips)] += 1
    xs, labels = [], []
    for (label, low, high), size in zip(strips, sizes, strict=True):
        xs.append(np.column_stack([rng.uniform(low, high, size), rng.uniform(0.0, 1.0, size)]))
        labels.append(np.full(size, label, dtype=np.int64))
    return np.concatenate(xs).astype(np.float32), np.concatenate(labels)


def evaluate_examples(n: int = 2000, seed: int = 0) -> dict[int, tuple[np.ndarray, np.ndarray, EvaluationResult]]:
    """Generate the three examples and evaluate each with :data:`METRICS` (leave-one-out, euclidean).

    Returns
    -------
    dict of int to (embeddings, labels, EvaluationResult)
    """
    out = {}
    for number in _STRIPS:
        x, labels = make_example(number, n=n, seed=seed)
        out[number] = (x, labels, evaluate(x, labels, metrics=METRICS))
    return out


def table(results: dict[int, tuple[np.ndarray, np.ndarray, EvaluationResult]], markdown: bool = False) -> str:
    """The metric values of each example, one row per example."""
    head = ["example", *METRICS]
    rows = [[f"{k}: {TITLES[k]}", *(format_value(r.summary[m]) for m in METRICS)] for k, (_, _, r) in results.items()]
    return markdown_table(head, rows) if markdown else aligned_table(head, rows)


def confidence_experiment(
    n: int = 2000, seed: int = 0, error_fraction: float = 0.04, levels=None
) -> dict[str, np.ndarray]:
    """Example 2 with injected label errors whose confidence is raised step by step.

    Clean points get a confidence that grows with their distance from the class boundary
    (x = 0): |x|, ambiguous near the boundary, certain far from it. A fixed random
    ``error_fraction`` of the points has its label flipped, and all of them get the confidence
    ``level`` in turn. A good confidence is low on errors: as ``level`` rises, the
    error-vs-reject areas grow (worse) and the top-1 AUROC falls.

    Returns
    -------
    dict with ``levels``, ``erc_area_precision@1``, ``erc_area_map@r``, ``top1_auroc`` (arrays
    over the levels), and ``embeddings``, ``labels``, ``is_error``, ``base_confidence``.
    """
    from .confidence import error_reject_curve, top1_auroc

    levels = np.linspace(0.0, 1.0, 21) if levels is None else np.asarray(levels, dtype=float)
    x, labels = make_example(2, n=n, seed=seed)
    rng = np.random.default_rng(seed + 1)
    is_error = np.zeros(n, dtype=bool)
    is_error[rng.choice(n, size=max(1, round(error_fraction * n)), replace=False)] = True
    noisy = np.where(is_error, 1 - labels, labels)
    base = np.abs(x[:, 0].astype(np.float64))
    result = evaluate(x, noisy, metrics=("precision@1", "map@r"))
    out = {"levels": levels, "erc_area_precision@1": [], "erc_area_map@r": [], "top1_auroc": []}
    for level in levels:
        conf = np.where(is_error, level, base)
        out["erc_area_precision@1"].append(error_reject_curve(result.per_query["precision@1"], conf).area)
        out["erc_area_map@r"].append(error_reject_curve(result.per_query["map@r"], conf).area)
        out["top1_auroc"].append(top1_auroc(result, conf))
    out = {k: np.asarray(v) for k, v in out.items()}
    out.update(embeddings=x, labels=noisy, is_error=is_error, base_confidence=base, result=result)
    return out
