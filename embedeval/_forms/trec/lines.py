"""TREC run and qrels files read into :class:`~.columns.Columns`: the choice of reader, and the
exact line reader.

Files of :func:`batches_from` bytes or more (4 MB) are read in batches, by numpy's tokenizer
(:mod:`.blocks`) or, from :data:`PYARROW_FROM` bytes (64 MB), pyarrow's CSV reader (:mod:`.arrow`):
query ids are coded and document ids hashed to 63-bit numbers (:func:`~.columns.hash_strings`;
equal ids always get equal numbers, and whoever relies on two numbers being different ids checks
the strings, :meth:`Columns.strings`). For smaller files, or when a batch reader cannot read the
file as trec_eval would (fields separated by several spaces or by other whitespace than the
file's delimiter, a malformed line, a NaN), the line reader reads it and codes ids exactly, and
for a bad line raises the error that names the file and the line.
"""

from __future__ import annotations

import array
import math
import os
from pathlib import Path

import numpy as np

from .batches import BOM, Unreadable
from .columns import Columns, hash_strings

# Files smaller than this many bytes are read by the line reader: for them it is as fast as a
# batch reader, and it codes ids exactly. The environment variable (read at each call) moves the
# threshold; the tests set it to 0, so that their small files go through the batch readers too.
BATCHES_FROM = 4 << 20
BATCHES_FROM_VARIABLE = "EMBEDEVAL_BATCHES_FROM"
# Which batch reader reads a file: numpy's (:mod:`.blocks`: one thread, memory a few MB beyond the
# columns) up to PYARROW_FROM bytes, pyarrow's (:mod:`.arrow`: two threads and more, and 80 MB
# for itself) from there, where its threads save seconds and its memory is small beside the
# file's (bench/bench_trec_eval.py). The environment variable, "numpy" or "pyarrow", forces one.
PYARROW_FROM = 64 << 20
READER_VARIABLE = "EMBEDEVAL_TREC_READER"
READERS = ("numpy", "pyarrow")
# How trec_eval reads each value (:func:`trec_number`): a score with atof and may be infinite (it
# still sorts); a grade with atol, finite.
_READS = {"score": ("atof", False), "grade": ("atol", True)}


def batches_from() -> int:
    """The size in bytes from which a TREC file is read by a batch reader."""
    return int(os.environ.get(BATCHES_FROM_VARIABLE, BATCHES_FROM))


def batch_reader(path):
    """The batch reader for ``path``: a function ``(path, layout, keep, hasher) -> Columns`` that
    raises :class:`~.batches.Unreadable` (and ImportError, pyarrow's without pyarrow)."""
    name = os.environ.get(READER_VARIABLE)
    if name is not None and name not in READERS:
        raise ValueError(f"{READER_VARIABLE} must be one of {', '.join(READERS)}; got {name!r}")
    if name == "pyarrow" or (name is None and Path(path).stat().st_size >= PYARROW_FROM):
        from .arrow import read_arrow

        return read_arrow
    from .blocks import read_blocks

    return read_blocks


def reads_in_batches(path) -> bool:
    """Whether :func:`read` (not ``exact``) hands ``path`` to a batch reader first."""
    return Path(path).stat().st_size >= batches_from()


def read(
    path, layout: tuple[str, str, str], exact: bool = False, keep: np.ndarray | None = None, hasher=hash_strings
) -> Columns:
    """The columns of a run (:data:`RUN`) or qrels (:data:`QRELS`) file, without trec_eval's
    comment lines (``#``) and the fields after a run line's tag; ValueError naming the
    file and line for a line without the right number of fields, a value that is not a number,
    a NaN score, a non-finite grade or bytes that are not UTF-8. ``exact`` asks for the line
    reader's exact codes; ``keep`` (:func:`keeping`) keeps as strings only the ids that may be
    judged, the others are hashed and dropped; ``hasher`` hashes a batch reader's document
    ids (:func:`~.columns.hash_strings`; another one only to test what a collision does). (A
    document listed twice for a query is found where the lines are grouped by query, which then
    calls :func:`locate_duplicate`.)"""
    if not exact and reads_in_batches(path):
        try:
            try:
                return batch_reader(path)(Path(path), layout, keep, hasher)
            except ImportError:  # pyarrow's reader, where pyarrow is missing
                from .blocks import read_blocks

                return read_blocks(Path(path), layout, keep, hasher)
        except Unreadable:
            pass  # the line reader reads what a batch reader could not, or names the bad line
    return _read_lines(Path(path), layout)


def _read_lines(path: Path, layout, duplicates: bool = False, comments: bool = False) -> Columns:
    """The same columns, one line at a time, ids coded exactly; errors name the file and line.
    A document listed twice is looked for only with ``duplicates`` (it costs a set of every
    line); otherwise numpy finds it, and :func:`locate_duplicate` reads again to name the line.

    trec_eval's rules: fields are separated by ASCII whitespace (C's ``isspace``: space, tab,
    CR, vertical tab, form feed), so lines are split as bytes and only the distinct ids are
    decoded from UTF-8 (a no-break space inside an id is part of it, as in trec_eval); blank lines
    are skipped; a line whose first character (a run line: whose first field) starts with ``#``
    is a comment; a run line may carry more fields after the run tag, which are ignored; a qrels
    line has exactly 4 fields. A byte-order mark at the start of the file is skipped (trec_eval
    would make it part of the first query id). The first pass takes every line as data (no test
    per line); a query id that starts with ``#`` sends the file through a second, careful pass
    (``comments``), so that only files with comments pay for them."""
    fields, value_field, twice = layout
    names = fields.split()
    width, at_q, at_d, at_v = len(names), names.index("qid"), names.index("docid"), names.index(value_field)
    longer = value_field == "score"  # run lines may hold more fields after the tag
    grades = not longer
    queries: dict[bytes, int] = {}
    docs: dict[bytes, int] = {}
    query, doc, value = array.array("q"), array.array("q"), array.array("d")
    add_query, add_doc, add_value = query.append, doc.append, value.append
    query_code, doc_code = queries.setdefault, docs.setdefault
    seen: set[int] = set()
    with open(path, "rb") as f:
        for number, line, parts in trec_lines(f):
            if len(parts) != width or comments:
                verdict = _irregular(line, parts, layout, f"{path}:{number}")
                if verdict == "comment" and not comments:
                    return _read_lines(path, layout, duplicates, comments=True)
                if verdict != "data":
                    continue
            field = parts[at_v]
            try:
                v = float(field)
            except ValueError:
                v = math.nan
            # a non-number, a NaN, an infinity, or a number C reads otherwise (trec_number): look closer
            if not -math.inf < v < math.inf or b"_" in field or (grades and (b"e" in field or b"E" in field)):
                if not comments and is_comment(line, parts, longer):
                    return _read_lines(path, layout, duplicates, comments=True)
                v = trec_number(parts[at_v], value_field, f"{path}:{number}", *_READS[value_field])
            q = query_code(parts[at_q], len(queries))
            d = doc_code(parts[at_d], len(docs))
            if duplicates:
                key = q << 32 | d
                if key in seen:
                    raise ValueError(
                        f"{path}:{number}: document {_text(parts[at_d])!r} is {twice} for query {_text(parts[at_q])!r}"
                    )
                seen.add(key)
            add_query(q)
            add_doc(d)
            add_value(v)
    if not comments and any(q.startswith(b"#") for q in queries):
        return _read_lines(path, layout, duplicates, comments=True)
    column = lambda a, t: np.frombuffer(a, dtype=t) if len(a) else np.zeros(0, t)  # noqa: E731
    per_line = column(query, np.int64)
    starts = np.flatnonzero(np.diff(per_line, prepend=-1))
    return Columns(
        str(path),
        _decoded(queries, path, "query id"),
        starts,
        per_line[starts],
        column(doc, np.int64),
        column(value, np.float64),
        True,
        _decoded(docs, path, "document id"),
    )


def no_run_lines(path) -> ValueError:
    """The error for a run without a line to evaluate: with ``-c`` every judged query would be
    evaluated against nothing, a mistake rather than a run (trec_eval refuses an empty file)."""
    return ValueError(
        f"{path}: the run is empty: it holds no ranked line (an empty file, or only blank lines and comments)"
    )


def trec_lines(f):
    """The one tokenizer of every TREC file (runs, qrels, preferences, judgement groups): each
    line of the binary file ``f`` as ``(number, line, fields)``, numbered from 1, its fields as
    bytes split where trec_eval splits them (C's ``isspace``: space, tab, CR, LF, vertical tab,
    form feed; a no-break space or another Unicode space is part of a field, and lines end at
    ``\\n`` only, so ``\\r\\n`` ends one too). A UTF-8 byte-order mark at the start of the file is
    skipped (trec_eval would make it part of the first query id). Which lines are comments, and
    how a value reads, the caller decides with :func:`is_comment` and :func:`trec_number`."""
    if f.read(len(BOM)) != BOM:
        f.seek(0)
    for number, line in enumerate(f, start=1):
        yield number, line, line.split()


def is_comment(line: bytes, fields: list, run: bool = False) -> bool:
    """trec_eval's comment lines: a run line whose first field starts with ``#``; a judgement
    line (qrels, preferences, judgement groups) whose first character is ``#`` (after a blank,
    ``#`` begins a query id)."""
    return fields[0].startswith(b"#") if run else line.startswith(b"#")


def trec_number(field: bytes, name: str, where: str, reader: str = "atof", finite: bool = True) -> float:
    """The value of a field as trec_eval reads it: with C's ``atof`` (``reader="atof"``: scores,
    preference levels) or ``atol`` (``"atol"``: qrels grades, judgement-group grades). ValueError
    naming ``name`` and ``where`` (the file and line) for a non-number, a NaN, an infinity where
    ``finite``, and for text that Python and C read as different numbers: an underscore between
    digits (``float`` reads ``1_0`` as 10, C as 1) and, for ``atol``, an exponent (``1e1``: C's
    ``atol`` reads 1) -- refused rather than read either way."""
    text = _text(field)
    if b"_" in field or (reader == "atol" and (b"e" in field or b"E" in field)):
        rule = "digits, a sign and a point" + (
            ", no exponent (trec_eval reads it with atol)" if reader == "atol" else ""
        )
        raise ValueError(f"{where}: {name} must be written as trec_eval reads it ({rule}); got {text!r}")
    try:
        v = float(field)
    except ValueError:
        raise ValueError(f"{where}: {name} must be a number; got {text!r}") from None
    if math.isnan(v) or (finite and math.isinf(v)):
        raise ValueError(f"{where}: {name} must be a {'finite ' if finite else ''}number; got {text!r}")
    return v


def _text(field: bytes) -> str:
    """A field as text for a message (bytes that are not UTF-8 shown as U+FFFD)."""
    return field.decode("utf-8", errors="replace")


def _decoded(ids: dict, path: Path, what: str) -> list[str]:
    """The distinct ids as strings; ValueError naming the line of the first that is not UTF-8."""
    try:
        return [i.decode("utf-8") for i in ids]
    except UnicodeDecodeError:
        bad = next(i for i in ids if not _utf8(i))
        with open(path, "rb") as f:
            number = next(n for n, line in enumerate(f, start=1) if bad in line.split())
        raise ValueError(f"{path}:{number}: a {what} must be UTF-8 text; got the bytes {bad!r}") from None


def _utf8(field: bytes) -> bool:
    try:
        field.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _irregular(line: bytes, parts: list, layout, where: str) -> str:
    """What a line that is not plainly data is: ``"blank"``, ``"comment"`` or ``"data"`` (a run
    line with fields after its tag); ValueError naming the line for a wrong number of fields."""
    fields, value_field, _ = layout
    width, longer = len(fields.split()), value_field == "score"
    if not parts:
        return "blank"
    if is_comment(line, parts, longer):
        return "comment"
    if len(parts) == width or (longer and len(parts) > width):
        return "data"
    more = " or more" if longer else ""
    table = " (a qrels table, as BEIR's qrels/test.tsv, needs its header row: query-id corpus-id score)"
    hint = table if not longer and len(parts) == 3 else ""
    raise ValueError(f"{where}: a line needs {width} fields ({fields}){more}; got {len(parts)}{hint}")


def locate_duplicate(path, layout) -> None:
    """Raise the line reader's error if the file lists a document twice for a query; return if
    it does not (two ids merely shared a hash)."""
    _read_lines(Path(path), layout, duplicates=True)


def run_tag(path) -> str:
    """The run tag (6th field) of a run file's last line that is not blank or a comment, which
    trec_eval prints as ``runid``; read from the end of the file."""
    with open(path, "rb") as f:
        f.seek(0, 2)
        size, chunk = f.tell(), 1 << 16
        while True:
            start = max(size - chunk, 0)
            f.seek(start)
            lines = f.read(size - start).splitlines()
            complete = lines if start == 0 else lines[1:]
            for line in reversed(complete):
                parts = line.split()
                if len(parts) >= 6 and not parts[0].startswith(b"#"):
                    return parts[5].decode("utf-8")
            if start == 0:
                return ""
            chunk *= 4
