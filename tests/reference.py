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


# Relevance beyond one class label: judgements, label sets and ignore rules, from the same full sort.


def ranking_without(query, references, distance, ignored):
    """Reference indices sorted by (float64 distance, index), every index in ``ignored`` left out."""
    ignored = set(ignored)
    return [j for j in full_ranking(query, references, distance) if j not in ignored]


def _dcg(grades, k, discounted=True):
    gain = [max(g, 0.0) for g in grades[:k]]
    return sum(g / (math.log2(i + 2) if discounted else 1.0) for i, g in enumerate(gain))


def _ndcg(grades, k, ideal):
    best = _dcg(sorted(ideal, reverse=True), k)
    return _dcg(grades, k) / best if best > 0 else math.nan


def _trapezoid_ap(hit_ranks, R):
    total = 0.0
    for j, p in enumerate(r - 1 for r in hit_ranks):  # compute_ap reads 0-based positions
        before = 1.0 if p == 0 else j / p
        total += (before + (j + 1) / (p + 1)) / 2
    return total / R


def _revisited_precision(hit_ranks, k):
    k_q = min(max(hit_ranks), k)  # hit_ranks hold every relevant item: the ranking is whole
    return sum(1 for r in hit_ranks if r <= k_q) / k_q


def _mean_or_zero(values):
    return sum(values) / len(values) if values else 0.0


# family -> f(rel, grades, hit_ranks, k, R, ideal), each a published definition in plain Python
_GRADED = {
    "precision": lambda rel, g, h, k, R, ideal: sum(rel[:k]) / k,
    "recall": lambda rel, g, h, k, R, ideal: sum(rel[:k]) / R,
    "capped_recall": lambda rel, g, h, k, R, ideal: sum(rel[:k]) / min(k, R),
    "hit_rate": lambda rel, g, h, k, R, ideal: 1.0 if any(rel[:k]) else 0.0,
    "cmc": lambda rel, g, h, k, R, ideal: 1.0 if any(rel[:k]) else 0.0,
    "r_precision": lambda rel, g, h, k, R, ideal: sum(rel[:R]) / R,
    "map": lambda rel, g, h, k, R, ideal: sum(j / r for j, r in enumerate(h, start=1) if r <= k) / R,
    "map_hits": lambda rel, g, h, k, R, ideal: _mean_or_zero([j / r for j, r in enumerate(h, start=1) if r <= k]),
    "capped_map": lambda rel, g, h, k, R, ideal: sum(j / r for j, r in enumerate(h, start=1) if r <= k) / min(k, R),
    "mrr": lambda rel, g, h, k, R, ideal: 1.0 / h[0] if h and h[0] <= k else 0.0,
    "dcg": lambda rel, g, h, k, R, ideal: _dcg(g, k),
    "cg": lambda rel, g, h, k, R, ideal: _dcg(g, k, discounted=False),
    "ndcg": lambda rel, g, h, k, R, ideal: _ndcg(g, k, ideal),
    "revisited_map": lambda rel, g, h, k, R, ideal: _trapezoid_ap(h, R),
    "revisited_mp": lambda rel, g, h, k, R, ideal: _revisited_precision(h, k),
}


def graded_metric(name, grades, n_relevant, ideal, threshold=1.0):
    """One metric from the grades of every ranked item in order (0: not relevant, not judged).

    ``n_relevant`` is R (> 0); ``ideal`` lists the positive grades a query could rank (for
    nDCG). Plain loops over the published definitions: trec_eval's recall, AP and nDCG (linear
    gain), CMC, and revisited Oxford's trapezoidal AP and its P@k cutoff rule.
    """
    family, _, cut = name.partition("@")
    k = int(cut) if cut.isdigit() else (n_relevant if cut == "r" else len(grades))
    rel = [g >= threshold for g in grades]
    hit_ranks = [i + 1 for i, r in enumerate(rel) if r]
    return _GRADED[family](rel, grades, hit_ranks, k, n_relevant, ideal)


def evaluate_general(queries, references, metrics, distance, grade, ignored, threshold=1.0):
    """Per-query values with any relevance and ignore rule; NaN where R = 0 after ignoring.

    ``grade(i, j)`` is reference j's grade for query i (True/False or a number); ``ignored(i)``
    the set of references query i ignores. Every query ranks every reference it does not ignore.
    """
    out = {m: [] for m in metrics}
    for i, q in enumerate(queries):
        skip = ignored(i)
        order = ranking_without(q, references, distance, skip)
        grades = [float(grade(i, j)) for j in order]
        R = sum(g >= threshold for g in grades)
        ideal = [g for g in grades if g > 0]
        for m in metrics:
            out[m].append(math.nan if R == 0 else graded_metric(m, grades, R, ideal, threshold))
    return {m: np.array(v) for m, v in out.items()}


# Binary codes: Hamming distance, ties by index or by a tie rule, from the same plain loops.


def hamming_distances(query_bits, reference_bits):
    """The number of differing bits between one code (d,) and each of (n, d), as Python ints."""
    return [
        int(np.count_nonzero(np.asarray(r, dtype=bool) != np.asarray(query_bits, dtype=bool))) for r in reference_bits
    ]


def hamming_order(dist, grades, kept, rule=None):
    """The references ``kept`` ranked by (distance, index), or within equal distances by grade
    descending (optimistic) or ascending (pessimistic), then index."""
    if rule is None:
        return sorted(kept, key=lambda j: (dist[j], j))
    sign = -1 if rule == "optimistic" else 1
    return sorted(kept, key=lambda j: (dist[j], sign * max(grades[j], 0.0), j))


def evaluate_hamming(query_bits, reference_bits, metrics, grade, ignored, threshold=1.0, rule=None, embeddings=True):
    """Per-query values of binary codes ranked by Hamming distance; NaN where R = 0.

    ``grade(i, j)`` and ``ignored(i)`` as in :func:`evaluate_general`. With ``embeddings``,
    ``recall@k`` is the metric-learning Recall@K (the hit rate); ``precision_radius@t`` is
    relevant / all among the references within distance t (0 if none), ``recall_radius@t``
    relevant within t / R.
    """
    out = {m: [] for m in metrics}
    for i, q in enumerate(query_bits):
        dist = hamming_distances(q, reference_bits)
        grades = [float(grade(i, j)) for j in range(len(reference_bits))]
        kept = [j for j in range(len(reference_bits)) if j not in ignored(i)]
        order = hamming_order(dist, grades, kept, rule)
        ranked = [grades[j] for j in order]
        R = sum(g >= threshold for g in ranked)
        ideal = [g for g in ranked if g > 0]
        for m in metrics:
            family, _, cut = m.partition("@")
            if R == 0:
                value = math.nan
            elif family in ("precision_radius", "recall_radius"):
                near = [grades[j] for j in kept if dist[j] <= int(cut)]
                hits = sum(g >= threshold for g in near)
                value = (hits / len(near) if near else 0.0) if family == "precision_radius" else hits / R
            else:
                name = m.replace("recall@", "hit_rate@") if family == "recall" and embeddings else m
                value = graded_metric(name, ranked, R, ideal, threshold)
            out[m].append(value)
    return {m: np.array(v) for m, v in out.items()}


# trec_eval's measures (pytrec_eval names) under embedeval's names for them, for the agreement tests.
TREC_MEASURES = {
    "precision@5": "P_5",
    "precision@10": "P_10",
    "recall@5": "recall_5",
    "recall@10": "recall_10",
    "map": "map",
    "map@5": "map_cut_5",
    "map@10": "map_cut_10",
    "mrr": "recip_rank",
    "ndcg": "ndcg",
    "ndcg@5": "ndcg_cut_5",
    "ndcg@10": "ndcg_cut_10",
    "r_precision": "Rprec",
    "hit_rate@1": "success_1",
    "hit_rate@5": "success_5",
}


def without_vectors(dispatcher, *args):
    """``dispatcher(*args)`` (a numba dispatcher of its own) compiled as for a target without
    AVX-512: :func:`embedeval._core.intrinsics.compresses` is False while it compiles, so the
    kernels it inlines run their scalar loops, whatever this host has."""
    import pytest

    from embedeval._core import intrinsics

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(intrinsics, "_target_compresses", lambda context: False)
        return dispatcher(*args)
