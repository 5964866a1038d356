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
    shown = [float(v) for v in _column(browser, "pairs-table", 3)]
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
