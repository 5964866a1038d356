"""The OML table: read, and evaluated with OML's meaning against a slow full-sort reference.

OML (open-metric-learning, ``calc_mask_to_ignore`` and ``calc_gt_mask``): query rows rank the
gallery rows; a gallery row is relevant when its label equals the query's; a row that is both a
query and a gallery item is left out of its own ranking (by row, not by value); gallery rows of
the query's sequence are left out; metrics are also reported per category of the queries.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from runner import run_cli

import embedeval
from embedeval.io import read_oml


def _write_table(path, seed: int, n: int = 60, sequence: bool = True, category: bool = True):
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 6, n)
    role = rng.integers(0, 3, n)  # 0: query only, 1: gallery only, 2: both
    is_query, is_gallery = role != 1, role != 0
    head = ["label", "is_query", "is_gallery", "path"]
    columns = [labels, is_query, is_gallery, [f"img/{i}.jpg" for i in range(n)]]
    seqs = cats = None
    if sequence:
        seqs = np.array([f"s{v}" if v < 8 else "" for v in rng.integers(0, 10, n)], dtype=object)
        head.append("sequence")
        columns.append(seqs)
    if category:
        cats = np.array(["shoes", "bags", "hats"])[rng.integers(0, 3, n)]
        head.append("category")
        columns.append(cats)
    flags = {True: "True", False: "False"}
    lines = [",".join(head)] + [
        ",".join(flags[v] if isinstance(v, (bool, np.bool_)) else str(v) for v in row)
        for row in zip(*columns, strict=True)
    ]
    path.write_text("\n".join(lines) + "\n")
    # small integer coordinates: exact distances and many ties, broken by gallery position
    embeddings = rng.integers(-2, 3, size=(n, 3)).astype(np.float32)
    embeddings[5] = embeddings[4]  # an identical row: only the row itself is left out of its ranking
    return embeddings, labels, is_query, is_gallery, seqs, cats


def _reference(embeddings, labels, is_query, is_gallery, seqs, k: int):
    """Per query row: (cmc@k, capped_recall@k) by full sort over the gallery rows OML keeps; NaN if R = 0."""
    gallery = np.flatnonzero(is_gallery)
    out = []
    for i in np.flatnonzero(is_query):
        keep = gallery[gallery != i]
        if seqs is not None and seqs[i] != "":
            keep = keep[seqs[keep] != seqs[i]]
        d = ((embeddings[keep].astype(np.float64) - embeddings[i]) ** 2).sum(axis=1)
        order = np.lexsort((np.arange(keep.size), d))  # distance, then gallery position
        relevant = labels[keep[order]] == labels[i]
        n_relevant = int(relevant.sum())
        if n_relevant == 0:
            out.append((np.nan, np.nan))
            continue
        top = relevant[:k]
        out.append((float(top.any()), top.sum() / min(k, n_relevant)))
    return np.array(out)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("sequence", [True, False])
def test_oml_table_evaluates_as_oml_defines(tmp_path, seed, sequence):
    path = tmp_path / "df.csv"
    embeddings, labels, is_query, is_gallery, seqs, cats = _write_table(path, seed, sequence=sequence)
    table = read_oml(path)
    result = embedeval.evaluate(**table.inputs(embeddings), metrics=["cmc@3", "capped_recall@3"])
    expected = _reference(embeddings, labels, is_query, is_gallery, seqs if sequence else None, k=3)
    np.testing.assert_allclose(result.per_query["cmc@3"], expected[:, 0], atol=1e-12)
    np.testing.assert_allclose(result.per_query["capped_recall@3"], expected[:, 1], atol=1e-12)
    # per category of the query rows
    query_cats = cats[is_query]
    for g, group in enumerate(result.per_group.groups.tolist()):
        mine = expected[query_cats == group, 1]
        mine = mine[~np.isnan(mine)]
        want = mine.mean() if mine.size else np.nan
        np.testing.assert_allclose(result.per_group.values["capped_recall@3"][g], want, atol=1e-12)


def test_the_command_line_reads_the_table_beside_the_embeddings(tmp_path):
    embeddings, *_ = _write_table(tmp_path / "df.csv", 1)
    np.save(tmp_path / "x.npy", embeddings)
    out = run_cli(
        "evaluate", tmp_path / "x.npy", "--oml", tmp_path / "df.csv", "--metrics", "cmc@1", "--format", "json"
    )
    assert out.returncode == 0, out.stderr
    result = embedeval.evaluate(**read_oml(tmp_path / "df.csv").inputs(embeddings), metrics=["cmc@1"])
    payload = json.loads(out.stdout)
    assert payload["summary"]["cmc@1"] == result.summary["cmc@1"]
    assert set(payload["per_group"]) == {"bags", "hats", "shoes"}


def test_oml_conflicting_options_are_one_line_each(tmp_path):
    embeddings, *_ = _write_table(tmp_path / "df.csv", 1)
    np.save(tmp_path / "x.npy", embeddings)
    (tmp_path / "y.txt").write_text("\n".join("1" for _ in embeddings))
    out = run_cli(
        "evaluate", tmp_path / "x.npy", tmp_path / "y.txt", "--oml", tmp_path / "df.csv", "--groups", tmp_path / "y.txt"
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 2 and "LABELS or --oml" in lines[0] and "--groups has no place with --oml" in lines[1], lines


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("label,is_query\n1,True\n", r"needs the columns label, is_query, is_gallery; missing \['is_gallery'\]"),
        ("label,is_query,is_gallery\n1,True,maybe\n", r"df.csv:2: is_gallery must be true or false"),
        ("label,is_query,is_gallery\n1,True,False\n2,True,False\n", "no row is a gallery"),
        ("label,is_query,is_gallery\n,True,True\n", r"df.csv:2: label is empty"),
    ],
)
def test_bad_tables_name_the_rule(tmp_path, text, match):
    (tmp_path / "df.csv").write_text(text)
    with pytest.raises(ValueError, match=match):
        read_oml(tmp_path / "df.csv")


def test_split_keeps_the_validation_rows(tmp_path):
    text = "label,is_query,is_gallery,split\n1,1,1,train\n1,1,1,validation\n1,1,1,validation\n2,0,1,validation\n"
    (tmp_path / "df.csv").write_text(text)
    table = read_oml(tmp_path / "df.csv", split="validation")
    assert table.n_rows == 3 and table.labels.tolist() == [1, 1, 2]
    result = embedeval.evaluate(**table.inputs(np.eye(3)), metrics=["precision@1"])
    assert result.summary["precision@1"] == 1.0  # each of the two queries finds the other, not itself
    with pytest.raises(ValueError, match=r"one row per row of .*df.csv \(3\); got shape \(4, 3\)"):
        table.inputs(np.zeros((4, 3)))
