"""Each community's protocol, written here from its published definition, against embedeval.

Every reference below is deliberately plain: a full float64 query x gallery matrix, a stable sort
(ties by the lower gallery index, embedeval's rule), the protocol's own junk handling and its own
AP / precision conventions, loops over queries. embedeval must give the same number per query.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import embedeval
from embedeval.protocols import revisited


def gaussian_classes(rng, labels, d, spread):
    centres = rng.standard_normal((int(labels.max()) + 1, d))
    return (centres[labels] + spread * rng.standard_normal((labels.size, d))).astype(np.float32)


def unit(x):
    """L2-normalised float32 rows: the descriptors instance retrieval ranks by inner product."""
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def stable_order(distances):
    return np.argsort(distances, kind="stable")


def sq_euclidean(q, g):
    q, g = q.astype(np.float64), g.astype(np.float64)
    return ((q[:, None, :] - g[None, :, :]) ** 2).sum(axis=2)


# --- metric learning: Musgrave et al. 2020, leave-one-out --------------------------------------


def metric_learning_reference(x, labels):
    """P@1, R-precision and MAP@R (Musgrave et al. 2020, Sec. 3.2), the query removed from its ranking."""
    dist = sq_euclidean(x, x)
    out = {"precision@1": [], "r_precision": [], "map@r": []}
    for i in range(len(x)):
        order = [j for j in stable_order(dist[i]) if j != i]
        rel = [labels[j] == labels[i] for j in order]
        R = sum(rel)
        if R == 0:
            for v in out.values():
                v.append(math.nan)
            continue
        out["precision@1"].append(float(rel[0]))
        out["r_precision"].append(sum(rel[:R]) / R)
        out["map@r"].append(sum(sum(rel[: i + 1]) / (i + 1) for i in range(R) if rel[i]) / R)
    return {k: np.array(v) for k, v in out.items()}


def test_metric_learning_protocol():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 15, 400)
    x = gaussian_classes(rng, labels, 8, 1.0)
    ours = embedeval.evaluate(x, labels, metrics=["precision@1", "r_precision", "map@r"])
    expected = metric_learning_reference(x, labels)
    for name, values in expected.items():
        np.testing.assert_allclose(ours.per_query[name], values, rtol=1e-12, err_msg=name)


# --- dense retrieval: BEIR / trec_eval conventions, cosine ----------------------------------------


def dense_retrieval_reference(q, c, qrels):
    """nDCG@10 (linear gain, ideal from all judged grades), recall@100 (trec_eval), MRR@10, MAP@100."""
    sim = unit(q).astype(np.float64) @ unit(c).astype(np.float64).T
    out = {"ndcg@10": [], "recall@100": [], "mrr@10": [], "map@100": []}
    for i in range(len(q)):
        order = stable_order(-sim[i])
        grades = [qrels[i].get(j, 0) for j in order]
        R = sum(g >= 1 for g in qrels[i].values())
        dcg = sum(g / math.log2(r + 2) for r, g in enumerate(grades[:10]))
        ideal = sum(g / math.log2(r + 2) for r, g in enumerate(sorted(qrels[i].values(), reverse=True)[:10]))
        hits = [r + 1 for r, g in enumerate(grades) if g >= 1]
        out["ndcg@10"].append(dcg / ideal)
        out["recall@100"].append(sum(1 for h in hits if h <= 100) / R)
        out["mrr@10"].append(1 / hits[0] if hits[0] <= 10 else 0.0)
        out["map@100"].append(sum(j / h for j, h in enumerate(hits, start=1) if h <= 100) / R)
    return {k: np.array(v) for k, v in out.items()}


def test_dense_retrieval_protocol():
    rng = np.random.default_rng(1)
    c = rng.standard_normal((3000, 24)).astype(np.float32)
    q = np.empty((200, 24), dtype=np.float32)
    qrels = {}
    for i in range(200):
        judged = rng.choice(3000, size=int(rng.integers(1, 6)), replace=False)
        q[i] = c[judged].mean(axis=0) + 0.7 * rng.standard_normal(24)
        qrels[i] = {int(j): int(rng.integers(1, 4)) for j in judged}
    metrics = ["ndcg@10", "recall@100", "mrr@10", "map@100"]
    ours = embedeval.evaluate_retrieval(unit(q), unit(c), qrels, metrics=metrics, distance="inner_product")
    expected = dense_retrieval_reference(q, c, qrels)
    for name in metrics:
        np.testing.assert_allclose(ours.per_query[name], expected[name], rtol=1e-12, err_msg=name)


# --- multi-label retrieval: relevant = at least one shared label, mAP over the whole database ------


def multilabel_reference(q, q_ind, g, g_ind, k):
    """mAP over the whole ranking and P@k, relevant = the label vectors share a positive entry
    (the deep-hashing evaluation's relevance); AP = sum of precisions at relevant ranks / R."""
    dist = sq_euclidean(q, g)
    out = {"map": [], f"precision@{k}": []}
    for i in range(len(q)):
        rel = (g_ind[stable_order(dist[i])] & q_ind[i]).any(axis=1)
        R = rel.sum()
        if R == 0:
            out["map"].append(math.nan)
            out[f"precision@{k}"].append(math.nan)
            continue
        hits = np.flatnonzero(rel) + 1
        out["map"].append(float(np.sum(np.arange(1, R + 1) / hits) / R))
        out[f"precision@{k}"].append(rel[:k].sum() / k)
    return {name: np.array(v) for name, v in out.items()}


def test_multilabel_protocol():
    rng = np.random.default_rng(2)
    n_labels = 12

    def items(n):
        ind = rng.random((n, n_labels)) < 0.12
        ind[np.arange(n), rng.integers(0, n_labels, n)] = True  # at least one label each
        x = (ind @ rng.standard_normal((n_labels, 16)) + 0.8 * rng.standard_normal((n, 16))).astype(np.float32)
        return x, ind

    (q, q_ind), (g, g_ind) = items(150), items(1200)
    ours = embedeval.evaluate(q, q_ind, reference=g, reference_labels=g_ind, metrics=["map", "precision@20"])
    expected = multilabel_reference(q, q_ind, g, g_ind, 20)
    for name in ("map", "precision@20"):
        np.testing.assert_allclose(ours.per_query[name], expected[name], rtol=1e-12, err_msg=name)


# --- person re-identification: Market-1501's protocol -----------------------------------------


def market1501_reference(dist, q_pids, g_pids, q_cams, g_cams, max_rank):
    """Market-1501's evaluation: per query, drop gallery images of the same identity *and* camera
    and the junk images (identity -1); CMC (a match within rank k) and AP over the rest; queries
    without any match left are not evaluated."""
    cmc, aps = [], []
    for i in range(len(dist)):
        order = stable_order(dist[i])
        junk = ((g_pids[order] == q_pids[i]) & (g_cams[order] == q_cams[i])) | (g_pids[order] == -1)
        matches = (g_pids[order] == q_pids[i])[~junk]
        if not matches.any():
            cmc.append(np.full(max_rank, np.nan))
            aps.append(math.nan)
            continue
        first = np.flatnonzero(matches)[0]
        cmc.append((np.arange(max_rank) >= first).astype(float))
        precision = np.cumsum(matches) / np.arange(1, matches.size + 1)
        aps.append(float((precision * matches).sum() / matches.sum()))
    return np.array(cmc), np.array(aps)


def test_reid_protocol_with_same_camera_junk_and_distractors():
    rng = np.random.default_rng(3)
    n_ids, n_cams = 60, 6
    g_pids = rng.integers(0, n_ids, 1500)
    g_pids[rng.random(1500) < 0.05] = -1  # junk images, as Market-1501's identity -1
    g_pids[rng.random(1500) < 0.1] = n_ids  # distractors: one identity no query has
    q_pids = rng.integers(0, n_ids, 200)
    g_cams, q_cams = rng.integers(0, n_cams, 1500), rng.integers(0, n_cams, 200)
    ids = np.concatenate([q_pids, np.where(g_pids < 0, n_ids + 1, g_pids)])
    x = gaussian_classes(rng, ids, 32, 1.3)
    q, g = x[:200], x[200:]
    junk = np.flatnonzero(g_pids == -1).tolist()
    ours = embedeval.evaluate(
        q,
        q_pids,
        reference=g,
        reference_labels=g_pids,
        ignore_same=(np.column_stack([q_pids, q_cams]), np.column_stack([g_pids, g_cams])),
        ignore={i: junk for i in range(200)},
        metrics=["cmc@1", "cmc@5", "cmc@10", "map"],
    )
    cmc, aps = market1501_reference(sq_euclidean(q, g), q_pids, g_pids, q_cams, g_cams, 10)
    np.testing.assert_allclose(ours.per_query["map"], aps, rtol=1e-12)
    for k in (1, 5, 10):
        np.testing.assert_array_equal(ours.per_query[f"cmc@{k}"], cmc[:, k - 1], err_msg=f"cmc@{k}")
    # the means the re-ID literature reports: over queries with a match left
    evaluated = ~np.isnan(aps)
    assert ours.summary["map"] == pytest.approx(aps[evaluated].mean(), rel=1e-12)
    assert ours.summary["cmc@1"] == pytest.approx(cmc[evaluated, 0].mean(), rel=1e-12)


# --- revisited Oxford / Paris: Easy, Medium, Hard --------------------------------------------


def compute_ap(ranks, nres):
    """revisitop's compute_ap: trapezoids under the precision-recall curve; ranks 0-based."""
    ap = 0.0
    for j, rank in enumerate(ranks):
        precision_0 = 1.0 if rank == 0 else j / rank
        precision_1 = (j + 1) / (rank + 1)
        ap += (precision_0 + precision_1) / (2 * nres)
    return ap


def compute_map(ranks, gnd, kappas):
    """revisitop's compute_map per query: positives' positions shifted down by the junk before
    them, AP by trapezoids, mP@k with k lowered to the last positive's rank; NaN without positives."""
    aps, prs = [], []
    for i, g in enumerate(gnd):
        ok, junk = set(g["ok"]), set(g["junk"])
        if not ok:
            aps.append(math.nan)
            prs.append([math.nan] * len(kappas))
            continue
        order = ranks[:, i]
        pos = [p for p, j in enumerate(order) if j in ok]
        junk_at = [p for p, j in enumerate(order) if j in junk]
        shifted = [p - sum(1 for jp in junk_at if jp < p) for p in pos]
        aps.append(compute_ap(shifted, len(ok)))
        one_based = np.array(shifted) + 1
        prs.append([(one_based <= min(one_based.max(), k)).sum() / min(one_based.max(), k) for k in kappas])
    return np.array(aps), np.array(prs)


def revisited_case(seed):
    """A small revisited-Oxford-like set: 40 queries, 900 database images, easy/hard/junk per query."""
    rng = np.random.default_rng(seed)
    landmarks = rng.integers(0, 10, 900)
    x = unit(gaussian_classes(rng, np.concatenate([np.arange(10).repeat(4), landmarks]), 32, 1.1))
    Q, X = x[:40], x[40:]
    gnd = []
    for i in range(40):
        same = np.flatnonzero(landmarks == i // 4)
        kind = rng.choice(3, size=same.size, p=[0.5, 0.3, 0.2])
        if i % 13 == 0:
            kind[kind == 1] = 0  # a query without hard images: empty under the Hard protocol
        gnd.append(
            {"easy": same[kind == 0].tolist(), "hard": same[kind == 1].tolist(), "junk": same[kind == 2].tolist()}
        )
    return Q, X, gnd


REVISITOP = {  # the positives and junk of each protocol, as revisitop's example_evaluate.py builds them
    "easy": (lambda g: g["easy"], lambda g: g["junk"] + g["hard"]),
    "medium": (lambda g: g["easy"] + g["hard"], lambda g: g["junk"]),
    "hard": (lambda g: g["hard"], lambda g: g["junk"] + g["easy"]),
}


@pytest.mark.parametrize("protocol", ["easy", "medium", "hard"])
@pytest.mark.parametrize("seed", range(3))
def test_revisited_oxford_paris_protocols(seed, protocol):
    Q, X, gnd = revisited_case(seed)
    ranks = np.argsort(-(X.astype(np.float64) @ Q.astype(np.float64).T), axis=0, kind="stable")
    ok, junk = REVISITOP[protocol]
    gnd_t = [{"ok": ok(g), "junk": junk(g)} for g in gnd]
    aps, prs = compute_map(ranks, gnd_t, [1, 5, 10])
    qrels, ignore = revisited(gnd, protocol)
    metrics = ["revisited_map", "revisited_mp@1", "revisited_mp@5", "revisited_mp@10"]
    ours = embedeval.evaluate_retrieval(Q, X, qrels, ignore=ignore, distance="inner_product", metrics=metrics)
    np.testing.assert_allclose(ours.per_query["revisited_map"], aps, rtol=1e-12)
    for column, k in enumerate((1, 5, 10)):
        np.testing.assert_allclose(ours.per_query[f"revisited_mp@{k}"], prs[:, column], rtol=1e-12)
    assert ours.n_evaluated == int((~np.isnan(aps)).sum())
    if protocol == "hard":
        assert ours.n_evaluated < 40  # the queries without hard images are skipped, as revisitop skips them


def test_revisited_precision_lowers_its_cutoff_to_the_last_positive():
    """Two positives at ranks 1 and 3: mP@5 = 2/3 (k lowered to 3), mP@2 = 1/2; trec P@5 = 2/5."""
    Q = np.array([[1.0, 0.0]])
    X = unit(np.array([[1.0, 0.0], [1.0, 0.5], [1.0, 0.7], [0.0, 1.0], [-1.0, 0.0]]))
    r = embedeval.evaluate_retrieval(
        Q,
        X,
        {0: {0: 1, 2: 1}},
        distance="inner_product",
        metrics=["revisited_mp@5", "revisited_mp@2", "precision@5", "revisited_map", "map"],
    )
    assert r.summary["revisited_mp@5"] == pytest.approx(2 / 3)
    assert r.summary["revisited_mp@2"] == pytest.approx(1 / 2)
    assert r.summary["precision@5"] == pytest.approx(2 / 5)
    # trapezoids: (1 + 1) / 2 and (1/2 + 2/3) / 2, over R = 2; trec AP: (1 + 2/3) / 2
    assert r.summary["revisited_map"] == pytest.approx((1 + 7 / 12) / 2)
    assert r.summary["map"] == pytest.approx(5 / 6)


@pytest.mark.parametrize(
    ("protocol", "qrels", "ignore"),
    [
        ("easy", {0: {0: 1}}, {0: [3, 1]}),
        ("medium", {0: {0: 1, 1: 1}}, {0: [3]}),
        ("hard", {0: {1: 1}}, {0: [3, 0]}),
    ],
)
def test_revisited_helper_splits_positives_and_junk_per_protocol(protocol, qrels, ignore):
    assert revisited([{"easy": [0], "hard": [1], "junk": [3]}], protocol) == (qrels, ignore)


def test_revisited_helper_rejects_bad_input():
    with pytest.raises(ValueError, match="'protocol' must be one of 'easy', 'medium', 'hard'; got 'medum'"):
        revisited([{"easy": [0]}], "medum")
    with pytest.raises(TypeError, match="'gnd' entry 0 must be a mapping"):
        revisited([[0, 1]], "easy")
    with pytest.raises(ValueError, match="'gnd' entry 0 must list database positions \\(integers >= 0\\) under 'junk'"):
        revisited([{"easy": [0], "junk": ["x"]}], "easy")


@pytest.mark.parametrize("page", ["guides/reid_instance.md", "guides/dense_retrieval.md"])
def test_the_protocol_guides_evaluate_queries(page):
    """Each Python block of the re-identification and dense-retrieval guides, run top to bottom
    (they make their own data), leaves a result that evaluated queries: the protocols' examples
    do not silently skip everything. (tests/docs/test_code_blocks.py runs them in a fresh
    interpreter; this reads what they computed.)"""
    from pathlib import Path

    text = (Path(__file__).parents[2] / "docs" / page).read_text()
    blocks = [b.split("```", 1)[0] for b in text.split("```python\n")[1:]]
    assert len(blocks) >= 2
    namespace = {}
    for block in blocks:
        exec(compile(block, page, "exec"), namespace)
        assert isinstance(namespace["result"], embedeval.EvaluationResult)
        assert namespace["result"].n_evaluated > 0
