"""The metric registry: every family in every form it declares has a definition, a kernel and a
hand-computed case here, every set-level family a definition, a need and a hand-computed case,
and names parse to one canonical spelling."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import embedeval
from embedeval._metrics.kernels import Hits
from embedeval._metrics.registry import (
    EMBEDDINGS,
    FAMILIES,
    RANKINGS,
    Needs,
    parse_metric,
    parse_metrics,
    valid_names,
)
from embedeval._metrics.set_families import CLUSTERING, GEOMETRY, SET_FAMILIES, VERIFICATION
from embedeval._metrics.trec_families import TREC_FAMILIES
from embedeval._metrics.trec_groups import JG_FAMILIES
from embedeval._metrics.trec_prefs import PREFS_FAMILIES

# trec_eval's own measures: their cases are in test_trec_measures.py and test_trec_prefs.py
OWN_CASES = set(TREC_FAMILIES) | set(PREFS_FAMILIES) | set(JG_FAMILIES)

# One query, six ranked items with grades [0, 2, 1, 0, 3, 0]; one more judged item (grade 1) was
# never retrieved. Threshold 1: relevant at ranks 2, 3, 5, and R = 4. Ideal grades [3, 2, 1, 1].
HITS = Hits(
    ranks=np.array([[2.0, 3.0, 5.0]]),
    n_relevant=np.array([4]),
    gain_ranks=np.array([[2.0, 3.0, 5.0]]),
    gain_grades=np.array([[2.0, 1.0, 3.0]]),
    ideal=np.array([[3.0, 2.0, 1.0, 1.0]]),
)
# For the Hamming radius families: the six ranked items at distances [1, 1, 1, 2, 2, 3] (none at
# distance 0), so WITHIN[t] counts the references at distance <= t: 0, 3, 5, 6.
WITHIN = np.array([[0, 3, 5, 6]])
GRADES = np.array([[0.0, 2.0, 1.0, 0.0, 3.0, 0.0]])  # the ranked items' grades, as HITS holds them
L3, L4, L6 = math.log2(3), math.log2(4), math.log2(6)
IDEAL3 = 3 + 2 / L3 + 1 / L4
IDEAL3_EXP = 7 + 3 / L3 + 1 / L4

# (family, form) -> [(name, value)], values worked out by hand from the case above.
CASES = {
    ("precision", EMBEDDINGS): [("precision@3", 2 / 3), ("precision@1", 0.0)],
    ("precision", RANKINGS): [("precision@3", 2 / 3), ("precision@10", 3 / 10)],
    ("recall", EMBEDDINGS): [("recall@3", 1.0), ("recall@1", 0.0)],  # metric-learning Recall@K
    ("recall", RANKINGS): [("recall@3", 2 / 4), ("recall@6", 3 / 4)],  # trec_eval's
    ("capped_recall", EMBEDDINGS): [("capped_recall@3", 2 / 3), ("capped_recall@6", 3 / 4)],  # OML's precision@k
    ("capped_recall", RANKINGS): [("capped_recall@3", 2 / 3), ("capped_recall@6", 3 / 4)],
    ("hit_rate", EMBEDDINGS): [("hit_rate@2", 1.0), ("hit_rate@1", 0.0)],
    ("hit_rate", RANKINGS): [("hit_rate@2", 1.0), ("hit_rate@1", 0.0)],
    ("f1", RANKINGS): [("f1@3", 4 / 7), ("f1@1", 0.0)],
    ("r_precision", EMBEDDINGS): [("r_precision", 2 / 4)],
    ("r_precision", RANKINGS): [("r_precision", 2 / 4)],
    ("map", EMBEDDINGS): [("map", (1 / 2 + 2 / 3 + 3 / 5) / 4), ("map@3", (1 / 2 + 2 / 3) / 4), ("map@r", 7 / 24)],
    ("map", RANKINGS): [("map", 53 / 120), ("map@2", 1 / 8), ("map@r", 7 / 24)],
    # OML's map@k and DPSH's mAP@k
    ("map_hits", EMBEDDINGS): [
        ("map_hits@3", (1 / 2 + 2 / 3) / 2),
        ("map_hits@5", (1 / 2 + 2 / 3 + 3 / 5) / 3),
        ("map_hits@1", 0.0),
    ],
    ("map_hits", RANKINGS): [("map_hits@3", (1 / 2 + 2 / 3) / 2), ("map_hits@1", 0.0)],
    # sentence-transformers' MAP@k: divides by min(k, R)
    ("capped_map", EMBEDDINGS): [
        ("capped_map@3", (1 / 2 + 2 / 3) / 3),
        ("capped_map@5", (1 / 2 + 2 / 3 + 3 / 5) / 4),
        ("capped_map@1", 0.0),
    ],
    ("capped_map", RANKINGS): [("capped_map@3", (1 / 2 + 2 / 3) / 3), ("capped_map@2", (1 / 2) / 2)],
    # Within radius 0 nothing (precision 0 by convention); within 1 the top 3 (2 relevant); radius 9 is everything.
    ("precision_radius", EMBEDDINGS): [
        ("precision_radius@0", 0.0),
        ("precision_radius@1", 2 / 3),
        ("precision_radius@2", 3 / 5),
        ("precision_radius@9", 3 / 6),
    ],
    ("recall_radius", EMBEDDINGS): [("recall_radius@0", 0.0), ("recall_radius@1", 2 / 4), ("recall_radius@3", 3 / 4)],
    ("mrr", EMBEDDINGS): [("mrr", 1 / 2), ("mrr@1", 0.0)],
    ("mrr", RANKINGS): [("mrr", 1 / 2), ("mrr@2", 1 / 2)],
    ("ndcg", RANKINGS): [("ndcg@3", (2 / L3 + 1 / L4) / IDEAL3), ("ndcg@1", 0.0)],
    ("ndcg_exp", RANKINGS): [("ndcg_exp@3", (3 / L3 + 1 / L4) / IDEAL3_EXP)],
    ("dcg", RANKINGS): [("dcg@3", 2 / L3 + 1 / L4), ("dcg", 2 / L3 + 1 / L4 + 3 / L6)],
    ("dcg_exp", RANKINGS): [("dcg_exp@3", 3 / L3 + 1 / L4)],
    ("cg", RANKINGS): [("cg@3", 3.0), ("cg", 6.0)],
    ("cmc", EMBEDDINGS): [("cmc@2", 1.0), ("cmc@1", 0.0)],  # re-ID's name for "a match in the top k"
    ("cmc", RANKINGS): [("cmc@3", 1.0), ("cmc@1", 0.0)],
    # Trapezoids at hits j = 1, 2, 3 (ranks 2, 3, 5): (P(r - 1) + P(r)) / 2 = (0 + 1/2) / 2, (1/2 + 2/3) / 2,
    # (2/4 + 3/5) / 2; their sum 83/60 over R = 4.
    ("revisited_map", RANKINGS): [("revisited_map", 83 / 240)],
    # Not every relevant item is in the top k, so k_q = k: 2 of the top 3, 3 of the top 10.
    ("revisited_mp", RANKINGS): [("revisited_mp@3", 2 / 3), ("revisited_mp@10", 3 / 10)],
}


# Set-level families: one number for the whole set, computed by `evaluate` on tiny inputs.
#
# Clustering: 1-D points 0, 0.1, 0.2 | 10, 10.1 labelled a, a, b, b, b. k-means into 2 clusters (one per label)
# splits at the gap: clusters 0, 0, 0, 1, 1, contingency [[2, 0], [1, 2]], both partitions of sizes {2, 3}:
# H = -(0.4 ln 0.4 + 0.6 ln 0.6), MI = 0.4 ln(5*2/(2*3)) + 0.2 ln(5*1/(3*3)) + 0.4 ln(5*2/(3*2)).
CLUSTER_X, CLUSTER_Y = [[0.0], [0.1], [0.2], [10.0], [10.1]], ["a", "a", "b", "b", "b"]
H = -(0.4 * math.log(0.4) + 0.6 * math.log(0.6))
MI = 0.8 * math.log(5 / 3) + 0.2 * math.log(5 / 9)


def _expected_mi(a, b, n):
    """E[MI] for block sizes a and b, term by term: sum_ij sum_k (k/n) ln(n k / (a_i b_j)) P(k), P hypergeometric."""
    total = 0.0
    for ai in a:
        for bj in b:
            for k in range(max(1, ai + bj - n), min(ai, bj) + 1):
                p = math.comb(bj, k) * math.comb(n - bj, ai - k) / math.comb(n, ai)
                total += k / n * math.log(n * k / (ai * bj)) * p
    return total


EMI = _expected_mi((2, 3), (3, 2), 5)
# Verification: 1-D points 0, 1, 3, 6 labelled a, a, b, b. Squared distances: positive pairs (0,1) = 1 and
# (3,6) = 9; negative pairs 4, 9, 25, 36. FMR 0.25 of 4 negatives allows 1: accepted are d < 9 (the second
# smallest negative), so the positive at 9 is rejected; FMR 0.5 allows 2: d < 25 accepts both positives.
# AUROC: positive 1 is below all four negatives, positive 9 below 25 and 36 and tied with 9: (4 + 2.5) / 8.
# EER: the ROC runs (FMR, TPR) = (0.25, 0.5) -> (0.5, 1); FMR = 1 - TPR at FMR = 1/3.
PAIR_X, PAIR_Y = [[0.0], [1.0], [3.0], [6.0]], ["a", "a", "b", "b"]
# Geometry: the rows +-diag(3, 2, 1, 1): variances 9, 4, 1, 1 along the axes, cumulative shares 0.6, 0.87,
# 0.93, 1: one of four components explains more than 0.5, two more than 0.8, all four more than 0.95.
GEOMETRY_X = np.vstack([np.diag([3.0, 2.0, 1.0, 1.0]), -np.diag([3.0, 2.0, 1.0, 1.0])])
GEOMETRY_Y = [0, 0, 0, 0, 1, 1, 1, 1]

SET_CASES = {
    "nmi": (CLUSTER_X, CLUSTER_Y, [("nmi", MI / H)]),
    "ami": (CLUSTER_X, CLUSTER_Y, [("ami", (MI - EMI) / (H - EMI))]),
    "pml_nmi": (CLUSTER_X, CLUSTER_Y, [("pml_nmi", MI / H), ("NMI", MI / H)]),  # PML's capitals
    "pml_ami": (CLUSTER_X, CLUSTER_Y, [("pml_ami", (MI - EMI) / (H - EMI)), ("AMI", (MI - EMI) / (H - EMI))]),
    "fnmr": (PAIR_X, PAIR_Y, [("fnmr@fmr=0.25", 0.5), ("fnmr@fmr=5e-1", 0.0), ("fnmr@fmr=0.2", 0.5)]),
    "tar": (PAIR_X, PAIR_Y, [("tar@far=0.25", 0.5), ("tar@far=.5", 1.0)]),
    "eer": (PAIR_X, PAIR_Y, [("eer", 1 / 3)]),
    "pair_auroc": (PAIR_X, PAIR_Y, [("pair_auroc", 6.5 / 8)]),
    "pcf": (GEOMETRY_X, GEOMETRY_Y, [("pcf@0.5", 0.25), ("pcf@0.8", 0.5), ("pcf@0.95", 1.0), ("pcf@1", 1.0)]),
}


def test_every_family_and_form_is_declared_completely_and_has_a_case():
    """We must not forget a metric: each declared (family, form) has a definition, a kernel and a case."""
    declared = {(family, form) for family, spec in FAMILIES.items() for form in spec.forms if family not in OWN_CASES}
    assert declared == set(CASES)
    for family, spec in FAMILIES.items():
        assert spec.cutoffs and spec.cutoffs <= {"none", "k", "r", "radius", "param"}, family
        assert ("param" in spec.cutoffs) == (spec.param is not None), family
        assert ("radius" in spec.cutoffs) == spec.radius and (not spec.radius or spec.cutoffs == {"radius"}), family
        assert bool({"none", "param"} & spec.cutoffs) == (spec.uncut is not None), family  # a parameter: whole ranking
        assert ("r" in spec.cutoffs) == (spec.r_definition is not None), family
        for form in spec.forms.values():
            assert form.definition and callable(form.kernel), family


@pytest.mark.parametrize(("family", "form"), sorted(CASES))
def test_hand_computed_case(family, form):
    for name, expected in CASES[(family, form)]:
        metric = parse_metric(name, form)
        assert metric.family == family and metric.name == name
        assert metric.definition
        assert metric.values(HITS, WITHIN) == pytest.approx([expected], rel=1e-12, abs=1e-15), name


@pytest.mark.parametrize(("family", "form"), sorted(CASES))
def test_tie_aware_counterpart_gives_the_hand_computed_case_without_ties(family, form):
    """Every kernel's expected twin, on the same ranking as tie groups of one item, gives the same value."""
    from embedeval._metrics.ties import tied_hits_from_dense

    scores = -np.arange(GRADES.shape[1], dtype=float)[None, :]  # all distinct: no ties
    tied = tied_hits_from_dense(scores, GRADES, 1.0, HITS.n_relevant, HITS.ideal)
    for name, expected in CASES[(family, form)]:
        metric = parse_metric(name, form)
        kernel = metric.spec.forms[form].expected
        got = kernel(tied, metric.cutoff(tied.n_relevant, WITHIN))
        assert got == pytest.approx([expected], rel=1e-12, abs=1e-15), name


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [("recall@010", "recall@10"), (" MAP@R ", "map@r"), ("Precision@1", "precision@1"), ("mrr", "mrr")],
)
def test_names_come_out_canonical(raw, canonical):
    assert parse_metric(raw, EMBEDDINGS).name == canonical


def test_repeats_under_different_spellings_are_one_metric():
    assert [m.name for m in parse_metrics(["recall@10", "recall@010", "map@r", "MAP@R"], EMBEDDINGS)] == [
        "recall@10",
        "map@r",
    ]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("precision@r", "'k' in metric 'precision@r' must be an int >= 1; got 'r'"),
        ("r_precision@3", "takes no cutoff; write 'r_precision'"),
        ("hit_rate", "needs a cutoff, as in 'hit_rate@10'"),
        ("map@", "'k' in metric 'map@' must be an int >= 1; got ''"),
        ("ndcg@3", "unknown metric 'ndcg@3' for embeddings"),
    ],
)
def test_bad_names(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_metric(raw, EMBEDDINGS)


def test_valid_names_list_every_accepted_cutoff():
    assert valid_names(EMBEDDINGS)[:2] == ["precision@k", "recall@k"]
    assert {"map", "map@k", "map@r", "r_precision", "mrr", "mrr@k"} <= set(valid_names(EMBEDDINGS))
    assert "ndcg@k" in valid_names(RANKINGS) and "ndcg@k" not in valid_names(EMBEDDINGS)


def test_needs_are_read_off_the_declarations():
    needs = Needs.of(parse_metrics(["precision@5", "map@r"], EMBEDDINGS))
    assert (needs.k, needs.r, needs.first_hit, needs.all_hits) == (5, True, False, False)
    needs = Needs.of(parse_metrics(["mrr", "recall@2"], EMBEDDINGS))
    assert (needs.k, needs.r, needs.first_hit, needs.all_hits) == (2, False, True, False)
    assert Needs.of(parse_metrics(["map"], EMBEDDINGS)).whole_ranking
    np.testing.assert_array_equal(
        Needs.of(parse_metrics(["r_precision"], EMBEDDINGS)).depth(np.array([3, 9]), 5), [3, 5]
    )


def test_every_set_level_family_is_declared_completely_and_has_a_case():
    """Set-level families have no kernel (no per-query values): a need, a definition, a reason for no interval."""
    assert set(SET_FAMILIES) == set(SET_CASES)
    assert not set(SET_FAMILIES) & set(FAMILIES)
    for family, spec in SET_FAMILIES.items():
        assert spec.needs in (CLUSTERING, VERIFICATION, GEOMETRY), family
        assert spec.definition and spec.no_interval, family
        assert (spec.parameter is None) == ("{x}" not in spec.definition), family


@pytest.mark.parametrize("family", sorted(SET_CASES))
def test_hand_computed_set_level_case(family):
    x, y, cases = SET_CASES[family]
    result = embedeval.evaluate(np.asarray(x), y, metrics=[name for name, _ in cases])
    for name, expected in cases:
        metric = parse_metrics([name], EMBEDDINGS)[0]
        assert metric.family == family and not metric.per_query and metric.definition
        assert result.summary[metric.name] == pytest.approx(expected, rel=1e-12, abs=1e-15), name
        assert metric.name not in result.per_query
    assert result.config["search"].startswith("none")  # no per-query metric: nothing was searched


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        ("fnmr@fmr=1e-3", "fnmr@fmr=0.001"),
        ("FNMR@FMR=0.0010", "fnmr@fmr=0.001"),
        ("tar@far=1e-5", "tar@far=1e-5"),
        ("tar@far=.0001", "tar@far=0.0001"),
        ("pcf@1.0", "pcf@1"),
        ("pcf@5E-1", "pcf@0.5"),
        (" EER ", "eer"),
    ],
)
def test_set_level_names_come_out_canonical(raw, canonical):
    assert parse_metric(raw, EMBEDDINGS).name == canonical


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (
            "fnmr@fmr=0",
            r"'fmr' in metric 'fnmr@fmr=0' must be a number in the interval \(0, 1\) \(a false match rate\); got '0'",
        ),
        ("fnmr@fmr=1", r"'fmr' .* interval \(0, 1\) .*; got '1'"),
        ("tar@far=-0.1", r"'far' in metric 'tar@far=-0.1' must be a number in the interval \(0, 1\)"),
        ("tar@far=1e-3e2", r"got '1e-3e2'"),
        ("fnmr@fmr=nan", r"got 'nan'"),
        (
            "pcf@1.5",
            r"'share' in metric 'pcf@1.5' must be a number in the interval \(0, 1\] \(a share of the variance\)",
        ),
        ("pcf@0", r"'share' .*; got '0'"),
        ("fnmr@0.001", r"takes a false match rate written as 'fnmr@fmr=x', e.g. 'fnmr@fmr=1e-3'"),
        ("fnmr", r"needs a false match rate, as in 'fnmr@fmr=1e-3'"),
        ("pcf", r"needs a share of the variance, as in 'pcf@0.5'"),
        ("eer@3", r"takes no parameter; write 'eer'"),
        ("nmi@10", r"takes no parameter; write 'nmi'"),
    ],
)
def test_bad_set_level_names(raw, message):
    with pytest.raises(ValueError, match=message):
        parse_metric(raw, EMBEDDINGS)


def test_set_level_metrics_are_for_embeddings_only():
    for name in ("nmi", "eer", "pcf@0.5", "fnmr@fmr=0.001"):
        with pytest.raises(ValueError, match=f"unknown metric '{re.escape(name)}' for rankings"):
            parse_metric(name, RANKINGS)
    assert {"nmi", "ami", "fnmr@fmr=x", "tar@far=x", "eer", "pair_auroc", "pcf@x"} <= set(valid_names(EMBEDDINGS))
    assert "nmi" not in valid_names(RANKINGS)


def test_every_kernel_has_a_tie_aware_counterpart():
    """ties='expected' must serve every registered metric but trec_eval's own measures (their rules
    are tested in test_trec_measures.py): each kernel has an expected twin."""
    from embedeval._metrics import expected

    twins = {form.expected for f, spec in FAMILIES.items() for form in spec.forms.values() if f not in OWN_CASES}
    twins = {getattr(twin, "func", twin) for twin in twins}  # exponential gain: a partial of the linear one
    public = {getattr(expected, name) for name in dir(expected) if not name.startswith("_")}
    assert all(callable(twin) for twin in twins) and twins <= public
