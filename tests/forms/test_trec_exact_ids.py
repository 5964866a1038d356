"""One document id, one number, wherever it is read (issue 40): every TREC reader and entry point
gives pytrec_eval's values on generated files whose ids have mixed widths and scripts, read in
batches smaller than a query; a hash that merges distinct ids is caught and the result stays exact;
fields are split where trec_eval splits them."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from trec_cases import BATCH_READERS, make_case, use_reader, write_case

import embedeval.io
from embedeval._forms.mappings import order_by_score
from embedeval._forms.trec import evaluate as _trec
from embedeval._forms.trec.columns import QRELS, RUN, hash_strings
from embedeval._forms.trec.drop_in import evaluate_as_trec_eval
from embedeval._forms.trec.lines import read
from embedeval._metrics.registry import RANKINGS, parse_metrics

pa = pytest.importorskip("pyarrow")
pytrec_eval = pytest.importorskip("pytrec_eval")

TREC = {
    "map": "map",
    "ndcg": "ndcg",
    "precision@5": "P_5",
    "recall@10": "recall_10",
    "mrr": "recip_rank",
    "r_precision": "Rprec",
    "ndcg@10": "ndcg_cut_10",
    "bpref": "bpref",
}
PARSED = parse_metrics(list(TREC), RANKINGS)


def few_buckets(chunk) -> np.ndarray:
    """A hash that merges most ids: 4 numbers for every id there is."""
    return hash_strings(chunk) & 3


def first_byte(chunk) -> np.ndarray:
    """A hash that merges the ids that begin with the same byte (so "4521" and "45" collide);
    ``chunk`` is what either batch reader hashes (numpy bytes strings or a pyarrow array)."""
    ids = [b.decode() for b in chunk.tolist()] if isinstance(chunk, np.ndarray) else chunk.to_pylist()
    return np.array([s.encode()[0] if s else 0 for s in ids], dtype=np.int64)


def _reference(case) -> dict:
    """pytrec_eval's per-query values for the queries ranked and judged."""
    common = {q: docs for q, docs in case.run.items() if q in case.qrels}
    return pytrec_eval.RelevanceEvaluator(case.qrels, set(TREC.values())).evaluate(common)


def _assert_values(result, trec: dict, what: str) -> None:
    queries = result.config["query_ids"]
    assert sorted(queries) == sorted(trec), what
    for name, measure in TREC.items():
        want = [trec[q][measure] for q in queries]
        np.testing.assert_allclose(result.per_query[name], want, rtol=0, atol=1e-12, err_msg=f"{what}: {name}")


def _every_path(run, qrels, case, trec, monkeypatch, batch=None) -> None:
    """Each batch reader (checked to be the one reading), each entry point on it, colliding
    hashes, and the line reader: all give pytrec_eval's values."""
    for reader in BATCH_READERS:
        use_reader(monkeypatch, reader, batch)
        assert not read(run, RUN).exact and not read(qrels, QRELS).exact, f"{reader} did not read the files"
        for hasher in (hash_strings, few_buckets, first_byte):
            result, _ = _trec.evaluate_files(run, qrels, PARSED, 1.0, "zero", False, hasher=hasher)
            _assert_values(result, trec, f"rankings, {reader}, {hasher.__name__}")
            drop_in, _ = evaluate_as_trec_eval(run, qrels, PARSED, 1.0, hasher=hasher)
            _assert_values(drop_in, trec, f"trec_eval, {reader}, {hasher.__name__}")
        _assert_values(embedeval.io.evaluate_files(run, qrels, metrics=list(TREC), empty="zero"), trec, reader)
        assert embedeval.io.read_run(run) == {q: order_by_score(docs) for q, docs in case.run.items()}
        assert embedeval.io.read_qrels(qrels) == {
            q: {d: float(g) for d, g in docs.items()} for q, docs in case.qrels.items()
        }
    use_reader(monkeypatch, "lines")
    assert read(run, RUN).exact
    result, _ = _trec.evaluate_files(run, qrels, PARSED, 1.0, "zero", False)
    _assert_values(result, trec, "rankings, line reader")
    drop_in, _ = evaluate_as_trec_eval(run, qrels, PARSED, 1.0)
    _assert_values(drop_in, trec, "trec_eval, line reader")
    assert embedeval.io.read_run(run) == {q: order_by_score(docs) for q, docs in case.run.items()}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    seed=st.integers(0, 2**32 - 1),
    sep=st.sampled_from([" ", "\t"]),
    crlf=st.booleans(),
    bom=st.booleans(),
    shuffle=st.booleans(),
    batch=st.sampled_from([512, 1024, 4096, 1 << 18]),
)
def test_every_reader_and_entry_point_gives_pytrec_evals_values(monkeypatch, seed, sep, crlf, bom, shuffle, batch):
    """Ids of mixed widths and scripts, 64-bit numbers, unicode spaces inside ids, ties, queries on
    one side only, tabs or spaces, CRLF, a byte-order mark, batches much smaller than the file."""
    case = make_case(np.random.default_rng(seed), shuffle=shuffle)
    trec = _reference(case)
    with tempfile.TemporaryDirectory() as folder, monkeypatch.context() as m:
        run, qrels = write_case(case, Path(folder), sep=sep, crlf=crlf, bom=bom)
        if not trec:
            with pytest.raises(ValueError, match="no query of the run appears in the qrels"):
                _trec.evaluate_files(run, qrels, PARSED, 1.0, "zero", False)
            return
        _every_path(run, qrels, case, trec, m, batch)


def test_the_report_of_issue_40_on_every_path(tmp_path, monkeypatch):
    """'4521' in a batch with a 9-byte id got another number than '4521' in a batch with a 2-byte one."""
    (tmp_path / "qrels").write_text("1 0 4521 1\n1 0 123456789 1\n")
    (tmp_path / "run").write_text("1 Q0 4521 1 9.5 r\n1 Q0 77 2 9.1 r\n")
    result, _ = _trec.evaluate_files(tmp_path / "run", tmp_path / "qrels", PARSED, 1.0, "zero", False)
    assert result.summary["map"] == 0.5
    drop_in, _ = evaluate_as_trec_eval(tmp_path / "run", tmp_path / "qrels", PARSED, 1.0)
    assert drop_in.summary["map"] == 0.5


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(st.text(max_size=30), min_size=1, max_size=40), cut=st.integers(0, 40))
def test_an_ids_hash_depends_on_its_bytes_alone(ids, cut):
    """The same string gets the same number alone, among others, in any slice of an array, and
    as numpy bytes strings of any width (numpy's reader) as in a pyarrow array."""
    ids = [s.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for s in ids]
    together = hash_strings(pa.array(ids, pa.string()))
    alone = np.concatenate([hash_strings(pa.array([s], pa.string())) for s in ids])
    np.testing.assert_array_equal(together, alone)
    sliced = hash_strings(pa.array(["x" * 50, *ids], pa.string()).slice(1 + min(cut, len(ids) - 1)))
    np.testing.assert_array_equal(sliced, together[min(cut, len(ids) - 1) :])
    assert (together >= 0).all()
    without_nul = [s for s in ids if "\x00" not in s]  # numpy's reader holds ids as bytes strings
    as_bytes = np.array([s.encode() for s in without_nul], dtype=np.bytes_) if without_nul else np.zeros(0, "S1")
    np.testing.assert_array_equal(hash_strings(as_bytes), hash_strings(pa.array(without_nul, pa.string())))
    wider = as_bytes.astype(f"S{as_bytes.dtype.itemsize + 9}")  # any width (a fixed one would cut long ids)
    np.testing.assert_array_equal(hash_strings(wider), hash_strings(as_bytes))
    distinct = {s: h for s, h in zip(ids, together.tolist(), strict=True)}
    assert len(set(distinct.values())) == len(distinct)  # 63 bits: no collision among a few


def test_a_planted_collision_in_both_files_is_resolved(tmp_path):
    """Judged '45' and retrieved '4521' share a number under ``first_byte``: the match is checked on
    the strings, and both files are read again with exact codes (and -J, -M on the drop-in)."""
    (tmp_path / "qrels").write_text("q 0 45 1\nq 0 4521 0\nq 0 9 2\n")
    (tmp_path / "run").write_text("q Q0 4521 1 3 r\nq Q0 46 2 2 r\nq Q0 9 3 1 r\nq Q0 45 4 1 r\n")
    want, _ = _trec.evaluate_files(tmp_path / "run", tmp_path / "qrels", PARSED, 1.0, "zero", False)
    got, _ = _trec.evaluate_files(tmp_path / "run", tmp_path / "qrels", PARSED, 1.0, "zero", False, hasher=first_byte)
    for name in TREC:
        assert got.per_query[name].tolist() == want.per_query[name].tolist(), name
    assert want.summary["mrr"] == 1 / 3  # '9' at rank 3 ('45' ties with it, and '9' > '45')
    for options in ({}, {"judged_only": True}, {"max_retrieved": 2}):
        a, _ = evaluate_as_trec_eval(tmp_path / "run", tmp_path / "qrels", PARSED, 1.0, **options)
        b, _ = evaluate_as_trec_eval(tmp_path / "run", tmp_path / "qrels", PARSED, 1.0, hasher=first_byte, **options)
        assert a.summary == b.summary, options


def test_one_file_on_each_reader_compares_numbers_made_by_one_hash(tmp_path):
    """A run pyarrow cannot read (fields split by runs of spaces) beside a qrels it reads: the line
    reader's ids are hashed with the same function before the files meet."""
    (tmp_path / "qrels").write_text("q 0 4521 1\nq 0 123456789 1\n")
    (tmp_path / "run").write_text("q  Q0  4521  1  9.5  r\nq  Q0  77  2  9.1  r\n")
    for hasher in (hash_strings, first_byte):
        result, _ = _trec.evaluate_files(
            tmp_path / "run", tmp_path / "qrels", PARSED, 1.0, "zero", False, hasher=hasher
        )
        assert result.summary["map"] == 0.5


SPLITS = [
    # (a run line, its document id and score for trec_eval): it splits at ASCII whitespace only
    ("q Q0 a\u00a0b 1 2 t", "a\u00a0b", 2.0),  # a no-break space is data
    ("q Q0 a\u3000b 1 2 t", "a\u3000b", 2.0),
    ("q Q0 a\u2028b 1 2 t", "a\u2028b", 2.0),
    ("q Q0 a\u0085b 1 2 t", "a\u0085b", 2.0),
    ("q Q0 a\x0bb 1 2 t", "a", 1.0),  # a vertical tab splits: 'b' is the rank, '1' the score
    ("q Q0 a\x0cb 1 2 t", "a", 1.0),
    ("q Q0 a\tb 1 2 t", "a", 1.0),  # a tab in a file of spaces
    ("q Q0 a 1 2 t\rx y", "a", 2.0),  # a CR that ends no line is a blank inside it
]


@pytest.mark.parametrize(("line", "doc", "score"), SPLITS)
@pytest.mark.parametrize("reader", [*BATCH_READERS, "exact"])
def test_fields_split_where_trec_eval_splits_them(tmp_path, monkeypatch, line, doc, score, reader):
    (tmp_path / "run").write_bytes((line + "\nq Q0 z 2 0.5 t\n").encode())
    if reader != "exact":
        use_reader(monkeypatch, reader)
    columns = read(tmp_path / "run", RUN, exact=reader == "exact")
    assert (columns.queries, columns.every_string(), columns.value.tolist()) == (["q"], [doc, "z"], [score, 0.5])


@pytest.mark.parametrize("reader", [*BATCH_READERS, "exact"])
def test_a_byte_order_mark_and_crlf_read_as_the_plain_file(tmp_path, monkeypatch, reader):
    exact = reader == "exact"
    if not exact:
        use_reader(monkeypatch, reader)
    plain = "q1 Q0 a 1 2 t\nq1 Q0 b 2 1 t\n"
    (tmp_path / "plain").write_text(plain)
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbf" + plain.replace("\n", "\r\n").encode())
    as_tuple = lambda c: (c.queries, c.every_string(), c.value.tolist())  # noqa: E731
    assert as_tuple(read(tmp_path / "bom", RUN, exact=exact)) == as_tuple(read(tmp_path / "plain", RUN))
    assert as_tuple(read(tmp_path / "bom", RUN, exact=exact))[0] == ["q1"]


def test_bytes_that_are_not_utf8_are_named_with_their_line(tmp_path, monkeypatch):
    (tmp_path / "run").write_bytes(b"q Q0 a 1 2 t\nq Q0 b\xff 2 1 t\n")
    with pytest.raises(ValueError, match=r"run:2: a document id must be UTF-8 text; got the bytes b'b\\xff'"):
        read(tmp_path / "run", RUN)


def _lines(text: str) -> dict:
    """{(measure, query): value} of trec_eval's output (split at LF only: ids may hold U+2028)."""
    rows = [line.split("\t") for line in text.split("\n") if line]
    return {(name.strip(), q): value for name, q, value in rows}


@pytest.mark.parametrize("reader", ["numpy", "pyarrow", "lines"])
@pytest.mark.parametrize("seed", range(4))
def test_the_commands_give_pytrec_evals_values(tmp_path, capsys, monkeypatch, seed, reader):
    """``embedeval trec_eval``, ``rankings --format trec`` and ``compare`` on generated files."""
    from embedeval.cli import main

    rng = np.random.default_rng(100 + seed)
    case = make_case(rng, orphans=False)
    while not _reference(case):
        case = make_case(rng, orphans=False)
    trec = _reference(case)
    run, qrels = write_case(case, tmp_path, sep="\t" if seed % 2 else " ", bom=seed == 2)
    use_reader(monkeypatch, reader, 512)
    measures = sorted(TREC.values())
    want = {(m, q): f"{trec[q][m]:.4f}" for q in trec for m in measures}
    want |= {(m, "all"): f"{np.mean([trec[q][m] for q in trec]):.4f}" for m in measures}
    flags = [f"-m{m.replace('_5', '.5').replace('_10', '.10')}" for m in measures]  # trec_eval's -m P.5
    assert main(["trec_eval", "-q", *flags, str(qrels), str(run)]) == 0
    assert _lines(capsys.readouterr().out) == want
    argv = ["rankings", str(qrels), str(run), "--format", "trec", "--per-query", "--metrics", *measures]
    assert main(argv) == 0
    assert _lines(capsys.readouterr().out) == want
    (tmp_path / "copy").write_bytes(run.read_bytes())
    argv = ["compare", str(qrels), str(run), str(tmp_path / "copy"), "--format", "json", "--no-ci", "--metrics"]
    assert main([*argv, *TREC]) == 0
    values = json.loads(capsys.readouterr().out)["values"]
    relevant = [q for q in trec if any(g > 0 for g in case.qrels[q].values())]  # compare skips the others
    for name, measure in TREC.items():
        mean = np.mean([trec[q][measure] for q in relevant])
        assert values["run"][name] == values["copy"][name] == pytest.approx(mean, abs=1e-12), name
