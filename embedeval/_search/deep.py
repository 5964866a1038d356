"""Deep rankings: where each query's relevant references fall in its top ``depth``, exactly.

Metrics of embeddings with labels read only the relevance sequence of a ranking, never which
other reference sits where. The j-th relevant reference of a query has rank j + c_j, c_j the
number of other references ranked before it, so a deep ranking (a class holding much of the
data) needs no order among the other references at all. :class:`DeepRanker` computes those
ranks (:class:`embedeval._metrics.kernels.Hits`) for blocks of query rows
(:class:`~embedeval._search.deep_block.Block`, steps in :mod:`~embedeval._search.deep_count`):

1. Products: each row's value ||r||^2 - 2 q.r (or -q.r; the row's own ||q||^2 changes no
   order) for every reference, by BLAS. With class codes the references are kept sorted by
   class, so a query's relevant references are one slice: their values come from a float64
   product of that slice, and the others' from products made a cache-sized chunk of columns
   at a time, in float32 where its near-ties would cost less than float64
   (:meth:`DeepRanker.mixed`). Without class codes, one float64 product of the block.
2. Relevant values: per row the J = min(depth, R) smallest, sorted (``np.sort``); or, for a
   block of one class with J past :func:`.deep_merged.switch` and compiled kernels, left
   unsorted and placed among the row's few sorted others (:mod:`~embedeval._search.deep_merged`).
3. Threshold T, a value that at least ``depth`` values of the row reach: estimated by
   counting the relevant values exactly and the others from a fixed sample of references, or
   else the J-th relevant value. A row where fewer than ``depth`` values reach its sampled T
   is counted again with a looser one.
4. Others: those within T + 2 (E_o + E_r), found by comparing each chunk as it is made
   (usually a few per row, the query's near misses); each one's place among the sorted
   relevant values (``np.searchsorted``) gives every c_j by counting, and one ``np.repeat``
   writes the ranks.
5. Near-ties: an other value within E_o + E_r of a neighbouring relevant one is recomputed in
   float64; a row where a near-tie remains is ranked from its candidates, every mixed run of
   near-ties put in exact order (:func:`~embedeval._search.deep_exact.exact_ranks`).

The ranks equal those of a full stable sort of float64 distances
(:func:`embedeval._search.float64.exact_distance`) by (distance, index); they depend neither
on the blocks nor on the precision chosen, only time does.

Why it is exact
---------------
Each value v has a bound E (E_o for other references, E_r <= E_o for relevant ones; see
:func:`~embedeval._search.deep_exact.error_bounds`) with |v - exact| <= E. Let T be the
smaller of t (when at least ``depth`` values of the row are <= t) and the J-th relevant
value. A relevant reference with a value beyond T + E_o + E_r ranks beyond depth (or beyond
the J-th relevant one); everything exactly before a relevant reference with a value up to
there has a value <= T + 2 (E_o + E_r), so those are the only candidates. An other reference
whose value is more than E_o + E_r away from both neighbouring relevant values is exactly
ordered against every relevant reference, and then c_j is exact.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .._core import budget as _budget
from . import deep_merged
from .deep_block import Block
from .deep_factors import Float64Factors, factor_matrix
from .float64 import squared_norms


class DeepRanker:
    """Exact ranks of marked references in deep rankings; made once per evaluation.

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
        Prepared (:func:`embedeval._inputs.arrays.prepare`) reference vectors, held in memory.
    euclidean : bool
        True: squared euclidean distance; False: minus the inner product (cosine once
        normalised).
    class_codes : numpy.ndarray of shape (n_references,), int, optional
        The references' class codes, when relevance is one class label per item: the
        references are then kept sorted by class, so that the references marked for a query
        (those of its class, :attr:`embedeval._relevance.marked.Marked.codes`) are one slice.
        Without them, queries list their marked references
        (:meth:`embedeval._relevance.marked.Marked.columns`).
    precision : {"auto", "float64", "mixed"}
        How products are computed (class codes only; results never depend on it): "auto"
        chooses per block, "float64" always uses float64, "mixed" always float32 for the other
        references.
    sample_columns : int
        References sampled for the thresholds (at most n_references / 16).
    sample_sigmas : float
        How many standard deviations of the sampled quantile the threshold aims above depth.
    block_elements : int
        Rows are ranked in blocks of at most this many rows x widest row (see :meth:`_blocks`).
    seed : int
        Chooses the sampled references (only time depends on it).

    Attributes
    ----------
    Read by a block of rows (:mod:`.deep_block`, :mod:`.deep_merged`, :mod:`.deep_fused`); the
    references are held as "columns": in class order with class codes, in index order without.

    by_class : bool
        Whether the ranker was made with class codes.
    index_of_column, column_of_reference : numpy.ndarray of shape (n_references,), int64
        The reference index of each column, and its inverse.
    class_start, class_stop : numpy.ndarray of shape (n_classes + 1,), int64
        Each class's columns (class codes only; the last class is empty).
    matrix32, matrix64 : factor matrices of the columns
        float32 (class codes only, else None) and float64 (:class:`.deep_factors.Float64Factors`
        with class codes, made on demand); products with :meth:`factors` give the distances.
    sample, sample_matrix, sigmas
        The sampled columns (ascending), their float32 factors, and ``sample_sigmas``.

    Notes
    -----
    Memory: the references as a (n_references, d + 1) float64 matrix (and a float32 one for
    class codes), sorted by class for class codes; per block of rows, arrays of at most
    ``block_elements`` elements (the relevant slices' products, the nearest marked values,
    the ranks; without class codes the whole product too), a chunk of
    ``_budget.DEEP_CHUNK_ELEMENTS`` products and the other references within the thresholds.
    Blocks of queries are ranked in class order, so that a block is one class where possible.
    :meth:`ranks` may be called from several threads at once.
    """

    def __init__(
        self,
        reference: np.ndarray,
        euclidean: bool,
        class_codes: np.ndarray | None = None,
        precision: str = "auto",
        sample_columns: int = _budget.DEEP_SAMPLE_COLUMNS,
        sample_sigmas: float = _budget.DEEP_SAMPLE_SIGMAS,
        block_elements: int = _budget.DEEP_ELEMENTS,
        seed: int = 0,
    ):
        self.reference = np.asarray(reference, dtype=np.float32)  # in index order, for the exact formula
        self.size, self.dim = self.reference.shape
        self.euclidean = euclidean
        self.precision = precision
        self.by_class = class_codes is not None
        if self.by_class:  # columns: references sorted by class, by index within a class
            class_codes = np.asarray(class_codes, dtype=np.int64)
            self.index_of_column = np.argsort(class_codes, kind="stable")
            codes = class_codes[self.index_of_column]
            # one code more than the references have: an empty slice, for queries of other classes
            every = np.arange(int(class_codes.max(initial=-1)) + 2)
            self.class_start = np.searchsorted(codes, every)
            self.class_stop = np.searchsorted(codes, every, side="right")
            columns = self.reference[self.index_of_column]
        else:
            self.index_of_column = np.arange(self.size)
            columns = self.reference
        self.column_of_reference = np.empty(self.size, dtype=np.int64)
        self.column_of_reference[self.index_of_column] = np.arange(self.size)
        norms = squared_norms(columns)
        self.max_norm = float(np.sqrt(norms.max(initial=0.0)))
        self.matrix32 = factor_matrix(columns, norms, euclidean, np.float32) if self.by_class else None
        # With class codes, float64 factors are made on demand, a slice or a gather at a time (held
        # whole they were twice the references). Without, every block multiplies by all of them,
        # so they are made once.
        if self.by_class:
            self.matrix64 = Float64Factors(self.matrix32, norms, euclidean)
        else:
            self.matrix64 = factor_matrix(columns, norms, euclidean, np.float64)
        n_sample = min(sample_columns, self.size // 16)
        rng = np.random.default_rng(seed)
        self.sample = np.sort(rng.choice(self.size, n_sample, replace=False))
        self.sample_matrix = factor_matrix(columns[self.sample], norms[self.sample], euclidean, np.float32)
        self.sigmas = sample_sigmas
        self._block_elements = block_elements

    def ranks(self, queries: np.ndarray, marked, depth, first=None, ignored: np.ndarray | None = None):
        """Ranks of each query's first ``first`` marked references, within its top ``depth``.

        Parameters
        ----------
        queries : numpy.ndarray of shape (b, d), float32
            Prepared as the references are.
        marked : embedeval._relevance.marked.Marked
            Each query's marked references (its relevant ones, or for graded metrics every
            positively graded one, with their grades) and how many of them it does not ignore;
            class codes with a ranker made with ``class_codes``, listed references otherwise.
        depth : int or numpy.ndarray of shape (b,), int
            How deep each query is ranked: 1 to the number of references it can rank.
        first : int or numpy.ndarray of shape (b,), int, optional
            Rank only each query's first ``first`` marked references (in ranking order;
            default, and at most: all of them). With binary relevance the ranks of the first
            ``first`` are those of the full ranking; with grades, every marked reference within
            depth is ranked and ``first`` is ignored.
        ignored : numpy.ndarray of shape (b, k), int, optional
            References each query must neither rank nor count (its own index in leave-one-out
            evaluation), padded with -1; an index at most once per row.

        Returns
        -------
        ranks : numpy.ndarray of shape (b, h), float64
            The 1-based ranks, ascending, of the ranked marked references within ``depth``,
            padded with +inf.
        grades : numpy.ndarray of shape (b, h), float64, or None
            With graded ``marked``, the grade of the reference at each rank (0 in the padding).
        """
        b = len(queries)  # the arguments as the entry points checked them (evaluate_block's job)
        depth = np.broadcast_to(np.asarray(depth, dtype=np.int64), (b,))
        ignored = None if ignored is None else np.asarray(ignored, dtype=np.int64)
        if self.by_class:  # a class no reference has: the empty slice of the last code
            marked = dataclasses.replace(marked, codes=np.minimum(marked.codes, self.class_start.size - 1))
        counts = np.asarray(marked.counts, dtype=np.int64)
        wanted = counts if first is None or marked.graded else np.minimum(counts, first)
        n_ranked = np.minimum(depth, wanted)
        if marked.graded:  # one more: the boundary between the last ranked and the next is checked too
            n_ranked = np.minimum(n_ranked + 1, counts)
        shape = (b, max(int(n_ranked.max(initial=0)), 1))
        # every row is written by one block: no fill first (32 MB at R ~ 2,000)
        ranks, grades = np.empty(shape), np.zeros(shape) if marked.graded else None
        # Blocks of queries of one class where possible: one product with its relevant slice.
        order = np.argsort(marked.codes, kind="stable") if self.by_class else np.arange(b)
        blocks = self._blocks(order, marked, n_ranked)
        for rows in (part for group in blocks for part in deep_merged.split(self, group, marked, n_ranked)):
            ign = None if ignored is None else ignored[rows]
            block = Block(self, queries[rows], marked.part(rows), depth[rows], n_ranked[rows], ign)
            # one large class: its relevant values placed among the others, its ranks written into
            # its rows of `ranks` (None: not there, or a value not finite)
            if deep_merged.takes(block) and deep_merged.ranks(block, ranks, rows):
                continue
            found, found_grades = block.ranks()
            if rows.size == b and found.shape == shape and (rows == np.arange(b)).all():
                return found, found_grades  # one block of every row, in order: its ranks are the result
            ranks[rows, : found.shape[1]] = found
            ranks[rows, found.shape[1] :] = np.inf
            if grades is not None:
                grades[rows, : found.shape[1]] = found_grades
        return ranks, grades

    def _blocks(self, order, marked, n_ranked):
        """Consecutive pieces of ``order`` whose rows x widest row stay within ``block_elements``.

        A row's width: with class codes, the larger of its class's size (the slice whose
        products are made whole; the others' are made in chunks) and its J; without, every
        reference (the whole product is made).
        """
        if not self.by_class:
            step = max(1, self._block_elements // self.size)
            yield from (order[s : s + step] for s in range(0, order.size, step))
            return
        sizes = self.class_stop - self.class_start
        width = np.maximum(sizes[marked.codes], n_ranked)[order]
        start = 0
        while start < order.size:
            widest = np.maximum.accumulate(np.maximum(width[start : start + 4096], 1))
            rows = np.searchsorted(widest * np.arange(1, widest.size + 1), self._block_elements, "right")
            yield order[start : start + max(1, int(rows))]
            start += max(1, int(rows))

    def factors(self, queries: np.ndarray, dtype) -> np.ndarray:
        """The queries' side of the product: (-2q, 1) (euclidean) or -q, shape (b, d (+ 1))."""
        if not self.euclidean:
            return np.negative(queries, dtype=dtype)
        out = np.empty((len(queries), self.dim + 1), dtype=dtype)
        np.multiply(queries, -2, out=out[:, :-1])  # scaling by 2 is exact
        out[:, -1] = 1
        return out

    def mixed(self, sample, depth, codes, n_relevant, bound32, bound64) -> bool:
        """Whether other references are cheaper in float32 than in float64 for these rows.

        float32 saves about half the product for the other references but leaves near-ties to
        recompute one by one: an other value within E_o + E_r of a relevant one. Their number
        is estimated from the rows' values at the sampled references, ``sample`` (rows, s): the
        others within the sampled threshold times the chance that a relevant value lies that
        close (twice the window times the relevant values' density there). One recomputation
        costs about as much as ``_budget.DEEP_TIE_COLUMNS`` columns of the float64 product's
        extra time, and the float64 product of the relevant slice is paid either way.
        """
        if not self.by_class or self.precision != "auto" or sample.shape[1] == 0:
            return self.by_class and self.precision == "mixed"
        start, stop = self.class_start[codes], self.class_stop[codes]
        is_relevant = (self.sample[None, :] >= start[:, None]) & (self.sample[None, :] < stop[:, None])
        threshold = self.sampled_threshold(np.sort(sample, axis=1), depth, self.sigmas)
        inside = sample <= np.minimum(threshold, np.max(sample, axis=1))[:, None]
        scale = self.size / len(self.sample)
        others = scale * np.count_nonzero(inside & ~is_relevant, axis=1)
        spread = np.where(inside, sample, -np.inf).max(axis=1).astype(np.float64) - sample.min(axis=1)
        relevant = scale * np.count_nonzero(inside & is_relevant, axis=1)
        # relevant values per unit of distance within the threshold (all tied: every other is near)
        chance = np.ones(len(sample))
        spread_out = spread > 0
        chance[spread_out] = np.minimum(
            1.0, 2 * (bound32 + bound64)[spread_out] * relevant[spread_out] / spread[spread_out]
        )
        ties = others * chance
        return bool(ties.sum() * _budget.DEEP_TIE_COLUMNS < np.sum(self.size - 2 * n_relevant))

    def sampled_threshold(self, sample: np.ndarray, depth: np.ndarray, sigmas: float) -> np.ndarray:
        """Per row, a value that probably at least ``depth`` of its values do not exceed (+inf: none).

        ``sample`` (b, s) holds each row's values at the sampled references, sorted.
        """
        out = np.full(len(sample), np.inf)
        k = self._sample_rank(depth, sigmas)
        rows = np.flatnonzero(k <= sample.shape[1])
        out[rows] = sample[rows, k[rows] - 1]
        return out

    def _sample_rank(self, depth: np.ndarray, sigmas: float) -> np.ndarray:
        """The 1-based rank k among the sampled values of :meth:`_sampled_threshold`'s guess."""
        s = self.sample.size
        # The k-th smallest of s sampled values has about k n / s of the row's values below it,
        # give or take sqrt(k) n / s: aim ``sigmas`` standard deviations above depth.
        mean = np.asarray(depth) * (s / self.size)
        return np.maximum(np.ceil(mean + sigmas * np.sqrt(mean) + 1), 1).astype(np.int64)

    def beyond_sample(self, depth: np.ndarray, sigmas: float) -> np.ndarray:
        """Rows (bool) so deep that :meth:`_sampled_threshold` cannot guess them (its +inf)."""
        return self._sample_rank(depth, sigmas) > self.sample.size
