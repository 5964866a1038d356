"""``embedeval compare --qrels QRELS`` / ``--beir DIR`` with systems of query and corpus
embeddings (``--system NAME=QUERIES,CORPUS``, a pair per run for seeds): the numbers are those
of evaluate_retrieval per system then stats.compare_systems; every output format; every problem
one line, all at once, exit 2, before any search."""

from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest
from runner import run_cli as run

import embedeval
from embedeval.stats import compare_systems

N_QUERIES, N_CORPUS, DIM = 30, 70, 12
SYSTEMS = ("bm", "dense", "hybrid", "s1", "s2")


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """Query and corpus embeddings per system (better systems closer to the judged documents),
    a TREC qrels with graded and unjudged documents, id files, and the same as a BEIR folder."""
    d = tmp_path_factory.mktemp("dense")
    rng = np.random.default_rng(3)
    corpus = rng.normal(size=(N_CORPUS, DIM))
    qrels = {}
    for q in range(N_QUERIES):
        docs = rng.choice(N_CORPUS, size=int(rng.integers(1, 6)), replace=False)
        qrels[f"q{q}"] = {f"d{i}": int(rng.integers(0, 3)) for i in docs}
    qrels["q3"]["d999"] = 2  # a judged document outside the corpus
    with (d / "qrels.txt").open("w") as f:
        for q, judged in qrels.items():
            f.writelines(f"{q} 0 {doc} {g}\n" for doc, g in judged.items())
    (d / "qids.txt").write_text("".join(f"q{q}\n" for q in range(N_QUERIES)))
    (d / "cids.txt").write_text("".join(f"d{i}\n" for i in range(N_CORPUS)))
    for name, noise in zip(SYSTEMS, (2.0, 1.0, 0.6, 1.1, 0.9), strict=True):
        target = np.stack(
            [corpus[[int(k[1:]) for k in qrels[f"q{q}"] if k != "d999"]].mean(0) for q in range(N_QUERIES)]
        )
        np.save(d / f"q_{name}.npy", (target + rng.normal(0, noise, target.shape)).astype(np.float32))
        np.save(d / f"c_{name}.npy", (corpus + rng.normal(0, noise / 4, corpus.shape)).astype(np.float32))
    np.save(d / "c_narrow.npy", np.zeros((N_CORPUS, DIM - 2), np.float32))
    np.save(d / "c_short.npy", np.zeros((N_CORPUS - 1, DIM), np.float32))
    beir = d / "beir"
    (beir / "qrels").mkdir(parents=True)
    (beir / "queries.jsonl").write_text(
        "".join(json.dumps({"_id": f"q{q}", "text": ""}) + "\n" for q in range(N_QUERIES))
    )
    (beir / "corpus.jsonl").write_text(
        "".join(json.dumps({"_id": f"d{i}", "text": ""}) + "\n" for i in range(N_CORPUS))
    )
    (beir / "qrels" / "test.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{doc}\t{g}\n" for q, j in qrels.items() for doc, g in j.items())
    )
    return d


def system(d, name, *more):
    files = [d / f"q_{name}.npy", d / f"c_{name}.npy"]
    for other in more:
        files += [d / f"q_{other}.npy", d / f"c_{other}.npy"]
    return f"{name}={','.join(map(str, files))}"


def by_hand(d, names, metrics, **options):
    """evaluate_retrieval per run, as a person would call it."""
    qids = (d / "qids.txt").read_text().split()
    cids = (d / "cids.txt").read_text().split()
    qrels = embedeval.io.read_qrels(d / "qrels.txt")

    def one(name):
        return embedeval.evaluate_retrieval(
            np.load(d / f"q_{name}.npy"),
            np.load(d / f"c_{name}.npy"),
            qrels,
            query_ids=qids,
            corpus_ids=cids,
            metrics=metrics,
            **options,
        )

    return {group[0]: [one(n) for n in group] if len(group) > 1 else one(group[0]) for group in names}


IDS = ["--query-ids", "qids.txt", "--corpus-ids", "cids.txt"]


def test_json_is_evaluate_retrieval_per_system_then_compare_systems(data):
    d = data
    out = run(
        "compare", "--qrels", "qrels.txt", *IDS, "--system", system(d, "bm"), "--system", system(d, "dense"),
        "--system", system(d, "hybrid"), "--metrics", "ndcg@10", "map", "recall@5", "--all-pairs", "--format", "json",
        cwd=d,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    want = compare_systems(by_hand(d, [["bm"], ["dense"], ["hybrid"]], ["ndcg@10", "map", "recall@5"]), pairs="all")
    assert payload["systems"] == ["bm", "dense", "hybrid"]
    for name, values in want.values.items():
        assert payload["values"][name] == pytest.approx(values, rel=1e-12)
    assert len(payload["pairs"]) == len(want.pairs) == 9
    for got, expected in zip(payload["pairs"], want.pairs, strict=True):
        assert (got["a"], got["b"], got["metric"]) == (expected["a"], expected["b"], expected["metric"])
        for key in ("difference", "low", "high", "p_value", "p_adjusted", "p_tukey", "wins", "losses"):
            assert got[key] == pytest.approx(expected[key], rel=1e-12), key


def test_seeds_are_pairs_of_files_and_take_the_two_level_bootstrap(data):
    d = data
    out = run(
        "compare", "--qrels", "qrels.txt", *IDS, "--system", system(d, "bm"), "--system", system(d, "s1", "s2"),
        "--metrics", "ndcg@10", "--format", "json", cwd=d,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    payload = json.loads(out.stdout)
    want = compare_systems(by_hand(d, [["bm"], ["s1", "s2"]], ["ndcg@10"]))
    assert payload["values"]["s1"] == pytest.approx(want.values["s1"], rel=1e-12)
    assert payload["pairs"][0]["p_value"] == pytest.approx(want.pairs[0]["p_value"], rel=1e-12)
    table = run(
        "compare", "--qrels", "qrels.txt", *IDS, "--system", system(d, "bm"), "--system", system(d, "s1", "s2"),
        "--metrics", "ndcg@10", cwd=d,
    )  # fmt: skip
    assert "runs then queries (two levels)" in table.stdout
    assert any(line.split()[:2] == ["s1", "2"] for line in table.stdout.splitlines())


def test_cosine_by_default_as_retrieval_and_distance_is_read(data):
    d = data
    base = ["compare", "--qrels", "qrels.txt", *IDS, "--system", system(d, "bm"), "--system", system(d, "dense")]
    base += ["--metrics", "ndcg@10", "map", "--format", "json"]
    default = json.loads(run(*base, cwd=d).stdout)
    euclidean = json.loads(run(*base, "--distance", "euclidean", cwd=d).stdout)
    for distance, payload in (("cosine", default), ("euclidean", euclidean)):
        want = by_hand(d, [["bm"], ["dense"]], ["ndcg@10", "map"], distance=distance)
        assert payload["values"]["dense"] == pytest.approx(want["dense"].summary, rel=1e-12), distance
    assert default["values"]["dense"] != euclidean["values"]["dense"]


def test_a_beir_folder_gives_the_numbers_of_qrels_with_ids(data):
    d = data
    systems = ["--system", system(d, "bm"), "--system", system(d, "hybrid"), "--metrics", "ndcg@10", "map"]
    beir = run("compare", "--beir", "beir", *systems, "--format", "json", cwd=d)
    trec = run("compare", "--qrels", "qrels.txt", *IDS, *systems, "--format", "json", cwd=d)
    assert beir.returncode == 0 and trec.returncode == 0, beir.stderr + trec.stderr
    assert json.loads(beir.stdout)["values"] == json.loads(trec.stdout)["values"]
    dropped = run("compare", "--beir", "beir", *systems, "--absent-docs", "drop", "--format", "json", cwd=d)
    assert json.loads(dropped.stdout)["values"] != json.loads(beir.stdout)["values"]  # d999 is judged for q3


@pytest.mark.parametrize("fmt", ["table", "csv", "markdown", "latex", "json"])
def test_every_format(data, fmt):
    d = data
    out = run(
        "compare", "--qrels", "qrels.txt", *IDS, "--system", system(d, "bm"), "--system", system(d, "hybrid"),
        "--metrics", "map", "--format", fmt, cwd=d,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    want = compare_systems(by_hand(d, [["bm"], ["hybrid"]], ["map"]))
    value = f"{want.values['hybrid']['map']:.4f}"
    if fmt == "json":
        assert json.loads(out.stdout)["values"]["hybrid"]["map"] == pytest.approx(want.values["hybrid"]["map"])
    elif fmt == "csv":
        rows = list(csv.reader(io.StringIO(out.stdout)))
        assert any("hybrid" in row for row in rows)
    else:
        assert "hybrid" in out.stdout and value in out.stdout
    if fmt == "latex":
        assert "\\begin{tabular}" in out.stdout
    if fmt == "markdown":  # the table, after the line saying over how many queries where not all
        first = out.stdout.lstrip().splitlines()[0]
        assert first.startswith("|") or (first.startswith("over ") and "\n|" in out.stdout)


def test_report_names_each_pair_of_files(data, tmp_path):
    d = data
    report = tmp_path / "r.md"
    out = run(
        "compare", "--qrels", "qrels.txt", *IDS, "--system", system(d, "bm"), "--system", system(d, "hybrid"),
        "--metrics", "map", "--report", report, cwd=d,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    text = report.read_text()
    assert "q_hybrid.npy + " in text and "c_hybrid.npy" in text and "qrels.txt" in text


@pytest.mark.parametrize(
    ("extra", "messages"),
    [
        (["--system", "bm=q_bm.npy"], ["--system bm: an odd number of files (1)", "at least two systems"]),
        (
            ["--system", "bm=q_bm.npy,c_bm.npy", "--system", "x=q_dense.npy,c_dense.npy,q_s1.npy"],
            ["--system x: an odd number of files (3)"],
        ),
        (
            ["--system", "bm=q_bm.npy,c_narrow.npy", "--system", "d=q_dense.npy,c_short.npy"],
            [
                "bm: q_bm.npy and c_narrow.npy: the queries have 12 dimensions and the corpus 10",
                "c_short.npy has 69 rows",
            ],
        ),
        (
            ["--system", "bm=q_bm.npy,c_bm.npy", "--system", "bm=q_dense.npy,c_dense.npy", "--system", "=a,b"],
            ["the name is taken", "--system must be NAME=QUERIES,CORPUS"],
        ),
        (
            ["--system", "bm=q_bm.npy,nope.npy", "--system", "d=q_dense.npy,c_dense.npy", "--metrics", "foo"],
            ["bm CORPUS: no such file: nope.npy", "unknown metric 'foo' for rankings"],
        ),
        (
            ["--system", "bm=q_bm.npy,c_bm.npy", "--system", "d=q_dense.npy,c_dense.npy", "--beir", "beir"],
            [
                "give --qrels FILE or --beir DIR, one of them",
                "--query-ids has no place with --beir",
                "--corpus-ids has no place with --beir",
            ],
        ),
        (
            [
                "q_bm.npy",
                "--system",
                "bm=q_bm.npy,c_bm.npy",
                "--system",
                "d=q_dense.npy,c_dense.npy",
                "--baseline",
                "z",
            ],
            ["no positional files", "--baseline must name a system (bm, d)"],
        ),
    ],
)
def test_bad_input_is_one_line_each_all_at_once(data, extra, messages):
    out = run("compare", "--qrels", "qrels.txt", *IDS, *extra, cwd=data)
    assert out.returncode == 2 and "Traceback" not in out.stderr and "usage:" not in out.stderr
    lines = out.stderr.splitlines()
    assert len(lines) == len(messages), out.stderr
    for line, message in zip(lines, messages, strict=True):
        assert line.startswith("embedeval compare: error: ") and message in line, line


@pytest.mark.parametrize(
    ("args", "messages"),
    [
        (["--beir", "beir", "--system", "a=q_bm.npy,c_bm.npy"], ["at least two systems"]),
        (
            ["--system", "a=q_bm.npy,c_bm.npy", "--qrels", "nope.txt"],
            ["--qrels: no such file: nope.txt", "at least two"],
        ),
        (
            ["--qrels", "qrels.txt", "--split", "dev", "--absent-docs", "drop"],
            ["--split goes with --beir", "--absent-docs"],
        ),
        (
            ["q_bm.npy", "q_dense.npy", "qrels.txt", "--query-ids", "qids.txt"],
            ["--query-ids goes with --qrels or --beir"],
        ),
    ],
)
def test_options_out_of_place(data, args, messages):
    out = run("compare", *args, cwd=data)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    for message in messages:
        assert message in out.stderr, out.stderr


def test_rows_that_do_not_match_the_ids_are_named(data):
    d = data
    (d / "few.txt").write_text("q0\nq1\n")
    out = run(
        "compare", "--qrels", "qrels.txt", "--query-ids", "few.txt", "--system", system(d, "bm"),
        "--system", system(d, "dense"), cwd=d,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stderr.count("has 30 rows but there are 2 query ids") == 2, out.stderr
