"""The reality-check toy examples: geometry, numbers, stability, and headless figures."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from reference import evaluate_reference

import embedeval
from embedeval.plotting import metric_caption, plot_reality_check
from embedeval.reality_check import METRICS, evaluate_examples, make_example

STRIPS = {
    1: {0: [(-1, -2 / 3), (-1 / 3, 0)], 1: [(0, 1 / 3), (2 / 3, 1)]},
    2: {0: [(-1, 0)], 1: [(0, 1)]},
    3: {0: [(-1, -1 / 3)], 1: [(1 / 3, 1)]},
}


@pytest.mark.parametrize("number", [1, 2, 3])
@pytest.mark.parametrize("n", [4, 7, 2000])
def test_points_lie_in_their_class_strips_in_equal_numbers(number, n):
    x, labels = make_example(number, n=n, seed=5)
    assert x.shape == (n, 2) and labels.shape == (n,)
    assert ((x[:, 1] >= 0) & (x[:, 1] <= 1)).all()
    counts = []
    for label, strips in STRIPS[number].items():
        px = x[labels == label, 0]
        inside = [(px >= lo - 1e-7) & (px <= hi + 1e-7) for lo, hi in strips]
        assert np.logical_or.reduce(inside).all()
        counts += [int(m.sum()) for m in inside]
    assert max(counts) - min(counts) <= 1


def test_generator_is_deterministic_for_a_seed():
    a, la = make_example(2, n=300, seed=3)
    b, lb = make_example(2, n=300, seed=3)
    c, _ = make_example(2, n=300, seed=4)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(la, lb)
    assert not np.array_equal(a, c)


def test_bad_example_number():
    with pytest.raises(ValueError, match="'number' must be 1, 2 or 3; got 4"):
        make_example(4)


def test_values_agree_with_brute_force():
    """MAP@R and the other values of each example equal a float64 full-sort computation."""
    for number, (x, labels, result) in evaluate_examples(n=240, seed=1).items():
        expected = evaluate_reference(x, labels, list(METRICS))
        for name in METRICS:
            assert result.summary[name] == pytest.approx(expected[name].mean(), rel=1e-12), (number, name)


def test_separated_blocks_have_perfect_precision_and_map_at_r_orders_the_examples():
    results = evaluate_examples(n=2000, seed=0)
    summary = {k: r.summary for k, (_, _, r) in results.items()}
    assert summary[3]["precision@1"] == 1.0
    # precision@1 hardly separates the examples; MAP@R does, in the paper's order.
    assert max(s["precision@1"] for s in summary.values()) - min(s["precision@1"] for s in summary.values()) < 0.01
    assert summary[1]["map@r"] < summary[2]["map@r"] < summary[3]["map@r"]
    assert summary[3]["map@r"] - summary[1]["map@r"] > 0.25


@pytest.mark.parametrize("number", [1, 2, 3])
def test_values_are_stable_across_seeds(number):
    """Across 5 seeds at n = 2000, MAP@R and R-precision vary by less than 0.02."""
    values = np.array(
        [
            [
                embedeval.evaluate(*make_example(number, 2000, s), metrics=["map@r", "r_precision"]).summary[m]
                for m in ("map@r", "r_precision")
            ]
            for s in range(5)
        ]
    )
    assert (values.max(axis=0) - values.min(axis=0) < 0.02).all()


def test_figures_are_written_headless_with_the_evaluated_numbers(tmp_path):
    results = evaluate_examples(n=200, seed=0)
    paths = plot_reality_check(results, tmp_path)
    assert [p.name for p in paths] == [
        "reality_check_1.png",
        "reality_check_2.png",
        "reality_check_3.png",
        "reality_check.png",
    ]
    for p in paths:
        assert p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 10_000
    # The caption printed on each figure is built from evaluate's own numbers.
    x, labels, result = results[2]
    again = embedeval.evaluate(x, labels, metrics=METRICS)
    assert metric_caption(result.summary) == metric_caption(again.summary)
    assert f"MAP@R {again.summary['map@r']:.4f}" in metric_caption(result.summary)


def test_import_does_not_load_matplotlib():
    code = "import sys, embedeval, embedeval.reality_check; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_command_prints_table_and_writes_plots(tmp_path):
    out = subprocess.run(
        [sys.executable, "-m", "embedeval.cli", "reality-check", "--out-dir", str(tmp_path), "--n", "200"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "two separated blocks" in out.stdout and "map@r" in out.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "confidence_experiment.png",
        "error_reject.png",
        "reality_check.png",
        "reality_check_1.png",
        "reality_check_2.png",
        "reality_check_3.png",
    ]
