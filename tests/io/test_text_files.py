"""Text files as people save them (issue 40): a UTF-8 byte-order mark reads as the same file in
every reader; JSON and parquet ids that are neither strings nor integers are refused, naming the
file, line and value; a BEIR qrels without its header row says so; paths are joined, not glued."""

from __future__ import annotations

import json
import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from runner import run_cli

import embedeval
from embedeval.cli._loaders import load_array, load_groups, load_labels, load_pairs
from embedeval.io import read_beir, read_ids, read_qrels, read_run

BOM = b"\xef\xbb\xbf"


def _beir(root: Path, bom: bool, header: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """A small BEIR folder (every file with a byte-order mark if ``bom``) and its embeddings."""
    rng = np.random.default_rng(3)
    (root / "qrels").mkdir(parents=True)
    mark = BOM if bom else b""
    queries = [f"q{i}" for i in range(6)]
    docs = [f"d{i}" for i in range(20)]
    for name, ids in (("queries.jsonl", queries), ("corpus.jsonl", docs)):
        lines = "".join(json.dumps({"_id": i, "text": i}) + "\n" for i in ids)
        (root / name).write_bytes(mark + lines.encode())
    rows = "".join(f"{q}\t{docs[(3 * i + j) % 20]}\t{1 + j % 2}\n" for i, q in enumerate(queries) for j in range(3))
    (root / "qrels" / "test.tsv").write_bytes(
        mark + (("query-id\tcorpus-id\tscore\n" if header else "") + rows).encode()
    )
    return rng.normal(size=(6, 8)), rng.normal(size=(20, 8))


def test_a_beir_folder_with_byte_order_marks_reads_as_without(tmp_path):
    q, c = _beir(tmp_path / "plain", bom=False)
    _beir(tmp_path / "marked", bom=True)
    plain, marked = read_beir(tmp_path / "plain"), read_beir(tmp_path / "marked")
    assert marked == plain and marked.query_ids[0] == "q0" and marked.corpus_ids[0] == "d0"
    a = embedeval.evaluate_retrieval(q, c, plain.qrels, query_ids=plain.query_ids, corpus_ids=plain.corpus_ids)
    b = embedeval.evaluate_retrieval(q, c, marked.qrels, query_ids=marked.query_ids, corpus_ids=marked.corpus_ids)
    assert a.summary == b.summary and a.summary["ndcg@10"] > 0


def test_retrieval_beir_gives_the_same_numbers_with_byte_order_marks(tmp_path):
    q, c = _beir(tmp_path / "plain", bom=False)
    _beir(tmp_path / "marked", bom=True)
    np.save(tmp_path / "q.npy", q)
    np.save(tmp_path / "c.npy", c)
    out = {}
    for name in ("plain", "marked"):
        done = run_cli(
            "retrieval", tmp_path / "q.npy", tmp_path / "c.npy", "--beir", tmp_path / name, "--format", "json"
        )
        assert done.returncode == 0, done.stderr
        assert "warning" not in done.stderr, done.stderr
        out[name] = json.loads(done.stdout)["summary"]
    assert out["marked"] == out["plain"]


def test_every_text_reader_skips_a_byte_order_mark(tmp_path):
    def both(name: str, text: str) -> tuple[Path, Path]:
        (tmp_path / f"plain-{name}").write_bytes(text.encode())
        (tmp_path / f"marked-{name}").write_bytes(BOM + text.encode())
        return tmp_path / f"plain-{name}", tmp_path / f"marked-{name}"

    tables = {
        "t.tsv": "query-id\tcorpus-id\tscore\nq1\td1\t1\n",
        "t.csv": "query-id,corpus-id,score\nq1,d1,1\n",
        "t.jsonl": '{"query-id": "q1", "corpus-id": "d1", "score": 1}\n',
        "trec": "q1 0 d1 1\r\nq1 0 d2 0\r\n",
    }
    for name, text in tables.items():
        plain, marked = both(name, text)
        assert read_qrels(marked) == read_qrels(plain) and "q1" in read_qrels(marked), name
    plain, marked = both("run", "q1 Q0 d1 1 2 t\nq1 Q0 d2 2 1 t\n")
    assert read_run(marked) == read_run(plain) == {"q1": ["d1", "d2"]}
    plain, marked = both("ids.txt", "x\ny\n")
    assert read_ids(marked) == read_ids(plain) == ["x", "y"]
    plain, marked = both("labels.txt", "3\n4\n")
    assert load_labels(marked).tolist() == load_labels(plain).tolist() == [3, 4]
    plain, marked = both("x.csv", "0.5,1\n2,3\n")
    np.testing.assert_array_equal(load_array(marked, "embeddings"), load_array(plain, "embeddings"))
    plain, marked = both("groups.txt", "q1 en\nq2 de\n")
    assert load_groups(marked, by_id=True) == load_groups(plain, by_id=True) == {"q1": "en", "q2": "de"}
    plain, marked = both("pairs.txt", "q1 d1\n")
    assert load_pairs(marked, positions=False) == load_pairs(plain, positions=False) == {"q1": ["d1"]}


REFUSED_IDS = [('{"_id": 1.0}', "1.0"), ('{"_id": true}', "true"), ('{"_id": null}', "null"), ('{"_id": [1]}', "[1]")]


@pytest.mark.parametrize(("line", "shown"), REFUSED_IDS)
def test_json_ids_that_are_not_strings_or_integers_are_refused(tmp_path, line, shown):
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a"}\n{"_id": 7}\n' + line + "\n")
    with pytest.raises(
        ValueError, match=rf"corpus.jsonl:3: '_id' must be a string or an integer; got {re.escape(shown)}$"
    ):
        read_ids(tmp_path / "corpus.jsonl")
    (tmp_path / "corpus.jsonl").write_text('{"_id": "a"}\n{"_id": 7}\n')
    assert read_ids(tmp_path / "corpus.jsonl") == ["a", "7"]  # an integer is its decimal text


@pytest.mark.parametrize(
    ("record", "match"),
    [
        (
            {"query-id": 1.0, "corpus-id": "d", "score": 1},
            r"q.jsonl:2: 'query-id' must be a string or an integer; got 1.0",
        ),
        ({"query-id": "q", "corpus-id": None, "score": 1}, r"q.jsonl:2: 'corpus-id' must be .*; got null"),
        ({"query-id": "q", "corpus-id": False, "score": 1}, r"q.jsonl:2: 'corpus-id' must be .*; got false"),
        ({"query-id": "q", "corpus-id": "d", "score": True}, r"q.jsonl:2: score must be a number; got true"),
    ],
)
def test_json_qrels_refuse_ids_and_grades_of_the_wrong_kind(tmp_path, record, match):
    good = json.dumps({"query-id": 5, "corpus-id": "d0", "score": 2})
    (tmp_path / "q.jsonl").write_text(good + "\n" + json.dumps(record) + "\n")
    with pytest.raises(ValueError, match=match):
        read_qrels(tmp_path / "q.jsonl")
    (tmp_path / "q.jsonl").write_text(good + "\n")
    assert read_qrels(tmp_path / "q.jsonl") == {"5": {"d0": 2.0}}


def test_parquet_ids_of_floats_are_refused(tmp_path):
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"query-id": [1, 2], "corpus-id": [1.0, 2.5], "score": [1, 1]}), tmp_path / "q.parquet")
    with pytest.raises(ValueError, match=r"q.parquet: row 1: 'corpus-id' must be a string or an integer; got 1.0"):
        read_qrels(tmp_path / "q.parquet")
    pq.write_table(pa.table({"query-id": [1, 2], "corpus-id": ["a", "b"], "score": [1, 1]}), tmp_path / "q.parquet")
    assert read_qrels(tmp_path / "q.parquet") == {"1": {"a": 1.0}, "2": {"b": 1.0}}


def test_a_beir_qrels_without_its_header_says_so(tmp_path):
    _beir(tmp_path / "f", bom=False, header=False)
    with pytest.raises(ValueError, match=r"test.tsv:1: a BEIR qrels file begins with the header row .*'q0\\td0\\t1'"):
        read_beir(tmp_path / "f")
    with pytest.raises(ValueError, match=r"test.tsv:1: a line needs 4 fields .* got 3 \(a qrels table.*header row"):
        read_qrels(tmp_path / "f" / "qrels" / "test.tsv")


def test_paths_in_messages_are_joined_not_glued(tmp_path):
    q, c = _beir(tmp_path / "f", bom=False)
    np.save(tmp_path / "q.npy", q[:5])
    np.save(tmp_path / "c.npy", c)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        done = run_cli("retrieval", tmp_path / "q.npy", tmp_path / "c.npy", "--beir", f"{tmp_path / 'f'}/")
    assert done.returncode != 0
    assert f"{tmp_path / 'f' / 'queries.jsonl'} lists 6" in done.stderr and "//" not in done.stderr, done.stderr


def test_an_oml_table_with_a_byte_order_mark_reads_as_without(tmp_path):
    from embedeval.io import read_oml

    text = "label,is_query,is_gallery\n1,1,1\n1,1,1\n2,0,1\n"
    (tmp_path / "plain.csv").write_text(text)
    (tmp_path / "marked.csv").write_bytes(BOM + text.encode())
    plain, marked = read_oml(tmp_path / "plain.csv"), read_oml(tmp_path / "marked.csv")
    assert marked.labels.tolist() == plain.labels.tolist() == [1, 1, 2]


# What str.splitlines ends a line at, and trec_eval and line tools do not: one line each here.
NOT_LINE_ENDS = ["\u2028", "\u2029", "\x85", "\x0c", "\x1c", "\r"]


@pytest.mark.parametrize("inside", NOT_LINE_ENDS)
def test_label_files_end_lines_at_newline_only(tmp_path, inside):
    """A 24-line file held 36 labels where labels held U+2028 (str.splitlines splits there)."""
    from embedeval.cli._loaders import load_label_sets

    labels = [f"a{inside}{i}" for i in range(24)]
    path = tmp_path / "labels.txt"
    path.write_bytes(("\r\n".join(labels[:12]) + "\r\n" + "\n".join(labels[12:]) + "\n").encode())
    assert load_labels(path).tolist() == labels
    assert load_label_sets(path) == [{label} for label in labels]
    assert load_groups(path).tolist() == labels
    assert read_ids(path) == labels
