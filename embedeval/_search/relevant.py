"""Who is relevant to whom: what the deep ranking needs to know about relevance.

The deep ranking (:mod:`embedeval._search.deep`) never holds a (queries x references)
relevance matrix beyond one block. It asks each source for R, the number of references
relevant to a query (``counts``), about single (query, reference) pairs (``pairs``: the
ignored references), and, except for class codes, whose references it keeps sorted by class
so that a query's relevant references are one slice, for each query's relevant references
(``columns``). Three sources:

* :class:`ClassCodes`: one class per item; relevant when the codes are equal.
* :class:`LabelBits`: several labels per item as bitsets; relevant when they share a label.
* :class:`Judgements`: per query, a sorted list of its relevant reference indices.

Queries are named by their index in the evaluation's query set (``query_ids``), references by
their index in the reference set.
"""

from __future__ import annotations

import numpy as np

from .. import _budget


class ClassCodes:
    """Single labels as integer codes: reference j is relevant to query i when their codes are equal.

    Parameters
    ----------
    query_codes : numpy.ndarray of shape (n_queries,), int
    reference_codes : numpy.ndarray of shape (n_references,), int
        Codes are small non-negative integers (as :func:`embedeval._inputs.encode_labels` gives).

    Attributes
    ----------
    n_codes : int
        One more than the largest code.
    """

    def __init__(self, query_codes: np.ndarray, reference_codes: np.ndarray):
        self.query_codes = np.asarray(query_codes, dtype=np.int64)
        self.reference_codes = np.asarray(reference_codes, dtype=np.int64)
        self.n_codes = max(int(self.query_codes.max(initial=-1)), int(self.reference_codes.max(initial=-1))) + 1
        self._class_sizes = np.bincount(self.reference_codes, minlength=self.n_codes)

    def pairs(self, query_ids: np.ndarray, references: np.ndarray) -> np.ndarray:
        """Relevance of each pair (query_ids[i], references[i]): bool array of shape (m,)."""
        return self.reference_codes[references] == self.query_codes[query_ids]

    def counts(self, query_ids: np.ndarray) -> np.ndarray:
        """R of each query over all references (none ignored): int array of shape (b,)."""
        return self._class_sizes[self.query_codes[query_ids]]


class LabelBits:
    """Multi-labels as bitsets: relevant when a query and a reference share at least one label.

    Parameters
    ----------
    query_bits : numpy.ndarray of shape (n_queries, w), uint64
    reference_bits : numpy.ndarray of shape (n_references, w), uint64
        Bit ``l`` of word ``l // 64`` set when the item has label ``l``.
    """

    def __init__(self, query_bits: np.ndarray, reference_bits: np.ndarray):
        self.query_bits = np.ascontiguousarray(query_bits, dtype=np.uint64).reshape(len(query_bits), -1)
        self.reference_bits = np.ascontiguousarray(reference_bits, dtype=np.uint64).reshape(len(reference_bits), -1)
        # R is counted against each distinct label set once: there are usually far fewer
        # distinct sets than references.
        self._sets, self._set_sizes = np.unique(self.reference_bits, axis=0, return_counts=True)

    def pairs(self, query_ids: np.ndarray, references: np.ndarray) -> np.ndarray:
        """Relevance of each pair (query_ids[i], references[i]): bool array of shape (m,)."""
        return (self.reference_bits[references] & self.query_bits[query_ids]).any(axis=1)

    def columns(self, query_ids: np.ndarray):
        """(indptr (b + 1,), references): each query's relevant references, ascending."""
        bits = self.query_bits[query_ids]
        shares = np.zeros((len(query_ids), len(self.reference_bits)), dtype=bool)
        for word in range(bits.shape[1]):
            shares |= (bits[:, word, None] & self.reference_bits[None, :, word]) != 0
        rows, refs = np.nonzero(shares)
        return np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=len(query_ids)))]), refs

    def counts(self, query_ids: np.ndarray) -> np.ndarray:
        """R of each query over all references (none ignored): int array of shape (b,)."""
        out = np.zeros(len(query_ids), dtype=np.int64)
        words = self._sets.shape[1]
        step = max(1, _budget.RANKING_ELEMENTS // max(1, len(query_ids) * words))
        bits = self.query_bits[query_ids][:, None, :]
        for s in range(0, len(self._sets), step):
            shares = (bits & self._sets[None, s : s + step, :]).any(axis=2)
            out += shares.astype(np.int64) @ self._set_sizes[s : s + step]
        return out


class Judgements:
    """Sparse judgements: the references relevant to each query, listed (CSR layout).

    Parameters
    ----------
    indptr : numpy.ndarray of shape (n_queries + 1,), int
        Query i's relevant references are ``indices[indptr[i]:indptr[i + 1]]``.
    indices : numpy.ndarray of shape (nnz,), int
        Reference indices, strictly increasing within each query.
    n_references : int
    """

    def __init__(self, indptr: np.ndarray, indices: np.ndarray, n_references: int):
        self.indptr = np.asarray(indptr, dtype=np.int64)
        self.indices = np.asarray(indices, dtype=np.int64)
        self.n_references = int(n_references)
        owner = np.repeat(np.arange(len(self.indptr) - 1), np.diff(self.indptr))
        # One sorted key per judged pair: query * n_references + reference.
        self._keys = owner * self.n_references + self.indices

    def pairs(self, query_ids: np.ndarray, references: np.ndarray) -> np.ndarray:
        """Relevance of each pair (query_ids[i], references[i]): bool array of shape (m,)."""
        keys = np.asarray(query_ids, dtype=np.int64) * self.n_references + references
        at = np.searchsorted(self._keys, keys)
        return self._keys[np.minimum(at, self._keys.size - 1)] == keys if self._keys.size else np.zeros(keys.size, bool)

    def columns(self, query_ids: np.ndarray):
        """(indptr (b + 1,), references): each query's relevant references, ascending."""
        starts, lengths = self.indptr[query_ids], self.counts(query_ids)
        indptr = np.concatenate([[0], np.cumsum(lengths)])
        at = np.repeat(starts - indptr[:-1], lengths) + np.arange(indptr[-1])
        return indptr, self.indices[at]

    def counts(self, query_ids: np.ndarray) -> np.ndarray:
        """R of each query over all references (none ignored): int array of shape (b,)."""
        return (self.indptr[1:] - self.indptr[:-1])[query_ids]
