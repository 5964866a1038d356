"""``compare_across``: its inputs (tables of scores, per-query values, results), what it computes
from them (ranks, intervals, tied for first, per-dataset counts), its formats, and its errors."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

import embedeval
from embedeval._stats.across_ranks import not_different_groups
from embedeval.stats import compare_across

FEW = dict(n_bootstrap=200, n_resamples=500)


def _per_query(seed=0, n_sets=6, n_systems=4, n_queries=40, step=0.03):
    rng = np.random.default_rng(seed)
    return {
        f"D{t}": {f"S{s}": np.clip(rng.normal(0.5 + step * s, 0.1, n_queries), 0, 1) for s in range(n_systems)}
        for t in range(n_sets)
    }


def test_a_table_of_scores_gives_friedman_equal_to_scipy_and_mean_ranks():
    table = np.random.default_rng(0).normal(size=(9, 5))
    c = compare_across(table, confidence=None)
    want = stats.friedmanchisquare(*table.T)
    assert c.friedman["statistic"] == pytest.approx(want.statistic)
    assert c.friedman["p_value"] == pytest.approx(want.pvalue)
    ranks = stats.rankdata(-table, axis=1).mean(axis=0)
    assert [c.mean_ranks[s]["mean_rank"] for s in "ABCDE"] == pytest.approx(ranks)
    assert c.datasets == [f"D{i}" for i in range(1, 10)]
    assert c.intervals is None and c.n_queries is None


def test_per_query_values_give_each_datasets_mean_and_its_interval():
    data = _per_query()
    c = compare_across(data, **FEW)
    for d, row in data.items():
        for s, values in row.items():
            assert c.scores[d][s] == pytest.approx(values.mean())
            lo, hi = c.intervals[d][s]
            assert lo < values.mean() < hi
    assert c.n_queries == {d: 40 for d in data}
    assert c.settings["per_query"] is True


def test_evaluation_results_are_paired_by_query_id_and_the_metric_is_chosen():
    run_a = {"q1": ["d1", "d2"], "q2": ["d3", "d1"], "q3": ["d2", "d3"]}
    run_b = {"q3": ["d3", "d2"], "q1": ["d2", "d1"], "q2": ["d1", "d3"]}  # another query order
    qrels = {"q1": {"d1": 1}, "q2": {"d1": 1}, "q3": {"d3": 1}}
    a = embedeval.evaluate_rankings(run_a, qrels, metrics=["mrr", "precision@1"])
    b = embedeval.evaluate_rankings(run_b, qrels, metrics=["mrr", "precision@1"])
    data = {"x": {"a": a, "b": b}, "y": {"a": b, "b": a}}
    with pytest.raises(ValueError, match="'metric' must name"):
        compare_across(data, **FEW)
    c = compare_across(data, metric="mrr", **FEW)
    assert c.scores["x"]["a"] == pytest.approx(a.summary["mrr"])
    assert c.scores["x"]["b"] == pytest.approx(b.summary["mrr"])


def test_mean_ranks_do_not_change_when_scores_are_shifted_or_systems_reordered():
    data = _per_query(1)
    c = compare_across(data, confidence=None)
    shifted = {d: {s: v + 3.0 for s, v in row.items()} for d, row in data.items()}
    reordered = {d: dict(reversed(list(row.items()))) for d, row in data.items()}
    for other in (compare_across(shifted, confidence=None), compare_across(reordered, confidence=None)):
        assert {s: r["mean_rank"] for s, r in other.mean_ranks.items()} == pytest.approx(
            {s: r["mean_rank"] for s, r in c.mean_ranks.items()}
        )
        assert other.friedman["statistic"] == pytest.approx(c.friedman["statistic"])


def test_clear_winner_is_alone_first_and_every_dataset_counts_for_it():
    data = _per_query(2, n_sets=12, n_systems=4, n_queries=60, step=0.0)
    for row in data.values():
        row["S3"] = row["S3"] + 0.3
    c = compare_across(data, **FEW)
    assert c.best == "S3" and c.tied_for_first == ["S3"]
    for p in c.pairs:
        if p["b"] == "S3":
            assert (p["datasets_b_above"], p["datasets_b_below"], p["datasets_neither"]) == (12, 0, 0)
            assert p["significant"]
    assert c.mean_ranks["S3"]["place_low"] == c.mean_ranks["S3"]["place_high"] == 1


def test_equal_systems_are_all_tied_for_first_by_either_post_hoc_test():
    data = _per_query(3, n_sets=8, step=0.0)
    for post_hoc in ("nemenyi", "wilcoxon"):
        c = compare_across(data, post_hoc=post_hoc, **FEW)
        assert sorted(c.tied_for_first) == sorted(c.systems)


def test_nemenyi_significance_is_a_mean_rank_gap_of_one_critical_difference():
    table = np.random.default_rng(4).normal(size=(20, 6)) + np.linspace(0, 1.5, 6)
    c = compare_across(table, confidence=None)
    cd = c.nemenyi["critical_difference"]
    for p in c.pairs:
        gap = abs(p["mean_rank_a"] - p["mean_rank_b"])
        if abs(gap - cd) > 1e-6:
            assert p["significant"] == (gap > cd)


def test_wilcoxon_pairs_carry_holm_over_the_pairs_and_a_control_limits_the_pairs():
    from embedeval._stats.corrections import holm

    table = np.random.default_rng(5).normal(size=(10, 4)) + np.arange(4) * 0.5
    c = compare_across(table, post_hoc="wilcoxon", baseline="A", confidence=None)
    assert [(p["a"], p["b"]) for p in c.pairs] == [("A", "B"), ("A", "C"), ("A", "D")]
    raw = np.array([p["p_wilcoxon"] for p in c.pairs])
    assert [p["p_wilcoxon_holm"] for p in c.pairs] == pytest.approx(holm(raw))
    for p in c.pairs:
        want = stats.wilcoxon(table[:, "ABCD".index(p["b"])], table[:, 0])
        assert p["p_wilcoxon"] == pytest.approx(want.pvalue)
        assert p["significant"] == (p["p_wilcoxon_holm"] < 0.05)


def test_two_level_intervals_are_wider_than_dataset_only_ones_with_noisy_queries():
    data = _per_query(6, n_sets=10, n_queries=15, step=0.01)
    two = compare_across(data, n_bootstrap=400, n_resamples=200)
    table = {d: {s: float(v.mean()) for s, v in row.items()} for d, row in data.items()}
    one = compare_across(table, n_bootstrap=400)
    width = lambda c: np.mean([r["high"] - r["low"] for r in c.mean_ranks.values()])  # noqa: E731
    assert width(two) > width(one)


def test_bayes_probabilities_sum_to_one_and_are_none_without_a_rope():
    data = _per_query(7)
    c = compare_across(data, rope=0.01, n_bayes_samples=2000, **FEW)
    for p in c.pairs:
        assert sum(p["bayes"].values()) == pytest.approx(1.0)
    assert all(p["bayes"] is None for p in compare_across(data, **FEW).pairs)


def test_the_same_seed_gives_the_same_numbers():
    data = _per_query(8)
    a, b = compare_across(data, seed=3, **FEW), compare_across(data, seed=3, **FEW)
    assert a.to_dict() == b.to_dict()


@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "latex", "csv", "json"])
def test_every_format_names_every_system_and_dataset(fmt):
    c = compare_across(_per_query(9), rope=0.01, n_bayes_samples=500, **FEW)
    text = c.table(fmt)
    for name in [*c.systems, *c.datasets]:
        assert name in text
    if fmt == "json":
        assert json.loads(text)["tied_for_first"] == c.tied_for_first
    if fmt == "latex":
        assert text.startswith(r"\begin{tabular}") and r"\textbf{" in text


def test_not_different_groups_are_maximal_runs():
    order = ["a", "b", "c", "d"]
    different = {frozenset("ac"), frozenset("ad"), frozenset("bd")}
    assert not_different_groups(order, different) == [["a", "b"], ["b", "c"], ["c", "d"]]
    assert not_different_groups(order, set()) == [order]
    assert not_different_groups(order, {frozenset(p) for p in ["ab", "bc", "cd", "ac", "bd", "ad"]}) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(data={"x": {"a": 1.0, "b": 2.0}}), "at least 2 datasets"),
        (dict(data={"x": {"a": 1.0, "b": 2.0}, "y": {"a": 1.0}}), r"'y' lacks \['b'\]"),
        (dict(data={"x": {"a": 1.0, "b": np.ones(3)}, "y": {"a": 1.0, "b": 2.0}}), "mixes scores"),
        (dict(data={"x": {"a": 1.0}, "y": {"a": 2.0}}), "at least 2 systems"),
        (dict(data={"x": {"a": 1.0, "b": np.nan}, "y": {"a": 1.0, "b": 2.0}}), "finite"),
        (dict(data=np.ones(4)), "must be 2-D"),
        (dict(data=np.ones((3, 2)), systems=["a"]), "'systems' must hold 2 distinct names"),
        (dict(data=np.ones((3, 2)), alpha=1.5), "'alpha' must be in"),
        (dict(data=np.ones((3, 2)), post_hoc="tukey"), "'post_hoc' must be one of"),
        (dict(data=np.ones((3, 2)), baseline="Z"), "'baseline' must name one of"),
        (dict(data=np.ones((3, 2)), rope=-1), "'rope' must be a number >= 0"),
        (dict(data=np.ones((3, 2)), n_bootstrap=0), "'n_bootstrap' must be an int >= 1"),
    ],
)
def test_bad_input_names_the_argument_the_rule_and_what_arrived(kwargs, message):
    data = kwargs.pop("data")
    with pytest.raises(ValueError, match=message):
        compare_across(data, **kwargs)


def test_per_query_values_of_different_lengths_name_the_dataset():
    data = {"x": {"a": np.ones(3), "b": np.ones(4)}, "y": {"a": np.ones(3), "b": np.ones(3)}}
    with pytest.raises(ValueError, match="dataset 'x'"):
        compare_across(data)


def test_a_note_says_when_wilcoxon_holm_cannot_reject_with_so_few_datasets():
    few = compare_across(np.random.default_rng(10).normal(size=(8, 6)), confidence=None)
    many = compare_across(np.random.default_rng(10).normal(size=(12, 6)), confidence=None)
    assert any("no pair can be significant" in n for n in few.notes)
    assert not any("no pair can be significant" in n for n in many.notes)


@pytest.mark.parametrize("options", [dict(), dict(baseline="B"), dict(post_hoc="wilcoxon")])
def test_the_diagram_names_every_system_and_its_mean_rank(tmp_path, options):
    from embedeval.plotting import plot_critical_difference

    table = np.random.default_rng(11).normal(size=(12, 5)) + np.linspace(0, 1, 5)
    c = compare_across(table, confidence=None, **options)
    path = plot_critical_difference(c, tmp_path / "cd.svg")
    svg = path.read_text()
    for s in c.systems:
        assert f"{c.mean_ranks[s]['mean_rank']:.2f}" in svg
    assert "CD = " in svg


def test_an_infinite_iman_davenport_f_is_said_alike_in_the_object_json_and_text():
    """JSON has no infinity: F is null there and in the object, with ``f_infinite`` true, and the
    text says infinite; a finite F is a number with ``f_infinite`` false."""
    alike = compare_across(np.tile([3.0, 2.0, 1.0], (5, 1)), confidence=None)
    assert (alike.friedman["f"], alike.friedman["f_infinite"], alike.friedman["p_f"]) == (None, True, 0.0)
    assert json.loads(alike.table("json"))["friedman"]["f_infinite"] is True
    for fmt in ("table", "markdown", "html"):
        assert "F = infinite, p = 0" in alike.table(fmt)
    finite = compare_across(np.random.default_rng(1).normal(size=(6, 3)), confidence=None)
    assert finite.friedman["f_infinite"] is False and np.isfinite(finite.friedman["f"])
    assert "infinite" not in finite.table()


def test_markdown_escapes_names_so_a_pipe_adds_no_cell_and_html_stays_text():
    """Markdown, like the HTML, LaTeX and CSV formats, escapes the names: a ``|`` would add a cell,
    ``<b>`` would reach the renderer as HTML."""
    names = ["a|b", "<b>x</b>", "c&amp;d"]
    c = compare_across(np.random.default_rng(3).normal(size=(6, 3)), systems=names, confidence=None)
    text = c.table("markdown")
    assert "a\\|b" in text and "&lt;b>x&lt;/b>" in text and "c&amp;amp;d" in text
    assert "<b>" not in text
    leaderboard = text.split("\n\n")[0].splitlines()
    assert len({line.replace("\\|", "").count("|") for line in leaderboard}) == 1


def test_the_diagram_draws_names_as_text_not_mathtext(tmp_path):
    """System names are text: ``$x_{$`` (bad mathtext) no longer stops the drawing, and
    ``a$^$b`` is written as it is, not typeset as math."""
    from embedeval.plotting import plot_critical_difference

    names = ["$x_{$", "a$^$b", "plain"]
    c = compare_across(np.random.default_rng(12).normal(size=(8, 3)), systems=names, confidence=None)
    svg = plot_critical_difference(c, tmp_path / "cd.svg").read_text()
    for s in names:
        assert s in svg
    assert plot_critical_difference(c, tmp_path / "cd.png").stat().st_size > 1000


def test_markdown_and_html_keep_the_tests_results_beside_the_legend():
    """Every text format lists the tests' results and then the legend: "tied for first" and "could
    be first" appear in both, once as the systems and once as what the words mean (the Markdown and
    HTML lists kept only the legend's entry before)."""
    c = compare_across(np.random.default_rng(1).normal(size=(6, 3)))
    tied = ", ".join(c.tied_for_first)
    for fmt in ("table", "markdown", "html"):
        text = c.table(fmt)
        assert f"tied for first{'</b>' if fmt == 'html' else ''}: {tied}" in text
        assert "not significantly worse than it" in text
        assert text.count("could be first") == 2


def test_numpy_numbers_are_accepted_and_the_json_holds_python_numbers():
    """Counts and rope given as numpy numbers are checked and kept as Python's, so that the JSON
    table can be written (a numpy integer count stopped json.dumps before; a numpy integer rope was
    refused as not a number)."""
    scores = np.random.default_rng(1).normal(size=(6, 3))
    c = compare_across(
        scores, n_bootstrap=np.int64(100), n_resamples=np.int32(50), rope=np.int64(0), n_bayes_samples=np.int64(200)
    )
    assert json.loads(c.table("json"))["settings"]["n_bootstrap"] == 100
    assert c.settings["rope"] == 0.0 and type(c.settings["rope"]) is float


def test_a_numpy_integer_seed_is_kept_as_python_int_and_a_bad_seed_named():
    """A numpy integer seed stopped both comparisons' JSON tables; -1 or "x" reached numpy's own
    error, which does not name the argument."""
    from embedeval.stats import compare_systems

    scores = np.random.default_rng(2).normal(size=(6, 3))
    across = compare_across(scores, seed=np.int64(3), n_bootstrap=100, n_resamples=50)
    assert json.loads(across.table("json"))["settings"]["seed"] == 3
    assert across.mean_ranks == compare_across(scores, seed=3, n_bootstrap=100, n_resamples=50).mean_ranks
    systems = {"A": np.arange(8.0), "B": np.arange(8.0)[::-1]}
    pair = compare_systems(systems, seed=np.int64(3), n_bootstrap=100, n_resamples=50)
    assert json.loads(pair.table("json"))["settings"]["seed"] == 3
    for bad in (-1, "x", 1.5):
        for compare, given in ((compare_across, scores), (compare_systems, systems)):
            with pytest.raises(ValueError, match=r"'seed' must be an int >= 0"):
                compare(given, seed=bad)
