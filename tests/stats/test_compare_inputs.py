"""compare_systems' inputs: the forms a system may take, pairing by query id, and bad input
refused with the argument, the rule and what arrived."""

from __future__ import annotations

import numpy as np
import pytest

import embedeval
from embedeval.stats import compare_systems


def _rankings(seed, order):
    judge = np.random.default_rng(99)  # the same judgements for every run
    qrels = {f"q{i}": {f"d{j}": 1 for j in range(5) if judge.random() < 0.5} | {"d9": 1} for i in range(30)}
    rng = np.random.default_rng(seed)
    run = {q: list(rng.permutation([f"d{j}" for j in range(10)])) for q in qrels}
    run = {q: run[q] for q in order(list(run))}
    return embedeval.evaluate_rankings(run, qrels, metrics=["ndcg@5", "map"]), run, qrels


def test_results_are_paired_by_query_id_whatever_their_order():
    a, _, qrels = _rankings(0, lambda q: q)
    b, run_b, _ = _rankings(1, lambda q: q[::-1])  # the same queries, listed backwards
    c = compare_systems({"a": a, "b": b}, n_resamples=500, n_bootstrap=200)
    forward = embedeval.evaluate_rankings({q: run_b[q] for q in qrels}, qrels, metrics=["ndcg@5", "map"])
    d = forward.per_query["map"] - a.per_query["map"]
    row = c.pair("a", "b", "map")
    assert row["difference"] == pytest.approx(d.mean())
    assert (row["wins"], row["ties"], row["losses"]) == ((d > 0).sum(), (d == 0).sum(), (d < 0).sum())


def test_values_are_the_means_and_intervals_hold_them():
    rng = np.random.default_rng(0)
    systems = {name: {"m": rng.random(80)} for name in "xyz"}
    c = compare_systems(systems, n_bootstrap=500)
    for name, v in systems.items():
        assert c.values[name]["m"] == pytest.approx(v["m"].mean())
        lo, hi = c.intervals[name]["m"]
        assert lo < c.values[name]["m"] < hi
    assert sorted(c.ranks["m"][s]["rank"] for s in "xyz") == [1, 2, 3]
    assert c.replicates.shape == (500, 3, 1)


def test_nan_queries_are_left_out_of_every_system_and_said():
    a, b = np.arange(10.0), np.arange(10.0) + 1
    a[3] = np.nan
    c = compare_systems([a, b], confidence=None, n_resamples=99)
    assert c.n_queries == 9 and c.pairs[0]["difference"] == 1.0 and "1 of 10 queries left out" in c.notes[0]


def test_runs_give_run_means_and_a_note_when_a_test_ignores_them():
    runs = [np.full(5, 0.5), np.full(5, 0.7)]
    c = compare_systems({"one": np.full(5, 0.55), "seeds": runs}, test="t", confidence=None)
    assert c.values["seeds"]["value"] == pytest.approx(0.6) and c.n_runs == {"one": 1, "seeds": 2}
    assert "ignores the variance between runs" in c.notes[0]
    assert compare_systems({"one": np.full(5, 0.55), "seeds": runs}).settings["test"] == "bootstrap"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"systems": [np.zeros(3)]}, "'systems' must hold at least 2 systems to compare; got 1"),
        ({"systems": "ab"}, "'systems' must be a mapping"),
        ({"systems": [np.zeros(3), np.zeros(4)]}, "has 4 per-query values, the first system 3"),
        ({"systems": [np.zeros(3), np.zeros((3, 2))]}, "must be an evaluation result, a mapping"),
        ({"systems": [np.zeros(3), np.array([0, np.inf, 1])]}, "holds an infinite per-query value"),
        ({"systems": [np.zeros(3), np.zeros(3)], "metrics": ["map"]}, "'metrics': ['map'] missing from system 'A'"),
        ({"systems": [np.zeros(3), np.zeros(3)], "baseline": "Z"}, "'baseline' must name one of the systems"),
        ({"systems": [np.zeros(3), np.zeros(3)], "pairs": "some"}, "pairs"),
        ({"systems": [np.zeros(3), np.zeros(3)], "test": "wilcoxon"}, "test"),
        ({"systems": [np.zeros(3), np.zeros(3)], "correction": "sidak"}, "correction"),
        ({"systems": [np.zeros(3), np.zeros(3)], "confidence": 1.5}, "'confidence' must be in (0, 1)"),
        ({"systems": [np.zeros(3), np.zeros(3)], "n_resamples": 0}, "n_resamples"),
        ({"systems": [np.full(3, np.nan), np.zeros(3)]}, "no query was evaluated by every system"),
        ({"systems": {"a": [], "b": np.zeros(3)}}, "'systems' entry 'a' must hold at least one run"),
    ],
)
def test_bad_input_names_the_argument_the_rule_and_what_arrived(kwargs, message):
    systems = kwargs.pop("systems")
    with pytest.raises((ValueError, TypeError)) as info:
        compare_systems(systems, **kwargs)
    assert message in str(info.value)


def test_set_level_metrics_are_refused_by_name():
    rng = np.random.default_rng(0)
    x, labels = rng.normal(size=(60, 4)), np.repeat(np.arange(6), 10)
    r = embedeval.evaluate(x, labels, metrics=["precision@1", "nmi"])
    with pytest.raises(ValueError, match=r"'metrics': \['nmi'\] are set-level"):
        compare_systems([r, r], metrics=["nmi"])
    assert compare_systems([r, r], confidence=None, n_resamples=9).metrics == ["precision@1"]


@pytest.mark.parametrize("fmt", ["table", "markdown", "csv", "json", "latex"])
def test_every_format_renders_and_states_the_seed(fmt):
    rng = np.random.default_rng(1)
    c = compare_systems({"a_1": rng.random(40), "b&c": rng.random(40) + 0.3}, n_resamples=99, seed=7)
    text = c.table(fmt)
    assert ("seed 7" in text) or ('"seed": 7' in text) or fmt == "csv"
    if fmt == "latex":
        assert r"a\_1" in text and r"b\&c" in text and r"$^{\dagger}$" in text
