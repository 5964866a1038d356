"""Bootstrap intervals over fewer than 10 resampled units say that they are not meaningful: in
the Interval, in every table the command line prints, and in compare_systems (issue 40, item 11)."""

from __future__ import annotations

import json

import numpy as np
import pytest

import embedeval
from embedeval.cli import main
from embedeval.stats import MIN_BOOTSTRAP_UNITS, Interval, bootstrap, compare, compare_systems

CAVEAT = "not meaningful"


def _rankings(n_queries: int):
    run = {f"q{i}": ["a", "b", "c"] for i in range(n_queries)}
    qrels = {f"q{i}": {"abc"[i % 3]: 1} for i in range(n_queries)}
    return embedeval.evaluate_rankings(run, qrels, metrics=["mrr@10", "map"])


@pytest.mark.parametrize("n", [1, 3, MIN_BOOTSTRAP_UNITS - 1, MIN_BOOTSTRAP_UNITS, 40])
def test_interval_says_it_below_the_threshold_only(n):
    interval = bootstrap(_rankings(n), n_bootstrap=200)["mrr@10"]
    assert interval.n == n
    assert interval.meaningful is (n >= MIN_BOOTSTRAP_UNITS)
    assert (CAVEAT in str(interval)) is (n < MIN_BOOTSTRAP_UNITS)
    assert (interval.caveat is None) is (n >= MIN_BOOTSTRAP_UNITS)


def test_class_bootstrap_counts_classes():
    x = np.random.default_rng(0).normal(size=(60, 4))
    labels = np.repeat(np.arange(3), 20)
    result = embedeval.evaluate(x, labels, metrics=["map@r"])
    by_class = bootstrap(result, by="class", n_bootstrap=200)["map@r"]
    assert (by_class.n, by_class.unit, by_class.meaningful) == (3, "classes", False)
    assert "over 3 classes: not meaningful" in str(by_class)
    assert bootstrap(result, n_bootstrap=200)["map@r"].meaningful  # 60 queries


def test_the_issue_example_prints_with_its_caveat():
    assert str(Interval(0.2, 0.2, 0.2, 0.95, 3)) == "0.2000 [0.2000, 0.2000] (over 3 queries: not meaningful)"
    assert str(Interval(0.2, 0.1, 0.3, 0.95)) == "0.2000 [0.1000, 0.3000]"  # n unknown: as before


def test_result_table_says_it_under_the_numbers():
    result = _rankings(3)
    text = result.table(intervals=bootstrap(result, n_bootstrap=200))
    assert "intervals of mrr@10, map: not meaningful: a bootstrap over 3 queries (fewer than 10)" in text


def test_compare_of_two_results_marks_the_difference():
    (row, *_) = compare(_rankings(4), _rankings(4), n_resamples=99)
    assert not row.difference.meaningful and CAVEAT in str(row)


@pytest.mark.parametrize(("n", "said"), [(3, True), (12, False)])
def test_compare_systems_notes_it(n, said):
    rng = np.random.default_rng(n)
    c = compare_systems({"a": rng.random(n), "b": rng.random(n)}, n_resamples=99, n_bootstrap=99)
    assert any(CAVEAT in note for note in c.notes) is said
    assert (CAVEAT in c.table("table")) is said
    assert not any(CAVEAT in note for note in compare_systems({"a": rng.random(n), "b": rng.random(n)},
                                                              confidence=None, n_resamples=99).notes)  # fmt: skip


@pytest.mark.parametrize("fmt", ["table", "markdown", "json"])
def test_every_cli_format_with_intervals_says_it(tmp_path, capsys, fmt):
    (tmp_path / "run.txt").write_text("".join(f"q{i} Q0 d{j} {j} {9 - j} t\n" for i in range(3) for j in (1, 2, 3)))
    (tmp_path / "qrels.txt").write_text("q0 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\n")
    argv = ["rankings", str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), "--metrics", "mrr@10", "--format", fmt]
    assert main(argv) == 0
    out = capsys.readouterr().out
    if fmt == "json":
        assert "bootstrap over 3 queries" in json.loads(out)["intervals_not_meaningful"]
    else:
        assert "(over 3 queries: not meaningful)" in out and "a bootstrap over 3 queries (fewer than 10)" in out


def test_one_unit_is_named_in_the_singular():
    assert str(Interval(0.5, 0.5, 0.5, 0.95, 1)).endswith("(over 1 query: not meaningful)")
    assert (
        Interval(0.5, 0.5, 0.5, 0.95, 1, "classes").caveat == "not meaningful: a bootstrap over 1 class (fewer than 10)"
    )
