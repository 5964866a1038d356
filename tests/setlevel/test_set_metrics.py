"""Set-level metrics (clustering, verification, geometry) through ``evaluate``: the same numbers as
the standalone functions, run only when asked, refused with clear errors before any work, and
shown cleanly by the result, its tables, the statistics and the command line."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest
from runner import run_cli as run
from test_verification import pair_verification

import embedeval
from embedeval._inputs.arrays import prepare
from embedeval._setlevel.clustering import kmeans
from embedeval._setlevel.geometry import pcf
from embedeval._setlevel.information import ami, nmi
from embedeval.stats import bootstrap, compare, no_interval

SET = ["nmi", "ami", "fnmr@fmr=0.01", "tar@far=0.001", "eer", "pair_auroc", "pcf@0.5", "pcf@0.9"]


def blobs(n=400, d=12, k=8, seed=0, noise=1.2):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, k, n)
    x = (2 * rng.standard_normal((k, d))[labels] + noise * rng.standard_normal((n, d))).astype(np.float32)
    return x, labels


def pml_quality(x, y, distance="euclidean"):
    """(NMI, AMI) of pytorch-metric-learning's recipe: its k-means into one cluster per label."""
    clusters = kmeans(x, np.unique(y).size, distance=distance).assignment
    return nmi(y, clusters), ami(y, clusters)


@pytest.mark.parametrize("distance", ["euclidean", "cosine", "inner_product"])
def test_leave_one_out_values_are_the_standalone_functions(distance):
    x, y = blobs(seed=1)
    r = embedeval.evaluate(x, y, metrics=["precision@1", *SET, "pml_nmi", "pml_ami"], distance=distance)
    pml_nmi, pml_ami = pml_quality(x, y, distance)
    pairs = pair_verification(x, y, distance=distance, fmr=(0.01, 0.001))
    shares = pcf(prepare(x, distance), (0.5, 0.9))
    assert r.summary["pml_nmi"] == pml_nmi and r.summary["pml_ami"] == pml_ami
    assert r.summary["nmi"] >= pml_nmi - 0.02  # k-means++ with restarts: no worse than one random start here
    assert r.summary["fnmr@fmr=0.01"] == pairs.fnmr_at_fmr[0.01]
    assert r.summary["tar@far=0.001"] == 1 - pairs.fnmr_at_fmr[0.001]
    assert r.summary["eer"] == pairs.eer and r.summary["pair_auroc"] == pairs.auroc
    assert r.summary["pcf@0.5"] == shares[0.5] and r.summary["pcf@0.9"] == shares[0.9]
    assert r.config["verification"]["n_positive_pairs"] == pairs.n_positive
    assert r.config["pml_clustering"]["seed"] == 1234 and r.config["pml_clustering"]["n_clusters"] == 8
    assert r.config["pml_clustering"]["normalised"] == (distance == "cosine")
    assert r.config["clustering"]["init"] == "k-means++" and r.config["clustering"]["n_clusters"] == 8


def test_with_a_reference_set_queries_are_clustered_and_query_reference_pairs_verified():
    x, y = blobs(n=500, seed=2)
    q, g = slice(0, 150), slice(150, None)
    r = embedeval.evaluate(x[q], y[q], reference=x[g], reference_labels=y[g], metrics=[*SET, "pml_nmi", "pml_ami"])
    pairs = pair_verification(x[q], y[q], reference=x[g], reference_labels=y[g], fmr=(0.01, 0.001))
    assert (r.summary["pml_nmi"], r.summary["pml_ami"]) == pml_quality(x[q], y[q])
    assert (r.summary["eer"], r.summary["pair_auroc"]) == (pairs.eer, pairs.auroc)
    assert r.summary["pcf@0.5"] == pcf(x[q], [0.5])[0.5]
    assert r.config["verification"]["n_positive_pairs"] + r.config["verification"]["n_negative_pairs"] == 150 * 350
    assert "(query, reference)" in r.conventions["verification"]


def test_each_computation_runs_only_when_one_of_its_metrics_is_asked_for():
    x, y = blobs(seed=3)
    only = embedeval.evaluate(x, y, metrics=["pcf@0.5"])
    assert only.config["search"].startswith("none") and only.per_query == {} and only.per_class is None
    assert not {"clustering", "verification"} & set(only.config)
    ranked = embedeval.evaluate(x, y, metrics=["precision@1", "eer"])
    assert ranked.config["search"].startswith("exact") and "clustering" not in ranked.config
    assert list(ranked.per_query) == ["precision@1"] and ranked.set_metrics == ["eer"]


def test_per_query_values_do_not_change_when_set_level_metrics_join():
    x, y = blobs(seed=4)
    alone = embedeval.evaluate(x, y, metrics=["precision@1", "map@r"])
    joined = embedeval.evaluate(x, y, metrics=["nmi", "precision@1", "eer", "map@r"])
    for name in ("precision@1", "map@r"):
        np.testing.assert_array_equal(alone.per_query[name], joined.per_query[name])
    assert joined.per_class.macro == alone.per_class.macro
    assert list(joined.summary) == ["nmi", "precision@1", "eer", "map@r"]  # the requested order


@pytest.mark.parametrize("exponent", [-100, 100])
def test_set_level_metrics_do_not_change_when_inputs_are_scaled_by_a_power_of_two(exponent):
    """Huge or tiny embeddings are brought into float32's range (issue #18) before k-means, the pairs
    and the covariance too, so every set-level number is the one at ordinary magnitudes."""
    x, y = blobs(seed=4)
    plain = embedeval.evaluate(x, y, metrics=SET)
    far = embedeval.evaluate(x.astype(np.float64) * 2.0**exponent, y, metrics=SET)
    assert "scaled" in far.config and "scaled" not in plain.config
    assert far.summary == plain.summary


def test_accumulator_computes_set_level_metrics():
    x, y = blobs(seed=5)
    acc = embedeval.Accumulator()
    for start in range(0, 400, 64):
        acc.update(x[start : start + 64], y[start : start + 64])
    assert acc.compute(metrics=["nmi", "eer"]).summary == embedeval.evaluate(x, y, metrics=["nmi", "eer"]).summary


# -- the result, its tables and statistics -----------------------------------------------------------


@pytest.fixture(scope="module")
def mixed():
    x, y = blobs(seed=6)
    return embedeval.evaluate(x, y, metrics=["precision@1", "nmi", "eer", "map@r", "pcf@0.5"])


def test_result_keeps_set_level_metrics_apart(mixed):
    assert mixed.set_metrics == ["nmi", "eer", "pcf@0.5"]
    assert set(mixed.per_query) == {"precision@1", "map@r"} == set(mixed.per_class.macro)
    assert set(mixed.definitions) == set(mixed.summary)
    flat = mixed.to_dict("val/")
    assert flat["val/nmi"] == mixed.summary["nmi"] and "val/macro/nmi" not in flat and "val/macro/map@r" in flat


def test_select_and_take(mixed):
    picked = mixed.select(["eer", "map@r"])
    assert list(picked.summary) == ["eer", "map@r"] and picked.summary["eer"] == mixed.summary["eer"]
    permuted = mixed.take(np.arange(mixed.n_queries)[::-1])
    assert permuted.summary == pytest.approx(mixed.summary, rel=1e-12)  # the same set: kept
    subset = mixed.take(np.arange(50))
    assert subset.set_metrics == [] and list(subset.summary) == ["precision@1", "map@r"]  # a subset: dropped
    only = embedeval.evaluate(*blobs(seed=6), metrics=["nmi"])
    assert only.select(["nmi"]).summary == only.summary and only.take(np.arange(10)).summary == {}


def test_tables_show_no_macro_and_no_interval_for_set_level_metrics(mixed):
    intervals = bootstrap(mixed, n_bootstrap=200)
    assert set(intervals) == {"precision@1", "map@r"}
    reasons = no_interval(mixed)
    assert set(reasons) == {"nmi", "eer", "pcf@0.5"} and "k-means" in reasons["nmi"] and "pairs" in reasons["eer"]
    text = mixed.table(intervals=intervals)
    row = next(line for line in text.splitlines() if line.startswith("nmi "))
    assert row.split()[1] == f"{mixed.summary['nmi']:.4f}" and row.split()[2] == "-"
    assert "no interval for nmi: one k-means clustering" in text
    assert "queries: 400 given" in text and "set-level metrics: 'nmi', 'eer', 'pcf@0.5'" in text
    assert bootstrap(mixed, by="class", n_bootstrap=50).keys() == intervals.keys()


def test_bootstrap_of_a_result_with_only_set_level_metrics_is_empty():
    only = embedeval.evaluate(*blobs(seed=7), metrics=["nmi", "eer"])
    assert bootstrap(only) == {}
    assert "none searched (set-level metrics only)" in only.table()


def test_compare_refuses_set_level_metrics_and_skips_them_by_default(mixed):
    x, y = blobs(seed=6)
    other = embedeval.evaluate(x + 0.5, y, metrics=["precision@1", "nmi", "eer", "map@r", "pcf@0.5"])
    assert [c.metric for c in compare(mixed, other, n_resamples=100)] == ["precision@1", "map@r"]
    with pytest.raises(ValueError, match=r"\['nmi'\] are set-level .* a paired comparison needs per-query values"):
        compare(mixed, other, metrics=["nmi"], n_resamples=100)


def test_reports_show_set_level_metrics(mixed, tmp_path):
    from embedeval.report import write_report

    path = write_report(tmp_path / "r.md", mixed, inputs={}, intervals=bootstrap(mixed, n_bootstrap=100))
    text = path.read_text()
    assert "| nmi |" in text and "init=k-means++" in text and "**no interval**: nmi: one k-means" in text


# -- bad input: clear errors before any work ------------------------------------------------------


def _no_progress():
    calls = []
    return calls, lambda done, total: calls.append(done)


@pytest.mark.parametrize(
    ("labels", "reference_labels", "message"),
    [
        ([0] * 6, None, r"'eer': pair verification needs negative pairs .*; got one class, every item labelled 0"),
        (list(range(6)), None, r"needs positive pairs .*; got each label on one embedding only \(6 embeddings"),
        ([0, 0, 1, 1, 2, 2], [3, 3, 4], r"needs positive pairs .*; got no query label in 'reference_labels'"),
        ([0, 0, 0, 0, 0, 0], [0, 0, 0], r"needs negative pairs .*every item labelled 0"),
    ],
)
def test_verification_without_negative_or_positive_pairs_is_refused_before_any_work(labels, reference_labels, message):
    x = np.random.default_rng(0).standard_normal((6, 3))
    gallery = {} if reference_labels is None else {"reference": x[:3] + 5, "reference_labels": reference_labels}
    calls, progress = _no_progress()
    with pytest.raises(ValueError, match=message):
        embedeval.evaluate(x, labels, metrics=["precision@1", "eer"], progress=progress, **gallery)
    assert calls == []  # no query block was searched


@pytest.mark.parametrize("name", ["fnmr@fmr=0", "fnmr@fmr=1", "tar@far=1.5", "tar@far=-1e-3", "pcf@0", "pcf@2"])
def test_levels_outside_their_interval_are_refused(name):
    with pytest.raises(ValueError, match=r"must be a number in the interval \(0, 1\]?\)?"):
        embedeval.evaluate(np.eye(4), [0, 0, 1, 1], metrics=[name])


def test_label_sets_and_ignore_rules_are_refused_where_they_have_no_meaning():
    x = np.random.default_rng(0).standard_normal((6, 3))
    with pytest.raises(ValueError, match=r"'metrics' asks for 'nmi', which need one class label per item.*label sets"):
        embedeval.evaluate(x, [{0}, {0, 1}, {1}, {1}, {2}, {2}], metrics=["nmi"])
    with pytest.raises(ValueError, match=r"'eer': pair verification scores every pair .*; got 'ignore_same'"):
        embedeval.evaluate(x, [0, 0, 1, 1, 2, 2], metrics=["eer"], ignore_same=([0] * 6, [0] * 6))
    with pytest.raises(ValueError, match=r"got 'query_in_reference'"):
        embedeval.evaluate(
            x[:3],
            [0, 0, 1],
            reference=x,
            reference_labels=[0, 0, 1, 1, 2, 2],
            metrics=["eer"],
            query_in_reference=[0, 1, 2],
        )
    assert embedeval.evaluate(x, [{0}, {0, 1}, {1}, {1}, {2}, {2}], metrics=["pcf@0.5"]).summary["pcf@0.5"] > 0


def test_kmeans_never_gets_more_clusters_than_points_through_evaluate():
    """evaluate asks for one cluster per query label, so at most one per point; the degenerate
    extremes (one label, a label per item) give NMI = AMI = 1 and a warning that says why."""
    x = np.random.default_rng(0).standard_normal((5, 2))
    for labels in ([7] * 5, list(range(5))):
        with pytest.warns(UserWarning, match="NMI and AMI are 1 by convention"):
            r = embedeval.evaluate(x, labels, metrics=["nmi", "ami"])
        assert r.summary == pytest.approx({"nmi": 1.0, "ami": 1.0}, abs=1e-12)


# -- the command line -----------------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("set")
    x, y = blobs(seed=8)
    np.save(d / "emb.npy", x)
    np.save(d / "labels.npy", y)
    np.save(d / "one.npy", np.zeros(len(y), dtype=int))
    np.save(d / "single.npy", np.arange(len(y)))
    return d, x, y


def test_cli_json_and_csv_hold_set_level_metrics(files):
    d, x, y = files
    names = ["precision_at_1", "nmi", "eer", "tar@far=1e-3", "pcf@0.5"]
    out = run("evaluate", d / "emb.npy", d / "labels.npy", "--metrics", *names, "--format", "json", "--ci", "0.9")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    expected = embedeval.evaluate(x, y, metrics=names)
    assert payload["summary"] == expected.summary
    assert list(payload["intervals"]) == ["precision@1"] and set(payload["no_interval"]) == {
        "nmi",
        "eer",
        "tar@far=0.001",
        "pcf@0.5",
    }
    assert payload["config"]["clustering"]["init"] == "k-means++" and list(payload["macro"]) == ["precision@1"]
    out = run("evaluate", d / "emb.npy", d / "labels.npy", "--metrics", *names, "--format", "csv", "--ci", "0.9")
    rows = [line.split(",") for line in out.stdout.splitlines()]
    assert rows[0] == ["metric", "value", "macro", "low", "high", "level"]
    assert rows[2][0] == "nmi" and rows[2][2:] == ["", "", "", ""] and float(rows[2][1]) == expected.summary["nmi"]
    out = run("evaluate", d / "emb.npy", d / "labels.npy", "--metrics", "nmi", "map@r", "--format", "markdown")
    assert "| nmi |" in out.stdout and " | - | " in out.stdout


@pytest.mark.parametrize(
    ("labels", "metrics", "message"),
    [
        ("one.npy", ["eer"], "pair verification needs negative pairs"),
        ("single.npy", ["pair_auroc"], "pair verification needs positive pairs"),
        ("labels.npy", ["fnmr@fmr=1.5", "pcf@0"], "'fmr' in metric 'fnmr@fmr=1.5' must be a number in the interval"),
    ],
)
def test_cli_bad_set_level_requests_are_one_line_errors(files, labels, metrics, message):
    d, _, _ = files
    out = run("evaluate", d / "emb.npy", d / labels, "--metrics", *metrics)
    assert out.returncode == 2 and message in out.stderr and "Traceback" not in out.stderr
    if len(metrics) == 2:
        assert "'share' in metric 'pcf@0'" in out.stderr  # every bad name, at once


def test_cli_compare_refuses_set_level_metrics(files):
    d, _, _ = files
    out = run("compare", d / "emb.npy", d / "emb.npy", d / "labels.npy", "--metrics", "nmi", "map@r")
    assert out.returncode == 2 and "'nmi' is one number for the whole set" in out.stderr


def test_cli_warns_about_a_trivial_clustering(files):
    d, _, _ = files
    out = run("evaluate", d / "emb.npy", d / "one.npy", "--metrics", "nmi")
    assert out.returncode == 0 and "NMI and AMI are 1 by convention" in out.stderr


def test_no_warning_for_ordinary_requests():
    x, y = blobs(seed=9)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        embedeval.evaluate(x, y, metrics=SET)
