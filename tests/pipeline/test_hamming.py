"""Binary codes ranked by Hamming distance: every rule against a full sort in plain Python, every
relevance source and ignore rule, chunked scans, the code layouts, and bad input."""

from __future__ import annotations

import itertools
import warnings

import faiss
import numpy as np
import pytest
from reference import evaluate_hamming, graded_metric, hamming_distances

import embedeval
from embedeval._embeddings.labelled import read_relevance as _read_relevance
from embedeval._inputs.codes import pack_bits, read_codes
from embedeval._metrics.expected import compute
from embedeval._metrics.registry import EMBEDDINGS, parse_metrics
from embedeval._metrics.ties import tied_hits_from_dense
from embedeval._pipeline import route
from embedeval._pipeline.options import Options
from embedeval._search.hamming import HammingScanner

RULES = (None, "expected", "optimistic", "pessimistic")
METRICS = [
    *(f"{f}@{k}" for f in ("precision", "recall", "hit_rate", "map", "map_hits", "mrr") for k in (1, 3, 10, 40)),
    *("r_precision", "map@r", "map", "mrr", "cmc@5"),
    *(f"{f}_radius@{t}" for f in ("precision", "recall") for t in (0, 1, 2, 5, 99)),
]
MONOTONE = [m for m in METRICS if not m.startswith("map_hits")]


def codes(rng, n, bits, spread=0.5):
    return rng.random((n, bits)) < spread


def expected_reference(q_bits, r_bits, metrics, grade, ignored, threshold=1.0, form=EMBEDDINGS):
    """E[metric] over tied orders from a full sort: ranked distances and grades -> TiedHits (tested by brute force)."""
    parsed = parse_metrics(metrics, form)
    n_r = len(r_bits)
    dist = np.full((len(q_bits), n_r), np.nan)
    grades = np.zeros((len(q_bits), n_r))
    n_relevant, ideal = np.zeros(len(q_bits), dtype=np.int64), np.zeros((len(q_bits), n_r))
    within = np.zeros((len(q_bits), len(q_bits[0]) + 1))
    for i, q in enumerate(q_bits):
        d = hamming_distances(q, r_bits)
        kept = sorted((j for j in range(n_r) if j not in ignored(i)), key=lambda j: (d[j], j))
        dist[i, : len(kept)] = [d[j] for j in kept]
        grades[i, : len(kept)] = [float(grade(i, j)) for j in kept]
        n_relevant[i] = int((grades[i] >= threshold).sum())
        ideal[i] = -np.sort(-np.maximum(grades[i], 0.0))
        within[i] = [sum(d[j] <= t for j in kept) for t in range(within.shape[1])]
    t = tied_hits_from_dense(dist, grades, threshold, n_relevant, ideal)
    values = compute(parsed, t, within)
    return {m.name: np.where(n_relevant > 0, values[m.name], np.nan) for m in parsed}


def reference(rule, q_bits, r_bits, metrics, grade, ignored, threshold=1.0, embeddings=True):
    if rule == "expected":
        form = EMBEDDINGS if embeddings else "rankings"
        return expected_reference(q_bits, r_bits, metrics, grade, ignored, threshold, form)
    return evaluate_hamming(q_bits, r_bits, metrics, grade, ignored, threshold, rule, embeddings)


def assert_close(got: dict, want: dict, what=""):
    for m, v in want.items():
        np.testing.assert_allclose(got[m], v, rtol=1e-11, atol=1e-12, err_msg=f"{what} {m}")


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("rule", RULES)
@pytest.mark.parametrize("block_size", [None, 1, 7])
def test_class_labels_leave_one_out_against_a_full_sort(rule, block_size):
    rng = np.random.default_rng(0)
    bits = codes(rng, 70, 10)
    labels = rng.integers(0, 6, 70)
    labels[:3] = [97, 98, 99]  # classes of one: skipped
    got = _quiet(
        embedeval.evaluate, bits, labels, distance="hamming", metrics=METRICS, ties=rule, block_size=block_size
    )
    want = reference(rule, bits, bits, METRICS, lambda i, j: labels[i] == labels[j], lambda i: {i})
    assert_close(got.per_query, want, rule)
    assert got.n_evaluated == 67


@pytest.mark.parametrize("rule", RULES)
def test_a_separate_gallery_with_duplicated_codes_against_a_full_sort(rule):
    rng = np.random.default_rng(1)
    gallery = codes(rng, 90, 12, 0.3)
    gallery[60:] = gallery[:30]  # exact duplicates: distance 0 ties
    queries = np.concatenate([codes(rng, 20, 12, 0.3), gallery[:5]])
    q_labels, g_labels = rng.integers(0, 4, 25), rng.integers(0, 4, 90)
    got = _quiet(
        embedeval.evaluate,
        queries,
        q_labels,
        reference=gallery,
        reference_labels=g_labels,
        distance="hamming",
        metrics=METRICS,
        ties=rule,
    )
    want = reference(rule, queries, gallery, METRICS, lambda i, j: q_labels[i] == g_labels[j], lambda i: set())
    assert_close(got.per_query, want, rule)


@pytest.mark.parametrize("rule", RULES)
def test_label_sets_and_every_ignore_rule_against_a_full_sort(rule):
    """Multi-label hashing data (share a label), ignore_same keys and explicit ignore lists together."""
    rng = np.random.default_rng(2)
    n = 60
    bits = codes(rng, n, 9)
    sets = [set(rng.choice(5, int(rng.integers(1, 3)), replace=False).tolist()) for _ in range(n)]
    keys = rng.integers(0, 8, n)
    lists = {i: rng.choice(n, 3, replace=False).tolist() for i in range(0, n, 4)}
    got = _quiet(
        embedeval.evaluate,
        bits,
        sets,
        distance="hamming",
        metrics=METRICS,
        ties=rule,
        ignore_same=(keys, keys),
        ignore=lists,
        block_size=11,
    )

    def ignored(i):
        return {i} | {j for j in range(n) if keys[j] == keys[i]} | set(lists.get(i, []))

    want = reference(rule, bits, bits, METRICS, lambda i, j: bool(sets[i] & sets[j]), ignored)
    assert_close(got.per_query, want, rule)
    indicator = np.zeros((n, 5), dtype=bool)
    for i, s in enumerate(sets):
        indicator[i, list(s)] = True
    again = _quiet(
        embedeval.evaluate,
        bits,
        indicator,
        distance="hamming",
        metrics=METRICS,
        ties=rule,
        ignore_same=(keys, keys),
        ignore=lists,
    )
    assert_close(again.per_query, got.per_query, f"indicator {rule}")


@pytest.mark.parametrize("rule", RULES)
def test_judged_retrieval_by_hamming_distance_against_a_full_sort(rule):
    """evaluate_retrieval: graded qrels, trec recall, nDCG, and ignored corpus entries."""
    rng = np.random.default_rng(3)
    corpus, queries = codes(rng, 80, 8), codes(rng, 15, 8)
    qrels = {
        q: {
            int(d): int(g)
            for d, g in zip(rng.choice(80, 12, replace=False), rng.choice([-1, 1, 2, 3], 12), strict=True)
        }
        for q in range(15)
    }
    ignore = {q: [int(d)] for q in range(0, 15, 3) for d in list(qrels[q])[:1]}
    names = ["precision@5", "recall@10", "ndcg@10", "ndcg", "map", "mrr@3", "dcg@5", "map_hits@8", "r_precision"]
    got = _quiet(
        embedeval.evaluate_retrieval,
        queries,
        corpus,
        qrels,
        metrics=names,
        distance="hamming",
        ties=rule,
        ignore=ignore,
    )
    want = reference(
        rule,
        queries,
        corpus,
        names,
        lambda i, j: qrels[i].get(j, 0),
        lambda i: set(ignore.get(i, [])),
        embeddings=False,
    )
    assert_close(got.per_query, want, rule)
    assert got.config["ties"] == (rule or "index") and got.conventions["distance"].startswith("hamming")


def _score_with(scanner_pairs, rule, bits, labels, metrics, block_size=None):
    parsed = parse_metrics(metrics, EMBEDDINGS)
    options = Options.check(parsed, distance="hamming", block_size=block_size, n_threads=1, ties=rule)
    q, r = read_codes(bits, None, ("embeddings", "reference"))
    _, relevance = _read_relevance(labels, None, q, r, None, None)
    evaluated = np.flatnonzero(relevance.n_relevant > 0)
    scanner = HammingScanner(r.packed, r.n_bits, pairs=scanner_pairs)
    return route.run(options, q, r, relevance, parsed, evaluated, searcher=scanner)[0]


@pytest.mark.parametrize("rule", RULES)
def test_results_do_not_depend_on_how_the_references_are_chunked(rule):
    """Chunks of 1, 7, 100 references per query, blocks of 1 to all queries: identical numbers."""
    rng = np.random.default_rng(4)
    bits, labels = codes(rng, 120, 7), rng.integers(0, 5, 120)
    metrics = ["precision@5", "map", "map@r", "map_hits@30", "mrr@3", "precision_radius@1", "r_precision"]
    whole = _score_with(1 << 20, rule, bits, labels, metrics)
    for pairs, block_size in ((1, 1), (7 * 13, 13), (100 * 40, 40), (1 << 20, 120)):
        part = _score_with(pairs, rule, bits, labels, metrics, block_size)
        for m, v in whole.items():
            np.testing.assert_allclose(part[m], v, rtol=1e-14, atol=0, err_msg=f"{pairs} {m}")
    truth = reference(rule, bits, bits, metrics, lambda i, j: labels[i] == labels[j], lambda i: {i})
    assert_close(whole, truth, rule)


@pytest.mark.parametrize("seed", range(8))
def test_tiny_cases_equal_the_mean_best_and_worst_over_every_tied_order(seed):
    """Brute force: every permutation of every tie group, each ranking scored by plain definitions."""
    rng = np.random.default_rng(seed)
    n_refs, n_bits = 7, 3
    gallery, queries = codes(rng, n_refs, n_bits), codes(rng, 6, n_bits)
    g_labels, q_labels = rng.integers(0, 3, n_refs), rng.integers(0, 3, 6)
    names = ["precision@1", "precision@3", "hit_rate@2", "map@4", "map", "map@r", "mrr", "r_precision", "map_hits@3"]
    got = {
        rule: _quiet(
            embedeval.evaluate,
            queries,
            q_labels,
            reference=gallery,
            reference_labels=g_labels,
            distance="hamming",
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
        dist = hamming_distances(q, gallery)
        groups = [[j for j in range(n_refs) if dist[j] == t] for t in sorted(set(dist))]
        values = {m: [] for m in names}
        for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
            ranked = [rel[j] for group in combo for j in group]
            for m in names:
                values[m].append(graded_metric(m.replace("recall", "hit_rate"), ranked, R, [1.0] * R))
        for m in names:
            assert got["expected"][m][i] == pytest.approx(np.mean(values[m]), rel=1e-12, abs=1e-14), m
            if m in MONOTONE:
                assert got["optimistic"][m][i] == pytest.approx(max(values[m]), rel=1e-12), m
                assert got["pessimistic"][m][i] == pytest.approx(min(values[m]), rel=1e-12), m


def test_without_ties_the_four_rules_give_identical_values():
    """Distances all distinct for the query (reference j differs in its first j bits): one order only."""
    rng = np.random.default_rng(5)
    n_bits = 48
    gallery = np.zeros((n_bits, n_bits), dtype=bool)
    for j, flips in enumerate(rng.permutation(n_bits)):
        gallery[j, :flips] = True
    queries = np.zeros((3, n_bits), dtype=bool)
    g_labels, q_labels = rng.integers(0, 3, n_bits), np.array([0, 1, 2])
    names = [m for m in METRICS if not m.startswith("cmc")]
    values = {
        rule: embedeval.evaluate(
            queries,
            q_labels,
            reference=gallery,
            reference_labels=g_labels,
            distance="hamming",
            metrics=names,
            ties=rule,
        ).per_query
        for rule in RULES
    }
    for rule in RULES[1:]:
        for m in names:
            np.testing.assert_array_equal(values[rule][m], values[None][m], err_msg=f"{rule} {m}")


def test_every_code_layout_gives_the_same_numbers():
    """bool, 0/1 integers and floats, and packed uint8 (faiss's bit order, as faiss packs floats)."""
    rng = np.random.default_rng(6)
    bits = codes(rng, 50, 16)
    labels = rng.integers(0, 4, 50)
    packed_by_faiss = np.zeros((50, 2), dtype=np.uint8)
    signs = np.where(bits, 1.0, -1.0).astype(np.float32)  # faiss packs x > 0 as a 1 bit
    faiss.real_to_binary(16 * 50, faiss.swig_ptr(signs), faiss.swig_ptr(packed_by_faiss))
    np.testing.assert_array_equal(pack_bits(bits), packed_by_faiss)
    layouts = [bits, bits.astype(np.int64), bits.astype(np.float32), packed_by_faiss]
    runs = [embedeval.evaluate(x, labels, distance="hamming", metrics=["map", "precision@5"]) for x in layouts]
    mixed = embedeval.evaluate(
        bits, labels, reference=packed_by_faiss, reference_labels=labels, distance="hamming", metrics=["map"]
    )
    truth = evaluate_hamming(bits, bits, ["map"], lambda i, j: labels[i] == labels[j], lambda i: {i})["map"]
    for r in runs:
        np.testing.assert_allclose(r.per_query["map"], truth, rtol=1e-12)
    np.testing.assert_allclose(
        mixed.per_query["map"],
        evaluate_hamming(bits, bits, ["map"], lambda i, j: labels[i] == labels[j], lambda i: set())["map"],
        rtol=1e-12,
    )
    assert runs[0].config["n_bits"] == 16 and runs[3].config["n_bits"] == 16


def test_code_lengths_that_are_not_a_multiple_of_8_are_padded_without_changing_a_distance():
    rng = np.random.default_rng(7)
    bits, labels = codes(rng, 40, 13), rng.integers(0, 3, 40)
    r = embedeval.evaluate(bits, labels, distance="hamming", metrics=["map", "precision_radius@3"])
    want = evaluate_hamming(
        bits, bits, ["map", "precision_radius@3"], lambda i, j: labels[i] == labels[j], lambda i: {i}
    )
    assert_close(r.per_query, want)
    assert r.config["n_bits"] == 13


def test_codes_bypass_the_float_inputs_magnitude_scaling_and_cosine_normalisation():
    """Both readers hand the packed bytes to the scan unchanged (scale 1, no 'scaled' in config),
    never as float embeddings through _inputs/_magnitude."""
    from embedeval._embeddings import labelled as _labelled
    from embedeval._embeddings.pair import read_pair
    from embedeval._inputs.codes import Codes

    rng = np.random.default_rng(13)
    bits = codes(rng, 40, 24).astype(np.float64)  # 0/1 floats: a float reader would take them as embeddings
    packed = np.packbits(bits.astype(bool), axis=1, bitorder="little")
    packed[0] = 255  # every bit set: a byte value no float path would keep as it is
    read = [
        _labelled.read_embeddings(bits, packed, np.zeros(40), "hamming"),
        read_pair(bits, packed, ("queries", "corpus"), "hamming", optional=False),  # evaluate_retrieval's
    ]
    for q, r, scale in read:
        assert isinstance(q, Codes) and isinstance(r, Codes) and scale == 1.0
        np.testing.assert_array_equal(q.packed, np.packbits(bits.astype(bool), axis=1, bitorder="little"))
        np.testing.assert_array_equal(r.packed, packed)
        assert q.packed.dtype == np.uint8 and q.n_bits == r.n_bits == 24
    labels = rng.integers(0, 3, 40)
    result = embedeval.evaluate(bits, labels, reference=packed, reference_labels=labels, distance="hamming")
    assert "scaled" not in result.config and result.config["n_bits"] == 24
    unpacked = np.unpackbits(packed, axis=1, bitorder="little").astype(bool)
    want = evaluate_hamming(bits, unpacked, ["map"], lambda i, j: labels[i] == labels[j], lambda i: set())
    got = embedeval.evaluate(bits, labels, reference=packed, reference_labels=labels, distance="hamming", metrics="map")
    np.testing.assert_allclose(got.per_query["map"], want["map"], rtol=1e-12)


@pytest.mark.parametrize("rule", RULES)
def test_skipped_queries_are_counted_as_on_float_embeddings(rule):
    """Classes of one (leave-one-out), and judged retrieval's three reasons, under every tie rule."""
    rng = np.random.default_rng(14)
    bits, labels = codes(rng, 30, 8), rng.integers(0, 3, 30)
    labels[:2] = [97, 98]
    floats = rng.random((30, 4))
    got = _quiet(embedeval.evaluate, bits, labels, distance="hamming", ties=rule)
    want = _quiet(embedeval.evaluate, floats, labels)
    assert got.skipped == want.skipped and sum(got.skipped.values()) == got.n_skipped == 2
    assert np.isnan(got.per_query["precision@1"][:2]).all() and not np.isnan(got.per_query["precision@1"][2:]).any()
    qrels = {0: {1: 1}, 1: {2: 0}, 3: {3: 1}}  # 1: R = 0; 3: every relevant entry ignored; 2, 4: not judged
    kwargs = {"ignore": {3: [3]}, "metrics": ["map"]}
    got = _quiet(embedeval.evaluate_retrieval, bits[:5], bits, qrels, distance="hamming", ties=rule, **kwargs)
    want = _quiet(embedeval.evaluate_retrieval, floats[:5], floats, qrels, **kwargs)
    assert got.skipped == want.skipped and got.n_skipped == 4 and got.n_evaluated == 1


def test_the_result_names_the_rule_and_the_distance():
    rng = np.random.default_rng(8)
    bits, labels = codes(rng, 30, 8), rng.integers(0, 3, 30)
    plain = embedeval.evaluate(bits, labels, distance="hamming")
    assert plain.config["ties"] == "index" and "ranked by index" in plain.conventions["ties"]
    fair = embedeval.evaluate(bits, labels, distance="hamming", ties="expected")
    assert fair.config["ties"] == "expected" and "equal Hamming distances" in fair.conventions["ties"]
    assert "'expected'" in str(fair)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        (
            {"embeddings": np.array([[0, 1, 2]])},
            ValueError,
            r"binary values \(0 or 1, or bool\).*got 2 at row 0, column 2",
        ),
        ({"embeddings": np.array([[0.0, 0.5]])}, ValueError, "got 0.5 at row 0, column 1"),
        ({"embeddings": np.array([[0.0, np.nan]])}, ValueError, "got nan at row 0, column 1"),
        ({"embeddings": np.array([[-1, 1], [1, 1]])}, ValueError, "got -1 at row 0, column 0"),
        ({"embeddings": np.array(["a", "b"])}, TypeError, "binary codes"),
        ({"embeddings": np.zeros(4, dtype=bool)}, ValueError, r"2-D array of binary codes.*got shape \(4,\)"),
        ({"embeddings": np.zeros((0, 8), dtype=bool)}, ValueError, r"got shape \(0, 8\)"),
        (
            {"reference": np.zeros((4, 60), dtype=bool), "reference_labels": [0, 1, 0, 1]},
            ValueError,
            r"'reference' must hold codes of the length of 'embeddings' \(64 bits, packed uint8\); got 60 bits",
        ),
        (
            {"reference": np.zeros((4, 4), dtype=np.uint8), "reference_labels": [0, 1, 0, 1]},
            ValueError,
            r"64 bits, packed uint8\); got 32 bits \(packed uint8, shape \(4, 4\)\)",
        ),
        ({"ties": "random"}, ValueError, r"'ties' must be None \(the input form's own rule\) or one of"),
        ({"metrics": ["precision_radius@r"]}, ValueError, "Hamming radius in metric 'precision_radius@r'"),
        ({"index": "HNSW32"}, ValueError, r"distance='hamming' scans every code exactly.*index"),
        ({"shard_size": 10, "stream_reference": True}, ValueError, "drop shard_size, stream_reference"),
    ],
)
def test_bad_binary_input_is_refused_before_any_work(kwargs, error, match):
    args = {"embeddings": np.zeros((4, 8), dtype=np.uint8) + 3, "labels": [0, 1, 0, 1], "distance": "hamming", **kwargs}
    labels = args.pop("labels")
    with pytest.raises(error, match=match), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a 0/1 uint8 reference warns before its length is refused
        embedeval.evaluate(args.pop("embeddings"), labels[: 4 if "embeddings" not in kwargs else None], **args)


def test_float_embeddings_refuse_hamming_only_options():
    x, labels = np.random.default_rng(0).random((10, 4)), [0, 1] * 5
    with pytest.raises(ValueError, match=r"\['precision_radius@2'\] count references within a Hamming radius"):
        embedeval.evaluate(x, labels, metrics=["precision_radius@2"])
    with pytest.raises(ValueError, match=r"'ties'='expected' scans every reference .*\(index given\)"):
        embedeval.evaluate(x, labels, ties="expected", index="HNSW32")
    with pytest.raises(ValueError, match="unknown metric 'precision_radius@2' for rankings"):
        embedeval.evaluate_retrieval(x, x, {0: {1: 1}}, metrics=["precision_radius@2"], distance="hamming")


def test_uint8_holding_only_zeros_and_ones_warns_that_it_is_read_as_packed():
    with pytest.warns(UserWarning, match="read as packed codes .* pass it as bool"):
        embedeval.evaluate(np.eye(6, dtype=np.uint8), [0, 0, 1, 1, 2, 2], distance="hamming")


def test_pr_curve_over_radii_against_plain_loops(tmp_path):
    from embedeval.hashing import pr_curve
    from embedeval.plotting import plot_hamming_pr

    rng = np.random.default_rng(9)
    gallery, queries = codes(rng, 120, 6), codes(rng, 30, 6)
    g_sets = [set(rng.choice(4, int(rng.integers(1, 3)), replace=False).tolist()) for _ in range(120)]
    q_sets = [set(rng.choice(4, int(rng.integers(1, 3)), replace=False).tolist()) for _ in range(30)]
    curve = pr_curve(queries, q_sets, reference=gallery, reference_labels=g_sets)
    names = [f"{f}_radius@{t}" for f in ("precision", "recall") for t in range(7)]
    want = evaluate_hamming(queries, gallery, names, lambda i, j: bool(q_sets[i] & g_sets[j]), lambda i: set())
    np.testing.assert_array_equal(curve.radius, np.arange(7))
    np.testing.assert_allclose(curve.precision, [np.nanmean(want[f"precision_radius@{t}"]) for t in range(7)])
    np.testing.assert_allclose(curve.recall, [np.nanmean(want[f"recall_radius@{t}"]) for t in range(7)])
    assert curve.recall[-1] == 1.0 and (np.diff(curve.recall) >= 0).all()
    assert plot_hamming_pr(curve, tmp_path / "pr.png").stat().st_size > 10_000


def test_radius_values_do_not_depend_on_the_tie_rule():
    """A radius never splits a tie group: every rule gives the same precision and recall within it."""
    rng = np.random.default_rng(10)
    bits, labels = codes(rng, 80, 8), rng.integers(0, 3, 80)
    names = [f"{f}_radius@{t}" for f in ("precision", "recall") for t in range(9)]
    runs = [embedeval.evaluate(bits, labels, distance="hamming", metrics=names, ties=rule).per_query for rule in RULES]
    for run in runs[1:]:
        for m in names:
            np.testing.assert_allclose(run[m], runs[0][m], rtol=1e-14, atol=0, err_msg=m)


def test_per_class_averages_and_intervals_of_tie_aware_values():
    from embedeval.stats import bootstrap

    rng = np.random.default_rng(11)
    bits, labels = codes(rng, 90, 8), rng.integers(0, 3, 90)
    r = embedeval.evaluate(bits, labels, distance="hamming", metrics=["map"], ties="expected")
    per_class = r.per_class.values["map"]
    for c, label in enumerate(r.per_class.labels):
        assert per_class[c] == pytest.approx(np.nanmean(r.per_query["map"][labels == label]))
    interval = bootstrap(r, n_bootstrap=200, seed=0)["map"]
    assert interval.low < r.summary["map"] < interval.high


def test_cli_evaluates_codes_with_a_tie_rule(tmp_path, capsys):
    import json

    from embedeval.cli import main

    rng = np.random.default_rng(12)
    bits, labels = codes(rng, 60, 16), rng.integers(0, 3, 60)
    np.save(tmp_path / "codes.npy", pack_bits(bits))
    np.savetxt(tmp_path / "labels.txt", labels, fmt="%d")
    files = [str(tmp_path / "codes.npy"), str(tmp_path / "labels.txt")]
    for rule in RULES:
        extra = [] if rule is None else ["--ties", rule]
        main(["evaluate", *files, "--distance", "hamming", "--metrics", "map", "--format", "json", "--quiet", *extra])
        payload = json.loads(capsys.readouterr().out)
        want = embedeval.evaluate(bits, labels, distance="hamming", metrics=["map"], ties=rule).summary["map"]
        assert payload["summary"]["map"] == pytest.approx(want, rel=1e-12)
        assert payload["config"]["ties"] == (rule or "index")


def test_set_level_metrics_are_refused_for_codes_before_any_work():
    bits, labels = np.eye(8, dtype=bool), [0, 0, 1, 1, 2, 2, 3, 3]
    with pytest.raises(ValueError, match=r"\['nmi', 'eer'\] are computed from float embeddings; distance='hamming'"):
        embedeval.evaluate(bits, labels, distance="hamming", metrics=["map", "nmi", "eer"])


def test_query_in_reference_and_the_self_reference_warning_on_codes():
    """The named rows are ignored by index as on floats; identical codes are no self-reference
    (codes repeat by design), the same array passed twice is."""
    rng = np.random.default_rng(15)
    gallery, labels = codes(rng, 60, 6), rng.integers(0, 3, 60)
    queries, q_labels = gallery[:20].copy(), labels[:20]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 20 identical same-label codes: no warning for codes
        got = embedeval.evaluate(
            queries,
            q_labels,
            reference=gallery,
            reference_labels=labels,
            distance="hamming",
            metrics=["map", "precision@3"],
            query_in_reference=np.arange(20),
        )
        plain = embedeval.evaluate(queries, q_labels, reference=gallery, reference_labels=labels, distance="hamming")
    want = evaluate_hamming(
        queries, gallery, ["map", "precision@3"], lambda i, j: q_labels[i] == labels[j], lambda i: {i}
    )
    assert_close(got.per_query, want)
    assert plain.n_evaluated == 20
    with pytest.warns(UserWarning, match="'reference' is the 'embeddings' array itself"):
        embedeval.evaluate(gallery, labels, reference=gallery, reference_labels=labels, distance="hamming")
    moved = np.roll(np.arange(20), 1)
    with pytest.warns(UserWarning, match="'query_in_reference' maps .* reference rows that differ"):
        embedeval.evaluate(
            queries,
            q_labels,
            reference=gallery,
            reference_labels=labels,
            distance="hamming",
            query_in_reference=moved,
        )
