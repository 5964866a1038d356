"""trec_eval compatibility: its measure names as aliases, ``--format trec`` output parsed back,
``--per-query`` in every format, ``--complete``, and the notes on queries in one file only."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from runner import run_cli as command

import embedeval
from embedeval._metrics.trec_names import trec_name

pytrec_eval = pytest.importorskip("pytrec_eval")

ALIASES = [
    "P_10",
    "P.5,10",
    "P",
    "recall_100",
    "recall.5,10",
    "ndcg_cut_10",
    "ndcg_cut.10,20",
    "ndcg_cut",
    "ndcg",
    "map",
    "map_cut_100",
    "map_cut.5,10",
    "map_cut",
    "recip_rank",
    "Rprec",
    "success_10",
    "success.1,5",
    "success",
]


def random_run(seed: int, ties: bool = True):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(int(rng.integers(5, 30))):
        docs = [f"d{i}" for i in rng.choice(80, size=int(rng.integers(1, 40)), replace=False)]
        scores = rng.integers(0, 4, len(docs)) if ties else rng.permutation(len(docs)) + rng.random()
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        judged = rng.choice(80, size=int(rng.integers(1, 25)), replace=False)
        qrels[f"q{q}"] = {f"d{i}": int(g) for i, g in zip(judged, rng.integers(0, 4, judged.size), strict=True)}
    return run, qrels


@pytest.mark.parametrize("alias", ALIASES)
@pytest.mark.parametrize("seed", range(4))
def test_every_trec_eval_name_gives_trec_eval_numbers(seed, alias):
    """Each alias expands to exactly the measures trec_eval computes for it, with its values."""
    run, qrels = random_run(seed)
    trec = pytrec_eval.RelevanceEvaluator(qrels, {alias}).evaluate(run)
    ours = embedeval.evaluate_rankings(run, qrels, metrics=[alias], empty="zero")
    assert sorted(trec_name(m) for m in ours.per_query) == sorted(next(iter(trec.values())))
    assert all("@" in m or m in ("ndcg", "map", "mrr", "r_precision") for m in ours.per_query)  # canonical names
    for m, values in ours.per_query.items():
        want = [trec[q][trec_name(m)] for q in ours.config["query_ids"]]
        np.testing.assert_allclose(values, want, rtol=0, atol=1e-12, err_msg=f"{alias} -> {m}")


def test_names_are_mapped_both_ways():
    assert trec_name("precision@10") == "P_10" and trec_name("recall@100") == "recall_100"
    assert trec_name("ndcg@10") == "ndcg_cut_10" and trec_name("ndcg") == "ndcg"
    assert trec_name("map@100") == "map_cut_100" and trec_name("map") == "map"
    assert trec_name("mrr") == "recip_rank" and trec_name("r_precision") == "Rprec"
    assert trec_name("hit_rate@10") == "success_10"
    for own in ("mrr@10", "map@r", "ndcg_exp@5", "f1@3"):
        assert trec_name(own) == own  # trec_eval has no such measure
    assert trec_name("capped_recall@5") == "relative_P_5" and trec_name("infap") == "infAP"
    assert trec_name("iprec_at_recall@.1") == "iprec_at_recall_0.10"
    assert trec_name("ndcg_gains@1=3,2=9") == "ndcg_1=3,2=9"
    with pytest.raises(ValueError, match="cutoffs in metric 'P_0' must be ints >= 1"):
        embedeval.evaluate_rankings([[1]], [{1}], metrics=["P_0"])
    with pytest.raises(ValueError, match="unknown metric 'P_10' for embeddings"):
        embedeval.evaluate(np.eye(4), [0, 0, 1, 1], metrics=["P_10"])


def write(tmp_path, run, qrels):
    lines = [f"{q} Q0 {d} {i + 1} {s} tag" for q, docs in run.items() for i, (d, s) in enumerate(docs.items())]
    (tmp_path / "run.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "qrels.txt").write_text(
        "".join(f"{q} 0 {d} {g}\n" for q, docs in qrels.items() for d, g in docs.items())
    )
    return tmp_path / "run.txt", tmp_path / "qrels.txt"


TREC_LINE = re.compile(r"^(\S+) *\t(\S+)\t(-?\d+\.\d{4})$")


@pytest.mark.parametrize("seed", range(3))
def test_format_trec_parsed_back_equals_trec_eval(tmp_path, seed):
    """``--format trec --per-query --empty zero``: trec_eval's lines, byte for byte in layout, and
    its values per query and for ``all`` to the 4 printed decimals."""
    run, qrels = random_run(seed)
    run_path, qrels_path = write(tmp_path, run, qrels)
    measures = ["P.5,10", "ndcg_cut_10", "map", "recip_rank", "Rprec", "recall_100", "success_1", "ndcg", "map_cut_5"]
    out = command(
        "rankings", qrels_path, run_path, "--metrics", *measures, "--format", "trec", "--per-query", "--empty", "zero"
    )
    assert out.returncode == 0, out.stderr
    trec = pytrec_eval.RelevanceEvaluator(qrels, set(measures)).evaluate(run)
    seen = {}
    for line in out.stdout.splitlines():
        match = TREC_LINE.match(line)
        assert match, line
        name, query, value = match[1], match[2], float(match[3])
        assert line == f"{name:<22}\t{query}\t{value:6.4f}"  # trec_eval's printf("%-22s\t%s\t%6.4f\n")
        seen[name, query] = value
    names = {n for n, _ in seen}
    assert names == set(next(iter(trec.values())))
    for name in names:
        for query, values in trec.items():
            assert seen[name, query] == pytest.approx(values[name], abs=5e-5 + 1e-12)
        assert seen[name, "all"] == pytest.approx(np.mean([v[name] for v in trec.values()]), abs=5e-5 + 1e-12)
    lines = out.stdout.splitlines()
    assert all(line.split("\t")[1] == "all" for line in lines[-len(names) :])  # averages last, as trec_eval


def test_per_query_in_every_format(tmp_path):
    run_path, qrels_path = write(
        tmp_path,
        {"q1": {"a": 2.0, "b": 1.0}, "q2": {"c": 1.0}, "q3": {"d": 1.0}},
        {"q1": {"b": 1}, "q2": {"c": 2}, "q3": {"d": 0}},
    )
    base = ("rankings", qrels_path, run_path, "--metrics", "mrr", "P_1", "--per-query")
    payload = json.loads(command(*base, "--format", "json").stdout)
    assert payload["per_query"] == {
        "q1": {"mrr": 0.5, "precision@1": 0.0},
        "q2": {"mrr": 1.0, "precision@1": 1.0},
        "q3": {"mrr": None, "precision@1": None},  # no relevant item: skipped
    }
    assert payload["summary"] == {"mrr": 0.75, "precision@1": 0.5}
    csv_lines = command(*base, "--format", "csv").stdout.splitlines()
    assert csv_lines[0] == "query,mrr,precision@1" and csv_lines[1] == "q1,0.5,0.0" and "all,0.75,0.5" in csv_lines
    markdown = command(*base, "--format", "markdown").stdout
    assert "| q2 | 1.0000 | 1.0000 |" in markdown and "| all | 0.7500 | 0.5000 |" in markdown
    table = command(*base).stdout
    assert re.search(r"^q1 +0\.5000 +0\.0000$", table, re.MULTILINE) and "definition" in table
    trec = command(*base, "--format", "trec").stdout.splitlines()
    assert trec == [  # trec_eval's format, trec_eval's conventions: q3 (judged 0 only) scores 0 and counts
        f"{'recip_rank':<22}\tq1\t0.5000",
        f"{'P_1':<22}\tq1\t0.0000",
        f"{'recip_rank':<22}\tq2\t1.0000",
        f"{'P_1':<22}\tq2\t1.0000",
        f"{'recip_rank':<22}\tq3\t0.0000",
        f"{'P_1':<22}\tq3\t0.0000",
        f"{'recip_rank':<22}\tall\t0.5000",
        f"{'P_1':<22}\tall\t0.3333",
    ]


def test_queries_in_one_file_only_are_reported_and_complete_counts_them(tmp_path):
    run_path, qrels_path = write(
        tmp_path, {"q1": {"a": 2.0, "b": 1.0}, "q9": {"a": 1.0}}, {"q1": {"b": 1}, "q2": {"a": 1}, "q3": {"a": 1}}
    )
    out = command("rankings", qrels_path, run_path, "--metrics", "mrr", "--format", "json")
    assert json.loads(out.stdout)["summary"]["mrr"] == 0.5
    assert "1 ranked query has no judgements and is left out" in out.stderr
    assert "2 judged queries have no run and are left out; --complete counts them as 0" in out.stderr
    out = command("rankings", qrels_path, run_path, "--metrics", "mrr", "--format", "json", "--complete")
    assert json.loads(out.stdout)["summary"]["mrr"] == pytest.approx(0.5 / 3)
    assert "2 judged queries have no run and count as empty rankings (--complete)" in out.stderr


def test_complete_in_python():
    run = {"q1": {"a": 2.0, "b": 1.0}, "q9": {"a": 1.0}}
    qrels = {"q1": {"b": 1}, "q2": {"a": 1}}
    with pytest.warns(UserWarning, match="1 ranked query has no judgements and is left out .first: 'q9'"):
        r = embedeval.evaluate_rankings(run, qrels, metrics=["mrr"], complete=True)
    assert r.config["query_ids"] == ["q1", "q2"] and r.per_query["mrr"].tolist() == [0.5, 0.0]
    lists = embedeval.evaluate_rankings({"q1": ["a", "b"]}, qrels, metrics=["mrr"], complete=True)
    assert lists.per_query["mrr"].tolist() == [0.5, 0.0]
    with pytest.raises(ValueError, match="or pass complete=True"):
        embedeval.evaluate_rankings(run, qrels, metrics=["mrr"])
