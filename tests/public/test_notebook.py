"""Notebooks: pandas frames of every result, the HTML Jupyter shows, pages inline, progress bars."""

from __future__ import annotations

import sys
from html.parser import HTMLParser

import numpy as np
import pytest

import embedeval
from embedeval import stats

pd = pytest.importorskip("pandas")


class _Text(HTMLParser):
    """The text of an HTML fragment, and whether its tags are balanced."""

    VOID = frozenset({"br", "hr", "img", "meta", "input", "link"})

    def __init__(self):
        super().__init__()
        self.text, self.open = [], []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        assert self.open and self.open.pop() == tag, f"unbalanced </{tag}>"

    def handle_data(self, data):
        self.text.append(data)


def _parsed(markup: str) -> str:
    parser = _Text()
    parser.feed(markup)
    parser.close()
    assert parser.open == [], parser.open
    return " ".join(parser.text)


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 5)).astype(np.float32)
    y = rng.integers(0, 6, 40)
    y[0] = 99  # a class of one: skipped
    return embedeval.evaluate(x, y, metrics=["precision@1", "map@r"], groups=np.where(np.arange(40) < 20, "a", "b"))


def test_per_query_frame_equals_the_result_arrays(result):
    frame = result.to_pandas()
    assert list(frame.columns) == ["label", "group", "skipped", "precision@1", "map@r"]
    assert frame.index.name == "query" and frame.shape[0] == result.n_queries
    for name, values in result.per_query.items():
        assert frame[name].dtype == np.float64
        np.testing.assert_array_equal(frame[name].to_numpy(), values)  # NaN where skipped, at the same rows
    assert frame.loc[0, "skipped"] == "no_relevant" and np.isnan(frame.loc[0, "map@r"])
    assert frame["skipped"].isna().sum() == result.n_evaluated
    assert frame["label"].tolist() == result.query_labels.tolist()
    assert frame["group"].tolist() == result.query_groups.tolist()


def test_summary_class_and_group_frames(result):
    summary = result.to_pandas("summary")
    assert summary["value"].to_dict() == pytest.approx(result.summary)
    assert summary["macro"].to_dict() == pytest.approx(result.per_class.macro)
    assert summary["definition"].to_dict() == result.definitions
    per_class = result.to_pandas("per_class")
    np.testing.assert_array_equal(per_class["map@r"].to_numpy(), result.per_class.values["map@r"])
    np.testing.assert_array_equal(per_class["n_evaluated"].to_numpy(), result.per_class.counts)
    per_group = result.to_pandas("per_group")
    assert per_group.loc["a", "map@r"] == pytest.approx(np.nanmean(result.per_query["map@r"][:20]))
    with pytest.raises(ValueError, match="'what' must be one of"):
        result.to_pandas("everything")


def test_query_ids_head_the_frame():
    rng = np.random.default_rng(0)
    q, corpus = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((6, 4)).astype(np.float32)
    r = embedeval.evaluate_retrieval(
        q, corpus, qrels={"q1": {"d0": 1}, "q2": {"d5": 2}, "q3": {}}, query_ids=["q1", "q2", "q3"],
        corpus_ids=[f"d{i}" for i in range(6)], metrics=["ndcg@3"],
    )  # fmt: skip
    frame = r.to_pandas()
    assert frame["query_id"].tolist() == ["q1", "q2", "q3"]
    assert np.isnan(frame["ndcg@3"].iloc[2]) and frame["skipped"].iloc[2] is not None


def test_html_holds_every_metric_value_and_definition(result):
    text = _parsed(result._repr_html_())
    for name, value in result.summary.items():
        assert name in text and f"{value:.4f}" in text
        assert result.definitions[name] in text
    assert "1 skipped" in text


def test_html_escapes_what_it_shows():
    r = embedeval.evaluate_rankings([["<b>x</b>"]], [{"<b>x</b>"}], metrics=["mrr"])
    r = r.__class__(**{**r.__dict__, "conventions": {"<script>": "a < b & c"}})
    markup = r._repr_html_()
    assert "<script>" not in markup.replace("<style>", "") and "&lt;script&gt;" in markup
    assert "a < b & c" in _parsed(markup)


def test_comparisons_show_values_and_intervals_in_html():
    rng = np.random.default_rng(1)
    base = rng.random(30)
    c = stats.compare_systems({"A": {"map@r": base}, "B": {"map@r": base + 0.05 * rng.random(30)}}, seed=0)
    text = _parsed(c._repr_html_())
    for s in c.systems:
        lo, hi = c.intervals[s]["map@r"]
        assert f"{c.values[s]['map@r']:.4f}" in text and f"{lo:.4f}" in text and f"{hi:.4f}" in text
    values = c.to_pandas()
    row = values.set_index("system").loc["B"]
    assert row["value"] == c.values["B"]["map@r"] and (row["low"], row["high"]) == c.intervals["B"]["map@r"]
    pairs = c.to_pandas("pairs")
    assert pairs.loc[0, "p_value"] == c.pairs[0]["p_value"]


def test_across_comparison_frames_and_html():
    scores = {f"d{i}": {"A": 0.5 + 0.01 * i, "B": 0.6 + 0.02 * i, "C": 0.55} for i in range(6)}
    c = stats.compare_across(scores, seed=0)
    grid = c.to_pandas("scores")
    assert grid.loc["d3", "B"] == scores["d3"]["B"] and list(grid.columns) == c.systems
    ranks = c.to_pandas("mean_ranks")
    assert ranks.loc["B", "mean_rank"] == c.mean_ranks["B"]["mean_rank"]
    assert len(c.to_pandas("pairs")) == len(c.pairs)
    text = _parsed(c._repr_html_())
    assert all(s in text for s in c.systems)


def test_neighbors_frame():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((12, 3)).astype(np.float32)
    n = embedeval.neighbors(x, k=3)
    frame = n.to_pandas()
    assert frame.shape == (36, 4)
    np.testing.assert_array_equal(frame["reference"].to_numpy().reshape(12, 3), n.indices)
    np.testing.assert_array_equal(frame["distance"].to_numpy().reshape(12, 3), n.distances)
    kept = embedeval.evaluate(x, rng.integers(0, 3, 12), metrics=["map@r"], keep_neighbors=4).neighbors
    assert kept.to_pandas()["relevant"].to_numpy().reshape(12, 4).tolist() == kept.relevant.tolist()


def test_ipython_display_formatter_picks_the_html(result):
    ipython = pytest.importorskip("IPython.core.formatters")
    formatter = ipython.DisplayFormatter()
    data, _ = formatter.format(result)
    assert "text/html" in data and "map@r" in data["text/html"]


def test_explore_without_a_path_returns_the_page_inline(result, tmp_path):
    page = result.explore()
    assert "<iframe" in page._repr_html_() and "srcdoc=" in page._repr_html_()
    written = page.save(tmp_path / "p.html")
    assert written.read_text(encoding="utf-8") == page.html
    assert page.html == result.explore(tmp_path / "q.html").read_text(encoding="utf-8")


def test_missing_pandas_names_the_install(result, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pip install pandas"):
        result.to_pandas()


def test_progress_true_draws_a_tqdm_bar_to_the_total(monkeypatch):
    tqdm_auto = pytest.importorskip("tqdm.auto")
    bars = []

    class Bar:
        def __init__(self, total, **_):
            self.total, self.n, self.closed = total, 0, False
            bars.append(self)

        def update(self, step):
            self.n += step

        def close(self):
            self.closed = True

    monkeypatch.setattr(tqdm_auto, "tqdm", Bar)
    x = np.random.default_rng(0).standard_normal((50, 3)).astype(np.float32)
    embedeval.evaluate(x, np.arange(50) % 5, metrics=["map@r"], progress=True, block_size=8)
    assert len(bars) == 1 and bars[0].n == bars[0].total == 50 and bars[0].closed
    with pytest.raises(ValueError, match="'progress' must be True, False, None or a callable"):
        embedeval.evaluate(x, np.arange(50) % 5, metrics=["map@r"], progress="yes")


def test_a_notebook_run_headless_shows_the_table_and_an_inline_page():
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    code = (
        "import numpy as np, embedeval\n"
        "x = np.random.default_rng(0).standard_normal((30, 4)).astype('float32')\n"
        "result = embedeval.evaluate(x, np.arange(30) % 3, metrics=['map@r'], keep_neighbors=5)\n"
        "result"
    )
    cells = [nbformat.v4.new_code_cell(code), nbformat.v4.new_code_cell("result.explore()")]
    nb = nbformat.v4.new_notebook(cells=cells)
    nbclient.NotebookClient(nb, timeout=120, kernel_name="python3").execute()
    table, page = (cell.outputs[-1]["data"]["text/html"] for cell in nb.cells)
    assert "map@r" in table and "embedeval-display" in table
    assert page.startswith("<iframe") and "srcdoc=" in page
