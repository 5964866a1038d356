"""ties="expected" for trec_eval's unj, rbp and rbp_resid: the mean of the ordinary value over
every order of the tied documents, enumerated by brute force (each order a query of its own
with distinct scores), on many seeded runs with heavy ties, graded and negative judgements,
documents outside the qrels and cutoffs inside tie groups; it lies between the optimistic and
pessimistic values, and the TREC file path and the drop-in give the same numbers."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from runner import run_cli

import embedeval

LINEAR = ["unj@1", "unj@2", "unj@3", "unj@5", "unj@20", "rbp", "rbp@p=0.5", "rbp_resid", "rbp_resid@p=0.6"]
GAINS = ["rbp@p=0.8,1=3,2=9", "rbp@p=0.7,0=-1,2=0.5"]  # custom tables, the second scaled (a negative gain)


def _evaluate(run, qrels, metrics, ties=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return embedeval.evaluate_rankings(run, qrels, metrics=metrics, empty="zero", ties=ties)


def tied_run(seed: int, max_orders: int = 720):
    """A small run whose tie groups have at most ``max_orders`` orders per query in all."""
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    q = 0
    while q < int(rng.integers(2, 7)):
        n = int(rng.integers(1, 9))
        scores = rng.integers(0, int(rng.integers(1, 4)), n).astype(float)
        counts = np.unique(scores, return_counts=True)[1]
        if math.prod(map(math.factorial, counts.tolist())) > max_orders:
            continue
        docs = [f"d{i}" for i in rng.choice(30, size=n, replace=False)]
        run[f"q{q}"] = dict(zip(docs, scores.tolist(), strict=True))
        # judge some of the retrieved documents and some others; grades -1 .. 3, many 0
        judged = set(rng.choice(docs, size=int(rng.integers(0, n + 1)), replace=False).tolist())
        judged |= {f"d{i}" for i in rng.choice(30, size=3)}
        qrels[f"q{q}"] = {d: int(rng.choice([-1, 0, 0, 1, 2, 3])) for d in sorted(judged)}
        q += 1
    return run, qrels


def every_order(run: dict, qrels: dict):
    """One query per order of the tied documents of each query, with distinct scores:
    ({copy: scores}, {copy: judgements}, {copy: the query it copies})."""
    out_run, out_qrels, source = {}, {}, {}
    for q, scores in run.items():
        values = sorted(set(scores.values()), reverse=True)
        groups = [[d for d in scores if scores[d] == v] for v in values]
        for i, orders in enumerate(itertools.product(*(itertools.permutations(g) for g in groups))):
            ranking = [d for order in orders for d in order]
            name = f"{q}#{i}"
            out_run[name] = {d: float(len(ranking) - j) for j, d in enumerate(ranking)}
            out_qrels[name], source[name] = qrels[q], q
    return out_run, out_qrels, source


def brute_force(run, qrels, metrics) -> dict[str, np.ndarray]:
    copies, copy_qrels, source = every_order(run, qrels)
    plain = _evaluate(copies, copy_qrels, metrics)
    names = list(copies)
    out = {}
    for metric, values in plain.per_query.items():
        by_query = {q: [] for q in run}
        for name, v in zip(names, values, strict=True):
            by_query[source[name]].append(v)
        out[metric] = np.array([np.mean(by_query[q]) for q in run])
    return out


@pytest.mark.parametrize("seed", range(40))
def test_expected_is_the_mean_over_every_order(seed):
    run, qrels = tied_run(seed)
    metrics = LINEAR + GAINS
    ours = _evaluate(run, qrels, metrics, ties="expected").per_query
    want = brute_force(run, qrels, metrics)
    for name, values in want.items():
        np.testing.assert_allclose(ours[name], values, rtol=1e-12, atol=1e-14, err_msg=name)


def test_a_hand_computed_case():
    # a (grade 1) and b (outside the qrels) tied first, c (grade -1) third
    run, qrels = {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}, {"q": {"a": 1, "c": -1}}
    got = _evaluate(run, qrels, ["unj@1", "unj@5", "rbp", "rbp_resid@p=0.5"], ties="expected").per_query
    assert got["unj@1"][0] == pytest.approx(0.5)  # b on top in half the orders
    assert got["unj@5"][0] == pytest.approx(2 / 5)
    assert got["rbp"][0] == pytest.approx(0.1 * (0.5 + 0.5 * 0.9))
    assert got["rbp_resid@p=0.5"][0] == pytest.approx(0.5**3 + 0.5 * (0.5 * 1 + 0.5 * 0.5 + 0.25))


@pytest.mark.parametrize("seed", range(20))
def test_expected_lies_between_the_best_and_the_worst_order(seed):
    run, qrels = tied_run(100 + seed, max_orders=10**9)  # larger groups: no enumeration here
    got = {
        rule: _evaluate(run, qrels, LINEAR, ties=rule).per_query for rule in ("optimistic", "expected", "pessimistic")
    }
    for name in got["expected"]:
        low = np.minimum(got["optimistic"][name], got["pessimistic"][name])
        high = np.maximum(got["optimistic"][name], got["pessimistic"][name])
        assert np.all(got["expected"][name] >= low - 1e-12) and np.all(got["expected"][name] <= high + 1e-12), name


def test_untied_runs_give_the_ordinary_values_exactly():
    run, qrels = tied_run(7)
    distinct = {q: {d: float(i) for i, d in enumerate(scores)} for q, scores in run.items()}
    ours = _evaluate(distinct, qrels, LINEAR + GAINS, ties="expected").per_query
    plain = _evaluate(distinct, qrels, LINEAR + GAINS).per_query
    for name, values in plain.items():
        np.testing.assert_array_equal(ours[name], values, err_msg=name)


def _write(tmp_path, run, qrels):
    (tmp_path / "run").write_text(
        "".join(f"{q} Q0 {d} 0 {s} t\n" for q, scores in run.items() for d, s in scores.items())
    )
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items()))


@pytest.mark.parametrize("seed", range(3))
def test_a_trec_run_file_gives_the_same_expected_values(tmp_path, seed):
    run, qrels = tied_run(200 + seed)
    _write(tmp_path, run, qrels)
    from_file = embedeval.io.evaluate_files(
        tmp_path / "run", tmp_path / "qrels", metrics=LINEAR, empty="zero", ties="expected"
    )
    from_maps = _evaluate(run, qrels, LINEAR, ties="expected")
    for name in LINEAR:
        assert from_file.summary[name] == pytest.approx(from_maps.summary[name], abs=1e-12), name
    done = run_cli("trec_eval", "--ties", "expected", "-m", "rbp", "-m", "unj.5", tmp_path / "qrels", tmp_path / "run")
    assert done.returncode == 0, done.stderr
    lines = dict((line.split()[0], float(line.split()[2])) for line in done.stdout.splitlines())
    assert lines["rbp"] == pytest.approx(from_maps.summary["rbp"], abs=5e-5)
    assert lines["unj_5"] == pytest.approx(from_maps.summary["unj@5"], abs=5e-5)
