"""One block of rows of the deep ranking (:mod:`embedeval._search.deep`), from products to ranks.

A block's working memory: its (rows x references) product, its rows' nearest marked values
(rows x J), the other references within the thresholds and the (rows x J) ranks.
"""

from __future__ import annotations

import itertools

import numpy as np

from .._core import budget as _budget
from .._core import compiled
from . import deep_count as steps
from . import deep_fused
from .deep_exact import error_bounds, exact_ranks
from .float64 import norms

_REACHED_CACHED = compiled.in_cache(f"{__package__}.deep_kernels", "_reached_into")


class Block:
    """The ranks of one block of query rows; all of its working memory lives here.

    Parameters
    ----------
    ranker : DeepRanker
    queries : numpy.ndarray of shape (b, d), float32
    marked : embedeval._relevance.marked.Marked
        The rows' marked references.
    depth, n_ranked : numpy.ndarray of shape (b,), int
        How deep each row is ranked, and J: how many of its marked references are ranked.
    ignored : numpy.ndarray of shape (b, k), int, or None
    """

    def __init__(self, ranker, queries, marked, depth, n_ranked, ignored):
        self.ranker, self.queries, self.marked = ranker, queries, marked
        self.depth, self.n_ranked, self.ignored = depth, n_ranked, ignored
        self.n_relevant = np.asarray(marked.counts, dtype=np.int64)  # marked references not ignored
        self.codes = marked.codes
        self.ignored_at = None  # (rows, columns) of the ignored references
        if ignored is not None:
            rows, cols = np.nonzero(ignored >= 0)
            self.ignored_at = (rows, ranker.column_of_reference[ignored[rows, cols]])
        # Without class codes: each row's marked references (CSR, columns of the ranker) and grades.
        self.listed = None
        if not ranker.by_class:
            indptr, refs, grades = marked.columns()
            self.listed = (np.asarray(indptr, dtype=np.int64), ranker.column_of_reference[refs], grades)

    def ranks(self):
        """Ranks of each row's first J marked references within depth, shape (b, h), padded with +inf,
        and with grades their grades (b, h), else None."""
        rk, b = self.ranker, len(self.queries)
        bound32, bound64, factors32 = self.bounds_and_factors()
        sample = factors32 @ rk.sample_matrix.T  # (b, s): values at the sampled references
        sigmas = rk.sigmas
        mixed = self._mixed(sample, bound32, bound64)
        self.factors64 = rk.factors(self.queries, np.float64)
        self.factors_other = factors32 if mixed else self.factors64
        # With class codes the other references' values are made chunk by chunk (_others);
        # otherwise the whole (rows x references) product first.
        values = None
        if not rk.by_class:
            values = self.factors64 @ rk.matrix64.T
            if self.ignored_at is not None:
                values[self.ignored_at] = np.inf
        n_ranked = self.n_ranked  # J
        self.bound_rel, self.bound_other = bound64, bound32 if mixed else bound64
        # padded (b, J + 2): -inf, each row's J smallest marked values ascending (+inf after
        # its own J), +inf; with grades, self.grades (b, J) holds their grades.
        self.padded = self._nearest_relevant(values, n_ranked, mixed)
        jth = self.padded[np.arange(b), n_ranked]  # -inf where J = 0
        if sigmas is not None:
            count, scale, relevant = self._sample_counts()
            if not steps.may_bind(count, scale, self.n_ranked, self.depth, sigmas).any():
                sigmas = None  # no sampled other can bound a row (whole rankings): each counts to its J-th
        estimate = None if sigmas is None else self._others_sampled(sample, count, scale, relevant)
        ranks = None
        # Rows whose sampled threshold proves too tight are counted again with a looser one,
        # and at last with the J-th relevant value (always enough).
        rows = np.arange(b)
        while rows.size:
            if sigmas is None:
                threshold = np.full(rows.size, np.inf)
            else:
                threshold = steps.threshold(*(e[rows] for e in estimate), self.depth[rows], sigmas)
            top = np.minimum(threshold, jth[rows])
            sampled = np.where(threshold < jth[rows], threshold, np.nan)
            found, short = self.count(values, mixed, rows, top, sampled)
            if ranks is None:
                ranks = found
            else:
                ranks[rows] = found
            rows = rows[short]
            sigmas = steps.looser(sigmas)
        return ranks, self._grades_of(ranks)

    def _grades_of(self, ranks):
        """The grades at ``ranks`` (b, w): of the j-th marked reference, or as the exact rows found them."""
        if self.grades is None:
            return None
        out = np.where(np.isfinite(ranks), self.grades[:, : ranks.shape[1]], 0.0)
        for i, found in self.exact_grades.items():
            out[i] = 0.0
            out[i, : found.size] = found
        return out

    def count(self, values, mixed: bool, rows, top, threshold, fused: bool = True):
        """Ranks of ``rows`` (m,) from the other values within top + 2 (E_o + E_r).

        Returns ``(ranks (m, w), short (m,))``: short rows have fewer than depth values at or
        below their (sampled, non-NaN) ``threshold``; their ranks are meaningless. With compiled
        kernels (``fused``, class codes, no grades), :func:`.deep_fused.count` does it.
        """
        if fused and values is None and self.grades is None and deep_fused.fuses(rows.size * self.ranker.size):
            return deep_fused.count(self, mixed, rows, top, threshold)
        m = rows.size
        window = self.bound_other[rows] + self.bound_rel[rows]
        ends, at, cols, other = self.others(values, rows, top + 2 * window)
        padded = self.padded if m == len(self.queries) else self.padded[rows]
        nearest = padded[:, 1:-1]
        depth = self.depth[rows]
        # Each other value's place among its row's nearest relevant values, searched in
        # ascending order (which numpy's search exploits); near: within the bounds of the
        # relevant value on either side. Float32 values that may need float64 keep their
        # columns (a sort of keys); float64 values are sorted alone, their columns kept for
        # the rare row with a near-tie.
        probes = np.column_stack([top + window, threshold])
        if mixed:
            order = steps.rough_order(at, ends[at], other, self.ranker.size)
            at, cols, other = at[order], cols[order], other[order]
            place, (ranked, below), _ = steps.places(nearest, ends, other, probes)
            below += np.bincount(at[other <= threshold[at]], minlength=m)
        else:
            place, (ranked, below), own = steps.places(nearest, ends, other, probes, own=threshold)
            below += own
        short = ~np.isnan(threshold) & (below < depth)
        flat_padded, at_padded = padded.ravel(), at * padded.shape[1]
        near = steps.near(flat_padded, at_padded + place, other, window[at])
        bound = self.bound_other[rows][at]
        if mixed and near.any():  # those others again, in float64
            k = np.flatnonzero(near)
            other[k], place[k] = self._float64_places(nearest, rows, at[k], cols[k])
            bound[k] = self.bound_rel[rows][at[k]]
            near[k] = steps.near(flat_padded, at_padded[k] + place[k], other[k], 2 * bound[k])
        ranks = steps.ranks_from_places(at, place, ranked, depth, nearest.shape[1])
        tied = np.zeros(m, dtype=bool)
        tied[at[near]] = True
        if self.grades is not None:  # marked references of two grades whose order is uncertain
            tied |= self._graded_ties(rows, top + window)
        for i in np.flatnonzero(tied & ~short):
            seg = slice(ends[i], ends[i + 1])
            known = (other[seg], bound[seg]) if mixed else None  # float64 values: no longer in cols' order
            exact, grades = self.candidates_row(rows[i], top[i] + 2 * window[i], cols[seg], known)
            ranks[i] = np.inf
            ranks[i, : exact.size] = exact
            if self.grades is not None:
                self.exact_grades[int(rows[i])] = grades
        return ranks, short

    def _graded_ties(self, rows, limit):
        """Rows of ``rows`` where two neighbouring marked values within ``limit`` have different grades
        and lie within twice their bound: their order must be decided exactly."""
        values = self.padded[rows, 1:-1]
        grades = self.grades[rows]
        with np.errstate(invalid="ignore"):  # inf - inf in the padding
            close = (np.diff(values, axis=1) <= 2 * self.bound_rel[rows, None]) & (grades[:, 1:] != grades[:, :-1])
        return (close & (values[:, :-1] <= limit[:, None])).any(axis=1)

    def _mixed(self, sample, bound32, bound64) -> bool:
        """:meth:`DeepRanker.mixed` on a few rows of the block (its rows are much alike: one class, similar depth)."""
        if not self.ranker.by_class:
            return False
        few = np.linspace(0, len(sample) - 1, min(len(sample), 16)).astype(np.int64)
        args = (self.depth, self.codes, self.n_relevant, bound32, bound64)
        return self.ranker.mixed(sample[few], *(a[few] for a in args))

    def _sample_counts(self):
        """``(count, scale, relevant)``: how many of the sampled references are each row's others (b,),
        how many others one of them stands for (b,), and (listed marks only, else None) which
        sampled references are marked for each row (b, s)."""
        rk, relevant = self.ranker, None
        if rk.by_class:  # the sampled references in each row's class slice are not its others
            lo, hi = np.searchsorted(rk.sample, [rk.class_start[self.codes], rk.class_stop[self.codes]])
            count = rk.sample.size - (hi - lo)
        else:
            relevant = self._listed_at(rk.sample)
            count = rk.sample.size - np.count_nonzero(relevant, axis=1)
        return count, (rk.size - self.n_relevant) / np.maximum(count, 1), relevant

    def _others_sampled(self, sample, count, scale, relevant):
        """What the sample says of each row's other references, for :func:`.deep_count.threshold`.

        ``count``, ``scale`` and ``relevant`` are :meth:`_sample_counts`'. Returns ``(values,
        reached, scale)``: the w smallest sampled others' values (w: as many as can be a
        threshold), ascending, (b, w) padded with +inf; how many of the row's nearest relevant
        values each reaches (exact); and ``scale``.
        """
        rk, b = self.ranker, len(sample)
        # Only the first few sampled others can be the threshold (up to a generous sigmas): kept alone
        expected = np.minimum(self.depth / np.maximum(scale, 1e-9), sample.shape[1])
        width = min(sample.shape[1], int(np.ceil((expected + 12 * np.sqrt(expected)).max(initial=0))) + 4)
        others = np.full((b, width), np.inf)
        if rk.by_class:
            for i0, i1, lo, hi in self._spans(np.arange(b)):
                a, z = np.searchsorted(rk.sample, [lo, hi])
                part = np.concatenate([sample[i0:i1, :a], sample[i0:i1, z:]], axis=1, dtype=np.float64)
                steps.smallest_sorted(part, min(width, part.shape[1]), others, slice(i0, i1))
        else:
            steps.smallest_sorted(np.where(relevant, np.inf, sample.astype(np.float64)), width, others, slice(None))
        count = np.minimum(count, width)
        return others, self._reached(others, count), scale

    def _reached(self, others, count):
        """(b, s) int64: how many of each row's nearest relevant values each of its first ``count``
        sampled others reaches (numpy's ``searchsorted``, side "right"; 0 after ``count``)."""
        nearest = self.padded[:, 1:-1]
        after = _budget.DEEP_REACHED_COMPILED_FROM
        if compiled.repaid("reached", len(others), after, _REACHED_CACHED, cached_from=1):
            # a row's nearest values are sorted NaN last and +inf after its J: a NaN among them
            # is its J-th, so one value a row says whether any is NaN (no pass over them all)
            last = self.padded[np.arange(len(others)), self.n_ranked]
            if not (np.isnan(others).any() or np.isnan(last).any()):
                from . import deep_kernels  # numba, imported only when compiled kernels are on

                return deep_kernels.reached(self.padded, np.ascontiguousarray(others), count)
        reached = np.zeros(others.shape, dtype=np.int64)
        for r in range(len(others)):  # numpy's search needs a 1-D haystack: a row at a time
            reached[r, : count[r]] = np.searchsorted(nearest[r], others[r, : count[r]], side="right")
        return reached

    def _listed_at(self, columns: np.ndarray) -> np.ndarray:
        """Whether each of ``columns`` (s,), ascending, is marked for each row: bool (b, s) (listed marks)."""
        indptr, cols, _ = self.listed
        b, n = len(self.queries), self.ranker.size
        if not cols.size:
            return np.zeros((b, columns.size), dtype=bool)
        keys = np.repeat(np.arange(b), np.diff(indptr)) * n + cols  # ascending: columns ascend per row
        wanted = (np.arange(b)[:, None] * n + columns[None, :]).ravel()
        at = np.minimum(np.searchsorted(keys, wanted), keys.size - 1)
        return (keys[at] == wanted).reshape(b, columns.size)

    def others(self, values, rows, limit):
        """The other references of ``rows`` (m,) with values at most ``limit`` (m,), grouped by row.

        Returns ``(ends, at, cols, values)``: row i's are at ``ends[i]:ends[i + 1]``, ``at`` is
        each one's position in ``rows``, ``cols`` its column and ``values`` its float64 value.
        With class codes the other columns' products are made a chunk at a time (a chunk
        stays in cache while it is compared, and no (rows x references) array is made) and
        each row's relevant slice is skipped; otherwise the relevant entries of ``values``
        are +inf already.
        """
        if values is not None:
            lim = steps.round_up(limit, values.dtype)[:, None]
            block = values if rows.size == len(self.queries) else values[rows]
            flat = np.flatnonzero(block <= lim)
            ends = np.searchsorted(flat, np.arange(rows.size + 1) * block.shape[1])
            at = np.repeat(np.arange(rows.size), np.diff(ends))
            cols = flat - at * block.shape[1]
            return ends, at, cols, block[at, cols].astype(np.float64)
        parts = []
        for i0, c0, chunk, lim in self.chunks_within(rows, limit):
            flat = np.flatnonzero(chunk <= lim[:, None])
            at = flat // chunk.shape[1]
            parts.append((at + i0, flat - at * chunk.shape[1] + c0, chunk.ravel()[flat]))
        matrix = self.ranker.matrix32 if self.factors_other.dtype == np.float32 else self.ranker.matrix64
        empty = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, matrix.dtype))
        at, cols, found = (np.concatenate([e] + [p[j] for p in parts]) for j, e in enumerate(empty))
        # chunk by chunk, then row by row: regroup by row (a radix sort of small integers)
        order = np.argsort(at.astype(np.int16) if rows.size < 2**15 else at, kind="stable")
        at, cols, found = at[order], cols[order], found[order]
        return np.searchsorted(at, np.arange(rows.size + 1)), at, cols, found.astype(np.float64)

    def chunks_within(self, rows, limit):
        """``(i0, c0, chunk, lim)``: the other references' values of ``rows[i0:]`` at columns ``c0:``,
        a cache-sized chunk at a time (relevant slices and ignored references +inf), and ``limit``
        of those rows rounded up to the chunk's precision (class codes only)."""
        rk = self.ranker
        matrix = rk.matrix32 if self.factors_other.dtype == np.float32 else rk.matrix64
        spans = self._spans(rows)
        # One class: its slice is skipped. Several: one product of every row with every column
        # (a product per class would read the references once per class), slices masked.
        runs = spans if len(spans) == 1 else [(0, rows.size, 0, 0)]
        ignored_pos, ignored_col = self._ignored_in(rows)
        for r0, r1, lo, hi in runs:
            for i0 in range(r0, r1, _budget.DEEP_CHUNK_ROWS):  # long rows: a row's values placed while in cache
                i1 = min(i0 + _budget.DEEP_CHUNK_ROWS, r1)
                factors = self.factors_other[rows[i0:i1]]
                lim = steps.round_up(limit[i0:i1], matrix.dtype)
                step = max(256, _budget.DEEP_CHUNK_ELEMENTS // (i1 - i0))
                here = [s for s in spans if s[0] < i1 and s[1] > i0] if len(spans) > 1 else []  # these rows' classes
                for c0, c1 in _chunks([(0, lo), (hi, rk.size)], step):
                    chunk = factors @ matrix[c0:c1].T
                    for a, z, slo, shi in (s for s in here if s[2] < c1 and s[3] > c0):  # their slices: +inf
                        chunk[max(a, i0) - i0 : min(z, i1) - i0, max(slo, c0) - c0 : min(shi, c1) - c0] = np.inf
                    a, z = np.searchsorted(ignored_col, [c0, c1])
                    pos, col = ignored_pos[a:z], ignored_col[a:z]
                    inside = (pos >= i0) & (pos < i1)
                    chunk[pos[inside] - i0, col[inside] - c0] = np.inf
                    yield i0, c0, chunk, lim

    def _ignored_in(self, rows):
        """(positions in ``rows``, columns) of the ignored references of ``rows`` (ascending), by column."""
        if self.ignored_at is None:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        r, c = self.ignored_at
        pos = np.minimum(np.searchsorted(rows, r), rows.size - 1)
        keep = rows[pos] == r
        pos, c = pos[keep], c[keep]
        order = np.argsort(c, kind="stable")
        return pos[order], c[order]

    def _spans(self, rows):
        """(first, stop, lo, hi): runs of ``rows`` positions whose relevant columns are [lo, hi).

        Without class codes one run, with an empty slice: relevant entries are +inf instead.
        """
        if not self.ranker.by_class:
            return [(0, rows.size, 0, 0)]
        codes = self.codes[rows]
        cuts = np.concatenate([[0], np.flatnonzero(np.diff(codes)) + 1, [rows.size]])
        rk = self.ranker
        return [(a, z, rk.class_start[codes[a]], rk.class_stop[codes[a]]) for a, z in itertools.pairwise(cuts)]

    def _nearest_relevant(self, values, n_ranked, mixed: bool) -> np.ndarray:
        """(b, max J + 2): -inf, each row's J smallest marked values ascending (+inf after J), +inf.

        Without class codes, sets the marked entries of ``values`` to +inf, and with grades sets
        ``self.grades`` (b, max J): the grade of each of those values (ties of equal values in
        any order: a near-tie of two grades is decided exactly later).
        """
        rk, b = self.ranker, len(self.queries)
        w = max(int(n_ranked.max(initial=0)), 1)
        padded = np.empty((b, w + 2))
        padded[:, 0], padded[:, -1] = -np.inf, np.inf
        nearest = padded[:, 1:-1]
        self.grades, self.exact_grades = None, {}
        if rk.by_class:
            codes = self.codes
            by_code = np.argsort(codes, kind="stable")
            for rows in np.split(by_code, np.flatnonzero(np.diff(codes[by_code])) + 1):
                span = slice(rows[0], rows[-1] + 1) if rows[-1] - rows[0] + 1 == rows.size else rows
                found, _ = self.class_values(span, int(codes[rows[0]]))
                steps.smallest_sorted(found, int(n_ranked[rows].max()), nearest, span)
        else:
            indptr, cols, grades = self.listed
            rows = np.repeat(np.arange(b), np.diff(indptr))
            slot = np.arange(rows.size) - indptr[rows]
            found = np.full((b, max(int(np.diff(indptr).max(initial=0)), 1)), np.inf)
            found[rows, slot] = values[rows, cols]
            values[rows, cols] = np.inf
            if grades is None:
                steps.smallest_sorted(found, w, nearest, slice(None))
            else:  # few marked references per row (judgements): their order carries the grades
                graded = np.zeros(found.shape)
                graded[rows, slot] = grades
                order = np.argsort(found, axis=1, kind="stable")[:, :w]
                nearest[:, : order.shape[1]] = np.take_along_axis(found, order, 1)
                self.grades = np.zeros((b, w))
                self.grades[:, : order.shape[1]] = np.take_along_axis(graded, order, 1)
        if (n_ranked < w).any():
            nearest[np.arange(w)[None, :] >= n_ranked[:, None]] = np.inf
        return padded

    # The per-row float64 work (also called by embedeval._search.deep_merged on a Block): product
    # values recomputed in float64 where float32 cannot tell them apart, and one row's exact ranks.

    def bounds_and_factors(self):
        """``(bound32, bound64, factors32)``: each row's error bound on a float32 and on a float64
        product value (:func:`~embedeval._search.deep_exact.error_bounds`, (b,) each), and the
        rows' float32 factors (b, d [+ 1])."""
        rk = self.ranker
        bound32, bound64 = error_bounds(norms(self.queries), rk.max_norm, rk.dim, rk.euclidean)
        return bound32, bound64, rk.factors(self.queries, np.float32)

    def class_values(self, rows, code: int):
        """The float64 product values of the block's ``rows`` (a slice or ascending positions, all
        of class ``code``) with their class's references, (m, class size), the ignored ones +inf;
        and where those are: (positions among ``rows``, columns in the class)."""
        rk = self.ranker
        lo, hi = int(rk.class_start[code]), int(rk.class_stop[code])
        found = self.factors64[rows] @ rk.matrix64.rows(lo, hi).T
        inside = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        if self.ignored_at is not None:
            r, c = self.ignored_at
            keep = (self.codes[r] == code) & (c >= lo) & (c < hi)
            inside = (np.searchsorted(np.arange(len(self.queries))[rows], r[keep]), c[keep] - lo)
            found[inside] = np.inf
        return found, inside

    def _float64_places(self, nearest, rows, at, cols):
        """float64 product values of the pairs (rows[at[i]], cols[i]), ``at`` ascending, and their places."""
        values, places = np.empty(at.size), np.empty(at.size, dtype=np.int64)
        ends = np.flatnonzero(np.diff(at, prepend=-1, append=len(rows)))
        # per row: faster than one einsum of gathered rows (bench/NOTES.md, stop 52)
        for s, e in itertools.pairwise(ends):
            r = at[s]
            # einsum, not matmul: a BLAS call this small costs more in thread hand-offs than it does
            values[s:e] = np.einsum("ij,j->i", self.ranker.matrix64[cols[s:e]], self.factors64[rows[r]])
            places[s:e] = np.searchsorted(nearest[r], values[s:e], side="right")
        return values, places

    def candidates_row(self, r: int, limit: float, cols, values):
        """Row r's ranks (and classes: grades, or 1) from its candidates: the others at ``cols`` and the
        marked values within ``limit``.

        ``values`` holds the others' (values, bounds), or None to compute them again in float64;
        the relevant values are computed again in float64 (any value within its bound will do).
        """
        rk = self.ranker
        if values is None:
            values = (
                np.einsum("ij,j->i", rk.matrix64[cols], self.factors64[r]),
                np.full(cols.size, self.bound_rel[r]),
            )
        values, bounds = values
        rel_grades = None
        if rk.by_class:
            code = self.codes[r]
            rel_cols = np.arange(rk.class_start[code], rk.class_stop[code])
        else:
            indptr, listed, grades = self.listed
            rel_cols = listed[indptr[r] : indptr[r + 1]]
            rel_grades = None if grades is None else grades[indptr[r] : indptr[r + 1]]
        rel_values = np.einsum("ij,j->i", rk.matrix64[rel_cols], self.factors64[r])
        if self.ignored_at is not None:
            rel_values[np.isin(rel_cols, self.ignored_at[1][self.ignored_at[0] == r])] = np.inf
        keep = np.flatnonzero(rel_values <= limit)
        classes = np.zeros(keep.size + cols.size)
        classes[: keep.size] = 1.0 if rel_grades is None else rel_grades[keep]
        ranks, grades = exact_ranks(
            self.queries[r],
            int(self.depth[r]),
            np.concatenate([rel_values[keep], values]),
            np.concatenate([np.full(keep.size, self.bound_rel[r]), bounds]),
            classes,
            rk.index_of_column[np.concatenate([rel_cols[keep], cols])],
            rk.reference,
            rk.euclidean,
        )
        n = int(self.n_ranked[r])  # only the first J marked references are asked for
        return ranks[:n], grades[:n]


def _chunks(ranges, step: int):
    """(start, stop) pieces of at most ``step`` columns covering the given (start, stop) ranges."""
    return [(c, min(c + step, stop)) for start, stop in ranges for c in range(start, stop, step)]
