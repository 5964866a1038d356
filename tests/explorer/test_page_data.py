"""The explorer's page as a file: its data equals the result's, it holds no address but the user's
thumbnails, its size stays bounded at 100,000 queries, and the per-query table for loggers."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from runner import run_cli

import embedeval
from embedeval import Neighbors
from embedeval.explorer import MAX_DEPTH, PAGE_NEIGHBOURS, per_query_table, render
from embedeval.explorer.json_text import dumps, for_script
from embedeval.result import EvaluationResult

URL = re.compile(r"https?://[^\s\"'<>)]+")


def page_data(text: str) -> dict:
    body = re.search(r'<script type="application/json" id="explorer-data">(.*?)</script>', text, re.S).group(1)
    return json.loads(body)


def labelled(n=200, seed=0, k=8):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % 5
    x = (rng.standard_normal((5, 6))[labels] + rng.standard_normal((n, 6))).astype(np.float32)
    return embedeval.evaluate(x, labels, metrics=["precision@1", "map@r"], keep_neighbors=k), x, labels


def test_json_text_is_safe_inside_a_script_and_reads_back():
    value = {"a": np.array([0.5, np.nan, np.inf, 1 / 3]), "b": "</script><!--", "c": np.array([1, -1]), "d": None}
    text = for_script(dumps(value))
    assert "<" not in text
    back = json.loads(text)
    assert back["a"][:3] == [0.5, None, None] and math.isclose(back["a"][3], 1 / 3, rel_tol=1e-5)
    assert back["b"] == "</script><!--" and back["c"] == [1, -1] and back["d"] is None


def test_the_page_holds_the_results_numbers():
    result, _, labels = labelled()
    data = page_data(render_result(result))
    for name, values in result.per_query.items():
        np.testing.assert_allclose(data["queries"]["values"][name], values, rtol=1e-5)
    assert [row["metric"] for row in data["summary"]] == list(result.summary)
    np.testing.assert_array_equal(data["neighbours"]["ids"], result.neighbors.indices.ravel())
    assert data["classes"] == [str(c) for c in range(5)]
    np.testing.assert_array_equal(data["queries"]["labels"], labels)
    assert data["curves"]["series"]["recall"][0] == pytest.approx(result.summary["precision@1"])


def render_result(result, **kwargs):
    from embedeval.explorer.result_data import result_data

    return render(result_data(result, **kwargs))


def test_the_page_holds_no_address_but_the_thumbnails_given():
    result, x, _ = labelled(n=40)
    images = [f"https://images.example/{i}.jpg" for i in range(len(x))]
    text = render_result(result, images=images, query_images=images)
    assert set(URL.findall(text)) <= set(images)
    assert URL.findall(render_result(result)) == []
    assert "<script src" not in text and "<link" not in text


def test_a_confusion_is_the_pair_that_takes_the_top_1():
    x = np.array([[0.0], [0.1], [5.0], [5.1], [0.05]], dtype=np.float32)
    result = embedeval.evaluate(x, ["a", "a", "b", "b", "b"], metrics=["precision@1"], keep_neighbors=2)
    data = page_data(render_result(result))
    # queries 0 and 1 (a) find 4 (b) first, query 4 (b) finds 0 (a); 2 and 3 find each other
    assert data["confusions"] == [
        {"query_class": "a", "neighbour_class": "b", "count": 2, "share": 1},
        {"query_class": "b", "neighbour_class": "a", "count": 1, "share": pytest.approx(1 / 3)},
    ]


def test_at_100000_queries_the_page_keeps_every_row_and_neighbours_for_the_worst_by_each_sort():
    """Every query keeps its row; neighbours within the budget, for the worst queries by every
    column the query table sorts by (each metric, the first relevant rank), ties by lower index."""
    n, k = 100_000, 20
    rng = np.random.default_rng(0)
    values = {"precision@1": rng.integers(0, 2, n).astype(float), "map@r": rng.random(n)}
    values["map@r"][:10] = np.nan
    values["precision@1"][:10] = np.nan
    result = EvaluationResult.from_per_query(
        values, {m: m for m in values}, {}, query_labels=rng.integers(0, 100, n), skip_reasons=("no_relevant",)
    )
    kept = Neighbors(
        rng.integers(0, n, (n, k)), rng.random((n, k)), relevant=rng.random((n, k)) < 0.3, n_relevant=np.full(n, 50)
    )
    import dataclasses

    text = render_result(dataclasses.replace(result, neighbors=kept))
    assert len(text.encode()) < 25 * 2**20
    data = page_data(text)
    assert len(data["queries"]["values"]["map@r"]) == n
    chosen = data["neighbours"]["queries"]
    budget = PAGE_NEIGHBOURS // k
    assert len(chosen) == budget and len(data["neighbours"]["ids"]) == budget * k
    share = budget // 2 // 3
    for name in values:  # the worst by each metric, as the page sorts them (lowest, ties by lower index)
        ordered = np.lexsort((np.arange(n), values[name]))
        assert set(ordered[~np.isnan(values[name][ordered])][:share].tolist()) <= set(chosen), name
    first = kept.first_relevant()
    late = np.lexsort((np.arange(n), -np.where(first == 0, np.inf, first)))[:share]
    assert set(late.tolist()) <= set(chosen)
    assert f"{budget:,} of 100,000 queries" in data["rule"] and "map@r" in data["rule"]


def test_a_small_evaluation_keeps_every_querys_neighbours_and_a_deep_one_at_most_max_depth():
    """20,000 queries x 20 neighbours fit: all kept. 5,000 kept neighbours: the page holds the
    first MAX_DEPTH of each, for as many queries as the budget allows, and says so."""
    n = 20_000
    rng = np.random.default_rng(1)
    values = {"precision@1": rng.integers(0, 2, n).astype(float)}
    result = EvaluationResult.from_per_query(values, {"precision@1": "p"}, {})
    import dataclasses

    for k, queries, depth in ((20, n, 20), (500, PAGE_NEIGHBOURS // MAX_DEPTH, MAX_DEPTH)):
        ids = np.tile(np.arange(k), (n, 1))
        kept = Neighbors(ids, np.ones((n, k)), relevant=np.zeros((n, k), bool), n_relevant=np.full(n, 3))
        from embedeval.explorer.result_data import result_data

        data = result_data(dataclasses.replace(result, neighbors=kept))
        assert data["neighbours"]["queries"].size == queries and data["neighbours"]["k"] == depth
        assert data["neighbours"]["kept"] == k and data["neighbours"]["ids"].size == queries * depth
    assert f"the first {MAX_DEPTH} of the 500 kept" in data["rule"]


def test_per_query_table_has_a_row_per_query_in_loggers_form():
    result, _, labels = labelled(n=30)
    table = per_query_table(result.take(np.arange(5)))
    assert table["columns"] == ["query", "query_id", "label", "skipped", "precision@1", "map@r"]
    assert len(table["data"]) == 5 and table["data"][2][2] == labels[2]
    assert table["data"][1][5] == pytest.approx(result.per_query["map@r"][1])
    columns = dict(zip(table["columns"], zip(*table["data"], strict=True), strict=True))  # mlflow.log_table's dict
    assert len(columns["map@r"]) == 5
    assert result.per_query_table() == per_query_table(result)


def test_a_skipped_query_is_none_in_the_table():
    x = np.array([[0.0], [1.0], [2.0]], dtype=np.float32)
    result = embedeval.evaluate(x, [0, 0, 1], metrics=["precision@1"])
    row = per_query_table(result)["data"][2]
    assert row[4] is None and "R = 0" in row[3]


def test_the_command_line_writes_neighbours_and_explorer_pages(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((50, 4)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    (tmp_path / "labels.txt").write_text("\n".join(str(i % 3) for i in range(50)) + "\n")
    out = run_cli(
        "neighbors", tmp_path / "x.npy", "--k", 3, "--out", tmp_path / "gt.ivecs", "--out", tmp_path / "d.fvecs"
    )
    assert out.returncode == 0, out.stderr
    expected = embedeval.neighbors(x, k=3)
    ivecs = np.fromfile(tmp_path / "gt.ivecs", dtype=np.int32).reshape(50, 4)
    fvecs = np.fromfile(tmp_path / "d.fvecs", dtype=np.float32).reshape(50, 4)
    assert (ivecs[:, 0] == 3).all() and (fvecs.view(np.int32)[:, 0] == 3).all()
    np.testing.assert_array_equal(ivecs[:, 1:], expected.indices)
    np.testing.assert_array_equal(fvecs[:, 1:], expected.distances.astype(np.float32))
    bad = run_cli("neighbors", tmp_path / "nothing.npy", "--k", 0, "--out", tmp_path / "gt.txt")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 3
    page = tmp_path / "eval.html"
    done = run_cli(
        "evaluate", tmp_path / "x.npy", tmp_path / "labels.txt", "--explore", page, "--explore-k", 4, "--quiet"
    )
    assert done.returncode == 0, done.stderr
    data = page_data(page.read_text())
    assert data["neighbours"]["k"] == 4 and data["summary"][0]["low"] is not None
    np.save(tmp_path / "y.npy", x + rng.standard_normal(x.shape).astype(np.float32))
    compared = tmp_path / "compare.html"
    done = run_cli("compare", tmp_path / "x.npy", tmp_path / "y.npy", tmp_path / "labels.txt", "--explore", compared)
    assert done.returncode == 0, done.stderr
    assert page_data(compared.read_text())["systems"] == ["x", "y"]


def shown(value: float, decimals: int = 4) -> str:
    """What the page draws for ``value`` (explorer.js, fmt): JavaScript's toFixed, which rounds the
    exact binary value half up (away from zero), or 10 significant digits from 1e6 on."""
    from decimal import ROUND_HALF_UP, Context, Decimal

    exact = Decimal(value)
    if abs(value) >= 1e6:
        rounded = Context(prec=10, rounding=ROUND_HALF_UP).plus(exact)
        return f"{rounded:f}" if rounded.adjusted() < 10 else f"{rounded:e}"
    return str(exact.quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))


TRICKY = [1234.56775, 98765.432149, 0.12344999999, 1 / 3, 25_000_000.125, 12.34564999, -7.00004999, 3e-7, 2 / 3 * 1e5]


def test_a_number_on_the_page_draws_its_own_decimals_not_those_of_a_rounded_copy():
    """The data holds enough digits that every number the page draws (2, 3 or 4 decimals, 10
    significant digits from 1e6) reads as the value does: 1234.56775 is 1234.5677, not 1234.5700."""
    rng = np.random.default_rng(0)
    values = np.concatenate([TRICKY, rng.random(2000) * 10.0 ** rng.integers(-3, 8, 2000)])
    back = json.loads(dumps(values))
    for value, stored in zip(values.tolist(), back, strict=True):
        for decimals in (2, 3, 4):
            if abs(value) < 1e6:
                assert shown(stored, decimals) == shown(value, decimals), (value, stored)
        assert shown(stored) == shown(value), (value, stored)
    assert shown(back[0]) == "1234.5677"


def test_tuple_labels_make_a_page_with_or_without_kept_neighbours():
    """The documented (identity, camera) labels: one class per tuple, in both cases."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((30, 4)).astype(np.float32)
    labels = [(i % 3, i % 2) for i in range(30)]
    for keep in (None, 3):
        result = embedeval.evaluate(x, labels, metrics=["precision@1"], keep_neighbors=keep)
        data = page_data(render_result(result))
        assert data["classes"] == [str(t) for t in sorted(set(labels))]
        assert [data["classes"][c] for c in data["queries"]["labels"]] == [str(t) for t in labels]


def test_text_that_utf8_cannot_write_is_shown_by_its_bytes(tmp_path):
    """Labels, ids and titles decoded with surrogateescape (bytes that are not UTF-8) hold lone
    surrogates: the page is written, and shows each such byte as \\xNN."""
    x = np.array([[0.0], [0.1], [5.0], [5.1]], dtype=np.float32)
    names = [b"caf\xe9".decode("utf-8", "surrogateescape"), "caf\xe9", "b", "b"]
    result = embedeval.evaluate(x, names, metrics=["precision@1"], keep_neighbors=2)
    path = result.explore(tmp_path / "page.html", title="r\udcffsum\ud800")
    text = path.read_text(encoding="utf-8")
    assert "<title>r\\xffsum\\ud800</title>" in text
    assert page_data(text)["classes"] == ["b", "caf\xe9", "caf\\xe9"]
    ranked = embedeval.evaluate_rankings({"q\udcff": ["a"]}, {"q\udcff": {"a": 1}}, metrics=["map"])
    assert page_data(ranked.explore(tmp_path / "r.html").read_text(encoding="utf-8"))["queries"]["ids"] == ["q\\xff"]


def _compared(n=40, names=("a", "b")):
    from embedeval.stats import compare_systems

    rng = np.random.default_rng(2)
    labels = np.arange(n) % 4
    results = {
        s: embedeval.evaluate((rng.standard_normal((4, 6))[labels] + rng.standard_normal((n, 6))), labels)
        for s in names
    }
    return compare_systems(results, metrics=["map@r"], n_resamples=200, n_bootstrap=100)


@pytest.mark.parametrize("n_ids", [39, 41])
def test_a_comparison_page_refuses_query_ids_of_another_length(tmp_path, n_ids):
    comparison = _compared()
    with pytest.raises(ValueError, match=r"'query_ids' must give one id per query given to the comparison \(40\); got"):
        comparison.explore(tmp_path / "c.html", query_ids=[f"q{i}" for i in range(n_ids)])
    assert not (tmp_path / "c.html").exists()
    done = comparison.explore(tmp_path / "c.html", query_ids=[f"q{i}" for i in range(40)])
    assert page_data(done.read_text())["queries"]["ids"][:2] == ["q0", "q1"]


def test_with_expected_ties_the_page_says_where_curve_and_summary_differ():
    """Queries 0 and 2 have a relevant and an irrelevant neighbour at the same distance: the
    summary's precision@1 averages over both orders (0.625), the curve takes the lower index (0.75)."""
    x = np.array([[0.0], [1.0], [-1.0], [-3.0]], dtype=np.float32)
    result = embedeval.evaluate(x, ["a", "a", "b", "b"], metrics=["precision@1"], ties="expected", keep_neighbors=2)
    data = page_data(render_result(result))
    assert result.summary["precision@1"] == pytest.approx(0.625)
    assert data["curves"]["series"]["precision"][0] == pytest.approx(0.75)
    assert "ties='expected'" in data["curves"]["ties"]
    assert "precision@1: summary 0.6250, curve 0.7500" in data["curves"]["ties"]
    plain = embedeval.evaluate(x, ["a", "a", "b", "b"], metrics=["precision@1"], keep_neighbors=2)
    assert page_data(render_result(plain))["curves"]["ties"] is None


def test_numeric_classes_are_listed_by_value_and_corpus_ids_name_the_neighbours():
    rng = np.random.default_rng(3)
    labels = np.arange(60) % 12
    x = (rng.standard_normal((12, 4))[labels] + rng.standard_normal((60, 4))).astype(np.float32)
    data = page_data(render_result(embedeval.evaluate(x, labels, metrics=["precision@1"])))
    assert data["classes"] == [str(c) for c in range(12)] and data["per_class"]["numeric"] is True
    corpus = rng.standard_normal((30, 4)).astype(np.float32)
    result = embedeval.evaluate_retrieval(
        corpus[:5],
        corpus,
        {f"q{i}": {f"d{i}": 1} for i in range(5)},
        query_ids=[f"q{i}" for i in range(5)],
        corpus_ids=[f"d{j}" for j in range(30)],
        metrics=["mrr@10"],
        keep_neighbors=4,
    )
    neighbours = page_data(render_result(result))["neighbours"]
    assert {int(i): f"d{i}" for i in neighbours["ids"]} == {int(k): v for k, v in neighbours["names"].items()}


def test_explore_k_past_the_pages_depth_warns_before_the_work(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.standard_normal((300, 4)).astype(np.float32))
    (tmp_path / "labels.txt").write_text("\n".join(str(i % 3) for i in range(300)) + "\n")
    page = tmp_path / "eval.html"
    done = run_cli(
        "evaluate", tmp_path / "x.npy", tmp_path / "labels.txt", "--explore", page, "--explore-k", 150, "--quiet"
    )
    assert done.returncode == 0, done.stderr
    assert f"warning: --explore-k 150: the page shows each query's first {MAX_DEPTH} neighbours" in done.stderr
    assert "keeping 150 for 300 queries holds about 1 MB" in done.stderr
    data = page_data(page.read_text())
    assert data["neighbours"]["k"] == MAX_DEPTH and data["neighbours"]["kept"] == 150


def test_the_command_lines_page_of_verification_metrics_holds_the_pair_curves(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "x.npy", rng.standard_normal((60, 4)).astype(np.float32))
    (tmp_path / "labels.txt").write_text("\n".join(str(i % 3) for i in range(60)) + "\n")
    page = tmp_path / "v.html"
    done = run_cli(
        "evaluate", tmp_path / "x.npy", tmp_path / "labels.txt", "--metrics", "eer", "map@r", "--explore", page
    )
    assert done.returncode == 0, done.stderr
    data = page_data(page.read_text())["verification"]
    assert data["n_positive"] == 3 * 20 * 19 // 2 and data["marks"].keys() == {"eer"}
