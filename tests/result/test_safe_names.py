"""Logger-safe names: every metric name of the registry, with parameters, through MLflow's own check."""

from __future__ import annotations

import numpy as np
import pytest

import embedeval
from embedeval._core.names import safe_key, safe_keys
from embedeval._metrics.registry import EMBEDDINGS, FAMILIES, RANKINGS, SET_FAMILIES, parse_metric

validation = pytest.importorskip("mlflow.utils.validation")

CUTS = {"none": [""], "k": ["@1", "@10", "@100", "@1000000000"], "r": ["@r"], "radius": ["@0", "@2", "@64"]}
# trec_eval's parameterised measures: parameters as they are written (reals, lists, grade=gain pairs)
PARAMS = {
    "iprec_at_recall": ["@0.1", "@0", "@.25"],
    "rprec_mult": ["@0.2", "@2"],
    "rprec_mult_avgjg": ["@0.2", "@2"],
    "11pt_avg": ["@.25,.5,.75"],
    "set_f": ["@0.5"],
    "utility": ["@2,-1,0,0"],
    "rbp": ["@p=0.8", "@p=0.5,1=3"],
    "rbp_resid": ["@p=0.8"],
    "ndcg_gains": ["@1=3,2=9,4=4.5"],
    "g": ["@1=3"],
    "ndcg_rel": ["@1=3"],
    "rndcg": ["@2=9"],
}
LEVELS = ["1e-3", "0.001", "1e-05", "0.5", "1", "0.25", "3e-7"]


def _every_name() -> set[str]:
    """The canonical name of every registered family with every kind of parameter, in every form."""
    names = set()
    for family, spec in FAMILIES.items():
        for form in spec.forms:
            for cut in spec.cutoffs:
                suffixes = PARAMS[family] if cut == "param" else CUTS[cut]
                names.update(parse_metric(f"{family}{suffix}", form).name for suffix in suffixes)
    for family, spec in SET_FAMILIES.items():
        suffixes = [""] if spec.parameter is None else [f"@{spec.parameter.prefix}{level}" for level in LEVELS]
        for suffix in suffixes:
            try:
                names.add(parse_metric(f"{family}{suffix}", EMBEDDINGS).name)
            except ValueError:
                pass  # a level the family does not take (pcf's 1 is allowed, the rates' is not)
    return names


def test_the_registry_is_covered():
    names = _every_name()
    assert {name.split("@")[0] for name in names} == set(FAMILIES) | set(SET_FAMILIES)
    assert {"map@r", "tar@far=0.001", "ndcg@10", "pcf@0.5", "fnmr@fmr=1e-5", "precision_radius@2"} <= names
    assert parse_metric("ndcg@10", RANKINGS).name == "ndcg@10"


def test_every_key_passes_mlflow_and_no_two_metrics_share_one():
    names = sorted(_every_name())
    safe = {safe_key(name): name for name in names}
    assert len(safe) == len(names), "two metric names map to one key"
    for prefix in ("", "val/", "test set/", "val/macro/", "val/group/en/"):
        for name in names:
            validation._validate_metric_name(safe_key(prefix + name))  # raises MlflowException if refused


def test_the_documented_examples():
    assert safe_key("map@r") == "map_at_r"
    assert safe_key("tar@far=0.001") == "tar_at_far_0.001"
    assert safe_key("ndcg@10") == "ndcg_at_10"
    assert safe_key("val/recall@10") == "val/recall_at_10"
    assert safe_key("val//group/../x") == "val/_/group/__/x"
    assert safe_key("/val/group//map@r") == "val/group/_/map_at_r"  # a group named ""


@pytest.mark.parametrize("group", [".", "..", "a b", "x:y", "über", "a/b", "", "日本語", "q?&%"])
def test_group_names_become_valid_keys(group):
    rng = np.random.default_rng(0)
    result = embedeval.evaluate(rng.normal(size=(12, 3)), rng.integers(0, 2, 12), groups=[group] * 6 + ["z"] * 6)
    for key in result.to_dict("val/", names="safe"):
        validation._validate_metric_name(key)


def test_two_keys_that_would_become_one_are_refused():
    with pytest.raises(ValueError, match=r"keys 'a@b' and 'a_at_b' both become 'a_at_b'"):
        safe_keys({"a@b": 1.0, "a_at_b": 2.0})
    rng = np.random.default_rng(0)
    result = embedeval.evaluate(rng.normal(size=(12, 3)), rng.integers(0, 2, 12), groups=["a@b"] * 6 + ["a_at_b"] * 6)
    with pytest.raises(ValueError, match="both become"):
        result.to_dict(names="safe")
    with pytest.raises(ValueError, match="'names' must be 'plain' or 'safe'"):
        result.to_dict(names="mlflow")


def test_safe_to_dict_keeps_values_and_order():
    rng = np.random.default_rng(1)
    result = embedeval.evaluate(rng.normal(size=(30, 3)), rng.integers(0, 3, 30), metrics=["map@r", "tar@far=0.01"])
    plain, safe = result.to_dict("val/"), result.to_dict("val/", names="safe")
    assert list(safe) == [safe_key(k) for k in plain] and list(safe.values()) == list(plain.values())
    assert "val/map_at_r" in safe and "val/tar_at_far_0.01" in safe and "val/macro/map_at_r" in safe


def test_names_safe_on_the_command_line(tmp_path):
    import json

    from runner import run_cli

    rng = np.random.default_rng(2)
    np.save(tmp_path / "x.npy", rng.normal(size=(30, 3)).astype(np.float32))
    (tmp_path / "y.txt").write_text("\n".join(str(v) for v in rng.integers(0, 3, 30)))
    args = ["evaluate", tmp_path / "x.npy", tmp_path / "y.txt", "--metrics", "map@r", "tar@far=0.01", "--names", "safe"]
    out = run_cli(*args, "--format", "json", "--ci", "0.9")
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    assert list(payload["summary"]) == ["map_at_r", "tar_at_far_0.01"]
    assert list(payload["intervals"]) == ["map_at_r"] and list(payload["macro"]) == ["map_at_r"]
    assert list(payload["definitions"]) == ["map_at_r", "tar_at_far_0.01"]
