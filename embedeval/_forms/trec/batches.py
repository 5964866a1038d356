"""What the two batch readers of TREC files share (:mod:`.blocks`, numpy's; :mod:`.arrow`,
pyarrow's): the file's delimiter, arrays grown batch by batch, runs of one query id joined across
batches, and the lines whose ids decide ties.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

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
