"""Tables of scores from files: wide and long CSV/TSV, JSON, per-query CSV, and MTEB result folders
(by hand-written files of MTEB's documented schema, and, where mteb is installed, by files its
own ``TaskResult`` writes, read back to the score its ``get_score`` gives)."""

from __future__ import annotations

import json

import pytest

from embedeval._stats.across_files import read_per_query_table, read_score_table
from embedeval.stats import read_mteb_results


def test_wide_csv_long_csv_tsv_and_json_read_alike(tmp_path):
    want = {"scifact": {"bm25": 0.665, "e5": 0.72}, "fiqa": {"bm25": 0.236, "e5": 0.39}}
    (tmp_path / "w.csv").write_text("\ufeffdataset,bm25,e5\r\nscifact,0.665,0.72\r\nfiqa,0.236,0.39\r\n")
    (tmp_path / "l.csv").write_text(
        "dataset,system,score\nscifact,bm25,0.665\nscifact,e5,0.72\nfiqa,bm25,0.236\nfiqa,e5,0.39\n"
    )
    (tmp_path / "w.tsv").write_text("dataset\tbm25\te5\nscifact\t0.665\t0.72\n\nfiqa\t0.236\t0.39\n")
    (tmp_path / "s.json").write_text(json.dumps(want))
    for name in ("w.csv", "l.csv", "w.tsv", "s.json"):
        assert read_score_table(tmp_path / name) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("dataset,a,b\nx,0.1\n", "line 2: expected 3 fields"),
        ("dataset,a,b\nx,0.1,high\n", "line 2: a score must be a number; got 'high'"),
        ("dataset,system,score\nx,a,0.1\nx,a,0.2\n", "line 3: system 'a' appears twice for dataset 'x'"),
        ("dataset,a\n", "needs a head row and a row per dataset"),
    ],
)
def test_bad_tables_name_the_file_the_line_and_the_rule(tmp_path, text, message):
    path = tmp_path / "bad.csv"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_score_table(path)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"x": {"a": 0.1, "b": 0.2}, "x": {"a": 0.3, "b": 0.4}}', "dataset 'x' appears twice"),
        ('{"x": {"a": 0.1, "a": 0.2}}', "system 'a' appears twice for dataset 'x'"),
        ('{"x": {"a": "0.5", "b": 0.2}}', r"\(x, a\): a score must be a JSON number; got the string '0.5'"),
        ('{"x": {"a": true, "b": 0.2}}', r"\(x, a\): a score must be a JSON number; got true"),
        ('{"x": {"a": null, "b": 0.2}}', r"\(x, a\): a score must be a JSON number; got null"),
        ('{"x": [0.1, 0.2]}', "JSON scores must be"),
        ("[1, 2]", "JSON scores must be"),
    ],
)
def test_bad_json_scores_are_refused_like_the_csv_reader_refuses_them(tmp_path, text, message):
    """A dataset or system given twice and a score that is not a JSON number (a string "0.5", a
    boolean, null) are refused, naming the file and the entry; they were kept (the last) or read."""
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_score_table(path)


def test_per_query_table_reads_and_refuses_another_head(tmp_path):
    path = tmp_path / "pq.csv"
    path.write_text("dataset,system,query,value\nx,a,q1,1\nx,a,q2,0\nx,b,q2,1\nx,b,q1,0.5\n")
    assert read_per_query_table(path) == {"x": {"a": {"q1": 1.0, "q2": 0.0}, "b": {"q2": 1.0, "q1": 0.5}}}
    path.write_text("dataset,system,value\nx,a,1\n")
    with pytest.raises(ValueError, match="head row dataset,system,query,value"):
        read_per_query_table(path)


def _task(name: str, scores: dict) -> dict:
    """A result file in MTEB's schema: one entry per hf_subset of each split."""
    return {
        "dataset_revision": "abc",
        "task_name": name,
        "mteb_version": "2.0.0",
        "evaluation_time": 1.5,
        "kg_co2_emissions": None,
        "scores": {
            split: [{"main_score": v, "hf_subset": sub, "languages": ["eng-Latn"]} for sub, v in subsets.items()]
            for split, subsets in scores.items()
        },
    }


def _write(root, model_folder, meta_name, tasks):
    folder = root / model_folder / "rev1"
    folder.mkdir(parents=True)
    if meta_name:
        (folder / "model_meta.json").write_text(json.dumps({"name": meta_name, "revision": "rev1"}))
    for name, scores in tasks.items():
        (folder / f"{name}.json").write_text(json.dumps(_task(name, scores)))


def test_mteb_folder_reads_main_scores_averaged_over_subsets_of_the_test_split(tmp_path):
    _write(
        tmp_path,
        "intfloat__e5-small",
        "intfloat/e5-small",
        {
            "SciFact": {"test": {"default": 0.70}, "train": {"default": 0.99}},
            "STS17": {"test": {"en-en": 0.8, "en-de": 0.6}},
        },
    )
    _write(
        tmp_path,
        "sentence-transformers__all-MiniLM-L6-v2",
        None,
        {
            "SciFact": {"test": {"default": 0.64}},
            "STS17": {"test": {"en-en": 0.7, "en-de": 0.5}},
        },
    )
    (tmp_path / "notes.json").write_text("{}")  # not a result file: skipped
    table = read_mteb_results(tmp_path)
    assert table == {
        "SciFact": {"intfloat/e5-small": 0.70, "sentence-transformers/all-MiniLM-L6-v2": 0.64},
        "STS17": {"intfloat/e5-small": pytest.approx(0.7), "sentence-transformers/all-MiniLM-L6-v2": 0.6},
    }
    assert read_mteb_results(tmp_path, split="test")["SciFact"]["intfloat/e5-small"] == 0.70


def test_mteb_split_missing_names_the_file_and_its_splits(tmp_path):
    _write(tmp_path, "m", None, {"T": {"dev": {"default": 0.5}, "train": {"default": 0.4}}})
    with pytest.raises(ValueError, match=r"split None not in its scores; it has \['dev', 'train'\]"):
        read_mteb_results(tmp_path)
    assert read_mteb_results(tmp_path, split="dev") == {"T": {"m": 0.5}}


def test_files_written_by_mteb_read_back_to_its_own_get_score(tmp_path):
    """MTEB's TaskResult writes the file; its get_score(splits=["test"]) is the score read."""
    results = pytest.importorskip("mteb.results")
    scores = {
        "test": [
            {"main_score": 0.5, "hf_subset": "en-de", "languages": ["eng-Latn", "deu-Latn"]},
            {"main_score": 0.6, "hf_subset": "en-fr", "languages": ["eng-Latn", "fra-Latn"]},
        ]
    }
    task = results.TaskResult(
        dataset_revision="1.0", task_name="sample_task", mteb_version="2.0.0", evaluation_time=1.0, scores=scores
    )
    folder = tmp_path / "org__model" / "rev"
    folder.mkdir(parents=True)
    task.to_disk(folder / "sample_task.json")
    assert read_mteb_results(tmp_path) == {"sample_task": {"org/model": pytest.approx(task.get_score(splits=["test"]))}}


def test_tables_end_rows_at_newlines_only(tmp_path):
    """A U+2028 or form feed inside a name stays in it (str.splitlines cut the row there)."""
    wide = tmp_path / "scores.csv"
    wide.write_text("dataset,a\u2028b,c\fd\nx,0.1,0.2\r\ny,0.3,0.4\n", encoding="utf-8")
    assert read_score_table(wide) == {"x": {"a\u2028b": 0.1, "c\fd": 0.2}, "y": {"a\u2028b": 0.3, "c\fd": 0.4}}
