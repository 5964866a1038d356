"""Who is relevant to whom, and whom each query ignores: the relevance model of every search-based evaluation.

A *source* says which references are relevant to a query:

* :class:`~embedeval._relevance.labels.ClassLabels`: the same class label (metric learning, re-ID);
* :class:`~embedeval._relevance.labels.MultiLabels`: at least one shared label (multi-label);
* :class:`~embedeval._relevance.judged.Judgements`: judged (reference, grade) pairs (qrels).

:class:`~embedeval._relevance.ignore.IgnoreRules` say which references a query ignores
(leave-one-out, ``ignore_same``, ``ignore``). :class:`Relevance` joins the two once per
evaluation: R of each query after ignoring (computed exactly, in bounded memory), its number of
ignored references, the skip reasons, the reference side shipped to every worker once
(:class:`Shared`) and, per block, the query side that travels in the block's job
(:class:`QueryBlock`). On the worker, :class:`Judge` binds the two and answers the search
(relevance classes, ignored references) and the kernels (:class:`~embedeval._metrics.kernels.Hits`).

Every source offers: ``n_relevant()`` (R before ignoring), ``relevant_ignored(rules)`` (relevant
references that the rules remove), ``reference_side`` and ``query_part(rows)`` (whose
``grades(reference_side, rows, idx)`` gives each candidate's relevance: booleans for binary
sources, grades for judgements), ``graded`` and ``threshold``.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._core.csr import offsets_within, take_rows
from .._metrics.kernels import Hits, finite_count, hits_from_dense, hits_from_graded, pack
from .._search.ignored import Ignored
from .ignore import IgnoreBlock, IgnoreRules
from .judged import Judgements
from .labels import ClassLabels, CodePart, MultiLabels
from .marked import Marked

__all__ = [
    "ClassLabels",
    "IgnoreRules",
    "Judge",
    "Judgements",
    "Marked",
    "MultiLabels",
    "QueryBlock",
    "Relevance",
    "Shared",
]


@dataclass(frozen=True)
class Shared:
    """The reference side of relevance: shipped to every worker once (scattered on Dask).

    Attributes
    ----------
    source : object
        The source's reference side (``grades`` and ``marked`` of its query parts read it).
    reference_keys : numpy.ndarray of shape (n_references,), or None
        The references' ``ignore_same`` key codes.
    class_codes : numpy.ndarray of shape (n_references,), or None
        The references' class codes when relevance is one class label per item: the deep
        ranking (:class:`embedeval._search.deep.DeepRanker`) keeps the references sorted by them.
    """

    source: object
    reference_keys: np.ndarray | None
    class_codes: np.ndarray | None = None

    @cached_property
    def class_keys(self):
        """``code * n_references + index`` of every reference, ascending (the references of a class
        in a range of indices, by search; made once per process that needs it), or None without
        class codes."""
        if self.class_codes is None:
            return None
        codes = np.asarray(self.class_codes, dtype=np.int64)
        return np.sort(codes * codes.size + np.arange(codes.size))

    @cached_property
    def key_index(self):
        """``(sorted reference keys, the reference of each)``: the references of a key, by search
        (made once per process that needs it), or None without keys."""
        if self.reference_keys is None:
            return None
        order = np.argsort(self.reference_keys, kind="stable")
        return self.reference_keys[order], order


@dataclass(frozen=True)
class QueryBlock:
    """The query side of relevance for one block of queries (picklable: it travels in the job).

    Attributes
    ----------
    source : object
        The source's query part (``grades(reference_side, rows, idx)``).
    ignore : IgnoreBlock or None
    n_relevant, n_ignored : numpy.ndarray of shape (b,), int64
        R after ignoring, and the number of ignored references.
    threshold : float or None
        For graded sources, the grade at which a reference is relevant.
    n_gain : numpy.ndarray of shape (b,) or None
        For graded sources, the positively graded references no rule ignores.
    ideal : numpy.ndarray of shape (b, w) or None
        Their grades in decreasing order, zero-padded (the ideal ranking of nDCG), with those of
        the relevant documents absent from the corpus.
    n_absent : numpy.ndarray of shape (b,) or None
        Relevant judged documents absent from the corpus: in R, never found by the search.
    """

    source: object
    ignore: IgnoreBlock | None
    n_relevant: np.ndarray
    n_ignored: np.ndarray
    threshold: float | None = None
    n_gain: np.ndarray | None = None
    ideal: np.ndarray | None = None
    n_absent: np.ndarray | None = None

    @property
    def n_counted(self) -> np.ndarray:
        """R as the metrics count it: ``n_relevant`` (what the search can find) plus ``n_absent``."""
        return self.n_relevant if self.n_absent is None else self.n_relevant + self.n_absent

    def judge(self, shared: Shared, metrics) -> Judge:
        return Judge(self, shared, metrics)


class Judge:
    """A block's relevance bound to the reference side, on the process that runs the block.

    Parameters
    ----------
    block : QueryBlock
    shared : Shared
    metrics : sequence of Metric
        With a graded metric (nDCG, DCG, CG) among them, the search's relevance classes are
        grades; otherwise binary relevance.
    """

    def __init__(self, block: QueryBlock, shared: Shared, metrics):
        self.block, self.shared = block, shared
        self.by_grade = block.threshold is not None and any(m.spec.graded for m in metrics)

    def grades(self, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        """Relevance of reference ``idx[i, j]`` to block query ``rows[i]``: bool, or grades."""
        return self.block.source.grades(self.shared.source, rows, idx)

    def class_pairs(self):
        """With one class label per item, binary relevance and no ignore rule but each query's
        own index: a function ``(start, stop) -> (rows, cols, excluded)`` giving, for the block's
        queries and the references ``start:stop``, the (row, column) of each relevant reference
        the query does not ignore, row-major, and the flat positions ``row (stop - start) +
        column - start`` of those relevant or ignored, increasing: what the masks of
        :meth:`grades` and the ignore rules give, found from the class's indices by search
        (:attr:`Shared.class_keys`). None where relevance is anything else."""
        block, keys = self.block, self.shared.class_keys
        rules = block.ignore
        if keys is None or self.by_grade or not isinstance(block.source, CodePart):
            return None
        if rules is not None and (rules.keys is not None or (rules.listed is not None and rules.listed.size)):
            return None
        own = None if rules is None else rules.own
        n = keys.size
        base = np.asarray(block.source.codes, dtype=np.int64) * n
        every = np.arange(base.size)

        def pairs(start: int, stop: int):
            lo, hi = np.searchsorted(keys, base + start), np.searchsorted(keys, base + stop)
            rows = np.repeat(every, hi - lo)
            cols = keys[np.repeat(lo, hi - lo) + offsets_within(hi - lo)] - base[rows]
            flat = rows * (stop - start) + cols - start
            if own is None:
                return rows, cols, flat
            inside = np.flatnonzero((own >= start) & (own < stop))
            keep = cols != own[rows]
            if keep.size - np.count_nonzero(keep) < inside.size:  # an own reference of another class
                flat = np.union1d(flat, inside * (stop - start) + own[inside] - start)
            return rows[keep], cols[keep], flat

        return pairs

    def relevant(self, grades: np.ndarray) -> np.ndarray:
        return grades if grades.dtype == bool else grades >= self.block.threshold

    def classes(self, rows: np.ndarray):
        """The search's ``classes(local, idx)`` for the queries ``rows`` of the block."""

        def of(local, idx):
            grades = self.grades(rows[local], idx)
            return grades if self.by_grade else self.relevant(grades)

        return of

    def ignored(self, rows: np.ndarray) -> Ignored | None:
        """The search's :class:`Ignored` for the queries ``rows`` of the block (None: none ignored)."""
        rules = self.block.ignore
        if rules is None:
            return None
        keys = self.shared.reference_keys
        return Ignored(self.block.n_ignored[rows], lambda local, idx: rules.test(keys, rows[local], idx))

    def marked(self, rows: np.ndarray) -> Marked:
        """What the deep ranking reads of the queries ``rows`` of the block: their relevant references,
        or with graded metrics every positively graded one with its grade."""
        block = self.block
        counts = block.n_gain[rows] if self.by_grade else block.n_relevant[rows]
        return block.source.marked(self.shared.source, rows, counts, self.by_grade, block.threshold)

    def ignored_lists(self, rows: np.ndarray) -> np.ndarray | None:
        """The references each of the queries ``rows`` ignores, (c, w) padded with -1 (None: none)."""
        rules = self.block.ignore
        if rules is None:
            return None
        return rules.lists(self.shared.reference_keys, self.shared.key_index, rows)

    def deep_hits(self, ranker, queries: np.ndarray, rows: np.ndarray, depth, first):
        """:meth:`hits` of the queries ``rows`` (``queries``: theirs) from the deep ranking
        (:meth:`embedeval._search.deep.DeepRanker.ranks`), ranked ``depth`` deep, the ranks of
        their first ``first`` relevant references reported."""
        ranks, grades = ranker.ranks(queries, self.marked(rows), depth, first, self.ignored_lists(rows))
        n_relevant = self.block.n_counted[rows]
        if grades is None:
            found = finite_count(ranks, ascending=True)  # the deep ranking's rows ascend
            return Hits(ranks, n_relevant, ascending=True), found, found
        ranked = np.isfinite(ranks)
        # Marked: every positively graded reference; relevant: those graded at least the threshold.
        relevant = ranked & (grades >= self.block.threshold)
        owner, _ = np.nonzero(relevant)
        hits = Hits(
            pack(owner, ranks[relevant], rows.size),
            n_relevant,
            ranks,
            np.where(ranked, grades, 0.0),
            self.block.ideal[rows],
        )
        return hits, np.count_nonzero(relevant, axis=1), np.count_nonzero(ranked, axis=1)

    def hits(self, rows: np.ndarray, ranked: np.ndarray) -> tuple[Hits, np.ndarray, np.ndarray]:
        """Hits of the rankings ``ranked`` (c, depth) of block queries ``rows`` (-1: nothing ranked),
        and per query how many relevant and how many positively graded references they hold."""
        grades = self.grades(rows, ranked)
        valid = ranked >= 0
        if grades.dtype == bool:
            relevant = grades & valid
            found = np.count_nonzero(relevant, axis=1)
            return hits_from_dense(relevant, self.block.n_counted[rows]), found, found
        grades = np.where(valid, grades, 0.0)
        hits = hits_from_graded(grades, self.block.threshold, self.block.n_counted[rows], self.block.ideal[rows])
        return hits, np.count_nonzero(grades >= self.block.threshold, axis=1), np.count_nonzero(grades > 0, axis=1)


@dataclass(frozen=True)
class Relevance:
    """Relevance and ignore rules of one evaluation, joined.

    Attributes
    ----------
    source : ClassLabels, MultiLabels or Judgements
    rules : IgnoreRules or None
    n_references : int
    n_relevant : numpy.ndarray of shape (n_queries,), int64
        R: the relevant references of each query that no rule ignores.
    n_before : numpy.ndarray of shape (n_queries,), int64
        R before ignoring.
    n_own : numpy.ndarray of shape (n_queries,), int64
        1 where the query's own row (leave-one-out's row i, or its ``query_in_reference`` row)
        is among the ``n_before``, else 0: the own row is never "a relevant reference that was
        ignored" when the skip reasons are told apart.
    n_ignored : numpy.ndarray of shape (n_queries,), int64
    gains : tuple or None
        Graded sources: (n_gain, indptr, grades) of the positively graded references no rule
        ignores, grades decreasing within each query (:meth:`Judgements.gains`).
    n_absent : numpy.ndarray of shape (n_queries,) or None
        Judgements only: relevant judged documents absent from the corpus, counted in R
        (:meth:`Judgements.n_absent`); their grades join the ideal ranking.
    """

    source: object
    rules: IgnoreRules | None
    n_references: int
    n_relevant: np.ndarray
    n_before: np.ndarray
    n_ignored: np.ndarray
    gains: tuple | None = None
    n_absent: np.ndarray | None = None
    n_own: np.ndarray | None = None

    @classmethod
    def build(cls, source, n_references: int, rules: IgnoreRules | None = None, own=None) -> Relevance:
        """``own``: each query's row in the reference set (-1 for none), or None; leave-one-out's
        own rows (row i) are read from ``rules``."""
        before = np.asarray(source.n_relevant(), dtype=np.int64)
        rules = rules if rules is not None and rules.any else None  # rules that ignore nothing: none
        lost = 0 if rules is None else source.relevant_ignored(rules)
        n_ignored = np.zeros(before.size, dtype=np.int64) if rules is None else rules.n_ignored
        gains = source.gains(rules) if source.graded else None
        absent = source.n_absent() if getattr(source, "absent", None) is not None else None
        if absent is not None and gains is not None:
            gains = _with_absent(gains, *source.absent_gains())
        n_own = _relevant_own_rows(source, rules, own, before.size)
        return cls(source, rules, n_references, before - lost, before, n_ignored, gains, absent, n_own)

    @property
    def n_counted(self) -> np.ndarray:
        """R as the metrics count it: the relevant references no rule ignores, plus the relevant
        judged documents absent from the corpus."""
        return self.n_relevant if self.n_absent is None else self.n_relevant + self.n_absent

    @property
    def n_rankable(self) -> np.ndarray:
        """References each query can be ranked against, shape (n_queries,)."""
        return self.n_references - self.n_ignored

    @property
    def shared(self) -> Shared:
        keys = None if self.rules is None else self.rules.reference_keys
        codes = self.source.reference_codes if isinstance(self.source, ClassLabels) else None
        return Shared(self.source.reference_side, keys, codes)

    def block(self, rows: np.ndarray) -> QueryBlock:
        """The query side of the queries ``rows`` (positions in the evaluation)."""
        graded = {}
        if self.gains is not None:
            n_gain, indptr, values = self.gains[:3]
            n_ideal = np.diff(indptr)  # n_gain, and the absent documents' gains
            ideal = np.zeros((rows.size, max(int(n_ideal[rows].max(initial=0)), 1)))
            local, at = take_rows(indptr, rows)
            ideal[local, offsets_within(n_ideal[rows])] = values[at]
            graded = {"threshold": self.source.threshold, "n_gain": n_gain[rows], "ideal": ideal}
        return QueryBlock(
            source=self.source.query_part(rows),
            ignore=None if self.rules is None else self.rules.block(rows),
            n_relevant=self.n_relevant[rows],
            n_ignored=self.n_ignored[rows],
            n_absent=None if self.n_absent is None else self.n_absent[rows],
            **graded,
        )

    def skip_codes(self) -> np.ndarray:
        """Per query: -1 (R > 0), 0 (no relevant reference but, perhaps, its own row) or 1 (every
        relevant one ignored by a rule other than the own row's exclusion).

        The reason depends on the query alone: a class of one is code 0 whether or not other
        queries have ignore rules, and whether its own row is left out by leave-one-out or by
        ``query_in_reference``.
        """
        codes = np.full(self.n_relevant.size, -1, dtype=np.int8)
        absent = 0 if self.n_absent is None else self.n_absent
        own = 0 if self.n_own is None else self.n_own
        codes[self.n_relevant + absent == 0] = 1
        codes[self.n_before - own + absent == 0] = 0
        return codes

    def counts(self) -> dict:
        """What the ignore rules removed, for the result's ``config``."""
        if self.rules is None:
            return {}
        return {
            "n_ignored": int(self.n_ignored.sum()),
            "n_relevant_ignored": int((self.n_before - self.n_relevant).sum()),
        }


def _relevant_own_rows(source, rules: IgnoreRules | None, own, n_queries: int) -> np.ndarray | None:
    """Per query, 1 where its own row (leave-one-out's row i, or ``own[i] >= 0``) is relevant to it."""
    if own is None and (rules is None or not rules.leave_one_out):
        return None
    rows = np.arange(n_queries) if own is None else np.asarray(own, dtype=np.int64)
    queries = np.flatnonzero(rows >= 0)
    n_own = np.zeros(n_queries, dtype=np.int64)
    n_own[queries] = source.pair_relevant(queries, rows[queries])
    return n_own


def _with_absent(gains: tuple, n_absent: np.ndarray, absent: np.ndarray) -> tuple:
    """``gains`` (n_gain, indptr, grades) with the absent documents' grades merged into each
    query's decreasing grades; n_gain (what the search looks for) stays as it was."""
    n_gain, indptr, values = gains
    queries = np.arange(n_gain.size)
    rows = np.concatenate([np.repeat(queries, np.diff(indptr)), np.repeat(queries, n_absent)])
    merged = np.concatenate([values, absent])
    order = np.lexsort((-merged, rows))
    total = np.diff(indptr) + n_absent
    return n_gain, np.concatenate([[0], np.cumsum(total)]), merged[order]
