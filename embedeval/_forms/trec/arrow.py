"""The fast reader of TREC files, with pyarrow (files of 4 MB or more: :func:`.lines.arrow_from`).

pyarrow's multithreaded CSV reader parses the file batch by batch; query ids are coded, document
ids hashed to 63-bit numbers (:func:`hash_strings`) and values copied as each batch arrives, so
only the document ids stay as strings. Whatever this reader cannot read as expected raises
:class:`Unreadable`, and :func:`embedeval._forms.trec.lines.read` hands the file to the line reader.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .batches import Collected, Unreadable, crs_end_lines, delimiter_of, foreign_blanks
from .columns import Columns, as_numpy, bool_array, hash_strings

# Bytes of the file per batch: small batches keep pyarrow's buffers in flight small, and read as
# fast as large ones (bench/NOTES.md, 'The TREC batch readers').
BATCH_BYTES = 1 << 18


def _split_as_trec_eval(path: Path, delimiter: str) -> bool:
    """Whether splitting each line at ``delimiter`` gives trec_eval's fields: trec_eval splits at
    any ASCII whitespace (C's ``isspace``) and ends lines at LF only, while pyarrow splits at the
    delimiter alone and ends lines at CR too. A file holding a vertical tab, a form feed, the
    other one of tab and space, or a CR that does not end a line goes to the line reader. A few
    ``memchr`` passes over the file mapped in memory (no copy)."""
    import mmap

    if path.stat().st_size == 0:
        return True
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        if any(data.find(byte) >= 0 for byte in foreign_blanks(delimiter.encode())):
            return False
        return data.find(b"\r") < 0 or _crs_end_file_lines(f)


def _crs_end_file_lines(f) -> bool:
    """Whether every CR of the file is followed by an LF (a CRLF file), read in 16 MB pieces."""
    f.seek(0)
    while piece := f.read(1 << 24):
        if piece.endswith(b"\r"):
            piece += f.read(1)  # the LF of a CRLF split between two pieces
        if not crs_end_lines(piece):
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


def read_arrow(path: Path, layout, keep: np.ndarray | None, hasher=hash_strings) -> Columns:
    """Batch by batch, so that only the document ids stay as strings: query ids are coded,
    document ids hashed (``hasher``, :func:`~.columns.hash_strings`) and values copied as each
    batch arrives, and the rest freed."""
    import pyarrow as pa
    import pyarrow.csv as csv

    fields, value_field, _ = layout
    collected = Collected(path, keep, hasher)
    delimiter = delimiter_of(path)
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
            runs = _query_runs(batch.column("qid"), collected.queries)
            collected.add(
                runs, batch.column("docid"), as_numpy(values), lambda docs, wanted: docs.filter(bool_array(wanted))
            )
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise Unreadable from None  # a malformed line, a non-number, an empty file
    if any(q.startswith("#") for q in collected.queries):
        raise Unreadable  # a comment read as data
    return collected.columns(path, value_field, lambda ids: pa.chunked_array(ids, pa.string()))


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
