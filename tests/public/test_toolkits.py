"""The drop-in path from the metric-learning toolkits: pytorch-metric-learning's AccuracyCalculator
and embedeval agree on every shared metric (NMI/AMI with the same k-means), PML's names are
aliases, its ``ref_includes_query`` is ``query_in_reference``, and OML's precision@k and map@k are
``capped_recall@k`` and ``map_hits@k`` (checked against a slow reference of OML's formulas)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import embedeval

PML_METRICS = (
    "precision_at_1",
    "r_precision",
    "mean_average_precision_at_r",
    "mean_average_precision",
    "mean_reciprocal_rank",
    "NMI",
    "AMI",
)
CANONICAL = {
    "precision_at_1": "precision@1",
    "r_precision": "r_precision",
    "mean_average_precision_at_r": "map@r",
    "mean_average_precision": "map",
    "mean_reciprocal_rank": "mrr",
    "NMI": "pml_nmi",
    "AMI": "pml_ami",
}


def _data(seed: int, n: int = 700, d: int = 12, k: int = 15, noise: float = 1.4):
    """Overlapping Gaussian classes of very unequal sizes, and a few singletons (PML's lone
    queries): continuous float32 values, so no two distances tie."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, k + 1)  # class sizes falling like 1/rank
    labels = rng.choice(k, n, p=weights / weights.sum())
    labels = np.concatenate([labels, 1000 + np.arange(4)])  # four singletons
    centres = 2 * rng.standard_normal((labels.max() + 1, d))
    x = (centres[labels] + noise * rng.standard_normal((labels.size, d))).astype(np.float32)
    order = rng.permutation(labels.size)
    return x[order], labels[order]


@pytest.fixture(scope="module")
def pml():
    torch = pytest.importorskip("torch")
    accuracy_calculator = pytest.importorskip("pytorch_metric_learning.utils.accuracy_calculator")

    def calc(**kwargs):
        return accuracy_calculator.AccuracyCalculator(include=PML_METRICS, device=torch.device("cpu"), **kwargs)

    return torch, calc


def _assert_same(theirs: dict, ours: embedeval.EvaluationResult, macro: bool = False):
    values = ours.per_class.macro if macro else ours.summary
    for name, value in theirs.items():
        canonical = CANONICAL[name]
        if macro and canonical in ("nmi", "ami", "pml_nmi", "pml_ami"):
            continue
        # PML averages reciprocal ranks in float32; its other metrics in float64
        rel = 1e-6 if name == "mean_reciprocal_rank" else 1e-9
        assert values[canonical] == pytest.approx(value, rel=rel, abs=1e-12), name
    assert list(ours.summary) == [CANONICAL[m] for m in PML_METRICS]  # reported under embedeval's names


@pytest.mark.parametrize("seed", range(3))
def test_leave_one_out_agrees_with_pytorch_metric_learning(pml, seed):
    """PML's default call (no reference: the queries are the reference, each excluded) and
    embedeval's leave-one-out give the same numbers, lone queries skipped by both."""
    torch, calc = pml
    x, labels = _data(seed)
    theirs = calc().get_accuracy(torch.from_numpy(x), torch.from_numpy(labels))
    ours = embedeval.evaluate(x, labels, metrics=PML_METRICS)
    _assert_same(theirs, ours)
    assert ours.n_skipped == 4


@pytest.mark.parametrize("seed", range(2))
def test_macro_average_is_pmls_avg_of_avgs(pml, seed):
    torch, calc = pml
    x, labels = _data(seed)
    theirs = calc(avg_of_avgs=True).get_accuracy(torch.from_numpy(x), torch.from_numpy(labels))
    _assert_same(theirs, embedeval.evaluate(x, labels, metrics=PML_METRICS), macro=True)


@pytest.mark.parametrize("seed", range(2))
def test_separate_query_and_reference_sets_agree(pml, seed):
    """Queries against a gallery: PML clusters the queries for NMI/AMI, as embedeval does."""
    torch, calc = pml
    x, labels = _data(seed)
    q, g = slice(0, 250), slice(250, None)
    theirs = calc().get_accuracy(
        torch.from_numpy(x[q]), torch.from_numpy(labels[q]), torch.from_numpy(x[g]), torch.from_numpy(labels[g])
    )
    ours = embedeval.evaluate(x[q], labels[q], reference=x[g], reference_labels=labels[g], metrics=PML_METRICS)
    _assert_same(theirs, ours)


@pytest.mark.parametrize("seed", range(2))
def test_ref_includes_query_is_query_in_reference(pml, seed):
    """PML's ref_includes_query (the queries are the first rows of the reference) is
    query_in_reference=np.arange(n_queries): each query's own row leaves its ranking and its R."""
    torch, calc = pml
    x, labels = _data(seed)
    n_q = 300
    theirs = calc().get_accuracy(
        torch.from_numpy(x[:n_q]),
        torch.from_numpy(labels[:n_q]),
        torch.from_numpy(x),
        torch.from_numpy(labels),
        ref_includes_query=True,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # named rows: no self-reference warning
        ours = embedeval.evaluate(
            x[:n_q],
            labels[:n_q],
            reference=x,
            reference_labels=labels,
            query_in_reference=np.arange(n_q),
            metrics=PML_METRICS,
        )
    _assert_same(theirs, ours)


def test_pml_cutoff_k_is_map_at_k_and_mrr_at_k(pml):
    """With an int k PML ranks only the k nearest: its mean_average_precision is map@k (divided by
    R, trec_eval's convention) and its mean_reciprocal_rank is mrr@k."""
    torch, calc = pml
    x, labels = _data(0)
    theirs = calc(k=5).get_accuracy(
        torch.from_numpy(x), torch.from_numpy(labels), include=("mean_average_precision", "mean_reciprocal_rank")
    )
    ours = embedeval.evaluate(x, labels, metrics=["map@5", "mrr@5"])
    assert ours.summary["map@5"] == pytest.approx(theirs["mean_average_precision"], rel=1e-9)
    assert ours.summary["mrr@5"] == pytest.approx(theirs["mean_reciprocal_rank"], rel=1e-6)  # PML: float32


def test_pml_names_are_aliases_reported_under_canonical_names():
    x, labels = _data(1, n=200)
    ours = embedeval.evaluate(x, labels, metrics=["Precision_At_1", "mean_average_precision_at_r", "map@r", "NMI"])
    assert list(ours.summary) == ["precision@1", "map@r", "pml_nmi"]  # one metric per canonical name


# OML's definitions (open-metric-learning, oml/functional/metrics.py: calc_precision, calc_map), on
# a query's relevance vector g over the ranking and its number of relevant items n:
#   precision@k = (sum_{i<=k} g_i) / min(k, n)
#   map@k = (1 / n_k) sum_{i<=k} (n_i / i) g_i, n_i = sum_{j<=i} g_j, 0 when n_k = 0


def _slow_oml(queries, q_labels, references, r_labels, k, leave_one_out):
    """OML's precision@k and map@k per query: float64 distances, a full stable sort, plain loops."""
    precision, average = [], []
    for i, q in enumerate(queries.astype(np.float64)):
        d = ((references.astype(np.float64) - q) ** 2).sum(axis=1)
        order = np.argsort(d, kind="stable")
        if leave_one_out:
            order = order[order != i]
        g = (r_labels[order] == q_labels[i]).astype(float)
        n = g.sum()
        if n == 0:
            precision.append(np.nan)
            average.append(np.nan)
            continue
        top = g[:k]
        precision.append(top.sum() / min(k, n))
        hits = np.cumsum(top)
        average.append(sum(hits[j] / (j + 1) * top[j] for j in range(top.size)) / hits[-1] if hits[-1] else 0.0)
    return np.array(precision), np.array(average)


@pytest.mark.parametrize(("seed", "k"), [(0, 1), (1, 5), (2, 30)])
def test_oml_precision_and_map_are_capped_recall_and_map_hits(seed, k):
    x, labels = _data(seed, n=300)
    ours = embedeval.evaluate(x, labels, metrics=[f"capped_recall@{k}", f"map_hits@{k}"])
    precision, average = _slow_oml(x, labels, x, labels, k, leave_one_out=True)
    np.testing.assert_allclose(ours.per_query[f"capped_recall@{k}"], precision, rtol=1e-12)
    np.testing.assert_allclose(ours.per_query[f"map_hits@{k}"], average, rtol=1e-12)
    q, g = slice(0, 100), slice(100, None)
    ours = embedeval.evaluate(
        x[q], labels[q], reference=x[g], reference_labels=labels[g], metrics=[f"capped_recall@{k}", f"map_hits@{k}"]
    )
    precision, average = _slow_oml(x[q], labels[q], x[g], labels[g], k, leave_one_out=False)
    np.testing.assert_allclose(ours.per_query[f"capped_recall@{k}"], precision, rtol=1e-12)
    np.testing.assert_allclose(ours.per_query[f"map_hits@{k}"], average, rtol=1e-12)
