"""The columns of a TREC run or qrels file, as both readers give them: numbers for the ids and
one value per line, no Python object per line.

Query ids are coded in order of first appearance; document ids are coded exactly by the line
reader and hashed to 63-bit numbers (:func:`hash_strings`) by the pyarrow reader, where equal ids
always get equal numbers and whoever relies on two numbers being different ids checks the strings
(:meth:`Columns.strings`). Both readers (:mod:`.lines`, :mod:`.arrow`) build on this module.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_MASK63 = np.uint64(0x7FFF_FFFF_FFFF_FFFF)
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
    ids : FixedIds, pyarrow.ChunkedArray or list of str
        The document ids per line (a batch reader's: numpy's or pyarrow's), or the distinct ones
        indexed by ``doc`` (exact).
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
        if isinstance(self.ids, FixedIds):
            return self.ids.strings(self._held(lines))
        return self._taken(self._held(lines)).to_pylist()

    def every_string(self) -> list:
        """The document id of every line, in file order."""
        if self.exact:
            return list(map(self.ids.__getitem__, self.doc.tolist()))
        if self.kept is not None:
            raise MissingIds
        if isinstance(self.ids, FixedIds):
            return self.ids.strings(np.arange(self.doc.size))
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
            self.ids.chunk(c).take(int_array(sorted_lines[cuts[c] : cuts[c + 1]] - bounds[c]))
            for c in range(len(bounds) - 1)
            if cuts[c + 1] > cuts[c]
        ]
        joined = pa.concat_arrays(parts) if parts else string_array([])
        inverse = np.empty_like(order)
        inverse[order] = np.arange(order.size)
        return joined.take(int_array(inverse))

    def order_of(self, lines: np.ndarray) -> np.ndarray:
        """The indices that sort the document ids of ``lines`` (byte order, as trec_eval's strcmp)."""
        if self.exact:
            strings = self.strings(lines)
            return np.array(sorted(range(len(strings)), key=strings.__getitem__), dtype=np.int64)
        held = self._held(np.asarray(lines, dtype=np.int64))
        if isinstance(self.ids, FixedIds):  # numpy compares bytes strings byte by byte, as strcmp
            return np.argsort(self.ids.take(held), kind="stable")
        import pyarrow.compute as pc

        return as_numpy(pc.sort_indices(self._taken(held)))

    def hashed(self, hasher=None) -> Columns:
        """The same columns with document numbers hashed by ``hasher`` (default
        :func:`hash_strings`), to compare with a file a batch reader hashed with it."""
        if not self.exact:
            return self
        encoded = [text.encode("utf-8", "surrogatepass") for text in self.ids]
        if not any(b"\x00" in e for e in encoded):  # numpy's bytes strings end at a NUL
            fixed = np.array(encoded, dtype=np.bytes_) if encoded else np.zeros(0, "S1")
            by_code, ids = (hasher or hash_strings)(fixed), FixedIds([fixed[self.doc]])
            hashes = by_code[self.doc]
            return Columns(self.path, self.queries, self.runs, self.run_query, hashes, self.value, False, ids)
        import pyarrow as pa

        by_code = (hasher or hash_strings)(string_array(self.ids))
        return Columns(
            self.path,
            self.queries,
            self.runs,
            self.run_query,
            by_code[self.doc],
            self.value,
            False,
            pa.chunked_array([string_array(self.strings(np.arange(self.doc.size)))]),
        )


class FixedIds:
    """Document ids as numpy bytes strings (dtype ``S``, UTF-8, without NUL bytes), in parts of
    their own widths (a batch reader's batches): ``parts`` in order, ``n`` ids in all."""

    def __init__(self, parts: list):
        self.parts = parts
        self.bounds = np.cumsum([0] + [part.size for part in parts])

    def take(self, held: np.ndarray) -> np.ndarray:
        """The ids at ``held`` (indices over all parts), one bytes array as wide as the widest."""
        held = np.asarray(held, dtype=np.int64)
        width = max([part.dtype.itemsize for part in self.parts], default=1)
        out = np.zeros(held.size, dtype=f"S{width}")
        part_of = np.searchsorted(self.bounds, held, side="right") - 1
        by_part = np.argsort(part_of, kind="stable")
        cuts = np.searchsorted(part_of[by_part], np.arange(len(self.parts) + 1))
        for p in np.flatnonzero(np.diff(cuts)).tolist():
            at = by_part[cuts[p] : cuts[p + 1]]
            out[at] = self.parts[p][held[at] - self.bounds[p]]
        return out

    def strings(self, held: np.ndarray) -> list:
        """The ids at ``held`` as Python strings."""
        return [b.decode("utf-8") for b in self.take(held).tolist()]


class MissingIds(Exception):
    """The ids of some lines were not kept (:func:`read`'s ``keep``): read the file again."""


def string_array(strings) -> object:
    """A pyarrow string array of Python ``strings``, built from its buffers (``pyarrow.array`` of a
    list imports pandas where it is installed, to test whether the list is one of its types)."""
    import pyarrow as pa

    data = [text.encode("utf-8", "surrogatepass") for text in strings]
    offsets = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, data), np.int64, count=len(data)), out=offsets[1:])
    if offsets[-1] >= 1 << 31:  # beyond 32-bit offsets: pyarrow's own conversion
        return pa.array(list(strings), pa.string())
    return pa.StringArray.from_buffers(len(data), pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(b"".join(data)))


def int_array(values: np.ndarray) -> object:
    """A pyarrow int64 array of ``values`` over their bytes (``pyarrow.array`` would import pandas)."""
    import pyarrow as pa

    values = np.ascontiguousarray(values, dtype=np.int64)
    return pa.Array.from_buffers(pa.int64(), values.size, [None, pa.py_buffer(values)])


def bool_array(values: np.ndarray) -> object:
    """A pyarrow boolean array of ``values`` over their packed bits (``pyarrow.array`` would import pandas)."""
    import pyarrow as pa

    values = np.asarray(values, dtype=bool)
    return pa.Array.from_buffers(pa.bool_(), values.size, [None, pa.py_buffer(np.packbits(values, bitorder="little"))])


def as_numpy(array) -> np.ndarray:
    """A pyarrow array without nulls as numpy, read from its buffers: a view for numbers, unpacked
    bits for booleans. (``to_numpy`` and ``np.asarray`` import pandas where it is installed, for
    its extension types, which reading a TREC file never needs: bench/NOTES.md.)"""
    import pyarrow as pa

    if array.null_count:
        raise ValueError("as_numpy reads arrays without nulls")
    n, data = len(array), array.buffers()[1]
    if pa.types.is_boolean(array.type):
        bits = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        return np.unpackbits(bits, bitorder="little")[array.offset : array.offset + n].astype(bool)
    dtype = np.dtype(str(array.type))  # "double", "int64", "uint64": numpy reads these names
    return np.frombuffer(data, dtype, count=n, offset=array.offset * dtype.itemsize) if n else np.zeros(0, dtype)


def keeping(hashes: np.ndarray) -> np.ndarray:
    """A filter for :func:`read`'s ``keep``: a boolean table over the low bits of ``hashes``, true
    for every one of them and, by chance, for about one number in 64 others (the table has
    at least 64 cells per hash: 2**16 to 2**24 cells, a power of two). The ids of tied scores are
    kept too, as long as ties are neighbours (a run in score order)."""
    bits = min(max(int(np.ceil(np.log2(max(hashes.size, 1) * 64))), 16), 24)
    table = np.zeros(1 << bits, dtype=bool)
    table[hashes & ((1 << bits) - 1)] = True
    return table


def hash_strings(chunk) -> np.ndarray:
    """A 63-bit hash of each string of ``chunk``, int64 of shape (len(chunk),): a pyarrow string
    array, or a numpy bytes array (dtype ``S``; ids without NUL bytes) holding the UTF-8 bytes.

    The hash of a string depends on its bytes alone (not on the other strings of the array, nor
    on which of the two forms holds it): its length seeds it, and each of its 8-byte words (the
    last one zero-padded) is mixed in by one round, so an id gets the same number in every file
    and every batch of a file. The bytes are read 8 at a time through an unaligned uint64 view of
    the data buffer: one vectorised pass per word over the strings that still have that word."""
    n = len(chunk)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    if isinstance(chunk, np.ndarray):  # fixed width, NUL-padded: item i starts at i * itemsize
        data = np.ascontiguousarray(chunk).view(np.uint8)
        starts = np.arange(n, dtype=np.int64) * chunk.dtype.itemsize
        lengths = np.char.str_len(chunk).astype(np.int64)
    else:
        offsets = np.frombuffer(chunk.buffers()[1], np.int32)[chunk.offset : chunk.offset + n + 1].astype(np.int64)
        data = np.frombuffer(chunk.buffers()[2], np.uint8) if chunk.buffers()[2] is not None else np.zeros(0, np.uint8)
        starts, lengths = offsets[:-1], np.diff(offsets)
    padded = np.zeros(data.size + 8, np.uint8)
    padded[: data.size] = data
    words = np.ndarray(shape=(padded.size - 7,), dtype="<u8", buffer=padded, strides=(1,))
    h = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    n_words = (lengths + 7) // 8
    every = int(n_words.min())  # rounds that every string takes part in: no selection needed
    for w in range(int(n_words.max())):
        rows = slice(None) if w < every else np.flatnonzero(n_words > w)
        left = np.minimum(lengths[rows] - 8 * w, 8).astype(np.uint64)  # 1 to 8 bytes of this word
        word = words[starts[rows] + 8 * w] & (~np.uint64(0) >> (np.uint64(8) * (np.uint64(8) - left)))
        mixed = (h[rows] ^ word) * np.uint64(0xBF58476D1CE4E5B9)
        h[rows] = mixed ^ (mixed >> np.uint64(31))
    h *= np.uint64(0x94D049BB133111EB)
    h ^= h >> np.uint64(29)
    return (h & _MASK63).view(np.int64)
