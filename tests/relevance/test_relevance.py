"""Relevance beyond one class label: label sets, judgements and ignore rules against a float64 full sort.

Every case is compared, per query and metric, with :func:`reference.evaluate_general`: a full
stable sort of float64 distances, the ignored references dropped by index, and the metrics'
published definitions in plain loops. Data sit on dyadic lattices (float32 arithmetic exact) with
many ties and duplicates, so the tie rule decides often.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from reference import evaluate_general

import embedeval
from embedeval._relevance.labels import MultiLabels, read_multilabels
from embedeval._search import Device

DISTANCES = ("euclidean", "inner_product", "cosine")
EMBEDDING_METRICS = [
    "precision@1",
    "precision@3",
    "recall@4",
    "hit_rate@2",
    "cmc@1",
    "r_precision",
    "map@r",
    "map",
    "map@5",
    "mrr",
    "mrr@2",
]
RANKING_METRICS = [
    "precision@3",
    "recall@5",
    "capped_recall@4",
    "hit_rate@2",
    "cmc@1",
    "r_precision",
    "map@r",
    "map",
    "map@5",
    "map_hits@4",
    "capped_map@4",
    "mrr",
    "mrr@3",
    "ndcg",
    "ndcg@5",
    "dcg@4",
    "cg@3",
    "revisited_map",
    "revisited_mp@3",
]


def points(rng, n, d, distance, step):
    """Lattice points (exact float32 arithmetic), or +-1 vectors scaled by powers of two for cosine."""
    if distance == "cosine":
        return (rng.choice([-1.0, 1.0], size=(n, d)) * 2.0 ** rng.integers(0, 3, size=(n, 1))).astype(np.float32)
    return (rng.integers(-3, 4, size=(n, d)) * step).astype(np.float32)


def with_duplicates(rng, x):
    """Some rows replaced by copies of others: ties at distance 0."""
    x = x.copy()
    copies = rng.choice(len(x), size=len(x) // 3, replace=True)
    x[rng.choice(len(x), size=copies.size, replace=False)] = x[copies]
    return x


def label_sets(rng, n, n_labels=6):
    return [frozenset(rng.choice(n_labels, size=int(rng.integers(1, 4)), replace=False).tolist()) for _ in range(n)]


def as_indicator(sets, n_labels=6):
    out = np.zeros((len(sets), n_labels), dtype=bool)
    for i, s in enumerate(sets):
        out[i, list(s)] = True
    return out


def random_keys(rng, n, kind):
    """ignore_same keys of one side: ints, (a, b) tuples, or rows of a 2-D array."""
    a, b = rng.integers(0, 3, n), rng.integers(0, 2, n)
    if kind == 0:
        return a, a.tolist()
    if kind == 1:
        tuples = list(zip(a.tolist(), b.tolist(), strict=True))
        return tuples, tuples
    return np.column_stack([a, b]), list(zip(a.tolist(), b.tolist(), strict=True))


def label_case(seed):
    """A random evaluate() case with its reference relevance and ignore rule."""
    rng = np.random.default_rng(seed)
    distance = DISTANCES[seed % 3]
    separate = (seed // 3) % 2 == 1
    kind = ("single", "sets", "indicator")[(seed // 6) % 3]
    n, n_ref = int(rng.integers(4, 40)), int(rng.integers(4, 50))
    d = int(rng.integers(1, 4)) if distance != "cosine" else 4
    step = (1.0, 0.25)[seed % 2]
    x = with_duplicates(rng, points(rng, n, d, distance, step))
    ref = with_duplicates(rng, points(rng, n_ref, d, distance, step)) if separate else x
    n_r = len(ref)
    if kind == "single":
        q_lab, r_lab = rng.integers(0, 4, n), rng.integers(0, 4, n_r)
        q_sets, r_sets = [{v} for v in q_lab.tolist()], [{v} for v in r_lab.tolist()]
    else:
        q_sets, r_sets = label_sets(rng, n), label_sets(rng, n_r)
        q_lab, r_lab = (q_sets, r_sets) if kind == "sets" else (as_indicator(q_sets), as_indicator(r_sets))
    if not separate:
        r_lab, r_sets = q_lab, q_sets
    kwargs = {"reference": ref, "reference_labels": r_lab} if separate else {}
    ignored = [set() if separate else {i} for i in range(n)]
    rule = (seed // 18) % 4  # none, keys, lists, both
    if rule in (1, 3):
        key_kind = int(rng.integers(0, 3))
        q_keys, q_plain = random_keys(rng, n, key_kind)
        r_keys, r_plain = random_keys(rng, n_r, key_kind) if separate else (q_keys, q_plain)
        kwargs["ignore_same"] = (q_keys, r_keys)
        for i in range(n):
            ignored[i] |= {j for j in range(n_r) if r_plain[j] == q_plain[i]}
    if rule in (2, 3):
        lists = {i: rng.choice(n_r, size=int(rng.integers(0, 4))).tolist() for i in range(n) if rng.random() < 0.6}
        kwargs["ignore"] = lists
        for i, refs in lists.items():
            ignored[i] |= set(refs)
    return {
        "x": x,
        "ref": ref,
        "labels": q_lab,
        "kwargs": kwargs,
        "distance": distance,
        "grade": lambda i, j: bool(q_sets[i] & r_sets[j]),
        "ignored": lambda i: ignored[i],
    }


def quietly(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def reference_values(case, metrics, **extra):
    ref_names = [m.replace("recall@", "hit_rate@") for m in metrics]  # metric-learning Recall@K
    values = evaluate_general(
        case["x"], case["ref"], ref_names, case["distance"], case["grade"], case["ignored"], **extra
    )
    return dict(zip(metrics, values.values(), strict=True))


@pytest.mark.parametrize("seed", range(72))
def test_labels_label_sets_and_ignore_rules_match_a_full_sort(seed):
    """Single labels, label sets and indicators; keys, lists, both; leave-one-out and galleries."""
    case = label_case(seed)
    result = quietly(
        embedeval.evaluate,
        case["x"],
        case["labels"],
        metrics=EMBEDDING_METRICS,
        distance=case["distance"],
        **case["kwargs"],
    )
    expected = reference_values(case, EMBEDDING_METRICS)
    for name in EMBEDDING_METRICS:
        np.testing.assert_allclose(result.per_query[name], expected[name], rtol=1e-12, atol=1e-15, err_msg=name)
    assert result.n_evaluated == int((~np.isnan(expected["map"])).sum())


def judged_case(seed):
    """A random evaluate_retrieval() case: graded qrels, ids or positions, ignore rules."""
    rng = np.random.default_rng(1000 + seed)
    distance = DISTANCES[seed % 3]
    n, n_c = int(rng.integers(3, 30)), int(rng.integers(5, 60))
    d = int(rng.integers(1, 4)) if distance != "cosine" else 4
    q = points(rng, n, d, distance, 0.5)
    c = with_duplicates(rng, points(rng, n_c, d, distance, 0.5))
    named = seed % 2 == 0
    q_ids = [f"q{i}" for i in range(n)] if named else None
    c_ids = [f"d{j}" for j in rng.permutation(n_c)] if named else None
    qname = (lambda i: q_ids[i]) if named else (lambda i: i)
    cname = (lambda j: c_ids[j]) if named else (lambda j: j)
    grades = {}
    qrels = {}
    for i in range(n):
        if rng.random() < 0.15:
            continue  # not judged at all: skipped
        judged = rng.choice(n_c, size=int(rng.integers(0, 6)), replace=False).tolist()
        values = rng.choice([-1, 0, 1, 1, 2, 3], size=len(judged)).tolist()
        grades.update({(i, j): v for j, v in zip(judged, values, strict=True)})
        qrels[qname(i)] = {cname(j): v for j, v in zip(judged, values, strict=True)}
    ignored = [set() for _ in range(n)]
    kwargs = {"query_ids": q_ids, "corpus_ids": c_ids}
    if seed % 4 in (1, 2):
        lists = {i: rng.choice(n_c, size=int(rng.integers(0, 4))).tolist() for i in range(n) if rng.random() < 0.5}
        kwargs["ignore"] = {qname(i): [cname(j) for j in refs] for i, refs in lists.items()}
        for i, refs in lists.items():
            ignored[i] |= set(refs)
    if seed % 4 in (2, 3):
        q_keys, c_keys = rng.integers(0, 4, n), rng.integers(0, 4, n_c)
        kwargs["ignore_same"] = (q_keys, c_keys)
        for i in range(n):
            ignored[i] |= set(np.flatnonzero(c_keys == q_keys[i]).tolist())
    threshold = 2 if seed % 5 == 4 else 1
    return {
        "x": q,
        "ref": c,
        "qrels": qrels,
        "kwargs": kwargs,
        "distance": distance,
        "threshold": threshold,
        "judged": np.array([qname(i) in qrels for i in range(n)]),
        "grade": lambda i, j: grades.get((i, j), 0),
        "ignored": lambda i: ignored[i],
    }


@pytest.mark.parametrize("seed", range(48))
def test_judgements_with_ignore_rules_match_a_full_sort(seed):
    """Graded qrels (negative and zero grades too), ids or positions, ignore lists and keys."""
    case = judged_case(seed)
    result = quietly(
        embedeval.evaluate_retrieval,
        case["x"],
        case["ref"],
        case["qrels"],
        metrics=RANKING_METRICS,
        distance=case["distance"],
        threshold=case["threshold"],
        **case["kwargs"],
    )
    expected = evaluate_general(
        case["x"],
        case["ref"],
        RANKING_METRICS,
        case["distance"],
        case["grade"],
        case["ignored"],
        threshold=case["threshold"],
    )
    for name in RANKING_METRICS:
        want = np.where(case["judged"], expected[name], np.nan)
        np.testing.assert_allclose(result.per_query[name], want, rtol=1e-12, atol=1e-15, err_msg=name)
    assert result.skipped["the query has no judgements in 'qrels'"] == int((~case["judged"]).sum())


SCALE_OPTIONS = [
    {"block_size": 1},
    {"block_size": 3, "n_threads": 3},
    {"block_size": 7, "n_threads": 1},
    {"shard_size": 5},
    {"shard_size": 2, "block_size": 4, "n_threads": 2},
    {"device": Device(("cpu",), reference_block=3)},
    {"device": Device(("cpu",), reference_block=1), "block_size": 5},
]


@pytest.mark.parametrize("options", SCALE_OPTIONS, ids=lambda o: ",".join(o))
@pytest.mark.parametrize("seed", [3, 21, 40, 59])
def test_labels_and_ignore_rules_do_not_depend_on_blocks_threads_shards_or_device(seed, options):
    case = label_case(seed)
    run = lambda **o: quietly(  # noqa: E731
        embedeval.evaluate, case["x"], case["labels"], metrics=EMBEDDING_METRICS, distance=case["distance"], **o
    )
    base, other = run(**case["kwargs"]), run(**case["kwargs"], **options)
    for name in EMBEDDING_METRICS:
        np.testing.assert_array_equal(other.per_query[name], base.per_query[name], err_msg=name)


@pytest.mark.parametrize("options", SCALE_OPTIONS, ids=lambda o: ",".join(o))
@pytest.mark.parametrize("seed", [1, 2, 6, 11])
def test_judgements_do_not_depend_on_blocks_threads_shards_or_device(seed, options):
    case = judged_case(seed)
    run = lambda **o: quietly(  # noqa: E731
        embedeval.evaluate_retrieval, case["x"], case["ref"], case["qrels"], metrics=RANKING_METRICS, **o
    )
    kwargs = {**case["kwargs"], "distance": case["distance"]}
    base, other = run(**kwargs), run(**kwargs, **options)
    for name in RANKING_METRICS:
        np.testing.assert_array_equal(other.per_query[name], base.per_query[name], err_msg=name)


def test_streamed_corpus_gives_the_in_memory_numbers(tmp_path):
    """A memory-mapped corpus re-read shard by shard, with ignore lists and graded judgements."""
    case = judged_case(6)
    np.save(tmp_path / "corpus.npy", case["ref"])
    mapped = np.load(tmp_path / "corpus.npy", mmap_mode="r")
    kwargs = {**case["kwargs"], "distance": case["distance"], "metrics": RANKING_METRICS}
    base = quietly(embedeval.evaluate_retrieval, case["x"], case["ref"], case["qrels"], **kwargs)
    streamed = quietly(
        embedeval.evaluate_retrieval,
        case["x"],
        mapped,
        case["qrels"],
        stream_reference=True,
        shard_size=4,
        n_threads=2,
        **kwargs,
    )
    for name in RANKING_METRICS:
        np.testing.assert_array_equal(streamed.per_query[name], base.per_query[name], err_msg=name)


@pytest.mark.parametrize("seed", range(6))
def test_continuous_data_with_ignore_rules_ranked_as_float64(seed):
    """Gaussian data far from the origin (large float32 error: deep, repeated searches), many
    references ignored per query, a class of half the data (the float64 path)."""
    rng = np.random.default_rng(500 + seed)
    distance = ("euclidean", "inner_product")[seed % 2]
    x = (rng.standard_normal((160, 6)) + (300.0 if seed % 3 == 0 else 0.0)).astype(np.float32)
    labels = np.where(rng.random(160) < 0.5, 0, rng.integers(1, 12, 160))
    keys = rng.integers(0, 5, 160)
    result = embedeval.evaluate(x, labels, metrics=EMBEDDING_METRICS, distance=distance, ignore_same=(keys, keys))
    expected = evaluate_general(
        x,
        x,
        [m.replace("recall@", "hit_rate@") for m in EMBEDDING_METRICS],
        distance,
        lambda i, j: labels[i] == labels[j],
        lambda i: set(np.flatnonzero(keys == keys[i]).tolist()),
    )
    for name, want in zip(EMBEDDING_METRICS, expected.values(), strict=True):
        np.testing.assert_allclose(result.per_query[name], want, rtol=1e-12, atol=0, err_msg=name)


@pytest.mark.parametrize("seed", range(4))
def test_label_set_r_is_exact_in_small_chunks(seed, monkeypatch):
    """R of label sets (and the relevant references sharing a key) computed set by set, in chunks
    forced down to a few elements, equals a count over every (query, reference) pair."""
    from embedeval._core import budget as _budget
    from embedeval._relevance import IgnoreRules, Relevance

    rng = np.random.default_rng(seed)
    q_sets, r_sets = label_sets(rng, 200, 70), label_sets(rng, 300, 70)  # more than 64 labels: two words
    q_keys, r_keys = rng.integers(0, 7, 200), rng.integers(0, 7, 300)
    monkeypatch.setattr(_budget, "RANKING_ELEMENTS", 5)
    source = read_multilabels("sets", q_sets, "sets", r_sets, ("labels", "reference_labels"))
    assert isinstance(source, MultiLabels) and source.bits.shape[1] == 2
    rules = IgnoreRules.build(200, 300, False, (q_keys, r_keys), None)
    relevance = Relevance.build(source, 300, rules)
    meets = np.array([[bool(a & b) for b in r_sets] for a in q_sets])
    np.testing.assert_array_equal(relevance.n_before, meets.sum(axis=1))
    np.testing.assert_array_equal(relevance.n_relevant, (meets & (q_keys[:, None] != r_keys[None, :])).sum(axis=1))


def test_tuples_stay_single_labels_and_sets_mean_these_labels():
    """(identity, camera) tuples are one label each; a list of frozensets is label sets now."""
    x = np.array([[0.0], [0.1], [5.0], [5.1]])
    tuples = [(1, "a"), (1, "b"), (1, "a"), (1, "b")]
    r = embedeval.evaluate(x, tuples, metrics=["precision@1"])
    np.testing.assert_array_equal(r.per_query["precision@1"], [0, 0, 0, 0])
    assert r.per_class.labels.tolist() == [(1, "a"), (1, "b")]
    sets = [frozenset({1, 2}), frozenset({2}), frozenset({3}), frozenset({1, 3})]
    r = embedeval.evaluate(x, sets, metrics=["precision@1"])
    # 0 -> 1 (shares 2), 1 -> 0 (shares 2), 2 -> 3 (shares 3), 3 -> 2 (shares 3)
    np.testing.assert_array_equal(r.per_query["precision@1"], [1, 1, 1, 1])
    assert r.per_class is None and "at least one label" in r.conventions["relevance"]
    assert r.config["n_labels"] == 3 and r.config["n_label_sets"] == 4


def test_indicator_and_sets_give_the_same_numbers():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((80, 5)).astype(np.float32)
    sets = label_sets(rng, 80)
    a = embedeval.evaluate(x, sets, metrics=EMBEDDING_METRICS)
    b = embedeval.evaluate(x, as_indicator(sets), metrics=EMBEDDING_METRICS)
    c = embedeval.evaluate(x, [sorted(s) for s in sets], metrics=EMBEDDING_METRICS)  # lists are sets
    for name in EMBEDDING_METRICS:
        np.testing.assert_array_equal(a.per_query[name], b.per_query[name])
        np.testing.assert_array_equal(a.per_query[name], c.per_query[name])


def test_single_labels_against_a_multi_label_gallery():
    """A query's single label is a set of one: relevant references hold it among theirs."""
    q = np.array([[0.0], [10.0]])
    ref = np.array([[1.0], [2.0], [9.0]])
    r = embedeval.evaluate(
        q, ["cat", "dog"], reference=ref, reference_labels=[{"dog"}, {"cat", "dog"}, {"cat"}], metrics=["map"]
    )
    # query 0 (cat): ranking 0 (dog), 1 (cat, dog), 2 (cat): AP = (1/2 + 2/3) / 2
    # query 1 (dog): ranking 2 (cat), 1 (cat, dog), 0 (dog): AP = (1/2 + 2/3) / 2
    np.testing.assert_allclose(r.per_query["map"], [7 / 12, 7 / 12])


def test_ignored_duplicates_keep_their_ranks():
    """Removed by index, never by position: an ignored reference's exact copy keeps its rank."""
    x = np.array([[0.0], [0.0], [0.0], [3.0]])
    labels = ["a", "a", "b", "a"]
    # Query 0 ignores reference 1 (a copy of itself): ranking 2 (b), 3 (a).
    r = embedeval.evaluate(x, labels, ignore={0: [1]}, metrics=["precision@1", "map"])
    assert r.per_query["precision@1"][0] == 0.0 and r.per_query["map"][0] == pytest.approx(0.5)
    # Query 1 ignores nothing but itself: ranking 0 (a), 2 (b), 3 (a).
    assert r.per_query["precision@1"][1] == 1.0
    # counted: the four queries themselves (leave-one-out) and the listed pair, all relevant
    assert r.config["n_ignored"] == 5 and r.config["n_relevant_ignored"] == 5


def test_every_relevant_reference_ignored_is_its_own_skip_reason():
    x = np.array([[0.0], [1.0], [2.0], [3.0]])
    keys = [0, 0, 1, 2]
    r = embedeval.evaluate(x, ["a", "a", "b", "b"], ignore_same=(keys, keys), metrics=["map"])
    # queries 0 and 1 share label and key: each one's only relevant reference is ignored
    assert r.skipped == {"no_relevant": 0, "relevant_ignored": 2}  # stable codes
    assert r.skipped.reasons == {
        "no_relevant": "no other embedding shares the query's label (R = 0)",
        "relevant_ignored": "every relevant reference is ignored (R = 0 after ignoring)",
    }
    assert r.skipped["every relevant reference is ignored (R = 0 after ignoring)"] == 2  # the sentence still works
    np.testing.assert_array_equal(np.isnan(r.per_query["map"]), [True, True, False, False])
    assert "ignore_same key" in r.conventions["ignore"]


def test_retrieval_conventions_and_counts():
    q = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    c = np.array([[1.0, 0.0], [0.0, 1.0]])
    qrels = {"a": {"x": 1}, "b": {"x": 1}}
    r = embedeval.evaluate_retrieval(
        q, c, qrels, query_ids=["a", "b", "c"], corpus_ids=["x", "y"], ignore={"b": ["x"]}, metrics=["mrr"]
    )
    np.testing.assert_array_equal(r.per_query["mrr"], [1.0, np.nan, np.nan])
    assert r.skipped == {"no_relevant": 0, "relevant_ignored": 1, "not_judged": 1}
    assert r.skipped.reasons["not_judged"] == "the query has no judgements in 'qrels'"
    assert r.config["query_ids"] == ["a", "b", "c"] and r.config["n_relevant_ignored"] == 1
    zero = embedeval.evaluate_retrieval(
        q,
        c,
        qrels,
        query_ids=["a", "b", "c"],
        corpus_ids=["x", "y"],
        ignore={"b": ["x"]},
        metrics=["mrr"],
        empty="zero",
    )
    np.testing.assert_array_equal(zero.per_query["mrr"], [1.0, 0.0, np.nan])  # unjudged stays skipped
