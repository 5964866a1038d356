"""TREC run and qrels files read as columns: numbers for the ids and one value per line, no
Python object per line.

With pyarrow installed (``pip install 'embedeval[fast]'``) its multithreaded CSV reader parses
the file; query ids are coded by pyarrow and document ids hashed to 63-bit numbers in numpy
(:func:`embedeval._forms.trec.arrow.hash_strings`; equal ids always get equal numbers, and whoever relies on two numbers
being different ids checks the strings, :meth:`Columns.strings`). Without pyarrow, or when it
cannot read the file (fields separated by several spaces, a malformed line, a NaN), the line
reader reads it and codes ids exactly, and for a bad line raises the error that names the file
and the line.
"""

from __future__ import annotations

import array
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RUN = ("qid Q0 docid rank score tag", "score", "listed twice")
QRELS = ("qid iteration docid grade", "grade", "judged twice")


@dataclass(frozen=True)
class Columns:
    """A TREC file as columns.

    Attributes
    ----------
    path : str
    queries : list of str
        The distinct query ids, in order of first appearance.
    runs : numpy.ndarray of shape (n_runs,)
        The first line of each run of lines with one query id (a run file lists each query's
        lines together, so this is one entry per query, not per line).
    run_query : numpy.ndarray of shape (n_runs,)
        Each run's query, as an index into ``queries``.
    doc : numpy.ndarray of shape (n_lines,)
        Each line's document as a number >= 0 (int64): a code when ``exact``, else a hash.
    value : numpy.ndarray of shape (n_lines,)
        Each line's score (run) or grade (qrels), float64.
    exact : bool
        Whether different documents always have different numbers.
    ids : pyarrow.ChunkedArray or list of str
        The document ids per line (pyarrow), or the distinct ones indexed by ``doc`` (exact).
    kept : numpy.ndarray or None
        The lines whose ids ``ids`` holds, when only some were kept (:func:`read`'s ``keep``).
    """

    path: str
    queries: list
    runs: np.ndarray
    run_query: np.ndarray
    doc: np.ndarray
    value: np.ndarray
    exact: bool
    ids: object
    kept: np.ndarray | None = None

    @property
    def query(self) -> np.ndarray:
        """Each line's query, as an index into ``queries``, array of shape (n_lines,)."""
        return np.repeat(self.run_query, np.diff(np.append(self.runs, self.doc.size)))

    def grouped(self) -> np.ndarray | None:
        """The offsets of each query's lines, array of shape (n_queries + 1,), when the lines of
        every query are together; None otherwise."""
        if self.run_query.size != len(self.queries):
            return None
        return np.append(self.runs, self.doc.size).astype(np.int64)

    def strings(self, lines: np.ndarray) -> list:
        """The document ids of ``lines`` (indices into the file's lines), as Python strings;
        :class:`MissingIds` if some were not kept."""
        lines = np.asarray(lines, dtype=np.int64)
        if self.exact:
            return list(map(self.ids.__getitem__, self.doc[lines].tolist()))
        return self._taken(self._held(lines)).to_pylist()

    def every_string(self) -> list:
        """The document id of every line, in file order."""
        if self.exact:
            return list(map(self.ids.__getitem__, self.doc.tolist()))
        if self.kept is not None:
            raise MissingIds
        return self.ids.to_pylist()

    def _held(self, lines: np.ndarray) -> np.ndarray:
        """Where the ids of ``lines`` are in ``ids``."""
        if self.kept is None:
            return lines
        at = np.searchsorted(self.kept, lines)
        if not (at < self.kept.size).all() or not (self.kept[np.minimum(at, self.kept.size - 1)] == lines).all():
            raise MissingIds
        return at

    def _taken(self, held: np.ndarray):
        """The ids at ``held`` as one pyarrow array, taken chunk by chunk (``ChunkedArray.take``
        would first join every chunk into one copy of all the ids)."""
        import pyarrow as pa

        bounds = np.cumsum([0] + [len(c) for c in self.ids.chunks])
        chunk = np.searchsorted(bounds, held, side="right") - 1
        order = np.argsort(chunk, kind="stable")
        by_chunk, sorted_lines = chunk[order], held[order]
        cuts = np.searchsorted(by_chunk, np.arange(len(bounds)))
        parts = [
            self.ids.chunk(c).take(pa.array(sorted_lines[cuts[c] : cuts[c + 1]] - bounds[c]))
            for c in range(len(bounds) - 1)
            if cuts[c + 1] > cuts[c]
        ]
        joined = pa.concat_arrays(parts) if parts else pa.array([], pa.string())
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        return joined.take(pa.array(inverse))

    def order_of(self, lines: np.ndarray) -> np.ndarray:
        """The indices that sort the document ids of ``lines`` (byte order, as trec_eval's strcmp)."""
        if self.exact:
            strings = self.strings(lines)
            return np.array(sorted(range(len(strings)), key=strings.__getitem__), dtype=np.int64)
        import pyarrow.compute as pc

        return pc.sort_indices(self._taken(self._held(np.asarray(lines, dtype=np.int64)))).to_numpy()

    def hashed(self) -> Columns:
        """The same columns with hashed document numbers (to compare with a hashed file)."""
        if not self.exact:
            return self
        import pyarrow as pa

        from .arrow import hash_strings

        by_code = hash_strings(pa.array(self.ids, pa.string()))
        return Columns(
            self.path,
            self.queries,
            self.runs,
            self.run_query,
            by_code[self.doc],
            self.value,
            False,
            pa.chunked_array([pa.array(self.strings(np.arange(self.doc.size)), pa.string())]),
        )


class MissingIds(Exception):
    """The ids of some lines were not kept (:func:`read`'s ``keep``): read the file again."""


def keeping(hashes: np.ndarray) -> np.ndarray:
    """A filter for :func:`read`'s ``keep``: a boolean table over the low 24 bits of ``hashes``
    (16 MB), true for every one of them and, by chance, for about hashes.size / 2**24 others.
    The ids of tied scores are kept too, as long as ties are neighbours (a run in score order)."""
    table = np.zeros(1 << 24, dtype=bool)
    table[hashes & 0xFFFFFF] = True
    return table


def read(path, layout: tuple[str, str, str], exact: bool = False, keep: np.ndarray | None = None) -> Columns:
    """The columns of a run (:data:`RUN`) or qrels (:data:`QRELS`) file; ValueError naming the
    file and line for a line without the right number of fields, a value that is not a number,
    a NaN score or a non-finite grade. ``exact`` asks for the line reader's exact codes; ``keep``
    (:func:`keeping`) keeps as strings only the ids that may be judged, the others are hashed and
    dropped. (A document listed twice for a query is found where the lines are grouped by
    query, which then calls :func:`locate_duplicate`.)"""
    if not exact:
        from . import arrow as _trec_arrow

        try:
            return _trec_arrow.read_arrow(Path(path), layout, keep)
        except (ImportError, _trec_arrow.Unreadable):
            pass  # the line reader reads what pyarrow could not, or names the bad line
    return _read_lines(Path(path), layout)


def _read_lines(path: Path, layout, duplicates: bool = False) -> Columns:
    """The same columns, one line at a time, ids coded exactly; errors name the file and line.
    A document listed twice is looked for only with ``duplicates`` (it costs a set of every
    line); otherwise numpy finds it, and :func:`locate_duplicate` reads again to name the line."""
    fields, value_field, twice = layout
    names = fields.split()
    width, at_q, at_d, at_v = len(names), names.index("qid"), names.index("docid"), names.index(value_field)
    queries: dict[str, int] = {}
    docs: dict[str, int] = {}
    query, doc, value = array.array("q"), array.array("q"), array.array("d")
    add_query, add_doc, add_value = query.append, doc.append, value.append
    query_code, doc_code = queries.setdefault, docs.setdefault
    seen: set[int] = set()
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            parts = line.split()
            if len(parts) != width:
                if not parts:
                    continue
                raise ValueError(f"{path}:{number}: a line needs {width} fields ({fields}); got {len(parts)}")
            try:
                v = float(parts[at_v])
            except ValueError:
                v = math.nan
            if not -math.inf < v < math.inf:  # a non-number, a NaN or an infinity: look closer
                v = _number(parts[at_v], value_field, f"{path}:{number}")
            q = query_code(parts[at_q], len(queries))
            d = doc_code(parts[at_d], len(docs))
            if duplicates:
                key = q << 32 | d
                if key in seen:
                    raise ValueError(f"{path}:{number}: document {parts[at_d]!r} is {twice} for query {parts[at_q]!r}")
                seen.add(key)
            add_query(q)
            add_doc(d)
            add_value(v)
    column = lambda a, t: np.frombuffer(a, dtype=t) if len(a) else np.zeros(0, t)  # noqa: E731
    per_line = column(query, np.int64)
    starts = np.flatnonzero(np.diff(per_line, prepend=-1))
    return Columns(
        str(path),
        list(queries),
        starts,
        per_line[starts],
        column(doc, np.int64),
        column(value, np.float64),
        True,
        list(docs),
    )


def _number(text: str, field: str, where: str) -> float:
    """The value of a field: ValueError naming the line for a non-number, a NaN, and for grades
    an infinity (a score may be infinite: it still sorts)."""
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{where}: {field} must be a number; got {text!r}") from None
    if math.isnan(v) or (field == "grade" and math.isinf(v)):
        raise ValueError(f"{where}: {field} must be a {'finite ' if field == 'grade' else ''}number, not {text!r}")
    return v


def locate_duplicate(path, layout) -> None:
    """Raise the line reader's error if the file lists a document twice for a query; return if
    it does not (two ids merely shared a hash)."""
    _read_lines(Path(path), layout, duplicates=True)
