"""Random TREC run and qrels files with the inputs that break readers, shared by the reader tests
and ``bench/trec_differential.py`` (which runs them through trec_eval 10 itself).

Ids have mixed widths (1 to 40 characters, and 64-bit numbers), unicode letters and the unicode
spaces that trec_eval does not split at (no-break space, ideographic space, NEL, line
separator); scores take a few values, so ties are many; some queries are ranked and never
judged, some judged and never ranked; grades run 0-3. A case is written with a chosen
separator, line end and byte-order mark, so one case is several files that must read the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

# characters of ids: ASCII, letters of other scripts (2, 3 and 4 bytes in UTF-8), and unicode
# spaces that are data for trec_eval (it splits at ASCII whitespace only)
ASCII = "0123456789abcdefxyzABCXYZ_-.:/#"
UNICODE = ASCII + "éßΩжש中文字😀\u00a0\u3000\u0085\u2028"
SCORES = np.array([0.0, 1.0, 1.5, 2.0, 2.25, 3.0, 10.0, -1.0, 1e-5])


@dataclass
class Case:
    """The lines of a run and a qrels file, and the same data as pytrec_eval's dicts (which are
    only meaningful without ``duplicates``)."""

    run_lines: list[str]
    qrels_lines: list[str]
    run: dict[str, dict[str, float]] = field(default_factory=dict)
    qrels: dict[str, dict[str, int]] = field(default_factory=dict)
    features: set[str] = field(default_factory=set)  # what the case holds, to explain a difference


def random_id(rng: np.random.Generator, alphabet: str, first_hash: bool = True) -> str:
    """An id of mixed width: 1-3, 4-12, 13-40 characters, or a 64-bit number."""
    kind = rng.integers(4)
    if kind == 3:
        return str(int(rng.integers(0, 2**63 - 1)) * int(rng.integers(1, 3)))  # up to 2**64
    length = int(rng.integers(*[(1, 4), (4, 13), (13, 41)][kind]))
    text = "".join(rng.choice(list(alphabet), size=length))
    return text if first_hash or not text.startswith("#") else "q" + text


def make_case(
    rng: np.random.Generator,
    *,
    unicode: bool = True,
    max_queries: int = 12,
    duplicates: bool = False,
    orphans: bool = True,
    shuffle: bool = False,
) -> Case:
    """One random case. ``duplicates``: some query lists a document twice (trec_eval checks this
    only in the queries it evaluates, within the ``-M`` cut). ``orphans``: some judged queries
    have no run. ``shuffle``: the run's lines in random order (else grouped by query)."""
    alphabet = UNICODE if unicode else ASCII
    pool = {random_id(rng, alphabet) for _ in range(int(rng.integers(5, 120)))}
    pool = sorted(pool | {"4521", "123456789", "77"})  # with the ids of issue 40's report
    queries = sorted({random_id(rng, alphabet, first_hash=False) for _ in range(int(rng.integers(1, max_queries + 1)))})
    case = Case([], [])
    for i, q in enumerate(queries):
        side = rng.random()
        ranked = not (orphans and side < 0.15)
        judged = side < 0.9
        if ranked:
            docs = rng.choice(pool, size=int(rng.integers(1, min(len(pool), 60) + 1)), replace=False).tolist()
            scores = rng.choice(SCORES[: int(rng.integers(2, SCORES.size + 1))], size=len(docs))
            case.run[q] = dict(zip(docs, scores.tolist(), strict=True))
            lines = [
                f"{q} Q0 {d} {r + 1} {s!r} tag{i % 3}"
                for r, (d, s) in enumerate(zip(docs, scores.tolist(), strict=True))
            ]
            if duplicates and rng.random() < 0.3:
                lines.append(lines[int(rng.integers(len(lines)))])
                case.features.add("duplicate in run")
            case.run_lines += lines
        if judged:
            docs = rng.choice(pool, size=int(rng.integers(1, min(len(pool), 30) + 1)), replace=False).tolist()
            grades = rng.integers(0, 4, size=len(docs)).tolist()
            case.qrels[q] = dict(zip(docs, grades, strict=True))
            case.qrels_lines += [f"{q} 0 {d} {g}" for d, g in zip(docs, grades, strict=True)]
            if not ranked:
                case.features.add("judged query without run")
        if ranked and not judged:
            case.features.add("ranked query without judgements")
    if shuffle:
        order = rng.permutation(len(case.run_lines))
        case.run_lines = [case.run_lines[i] for i in order]
    if not case.run_lines:  # a run of one line: trec_eval reads no empty run
        q = queries[0]
        case.run[q] = {pool[0]: 1.0}
        case.run_lines.append(f"{q} Q0 {pool[0]} 1 1.0 tag")
    if not case.qrels_lines:
        q = next(iter(case.run))
        case.qrels[q] = {pool[0]: 1}
        case.qrels_lines.append(f"{q} 0 {pool[0]} 1")
    return case


def write_case(
    case: Case, folder: Path, *, sep: str = " ", crlf: bool = False, bom: bool = False, final_newline: bool = True
) -> tuple[Path, Path]:
    """(run, qrels) files of ``case`` in ``folder``, fields joined by ``sep``."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = folder / "run", folder / "qrels"
    end = "\r\n" if crlf else "\n"
    for path, lines in zip(paths, (case.run_lines, case.qrels_lines), strict=True):
        text = end.join(sep.join(line.split(" ")) for line in lines) + (end if final_newline else "")
        path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return paths


# The batch readers of TREC files (embedeval._forms.trec.lines.batch_reader), and the line reader.
BATCH_READERS = ("numpy", "pyarrow")
READERS = (*BATCH_READERS, "lines")


def use_reader(monkeypatch, reader: str, batch: int | None = None) -> None:
    """Have every TREC file read by ``reader`` from here on (``monkeypatch`` undoes it): "numpy"
    or "pyarrow" (a batch reader, whatever the file's size; in batches of ``batch`` bytes when
    given) or "lines" (the line reader, as for a file under 4 MB)."""
    from embedeval._forms.trec import arrow, blocks

    if reader == "lines":
        monkeypatch.setenv("EMBEDEVAL_BATCHES_FROM", str(1 << 62))
        return
    monkeypatch.setenv("EMBEDEVAL_BATCHES_FROM", "0")
    monkeypatch.setenv("EMBEDEVAL_TREC_READER", reader)
    if batch is not None:
        monkeypatch.setattr(arrow, "BATCH_BYTES", batch)
        monkeypatch.setattr(blocks, "BLOCK_BYTES", batch)
