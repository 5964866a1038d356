"""The fast reader of TREC files, with pyarrow (files of 4 MB or more: :func:`.lines.arrow_from`).

pyarrow's multithreaded CSV reader parses the file batch by batch; query ids are coded, document
ids hashed to 63-bit numbers (:func:`hash_strings`) and values copied as each batch arrives, so
only the document ids stay as strings. Whatever this reader cannot read as expected raises
:class:`Unreadable`, and :func:`embedeval._forms.trec.lines.read` hands the file to the line reader.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .columns import Columns, as_numpy, bool_array, hash_strings

# Bytes of the file per batch: small batches keep pyarrow's buffers in flight small (256 KB
# batches read as fast as 4 MB ones here, with 200 MB less memory at the peak).
BATCH_BYTES = 1 << 18


class Unreadable(Exception):
    """pyarrow could not read the file as expected: the line reader takes over."""


def _delimiter(path: Path) -> str:
    """A tab when the first line that is not a comment holds tabs and no spaces, else a space."""
    with open(path, "rb") as f:
        first = f.readline()
        while first.lstrip().startswith(b"#"):
            first = f.readline()
    return "\t" if b"\t" in first and b" " not in first.strip() else " "


def _split_as_trec_eval(path: Path, delimiter: str) -> bool:
    """Whether splitting each line at ``delimiter`` gives trec_eval's fields: trec_eval splits at
    any ASCII whitespace (C's ``isspace``) and ends lines at LF only, while pyarrow splits at the
    delimiter alone and ends lines at CR too. A file holding a vertical tab, a form feed, the
    other one of tab and space, or a CR that does not end a line goes to the line reader. A few
    ``memchr`` passes over the file mapped in memory (no copy: about 3 ms per 60 MB each)."""
    import mmap

    if path.stat().st_size == 0:
        return True
    other = b" " if delimiter == "\t" else b"\t"
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if any(data.find(byte) >= 0 for byte in (b"\x0b", b"\x0c", other)):
            return False
        return data.find(b"\r") < 0 or _crs_end_lines(f)


def _crs_end_lines(f) -> bool:
    """Whether every CR of the file is followed by an LF (a CRLF file), read in 16 MB pieces."""
    f.seek(0)
    while piece := f.read(1 << 24):
        if piece.endswith(b"\r"):
            piece += f.read(1)  # the LF of a CRLF split between two pieces
        if piece.count(b"\r") != piece.count(b"\r\n"):
            return False
    return True


def _comments(run: bool):
    """pyarrow's ``invalid_row_handler``: trec_eval's comment lines are skipped (a run line whose
    first field starts with ``#``, a qrels line whose first character is ``#``), any other line
    with the wrong number of fields stops the reader (the line reader then reads the file, or
    names the line)."""

    def handle(row) -> str:
        text = row.text.lstrip() if run else row.text
        return "skip" if text.startswith("#") else "error"

    return handle


class _Growing:
    """A numpy array appended to batch by batch, sized from a first estimate and doubled when
    full, so that the columns are not held twice (as parts and joined) at the end."""

    def __init__(self, dtype, size: int):
        self.data, self.size = np.empty(max(size, 1), dtype=dtype), 0

    def append(self, part: np.ndarray) -> None:
        end = self.size + part.size
        if end > self.data.size:
            grown = np.empty(max(end, 2 * self.data.size), dtype=self.data.dtype)
            grown[: self.size] = self.data[: self.size]
            self.data = grown
        self.data[self.size : end] = part
        self.size = end

    def array(self) -> np.ndarray:
        return self.data[: self.size]


def _query_runs(column, queries: dict) -> tuple[np.ndarray, np.ndarray, int]:
    """(first line, query code) of each run of equal query ids in a batch, and the batch's
    length; codes count in order of first appearance across batches. Only the first id of each
    run becomes a Python string."""
    import pyarrow.compute as pc

    n = len(column)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64), 0
    change = as_numpy(pc.not_equal(column.slice(1), column.slice(0, n - 1)))
    starts = np.concatenate([[0], np.flatnonzero(change) + 1])
    codes = [queries.setdefault(column[int(s)].as_py(), len(queries)) for s in starts]  # no take: it loads pandas
    return starts, np.asarray(codes, dtype=np.int64), n


def _join_runs(parts: list[tuple], sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
    """One list of runs from per-batch runs, merging a run that continues across batches."""
    starts, codes, offset, last = [], [], 0, -1
    for (s, c, _), size in zip(parts, sizes, strict=True):
        if c.size and c[0] == last:
            s, c = s[1:], c[1:]
        starts.append(s + offset)
        codes.append(c)
        offset += size
        last = c[-1] if c.size else last
    joined = lambda a: np.concatenate(a) if a else np.zeros(0, np.int64)  # noqa: E731
    return joined(starts), joined(codes)


def _tie_candidates(value: np.ndarray) -> np.ndarray:
    """Lines whose score equals a neighbour's, and a batch's first and last: in a run written
    in score order these hold every tie, whose order the ids decide (trec_eval's rule)."""
    out = np.zeros(value.size, dtype=bool)
    if value.size:
        same = value[1:] == value[:-1]
        out[1:] |= same
        out[:-1] |= same
        out[[0, -1]] = True
    return out


def read_arrow(path: Path, layout, keep: np.ndarray | None, hasher=hash_strings) -> Columns:
    """Batch by batch, so that only the document ids stay as strings: query ids are coded,
    document ids hashed (``hasher``, :func:`~.columns.hash_strings`) and values copied as each
    batch arrives, and the rest freed."""
    import pyarrow as pa
    import pyarrow.csv as csv

    fields, value_field, _ = layout
    queries: dict[str, int] = {}
    ids, runs, kept, lines, columns = [], [], [], 0, None
    delimiter = _delimiter(path)
    if not _split_as_trec_eval(path, delimiter):
        raise Unreadable
    try:
        reader = csv.open_csv(
            path,
            read_options=csv.ReadOptions(column_names=fields.split(), block_size=BATCH_BYTES),
            parse_options=csv.ParseOptions(
                delimiter=delimiter,
                quote_char=False,
                double_quote=False,
                escape_char=False,
                invalid_row_handler=_comments(value_field == "score"),
            ),
            convert_options=csv.ConvertOptions(
                include_columns=["qid", "docid", value_field],
                # grades as text, checked before they become numbers (see _grades)
                column_types={"qid": pa.string(), "docid": pa.string(), value_field: _value_type(value_field)},
                strings_can_be_null=False,
            ),
        )
        for batch in reader:
            values = batch.column(value_field) if value_field == "score" else _grades(batch.column(value_field))
            if values.null_count:
                raise Unreadable  # "nan" and empty fields read as null
            if columns is None:
                size = _lines_expected(path)
                columns = _Growing(np.int64, size), _Growing(np.float64, size)
            docs = batch.column("docid")
            hashes, value = hasher(docs), as_numpy(values)
            runs.append(_query_runs(batch.column("qid"), queries))
            columns[0].append(hashes)
            columns[1].append(value)
            if keep is None:
                ids.append(docs)
            else:
                wanted = keep[hashes & 0xFFFFFF] | _tie_candidates(value)
                ids.append(docs.filter(bool_array(wanted)))
                kept.append(np.flatnonzero(wanted) + lines)
            lines += batch.num_rows
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise Unreadable from None  # a malformed line, a non-number, an empty file
    if columns is None or any(q.startswith("#") for q in queries):
        raise Unreadable  # no line (the line reader makes the empty columns), or a comment read as data
    doc, value = (c.array() for c in columns)
    if not (np.isfinite(value).all() if value_field == "grade" else not np.isnan(value).any()):
        raise Unreadable
    starts, codes = _join_runs(runs, [r[2] for r in runs])
    held = None if keep is None else np.concatenate(kept)
    return Columns(str(path), list(queries), starts, codes, doc, value, False, pa.chunked_array(ids, pa.string()), held)


def _value_type(value_field: str):
    """How pyarrow reads the value column: scores as numbers, grades as text (:func:`_grades`)."""
    import pyarrow as pa

    return pa.float64() if value_field == "score" else pa.string()


def _grades(text):
    """A batch's grades as float64 from their text; :class:`Unreadable` (the line reader then names
    the line) for one with an exponent, which pyarrow would read as a float and trec_eval with
    ``atol`` (``1e3`` is 1 there). Underscores and other non-numbers fail the cast."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pc.any(pc.match_substring_regex(text, "[eE]")).as_py():
        raise Unreadable
    return pc.cast(text, pa.float64())


def _lines_expected(path: Path) -> int:
    """The file's size over the mean length of its first 64 KB of lines, plus 5%."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    return int(path.stat().st_size / max(len(head), 1) * max(head.count(b"\n"), 1) * 1.05) + 16
