"""Exact tie groups of float embeddings: every reference counted against each graded one's float64 distance.

Under a tie-aware rule (``ties="expected"``, ``"optimistic"``, ``"pessimistic"``) a query's
ranking matters only through the tie groups that hold a positively graded reference: where
each one starts (the references strictly nearer) and what it holds (the references at exactly
that distance, by grade). Tied means exactly equal float64 distances computed by
:func:`~embedeval._search.float64.exact_distance` from the prepared float32 vectors: the formula
that orders near-tied candidates under the index rule, so that the index rule's order and these
groups agree.

The scan
--------
For a block of queries, in chunks of ``pairs // b`` references (memory O(b x chunk), never
queries x references):

1. the graded references of each query (from ``grades``, ignored ones left out) and a float64
   value a of each (:func:`~embedeval._search.tied_kernels.pair_values`, or the exact formula
   on the numpy path);
2. a BLAS product P of the queries with each chunk, in float32 (sgemm) where the bound below is
   of use, and each other reference's value v = ||r||^2 - 2 P (euclidean) or -P, in float64;
3. :mod:`~embedeval._search.tied_groups`: v below a graded reference's window is strictly
   nearer, above it strictly farther; only the references inside a window (near-ties), and
   graded references near each other, are decided by a float64 value and, where that is not
   enough, by the exact formula.

The bound
---------
Both values are distances minus ||q||^2 (euclidean) computed in a rounded way, so each is within
:func:`~embedeval._search.error_bound.error_bound` of the exact formula's result, with that
formula's own bound added (``deep_exact.error_bounds``): v from float32 P = q.r (sgemm) has
faiss's terms in u32, E_v = ``error_bounds(...)[0]``; a, a float64 product with ||r||^2 inside,
has d more terms in u64, E_a = ``error_bounds(...)[1]``. ||r||^2 (float64 sums of exact float64
squares) and the float64 subtraction in v add only u64 terms, within the bound's 1% slack.

A reference with v < a - (E_v + E_a) has e < e_graded (strictly), one with v > a + E_v + E_a
has e > e_graded; the windows use twice that (W = 2 (E_v + E_a)), which covers the float64
roundings of a - W and of the bounds themselves. At d = 128 and norms near 20, W is about 0.03
against distances near 600: a few references per window, recomputed in float64.

Extreme magnitudes: float32 P needs ||q|| M below float32's overflow, and the underflow term
must stay small against the relative one. A block whose (max ||q|| + M)^2 lies outside
[2**-100, 2**100] is multiplied in float64 instead (then E_v = E_a). Inputs prepared by
:mod:`embedeval._inputs.magnitude` (largest norm in [2**-40, 2**40]) always use float32.

The result is a :class:`~embedeval._search.hamming.Counts` whose columns alternate between a
*gap* (the references between two tie groups, none graded) and a *group* (every reference at
exactly that distance): the layout the Hamming path's tie-aware values read.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .._core import budget as _budget
from .._core import compiled
from .._core.csr import offsets_within
from .deep_exact import error_bounds
from .float64 import norms, pair_distances, squared_norms
from .hamming import Counts, chunks, level_of, positive
from .tied_groups import Items, resolve

# (max ||q|| + M)^2 outside these: the chunk products in float64 (float32 overflow, or an
# underflow term that would swamp the bound).
FLOAT32_SCALES = (2.0**-100, 2.0**100)
_BOOKS_CACHED = compiled.in_cache(
    f"{__package__}.tied_group_kernels", "_pack_into", "_arrange_into", "_touch_into", "_groups_into", "_layout_into"
)


class TiedScanner:
    """Counts of the references around each graded reference's exact float64 distance (:class:`Counts`).

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
        Prepared (:func:`embedeval._inputs.arrays.prepare`) reference vectors.
    euclidean : bool
        Squared euclidean distance (True) or minus the inner product (cosine after normalisation).
    pairs : int
        (query, reference) pairs per chunk: bounds the working memory (about 8 bytes each).
    """

    def __init__(self, reference: np.ndarray, euclidean: bool, pairs: int = _budget.TIED_SCAN_PAIRS):
        self.reference = np.ascontiguousarray(reference, dtype=np.float32)
        self.euclidean, self.pairs, self.size = euclidean, pairs, self.reference.shape[0]
        self.norms = squared_norms(self.reference)
        self.max_norm = float(np.sqrt(self.norms.max(initial=0.0)))

    def _values(self, queries):
        """``values(rows, cols)``: float64 values within E_a of s (compiled, or the exact formula
        less ||q||^2), and ``exact(rows, cols)``: the exact formula."""

        def exact(rows, cols):
            return pair_distances(queries, rows, cols, self.reference.__getitem__, self.euclidean)

        if compiled.enabled():
            from . import tied_kernels

            def values(rows, cols):
                return tied_kernels.pair_values(queries, self.reference, self.norms, self.euclidean, rows, cols)

            return values, exact
        shift = squared_norms(queries) if self.euclidean else None

        def values(rows, cols):
            e = exact(rows, cols)
            return e - shift[rows] if shift is not None else e

        return values, exact

    def count(
        self,
        queries: np.ndarray,
        grades: Callable[[int, int], np.ndarray],
        ignored: Callable[[int, int], np.ndarray] | None,
        levels: np.ndarray,
        keep=None,
        pairs=None,
    ) -> Counts:
        """Scan every reference for the prepared queries (b, d), float32.

        ``grades``, ``ignored`` and ``levels`` are those of
        :meth:`~embedeval._search.hamming.HammingScanner.count`; ``keep`` is None (the route sends
        only the tie-aware rules here). ``pairs``, where relevance is binary: a function
        ``(start, stop) -> (rows, cols, excluded)`` that gives what the masks would
        (:meth:`embedeval._relevance.Judge.class_pairs`), read instead of them.

        Returns
        -------
        Counts
            ``total`` and ``graded`` of shape (b, 2 g) and (b, 2 g, L), g the most tie groups
            holding a graded reference of a query: column 2j holds the references strictly
            between group j - 1 and group j, column 2j + 1 those of group j.
        """
        queries = np.ascontiguousarray(queries, dtype=np.float32)
        b, d = queries.shape
        parts = chunks(self.size, self.pairs, b)
        rows, cols, level, excluded = self._graded(parts, grades, ignored, levels, pairs)
        q_norms = norms(queries)
        scale = (q_norms.max(initial=0.0) + self.max_norm) ** 2
        wide = not FLOAT32_SCALES[0] <= scale <= FLOAT32_SCALES[1]
        bound32, bound64 = error_bounds(q_norms, self.max_norm, d, self.euclidean)
        chain_gap = 4.0 * bound64
        window_half = 2.0 * ((bound64 if wide else bound32) + bound64)
        values, exact = self._values(queries)
        arrange, resolve_counts = Items.arrange, _resolve_counts
        if compiled.enabled() and _compiled_books(rows.size):  # the same bookkeeping in compiled loops
            from . import tied_group_kernels as books

            arrange, resolve_counts = books.arrange, books.resolve_counts
        items = arrange(b, rows, cols, level, values(rows, cols), chain_gap, window_half)
        below, members = self._around(queries, parts, excluded, items, wide)
        return Counts(*resolve_counts(items, below, members, values, exact, chain_gap, levels.size), levels)

    @staticmethod
    def _graded(chunks, grades, ignored, levels, pairs=None):
        """(row, column, level) of each positively graded, unignored pair; per chunk, the flat
        positions that the count of the others leaves out (graded or ignored)."""
        fast = compiled.enabled()
        if fast:
            from .tied_kernels import graded_pairs
        rows, cols, level, excluded = [], [], [], []
        for start, stop in chunks:
            if pairs is not None:  # binary relevance by search, no masks
                r, c, out = pairs(start, stop)
                lv = np.zeros(r.size, dtype=np.int64)
            else:
                g = grades(start, stop)
                kept = positive(g)
                left_out = ignored(start, stop) if ignored is not None else None
                if fast:
                    r, c, out = graded_pairs(kept, left_out)
                else:
                    if left_out is not None:
                        kept = kept & ~left_out
                    out = np.flatnonzero(kept if left_out is None else kept | left_out)
                    r, c = np.nonzero(kept)
                lv, c = level_of(g, r, c, levels), c + start
            for into, array in zip((rows, cols, level, excluded), (r, c, lv, out), strict=True):
                into.append(array)
        if not chunks:
            empty = np.zeros(0, dtype=np.int64)
            return empty, empty, empty, []
        return np.concatenate(rows), np.concatenate(cols), np.concatenate(level), excluded

    def _around(self, queries, chunks, excluded, items, wide):
        """``below`` (b, g), the other references strictly below each merged window, and the
        (query, window, reference) of each reference inside one."""
        below = np.zeros(items.low.shape, dtype=np.int64)
        found = ([], [], [])
        if not items.rows.size:
            return below, tuple(np.zeros(0, dtype=np.int64) for _ in found)
        tables, capacity = None, 0
        if compiled.enabled():
            from . import tied_kernels

            n_buckets = int(min(_budget.TIED_BUCKETS_PER_WINDOW * items.low.shape[1], _budget.TIED_MAX_BUCKETS))
            tables = tied_kernels.bucket_tables(items.low, items.high, items.n_windows, n_buckets)
        dtype = np.float64 if wide else np.float32  # the BLAS products of the queries with each chunk
        queries = queries.astype(dtype, copy=False)
        for (start, stop), out in zip(chunks, excluded, strict=True):
            products = queries @ self.reference[start:stop].T.astype(dtype, copy=False)
            if tables is None:  # the compiled pass takes the pairs left out as a list
                products.reshape(-1)[out] = -np.inf  # v = +inf: graded (counted elsewhere) or ignored
            window = (items.low, items.high, items.n_windows, tables, capacity)
            part, pr, pk, pc = _windows(products, out, self.norms[start:stop], self.euclidean, *window)
            capacity = 2 * pr.size  # the next chunk's first guess
            below += part
            for into, array in zip(found, (pr, pk, pc + start), strict=True):
                into.append(array)
        return below, tuple(np.concatenate(f) for f in found)


def _windows(products, excluded, norms, euclidean, low, high, n_windows, tables=None, capacity=0):
    """Per chunk: (below, rows, windows, columns): the values v (``norms - 2 products`` or
    ``-products``, float64) strictly below each window [low, high] (b, g), and the (row, window,
    column) of each one inside a window. The compiled kernel given its ``tables``
    (:func:`~embedeval._search.tied_kernels.bucket_tables`) and a first guess of the members'
    ``capacity`` (``excluded``: the flat positions of the pairs counted as +inf); else a sort and
    binary searches (the reference: those pairs already -inf in ``products``)."""
    if tables is not None:
        from . import tied_kernels

        capacity = capacity or 64 * products.shape[0]
        while True:
            below, rows, ks, cols, n = tied_kernels.window_pass(
                products, excluded, norms, euclidean, low, high, n_windows, tables, capacity
            )
            if n <= capacity:
                return below, rows[:n], ks[:n], cols[:n]
            capacity = n
    dist = norms - 2.0 * products.astype(np.float64) if euclidean else -products.astype(np.float64)
    b, g = low.shape
    every = np.arange(b)
    busy_row = n_windows > 0
    first = np.where(busy_row, low[:, 0], np.inf)
    last = np.where(busy_row, high[every, np.maximum(n_windows - 1, 0)], -np.inf)
    hist = np.zeros((b, g + 1), dtype=np.int64)
    hist[:, 0] = (dist < first[:, None]).sum(axis=1)
    # The values within [first, last] of their row (NaN in neither): how many low ends lie at or
    # below each (p), and the windows k < p whose high end is >= it (q <= k < p), by binary
    # searches in each row's window ends.
    r, c = np.nonzero((dist >= first[:, None]) & (dist <= last[:, None]))
    v = dist[r, c]
    p, q = np.empty_like(r), np.empty_like(r)
    bounds = np.searchsorted(r, np.arange(b + 1))  # r is sorted: each row's slice
    for i in np.flatnonzero(np.diff(bounds)):
        part, n = slice(bounds[i], bounds[i + 1]), n_windows[i]
        p[part] = np.searchsorted(low[i, :n], v[part], "right")
        q[part] = np.searchsorted(high[i, :n], v[part], "left")
    hist += np.bincount(r * (g + 1) + p, minlength=b * (g + 1)).reshape(b, g + 1)
    below = np.cumsum(hist[:, :g], axis=1)
    below[np.arange(g)[None, :] >= n_windows[:, None]] = 0
    width = np.maximum(p - q, 0)
    ks = np.repeat(q, width) + offsets_within(width)
    return below, np.repeat(r, width), ks, np.repeat(c, width)


def _compiled_books(units: int) -> bool:
    """Whether the bookkeeping of ``units`` graded pairs takes the compiled loops
    (:data:`embedeval._core.budget.BOOKS_COMPILED_FROM`)."""
    return compiled.repaid(
        "tied bookkeeping", units, _budget.BOOKS_COMPILED_FROM, _BOOKS_CACHED, _budget.BOOKS_CACHED_FROM
    )


def _resolve_counts(*args):
    """(total, graded) of :class:`Counts` from the tie groups of :func:`resolve` (``args`` are its own)."""
    nearer, equal, at, n_groups = resolve(*args)
    b = nearer.shape[0]
    graded_at = at.sum(axis=2)
    start = nearer + np.cumsum(graded_at, axis=1) - graded_at
    size = equal + graded_at
    valid = np.arange(nearer.shape[1])[None, :] < n_groups[:, None]
    total = np.zeros((b, 2 * nearer.shape[1]), dtype=np.int64)
    total[:, 1::2] = np.where(valid, size, 0)
    end = np.zeros_like(start)  # where the previous group ends
    end[:, 1:] = start[:, :-1] + size[:, :-1]
    total[:, 0::2] = np.where(valid, start - end, 0)
    graded = np.zeros((b, total.shape[1], at.shape[2]), dtype=np.int64)
    graded[:, 1::2] = at
    return total, graded
