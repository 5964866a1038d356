"""Every input form of evaluate_rankings against one slow reference (plain loops over full
rankings): sequences, mappings, {id: score} runs, 2-D arrays, lists of arrays, TREC files; ties,
ragged and empty rankings, many judged ids per query, negative ids, hash collisions, blocks."""

from __future__ import annotations

import math

import numpy as np
import pytest

import embedeval
from embedeval._forms import mappings as _python_forms
from embedeval._forms import match as _match

METRICS = [
    "precision@3",
    "recall@5",
    "hit_rate@2",
    "r_precision",
    "map",
    "map@4",
    "mrr",
    "mrr@3",
    "ndcg",
    "ndcg@5",
    "capped_recall@4",
    "cg@3",
]


def reference(ranking: list, judged: dict, metric: str, threshold: float = 1.0) -> float:
    """One metric of one query from its full ranking, by its definition; NaN when R = 0."""
    grades = [judged.get(d, 0.0) for d in ranking]
    rel = [g >= threshold for g in grades]
    r = sum(1 for g in judged.values() if g >= threshold)
    if r == 0:
        return math.nan
    family, _, cut = metric.partition("@")
    k = int(cut) if cut else None  # None: the whole ranking (and every judged grade for the ideal)
    precision_at = [sum(rel[: i + 1]) / (i + 1) for i in range(len(rel))]
    if family == "precision":
        return sum(rel[:k]) / k
    if family == "recall":
        return sum(rel[:k]) / r
    if family == "capped_recall":
        return sum(rel[:k]) / min(k, r)
    if family == "hit_rate":
        return float(any(rel[:k]))
    if family == "r_precision":
        return sum(rel[:r]) / r
    if family == "map":
        return sum(p for p, x in zip(precision_at[:k], rel, strict=False) if x) / r
    if family == "mrr":
        first = next((i + 1 for i, x in enumerate(rel) if x), None)
        return 0.0 if first is None or (k is not None and first > k) else 1.0 / first
    gains = [max(g, 0.0) for g in grades]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]))
    if family == "cg":
        return sum(gains[:k])
    ideal = sorted((max(g, 0.0) for g in judged.values()), reverse=True)
    return dcg / sum(g / math.log2(i + 2) for i, g in enumerate(ideal[:k]))


def random_case(seed: int, ids: str = "int", max_len: int = 30):
    """Rankings (distinct ids, ragged, some empty) and graded judgements (grades -1..3, some
    queries with many judged ids, some with none relevant, judged ids never retrieved)."""
    rng = np.random.default_rng(seed)
    name = {"int": int, "str": lambda i: f"doc-{i}", "negative": lambda i: i - 50}[ids]
    rankings, judgements = [], []
    for _ in range(int(rng.integers(1, 25))):
        length = int(rng.integers(0, max_len))
        pool = rng.choice(100, size=length + 15, replace=False)
        rankings.append([name(int(i)) for i in pool[:length]])
        n_judged = int(rng.integers(0, 20)) if rng.random() < 0.8 else int(rng.integers(0, 3))
        chosen = rng.choice(pool, size=min(n_judged, pool.size), replace=False)
        judgements.append(
            {name(int(i)): float(g) for i, g in zip(chosen, rng.integers(-1, 4, chosen.size), strict=True)}
        )
    return rankings, judgements


def expected(rankings, judgements, metrics=METRICS, threshold=1.0):
    return {
        m: np.array([reference(r, j, m, threshold) for r, j in zip(rankings, judgements, strict=True)]) for m in metrics
    }


def assert_matches(result, want):
    for m, values in want.items():
        np.testing.assert_allclose(result.per_query[m], values, rtol=1e-12, atol=1e-12, err_msg=m)


def scored(ranking: list, rng) -> dict:
    """A {id: score} run whose trec_eval order (score descending, ties by id descending) is ``ranking``."""
    out, score = {}, 100.0
    for i, d in enumerate(ranking):
        # keep a tie only where the id order agrees with trec_eval's tie rule
        if i and rng.random() < 0.3 and d < ranking[i - 1]:
            out[d] = score
        else:
            score -= float(rng.integers(1, 3))
            out[d] = score
    items = list(out.items())
    rng.shuffle(items)  # insertion order must not matter
    return dict(items)


@pytest.mark.parametrize("ids", ["int", "str", "negative"])
@pytest.mark.parametrize("seed", range(12))
def test_every_python_form_gives_the_reference_values(seed, ids):
    """Lists, tuples, mappings of lists, {id: score} runs and lists of arrays: the same numbers."""
    rankings, judgements = random_case(seed, ids)
    want = expected(rankings, judgements)
    keys = [f"q{i}" for i in range(len(rankings))]
    rng = np.random.default_rng(seed)
    forms = {
        "lists": (rankings, judgements),
        "tuples": ([tuple(r) for r in rankings], judgements),
        "mappings": (dict(zip(keys, rankings, strict=True)), dict(zip(keys, judgements, strict=True))),
        "scored": (
            {k: scored(r, rng) for k, r in zip(keys, rankings, strict=True)},
            dict(zip(keys, judgements, strict=True)),
        ),
        "arrays": ([np.array(r) for r in rankings], judgements),
    }
    for form, (r, j) in forms.items():
        result = embedeval.evaluate_rankings(r, j, metrics=METRICS)
        for m, values in want.items():
            np.testing.assert_allclose(result.per_query[m], values, rtol=1e-12, atol=1e-12, err_msg=f"{form} {m}")


@pytest.mark.parametrize("seed", range(12))
def test_two_dimensional_arrays_give_the_reference_values(seed):
    """A padded 2-D id array with judgements as dicts, as an id array with grades, and as sets."""
    rankings, judgements = random_case(seed, "int")
    width = max(map(len, rankings), default=0) + 2
    ranked = np.array([r + [-1] * (width - len(r)) for r in rankings])
    assert_matches(embedeval.evaluate_rankings(ranked, judgements, metrics=METRICS), expected(rankings, judgements))
    judged_width = max(map(len, judgements)) + 1
    ids = np.array([list(j) + [-1] * (judged_width - len(j)) for j in judgements])
    grades = np.array([list(j.values()) + [0] * (judged_width - len(j)) for j in judgements])
    result = embedeval.evaluate_rankings(ranked, ids, grades=grades, metrics=METRICS)
    assert_matches(result, expected(rankings, judgements))
    binary = [{d for d, g in j.items() if g >= 1} for j in judgements]
    sets_want = expected(rankings, [dict.fromkeys(b, 1.0) for b in binary])
    assert_matches(embedeval.evaluate_rankings(ranked, binary, metrics=METRICS), sets_want)
    assert_matches(embedeval.evaluate_rankings(rankings, binary, metrics=METRICS), sets_want)


@pytest.mark.parametrize("seed", range(6))
def test_small_blocks_and_the_sorted_search_change_nothing(seed, monkeypatch):
    """Rows matched in tiny blocks, and judged ids found by sorting rows instead of passes."""
    rankings, judgements = random_case(seed, "str")
    want = expected(rankings, judgements)
    width = max(map(len, rankings), default=0) + 1
    ranked = np.array([[int(d[4:]) for d in r] + [-1] * (width - len(r)) for r in rankings])
    judged_int = [{int(d[4:]): g for d, g in j.items()} for j in judgements]
    for block, passes in ((7, 8), (10**6, 0), (31, 0)):
        monkeypatch.setattr(_match, "BLOCK_ENTRIES", block)
        monkeypatch.setattr(_match, "_PASSES", passes)
        assert_matches(embedeval.evaluate_rankings(rankings, judgements, metrics=METRICS), want)
        assert_matches(embedeval.evaluate_rankings(ranked, judged_int, metrics=METRICS), want)


class Collider:
    """An id whose hash is always the same: every id of a ranking collides."""

    def __init__(self, value):
        self.value = value

    def __hash__(self):
        return 7

    def __eq__(self, other):
        return isinstance(other, Collider) and other.value == self.value

    def __lt__(self, other):
        return self.value < other.value


@pytest.mark.parametrize("seed", range(4))
def test_hash_collisions_fall_back_to_exact_matching(seed):
    rankings, judgements = random_case(seed, "int")
    want = expected(rankings, judgements)
    wrapped = [[Collider(d) for d in r] for r in rankings]
    judged = [{Collider(d): g for d, g in j.items()} for j in judgements]
    assert_matches(embedeval.evaluate_rankings(wrapped, judged, metrics=METRICS), want)


def test_ids_minus_one_and_minus_two_share_a_hash_yet_count_apart():
    """CPython's hash(-1) == hash(-2): the ids must still be told apart."""
    assert hash(-1) == hash(-2)
    r = embedeval.evaluate_rankings([[-2, -1, 5]], [{-1: 1}], metrics=["mrr", "precision@1"])
    assert r.summary == {"mrr": 0.5, "precision@1": 0.0}


def test_scored_runs_with_ties_follow_trec_eval_and_ignore_insertion_order():
    run = {"q": {"a": 1.0, "c": 2.0, "b": 2.0, "d": 2.0}}
    # order: c, b? no: score desc, ties by id descending -> d, c, b, a
    for relevant, rank in (("d", 1), ("c", 2), ("b", 3), ("a", 4)):
        r = embedeval.evaluate_rankings(run, {"q": {relevant: 1}}, metrics=["mrr"])
        assert r.summary["mrr"] == 1 / rank
    assert _python_forms.order_by_score(run["q"]) == ["d", "c", "b", "a"]


def test_empty_rankings_and_infinite_scores_are_fine():
    run = {"q1": {}, "q2": {"a": float("inf"), "b": -float("inf"), "c": 0.0}}
    r = embedeval.evaluate_rankings(run, {"q1": {"x": 1}, "q2": {"b": 1}}, metrics=["mrr", "recall@2"])
    assert r.per_query["mrr"].tolist() == [0.0, 1 / 3]
    assert r.per_query["recall@2"].tolist() == [0.0, 0.0]


def test_a_two_dimensional_array_of_string_ids_with_sets():
    ranked = np.array([["a", "b", "c"], ["d", "e", "f"]])
    r = embedeval.evaluate_rankings(ranked, [{"b"}, {"f", "z"}], metrics=["mrr", "recall@3"])
    assert r.per_query["mrr"].tolist() == [0.5, 1 / 3] and r.per_query["recall@3"].tolist() == [1.0, 0.5]
