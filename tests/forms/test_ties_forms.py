"""ties= on the scored ranked forms ({id: score} mappings, score matrices, TREC files): each rule
against every order of the tied items, evaluated through the ordinary path (brute force)."""

from __future__ import annotations

import itertools
import json
import warnings

import numpy as np
import pytest

import embedeval
from embedeval.cli import main as cli_main
from embedeval.io import evaluate_files

RULES = (None, "expected", "optimistic", "pessimistic")
CUTS = (1, 2, 3, 5, 9)
WHOLE = ["r_precision", "map", "map@r", "mrr", "ndcg", "ndcg_exp", "dcg", "cg", "revisited_map"]
CUTOFF = [
    f"{f}@{k}"
    for f in ("precision", "recall", "capped_recall", "hit_rate", "f1", "map", "map_hits", "mrr", "ndcg", "dcg_exp")
    for k in CUTS
] + [f"revisited_mp@{k}" for k in CUTS]
# map_hits@k is not monotone: the optimistic order is not its best (tests/test_ties.py shows it)
MONOTONE = [m for m in WHOLE + CUTOFF if not m.startswith("map_hits")]


def random_queries(rng, n_queries, longest=7):
    """Per query: a list of (id, score, grade) with heavy ties, and judged ids never ranked."""
    queries = []
    for _ in range(n_queries):
        n = int(rng.integers(0, longest + 1))
        levels = int(rng.choice([1, 2, 3, 40]))
        scores = rng.integers(0, levels, n).astype(float)
        grades = rng.choice([-1, 0, 0, 0, 1, 2, 3], n)
        items = [(f"d{j}", float(s), int(g)) for j, (s, g) in enumerate(zip(scores, grades, strict=True))]
        extra = {f"x{j}": int(g) for j, g in enumerate(rng.choice([0, 1, 2], int(rng.integers(0, 3))))}
        queries.append((items, extra))
    return queries


def orders(items):
    """Every ranking of ``items`` (by score descending) that permutes only items of equal score."""
    ranked = sorted(items, key=lambda it: -it[1])
    groups = [list(g) for _, g in itertools.groupby(ranked, key=lambda it: it[1])]
    for combo in itertools.product(*(itertools.permutations(g) for g in groups)):
        yield [it for group in combo for it in group]


def brute_force(queries, metrics, threshold=1.0, cutoff_whole=None):
    """Per query and metric: (mean, max, min) over every tied order, through plain ranked lists."""
    lists, judgements, owner = [], [], []
    for i, (items, extra) in enumerate(queries):
        qrels = {d: g for d, _, g in items if g != 0} | extra
        for order in orders(items):
            lists.append([d for d, _, _ in order])
            judgements.append(qrels)
            owner.append(i)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        per = embedeval.evaluate_rankings(lists, judgements, metrics=metrics, threshold=threshold).per_query
    owner = np.array(owner)
    out = {}
    for m, v in per.items():
        stats = np.full((3, len(queries)), np.nan)
        for i in range(len(queries)):
            values = v[owner == i]
            if values.size and not np.isnan(values).all():
                stats[:, i] = values.mean(), values.max(), values.min()
        out[m] = stats
    return out


def as_mappings(queries):
    run = {f"q{i}": {d: s for d, s, _ in items} for i, (items, _) in enumerate(queries)}
    qrels = {f"q{i}": {d: g for d, _, g in items if g != 0} | extra for i, (items, extra) in enumerate(queries)}
    return run, qrels


def check_against(per_rule: dict, truth: dict, metrics):
    for m in metrics:
        mean, best, worst = truth[m]
        np.testing.assert_allclose(per_rule["expected"][m], mean, rtol=1e-12, atol=1e-12, err_msg=m)
        if m in MONOTONE:
            np.testing.assert_allclose(per_rule["optimistic"][m], best, rtol=1e-12, atol=1e-12, err_msg=m)
            np.testing.assert_allclose(per_rule["pessimistic"][m], worst, rtol=1e-12, atol=1e-12, err_msg=m)


def _quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.mark.parametrize("threshold", [1.0, 2.0])
@pytest.mark.parametrize("seed", range(4))
def test_mappings_under_each_rule_equal_the_mean_best_and_worst_tied_order(seed, threshold):
    queries = random_queries(np.random.default_rng(seed), 40)
    run, qrels = as_mappings(queries)
    metrics = WHOLE + CUTOFF
    truth = brute_force(queries, metrics, threshold)
    per_rule = {
        rule: _quiet(embedeval.evaluate_rankings, run, qrels, metrics=metrics, threshold=threshold, ties=rule).per_query
        for rule in RULES[1:]
    }
    check_against(per_rule, truth, metrics)


def score_matrix(rng, n_queries, n_items=7):
    scores = rng.integers(0, rng.choice([1, 2, 3]), (n_queries, n_items)).astype(float)
    scores[::5] = rng.random((scores[::5].shape[0], n_items))  # some rows without ties
    grades = rng.choice([-1, 0, 0, 0, 1, 2, 3], (n_queries, n_items)).astype(float)
    return scores, grades


def matrix_queries(scores, grades):
    return [
        ([(f"d{j}", float(s), int(g)) for j, (s, g) in enumerate(zip(row_s, row_g, strict=True))], {})
        for row_s, row_g in zip(scores, grades, strict=True)
    ]


@pytest.mark.parametrize(
    "metrics",
    [
        WHOLE + CUTOFF,  # every item ranked
        [m for m in CUTOFF if m.endswith(("@1", "@2"))],  # ranked 2 deep: the last group reaches past the depth
        [m for m in CUTOFF if m.endswith(("@1", "@2", "@3", "@5"))],
    ],
)
@pytest.mark.parametrize("seed", range(3))
def test_score_matrices_count_a_tie_group_whole_even_where_it_reaches_past_the_depth(seed, metrics):
    scores, grades = score_matrix(np.random.default_rng(seed), 60)
    truth = brute_force(matrix_queries(scores, grades), metrics)
    per_rule = {
        rule: _quiet(embedeval.evaluate_scores, scores, grades, metrics=metrics, ties=rule).per_query
        for rule in RULES[1:]
    }
    check_against(per_rule, truth, metrics)


@pytest.mark.parametrize("metrics", [WHOLE + CUTOFF, [m for m in CUTOFF if m.endswith(("@1", "@2"))]])
def test_score_matrices_whose_ties_hold_no_graded_item_give_the_index_rule_under_every_rule(metrics):
    """Only ungraded (or negatively graded) items share scores: every tied order has the same
    values (the fast path), equal to the brute force; one graded item in a tie changes that."""
    rng = np.random.default_rng(5)
    grades = rng.choice([-1, 0, 0, 1, 2, 3], (20, 6)).astype(float)
    scores = rng.integers(0, 3, grades.shape).astype(float)  # heavy ties among the ungraded
    graded = grades > 0
    scores[graded] = 0.5 + rng.permutation(graded.sum()) / 1000  # distinct, between the tied levels
    truth = brute_force(matrix_queries(scores, grades), metrics)
    plain = _quiet(embedeval.evaluate_scores, scores, grades, metrics=metrics).per_query
    for rule in RULES[1:]:
        got = _quiet(embedeval.evaluate_scores, scores, grades, metrics=metrics, ties=rule).per_query
        for m in metrics:
            np.testing.assert_array_equal(got[m], plain[m], err_msg=f"{rule} {m}")
            np.testing.assert_allclose(got[m], truth[m][0], rtol=1e-12, atol=1e-12, err_msg=f"{rule} {m}")
    row = int(np.flatnonzero(graded.any(axis=1) & (~graded).any(axis=1))[0])
    scores[row, np.flatnonzero(graded[row])[0]] = scores[row, np.flatnonzero(~graded[row])[0]]
    truth = brute_force(matrix_queries(scores, grades), metrics)
    per_rule = {
        rule: _quiet(embedeval.evaluate_scores, scores, grades, metrics=metrics, ties=rule).per_query
        for rule in RULES[1:]
    }
    check_against(per_rule, truth, metrics)


def write_trec(folder, queries, truncate=None):
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    with open(run_path, "w") as f:
        for i, (items, _) in enumerate(queries):
            ranked = sorted(items, key=lambda it: -it[1])[:truncate]
            f.writelines(f"q{i} Q0 {d} {r + 1} {s} tag\n" for r, (d, s, _) in enumerate(ranked))
    with open(qrels_path, "w") as f:
        for i, (items, extra) in enumerate(queries):
            judged = {d: g for d, _, g in items if g != 0} | extra
            f.writelines(f"q{i} 0 {d} {g}\n" for d, g in judged.items())
    return run_path, qrels_path


@pytest.mark.parametrize("truncate", [None, 3])
def test_trec_files_average_over_the_listed_items_of_a_cut_tie_group(tmp_path, truncate):
    """A run cut at its depth: only the listed documents of the last group are known and averaged over."""
    queries = [q for q in random_queries(np.random.default_rng(9), 60) if q[0]]
    run_path, qrels_path = write_trec(tmp_path, queries, truncate)
    listed = []
    for items, extra in queries:
        kept = sorted(items, key=lambda it: -it[1])[:truncate]
        cut = {d: g for d, _, g in items if g != 0 and (d, _, g) not in kept}  # judged, but not in the run
        listed.append((kept, extra | cut))
    if truncate:  # the run cuts through tie groups that hold judged documents beyond the cut
        ranked = [sorted(items, key=lambda it: -it[1]) for items, _ in queries]
        cut = [r for r in ranked if len(r) > truncate and r[truncate - 1][1] == r[truncate][1]]
        assert sum(r[truncate][2] > 0 for r in cut) > 3
    metrics = WHOLE + CUTOFF
    truth = brute_force(listed, metrics)
    per_rule = {
        rule: _quiet(evaluate_files, run_path, qrels_path, metrics=metrics, ties=rule, complete=True).per_query
        for rule in RULES[1:]
    }
    check_against(per_rule, truth, metrics)


def test_every_scored_form_gives_the_same_tie_aware_values(tmp_path):
    """Mappings, TREC files (both readers) and a score matrix of the same data agree under every rule."""
    rng = np.random.default_rng(4)
    scores, grades = score_matrix(rng, 30)
    queries = matrix_queries(scores, grades)
    run, qrels = as_mappings(queries)
    run_path, qrels_path = write_trec(tmp_path, queries)
    metrics = ["precision@3", "map", "ndcg@5", "mrr@2", "r_precision"]
    for rule in RULES:
        a = _quiet(embedeval.evaluate_scores, scores, grades, metrics=metrics, ties=rule, empty="zero")
        b = _quiet(embedeval.evaluate_rankings, run, qrels, metrics=metrics, ties=rule, empty="zero", complete=True)
        c = _quiet(evaluate_files, run_path, qrels_path, metrics=metrics, ties=rule, empty="zero", complete=True)
        for m in metrics:
            np.testing.assert_allclose(b.per_query[m], c.per_query[m], rtol=1e-13, err_msg=f"{rule} {m}")
            if rule is not None:  # score matrices break ties by column, the others by id
                np.testing.assert_allclose(a.per_query[m], b.per_query[m], rtol=1e-13, err_msg=f"{rule} {m}")


def test_without_ties_the_four_rules_give_identical_values():
    rng = np.random.default_rng(2)
    scores = rng.random((50, 30))
    grades = rng.choice([0, 0, 0, 1, 2, 3], scores.shape).astype(float)
    run, qrels = as_mappings(matrix_queries(scores, grades))
    metrics = WHOLE + CUTOFF
    for evaluate in (
        lambda rule: embedeval.evaluate_scores(scores, grades, metrics=metrics, ties=rule),
        lambda rule: embedeval.evaluate_rankings(run, qrels, metrics=metrics, ties=rule),
    ):
        plain = _quiet(evaluate, None).per_query
        for rule in RULES[1:]:
            for m, v in _quiet(evaluate, rule).per_query.items():
                np.testing.assert_array_equal(v, plain[m], err_msg=f"{rule} {m}")


@pytest.mark.parametrize("k", [None, 1, 3, 10])
def test_expected_ndcg_and_dcg_of_score_matrices_agree_with_scikit_learn(k):
    metrics_module = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    y_true = rng.integers(0, 4, (60, 12)).astype(float)
    y_true[y_true.sum(axis=1) == 0, 0] = 1.0
    y_score = rng.integers(0, 3, (60, 12)).astype(float)
    names = ["ndcg", "dcg"] if k is None else [f"ndcg@{k}", f"dcg@{k}"]
    r = embedeval.evaluate_scores(y_score, y_true, metrics=names, ties="expected")
    for i in range(60):
        want_ndcg = metrics_module.ndcg_score(y_true[i : i + 1], y_score[i : i + 1], k=k, ignore_ties=False)
        want_dcg = metrics_module.dcg_score(y_true[i : i + 1], y_score[i : i + 1], k=k, ignore_ties=False)
        assert r.per_query[names[0]][i] == pytest.approx(want_ndcg, rel=1e-12)
        assert r.per_query[names[1]][i] == pytest.approx(want_dcg, rel=1e-12)


def test_the_result_names_the_rule():
    scores = np.array([[1.0, 1.0, 0.0], [2.0, 1.0, 1.0]])
    grades = np.array([[0, 1, 0], [1, 0, 1]])
    assert embedeval.evaluate_scores(scores, grades).config["ties"] == "index"
    r = embedeval.evaluate_scores(scores, grades, ties="expected")
    assert r.config["ties"] == "expected" and r.conventions["ties"].startswith("'expected': the exact expected value")
    assert embedeval.evaluate_rankings({"q": {"a": 1.0}}, {"q": {"a": 1}}).config["ties"] == "trec_eval"
    assert embedeval.evaluate_rankings([["a"]], [{"a"}]).config["ties"] == "given"
    assert "'pessimistic'" in str(embedeval.evaluate_rankings({"q": {"a": 1.0}}, {"q": {"a": 1}}, ties="pessimistic"))


def test_bootstrap_and_paired_comparison_work_on_tie_aware_values():
    from embedeval.stats import bootstrap, compare

    rng = np.random.default_rng(0)
    scores, grades = rng.integers(0, 3, (80, 20)).astype(float), rng.integers(0, 2, (80, 20))
    grades[:, 0] = 1
    low = embedeval.evaluate_scores(scores, grades, metrics=["map"], ties="pessimistic")
    high = embedeval.evaluate_scores(scores, grades, metrics=["map"], ties="optimistic")
    expected = embedeval.evaluate_scores(scores, grades, metrics=["map"], ties="expected")
    interval = bootstrap(expected, n_bootstrap=200, seed=0)["map"]
    assert interval.low <= expected.summary["map"] <= interval.high
    (row,) = compare(low, high, n_resamples=200, seed=0)
    assert row.difference.estimate > 0 and row.p_value < 0.05
    assert low.summary["map"] < expected.summary["map"] < high.summary["map"]


@pytest.mark.parametrize(
    ("rankings", "relevance", "match"),
    [
        ([["a", "b"]], [{"a"}], r"'ties'='expected' needs scores.*'rankings' of query 0 \(a list of ids\)"),
        (np.array([[1, 2]]), np.array([[1]]), r"'ties'='expected' needs scores.*'rankings' as an array of ids"),
        (np.array([[1, 2]]), [{1}], r"'rankings' as an array of ids holds none"),
        ({"q": {"a": 1.0}, "r": ["b"]}, {"q": {"a"}, "r": {"b"}}, r"'rankings' of query 'r' \(a list of ids\)"),
    ],
)
def test_tie_aware_rules_refuse_rankings_without_scores(rankings, relevance, match):
    with pytest.raises(ValueError, match=match):
        embedeval.evaluate_rankings(rankings, relevance, ties="expected")


@pytest.mark.parametrize("bad", ["index", "random", "", 1, True])
def test_an_unknown_rule_is_refused_by_every_entry_point(tmp_path, bad):
    run_path, qrels_path = write_trec(tmp_path, [([("a", 1.0, 1)], {})])
    message = r"'ties' must be None \(the input form's own rule\) or one of 'expected', 'optimistic', 'pessimistic'"
    with pytest.raises(ValueError, match=message):
        embedeval.evaluate_rankings({"q": {"a": 1.0}}, {"q": {"a": 1}}, ties=bad)
    with pytest.raises(ValueError, match=message):
        embedeval.evaluate_scores(np.ones((1, 2)), np.ones((1, 2)), ties=bad)
    with pytest.raises(ValueError, match=message):
        evaluate_files(run_path, qrels_path, ties=bad)


def test_cli_ties_option_changes_the_numbers_and_says_so(tmp_path, capsys):
    queries = [([("a", 2.0, 0), ("b", 1.0, 0), ("c", 1.0, 1), ("d", 1.0, 0)], {})]
    run_path, qrels_path = write_trec(tmp_path, queries)
    values = {}
    for rule in RULES:
        extra = [] if rule is None else ["--ties", rule]
        command = ["rankings", str(qrels_path), str(run_path), "--metrics", "mrr", "--format", "json", *extra]
        assert cli_main(command) == 0
        payload = json.loads(capsys.readouterr().out)
        values[rule] = payload["summary"]["mrr"]
        assert payload["config"]["ties"] == (rule or "trec_eval")
    # trec_eval: ids descending put d, c, b: c at rank 3; expected: (1/2 + 1/3 + 1/4) / 3
    assert values[None] == pytest.approx(1 / 3)
    assert values["expected"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert (values["optimistic"], values["pessimistic"]) == (pytest.approx(1 / 2), pytest.approx(1 / 4))
    np.save(tmp_path / "s.npy", np.array([[2.0, 1.0, 1.0, 1.0]]))
    np.save(tmp_path / "g.npy", np.array([[0, 0, 1, 0]]))
    files = [str(tmp_path / "s.npy"), str(tmp_path / "g.npy")]
    assert cli_main(["scores", *files, "--metrics", "mrr", "--ties", "expected"]) == 0
    out = capsys.readouterr().out
    assert "0.3611" in out and "ties: 'expected'" in out
    assert cli_main(["scores", *files, "--ties", "random"]) == 2  # one line, no usage block
    assert "invalid choice: 'random'" in capsys.readouterr().err
