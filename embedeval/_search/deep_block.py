"""One block of rows of the deep ranking (:mod:`embedeval._search.deep`), from products to ranks."""

from __future__ import annotations

import itertools

import numpy as np

from .deep_exact import error_bounds, exact_ranks


class Block:
    """The ranks of one block of query rows; all of its working memory lives here.

    Parameters
    ----------
    ranker : DeepRanker
    queries : numpy.ndarray of shape (b, d), float32
    query_ids, depth, n_relevant : numpy.ndarray of shape (b,), int
    ignored : numpy.ndarray of shape (b, k), int, or None
    """

    def __init__(self, ranker, queries, query_ids, depth, n_relevant, ignored):
        self.ranker, self.queries, self.query_ids = ranker, queries, query_ids
        self.depth, self.n_relevant, self.ignored = depth, n_relevant, ignored

    def ranks(self) -> np.ndarray:
        """Ranks of each row's relevant references within depth, shape (b, h), padded with +inf."""
        rk, b = self.ranker, len(self.queries)
        q_norms = np.sqrt(np.einsum("ij,ij->i", self.queries, self.queries, dtype=np.float64))
        bound32, bound64 = error_bounds(q_norms, rk.max_norm, rk.dim, rk.euclidean)
        factors32 = rk._factors(self.queries, np.float32)
        sample = np.sort(factors32 @ rk._sample_matrix.T, axis=1)
        sigmas = rk._sigmas
        threshold = rk._sampled_threshold(sample, self.depth, sigmas)
        mixed = rk._mixed(sample, threshold, self.query_ids, self.n_relevant, bound32, bound64)
        self.factors64 = rk._factors(self.queries, np.float64)
        values = factors32 @ rk._matrix32.T if mixed else self.factors64 @ rk._matrix64.T
        self.ignored_at = None
        if self.ignored is not None:
            rows, cols = np.nonzero(self.ignored >= 0)
            self.ignored_at = (rows, rk._column[self.ignored[rows, cols]])
            values[self.ignored_at] = np.inf
        n_ranked = np.minimum(self.depth, self.n_relevant)  # J
        self.nearest = self._nearest_relevant(values, n_ranked, mixed)
        self.bound_rel, self.bound_other = bound64, bound32 if mixed else bound64
        has = n_ranked > 0
        jth = np.full(b, np.inf)
        jth[has] = self.nearest[np.flatnonzero(has), n_ranked[has] - 1]
        w = self.nearest.shape[1]
        self.padded = np.empty((b, w + 2))
        self.padded[:, 0], self.padded[:, 1:-1], self.padded[:, -1] = -np.inf, self.nearest, np.inf
        ranks = np.full((b, w), np.inf)
        # Rows whose sampled threshold proves too tight are counted again with a looser one,
        # and at last with the J-th relevant value (always enough).
        rows = np.arange(b)
        while rows.size:
            threshold = (
                rk._sampled_threshold(sample[rows], self.depth[rows], sigmas)
                if sigmas is not None
                else np.full(rows.size, np.inf)
            )
            top = np.where(has[rows], np.minimum(threshold, jth[rows]), -np.inf)
            sampled = threshold < jth[rows]
            ranks[rows], short = self._count(values, mixed, rows, top, np.where(sampled, threshold, np.nan))
            rows = rows[short]
            sigmas = 4 * max(sigmas, 0) + 4 if sigmas is not None and sigmas < 16 else None
        return ranks

    def _count(self, values, mixed: bool, rows, top, threshold):
        """Ranks of ``rows`` (m,) from the other values within top + 2 (E_o + E_r).

        Returns ``(ranks (m, w), short (m,))``: short rows have fewer than depth values at or
        below their (sampled, non-NaN) ``threshold``; their ranks are meaningless.
        """
        n, m = self.ranker.size, rows.size
        block = values if m == len(values) else values[rows]
        window = self.bound_other[rows] + self.bound_rel[rows]
        flat = np.flatnonzero(block <= _round_up(top + 2 * window, values.dtype)[:, None])
        ends = np.searchsorted(flat, np.arange(m + 1) * n)
        at = np.repeat(np.arange(m), np.diff(ends))  # position in rows
        cols = flat - at * n
        other = block.ravel()[flat].astype(np.float64)
        del block
        nearest = self.nearest if m == len(values) else self.nearest[rows]
        depth = self.depth[rows]
        # Each other value's place among its row's nearest relevant values (searched in about
        # ascending order, which numpy's search exploits); near: within the bounds of the
        # relevant value on either side.
        order = _rough_order(at, ends[at], other, n)
        at, cols, other = at[order], cols[order], other[order]
        probes = np.column_stack([np.nan_to_num(threshold, nan=-np.inf), top + window])
        place, (below, ranked) = _places(nearest, ends, other, probes)
        below += np.bincount(at[other <= threshold[at]], minlength=m)
        short = ~np.isnan(threshold) & (below < depth)
        w2 = self.padded.shape[1]
        flat_padded = self.padded.ravel()
        bound = self.bound_other[rows][at]
        near = _near(flat_padded, rows[at] * w2 + place, other, bound + self.bound_rel[rows][at])
        if mixed and near.any():  # those others again, in float64
            k = np.flatnonzero(near)
            other[k], place[k] = self._float64_places(nearest, rows, at[k], cols[k])
            bound[k] = self.bound_rel[rows][at[k]]
            near[k] = _near(flat_padded, rows[at[k]] * w2 + place[k], other[k], 2 * bound[k])
        # c_j, the others before the j-th relevant value: those placed at j or before. Past
        # the relevant values that are ranked, a count beyond any depth.
        w = nearest.shape[1]
        before = np.bincount(at * (w + 1) + place, minlength=m * (w + 1)).reshape(m, w + 1)
        before[np.arange(m), ranked] += self.ranker.size + 1
        ranks = np.add(np.cumsum(before[:, :w], axis=1, dtype=np.int64), np.arange(1, w + 1), dtype=np.float64)
        ranks[ranks > depth[:, None]] = np.inf
        tied = np.zeros(m, dtype=bool)
        tied[at[near]] = True
        for i in np.flatnonzero(tied & ~short):
            seg = slice(ends[i], ends[i + 1])
            exact = self._candidates_row(rows[i], top[i] + 2 * window[i], cols[seg], other[seg], bound[seg])
            ranks[i] = np.inf
            ranks[i, : exact.size] = exact
        return ranks, short

    def _nearest_relevant(self, values, n_ranked, mixed: bool) -> np.ndarray:
        """Each row's J smallest relevant values, ascending, shape (b, max J), +inf after J.

        Keeps every row's relevant values (for :meth:`_candidates_row`) and sets their entries
        in ``values`` to +inf.
        """
        rk, b = self.ranker, len(values)
        out = np.full((b, max(int(n_ranked.max(initial=0)), 1)), np.inf)
        if rk._classes:
            codes = rk.relevance.query_codes[self.query_ids]
            self.groups = []  # (first column, relevant values (rows, R)) per class
            self.group_of = np.empty((b, 2), dtype=np.int64)  # row -> (group, position in it)
            for code in np.unique(codes):
                rows = np.flatnonzero(codes == code)
                lo, hi = int(rk._class_start[code]), int(rk._class_stop[code])
                if mixed:
                    found = self.factors64[rows] @ rk._matrix64[lo:hi].T
                    if self.ignored_at is not None:
                        r, c = self.ignored_at
                        inside = (codes[r] == code) & (c >= lo) & (c < hi)
                        found[np.searchsorted(rows, r[inside]), c[inside] - lo] = np.inf
                else:
                    found = values[rows, lo:hi]
                values[rows, lo:hi] = np.inf
                self.group_of[rows, 0], self.group_of[rows, 1] = len(self.groups), np.arange(rows.size)
                self.groups.append((lo, found))
                k = int(n_ranked[rows].max())
                if k:
                    smallest = _smallest_sorted(found, k)
                    out[rows, : smallest.shape[1]] = smallest
        else:
            indptr, refs = rk.relevance.columns(self.query_ids)
            rows = np.repeat(np.arange(b), np.diff(indptr))
            cols = rk._column[refs]
            found = np.full((b, max(int(np.diff(indptr).max(initial=0)), 1)), np.inf)
            found[rows, np.arange(rows.size) - indptr[rows]] = values[rows, cols]
            values[rows, cols] = np.inf
            self.relevant_cols = (indptr, cols, found)
            smallest = _smallest_sorted(found, out.shape[1])
            out[:, : smallest.shape[1]] = smallest
        out[np.arange(out.shape[1])[None, :] >= n_ranked[:, None]] = np.inf
        return out

    def _float64_places(self, nearest, rows, at, cols):
        """float64 product values of the pairs (rows[at[i]], cols[i]), ``at`` ascending, and their places."""
        values, places = np.empty(at.size), np.empty(at.size, dtype=np.int64)
        ends = np.flatnonzero(np.diff(at, prepend=-1, append=len(rows)))
        for s, e in itertools.pairwise(ends):  # one product per row: 5x einsum's speed
            r = at[s]
            values[s:e] = self.ranker._matrix64[cols[s:e]] @ self.factors64[rows[r]]
            places[s:e] = np.searchsorted(nearest[r], values[s:e], side="right")
        return values, places

    def _candidates_row(self, r: int, limit: float, cols, values, bounds) -> np.ndarray:
        """Row r's ranks from its candidates: relevant values within ``limit`` and the others given."""
        rk = self.ranker
        if rk._classes:
            group, at = self.group_of[r]
            lo, found = self.groups[group]
            rel_values = found[at]
            rel_cols = lo + np.arange(rel_values.size)
        else:
            indptr, all_cols, found = self.relevant_cols
            rel_cols = all_cols[indptr[r] : indptr[r + 1]]
            rel_values = found[r, : rel_cols.size]
        keep = np.flatnonzero(rel_values <= limit)
        return exact_ranks(
            self.queries[r],
            int(self.depth[r]),
            np.concatenate([rel_values[keep], values]),
            np.concatenate([np.full(keep.size, self.bound_rel[r]), bounds]),
            np.arange(keep.size + cols.size) < keep.size,
            rk._index[np.concatenate([rel_cols[keep], cols])],
            rk.reference,
            rk.euclidean,
        )


def _places(nearest: np.ndarray, ends: np.ndarray, values: np.ndarray, probes: np.ndarray):
    """How many of its row's nearest relevant values each value, and each probe, reaches (equal: reached).

    ``values`` are grouped by row, row i's at ``ends[i]:ends[i + 1]``; ``probes`` has shape
    (rows, p). Returns (places of shape (values,), reached of shape (p, rows)).
    """
    out = np.empty(values.size, dtype=np.int64)
    reached = np.empty((probes.shape[1], len(probes)), dtype=np.int64)
    for r in range(len(probes)):
        if ends[r + 1] > ends[r]:
            out[ends[r] : ends[r + 1]] = np.searchsorted(nearest[r], values[ends[r] : ends[r + 1]], side="right")
        if probes.shape[1]:
            reached[:, r] = np.searchsorted(nearest[r], probes[r], side="right")
    return out, reached


def _rough_order(at: np.ndarray, starts: np.ndarray, values: np.ndarray, n: int) -> np.ndarray:
    """A permutation keeping rows together, each in ascending order of its values rounded to float32.

    ``at`` (ascending) is each value's row and ``starts`` its row's first position. One sort
    of uint64 keys (row, rounded value, position in the row); the identity where those do not
    fit in 64 bits (only speed depends on the order).
    """
    row_bits, index_bits = int(at[-1]).bit_length() if at.size else 0, max(n - 1, 1).bit_length()
    if row_bits + index_bits > 32:
        return np.arange(at.size)
    bits = values.astype(np.float32).view(np.uint32)
    bits = bits ^ np.where(bits >> 31, np.uint32(0xFFFF_FFFF), np.uint32(0x8000_0000))  # sorts as the values
    keys = (at.astype(np.uint64) << np.uint64(32 + index_bits)) | (bits.astype(np.uint64) << np.uint64(index_bits))
    keys |= (np.arange(at.size) - starts).astype(np.uint64)
    keys.sort()
    return starts + (keys & np.uint64((1 << index_bits) - 1)).astype(np.int64)


def _near(flat_padded: np.ndarray, at: np.ndarray, values: np.ndarray, window: np.ndarray) -> np.ndarray:
    """Values within ``window`` of the relevant value just below (``flat_padded[at]``) or above them."""
    return (values - flat_padded[at] <= window) | (flat_padded[at + 1] - values <= window)


def _smallest_sorted(values: np.ndarray, k: int) -> np.ndarray:
    """The ``k`` smallest of each row of ``values`` (b, m), ascending: shape (b, min(k, m))."""
    k = min(k, values.shape[1])
    if 4 * k < values.shape[1]:  # a partition first pays when few are kept
        values = np.partition(values, k - 1, axis=1)[:, :k]
    return np.sort(values, axis=1)[:, :k]


def _round_up(limit: np.ndarray, dtype) -> np.ndarray:
    """``limit`` in ``dtype``, rounded up where it is not exact (a candidate is never lost)."""
    out = limit.astype(dtype)
    return np.where(out < limit, np.nextafter(out, dtype.type(np.inf)), out)
