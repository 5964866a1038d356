"""Ignore rules: references a query must not be ranked against, by one mechanism.

Three rules, any combination of them:

* leave-one-out: the references are the queries, and query i ignores reference i;
* ``ignore_same=(query_keys, reference_keys)``: a query ignores every reference whose key equals
  its own (re-identification junk with keys (identity, camera); OML's sequences; identical ids);
* ``ignore``: explicit lists, per query, of references to ignore (revisited Oxford's junk).

An ignored reference takes no rank and does not count in R. :class:`IgnoreRules` holds the
rules coded as integers; each query's number of ignored references is the size of the union of
what the rules name, so a reference named twice is ignored once.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._core.csr import offsets_within, take_rows
from .._inputs.arrays import _to_numpy, as_labels, encode_labels


@dataclass(frozen=True)
class IgnoreBlock:
    """The ignore rules of one query block (picklable: it travels in the block's job).

    Attributes
    ----------
    own : numpy.ndarray of shape (b,) or None
        Each query's own reference index, in leave-one-out evaluation.
    keys : numpy.ndarray of shape (b,) or None
        Each query's key code (``ignore_same``).
    listed : numpy.ndarray of shape (e,) or None
        ``row * n_references + reference`` of every explicitly ignored pair, sorted; ``row``
        is the query's position in the block.
    n_references : int
    """

    own: np.ndarray | None
    keys: np.ndarray | None
    listed: np.ndarray | None
    n_references: int

    def test(self, reference_keys: np.ndarray | None, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Whether reference ``idx[i, j]`` is ignored by block query ``rows[i]``: bool (c, m)."""
        out = np.zeros(idx.shape, dtype=bool) if self.own is None else idx == self.own[rows, None]
        if self.keys is None and (self.listed is None or not self.listed.size):
            return out  # an own index is never -1: no mask needed
        if self.keys is not None:
            out |= reference_keys[idx] == self.keys[rows, None]
        if self.listed is not None and self.listed.size:
            out |= _member(self.listed, rows[:, None] * self.n_references + idx)
        return out & (idx >= 0)

    def lists(self, reference_keys: np.ndarray | None, key_index, rows: np.ndarray) -> np.ndarray:
        """The references each block query ``rows[i]`` ignores, each once: int64 (c, w), padded with -1.

        ``key_index`` is ``(sorted reference keys, their reference indices)``
        (:attr:`embedeval._relevance.Shared.key_index`), None without ``ignore_same`` keys.
        """
        owners, refs = [], []
        if self.own is not None:
            own = self.own[rows]
            mine = np.ones(rows.size, dtype=bool)
            if self.keys is not None:  # already ignored by its key
                mine = reference_keys[own] != self.keys[rows]
            owners.append(np.flatnonzero(mine))
            refs.append(own[mine])
        if self.keys is not None:
            sorted_keys, order = key_index
            lo = np.searchsorted(sorted_keys, self.keys[rows])
            lengths = np.searchsorted(sorted_keys, self.keys[rows], side="right") - lo
            owners.append(np.repeat(np.arange(rows.size), lengths))
            refs.append(order[np.repeat(lo, lengths) + offsets_within(lengths)])
        if self.listed is not None and self.listed.size:
            lo = np.searchsorted(self.listed, rows * self.n_references)
            lengths = np.searchsorted(self.listed, (rows + 1) * self.n_references) - lo
            owners.append(np.repeat(np.arange(rows.size), lengths))
            refs.append(self.listed[np.repeat(lo, lengths) + offsets_within(lengths)] % self.n_references)
        owner = np.concatenate([np.zeros(0, np.int64), *owners])
        ref = np.concatenate([np.zeros(0, np.int64), *refs])
        order = np.argsort(owner, kind="stable")
        owner, ref = owner[order], ref[order]
        counts = np.bincount(owner, minlength=rows.size)
        out = np.full((rows.size, max(int(counts.max(initial=0)), 1)), -1, dtype=np.int64)
        out[owner, offsets_within(counts)] = ref
        return out


def _member(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Whether each of ``keys`` is in ``sorted_keys`` (1-D, ascending)."""
    pos = np.minimum(np.searchsorted(sorted_keys, keys), sorted_keys.size - 1)
    return sorted_keys[pos] == keys


@dataclass(frozen=True)
class IgnoreRules:
    """The ignore rules of an evaluation, coded.

    Attributes
    ----------
    n_references : int
    leave_one_out : bool
        Query i ignores reference i.
    query_keys, reference_keys : numpy.ndarray of shape (n_queries,) and (n_references,), or None
        Key codes of ``ignore_same``; equal codes are equal keys.
    indptr, indices : numpy.ndarray, or None
        The explicit lists as CSR rows, each sorted and without repeats, holding only the
        references that the other rules do not already ignore.
    n_listed : int
        Pairs given in the explicit lists (repeats and all).
    n_ignored : numpy.ndarray of shape (n_queries,), int64
        How many references each query ignores (the union of the rules).
    """

    n_references: int
    leave_one_out: bool
    query_keys: np.ndarray | None
    reference_keys: np.ndarray | None
    indptr: np.ndarray | None
    indices: np.ndarray | None
    n_listed: int
    n_ignored: np.ndarray

    @classmethod
    def build(cls, n_queries: int, n_references: int, leave_one_out: bool, keys=None, lists=None) -> IgnoreRules:
        """Rules from coded inputs: ``keys`` = (query key codes, reference key codes) or None;
        ``lists`` = (indptr, indices) of reference positions per query or None."""
        query_keys, reference_keys = keys if keys is not None else (None, None)
        n_ignored = np.zeros(n_queries, dtype=np.int64)
        if query_keys is not None:
            per_key = np.bincount(reference_keys, minlength=int(max(query_keys.max(), reference_keys.max())) + 1)
            n_ignored += per_key[query_keys]
        if leave_one_out:
            # query i's own reference, unless its key already ignores it
            n_ignored += 1 if query_keys is None else (query_keys != reference_keys)
        indptr = indices = None
        n_listed = 0
        if lists is not None:
            indptr, indices = lists
            n_listed = int(indices.size)
            rows = np.repeat(np.arange(n_queries), np.diff(indptr))
            covered = np.zeros(indices.size, dtype=bool)
            if leave_one_out:
                covered |= indices == rows
            if query_keys is not None:
                covered |= reference_keys[indices] == query_keys[rows]
            indices = indices[~covered]
            indptr = np.concatenate([[0], np.cumsum(np.bincount(rows[~covered], minlength=n_queries))])
            n_ignored += np.diff(indptr)
        return cls(n_references, leave_one_out, query_keys, reference_keys, indptr, indices, n_listed, n_ignored)

    @property
    def any(self) -> bool:
        return self.leave_one_out or self.query_keys is not None or self.indptr is not None

    def own_only(self) -> np.ndarray:
        """Queries that ignore their own reference by the leave-one-out rule alone (not by key)."""
        if not self.leave_one_out:
            return np.zeros(self.n_ignored.shape, dtype=bool)
        if self.query_keys is None:
            return np.ones(self.n_ignored.shape, dtype=bool)
        return self.query_keys != self.reference_keys

    def listed_pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(query, reference) of the listed pairs that no other rule ignores, each of shape (e,)."""
        if self.indptr is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        return np.repeat(np.arange(self.n_ignored.size), np.diff(self.indptr)), self.indices

    def is_ignored(self, queries: np.ndarray, references: np.ndarray) -> np.ndarray:
        """Whether each (query, reference) pair, 1-D arrays of one length, is ignored: the test of
        :meth:`IgnoreBlock.test` with every query in one block."""
        every = self.block(np.arange(self.n_ignored.size))
        return every.test(self.reference_keys, queries, references[:, None])[:, 0]

    def block(self, rows: np.ndarray) -> IgnoreBlock | None:
        """The rules of the queries ``rows`` (positions in the evaluation), for one block's job."""
        if not self.any:
            return None
        listed = None
        if self.indptr is not None:
            local, at = take_rows(self.indptr, rows)
            listed = local * self.n_references + self.indices[at]
        return IgnoreBlock(
            own=rows.astype(np.int64) if self.leave_one_out else None,
            keys=None if self.query_keys is None else self.query_keys[rows],
            listed=listed,
            n_references=self.n_references,
        )

    def describe(self, references: str = "references") -> str:
        """The rules in words, for the result's conventions (``references``: what they are called)."""
        parts = []
        if self.leave_one_out:
            parts.append("each query's own embedding (leave-one-out)")
        if self.query_keys is not None:
            parts.append(f"the {references} whose ignore_same key equals the query's")
        if self.indptr is not None:
            parts.append(f"the {references} listed in 'ignore' ({self.n_listed} pairs given)")
        return "ignored, removed by index (they take no rank and do not count in R): " + "; ".join(parts)


PLURAL = {"query": "queries", "reference": "references", "corpus": "corpus entries"}


def lookup(value, ids: dict | None, n: int, what: str, argument: str, id_argument: str | None = None) -> int:
    """The position of a query or reference that ``argument`` names by id (``ids``: id -> position)
    or, without ``ids``, by position (0 to n - 1). ``id_argument`` (``qrels``'s ``'query_ids'``,
    ``'corpus_ids'``): the argument giving the ids, which the messages then point to; without it
    they speak of positions and of the ``what`` ids."""
    if ids is not None:
        try:
            return ids[value]
        except (KeyError, TypeError):
            among = f"in '{id_argument}'" if id_argument else f"among the {what} ids"
            raise ValueError(f"'{argument}' names {what} {value!r}, which is not {among}") from None
    integral = not isinstance(value, bool) and isinstance(value, numbers.Integral)
    if integral and 0 <= value < n:
        return int(value)
    if id_argument is not None:
        raise ValueError(
            f"'{argument}' names {what} {value!r}, but without '{id_argument}' rows are named by position "
            f"(0 to {n - 1}); pass '{id_argument}'"
        )
    if not integral:
        raise TypeError(f"'{argument}' names {PLURAL.get(what, what)} by position (an int); got {value!r}")
    raise ValueError(f"'{argument}' names {what} {value}, but positions run from 0 to {n - 1}")


def per_query(value, argument: str, n: int, ids: dict | None, what: str, entry: str, rule: str, id_argument=None):
    """``(row, query as named, entry)`` for each query of ``value``: a mapping query -> entry
    (queries named as :func:`lookup` reads them) or a sequence of one ``entry`` per query (by
    row). ``rule``: what ``argument`` must be, for the message refusing anything else."""
    if isinstance(value, Mapping):
        return [(lookup(q, ids, n, what, argument, id_argument), q, e) for q, e in value.items()]
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        if len(value) != n:
            raise ValueError(f"'{argument}' as a sequence must hold one {entry} per {what} ({n}); got {len(value)}")
        return [(i, i, e) for i, e in enumerate(value)]
    raise TypeError(f"'{argument}' must {rule}; got {type(value).__name__}")


def read_lists(ignore, n_queries: int, n_references: int, query_ids=None, reference_ids=None, names=None):
    """``ignore`` as CSR (indptr, indices) over queries: sorted, without repeats.

    Parameters
    ----------
    ignore : mapping or sequence
        ``{query: iterable of references}`` (queries and references by position, or by id where
        ``query_ids`` / ``reference_ids`` map ids to positions), or a sequence with one
        iterable of references per query.
    names : (str, str), optional
        What the queries and references are called in messages (default "query", "reference").
    """
    what_q, what_r = names or ("query", "reference")
    rule = f"map each {what_q} to the {what_r}s it ignores"
    rows, cols = [], []
    for q, _, refs in per_query(ignore, "ignore", n_queries, query_ids, what_q, "list", rule):
        if isinstance(refs, (str, bytes)) or not hasattr(refs, "__iter__"):
            raise TypeError(f"'ignore' of {what_q} {q} must be an iterable of {what_r}s; got {type(refs).__name__}")
        refs = refs.tolist() if isinstance(refs, np.ndarray) else refs
        found = [lookup(r, reference_ids, n_references, what_r, "ignore") for r in refs]
        rows += [q] * len(found)
        cols += found
    keys = np.unique(np.asarray(rows, dtype=np.int64) * n_references + np.asarray(cols, dtype=np.int64))
    rows, cols = keys // n_references, keys % n_references
    return np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_queries))]), cols


def _key_rows(value, n: int, side: str, position: int):
    """One side of ``ignore_same`` as a 1-D array of hashable keys, or a 2-D array of key rows."""
    if isinstance(value, np.ndarray) or hasattr(value, "__array__") or hasattr(value, "detach"):
        value = _to_numpy(value, "ignore_same")
        if value.ndim == 2 and value.shape[0] == n:
            return value
    length = len(value) if hasattr(value, "__len__") else None
    if length != n:
        raise ValueError(f"'ignore_same' {side} keys must hold one key per {side} ({n}); got {length}")
    return as_labels(value, n, f"ignore_same[{position}]", f"{side}s")


def _width(keys) -> int | None:
    """The length of composite keys (rows of a 2-D array, or tuples), None for single keys."""
    if keys.ndim == 2:
        return keys.shape[1]
    lengths = {len(k) for k in keys.tolist() if isinstance(k, tuple)}
    if len(lengths) > 1:
        raise ValueError(f"'ignore_same' keys must all have one length; got tuples of lengths {sorted(lengths)}")
    return lengths.pop() if lengths else None


def read_keys(ignore_same, n_queries: int, n_references: int, reference: str = "reference"):
    """``ignore_same = (query_keys, reference_keys)`` coded: two int64 arrays, equal codes for equal keys."""
    if not isinstance(ignore_same, (tuple, list)) or len(ignore_same) != 2:
        raise TypeError(
            f"'ignore_same' must be a pair (query_keys, {reference}_keys); got {type(ignore_same).__name__}"
            + (f" of length {len(ignore_same)}" if isinstance(ignore_same, (tuple, list)) else "")
        )
    q = _key_rows(ignore_same[0], n_queries, "query", 0)
    r = _key_rows(ignore_same[1], n_references, reference, 1)
    wq, wr = _width(q), _width(r)
    if wq != wr:
        raise ValueError(
            f"'ignore_same' keys must have one length on both sides; got query keys of {wq or 1} field(s) "
            f"and {reference} keys of {wr or 1}"
        )
    if q.ndim == 2 and r.ndim == 2 and q.dtype.kind in "biuf" and r.dtype.kind in "biuf":
        _, inverse = np.unique(np.concatenate([q, r]), axis=0, return_inverse=True)
        inverse = inverse.reshape(-1).astype(np.int64)
        return inverse[:n_queries], inverse[n_queries:]
    as_tuples = [k if k.ndim == 1 else np.fromiter(map(tuple, k.tolist()), dtype=object, count=len(k)) for k in (q, r)]
    _, (qc, rc) = encode_labels(*as_tuples)
    return qc, rc
