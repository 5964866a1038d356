"""trec_eval 10's preference measures (all_prefs) and judgement-group measures (qrels_jg): a
hand-worked case for every family, through :func:`embedeval.io.evaluate_preferences`."""

from __future__ import annotations

import pytest

from embedeval._metrics.registry import JUDGEMENT_GROUPS, PREFERENCES, parse_metric, parse_metrics
from embedeval._metrics.trec_groups import JG_FAMILIES
from embedeval._metrics.trec_prefs import PREFS_FAMILIES
from embedeval.io import evaluate_preferences

# Query q: run d1, d2, d3, x (x not judged); judged d1, d2, d3, d4 get places 0, 1, 2 (retrieved,
# in run order) and 3. JG a (one sub-group, classes by level): d2 (2) > d4 (1) > d1 (0): d2 > d4
# implied fulfilled; d2 > d1 retrieved, missed; d4 > d1 implied, missed. JG b (two sub-groups:
# s1 d3 > d1, s2 d1 > d2, so d3 > d2 by transitivity): d1 > d2 fulfilled, d3 > d1 and d3 > d2
# missed, all retrieved.
#
# Query r: run n3, n1, n2; one JG, n3 at level 1, n1, n2, n4 at 0 (n4 not retrieved): every
# preference fulfilled (n3 > n4 implied). R = 1 < N = 3: trec_eval recounts over the first R
# documents of the last class (n1) -- and, as its code does, counts the last class against them
# too: n3 > n1 fulfilled, n1/n2/n4 against n1 possible, 1 of 4. Among the retrieved: R = 1,
# N = 2, n3 > n1 fulfilled, n1 and n2 against n1 possible: 1 of 3.
#
# Query p: run e2, e3, e1; one JG of two sub-groups, e1 (1) > e2, e3, e4 (0). e1 > e4 is implied
# fulfilled, the others missed. R = 1 < N = 3: the non-relevant documents from the second on
# (places 1 and 3) are dropped, leaving e1 > e2, missed: 0.
RUN = """q Q0 d1 0 3 r
q Q0 d2 0 2 r
q Q0 d3 0 1 r
q Q0 x 0 0.5 r
r Q0 n3 0 4 r
r Q0 n1 0 3 r
r Q0 n2 0 2 r
p Q0 e2 0 3 r
p Q0 e3 0 2 r
p Q0 e1 0 1 r
"""
PREFS = """q a s d1 0
q a s d2 2
q a s d4 1
q b s1 d3 2
q b s1 d1 1
q b s2 d1 3
q b s2 d2 0
r c 0 n1 0
r c 0 n2 0
r c 0 n3 1
r c 0 n4 0
p g s1 e1 1
p g s1 e2 0
p g s2 e1 1
p g s2 e3 0
p g s2 e4 0
"""
# per query, in trec_eval's order p, q, r
PREFS_CASES = {
    "prefs_num_prefs_poss": [3, 6, 3],
    "prefs_num_prefs_ful": [1, 2, 3],
    "prefs_num_prefs_ful_ret": [0, 1, 2],
    "prefs_simp": [1 / 3, 2 / 6, 1],
    "prefs_pair": [1 / 3, 1.5 / 5, 1],  # q: pairs d1-d2 1/2, d1-d3 0, d2-d3 0, d1-d4 0, d2-d4 1
    "prefs_avgjg": [1 / 3, (1 / 3 + 1 / 3) / 2, 1],
    "prefs_avgjg_rnonrel": [0, (2 / 5 + 3 / 5) / 2, 1 / 4],  # q, JG a: R = 2 > N = 1 adds R (R - N)
    "prefs_simp_ret": [0, 1 / 4, 1],
    "prefs_pair_ret": [0, 0.5 / 3, 1],
    "prefs_avgjg_ret": [0, (0 / 1 + 1 / 3) / 2, 1],
    "prefs_avgjg_rnonrel_ret": [0, (0 + 3 / 5) / 2, 1 / 3],
    "prefs_simp_imp": [1 / 3, 2 / 6, 1],
    "prefs_pair_imp": [1 / 3, 1.5 / 5, 1],
    "prefs_avgjg_imp": [1 / 3, 1 / 3, 1],
}

# Query q: run a, b, c; JG 1 judges a and c relevant, JG 2 b and d (d not retrieved).
JG_RUN = "q Q0 a 0 3 r\nq Q0 b 0 2 r\nq Q0 c 0 1 r\n"
JG_QRELS = "q 1 a 1\nq 1 c 1\nq 2 b 1\nq 2 d 1\n"
JG_CASES = {
    "map_avgjg": [("map_avgjg", ((1 + 2 / 3) / 2 + (1 / 2) / 2) / 2)],
    "p_avgjg": [("p_avgjg@1", (1 + 0) / 2), ("p_avgjg@2", (1 / 2 + 1 / 2) / 2), ("P_avgjg_3", (2 / 3 + 1 / 3) / 2)],
    # R = 2 in each group: m = 2 looks at floor(4.9) = 4 documents, m = 0.5 at 1
    "rprec_mult_avgjg": [("rprec_mult_avgjg@2", (2 / 4 + 1 / 4) / 2), ("Rprec_mult_avgjg_0.5", (1 + 0) / 2)],
}


def test_every_preference_and_group_family_has_a_case():
    assert set(PREFS_CASES) == set(PREFS_FAMILIES)
    assert set(JG_CASES) == set(JG_FAMILIES)


@pytest.mark.parametrize("family", sorted(PREFS_CASES))
def test_hand_computed_preference_case(tmp_path, family):
    (tmp_path / "run").write_text(RUN)
    (tmp_path / "prefs").write_text(PREFS)
    metric = parse_metric(family, PREFERENCES)
    assert metric.definition
    result = evaluate_preferences(tmp_path / "run", tmp_path / "prefs", metrics=[family])
    assert result.config["query_ids"] == ["p", "q", "r"]
    assert result.per_query[family].tolist() == pytest.approx(PREFS_CASES[family], rel=1e-12)


@pytest.mark.parametrize("family", sorted(JG_CASES))
def test_hand_computed_group_case(tmp_path, family):
    (tmp_path / "run").write_text(JG_RUN)
    (tmp_path / "qrels").write_text(JG_QRELS)
    for name, expected in JG_CASES[family]:
        metric = parse_metrics([name], JUDGEMENT_GROUPS)[0]
        assert metric.family == family and metric.definition
        result = evaluate_preferences(tmp_path / "run", tmp_path / "qrels", format="qrels_jg", metrics=[name])
        assert result.per_query[metric.name].tolist() == pytest.approx([expected], rel=1e-12), name


def test_qrels_prefs_reads_each_iteration_as_a_judgement_group(tmp_path):
    """A qrels file as preferences: grades within one iteration field order the documents."""
    (tmp_path / "run").write_text(JG_RUN)
    (tmp_path / "qrels").write_text("q 0 a 2\nq 0 b 1\nq 0 c 0\nq 1 c 1\nq 1 a 0\n")
    result = evaluate_preferences(tmp_path / "run", tmp_path / "qrels", format="qrels_prefs")
    # JG 0: a > b, a > c, b > c, all fulfilled; JG 1: c > a, missed
    assert result.per_query["prefs_num_prefs_poss"].tolist() == [4]
    assert result.per_query["prefs_simp"].tolist() == [3 / 4]
    assert result.per_query["prefs_avgjg"].tolist() == [(1 + 0) / 2]
    assert result.per_query["prefs_pair"].tolist() == pytest.approx([(1 / 2 + 1 + 1) / 3])  # a-c: 1 of 2


def test_judged_only_and_level_per_group(tmp_path):
    """-J ranks each group's judged documents anew; -l sets the grade that is relevant."""
    (tmp_path / "run").write_text("q Q0 x 0 4 r\n" + JG_RUN)
    (tmp_path / "qrels").write_text("q 1 a 2\nq 1 c 1\nq 2 b 2\nq 2 x 0\n")
    plain = evaluate_preferences(tmp_path / "run", tmp_path / "qrels", format="qrels_jg", metrics=["p_avgjg@1"])
    judged = evaluate_preferences(
        tmp_path / "run", tmp_path / "qrels", format="qrels_jg", metrics=["p_avgjg@1"], judged_only=True
    )
    level2 = evaluate_preferences(
        tmp_path / "run", tmp_path / "qrels", format="qrels_jg", metrics=["map_avgjg"], threshold=2
    )
    assert plain.per_query["p_avgjg@1"].tolist() == [0.0]  # x (outside JG 1, grade 0 in JG 2) first
    assert judged.per_query["p_avgjg@1"].tolist() == [(1 + 0) / 2]  # JG 1: a first; JG 2: x (grade 0) stays
    assert level2.per_query["map_avgjg"].tolist() == [(1 / 2 + 1 / 3) / 2]  # a at rank 2; b at 3


def test_a_metric_of_another_form_is_refused(tmp_path):
    (tmp_path / "run").write_text(JG_RUN)
    (tmp_path / "qrels").write_text(JG_QRELS)
    with pytest.raises(ValueError, match="unknown metric 'map' for judgement_groups"):
        evaluate_preferences(tmp_path / "run", tmp_path / "qrels", format="qrels_jg", metrics=["map"])
    with pytest.raises(ValueError, match="'format' must be one of prefs, qrels_prefs, qrels_jg"):
        evaluate_preferences(tmp_path / "run", tmp_path / "qrels", format="qrels")


def test_a_negative_max_retrieved_is_refused(tmp_path):
    """As evaluate_files refuses it: -1 would cut each ranking's last document, silently."""
    (tmp_path / "run").write_text(JG_RUN)
    (tmp_path / "qrels").write_text(JG_QRELS)
    with pytest.raises(ValueError, match=r"'max_retrieved' must be an int >= 0 or None; got -1"):
        evaluate_preferences(tmp_path / "run", tmp_path / "qrels", format="qrels_jg", max_retrieved=-1)
