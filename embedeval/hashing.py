"""Deep hashing's evaluation protocol on binary codes, exactly and with ties named.

Binary codes are evaluated by :func:`embedeval.evaluate` with ``distance="hamming"``; the
protocol's numbers are registry metrics there:

* mAP over the whole database: ``map``; mAP@k as deep-hashing code computes it (DPSH, and
  the PyTorch re-implementations): ``map_hits@k``, AP over the top k divided by the relevant
  items *within the top k*, 0 for a query without one (``map@k`` is trec_eval's, divided by R);
* precision within Hamming radius r (r = 2 usually): ``precision_radius@r``, 0 for a query
  with no reference that near (the convention of KSH and DPSH); ``recall_radius@r``.

This module adds the precision-recall curve over Hamming radii (:func:`pr_curve`) and
:func:`pack_bits`. Every reference at one Hamming distance is one tie group, which a radius
never splits, so the curve is the same under every tie rule; the rank-based numbers are not,
and ``ties="expected"`` gives their exact expected value over the tied orders.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._inputs.codes import HAMMING, as_codes, pack_bits
from .result import EvaluationResult

__all__ = ["RadiusCurve", "pack_bits", "pr_curve"]


@dataclass(frozen=True)
class RadiusCurve:
    """Precision and recall within each Hamming radius, averaged over the evaluated queries.

    Attributes
    ----------
    radius : numpy.ndarray of shape (d + 1,)
        0, 1, ..., d (the code length).
    precision : numpy.ndarray of shape (d + 1,)
        Mean over queries of (relevant references within the radius) / (references within
        it), a query with none within it counting 0.
    recall : numpy.ndarray of shape (d + 1,)
        Mean over queries of (relevant references within the radius) / R.
    result : EvaluationResult
        The per-query values (``precision_radius@t``, ``recall_radius@t``), for intervals.
    """

    radius: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    result: EvaluationResult

    def __repr__(self) -> str:
        r2 = min(2, self.radius.size - 1)
        return (
            f"RadiusCurve(d={self.radius.size - 1}, n_queries={self.result.n_evaluated}, "
            f"precision@radius{r2}={self.precision[r2]:.4f}, recall@radius{r2}={self.recall[r2]:.4f})"
        )


def pr_curve(
    codes,
    labels,
    *,
    reference=None,
    reference_labels=None,
    ignore=None,
    ignore_same=None,
    block_size: int | None = None,
    n_threads: int | None = None,
) -> RadiusCurve:
    """The precision-recall curve of binary codes over Hamming radii 0..d.

    Parameters
    ----------
    codes, labels, reference, reference_labels, ignore, ignore_same, block_size, n_threads
        As in :func:`embedeval.evaluate` with ``distance="hamming"``: packed ``uint8`` codes
        or bool / 0-1 bits, class labels or label sets (multi-label: a reference is relevant
        when it shares a label with the query).

    Returns
    -------
    RadiusCurve

    Notes
    -----
    Queries with R = 0 are skipped, as everywhere. Hashing code that averages precision only
    over the queries that retrieve something within the radius reports higher precision at
    small radii; the per-query values in ``result`` allow either average.

    Examples
    --------
    >>> import numpy as np
    >>> from embedeval.hashing import pr_curve
    >>> codes = np.array([[0, 0, 0, 0], [0, 0, 0, 1], [1, 1, 1, 1], [1, 1, 1, 0]], dtype=bool)
    >>> curve = pr_curve(codes, [0, 0, 1, 1])
    >>> curve.precision.round(2).tolist(), curve.recall.round(2).tolist()
    ([0.0, 1.0, 1.0, 0.5, 0.33], [0.0, 1.0, 1.0, 1.0, 1.0])
    """
    from ._embeddings.evaluate import evaluate

    n_bits = as_codes(codes, "embeddings").n_bits
    radii = np.arange(n_bits + 1)
    names = [f"{kind}_radius@{t}" for kind in ("precision", "recall") for t in radii]
    # A radius never splits a tie group: any rule gives these values; "expected" keeps no ranks.
    result = evaluate(
        codes,
        labels,
        reference=reference,
        reference_labels=reference_labels,
        metrics=names,
        distance=HAMMING,
        ignore=ignore,
        ignore_same=ignore_same,
        ties="expected",
        block_size=block_size,
        n_threads=n_threads,
    )
    precision = np.array([result.summary[f"precision_radius@{t}"] for t in radii])
    recall = np.array([result.summary[f"recall_radius@{t}"] for t in radii])
    return RadiusCurve(radii, precision, recall, result)
