"""embedeval.testing: assertions fail on bad embeddings with readable messages, pass on good ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

import embedeval
from embedeval.testing import (
    assert_healthy_embeddings,
    assert_no_regression,
    assert_retrieval_quality,
    check_embeddings,
    save_baseline,
)


def clustered(seed=0, n=400, d=16, n_classes=8, spread=0.3):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, n_classes, size=n)
    centres = rng.standard_normal((n_classes, d)) * 3
    return (centres[labels] + spread * rng.standard_normal((n, d))).astype(np.float32), labels


GOOD, LABELS = clustered()
THRESHOLDS = {"map@r": 0.8, "precision@1": 0.9}


def test_good_embedding_passes_silently():
    result = assert_retrieval_quality(GOOD, LABELS, at_least=THRESHOLDS)
    assert result.summary["map@r"] > 0.8


@pytest.mark.parametrize(
    "bad",
    [
        "random",
        "collapsed",
        "shuffled labels",
    ],
)
def test_bad_embedding_fails_with_a_table(bad):
    rng = np.random.default_rng(1)
    emb, labels = GOOD, LABELS
    if bad == "random":
        emb = rng.standard_normal(GOOD.shape).astype(np.float32)
    elif bad == "collapsed":
        emb = np.ones_like(GOOD)
    else:
        labels = rng.permutation(LABELS)
    with pytest.raises(AssertionError) as info:
        assert_retrieval_quality(emb, labels, at_least=THRESHOLDS)
    message = str(info.value)
    assert "below threshold for 2 of 2 metric(s)" in message
    assert re.search(r"map@r\s+0\.\d{4}\s+>= 0\.8\s+FAIL", message)
    assert re.search(r"precision@1\s+0\.\d{4}\s+>= 0\.9\s+FAIL", message)


def test_nan_embedding_fails_as_an_assertion():
    emb = GOOD.copy()
    emb[3, 0] = np.nan
    with pytest.raises(AssertionError, match=r"cannot evaluate the embeddings: 'embeddings' must be finite.*row 3"):
        assert_retrieval_quality(emb, LABELS, at_least=THRESHOLDS)


def test_macro_threshold_and_one_failing_metric():
    with pytest.raises(AssertionError, match=r"1 of 2 metric\(s\) \(macro average"):
        assert_retrieval_quality(GOOD, LABELS, at_least={"MAP@R": 0.5, "precision@1": 1.01}, macro=True)


def test_baseline_round_trip_detects_a_drop(tmp_path):
    path = tmp_path / "baseline.json"
    with pytest.raises(AssertionError, match=r"no baseline at .*update=True or EMBEDEVAL_UPDATE_BASELINE=1"):
        assert_no_regression(GOOD, LABELS, path, metrics=["map@r", "precision@1"])
    assert_no_regression(GOOD, LABELS, path, metrics=["map@r", "precision@1"], update=True)
    stored = json.loads(path.read_text())
    assert set(stored["metrics"]) == {"map@r", "precision@1"} and "embedeval" in stored
    assert_no_regression(GOOD, LABELS, path)  # same embeddings: passes
    worse, _ = clustered(spread=3.0)  # map@r 1.00 -> 0.63
    with pytest.raises(AssertionError) as info:
        assert_no_regression(worse, LABELS, path, tolerance=0.01)
    assert re.search(r"map@r\s+1\.0000\s+0\.\d{4}\s+-0\.\d{4}\s+0\.01\s+FAIL", str(info.value))
    assert_no_regression(worse, LABELS, path, tolerance={"map@r": 1.0, "precision@1": 1.0})


def test_baseline_update_through_the_environment(tmp_path, monkeypatch):
    path = tmp_path / "b.json"
    monkeypatch.setenv("EMBEDEVAL_UPDATE_BASELINE", "1")
    assert_no_regression(GOOD, LABELS, path, metrics=["map@r"])
    assert path.exists()


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_a_baseline_is_created_without_naming_metrics(tmp_path, monkeypatch, how):
    """The README's way to create a baseline: no file, no metrics= -> evaluate's default metrics are stored."""
    path = tmp_path / "baseline.json"
    if how == "environment":
        monkeypatch.setenv("EMBEDEVAL_UPDATE_BASELINE", "1")
    assert_no_regression(GOOD, LABELS, path, update=how == "argument")
    assert list(json.loads(path.read_text())["metrics"]) == sorted(["precision@1", "r_precision", "map@r"])
    monkeypatch.delenv("EMBEDEVAL_UPDATE_BASELINE", raising=False)
    assert_no_regression(GOOD, LABELS, path)


def test_tolerance_keys_are_read_as_metric_names(tmp_path):
    path = tmp_path / "baseline.json"
    assert_no_regression(GOOD, LABELS, path, metrics=["map@r", "precision@1"], update=True)
    worse, _ = clustered(spread=3.0)
    assert_no_regression(worse, LABELS, path, tolerance={"MAP@R": 1.0, " Precision@1": 1.0})
    with pytest.raises(ValueError, match=r"'tolerance' has a key that is not a metric name: .*'map@rr'"):
        assert_no_regression(worse, LABELS, path, tolerance={"map@rr": 1.0, "precision@1": 1.0})  # a typo of map@r
    with pytest.raises(ValueError, match=r"'tolerance' names metric\(s\) \['recall@5'\] that are not compared"):
        assert_no_regression(worse, LABELS, path, tolerance={"recall@5": 1.0})
    with pytest.raises(ValueError, match=r"'tolerance' must be >= 0"):
        assert_no_regression(worse, LABELS, path, tolerance=-0.1)


def test_quality_table_shows_canonical_names():
    with pytest.raises(AssertionError) as info:
        assert_retrieval_quality(GOOD, LABELS, at_least={"MAP@R": 1.01, "Precision@001": 0.5})
    rows = str(info.value).splitlines()[3:]
    assert [row.split()[0] for row in rows] == ["map@r", "precision@1"]


def test_save_baseline_writes_the_summary(tmp_path):
    result = embedeval.evaluate(GOOD, LABELS, metrics=["map@r"])
    path = save_baseline(result, tmp_path / "sub" / "b.json")
    assert json.loads(path.read_text())["metrics"] == result.summary


def test_health_report_of_a_good_embedding():
    report = check_embeddings(GOOD, LABELS)
    assert report.ok and report.nonfinite_rows == 0 and report.duplicate_fraction == 0.0
    assert 5 < report.effective_rank <= 16 and report.n_classes == 8
    assert_healthy_embeddings(GOOD, LABELS)


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (
            lambda x: np.where(np.arange(len(x))[:, None] == 5, np.nan, x),
            "1 row\\(s\\) contain NaN or inf .first: row 5",
        ),
        (lambda x: np.ones_like(x), "collapsed: every embedding is the same vector"),
        (lambda x: np.outer(np.arange(len(x)), np.ones(x.shape[1])), "dimensional collapse: effective rank 1.00"),
        (lambda x: np.concatenate([x[:200], x[:200]]), "50.0% of rows exactly repeat another row"),
    ],
)
def test_unhealthy_embeddings_are_reported(make, message):
    bad = make(GOOD)
    assert re.search(message, "\n".join(check_embeddings(bad).problems))
    with pytest.raises(AssertionError, match="unhealthy embeddings"):
        assert_healthy_embeddings(bad)


def test_health_notes_singletons_and_zero_rows():
    x = GOOD.copy()
    x[0] = 0
    labels = LABELS.copy()
    labels[1] = 99
    report = check_embeddings(x, labels)
    assert report.ok and report.singleton_classes == 1 and report.zero_rows == 1
    assert any("single member" in n for n in report.notes)


def test_readme_training_loop_runs_with_numpy_stand_ins():
    """The README's epoch loop, executed with a numpy 'model' and a list-backed logger."""
    text = (Path(__file__).parents[2] / "README.md").read_text()
    block = text.split("### Validation every epoch", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    logged = []

    class Logger:
        def log(self, values, step):
            logged.append((step, values))

    rng = np.random.default_rng(0)
    namespace = {
        "n_epochs": 3,
        "train_one_epoch": lambda model: None,
        "model": lambda x: x + 0.01 * rng.standard_normal(x.shape),
        "val_inputs": GOOD,
        "val_labels": LABELS,
        "logger": Logger(),
    }
    exec(compile(block, "README.md", "exec"), namespace)
    assert [step for step, _ in logged] == [0, 1, 2]
    assert {"val/map@r", "val/macro/precision@1", "val/n_evaluated"} <= set(logged[-1][1])
    assert all(isinstance(v, float) for v in logged[-1][1].values())
