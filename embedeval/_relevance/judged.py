"""Relevance from judgements (qrels): per query, a sparse set of (reference, grade).

The conventions are those of :func:`embedeval.evaluate_rankings` (trec_eval's): a judged reference
is relevant when its grade reaches ``threshold``; unjudged references are not relevant; graded
metrics read the grades, negative grades giving no gain. Judgements are held as CSR rows sorted
by reference index, and a block looks up its candidates' grades by binary search.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .._core.csr import take_rows
from .ignore import lookup, per_query
from .marked import Marked


@dataclass(frozen=True)
class JudgedPart:
    """A block's judgements: ``keys`` = row * n_references + reference (sorted) and their grades."""

    keys: np.ndarray
    values: np.ndarray
    n_references: int

    def grades(self, _reference_side, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """The grade of reference ``idx[i, j]`` for block query ``rows[i]`` (0 if unjudged): (c, m)."""
        if self.keys.size == 0:
            return np.zeros(idx.shape)
        wanted = rows[:, None] * self.n_references + idx
        pos = np.minimum(np.searchsorted(self.keys, wanted), self.keys.size - 1)
        return np.where((self.keys[pos] == wanted) & (idx >= 0), self.values[pos], 0.0)

    def marked(self, _reference_side, rows: np.ndarray, counts: np.ndarray, gains: bool, threshold) -> Marked:
        """The deep ranking's view of the block queries ``rows``: their judged references graded
        above 0 (``gains``, with their grades) or at least ``threshold`` (binary), listed."""
        bounds = np.searchsorted(self.keys, np.arange(int(rows.max(initial=-1)) + 2) * self.n_references)
        keep = self.values > 0 if gains else self.values >= threshold

        def lister(local):
            owner, at = take_rows(bounds, rows[local])
            kept = keep[at]
            owner, at = owner[kept], at[kept]
            indptr = np.zeros(len(local) + 1, dtype=np.int64)
            np.cumsum(np.bincount(owner, minlength=len(local)), out=indptr[1:])
            return indptr, self.keys[at] % self.n_references, self.values[at] if gains else None

        return Marked(counts, lister=lister, graded=gains)


@dataclass(frozen=True)
class Absent:
    """Judgements that name documents absent from the corpus: their query rows and grades, and
    the first one's ``(query, document)`` ids and their number, for the warning line."""

    rows: np.ndarray
    grades: np.ndarray
    example: tuple
    count: int


@dataclass(frozen=True)
class Judgements:
    """Judged (reference, grade) pairs per query.

    Attributes
    ----------
    n_references : int
    indptr : numpy.ndarray of shape (n_queries + 1,), int64
    indices : numpy.ndarray of shape (n_judged,), int64
        Judged references, ascending within each query.
    values : numpy.ndarray of shape (n_judged,), float64
        Their grades.
    threshold : float
        The grade at which a judged reference is relevant.
    judged : numpy.ndarray of shape (n_queries,), bool
        Queries that the judgements name at all (a query named with no pair is judged).
    absent : Absent or None
        Judgements of documents that are not in the corpus (``absent_docs="count"``): relevant
        and never retrieved, as trec_eval counts a judged document that a run lacks.
    """

    n_references: int
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray
    threshold: float
    judged: np.ndarray
    absent: Absent | None = None
    graded = True
    reference_side = None

    def _rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.indptr.size - 1), np.diff(self.indptr))

    def query_part(self, rows: np.ndarray) -> JudgedPart:
        local, at = take_rows(self.indptr, rows)
        return JudgedPart(local * self.n_references + self.indices[at], self.values[at], self.n_references)

    def n_absent(self) -> np.ndarray:
        """Per query, the relevant judged documents absent from the corpus (they count in R)."""
        n = self.indptr.size - 1
        if self.absent is None:
            return np.zeros(n, dtype=np.int64)
        return np.bincount(self.absent.rows[self.absent.grades >= self.threshold], minlength=n)

    def absent_gains(self) -> tuple[np.ndarray, np.ndarray]:
        """(n per query, grades) of the positively graded absent documents, grades decreasing
        within each query and queries in order: their share of the ideal DCG."""
        n = self.indptr.size - 1
        if self.absent is None:
            return np.zeros(n, dtype=np.int64), np.zeros(0)
        keep = self.absent.grades > 0
        rows, grades = self.absent.rows[keep], self.absent.grades[keep]
        order = np.lexsort((-grades, rows))
        return np.bincount(rows, minlength=n), grades[order]

    def n_relevant(self) -> np.ndarray:
        """R before ignoring: judged references with a grade >= threshold (in the corpus)."""
        relevant = self.values >= self.threshold
        return np.bincount(self._rows()[relevant], minlength=self.indptr.size - 1)

    def kept(self, rules) -> np.ndarray:
        """Which judged pairs no ignore rule removes: bool of shape (n_judged,)."""
        if rules is None:  # Relevance.build passes None for rules that ignore nothing
            return np.ones(self.indices.size, dtype=bool)
        return ~rules.is_ignored(self._rows(), self.indices)

    def relevant_ignored(self, rules) -> np.ndarray:
        """Per query, the relevant judged references that the rules ignore."""
        lost = (self.values >= self.threshold) & ~self.kept(rules)
        return np.bincount(self._rows()[lost], minlength=self.indptr.size - 1)

    def gains(self, rules) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positive grades of the judged references no rule ignores: (n_gain per query, CSR indptr,
        grades sorted in decreasing order within each query): what the ideal DCG is made of."""
        rows = self._rows()
        keep = self.kept(rules) & (self.values > 0)
        order = np.lexsort((-self.values[keep], rows[keep]))
        n_gain = np.bincount(rows[keep], minlength=self.indptr.size - 1)
        return n_gain, np.concatenate([[0], np.cumsum(n_gain)]), self.values[keep][order]


def _grade(value, query, doc) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"'qrels' grades must be finite numbers; got {value!r} for {doc!r} of query {query!r}")
    return float(value)


def _pairs(entry, query) -> list:
    """One query's judgements as (id, grade) pairs: a mapping as given, a set or list of ids grade 1."""
    if isinstance(entry, Mapping):
        return [(doc, _grade(g, query, doc)) for doc, g in entry.items()]
    if isinstance(entry, (set, frozenset, Sequence, np.ndarray)) and not isinstance(entry, (str, bytes)):
        ids = entry.tolist() if isinstance(entry, np.ndarray) else list(entry)
        if len(set(ids)) != len(ids):
            raise ValueError(f"'qrels' of query {query!r} lists a corpus id twice")
        return [(doc, 1.0) for doc in ids]
    raise TypeError(
        f"'qrels' of query {query!r} must be a mapping corpus id -> grade, or a set or list of relevant ids; "
        f"got {type(entry).__name__}"
    )


ABSENT_DOCS = ("count", "drop", "error")


def read_judgements(
    qrels, n_queries: int, n_references: int, query_ids, corpus_ids, threshold: float, absent_docs: str = "error"
) -> Judgements:
    """Judgements from ``qrels`` ({query: {corpus id: grade}} or a sequence with one entry per
    query), with queries and corpus entries named through the id -> position maps ``query_ids``
    and ``corpus_ids`` (None: by position). Every query id must be known and no document judged
    twice. A corpus id that ``corpus_ids`` lacks is, by ``absent_docs``: ``"error"``, an error;
    ``"count"``, kept in :attr:`Judgements.absent` (relevant, never retrieved); ``"drop"``,
    left out. Positions out of range are always an error."""
    rule = "map query ids to {corpus id: grade}"
    items = per_query(qrels, "qrels", n_queries, query_ids, "query", "entry", rule, "query_ids")
    judged = np.zeros(n_queries, dtype=bool)
    rows, cols, grades = [], [], []
    absent: list = []  # (row, grade, query, doc)
    lenient = corpus_ids is not None and absent_docs != "error"
    for row, query, entry in items:
        if judged[row]:
            raise ValueError(f"'qrels' names query {query!r} twice (as two ids of one query row)")
        judged[row] = True
        for doc, grade in _pairs(entry, query):
            if lenient and _absent(corpus_ids, doc):
                absent.append((row, grade, query, doc))
                continue
            rows.append(row)
            cols.append(lookup(doc, corpus_ids, n_references, "corpus", "qrels", "corpus_ids"))
            grades.append(grade)
    keys = np.asarray(rows, dtype=np.int64) * n_references + np.asarray(cols, dtype=np.int64)
    order = np.argsort(keys, kind="stable")
    keys, values = keys[order], np.asarray(grades, dtype=np.float64)[order]
    if keys.size > 1 and (keys[1:] == keys[:-1]).any():
        twice = keys[1:][keys[1:] == keys[:-1]][0]
        raise ValueError(
            f"'qrels' must judge a corpus row once per query; got row {twice % n_references} twice for query row "
            f"{twice // n_references}"
        )
    indptr = np.concatenate([[0], np.cumsum(np.bincount(keys // n_references, minlength=n_queries))])
    kept = None
    if absent:
        counted = absent if absent_docs == "count" else []
        kept = Absent(
            np.asarray([a[0] for a in counted], dtype=np.int64),
            np.asarray([a[1] for a in counted], dtype=np.float64),
            (absent[0][2], absent[0][3]),
            len(absent),
        )
    return Judgements(n_references, indptr, keys % n_references, values, threshold, judged, kept)


def _absent(ids: dict, doc) -> bool:
    try:
        return doc not in ids
    except TypeError:  # unhashable: lookup names it
        return False


def id_positions(ids, n: int, argument: str) -> dict | None:
    """``{id: position}`` of a sequence of ``n`` distinct ids (None stays None)."""
    if ids is None:
        return None
    if isinstance(ids, np.ndarray) or hasattr(ids, "__array__"):
        ids = np.asarray(ids).tolist()
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Sequence):
        raise TypeError(f"'{argument}' must be a sequence of ids, one per row; got {type(ids).__name__}")
    if len(ids) != n:
        raise ValueError(f"'{argument}' must hold one id per row ({n}); got {len(ids)}")
    positions: dict = {}
    for i, value in enumerate(ids):
        try:
            first = positions.setdefault(value, i)
        except TypeError:
            raise TypeError(f"'{argument}' must hold hashable ids; got {value!r} at row {i}") from None
        if first != i:
            raise ValueError(f"'{argument}' must be distinct; got {value!r} at rows {first} and {i}")
    return positions
