"""Float embeddings under a tie-aware rule: every rule against a float64 full sort in plain Python and
against every permutation of every tie group, every relevance source and ignore rule, chunked
scans, scikit-learn's tie-averaged nDCG, the CLI, and bad input."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest
from reference import graded_metric

import embedeval
from embedeval._embeddings.labelled import read_embeddings as _read_embeddings
from embedeval._embeddings.labelled import read_relevance as _read_relevance
from embedeval._inputs.arrays import prepare
from embedeval._metrics.expected import compute
from embedeval._metrics.registry import EMBEDDINGS, RANKINGS, parse_metrics
from embedeval._metrics.ties import tied_hits_from_dense
from embedeval._pipeline import route
from embedeval._pipeline import tied_scan as _tied_embeddings
from embedeval._pipeline.options import Options
from embedeval._search.tied_scan import TiedScanner

RULES = (None, "expected", "optimistic", "pessimistic")
METRICS = [
    *(f"{f}@{k}" for f in ("precision", "recall", "hit_rate", "map", "map_hits", "mrr") for k in (1, 3, 10, 40)),
    *("r_precision", "map@r", "map", "mrr", "cmc@5"),
]
MONOTONE = [m for m in METRICS if not m.startswith("map_hits")]
RANKED = [
    *(f"{f}@{k}" for f in ("precision", "recall", "map", "mrr", "ndcg", "dcg", "cg") for k in (1, 4, 20)),
    *("r_precision", "map@r", "map", "mrr", "ndcg"),
]


def lattice(rng, n, d, levels=3):
    """Integer points: float64 distances are exact integers, so equal ones tie exactly."""
    return rng.integers(0, levels, (n, d)).astype(np.float32)


def distances(q, refs, distance):
    """float64 distances of one prepared query to prepared references (the library's exact formula)."""
    q64, r64 = np.asarray(q, dtype=np.float64), np.asarray(refs, dtype=np.float64)
    if distance == "euclidean":
        return ((r64 - q64) ** 2).sum(axis=1)
    return -(r64 * q64).sum(axis=1)


def full_sort(queries, refs, distance, grade, ignored):
    """Per query: (distances, grades) of every kept reference, sorted by (float64 distance, index)."""
    qp, rp = prepare(np.asarray(queries, np.float32), distance), prepare(np.asarray(refs, np.float32), distance)
    out = []
    for i, q in enumerate(qp):
        d = distances(q, rp, distance)
        kept = sorted((j for j in range(len(rp)) if j not in ignored(i)), key=lambda j: (d[j], j))
        out.append((np.array([d[j] for j in kept]), np.array([float(grade(i, j)) for j in kept])))
    return out


def reference(rule, queries, refs, metrics, distance, grade, ignored, threshold=1.0, form=EMBEDDINGS):
    """Per-query values from a full sort: the expected kernels on its tie groups, or the ordered
    ranking (ties by index, or by grade descending/ascending) through plain loops."""
    rows = full_sort(queries, refs, distance, grade, ignored)
    n_q, n_r = len(rows), len(refs)
    if rule == "expected":
        dist, grades = np.full((n_q, n_r), np.nan), np.zeros((n_q, n_r))
        for i, (d, g) in enumerate(rows):
            dist[i, : d.size], grades[i, : g.size] = d, g
        n_relevant = (grades >= threshold).sum(axis=1)
        ideal = -np.sort(-np.maximum(grades, 0.0), axis=1)
        parsed = parse_metrics(metrics, form)
        values = compute(parsed, tied_hits_from_dense(dist, grades, threshold, n_relevant, ideal))
        return {m.name: np.where(n_relevant > 0, values[m.name], np.nan) for m in parsed}
    out = {m: np.full(n_q, np.nan) for m in metrics}
    for i, (d, g) in enumerate(rows):
        if rule is not None:
            sign = -1.0 if rule == "optimistic" else 1.0
            order = np.lexsort((np.arange(d.size), sign * np.maximum(g, 0.0), d))
            g = g[order]
        R = int((g >= threshold).sum())
        if R == 0:
            continue
        ideal = [x for x in g if x > 0]
        for m in metrics:
            family = m.partition("@")[0]
            name = m.replace("recall@", "hit_rate@") if family == "recall" and form == EMBEDDINGS else m
            out[m][i] = graded_metric(name, list(g), R, ideal, threshold)
    return out


def assert_close(got: dict, want: dict, what=""):
    for m, v in want.items():
        np.testing.assert_allclose(got[m], v, rtol=1e-11, atol=1e-12, err_msg=f"{what} {m}")


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("distance", ["euclidean", "inner_product", "cosine"])
@pytest.mark.parametrize("rule", RULES)
def test_class_labels_leave_one_out_against_a_full_sort(rule, distance):
    rng = np.random.default_rng(0)
    x = lattice(rng, 70, 3) + (1.0 if distance == "cosine" else 0.0)  # no zero rows for cosine
    x[50:60] = x[:10]  # exact duplicates
    labels = rng.integers(0, 5, 70)
    labels[60:63] = [97, 98, 99]  # classes of one: skipped
    got = _quiet(embedeval.evaluate, x, labels, metrics=METRICS, ties=rule, distance=distance)
    want = reference(rule, x, x, METRICS, distance, lambda i, j: labels[i] == labels[j], lambda i: {i})
    assert_close(got.per_query, want, f"{rule} {distance}")
    assert got.n_evaluated == 67


@pytest.mark.parametrize("rule", RULES)
def test_a_separate_reference_set_with_duplicates_against_a_full_sort(rule):
    rng = np.random.default_rng(1)
    gallery = lattice(rng, 90, 2, levels=4)
    gallery[60:] = gallery[:30]
    queries = np.concatenate([lattice(rng, 20, 2, levels=4), gallery[:5]])
    q_labels, g_labels = rng.integers(0, 4, 25), rng.integers(0, 4, 90)
    got = _quiet(
        embedeval.evaluate, queries, q_labels, reference=gallery, reference_labels=g_labels, metrics=METRICS, ties=rule
    )
    want = reference(
        rule, queries, gallery, METRICS, "euclidean", lambda i, j: q_labels[i] == g_labels[j], lambda i: set()
    )
    assert_close(got.per_query, want, rule)


@pytest.mark.parametrize("rule", RULES)
def test_label_sets_and_every_ignore_rule_against_a_full_sort(rule):
    """Multi-labels (share a label), ignore_same keys and explicit ignore lists, leave-one-out, together."""
    rng = np.random.default_rng(2)
    n = 60
    x = lattice(rng, n, 3)
    sets = [set(rng.choice(5, int(rng.integers(1, 3)), replace=False).tolist()) for _ in range(n)]
    keys = rng.integers(0, 8, n)
    lists = {i: rng.choice(n, 3, replace=False).tolist() for i in range(0, n, 4)}

    def ignored(i):
        return {i} | {j for j in range(n) if keys[j] == keys[i]} | set(lists.get(i, []))

    got = _quiet(
        embedeval.evaluate,
        x,
        [sorted(s) for s in sets],
        metrics=METRICS,
        ties=rule,
        ignore_same=(keys, keys),
        ignore=lists,
    )
    want = reference(rule, x, x, METRICS, "euclidean", lambda i, j: bool(sets[i] & sets[j]), ignored)
    assert_close(got.per_query, want, rule)


def _judged(seed, n_q=15, n_c=80):
    rng = np.random.default_rng(seed)
    corpus, queries = lattice(rng, n_c, 2, levels=4), lattice(rng, n_q, 2, levels=4)
    corpus[40:] = corpus[:40]
    grades = np.zeros((n_q, n_c))
    for i in range(n_q):
        judged = rng.choice(n_c, 25, replace=False)
        grades[i, judged] = rng.integers(-1, 4, 25)
    qrels = {i: {int(j): int(grades[i, j]) for j in np.flatnonzero(grades[i])} for i in range(n_q)}
    return queries, corpus, grades, qrels


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
def test_judged_retrieval_with_grades_and_ignore_lists_against_a_full_sort(rule, distance):
    queries, corpus, grades, qrels = _judged(3)
    lists = {i: [i, i + 40] for i in range(0, 15, 3)}

    def ignored(i):
        return set(lists.get(i, []))

    got = _quiet(
        embedeval.evaluate_retrieval, queries, corpus, qrels, metrics=RANKED, ties=rule, distance=distance, ignore=lists
    )
    want = reference(rule, queries, corpus, RANKED, distance, lambda i, j: grades[i, j], ignored, form=RANKINGS)
    assert_close(got.per_query, want, f"{rule} {distance}")
    assert got.config["ties"] == (rule or "index")


@pytest.mark.parametrize("k", [1, 3, 10, None])
def test_expected_ndcg_agrees_with_scikit_learn_tie_averaging(k):
    """ndcg_score(ignore_ties=False) on minus the float64 distances, every corpus entry scored."""
    metrics = pytest.importorskip("sklearn.metrics")
    queries, corpus, grades, qrels = _judged(4)
    name = "ndcg" if k is None else f"ndcg@{k}"
    got = embedeval.evaluate_retrieval(
        queries, corpus, qrels, metrics=[name], ties="expected", distance="euclidean"
    ).per_query[name]
    for i, q in enumerate(queries):
        scores = -distances(q, corpus, "euclidean")
        want = metrics.ndcg_score(np.maximum(grades[i], 0)[None], scores[None], k=k, ignore_ties=False)
        assert got[i] == pytest.approx(want, rel=1e-12), i


@pytest.mark.parametrize("seed", range(6))
def test_tiny_cases_equal_the_mean_best_and_worst_over_every_tied_order(seed):
    """Brute force: every permutation of every tie group of exact float64 distances, scored by plain loops."""
    rng = np.random.default_rng(seed)
    gallery, queries = lattice(rng, 7, 2, levels=2), lattice(rng, 6, 2, levels=2)
    g_labels, q_labels = rng.integers(0, 3, 7), rng.integers(0, 3, 6)
    names = ["precision@1", "precision@3", "hit_rate@2", "map@4", "map", "map@r", "mrr", "r_precision", "map_hits@3"]
    got = {
        rule: _quiet(
            embedeval.evaluate,
            queries,
            q_labels,
            reference=gallery,
            reference_labels=g_labels,
            metrics=names,
            ties=rule,
        ).per_query
        for rule in RULES[1:]
    }
    for i, q in enumerate(queries):
        rel = [float(q_labels[i] == g) for g in g_labels]
        R = int(sum(rel))
        if R == 0:
            continue
        dist = distances(q, gallery, "euclidean")
        groups = [[j for j in range(7) if dist[j] == t] for t in sorted(set(dist))]
        values = {m: [] for m in names}
        for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
            ranked = [rel[j] for group in combo for j in group]
            for m in names:
                values[m].append(graded_metric(m, ranked, R, [1.0] * R))
        for m in names:
            assert got["expected"][m][i] == pytest.approx(np.mean(values[m]), rel=1e-12, abs=1e-14), m
            if m in MONOTONE:
                assert got["optimistic"][m][i] == pytest.approx(max(values[m]), rel=1e-12), m
                assert got["pessimistic"][m][i] == pytest.approx(min(values[m]), rel=1e-12), m


@pytest.mark.parametrize("distance", ["euclidean", "cosine", "inner_product"])
def test_without_ties_the_four_rules_give_the_index_rules_values(distance):
    """Continuous embeddings: no two float64 distances of a query are equal, so one order only."""
    rng = np.random.default_rng(5)
    x, labels = rng.standard_normal((80, 6)).astype(np.float32), rng.integers(0, 4, 80)
    values = {rule: embedeval.evaluate(x, labels, metrics=METRICS, ties=rule, distance=distance) for rule in RULES}
    for rule in RULES[1:]:
        for m in METRICS:
            np.testing.assert_allclose(
                values[rule].per_query[m], values[None].per_query[m], rtol=1e-13, err_msg=f"{rule} {m}"
            )


def test_distances_equal_in_float32_but_not_in_float64_are_not_tied():
    """References at float64 distances 1, 1 + 2**-40 and 1 (the first two equal in float32)."""
    q = np.zeros((1, 2), dtype=np.float32)
    refs = np.array([[1.0, 0.0], [1.0, 2.0**-20], [0.0, 1.0]], dtype=np.float32)
    d = distances(q[0], refs, "euclidean")
    assert np.float32(d[1]) == np.float32(d[0]) and d[1] > d[0] == d[2]
    r = embedeval.evaluate(q, [1], reference=refs, reference_labels=[0, 1, 1], metrics=["mrr"], ties="expected")
    assert r.summary["mrr"] == pytest.approx(0.75, rel=1e-14)  # a group of two holding one relevant; 0.8333 if three


def _score_with(pairs, rule, x, labels, metrics, block_size=None, distance="euclidean"):
    parsed = parse_metrics(metrics, EMBEDDINGS)
    options = Options.check(parsed, distance=distance, block_size=block_size, n_threads=1, ties=rule)
    q, r, _ = _read_embeddings(x, None, None, distance)
    _, relevance = _read_relevance(labels, None, q, r, None, None)
    evaluated = np.flatnonzero(relevance.n_relevant > 0)
    scanner = TiedScanner(prepare(r, distance), distance == "euclidean", pairs=pairs)
    return route.run(options, q, r, relevance, parsed, evaluated, searcher=scanner)[0]


@pytest.mark.parametrize("rule", RULES[1:])
def test_results_do_not_depend_on_blocks_or_chunks(rule):
    """Chunks of 1, 7, 100 references per query, blocks of 1 to all queries: identical numbers."""
    rng = np.random.default_rng(6)
    x, labels = lattice(rng, 120, 2), rng.integers(0, 5, 120)
    metrics = ["precision@5", "map", "map@r", "map_hits@30", "mrr@3", "r_precision"]
    whole = _score_with(1 << 20, rule, x, labels, metrics)
    for pairs, block_size in ((1, 1), (7 * 13, 13), (100 * 40, 40), (1 << 20, 120)):
        part = _score_with(pairs, rule, x, labels, metrics, block_size)
        for m, v in whole.items():
            np.testing.assert_array_equal(part[m], v, err_msg=f"{pairs} {m}")
    truth = reference(rule, x, x, metrics, "euclidean", lambda i, j: labels[i] == labels[j], lambda i: {i})
    assert_close(whole, truth, rule)
    api = embedeval.evaluate(x, labels, metrics=metrics, ties=rule, block_size=17, n_threads=2)
    assert_close(api.per_query, whole, rule)


def test_a_quantised_continuous_case_against_a_full_sort():
    """Embeddings rounded to one decimal: ties where float64 distances are exactly equal, not elsewhere."""
    rng = np.random.default_rng(7)
    x = np.round(rng.standard_normal((150, 4)), 1).astype(np.float32)
    labels = rng.integers(0, 6, 150)
    for rule in RULES[1:]:
        got = embedeval.evaluate(x, labels, metrics=["map", "precision@10", "map@r"], ties=rule)
        want = reference(
            rule,
            x,
            x,
            ["map", "precision@10", "map@r"],
            "euclidean",
            lambda i, j: labels[i] == labels[j],
            lambda i: {i},
        )
        assert_close(got.per_query, want, rule)


def test_the_result_names_the_rule_and_what_tied_means():
    x, labels = lattice(np.random.default_rng(8), 30, 2), [0, 1, 2] * 10
    r = embedeval.evaluate(x, labels, metrics=["map"], ties="expected")
    assert r.config["ties"] == "expected"
    assert "exactly equal float64 distances" in r.conventions["ties"]
    assert "exactly equal float64 distances" in r.config["tie_rule"]
    assert r.config["search"] == _tied_embeddings.SEARCH
    plain = embedeval.evaluate(x, labels, metrics=["map"])
    assert plain.conventions["ties"] == "references at equal distance are ranked by index, lower first"


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"index": "HNSW32"}, r"'ties'='expected' scans every reference exactly in this process \(index given\)"),
        ({"shard_size": 10}, r"\(shard_size given\); drop shard_size or leave 'ties' at None"),
        ({"stream_reference": True}, r"\(stream_reference given\)"),
        ({"ties": "average"}, r"'ties' must be None .* got 'average'"),
    ],
)
def test_options_the_scan_does_not_do_are_refused_before_any_work(kwargs, match):
    x, labels = lattice(np.random.default_rng(9), 20, 2), [0, 1] * 10
    with pytest.raises(ValueError, match=match):
        embedeval.evaluate(x, labels, metrics=["precision@3"], **{"ties": "expected", **kwargs})


def test_cli_evaluates_float_embeddings_with_a_tie_rule(tmp_path, capsys):
    from embedeval.cli import main

    rng = np.random.default_rng(10)
    x, labels = lattice(rng, 60, 2), rng.integers(0, 3, 60)
    np.save(tmp_path / "x.npy", x)
    np.savetxt(tmp_path / "labels.txt", labels, fmt="%d")
    files = [str(tmp_path / "x.npy"), str(tmp_path / "labels.txt")]
    for rule in RULES:
        extra = [] if rule is None else ["--ties", rule]
        main(["evaluate", *files, "--metrics", "map", "--format", "json", "--quiet", *extra])
        payload = json.loads(capsys.readouterr().out)
        want = embedeval.evaluate(x, labels, metrics=["map"], ties=rule).summary["map"]
        assert payload["summary"]["map"] == pytest.approx(want, rel=1e-12)
        assert payload["config"]["ties"] == (rule or "index")
