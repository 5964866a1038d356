"""The metric registry: every family in every form it declares has a definition, a kernel and a
hand-computed case here, and names parse to one canonical spelling."""

from __future__ import annotations

import math

import numpy as np
import pytest

from embedeval._kernels import Hits
from embedeval._metrics import EMBEDDINGS, FAMILIES, RANKINGS, Needs, parse_metric, parse_metrics, valid_names

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
    ("capped_recall", RANKINGS): [("capped_recall@3", 2 / 3), ("capped_recall@6", 3 / 4)],
    ("hit_rate", EMBEDDINGS): [("hit_rate@2", 1.0), ("hit_rate@1", 0.0)],
    ("hit_rate", RANKINGS): [("hit_rate@2", 1.0), ("hit_rate@1", 0.0)],
    ("f1", RANKINGS): [("f1@3", 4 / 7), ("f1@1", 0.0)],
    ("r_precision", EMBEDDINGS): [("r_precision", 2 / 4)],
    ("r_precision", RANKINGS): [("r_precision", 2 / 4)],
    ("map", EMBEDDINGS): [("map", (1 / 2 + 2 / 3 + 3 / 5) / 4), ("map@3", (1 / 2 + 2 / 3) / 4), ("map@r", 7 / 24)],
    ("map", RANKINGS): [("map", 53 / 120), ("map@2", 1 / 8), ("map@r", 7 / 24)],
    ("map_hits", RANKINGS): [("map_hits@3", (1 / 2 + 2 / 3) / 2), ("map_hits@1", 0.0)],
    ("map_hits", EMBEDDINGS): [("map_hits@5", (1 / 2 + 2 / 3 + 3 / 5) / 3), ("map_hits@1", 0.0)],  # DPSH's mAP@k
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


def test_every_family_and_form_is_declared_completely_and_has_a_case():
    """We must not forget a metric: each declared (family, form) has a definition, a kernel and a case."""
    declared = {(family, form) for family, spec in FAMILIES.items() for form in spec.forms}
    assert declared == set(CASES)
    for family, spec in FAMILIES.items():
        assert spec.cutoffs and spec.cutoffs <= {"none", "k", "r", "radius"}, family
        assert ("radius" in spec.cutoffs) == spec.radius and (not spec.radius or spec.cutoffs == {"radius"}), family
        assert ("none" in spec.cutoffs) == (spec.uncut is not None), family
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
    from embedeval._expected import COUNTERPARTS
    from embedeval._ties import tied_hits_from_dense

    scores = -np.arange(GRADES.shape[1], dtype=float)[None, :]  # all distinct: no ties
    tied = tied_hits_from_dense(scores, GRADES, 1.0, HITS.n_relevant, HITS.ideal)
    for name, expected in CASES[(family, form)]:
        metric = parse_metric(name, form)
        kernel = COUNTERPARTS[metric.spec.forms[form].kernel]
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


def test_every_kernel_has_a_tie_aware_counterpart():
    """ties='expected' must serve every registered metric: each kernel has an expected twin."""
    from embedeval._expected import COUNTERPARTS

    kernels = {form.kernel for spec in FAMILIES.values() for form in spec.forms.values()}
    assert kernels <= set(COUNTERPARTS)
