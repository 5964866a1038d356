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
from embedeval.explorer import NEIGHBOUR_QUERIES, per_query_table, render
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


def test_at_100000_queries_the_page_keeps_every_row_and_the_neighbours_of_2000():
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
    assert len(chosen) == NEIGHBOUR_QUERIES and len(data["neighbours"]["ids"]) == NEIGHBOUR_QUERIES * k
    worst = np.lexsort((np.arange(n), values["precision@1"]))[: NEIGHBOUR_QUERIES // 2]
    assert set(worst.tolist()) <= set(chosen)
    assert "2,000 of 100,000 queries" in data["rule"]


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
