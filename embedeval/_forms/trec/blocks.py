"""The numpy reader of TREC files: blocks of whole lines parsed by ``numpy.loadtxt``'s C
tokenizer, without pyarrow and without a Python object per line (files of 4 MB or more:
:func:`.lines.read`).

Each block of about :data:`BLOCK_BYTES` ends at a line end. numpy splits its lines at the file's
delimiter (:func:`~.batches.delimiter_of`) into fixed-width bytes fields, as wide as the block's
longest line so that none is cut, and reads scores as float64 (correctly rounded, as C's ``atof``).
Query ids are coded, document ids hashed (:func:`~.columns.hash_strings`) and the ids of the
lines that ``keep`` asks for kept as bytes (:class:`~.columns.FixedIds`); the block is then freed,
so memory is the columns (16 bytes a line) and one block's fields.

A block that numpy could read otherwise than trec_eval raises :class:`~.batches.Unreadable`, and
the line reader reads the file (and names the line, if one is bad): an empty field (two
delimiters in a row, or one at a line's start or end, where trec_eval sees one separator), a NUL
byte, bytes that are not UTF-8, a comment (``#``), a line with the wrong number of fields, a value
that is not a plain number, a NaN, or a grade written with an exponent (trec_eval reads grades
with ``atol``).
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np

from .batches import BOM, Collected, Unreadable, crs_end_lines, delimiter_of, foreign_blanks
from .columns import Columns, FixedIds, hash_strings

# Bytes of the file per block: as fast as larger ones, and a block's fields (three columns as
# wide as its longest line) stay a few MB (bench/NOTES.md, 'The TREC batch readers').
BLOCK_BYTES = 1 << 20

# Bytes that Python's ``str.isspace`` takes for whitespace and C's ``isspace`` does not (a block is
# decoded as Latin-1 for numpy): numpy strips them around a number, trec_eval does not. Blocks
# holding one have their values read as text and checked (:func:`_checked_numbers`).
_PYTHON_ONLY_SPACES = (b"\x1c", b"\x1d", b"\x1e", b"\x1f", b"\x85", b"\xa0")


def _allowed(characters: bytes) -> np.ndarray:
    table = np.zeros(256, dtype=bool)
    table[list(characters)] = True
    table[0] = True  # the padding of a fixed-width field
    return table


# What a value may be written with: digits, sign, point, and the letters of inf, infinity and nan;
# scores may have an exponent, grades may not (atol reads 1e3 as 1).
_SCORE_BYTES = _allowed(b"0123456789+-.eEinfatyINFATY")
_GRADE_BYTES = _allowed(b"0123456789+-.infatyINFATY")


def read_blocks(path: Path, layout, keep: np.ndarray | None, hasher=hash_strings) -> Columns:
    """The columns of a run or qrels file (``layout``: :data:`~.columns.RUN`,
    :data:`~.columns.QRELS`), read block by block; ``keep`` (:func:`~.columns.keeping`): keep as
    strings only the ids that may be judged (and those of tied scores); ``hasher``: the document
    ids' hash. :class:`~.batches.Unreadable` for a file numpy could read otherwise than trec_eval."""
    fields, value_field, _ = layout
    names = fields.split()
    delimiter = delimiter_of(path)
    collected = Collected(path, keep, hasher)
    for block in _blocks(path):
        query, docs, values = _parse(block, names, value_field, delimiter.encode())
        docs = _narrowed(docs)  # a contiguous copy as wide as the longest id: less to hash and keep
        collected.add(_query_runs(query, collected.queries), docs, values, lambda docs, wanted: docs[wanted])
    return collected.columns(path, value_field, FixedIds)


def _blocks(path: Path):
    """The file's bytes in blocks of whole lines (the last one may lack its line end), without a
    leading byte-order mark and without blocks that hold only blank lines."""
    with open(path, "rb") as f:
        if f.read(len(BOM)) != BOM:
            f.seek(0)
        rest = b""
        while piece := f.read(BLOCK_BYTES):
            block = rest + piece
            end = block.rfind(b"\n") + 1
            block, rest = block[:end], block[end:]
            if block.strip():
                yield block
        if rest.strip():
            yield rest


def _parse(block: bytes, names: list, value_field: str, delimiter: bytes) -> tuple:
    """(query ids, document ids, values) of a block's lines: two ``S`` arrays and float64."""
    if not _split_as_trec_eval(block, delimiter):
        raise Unreadable
    raw = np.frombuffer(block, np.uint8)
    line_end = raw == ord("\n")
    if _empty_field(raw, line_end, delimiter) or b"\x00" in block:
        raise Unreadable
    if not block.isascii():
        try:
            block.decode("utf-8")
        except UnicodeDecodeError:
            raise Unreadable from None
    width = _longest_line(line_end)
    as_text = value_field == "grade" or any(space in block for space in _PYTHON_ONLY_SPACES)
    columns = [("q", f"S{width}"), ("d", f"S{width}"), ("v", f"S{width}" if as_text else "f8")]
    used = [names.index("qid"), names.index("docid"), names.index(value_field)]
    if value_field == "score":  # the tag, cut to a byte: only its presence is checked
        columns, used = [*columns, ("t", "S1")], [*used, names.index("tag")]
    try:
        table = np.loadtxt(
            io.StringIO(block.decode("latin-1")),
            dtype=np.dtype(columns),
            delimiter=delimiter.decode(),
            comments=None,
            quotechar=None,
            usecols=used,
            ndmin=1,
        )
    except ValueError:
        raise Unreadable from None  # too few fields, a value numpy cannot read
    if value_field == "grade" and block.count(delimiter) != (len(names) - 1) * table.size:
        raise Unreadable  # a qrels line with more fields than four
    query = table["q"]
    if np.char.startswith(query, b"#").any():
        raise Unreadable  # a comment line (the line reader knows trec_eval's rules for them)
    values = _checked_numbers(table["v"], value_field) if as_text else table["v"]
    return query, table["d"], np.ascontiguousarray(values)


def _split_as_trec_eval(block: bytes, delimiter: bytes) -> bool:
    """Whether splitting the block's lines at ``delimiter`` gives trec_eval's fields: none of
    :func:`~.batches.foreign_blanks`, and every CR followed by an LF."""
    if any(blank in block for blank in foreign_blanks(delimiter)):
        return False
    return b"\r" not in block or crs_end_lines(block)


def _empty_field(raw: np.ndarray, line_end: np.ndarray, delimiter: bytes) -> bool:
    """Whether a line of the block has an empty field: a delimiter at the block's start or end,
    next to another, or next to a line end (LF, or the CR of a CRLF)."""
    at = raw == delimiter[0]
    edge = line_end | (raw == ord("\r"))
    return bool(at[0] or at[-1] or (at[1:] & (at[:-1] | edge[:-1])).any() or (at[:-1] & edge[1:]).any())


def _longest_line(line_end: np.ndarray) -> int:
    """The length in bytes of the block's longest line (at least 1), from its line ends."""
    bounds = np.concatenate([[-1], np.flatnonzero(line_end), [line_end.size]])
    return max(int(np.diff(bounds).max()), 1)


def _checked_numbers(text: np.ndarray, value_field: str) -> np.ndarray:
    """Values read from their text, as float64; :class:`~.batches.Unreadable` for one holding a
    byte that is not part of a plain number (a space C does not strip, an underscore that
    Python reads and C does not, an exponent in a grade)."""
    allowed = _GRADE_BYTES if value_field == "grade" else _SCORE_BYTES
    if not allowed[np.ascontiguousarray(text).view(np.uint8)].all():
        raise Unreadable
    try:
        return text.astype(np.float64)
    except ValueError:
        raise Unreadable from None


def _query_runs(query: np.ndarray, queries: dict) -> tuple[np.ndarray, np.ndarray, int]:
    """(first line, query code) of each run of equal query ids in a block, and the block's length;
    codes count in order of first appearance across blocks."""
    change = query[1:] != query[:-1]
    starts = np.concatenate([[0], np.flatnonzero(change) + 1]).astype(np.int64)
    codes = [queries.setdefault(q.decode("utf-8"), len(queries)) for q in query[starts].tolist()]
    return starts, np.asarray(codes, dtype=np.int64), query.size


def _narrowed(ids: np.ndarray) -> np.ndarray:
    """The ids as a contiguous bytes array as wide as the longest of them (the block's fields are
    as wide as its longest line)."""
    longest = int(np.char.str_len(ids).max()) if ids.size else 1
    return ids.astype(f"S{max(longest, 1)}")
