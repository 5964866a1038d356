"""Slow, obviously-correct reference implementations (float64, full stable sort, plain loops)."""

from __future__ import annotations

import math

import numpy as np


def full_ranking(query, references, distance, exclude=None):
    """Reference indices sorted by (float64 distance, index), ``exclude`` left out."""
    q = np.asarray(query, dtype=np.float64)
    refs = np.asarray(references, dtype=np.float64)
    if distance == "euclidean":
        dist = ((refs - q) ** 2).sum(axis=1)
    elif distance == "inner_product":
        dist = -(refs * q).sum(axis=1)
    elif distance == "cosine":
        dist = -(refs * q).sum(axis=1) / (np.linalg.norm(refs, axis=1) * np.linalg.norm(q))
    else:
        raise ValueError(distance)
    candidates = [j for j in range(len(refs)) if j != exclude]
    return sorted(candidates, key=lambda j: (dist[j], j))


def binary_metric(name, rel, n_relevant):
    """One metric from a full binary relevance list ``rel`` (every ranked item, in order)."""
    R = n_relevant
    precision = [sum(rel[: i + 1]) / (i + 1) for i in range(len(rel))]
    family, _, k_text = name.partition("@")
    k = int(k_text) if k_text.isdigit() else None
    first = next((i + 1 for i, r in enumerate(rel) if r), None)
    if name == "map@r":
        return sum(precision[i] for i in range(R) if rel[i]) / R
    if family == "precision":
        return sum(rel[:k]) / k
    if family in ("recall", "hit_rate"):
        return 1.0 if any(rel[:k]) else 0.0
    if family == "r_precision":
        return sum(rel[:R]) / R
    if family == "map":
        depth = len(rel) if k is None else k
        return sum(precision[i] for i in range(min(depth, len(rel))) if rel[i]) / R
    if family == "mrr":
        if first is None or (k is not None and first > k):
            return 0.0
        return 1.0 / first
    raise ValueError(name)


def evaluate_reference(queries, labels, metrics, distance="euclidean", reference=None, reference_labels=None):
    """Per-query metric values of embeddings with class labels; NaN where R = 0."""
    leave_one_out = reference is None
    refs = queries if leave_one_out else reference
    ref_labels = list(labels if leave_one_out else reference_labels)
    out = {m: [] for m in metrics}
    for i, q in enumerate(queries):
        order = full_ranking(q, refs, distance, exclude=i if leave_one_out else None)
        rel = [ref_labels[j] == labels[i] for j in order]
        R = sum(rel)
        for m in metrics:
            out[m].append(math.nan if R == 0 else binary_metric(m, rel, R))
    return {m: np.array(v) for m, v in out.items()}
