"""trec_eval's measures agree with established tools on seeded random runs and qrels (graded,
negative grades, documents outside the qrels, queries with only non-relevant judgements, tied
scores): pytrec_eval (trec_eval 9 inside) per query and overall to 1e-9, through the Python API
and through the drop-in's own reader with ``-M``, ``-J`` and ``-l 2``; slow plain-Python
references where pytrec_eval lacks a measure (rbp, rbp_resid, unj, ndcg with gains) or trec_eval
10 changed it (iprec_at_recall, 11pt_avg round p R where trec_eval 9 added 0.9); and, where a
trec_eval 10 binary is at hand (runner.TREC_EVAL: ``$TREC_EVAL``, ``$TREC_EVAL_BINARY`` or beside the
checkout), byte-identical ``-q -m all_trec`` output.
"""

from __future__ import annotations

import math
import subprocess
import warnings
from pathlib import Path

import numpy as np
import pytest
from runner import TREC_EVAL, run_cli

import embedeval
from embedeval._forms.trec.drop_in import evaluate_as_trec_eval
from embedeval._metrics.registry import RANKINGS, parse_metrics

pytrec_eval = pytest.importorskip("pytrec_eval")

PYTREC = [
    "bpref",
    "infAP",
    "gm_map",
    "gm_bpref",
    "Rprec_mult",
    "set_P",
    "set_recall",
    "set_relative_P",
    "set_map",
    "set_F",
    "relative_P",
    "num_nonrel_judged_ret",
    "utility",
    "G",
    "binG",
    "ndcg_rel",
    "Rndcg",
    "iprec_at_recall",
    "11pt_avg",
]
_KEYS = {"infap": "infAP", "set_p": "set_P", "set_relative_p": "set_relative_P", "set_f": "set_F", "g": "G"}
_KEYS |= {"bing": "binG", "rndcg": "Rndcg"}
_CUT_KEYS = {"iprec_at_recall": "iprec_at_recall_", "rprec_mult": "Rprec_mult_", "capped_recall": "relative_P_"}


def pytrec_key(name: str) -> str:
    family, _, cut = name.partition("@")
    return _CUT_KEYS[family] + cut if cut else _KEYS.get(family, family)


def random_run(seed: int):
    rng = np.random.default_rng(seed)
    run, qrels = {}, {}
    for q in range(int(rng.integers(4, 25))):
        docs = [f"d{i}" for i in rng.choice(60, size=int(rng.integers(1, 45)), replace=False)]
        scores = rng.integers(0, 5, len(docs)) if seed % 2 else rng.random(len(docs))
        run[f"q{q}"] = {d: float(s) for d, s in zip(docs, scores, strict=True)}
        judged = rng.choice(60, size=int(rng.integers(1, 30)), replace=False)
        top = 1 if q % 5 == 0 else 4  # some queries have only grade-0 and negative judgements
        grades = rng.integers(-1, top, judged.size)
        qrels[f"q{q}"] = {f"d{i}": int(g) for i, g in zip(judged, grades, strict=True)}
    return run, qrels


def trec_order(scores: dict) -> list:
    """Ids by score descending, ties by id descending (trec_eval's order)."""
    return [d for d, _ in sorted(scores.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)]


def v9_agrees(points, n_relevant: int) -> bool:
    """Whether trec_eval 9's cut (p R + 0.9, truncated) is trec_eval 10's (p R rounded)."""
    return all(math.floor(p * n_relevant + 0.9) == math.floor(p * n_relevant + 0.5) for p in points)


def _compare(per_query: dict, query_ids: list, trec: dict, qrels: dict, level: int) -> int:
    """Assert agreement for every value pytrec_eval computes the same way; return how many."""
    compared = 0
    for name, values in per_query.items():
        family = name.partition("@")[0]
        for q, value in zip(query_ids, values, strict=True):
            want = trec[q][pytrec_key(name)]
            n_relevant = sum(g >= level for g in qrels[q].values())
            if family == "iprec_at_recall" and not v9_agrees([float(name.partition("@")[2])], n_relevant):
                continue
            if family == "11pt_avg" and not v9_agrees([i / 10 for i in range(11)], n_relevant):
                continue
            if math.isnan(want):  # trec_eval's 0/0 where -J left a query no document: embedeval says 0
                assert value == 0.0 and family in ("iprec_at_recall", "11pt_avg"), (name, q)
                continue
            if family.startswith("gm_"):
                want = math.exp(want)  # pytrec_eval's per-query gm value is log(max(x, 1e-5))
                value = max(value, 1e-5)
            assert value == pytest.approx(want, abs=1e-9, rel=0), (name, q)
            compared += 1
    return compared


@pytest.mark.parametrize("seed", range(8))
def test_python_api_agrees_with_pytrec_eval_per_query_and_overall(seed):
    run, qrels = random_run(seed)
    trec = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = embedeval.evaluate_rankings(run, qrels, metrics=PYTREC, empty="zero", complete=False)
    query_ids = ours.config["query_ids"]
    assert sorted(query_ids) == sorted(trec)
    assert _compare(ours.per_query, query_ids, trec, qrels, 1) > 30 * len(query_ids)
    for name in ("bpref", "infap", "set_f", "g", "rndcg", "ndcg_rel", "utility"):
        want = np.mean([trec[q][pytrec_key(name)] for q in query_ids])
        assert ours.summary[name] == pytest.approx(want, abs=1e-9, rel=0)
    want_gm = math.exp(np.mean([trec[q]["gm_map"] for q in query_ids]))
    assert ours.summary["gm_map"] == pytest.approx(want_gm, abs=1e-9, rel=0)


def _write(folder: Path, run: dict, qrels: dict) -> tuple[Path, Path]:
    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    run_lines = [f"{q} Q0 {d} {i} {s!r} tag" for q, scores in run.items() for i, (d, s) in enumerate(scores.items())]
    run_path.write_text("\n".join(run_lines) + "\n")
    qrels_path.write_text("\n".join(f"{q} 0 {d} {g}" for q, j in qrels.items() for d, g in j.items()) + "\n")
    return run_path, qrels_path


@pytest.mark.parametrize(
    ("seed", "level", "depth", "judged_only"),
    [(0, 1, None, False), (1, 2, None, False), (2, 1, 7, False), (3, 1, None, True), (5, 2, 12, True)],
)
def test_the_drop_in_reader_agrees_with_pytrec_eval_under_its_flags(tmp_path, seed, level, depth, judged_only):
    """-l, -M (the run cut to its first documents in trec_eval's order) and -J (judged only)."""
    run, qrels = random_run(seed)
    run_path, qrels_path = _write(tmp_path, run, qrels)
    parsed = parse_metrics(PYTREC, RANKINGS)
    result, _ = evaluate_as_trec_eval(run_path, qrels_path, parsed, float(level), False, depth, judged_only)
    cut = {
        q: {d: s for d, s in scores.items() if d in trec_order(scores)[: depth or None]} for q, scores in run.items()
    }
    trec = pytrec_eval.RelevanceEvaluator(
        qrels, set(PYTREC), relevance_level=level, judged_docs_only_flag=judged_only
    ).evaluate(cut)
    query_ids = result.config["query_ids"]
    assert sorted(query_ids) == sorted(q for q in trec if trec[q])
    assert _compare(result.per_query, query_ids, trec, qrels, level) > 25 * len(query_ids)


def reference(scores: dict, judged: dict, level: int, p: float = 0.9) -> dict:
    """Slow, obviously correct: rbp, rbp_resid, unj_5/10/20, iprec_at_recall (trec_eval 10's
    rounding) and ndcg with gains 1=3,2=9 of one query, rank by rank."""
    rel = [judged.get(d, None) for d in trec_order(scores)]
    out = {}
    unjudged = [g is None or g < 0 for g in rel]
    for k in (5, 10, 20):
        out[f"unj@{k}"] = sum(unjudged[:k]) / k
    top = max([g for g in judged.values() if g >= 0], default=0)
    gain = {i: float(i) for i in range(top + 1)}
    scale = max(gain.values()) > 1
    out["rbp"] = (1 - p) * sum(
        (gain[g] / top if scale else gain[g]) * p**i for i, g in enumerate(rel) if g is not None and g >= 0
    )
    residual = p ** len(rel) + (1 - p) * sum(p**i for i, u in enumerate(unjudged) if u)
    out["rbp_resid"] = residual if any(unjudged) else 0.0
    relevant_ranks = [i + 1 for i, g in enumerate(rel) if g is not None and g >= level]
    n_rel = sum(g >= level for g in judged.values())
    for point in (0.0, 0.1, 0.3, 0.5, 0.7, 1.0):
        cut = math.floor(point * n_rel + 0.5)
        precisions = [(j + 1) / r for j, r in enumerate(relevant_ranks)]
        if cut > len(relevant_ranks) or not relevant_ranks:
            value = 0.0
        else:
            value = max(precisions[max(cut, 1) - 1 :])
        out[f"iprec_at_recall@{point}"] = value
    custom = {1: 3.0, 2: 9.0}
    g_of = lambda g: 0.0 if g is None or g < 0 else custom.get(g, float(g))  # noqa: E731
    dcg = sum(g_of(g) / math.log2(i + 2) for i, g in enumerate(rel))
    ideal = sorted((g_of(g) for g in judged.values() if g >= 0), reverse=True)
    best = sum(g / math.log2(i + 2) for i, g in enumerate(ideal) if g > 0)
    out["ndcg_gains@1=3,2=9"] = dcg / best if best > 0 else 0.0
    return out


@pytest.mark.parametrize("seed", range(6))
def test_measures_without_pytrec_eval_agree_with_slow_references(seed):
    run, qrels = random_run(seed)
    names = ["unj", "rbp", "rbp_resid", "iprec_at_recall.0,0.1,0.3,0.5,0.7,1", "ndcg.1=3,2=9"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = embedeval.evaluate_rankings(run, qrels, metrics=names, empty="zero")
    for i, q in enumerate(ours.config["query_ids"]):
        want = reference(run[q], qrels[q], 1)
        for name, value in want.items():
            key = name.replace("@0.0", "@0").replace("@1.0", "@1")
            assert ours.per_query[key][i] == pytest.approx(value, abs=1e-12, rel=0), (name, q)


BINARY = TREC_EVAL  # runner.py: $TREC_EVAL, $TREC_EVAL_BINARY or beside the checkout


@pytest.mark.skipif(not Path(BINARY).is_file(), reason="no trec_eval 10 binary (TREC_EVAL_BINARY)")
@pytest.mark.parametrize("flags", [[], ["-c"], ["-M", "9"], ["-l", "2"], ["-J"], ["-c", "-M", "5", "-l", "2"]])
@pytest.mark.parametrize("seed", range(2))
def test_the_drop_in_prints_what_trec_eval_10_prints(tmp_path, seed, flags):
    run, qrels = random_run(seed + 10)
    if "-c" in flags:  # judged, never ranked: counted under -c (trec_eval 10 stops with an error without it)
        qrels["orphan"] = {"d1": 1, "d2": 0, "d3": -1}
    if "-J" in flags:  # a query -J leaves without documents is trec_eval's 0/0 (-nan), embedeval's 0: see the guide
        for q, scores in run.items():
            first = next(iter(scores))
            qrels[q][first] = max(qrels[q].get(first, 0), 0)
    run_path, qrels_path = _write(tmp_path, run, qrels)
    words = ["-q", "-m", "all_trec", "-m", "relstring.15", "-m", "ndcg.1=3,2=9", "-m", "rbp.p=0.5", *flags]
    want = subprocess.run([BINARY, *words, str(qrels_path), str(run_path)], capture_output=True, text=True, check=True)
    got = run_cli("trec_eval", *words, qrels_path, run_path)
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout


@pytest.mark.parametrize("seed", range(2))
def test_the_rankings_reader_gives_the_same_numbers(tmp_path, seed):
    """``io.evaluate_files`` (the ``rankings`` command) reads every judged grade too."""
    run, qrels = random_run(seed)
    run_path, qrels_path = _write(tmp_path, run, qrels)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = embedeval.io.evaluate_files(run_path, qrels_path, metrics=PYTREC, empty="zero")
    trec = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC)).evaluate(run)
    assert _compare(ours.per_query, ours.config["query_ids"], trec, qrels, 1) > 30 * len(trec)


@pytest.mark.parametrize(("seed", "block"), [(0, 1), (1, 2), (3, 5), (4, 7)])
def test_queries_in_blocks_give_the_values_of_one_pass(tmp_path, monkeypatch, seed, block):
    """The whole listing's measures are evaluated in blocks of queries (bounded memory): any block
    size gives every per-query value of one pass, -J and -M included, and pytrec_eval's."""
    from embedeval._forms import graded

    run, qrels = random_run(seed)
    run_path, qrels_path = _write(tmp_path, run, qrels)
    parsed = parse_metrics([*PYTREC, "rbp", "unj", "map", "ndcg_cut.10"], RANKINGS)
    for depth, judged_only in ((None, False), (6, True)):
        monkeypatch.setattr(graded, "LISTING_QUERY_BLOCK", 10**9)
        whole, _ = evaluate_as_trec_eval(run_path, qrels_path, parsed, 1.0, False, depth, judged_only)
        monkeypatch.setattr(graded, "LISTING_QUERY_BLOCK", block)
        blocked, _ = evaluate_as_trec_eval(run_path, qrels_path, parsed, 1.0, False, depth, judged_only)
        assert whole.n_queries > block
        for name, values in whole.per_query.items():
            np.testing.assert_array_equal(blocked.per_query[name], values, err_msg=name)
