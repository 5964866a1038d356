"""trec_eval's own measures (bpref, infAP, iprec_at_recall, set_*, G, rbp, ...): a hand-worked
case for every family, then agreement with pytrec_eval (trec_eval 9 inside) on seeded random
runs and qrels, per query and overall, and with slow plain-Python references where pytrec_eval
lacks the measure or trec_eval 10 changed it."""

from __future__ import annotations

import math

import numpy as np
import pytest

import embedeval
from embedeval._metrics.families import FAMILIES, GM_FLOOR
from embedeval._metrics.kernels import Hits
from embedeval._metrics.listing import listing_of
from embedeval._metrics.registry import RANKINGS, parse_metric
from embedeval._metrics.trec_families import TREC_FAMILIES

# One query, six retrieved documents: grade 0, grade 2, grade 1, not in the qrels, grade 3, a negative
# grade (pooled, unjudged). Judged: grades 3, 2, 1, 1 (one relevant not retrieved) and two grade-0
# documents (one not retrieved). Level 1: R = 4, relevant at ranks 2, 3, 5.
REL = [0.0, 2.0, 1.0, None, 3.0, -1.0]
L3, L4, L5, L6 = (math.log2(x) for x in (3, 4, 5, 6))
EPS = 1e-5


def _hits() -> Hits:
    rows = np.array([0, 0, 0, 0, 0])
    ranks = np.array([1.0, 2.0, 3.0, 5.0, 6.0])
    grades = np.array([0.0, 2.0, 1.0, 3.0, -1.0])
    positive = np.array([[3.0, 2.0, 1.0, 1.0]])
    lst = listing_of(rows, ranks, grades, np.array([6]), positive, np.array([2]), 1.0)
    return Hits(np.array([[2.0, 3.0, 5.0]]), np.array([4]), listing=lst)


D = 2 / L3 + 1 / L4 + 3 / L6  # the run's DCG
IDEAL = 3 + 2 / L3 + 1 / L4 + 1 / L5
CASES = {
    # non-relevant above each relevant document: 1, 1, 1 of N = 2
    "bpref": [("bpref", 3 * (1 - 1 / 2) / 4)],
    "gm_bpref": [("gm_bpref", 3 * (1 - 1 / 2) / 4)],
    "gm_map": [("gm_map", (1 / 2 + 2 / 3 + 3 / 5) / 4)],
    "infap": [
        (
            "infap",
            (
                (1 / 2 + (1 / 2) * (1 / 1) * (EPS / (1 + 2 * EPS)))
                + (1 / 3 + (2 / 3) * (2 / 2) * ((1 + EPS) / (2 + 2 * EPS)))
                + (1 / 5 + (4 / 5) * (3 / 4) * ((2 + EPS) / (3 + 2 * EPS)))
            )
            / 4,
        )
    ],
    # precision at the relevant documents 1/2, 2/3, 3/5; interpolated 2/3, 2/3, 3/5
    "iprec_at_recall": [
        ("iprec_at_recall@0", 2 / 3),
        ("iprec_at_recall@0.1", 2 / 3),  # lround(0.4) = 0: the first
        ("iprec_at_recall@0.5", 2 / 3),
        ("iprec_at_recall@0.75", 3 / 5),
        ("iprec_at_recall@1", 0.0),  # the 4th relevant is not retrieved
    ],
    "11pt_avg": [("11pt_avg", (7 * 2 / 3 + 2 * 3 / 5) / 11), ("11pt_avg@0.5,1", (2 / 3 + 0) / 2)],
    "rprec_mult": [("rprec_mult@0.5", 1 / 2), ("rprec_mult@1", 2 / 4), ("rprec_mult@2", 3 / 8)],
    "bing": [("bing", (1 / L3 + 1 / L3 + 1 / L4) / 4)],
    "set_p": [("set_p", 3 / 6)],
    "set_recall": [("set_recall", 3 / 4)],
    "set_relative_p": [("set_relative_p", 3 / 4)],
    "set_map": [("set_map", 9 / 24)],
    "set_f": [("set_f", 0.6), ("set_f@0.5", 1.5 * 0.5 * 0.75 / (0.25 + 0.75))],
    "utility": [("utility", 0.0), ("utility@2,-1,1,0", 6 - 3 + 1)],
    "num_nonrel_judged_ret": [("num_nonrel_judged_ret", 1.0)],
    "unj": [("unj@5", 1 / 5), ("unj@10", 2 / 10), ("unj@3", 0.0)],
    # gains 0..3 scaled by 3: 0, 2/3, 1/3, 0, 1, 0
    "rbp": [
        ("rbp", 0.1 * (2 / 3 * 0.9 + 1 / 3 * 0.81 + 0.9**4)),
        ("rbp@p=0.5", 0.5 * (2 / 3 * 0.5 + 1 / 3 * 0.25 + 0.5**4)),
    ],
    "rbp_resid": [("rbp_resid", 0.9**6 + 0.1 * (0.9**3 + 0.9**5))],
    "ndcg_gains": [
        ("ndcg_gains", D / IDEAL),
        ("ndcg_gains@1=3,2=9", (9 / L3 + 3 / L4 + 3 / L6) / (9 + 3 / L3 + 3 / L4 + 3 / L5)),
    ],
    # ideal costs 3, 2, 1, 1, 1, 1 (cumulated 3, 5, 6, 7, 8, 9); run gains cumulated 0, 2, 3, 3, 6, 6
    "g": [("g", (2 / math.log2(5) + 1 / math.log2(5) + 3 / math.log2(4)) / 7)],
    "ndcg_rel": [
        (
            "ndcg_rel",
            ((2 / L3) / (3 + 2 / L3) + (2 / L3 + 1 / L4) / (3 + 2 / L3 + 1 / L4) + D / IDEAL + D / IDEAL) / 4,
        )
    ],
    # the ideal gain changes before ranks 2 (3 -> 2), 3 (2 -> 1) and 5 (1 -> 0); the run is longer
    "rndcg": [("rndcg", (0.0 + (2 / L3) / (3 + 2 / L3) + (2 / L3 + 1 / L4) / IDEAL + D / IDEAL) / 4)],
}


def test_every_trec_family_has_a_case():
    assert set(CASES) == set(TREC_FAMILIES)
    assert all(FAMILIES[f].forms.keys() == {RANKINGS} for f in TREC_FAMILIES)


@pytest.mark.parametrize("family", sorted(CASES))
def test_hand_computed_case(family):
    hits = _hits()
    for name, expected in CASES[family]:
        metric = parse_metric(name, RANKINGS)
        assert metric.family == family and metric.definition
        assert metric.values(hits) == pytest.approx([expected], rel=1e-12, abs=1e-15), name


def test_a_form_without_the_listing_is_refused():
    with pytest.raises(ValueError, match="reads every retrieved document"):
        parse_metric("bpref", RANKINGS).values(Hits(np.array([[1.0]]), np.array([1])))


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("utility@1,2", "utility takes 4 coefficients"),
        ("iprec_at_recall@x", "comma-separated numbers"),
        ("ndcg_gains@a=3", "grade=gain with an int grade"),
        ("rbp@p=1.5", r"rbp's p must be in \[0, 1\)"),
        ("iprec_at_recall", "needs a parameter"),
    ],
)
def test_bad_parameters_are_named(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_metric(raw, RANKINGS)


def test_gm_summaries_are_geometric_means_floored_at_1e_5():
    run = {"a": {"x": 2.0, "y": 1.0}, "b": {"x": 1.0}}
    qrels = {"a": {"y": 1}, "b": {"z": 1}}
    r = embedeval.evaluate_rankings(run, qrels, metrics=["gm_map", "map"], empty="zero")
    assert r.per_query["gm_map"].tolist() == r.per_query["map"].tolist() == [0.5, 0.0]
    assert r.summary["gm_map"] == pytest.approx(math.sqrt(0.5 * GM_FLOOR), rel=1e-15)
    assert r.summary["map"] == 0.25
