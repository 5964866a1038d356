"""What the two batch readers of TREC files share (:mod:`.blocks`, numpy's; :mod:`.arrow`,
pyarrow's): the file's delimiter, and the columns collected batch by batch (:class:`Collected`:
arrays grown as they come, runs of one query id joined across batches, and the lines whose ids
decide ties).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .columns import Columns

BOM = b"\xef\xbb\xbf"  # a UTF-8 byte-order mark: skipped, the file reads as it would without one


class Unreadable(Exception):
    """A batch reader could not read the file as trec_eval would: the line reader takes over
    (and names the line, if one is bad)."""


def delimiter_of(path: Path) -> str:
    """A tab when the first line that is not a comment holds tabs and no spaces, else a space."""
    with open(path, "rb") as f:
        first = f.readline()
        while first.lstrip().startswith(b"#"):
            first = f.readline()
    return "\t" if b"\t" in first and b" " not in first.strip() else " "


def foreign_blanks(delimiter: bytes) -> tuple[bytes, ...]:
    """The bytes at which trec_eval splits fields (C's ``isspace``) and a split at ``delimiter``
    alone would not: a vertical tab, a form feed, the other one of tab and space. A file (or
    block) holding one goes to the line reader; a CR is checked apart (:func:`crs_end_lines`)."""
    return (b"\x0b", b"\x0c", b" " if delimiter == b"\t" else b"\t")


def crs_end_lines(data: bytes) -> bool:
    """Whether every CR of ``data`` is followed by an LF (CRLF line ends, which the batch readers
    end lines at as trec_eval does; a CR elsewhere is a blank to trec_eval)."""
    return data.count(b"\r") == data.count(b"\r\n")


class Growing:
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


def join_runs(parts: list[tuple], sizes: list[int]) -> tuple[np.ndarray, np.ndarray]:
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


def tie_candidates(value: np.ndarray) -> np.ndarray:
    """Lines whose score equals a neighbour's, and a batch's first and last: in a run written
    in score order these hold every tie, whose order the ids decide (trec_eval's rule)."""
    out = np.zeros(value.size, dtype=bool)
    if value.size:
        same = value[1:] == value[:-1]
        out[1:] |= same
        out[:-1] |= same
        out[[0, -1]] = True
    return out


def lines_expected(path: Path) -> int:
    """The file's size over the mean length of its first 64 KB of lines, plus 5%."""
    with open(path, "rb") as f:
        head = f.read(1 << 16)
    return int(path.stat().st_size / max(len(head), 1) * max(head.count(b"\n"), 1) * 1.05) + 16


class Collected:
    """The columns of a file read batch by batch: each batch's query runs (coded in order of first
    appearance, in :attr:`queries`), document hashes (``hasher``) and values, and the document ids
    kept as strings: all of them, or with ``keep`` (:func:`~.columns.keeping`) those that may be
    judged and those of tied scores."""

    def __init__(self, path: Path, keep: np.ndarray | None, hasher):
        size = lines_expected(path)
        self.keep, self.hasher, self.queries = keep, hasher, {}
        self.doc, self.value = Growing(np.int64, size), Growing(np.float64, size)
        self.runs, self.ids, self.kept, self.lines = [], [], [], 0

    def add(self, runs: tuple, docs, values: np.ndarray, take) -> None:
        """One batch: its query ``runs`` (first line, code, length), document ids and values;
        ``take(docs, mask)`` gives the ids of a mask."""
        hashes = self.hasher(docs)
        self.runs.append(runs)
        self.doc.append(hashes)
        self.value.append(values)
        if self.keep is None:
            self.ids.append(docs)
        else:
            wanted = self.keep[hashes & (self.keep.size - 1)] | tie_candidates(values)
            self.ids.append(take(docs, wanted))
            self.kept.append(np.flatnonzero(wanted) + self.lines)
        self.lines += values.size

    def columns(self, path: Path, value_field: str, joined) -> Columns:
        """The file's columns, ``joined(ids)`` making one id column of the batches' kept ids;
        :class:`Unreadable` for a file without a line (the line reader makes the empty columns),
        a NaN, or an infinite grade."""
        values = self.value.array()
        if self.lines == 0 or not (np.isfinite(values).all() if value_field == "grade" else not np.isnan(values).any()):
            raise Unreadable
        starts, codes = join_runs(self.runs, [r[2] for r in self.runs])
        held = None if self.keep is None else np.concatenate(self.kept)
        doc, ids = self.doc.array(), joined(self.ids)
        return Columns(str(path), list(self.queries), starts, codes, doc, values, False, ids, held)
