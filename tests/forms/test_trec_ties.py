"""Tie rules for trec_eval's measures of the whole listing: ``optimistic`` and ``pessimistic``
equal the ordinary values of the run re-ordered by hand within each tie group; order-free
measures give their ordinary value under ``expected``; the others are refused under
``expected`` with the reason; the drop-in's ``--ties`` reads the same rules."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from runner import run_cli

import embedeval

LISTING = ["bpref", "infAP", "G", "Rndcg", "ndcg_rel", "binG", "rbp", "rbp_resid", "unj", "iprec_at_recall"]
ORDER_FREE = ["set_P", "set_recall", "set_F", "set_map", "utility", "num_nonrel_judged_ret"]


def tied_run(seed: int):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(int(rng.integers(3, 12))):
        docs = [f"d{i}" for i in rng.choice(40, size=int(rng.integers(2, 30)), replace=False)]
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, rng.integers(0, 4, len(docs)), strict=True)}
        judged = rng.choice(40, size=int(rng.integers(1, 25)), replace=False)
        qrels[f"q{q}"] = {f"d{i}": int(g) for i, g in zip(judged, rng.integers(-1, 4, judged.size), strict=True)}
    return run, qrels


def reordered(run: dict, qrels: dict, rule: str) -> dict:
    """The run with distinct scores: by score, then within equal scores graded documents (grade
    >= 0) by grade, documents outside the qrels, negative grades; the other way for pessimistic."""

    def key(q, d):
        g = qrels[q].get(d)
        rank = 1.0 if g is None else (2.0 + g if g >= 0 else 0.0)  # negative < outside < graded by grade
        return rank if rule == "optimistic" else -rank

    out = {}
    for q, scores in run.items():
        order = sorted(scores, key=lambda d: (scores[d], key(q, d)), reverse=True)
        out[q] = {d: float(len(order) - i) for i, d in enumerate(order)}
    return out


def _evaluate(run, qrels, metrics, ties=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return embedeval.evaluate_rankings(run, qrels, metrics=metrics, empty="zero", ties=ties)


@pytest.mark.parametrize("rule", ["optimistic", "pessimistic"])
@pytest.mark.parametrize("seed", range(5))
def test_best_and_worst_orders_are_the_run_reordered_by_hand(seed, rule):
    run, qrels = tied_run(seed)
    ours = _evaluate(run, qrels, LISTING + ORDER_FREE + ["map", "P_5"], ties=rule)
    want = _evaluate(reordered(run, qrels, rule), qrels, LISTING + ORDER_FREE + ["map", "P_5"])
    for name, values in want.per_query.items():
        np.testing.assert_allclose(ours.per_query[name], values, rtol=0, atol=1e-12, err_msg=name)


@pytest.mark.parametrize("seed", range(3))
def test_order_free_measures_are_their_ordinary_value_under_expected(seed):
    run, qrels = tied_run(seed)
    ours = _evaluate(run, qrels, [*ORDER_FREE, "gm_map"], ties="expected")
    plain = _evaluate(run, qrels, ORDER_FREE)
    for name, values in plain.per_query.items():
        np.testing.assert_array_equal(ours.per_query[name], values)
    mean_ap = _evaluate(run, qrels, ["map"], ties="expected").per_query["map"]
    np.testing.assert_allclose(ours.per_query["gm_map"], mean_ap, rtol=0, atol=0)


def test_expected_is_refused_where_no_value_is_derived():
    run, qrels = tied_run(0)
    with pytest.raises(ValueError, match=r"ties='expected' has no value for bpref, infap .*optimistic"):
        _evaluate(run, qrels, ["bpref", "infAP", "set_P"], ties="expected")


def test_the_drop_in_reads_the_rules(tmp_path):
    run, qrels = tied_run(1)
    (tmp_path / "run").write_text(
        "".join(f"{q} Q0 {d} 0 {s} t\n" for q, scores in run.items() for d, s in scores.items())
    )
    (tmp_path / "qrels").write_text("".join(f"{q} 0 {d} {g}\n" for q, j in qrels.items() for d, g in j.items()))
    done = run_cli(
        "trec_eval", "--ties", "optimistic", "-m", "bpref", "-m", "set_P", tmp_path / "qrels", tmp_path / "run"
    )
    assert done.returncode == 0, done.stderr
    best = _evaluate(reordered(run, qrels, "optimistic"), qrels, ["bpref", "set_P"])
    assert done.stdout.splitlines()[0] == f"{'bpref':<22}\tall\t{best.summary['bpref']:6.4f}"
    refused = run_cli("trec_eval", "--ties", "expected", "-m", "bpref", tmp_path / "qrels", tmp_path / "run")
    assert refused.returncode == 2 and "no tie-aware value is derived" in refused.stderr
    bad = run_cli("trec_eval", "--ties", "best", tmp_path / "qrels", tmp_path / "run")
    assert bad.returncode == 2 and "--ties: must be expected, optimistic or pessimistic; got 'best'" in bad.stderr
