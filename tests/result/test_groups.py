"""Results per group: each group's values equal an evaluation of that group's queries alone."""

from __future__ import annotations

import json

import numpy as np
import pytest
from runner import run_cli

import embedeval

# A group evaluated alone may have no evaluated query: that evaluation warns, as it should.
pytestmark = pytest.mark.filterwarnings("ignore:no query")

GROUPS = np.array(["en", "de", "fr", "ja"])


def _groups(rng, n):
    groups = GROUPS[rng.integers(0, 3, n)]
    groups[-1] = "ja"  # a group of one query
    return groups


def _assert_groups_match_subsets(result, groups, evaluate_subset):
    """Every group's values equal the summary of an evaluation of its queries alone."""
    assert result.per_group.groups.tolist() == sorted(set(groups.tolist()))
    for g, group in enumerate(result.per_group.groups.tolist()):
        alone = evaluate_subset(groups == group)
        assert result.per_group.n_queries[g] == alone.n_queries
        assert result.per_group.n_evaluated[g] == alone.n_evaluated
        for name in result.per_query:
            np.testing.assert_allclose(
                result.per_group.values[name][g], alone.summary[name], atol=1e-12, equal_nan=True
            )


@pytest.mark.parametrize("seed", range(4))
def test_evaluate_with_a_gallery(seed):
    rng = np.random.default_rng(seed)
    q, g = rng.normal(size=(50, 4)), rng.normal(size=(80, 4))
    ql, gl = rng.integers(0, 12, 50), rng.integers(0, 8, 80)  # labels 8..11: no relevant reference, skipped
    groups = _groups(rng, 50)
    metrics = ["precision@1", "map@r", "recall@5"]
    result = embedeval.evaluate(q, ql, reference=g, reference_labels=gl, metrics=metrics, groups=groups)
    _assert_groups_match_subsets(
        result,
        groups,
        lambda m: embedeval.evaluate(q[m], ql[m], reference=g, reference_labels=gl, metrics=metrics),
    )
    macro = np.nanmean([result.per_group.values["map@r"][i] for i in range(result.per_group.groups.size)])
    assert result.per_group.macro["map@r"] == pytest.approx(macro)


@pytest.mark.parametrize("seed", range(4))
def test_evaluate_scores_and_rankings(seed):
    rng = np.random.default_rng(seed)
    s = rng.integers(0, 4, size=(30, 12)).astype(float)  # ties
    rel = rng.integers(0, 3, size=(30, 12)) * (rng.random((30, 12)) < 0.3)
    groups = _groups(rng, 30)
    metrics = ["ndcg@5", "map", "recall@3"]
    result = embedeval.evaluate_scores(s, rel, metrics=metrics, groups=groups, ties="expected")
    _assert_groups_match_subsets(
        result, groups, lambda m: embedeval.evaluate_scores(s[m], rel[m], metrics=metrics, ties="expected")
    )
    run = {f"q{i}": {f"d{j}": s[i, j] for j in range(12)} for i in range(30)}
    qrels = {f"q{i}": {f"d{j}": int(rel[i, j]) for j in range(12) if rel[i, j]} for i in range(30)}
    by_id = {f"q{i}": groups[i] for i in range(30)}
    ranked = embedeval.evaluate_rankings(run, qrels, metrics=metrics, groups=by_id)
    order = np.array([by_id[q] for q in ranked.config["query_ids"]])

    def subset(mask):
        keep = [q for q, m in zip(ranked.config["query_ids"], mask, strict=True) if m]
        return embedeval.evaluate_rankings({q: run[q] for q in keep}, {q: qrels[q] for q in keep}, metrics=metrics)

    _assert_groups_match_subsets(ranked, order, subset)


def test_evaluate_retrieval_groups_by_row_or_by_id():
    rng = np.random.default_rng(3)
    q, c = rng.normal(size=(20, 5)), rng.normal(size=(40, 5))
    ids = [f"q{i}" for i in range(20)]
    qrels = {f"q{i}": {int(j): 1 for j in rng.choice(40, 3, replace=False)} for i in range(18)}  # q18, q19 unjudged
    groups = _groups(rng, 20)
    by_row = embedeval.evaluate_retrieval(q, c, qrels, query_ids=ids, metrics=["ndcg@10", "mrr"], groups=groups)
    by_id = embedeval.evaluate_retrieval(
        q, c, qrels, query_ids=ids, metrics=["ndcg@10", "mrr"], groups=dict(zip(ids, groups, strict=True))
    )
    assert json.dumps(by_row.per_group.to_dict()) == json.dumps(by_id.per_group.to_dict())  # NaN == NaN here

    def subset(m):
        keep = [i for i in range(20) if m[i]]
        sub = {ids[i]: qrels[ids[i]] for i in keep if ids[i] in qrels}
        return embedeval.evaluate_retrieval(
            q[keep], c, sub, query_ids=[ids[i] for i in keep], metrics=["ndcg@10", "mrr"]
        )

    _assert_groups_match_subsets(by_row, groups, subset)


def test_take_and_select_keep_the_groups():
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(40, 3)), rng.integers(0, 4, 40)
    groups = _groups(rng, 40)
    result = embedeval.evaluate(x, y, metrics=["precision@1", "map@r"], groups=groups)
    perm = rng.permutation(40)
    taken, whole = result.take(perm).per_group.to_dict(), result.per_group.to_dict()
    assert taken.keys() == whole.keys()
    for group, values in whole.items():
        assert taken[group] == pytest.approx(values, rel=1e-12)
    assert list(result.select(["map@r"]).per_group.values) == ["map@r"]
    assert result.with_groups(None).per_group is None
    regrouped = result.with_groups(groups[::-1])
    assert regrouped.query_groups.tolist() == groups[::-1].tolist()
    keys = result.to_dict("val/")
    assert keys["val/group/ja/n_evaluated"] == 1.0 and "val/group/de/map@r" in keys


@pytest.mark.parametrize(
    ("groups", "error", "match"),
    [
        (["a"] * 9, ValueError, r"'groups' must hold one group per query \(10\); got 9"),
        (np.array([1.0] * 9 + [np.nan]), ValueError, "must not hold NaN"),
        ([["a"]] * 10, TypeError, "hashable"),
        (np.zeros((10, 2)), ValueError, "must be 1-D"),
        ({0: "a"}, ValueError, "needs query ids"),
        ("abcdefghij", TypeError, "one group per query"),
    ],
)
def test_bad_groups_are_refused_before_any_work(groups, error, match):
    rng = np.random.default_rng(0)
    with pytest.raises(error, match=match):
        embedeval.evaluate(rng.normal(size=(10, 3)), rng.integers(0, 2, 10), groups=groups)


def test_a_mapping_must_cover_every_query():
    with pytest.raises(ValueError, match=r"1 of 2 have none, first 'q2'"):
        embedeval.evaluate_rankings({"q1": ["a"], "q2": ["b"]}, {"q1": {"a"}, "q2": {"b"}}, groups={"q1": "x"})


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    np.save(tmp_path / "x.npy", rng.normal(size=(30, 4)).astype(np.float32))
    (tmp_path / "y.txt").write_text("\n".join(str(v) for v in rng.integers(0, 4, 30)))
    groups = _groups(rng, 30)
    (tmp_path / "g.txt").write_text("\n".join(groups))
    return tmp_path, groups


def test_every_output_format_has_the_groups(files):
    path, groups = files
    common = ["evaluate", path / "x.npy", path / "y.txt", "--groups", path / "g.txt", "--metrics", "map@r", "--quiet"]
    result = embedeval.evaluate(np.load(path / "x.npy"), np.loadtxt(path / "y.txt"), metrics=["map@r"], groups=groups)
    out = {fmt: run_cli(*common, "--format", fmt) for fmt in ("table", "json", "csv", "markdown")}
    assert all(o.returncode == 0 for o in out.values()), {k: o.stderr for k, o in out.items()}
    payload = json.loads(out["json"].stdout)
    assert payload["per_group"]["ja"]["n_queries"] == 1
    assert payload["per_group"]["de"]["map@r"] == result.per_group.summary("de")["map@r"]
    csv_rows = [line.split(",") for line in out["csv"].stdout.splitlines()]
    assert csv_rows[0][:3] == ["group", "metric", "value"]
    assert ["de", "map@r", repr(result.per_group.summary("de")["map@r"])] == csv_rows[2][:3]
    assert "| group | queries | evaluated | map@r |" in out["markdown"].stdout
    assert "per group" in out["table"].stdout and "\nja " in out["table"].stdout
    report = run_cli(*common, "--report", path / "r.html")
    assert report.returncode == 0 and "<h2>Per group</h2>" in (path / "r.html").read_text()


def test_rankings_groups_by_query_id_and_the_problems(tmp_path):
    (tmp_path / "run").write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\nq2 Q0 a 1 1.0 t\n")
    (tmp_path / "qrels").write_text("q1 0 b 1\nq2 0 a 1\n")
    (tmp_path / "g").write_text("q1 en\nq2 de\n")
    out = run_cli("rankings", tmp_path / "qrels", tmp_path / "run", "--groups", tmp_path / "g", "--format", "json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["per_group"]["en"]["mrr@10"] == 0.5
    (tmp_path / "g").write_text("q1 en\n")
    bad = run_cli("rankings", tmp_path / "qrels", tmp_path / "run", "--groups", tmp_path / "g")
    assert bad.returncode == 2 and "--groups" in bad.stderr and "'q2'" in bad.stderr and "Traceback" not in bad.stderr
    trec = run_cli("rankings", tmp_path / "qrels", tmp_path / "run", "--groups", tmp_path / "g", "--format", "trec")
    assert trec.returncode == 2 and "--groups has no place in --format trec" in trec.stderr


def test_a_groups_file_of_the_wrong_length_is_one_line(files):
    path, _ = files
    (path / "short.txt").write_text("a\nb\n")
    out = run_cli("evaluate", path / "x.npy", path / "y.txt", "--groups", path / "short.txt")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"embedeval evaluate: error: --groups ({path / 'short.txt'}) must hold one label per row of "
        f"EMBEDDINGS ({path / 'x.npy'}) (30); got 2"
    ]
