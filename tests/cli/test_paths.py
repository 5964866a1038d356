"""Files named on the command line (issue 55, item 17): each input that cannot be read and each
output that cannot be written is said in one line naming the option, before any work; pipes and
standard input are read by the drop-in, refused with the reason elsewhere."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest
from runner import CLI, cli_env, run_cli


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(0)
    np.save(tmp_path / "e.npy", rng.normal(size=(30, 4)).astype("float32"))
    (tmp_path / "labels.txt").write_text("".join(f"{i % 3}\n" for i in range(30)))
    (tmp_path / "folder").mkdir()
    (tmp_path / "qrels").write_text("q1 0 a 1\nq1 0 b 0\n")
    (tmp_path / "run").write_text("q1 Q0 a 1 2 r\nq1 Q0 b 2 1 r\n")
    return tmp_path


def _errors(out) -> list[str]:
    assert out.returncode == 2 and "Traceback" not in out.stderr and "Errno" not in out.stderr, out.stderr
    return out.stderr.splitlines()


def test_a_folder_given_as_a_file_is_said_to_be_a_folder(files):
    """It was 'no such file'."""
    lines = _errors(run_cli("evaluate", files / "folder", files / "labels.txt"))
    assert lines == [f"embedeval evaluate: error: EMBEDDINGS: {files / 'folder'} is a folder, not a file"]
    lines = _errors(run_cli("trec_eval", files / "folder", files / "run"))
    assert lines == [f"embedeval trec_eval: error: QRELS: {files / 'folder'} is a folder, not a file"]


def test_standard_input_and_a_pipe_are_refused_with_the_reason(files):
    """Both were 'no such file'."""
    os.mkfifo(files / "pipe")
    lines = _errors(run_cli("evaluate", "-", files / "pipe"))
    assert lines[0].startswith("embedeval evaluate: error: EMBEDDINGS: '-' (standard input) is not read here")
    assert lines[1].startswith(f"embedeval evaluate: error: LABELS: {files / 'pipe'} is a pipe or a device")
    assert all("save it to a file first" in line for line in lines) and len(lines) == 2


@pytest.mark.skipif(not os.path.exists("/bin/bash"), reason="process substitution needs bash")
def test_the_drop_in_reads_process_substitution_as_trec_eval_does(files):
    """trec_eval QRELS <(zcat run.gz): the drop-in refused /dev/fd/63 as 'no such file'."""
    command = " ".join(CLI) + f" trec_eval -m map <(cat {files / 'qrels'}) <(cat {files / 'run'})"
    out = subprocess.run(["/bin/bash", "-c", command], capture_output=True, text=True, env=cli_env())
    assert out.returncode == 0, out.stderr
    assert out.stdout == "map                   \tall\t1.0000\n"


def test_outputs_and_images_are_checked_before_any_work(files):
    """--explore into a missing folder and a non-UTF-8 --images file failed after the whole
    evaluation, with a raw [Errno 2] and a message without the file's name."""
    (files / "images.txt").write_bytes(b"a.png\n\xff.png\n")
    out = run_cli(
        "evaluate",
        files / "e.npy",
        files / "labels.txt",
        "--explore",
        files / "missing" / "page.html",
        "--images",
        files / "images.txt",
        "--report",
        files / "folder",
    )
    lines = _errors(out)
    assert out.stdout == ""  # nothing evaluated
    assert lines == [
        f"embedeval evaluate: error: --report must end in .md or .html; got {files / 'folder'}",
        f"embedeval evaluate: error: --report: {files / 'folder'} is a folder; give a file name",
        f"embedeval evaluate: error: --explore: no such folder for {files / 'missing' / 'page.html'} "
        f"({files / 'missing'}); create it first",
        f"embedeval evaluate: error: --images: {files / 'images.txt'} is not UTF-8 text (invalid start byte at byte 6)",
    ]


def test_reality_check_out_names_the_option(files):
    """--out naming a file printed a raw [Errno 17] after computing the examples."""
    out = run_cli("reality-check", "--out-dir", files / "labels.txt" / "plots", "--n", "4")
    assert _errors(out) == [
        f"embedeval reality-check: error: --out-dir: {files / 'labels.txt'} is a file; give a folder for the files "
        "(it is created if missing)"
    ]
    assert out.stdout == ""


def test_thumbnails_come_from_a_column_of_the_labels_file_or_one_per_line(files):
    """--images names a text file (lines end at \\n only: a U+2028 inside a path stays in it) or,
    with --images-key, a column of a .parquet file such as the labels file itself."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    thumbs = [f"img/{i}\u2028x.jpg" for i in range(30)]
    table = pa.table({"label": [i % 3 for i in range(30)], "thumb": thumbs})
    pq.write_table(table, files / "labels.parquet")
    (files / "thumbs.txt").write_text("".join(f"{t}\n" for t in thumbs), encoding="utf-8")
    for extra in (["--images", files / "thumbs.txt"], ["--images", files / "labels.parquet", "--images-key", "thumb"]):
        page = files / "page.html"
        out = run_cli(
            "evaluate", files / "e.npy", files / "labels.parquet", "--label-key", "label", "--no-ci",
            "--explore", page, *extra,
        )  # fmt: skip
        assert out.returncode == 0, out.stderr
        text = page.read_text(encoding="utf-8")
        assert "img/29" in text and "x.jpg" in text
        page.unlink()
    (files / "short.txt").write_text("a.jpg\n\nb.jpg\n")
    lines = _errors(run_cli("evaluate", files / "e.npy", files / "labels.txt", "--explore", files / "p.html",
                            "--images", files / "short.txt"))  # fmt: skip
    assert len(lines) == 1 and lines[0].startswith("embedeval evaluate: error: --images: ") and "blank line" in lines[0]
    assert not (files / "p.html").exists()  # refused before any work
