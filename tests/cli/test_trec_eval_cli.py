"""``embedeval trec_eval``: trec_eval 10's command line, conventions and output bytes.

Values are checked against pytrec_eval (trec_eval inside) on seeded random files, and the
layout (order of queries and measures, -c, -M, -J, -l, -n, -Z, the run tag) against text
written here by hand from trec_eval's rules."""

from __future__ import annotations

import json

import numpy as np
import pytest

from embedeval.cli import main

pytrec_eval = pytest.importorskip("pytrec_eval")


def _run(capsys, *argv) -> tuple[int, str, str]:
    status = main(["trec_eval", *map(str, argv)])
    out = capsys.readouterr()
    return status, out.out, out.err


def _files(tmp_path, seed: int):
    """Random run and qrels files (graded, negative grades, unjudged documents, ties, a query
    with only grade-0 judgements, a judged query without a run, a run query without judgements)."""
    rng = np.random.default_rng(seed)
    run, qrels, run_lines, qrels_lines = {}, {}, [], []
    for q in range(1, 9):
        qid = f"q{q:02d}"
        docs = rng.permutation(40)[: rng.integers(1, 25)]
        if q != 8:  # q08: judged, no run
            run[qid] = {}
            for i, d in enumerate(docs):
                score = float(rng.integers(0, 6))  # many ties: trec_eval's rule by id decides
                run[qid][f"d{d}"] = score
                run_lines.append(f"{qid} Q0 d{d} {i + 1} {score} tag{seed}")
        judged = rng.permutation(40)[: rng.integers(1, 15)]
        grades = [0] * len(judged) if q == 3 else rng.integers(-1, 4, size=len(judged)).tolist()
        qrels[qid] = {f"d{d}": int(g) for d, g in zip(judged, grades, strict=True)}
        qrels_lines += [f"{qid} 0 d{d} {g}" for d, g in zip(judged, grades, strict=True)]
    run_lines.append(f"q99 Q0 dx 1 1.0 tag{seed}")  # ranked, never judged
    rng.shuffle(run_lines)
    (tmp_path / "run").write_text("\n".join(run_lines) + "\n")
    (tmp_path / "qrels").write_text("\n".join(qrels_lines) + "\n")
    return run, qrels


MEASURES = ["num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "P_5", "P_10", "recall_10", "ndcg"]
MEASURES += ["ndcg_cut_10", "map_cut_10", "success_5"]


def _top(ranking: dict, m: int | None) -> dict:
    """A query's first ``m`` documents in trec_eval's order (score descending, id descending)."""
    ordered = sorted(ranking.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    return dict(ordered[:m] if m is not None else ordered)


@pytest.mark.parametrize(
    ("level", "cut", "judged_only"), [(1, None, False), (2, None, False), (1, 7, False), (1, None, True), (2, 5, True)]
)
@pytest.mark.parametrize("seed", range(5))
def test_per_query_values_and_summary_are_pytrec_evals(tmp_path, capsys, seed, level, cut, judged_only):
    run, qrels = _files(tmp_path, seed)
    flags = ["-q", f"-l{level}", "-m", "num_ret", "-mnum_rel", "-m", "num_rel_ret", "-m", "map", "-m", "Rprec"]
    flags += ["-m", "recip_rank", "-m", "P.10,5", "-m", "recall.10", "-m", "ndcg", "-m", "ndcg_cut.10"]
    flags += ["-m", "map_cut.10", "-m", "success.5"]
    flags += ([f"-M{cut}"] if cut else []) + (["-J"] if judged_only else [])
    status, out, _ = _run(capsys, *flags, tmp_path / "qrels", tmp_path / "run")
    assert status == 0
    common = {q: _top(run[q], cut) for q in run if q in qrels}  # -M: the first documents, then -J
    names = {"P_5", "P_10", "recall_10", "ndcg_cut_10", "map_cut_10", "success_5"}
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: qrels[q] for q in common},
        {"num_ret", "num_rel", "num_rel_ret", "map", "Rprec", "recip_rank", "ndcg"} | names,
        relevance_level=level,
        judged_docs_only_flag=judged_only,
    )
    reference = evaluator.evaluate(common)
    expected = []
    for q in sorted(common):
        for m in MEASURES:
            v = reference[q][m]
            expected.append(f"{m:<22}\t{q}\t{int(v)}" if m.startswith("num") else f"{m:<22}\t{q}\t{v:6.4f}")
    for m in MEASURES:
        values = [reference[q][m] for q in common]
        v = sum(values) if m.startswith("num") else sum(values) / len(values)
        expected.append(f"{m:<22}\tall\t{int(v)}" if m.startswith("num") else f"{m:<22}\tall\t{v:6.4f}")
    assert out == "\n".join(expected) + "\n"


def test_flags_by_hand(tmp_path, capsys):
    (tmp_path / "qrels").write_text("b 0 x 1\nb 0 y 0\na 0 z 2\na 0 w 1\nc 0 v 1\n")
    (tmp_path / "run").write_text("b Q0 y 1 3 r1\nb Q0 u 2 2 r1\nb Q0 x 3 1 r1\na Q0 w 1 1 r2\na Q0 z 2 1 r2 junk\n")
    status, out, _ = _run(
        capsys,
        "-q",
        "-c",
        "-m",
        "num_q",
        "-m",
        "runid",
        "-m",
        "map",
        "-m",
        "num_ret",
        tmp_path / "qrels",
        tmp_path / "run",
    )
    assert status == 0
    assert out == (  # queries in id order, c (no run) last by id; ties by id descending: z before w
        "num_ret               \ta\t2\nmap                   \ta\t1.0000\n"
        "num_ret               \tb\t3\nmap                   \tb\t0.3333\n"
        "num_ret               \tc\t0\nmap                   \tc\t0.0000\n"
        "runid                 \tall\tr2\nnum_q                 \tall\t3\n"
        "num_ret               \tall\t5\nmap                   \tall\t0.4444\n"
    )
    _, out, _ = _run(capsys, "-q", "-n", "-M2", "-m", "P.2", tmp_path / "qrels", tmp_path / "run")
    assert out == "P_2                   \ta\t1.0000\nP_2                   \tb\t0.0000\n"
    _, out, _ = _run(capsys, "-J", "-m", "P.2", "-m", "num_ret", tmp_path / "qrels", tmp_path / "run")
    assert out == "num_ret               \tall\t4\nP_2                   \tall\t0.7500\n"  # u (unjudged) removed
    _, out, _ = _run(capsys, "-l2", "-m", "num_rel", "-mmap", tmp_path / "qrels", tmp_path / "run")
    assert out == "num_rel               \tall\t1\nmap                   \tall\t0.5000\n"  # b has none: 0, counted


def test_zscores(tmp_path, capsys):
    (tmp_path / "qrels").write_text("a 0 x 1\nb 0 y 1\n")
    (tmp_path / "run").write_text("a Q0 x 1 2 r\nb Q0 z 1 2 r\nb Q0 y 2 1 r\n")
    (tmp_path / "z").write_text("a map 0.5 0.25\nb map 0.5 0\n")
    _, out, _ = _run(capsys, "-q", "-m", "map", "-Z", tmp_path / "z", tmp_path / "qrels", tmp_path / "run")
    assert (
        out == "Zmap                   \ta\t2.0000\nZmap                   \tb\t0.0000\n"
        "Zmap                   \tall\t1.0000\n"
    )
    (tmp_path / "z").write_text("a map 0.5 0.25\n")
    _, out, _ = _run(capsys, "-q", "-m", "map", "-Z", tmp_path / "z", tmp_path / "qrels", tmp_path / "run")
    assert "Zmap                   \tb\t-1000000.0000\n" in out
    (tmp_path / "z").write_bytes(b"\xef\xbb\xbfa map 0.5 0.25\r\nb map 0.5 0\r\n")  # a byte-order mark, CRLF
    _, out, _ = _run(capsys, "-q", "-m", "map", "-Z", tmp_path / "z", tmp_path / "qrels", tmp_path / "run")
    assert out.startswith("Zmap                   \ta\t2.0000\n")


def test_every_problem_at_once_one_line_each_exit_2(tmp_path, capsys):
    status, out, err = _run(capsys, "-x", "-m", "nosuch", "-l", "two", "-R", "sgml", "missing_qrels", "missing_run")
    assert status == 2 and out == ""
    lines = err.splitlines()
    assert all(line.startswith("embedeval trec_eval: error: ") for line in lines)
    for part in (
        "invalid option -- 'x'",
        "-l: must be an integer",
        "-R sgml: the rel_info format must be one of",
        "no such file: missing_qrels",
        "'nosuch'",
    ):
        assert any(part in line for line in lines), part
    assert "Traceback" not in err and "usage" not in err


def test_the_silent_difference_is_gone(tmp_path, capsys):
    """rankings --format trec: a query judged only 0 counts as 0 (trec_eval), not skipped."""
    (tmp_path / "qrels").write_text("q1 0 a 1\nq2 0 b 0\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2 r\nq2 Q0 b 1 2 r\n")
    assert (
        main(["rankings", str(tmp_path / "qrels"), str(tmp_path / "run"), "--metrics", "map", "--format", "trec"]) == 0
    )
    assert capsys.readouterr().out.strip() == "map                   \tall\t0.5000"
    _, out, _ = _run(capsys, "-m", "map", tmp_path / "qrels", tmp_path / "run")
    assert out == "map                   \tall\t0.5000\n"


def test_run_on_stdin_help_and_the_alias(tmp_path, capsys, monkeypatch):
    import io

    (tmp_path / "qrels").write_text("a 0 x 1\n")
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(b"a Q0 y 1 2 r\na Q0 x 2 1 r\n")))
    status, out, _ = _run(capsys, "-m", "recip_rank", tmp_path / "qrels", "-")
    assert status == 0 and out == "recip_rank            \tall\t0.5000\n"
    assert main(["trec-eval", "-h"]) == 0
    assert capsys.readouterr().out.startswith("usage: embedeval trec_eval")


def test_rankings_complete_lists_queries_in_id_order(tmp_path, capsys):
    (tmp_path / "qrels").write_text("q2 0 a 1\nq1 0 b 1\nq3 0 c 1\n")
    (tmp_path / "run").write_text("q3 Q0 c 1 2 r\nq1 Q0 b 1 2 r\n")  # q2: judged, no run
    args = ["rankings", str(tmp_path / "qrels"), str(tmp_path / "run"), "--metrics", "map", "--per-query"]
    assert main([*args, "--complete", "--format", "csv", "--no-ci"]) == 0
    rows = [line.split(",")[0] for line in capsys.readouterr().out.splitlines()]
    assert rows == ["query", "q1", "q2", "q3", "all"]
    assert main([*args, "--complete", "--format", "trec"]) == 0
    assert [line.split("\t")[1] for line in capsys.readouterr().out.splitlines()] == ["q1", "q2", "q3", "all"]


@pytest.mark.parametrize("run", ["", "# only a comment\n\n"])
@pytest.mark.parametrize("rel_format", ["qrels", "prefs"])
def test_a_run_without_lines_is_named_with_c_not_a_traceback(tmp_path, capsys, run, rel_format):
    """-c with an empty run (or comments only) raised IndexError (qrels) or printed zeros (prefs)."""
    (tmp_path / "run").write_text(run)
    (tmp_path / "judged").write_text("q1 0 a 1\n" if rel_format == "qrels" else "q1 u s a 1\nq1 u s b 0\n")
    measures = ["-m", "all_prefs"] if rel_format == "prefs" else []
    status, out, err = _run(capsys, "-c", "-R", rel_format, *measures, tmp_path / "judged", tmp_path / "run")
    assert status == 2 and out == ""
    assert err.splitlines() == [
        f"embedeval trec_eval: error: {tmp_path / 'run'}: the run is empty: it holds no ranked line "
        "(an empty file, or only blank lines and comments)"
    ]


@pytest.mark.parametrize(("cut", "judged_only"), [(7, False), (None, True), (5, True)])
@pytest.mark.parametrize("seed", range(3))
def test_rankings_max_retrieved_and_judged_only_are_trec_evals_m_and_j(tmp_path, capsys, seed, cut, judged_only):
    """rankings had no -M / -J; its values are pytrec_eval's with the same flags."""
    run, qrels = _files(tmp_path, seed)
    argv = ["rankings", str(tmp_path / "qrels"), str(tmp_path / "run"), "--per-query", "--format", "json", "--no-ci"]
    argv += ["--metrics", "map", "P@5", "ndcg@10", "recall@10", "mrr", "--empty", "zero"]
    argv += ([f"--max-retrieved={cut}"] if cut else []) + (["--judged-only"] if judged_only else [])
    assert main(argv) == 0
    got = json.loads(capsys.readouterr().out)["per_query"]
    common = {q: _top(run[q], cut) for q in run if q in qrels}
    names = {"map": "map", "P_5": "precision@5", "ndcg_cut_10": "ndcg@10", "recall_10": "recall@10"}
    names["recip_rank"] = "mrr"
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: qrels[q] for q in common}, set(names), judged_docs_only_flag=judged_only
    )
    reference = evaluator.evaluate(common)
    assert set(got) == set(common)
    for q, values in reference.items():
        for trec, ours in names.items():
            assert got[q][ours] == pytest.approx(values[trec], abs=1e-12), (q, trec)


def test_rankings_takes_qrels_first_and_reads_the_old_order_with_a_warning(tmp_path, capsys):
    """rankings took RUN QRELS, the opposite of trec_eval QRELS RUN; a run where the qrels go said
    only 'a line needs 4 fields'."""
    _files(tmp_path, 0)
    new = ["rankings", str(tmp_path / "qrels"), str(tmp_path / "run"), "--metrics", "map", "--no-ci"]
    assert main(new) == 0
    want = capsys.readouterr()
    assert main(["rankings", str(tmp_path / "run"), str(tmp_path / "qrels"), "--metrics", "map", "--no-ci"]) == 0
    old = capsys.readouterr()
    assert old.out == want.out
    assert old.err.splitlines()[0] == (
        "embedeval rankings: warning: RUN QRELS (the run first) is deprecated and goes in 0.2; give QRELS RUN, "
        f"judgements first as trec_eval: embedeval rankings {tmp_path / 'qrels'} {tmp_path / 'run'}"
    )
    assert main(["rankings", str(tmp_path / "run"), str(tmp_path / "run")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"embedeval rankings: error: QRELS ({tmp_path / 'run'}) is a TREC run (qid Q0 docid rank score tag: 6 "
        "fields), not a qrels (4 fields): give QRELS RUN, judgements first as trec_eval"
    ]


def test_zscores_split_and_read_as_every_trec_file(tmp_path, capsys):
    """A no-break space is part of a query id (C's isspace), as in the run; 1_0 is refused (C
    reads 1, Python 10)."""
    nbsp = "a\u00a0b"
    (tmp_path / "qrels").write_text(f"{nbsp} 0 x 1\n", encoding="utf-8")
    (tmp_path / "run").write_text(f"{nbsp} Q0 x 1 2 r\n", encoding="utf-8")
    (tmp_path / "z").write_text(f"{nbsp} map 0.5 0.25\n", encoding="utf-8")
    _, out, _ = _run(capsys, "-q", "-m", "map", "-Z", tmp_path / "z", tmp_path / "qrels", tmp_path / "run")
    assert out.startswith(f"Zmap                   \t{nbsp}\t2.0000\n")
    (tmp_path / "z").write_text(f"{nbsp} map 1_0 0.25\n", encoding="utf-8")
    status, out, err = _run(capsys, "-q", "-m", "map", "-Z", tmp_path / "z", tmp_path / "qrels", tmp_path / "run")
    assert status != 0 and out == "" and "mean must be written as trec_eval reads it" in err
