"""The explorer page in a real browser (headless Chromium driven by selenium): it draws without a
console error, asks the network for nothing, and its sorting, filtering and clicking work.

Skipped where Chromium, its driver or selenium are missing (CI installs them: .ci/run). Screenshots
at 1280 and 800 pixels wide go to $EMBEDEVAL_SCREENSHOTS (a folder) when set, else to the test's
temporary folder, for a person to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

import embedeval
from embedeval.result import EvaluationResult
from embedeval.stats import bootstrap, compare_systems

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
webdriver = pytest.importorskip("selenium.webdriver")
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs chromium and chromedriver")
By = pytest.importorskip("selenium.webdriver.common.by").By
Select = pytest.importorskip("selenium.webdriver.support.select").Select


def _png(path: Path, rgb: tuple[int, int, int]) -> None:
    """A 4x4 PNG of one colour (thumbnails for the page to load from disk)."""
    raw = b"".join(b"\x00" + bytes(rgb) * 4 for _ in range(4))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    head = struct.pack(">IIBBBBB", 4, 4, 8, 2, 0, 0, 0)
    path.write_bytes(
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", head) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")
    )


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--window-size=1280,900",
    ):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def shots(tmp_path_factory) -> Path:
    folder = Path(os.environ.get("EMBEDEVAL_SCREENSHOTS") or tmp_path_factory.mktemp("screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _classes(seed=0, n=240, n_classes=6, spread=0.8):
    rng = np.random.default_rng(seed)
    labels = np.arange(n) % n_classes
    centres = rng.standard_normal((n_classes, 8))[labels]
    return labels, centres, rng, spread


@pytest.fixture(scope="module")
def result_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("page")
    labels, centres, rng, spread = _classes()
    x = (spread * centres + rng.standard_normal(centres.shape)).astype(np.float32)
    names = np.array(["cat", "dog", "fox", "owl", "yak", "eel"])[labels]
    result = embedeval.evaluate(x, names, metrics=["precision@1", "recall@5", "map@r"], keep_neighbors=10)
    (folder / "img").mkdir()
    images = []
    for i in range(len(x)):
        _png(folder / "img" / f"{i}.png", (40 * (labels[i] + 1), 90, 160))
        images.append(f"img/{i}.png")
    path = result.explore(folder / "result.html", images=images, intervals=bootstrap(result), title="six animals")
    return result, path


def _open(driver, path: Path, fragment: str = ""):
    driver.get_log("browser")  # drop what an earlier page logged
    driver.get_log("performance")
    driver.get("about:blank")  # else a new fragment on the page already open would not reload it
    driver.get(path.as_uri() + fragment)
    assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"


def _problems(driver) -> tuple[list, list]:
    """(console messages of level SEVERE or WARNING, requested URLs that are not files on disk)."""
    console = [e for e in driver.get_log("browser") if e["level"] in ("SEVERE", "WARNING")]
    events = [json.loads(e["message"])["message"] for e in driver.get_log("performance")]
    urls = [m["params"]["request"]["url"] for m in events if m["method"] == "Network.requestWillBeSent"]
    return console, [u for u in urls if not u.startswith("file://")]


def _screenshots(driver, folder: Path, name: str) -> None:
    """The page at 1280 and 800 pixels wide, as ``name-1280.png`` and ``name-800.png``."""
    for width in (1280, 800):
        driver.set_window_size(width, 900)
        driver.save_screenshot(str(folder / f"{name}-{width}.png"))
    driver.set_window_size(1280, 900)


def _column(driver, table_id: str, index: int) -> list[str]:
    rows = driver.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")
    return [r.find_elements(By.TAG_NAME, "td")[index].text for r in rows]


def test_the_result_page_draws_every_part_without_errors_or_network(browser, result_page, shots):
    result, path = result_page
    _open(browser, path)
    assert not browser.find_element(By.ID, "errors").is_displayed()
    summary = _column(browser, "summary-table", 0)
    assert summary == list(result.summary)
    assert _column(browser, "summary-table", 1)[2] == f"{result.summary['map@r']:.4f}"
    assert len(browser.find_elements(By.CSS_SELECTOR, "#curves-svg polyline")) == 3
    assert len(browser.find_elements(By.CSS_SELECTOR, "#histogram-svg rect")) == 20
    assert len(_column(browser, "class-table", 0)) == 6
    assert browser.find_element(By.ID, "counts").text.startswith("240 queries given, 240 evaluated")
    console, remote = _problems(browser)
    assert console == [] and remote == []
    _screenshots(browser, shots, "result")


def test_sorting_and_filtering_change_the_rows(browser, result_page):
    result, path = result_page
    _open(browser, path)
    header = browser.find_element(By.CSS_SELECTOR, "#query-table th[data-key='map@r']")
    header.click()
    column = 2 + list(result.per_query).index("map@r")
    ascending = [float(v) for v in _column(browser, "query-table", column)]
    assert ascending[0] == pytest.approx(np.nanmin(result.per_query["map@r"]), abs=1e-4)
    assert ascending == sorted(ascending)
    header.click()
    descending = [float(v) for v in _column(browser, "query-table", column)]
    assert descending[0] == pytest.approx(np.nanmax(result.per_query["map@r"]), abs=1e-4)
    assert "sort=map%40r" in browser.current_url or "sort=map@r" in browser.current_url
    Select(browser.find_element(By.ID, "class-select")).select_by_visible_text("fox")
    labels = set(_column(browser, "query-table", 1))
    assert labels == {"fox"} and len(_column(browser, "query-table", 1)) == 40
    classes = browser.find_element(By.ID, "class-filter")
    classes.send_keys("o")
    assert sorted(_column(browser, "class-table", 0)) == ["dog", "fox", "owl"]


def test_clicking_a_query_shows_its_neighbours_as_evaluated(browser, result_page, shots):
    result, path = result_page
    _open(browser, path, "#sort=precision@1&order=asc")
    row = browser.find_element(By.CSS_SELECTOR, "#query-rows tr")
    query = int(row.get_attribute("data-query"))
    row.click()
    kept = result.neighbors
    ids = [int(v) for v in _column(browser, "neighbour-table", 1)]
    assert ids == kept.indices[query].tolist()
    relevant = [v == "relevant" for v in _column(browser, "neighbour-table", 4)]
    assert relevant == kept.relevant[query].tolist()
    first = browser.find_element(By.ID, "first-relevant").text
    assert first == (str(kept.first_relevant()[query]) if kept.relevant[query].any() else "none in the top 10")
    thumbs = browser.find_elements(By.CSS_SELECTOR, "#neighbour-table img.thumb")
    assert len(thumbs) == 10
    browser.execute_script("document.getElementById('query-detail').scrollIntoView()")
    assert browser.execute_script("return Array.from(document.images).every(i => i.complete)")
    console, remote = _problems(browser)
    assert console == [] and remote == []
    browser.save_screenshot(str(shots / "result-neighbours-1280.png"))
    _open(browser, path, f"#query={query}")  # the address opens the same view
    assert [int(v) for v in _column(browser, "neighbour-table", 1)] == ids


def test_the_comparison_page_draws_pairs_scatter_and_differences(browser, tmp_path, shots):
    labels, centres, rng, _ = _classes(seed=3)
    results = {
        name: embedeval.evaluate(
            (s * centres + rng.standard_normal(centres.shape)).astype(np.float32),
            labels,
            metrics=["precision@1", "map@r"],
        )
        for name, s in (("base", 0.5), ("tuned", 0.8), ("big", 1.0))
    }
    comparison = compare_systems(results, pairs="all", n_resamples=500, n_bootstrap=200)
    path = comparison.explore(tmp_path / "compare.html", title="three systems")
    _open(browser, path, "#metric=map@r")
    assert _column(browser, "systems-table", 0) == ["base", "tuned", "big"]
    assert len(_column(browser, "pairs-table", 0)) == 6
    assert browser.find_elements(By.CSS_SELECTOR, "#scatter-svg circle")
    differences = _column(browser, "differences-table", 3)
    base, tuned = results["base"].per_query["map@r"], results["tuned"].per_query["map@r"]
    assert float(differences[0]) == pytest.approx(
        np.max(np.abs(tuned - base)) * np.sign((tuned - base)[np.argmax(np.abs(tuned - base))]), abs=1e-4
    )
    browser.find_element(By.CSS_SELECTOR, "#pair-select option:nth-child(3)").click()
    assert _column(browser, "differences-table", 3) != differences
    browser.find_element(By.CSS_SELECTOR, "#pairs-table th:nth-child(4)").click()
    shown = [float(v.split()[0]) for v in _column(browser, "pairs-table", 3)]
    assert shown == sorted(shown, reverse=True)
    console, remote = _problems(browser)
    assert console == [] and remote == []
    _screenshots(browser, shots, "compare")


def test_a_page_without_neighbours_labels_or_intervals_still_draws(browser, tmp_path):
    """Ranked lists: no neighbours, no classes, no intervals; the page says so and draws the rest."""
    run = {"q1": ["a", "b", "c"], "q2": ["c", "a"], "q3": ["x"]}
    qrels = {"q1": {"a": 1, "c": 2}, "q2": {"a": 1}, "q3": {"z": 1}}
    result = embedeval.evaluate_rankings(run, qrels, metrics=["ndcg@3", "map"])
    _open(browser, result.explore(tmp_path / "rankings.html"), "#query=2")
    assert _column(browser, "query-table", 0) == ["q1", "q2", "q3"]
    assert "no neighbours kept" in browser.find_element(By.ID, "no-neighbours").text
    assert browser.find_element(By.TAG_NAME, "h1").location["y"] < 60  # nothing drawn above the title
    assert _problems(browser) == ([], [])


def test_a_retrieval_page_shows_graded_neighbours_by_id(browser, tmp_path, shots):
    """evaluate_retrieval with judgements: the curves include ndcg@k, and a clicked query's
    neighbours are the kept corpus rows with their grades."""
    rng = np.random.default_rng(5)
    corpus = rng.standard_normal((300, 16)).astype(np.float32)
    queries = corpus[:40] + 0.3 * rng.standard_normal((40, 16)).astype(np.float32)
    qrels = {f"q{i}": {f"d{i}": 2, f"d{(i + 7) % 300}": 1} for i in range(40)}
    result = embedeval.evaluate_retrieval(
        queries,
        corpus,
        qrels,
        query_ids=[f"q{i}" for i in range(40)],
        corpus_ids=[f"d{j}" for j in range(300)],
        metrics=["ndcg@10", "recall@10", "mrr@10"],
        keep_neighbors=10,
    )
    _open(browser, result.explore(tmp_path / "retrieval.html"), "#sort=ndcg@10&order=asc")
    assert len(browser.find_elements(By.CSS_SELECTOR, "#curves-svg polyline")) >= 3
    row = browser.find_element(By.CSS_SELECTOR, "#query-rows tr")
    query = int(row.get_attribute("data-query"))
    row.click()
    kept = result.neighbors
    assert len(_column(browser, "neighbour-table", 1)) == 10
    relevant = [v == "relevant" for v in _column(browser, "neighbour-table", 4)]
    assert relevant == kept.relevant[query].tolist()
    console, remote = _problems(browser)
    assert console == [] and remote == []
    browser.save_screenshot(str(shots / "retrieval-1280.png"))


def _ready_without_errors(driver) -> None:
    assert driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1"
    assert not driver.find_element(By.ID, "errors").is_displayed()
    assert _problems(driver) == ([], [])


@pytest.mark.parametrize("fragment", ["#sort=%", "#sort=map%40r&query=%zz", "#%=1&class=%E0%A4%A"])
def test_a_malformed_escape_in_the_address_still_draws_the_page(browser, result_page, fragment):
    _, path = result_page
    _open(browser, path, fragment)
    _ready_without_errors(browser)
    assert len(_column(browser, "query-table", 0)) == 100


def test_numbers_are_drawn_with_the_values_own_decimals(browser, tmp_path):
    """1234.56775 is drawn 1234.5677 (it was 1234.5700: six significant digits kept, four decimals drawn)."""
    from test_page_data import TRICKY, shown

    values = np.array(TRICKY)
    result = EvaluationResult.from_per_query({"dcg": values}, {"dcg": "a sum of gains"}, {})
    _open(browser, result.explore(tmp_path / "numbers.html"), "#sort=query")
    assert _column(browser, "query-table", 2) == [shown(v) for v in TRICKY]
    assert _column(browser, "query-table", 2)[0] == "1234.5677"


def test_a_system_name_with_a_nul_draws_its_comparison(browser, tmp_path):
    results = {}
    labels, centres, rng, _ = _classes(seed=4, n=60)
    for name in ("a\x00b", "c"):
        results[name] = embedeval.evaluate(
            (centres + rng.standard_normal(centres.shape)).astype(np.float32), labels, metrics=["map@r"]
        )
    comparison = compare_systems(results, n_resamples=200, n_bootstrap=100)
    _open(browser, comparison.explore(tmp_path / "nul.html"))
    _ready_without_errors(browser)
    assert browser.find_elements(By.CSS_SELECTOR, "#scatter-svg circle")
    assert len(_column(browser, "differences-table", 0)) == 20


@pytest.mark.parametrize("pairs", ["all", "baseline"])
def test_the_comparison_page_shows_the_p_that_decides_significance(browser, tmp_path, pairs):
    """All pairs: randomised Tukey HSD decides, its p is a column and the rule says so (the page
    showed Holm's p and 'significant' by Tukey's, unseen); against a baseline Holm's decides."""
    labels, centres, rng, _ = _classes(seed=7)
    results = {
        name: embedeval.evaluate(
            (s * centres + rng.standard_normal(centres.shape)).astype(np.float32), labels, metrics=["map@r"]
        )
        for name, s in (("dense", 0.6), ("hybrid", 0.65), ("sparse", 0.9))
    }
    comparison = compare_systems(results, pairs=pairs, n_resamples=300, n_bootstrap=100)
    _open(browser, comparison.explore(tmp_path / "p.html"))
    heads = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "#pairs-table th")]
    decides, key = ("p (Tukey HSD)", "p_tukey") if pairs == "all" else ("p (Holm)", "p_adjusted")
    assert (
        heads[3] == "p" and heads[4].startswith("p (Holm)") and (("p (Tukey HSD) \u2020" in heads) == (pairs == "all"))
    )
    column = heads.index(decides + " \u2020")
    shown = _column(browser, "pairs-table", column)
    significant = _column(browser, "pairs-table", heads.index("significant"))
    for row, text, marked in zip(comparison.pairs, shown, significant, strict=True):
        assert text == f"{row[key]:.4f}" and marked == ("yes" if row[key] < 0.05 else "no")
    assert f"{decides} < 0.05" in browser.find_element(By.ID, "significance-rule").text
    browser.find_element(By.CSS_SELECTOR, "#pairs details summary").click()
    legend = browser.find_element(By.ID, "pairs-legend").text
    assert ("randomised Tukey HSD" in legend) == (pairs == "all") and "Holm" in legend


def test_sorting_by_any_metric_shows_the_neighbours_of_its_worst_queries(browser, tmp_path):
    """More queries than the page holds neighbours for: the first rows of every ascending sort
    (and of the latest first relevant) have their neighbours, none is marked."""
    import dataclasses

    from embedeval import Neighbors
    from embedeval.explorer import PAGE_NEIGHBOURS

    k = 100
    n = PAGE_NEIGHBOURS // k + 2000
    rng = np.random.default_rng(8)
    values = {"precision@1": rng.integers(0, 2, n).astype(float), "map@r": rng.random(n), "recall@5": rng.random(n)}
    result = EvaluationResult.from_per_query(values, {m: m for m in values}, {})
    kept = Neighbors(
        rng.integers(0, n, (n, k)), rng.random((n, k)), relevant=rng.random((n, k)) < 0.02, n_relevant=np.full(n, 3)
    )
    path = dataclasses.replace(result, neighbors=kept).explore(tmp_path / "big.html")
    for fragment in ("#sort=precision@1&order=asc", "#sort=map@r&order=asc", "#sort=recall@5&order=asc"):
        _open(browser, path, fragment)
        names = _column(browser, "query-table", 0)
        assert len(names) == 100 and not [v for v in names if "\u00b7" in v], fragment
        browser.find_element(By.CSS_SELECTOR, "#query-rows tr").click()
        assert len(_column(browser, "neighbour-table", 1)) == k
    assert "marked \u00b7" in browser.find_element(By.ID, "query-count").text
    assert browser.find_elements(By.ID, "with-neighbours")
    assert _problems(browser) == ([], [])


def test_at_800_pixels_a_click_brings_the_neighbours_into_view_and_tables_fit(browser, result_page, tmp_path, shots):
    _, path = result_page
    browser.set_window_size(800, 900)
    try:
        _open(browser, path, "#sort=map@r&order=asc")
        rows = browser.find_elements(By.CSS_SELECTOR, "#query-rows tr")
        browser.execute_script("arguments[0].scrollIntoView({block: 'end'})", rows[5])
        rows[5].click()
        top = browser.execute_script("return document.getElementById('query-detail').getBoundingClientRect().top")
        height = browser.execute_script("return window.innerHeight")
        assert 0 <= top < height - 100
        browser.save_screenshot(str(shots / "result-click-800.png"))
        labels, centres, rng, _ = _classes(seed=3)
        results = {
            name: embedeval.evaluate(
                (s * centres + rng.standard_normal(centres.shape)).astype(np.float32),
                labels,
                metrics=["precision@1", "map@r"],
            )
            for name, s in (("dense_retriever", 0.5), ("hybrid_retriever", 0.8), ("bm25", 1.0))
        }
        compared = compare_systems(results, pairs="all", n_resamples=300, n_bootstrap=100).explore(tmp_path / "c.html")
        for page in (path, compared):
            _open(browser, page)
            fits = browser.execute_script(
                "var w = document.documentElement.clientWidth;"
                "return Array.from(document.querySelectorAll('table')).map(function (t) {"
                "  var box = t.parentElement, note = box.parentElement.querySelector('.sideways');"
                "  var inside = box.getBoundingClientRect().right <= w;"
                "  var fits = box.scrollWidth <= box.clientWidth + 1;"
                "  return [t.id, inside && (fits || (note !== null && !note.hidden))]; });"
            )
            assert fits and all(ok for _, ok in fits), fits
        wide = browser.execute_script(
            "var t = document.getElementById('pairs-table'); return [t.scrollWidth, t.parentElement.clientWidth];"
        )
        assert wide[0] <= wide[1] + 1, wide  # the pairs table fits at 800 px (it was 891 px wide)
        browser.save_screenshot(str(shots / "compare-pairs-800.png"))
    finally:
        browser.set_window_size(1280, 900)


def test_wording_first_relevant_beyond_the_kept_and_the_marker_stays_on_its_line(browser, result_page, tmp_path):
    x = np.array([[0.0], [0.1], [0.2], [0.3], [5.0], [50.0]], dtype=np.float32)
    result = embedeval.evaluate(x, list("aaaabb"), metrics=["precision@1", "map@r"], keep_neighbors=2)
    _open(browser, result.explore(tmp_path / "w.html"), "#sort=query")
    assert _column(browser, "query-table", 4)[4] == "beyond the 2 kept"  # query 4 (b at 5): a, a in its top 2
    cell = browser.find_element(By.CSS_SELECTOR, "#query-rows tr td")
    assert cell.value_of_css_property("white-space") == "nowrap"
    # every query's neighbours are on this page: no marker to explain, no filter by it
    assert "marked" not in browser.find_element(By.ID, "query-count").text
    assert not browser.find_elements(By.ID, "with-neighbours")
    _open(browser, result_page[1])  # precision@1 and recall@5 take only 0 and 1: the histogram opens on map@r
    assert browser.find_element(By.ID, "histogram-metric").get_attribute("value") == "map@r"


def test_numeric_classes_sort_by_value_and_a_retrieval_page_names_neighbours_by_corpus_id(browser, tmp_path):
    rng = np.random.default_rng(3)
    labels = np.arange(120) % 12
    x = (rng.standard_normal((12, 4))[labels] + rng.standard_normal((120, 4))).astype(np.float32)
    _open(browser, embedeval.evaluate(x, labels, metrics=["map@r"]).explore(tmp_path / "n.html"))
    options = [o.text for o in browser.find_elements(By.CSS_SELECTOR, "#class-select option")]
    assert options == ["all classes"] + [str(c) for c in range(12)]
    header = browser.find_element(By.CSS_SELECTOR, "#class-table th")
    header.click()
    assert _column(browser, "class-table", 0) == [str(c) for c in range(12)]
    corpus = rng.standard_normal((50, 8)).astype(np.float32)
    result = embedeval.evaluate_retrieval(
        corpus[:6],
        corpus,
        {f"q{i}": {f"doc-{i}": 1} for i in range(6)},
        query_ids=[f"q{i}" for i in range(6)],
        corpus_ids=[f"doc-{j}" for j in range(50)],
        metrics=["mrr@10"],
        keep_neighbors=5,
    )
    _open(browser, result.explore(tmp_path / "r.html"), "#query=2")
    assert _column(browser, "neighbour-table", 1) == [f"doc-{j}" for j in result.neighbors.indices[2]]


def test_with_expected_ties_the_page_says_why_curve_and_summary_differ(browser, tmp_path):
    x = np.array([[0.0], [1.0], [-1.0], [-3.0]], dtype=np.float32)
    result = embedeval.evaluate(x, ["a", "a", "b", "b"], metrics=["precision@1"], ties="expected", keep_neighbors=2)
    _open(browser, result.explore(tmp_path / "t.html"))
    note = browser.find_element(By.ID, "curve-ties").text
    assert "ties='expected'" in note and "precision@1: summary 0.6250, curve 0.7500" in note


def test_a_verification_page_draws_roc_det_and_the_pair_distances(browser, tmp_path, shots):
    labels, centres, rng, spread = _classes(seed=9, n=200, n_classes=8)
    x = (spread * centres + rng.standard_normal(centres.shape)).astype(np.float32)
    result = embedeval.evaluate(x, labels, metrics=["eer", "tar@far=0.01", "pair_auroc", "map@r"])
    _open(browser, result.explore(tmp_path / "verification.html"))
    _ready_without_errors(browser)
    curves = result.pair_curves
    for figure in ("roc-svg", "det-svg"):
        line = browser.find_element(By.CSS_SELECTOR, f"#{figure} polyline")
        assert len(line.get_attribute("points").split()) >= min(50, len(curves["fmr"]) // 2)
    bars = browser.find_elements(By.CSS_SELECTOR, "#pair-scores-svg rect")
    assert len(bars) == 2 * len(curves["positive"])
    note = browser.find_element(By.ID, "verification-note").text
    assert f"{curves['n_positive']:,} positive" in note and f"eer = {result.summary['eer']:.4f}" in note
    _screenshots(browser, shots, "verification")


def test_a_p_value_below_the_drawn_decimals_reads_as_a_bound_not_zero(browser, tmp_path):
    labels, centres, rng, _ = _classes(seed=11)
    results = {
        name: embedeval.evaluate(
            (s * centres + rng.standard_normal(centres.shape)).astype(np.float32), labels, metrics=["map@r"]
        )
        for name, s in (("weak", 0.2), ("strong", 1.5))
    }
    comparison = compare_systems(results, test="t", n_bootstrap=100)
    assert comparison.pairs[0]["p_value"] < 1e-4
    _open(browser, comparison.explore(tmp_path / "tiny.html"))
    assert _column(browser, "pairs-table", 3) == ["<0.0001"]  # as format_p_value writes it
