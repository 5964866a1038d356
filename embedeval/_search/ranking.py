"""The exact ranking: candidates from any source, ordered as a full stable float64 sort would."""

from __future__ import annotations

import numpy as np

from .candidates import Candidates
from .error_bound import error_bound, scale, terms
from .float64 import norms, pair_distances
from .ignored import as_ignored, drop_ignored


class ExactSearcher:
    """Exact k-nearest-neighbour search over gathered candidates (see :mod:`embedeval._search`).

    Subclasses say where candidates come from (:meth:`_gather`) and, unless they hold the
    prepared references in memory as ``_reference``, where float64 rows for recomputation come
    from (:meth:`reference_rows`), and set ``size`` (the number of references), ``euclidean``
    and ``max_norm`` (the largest norm of a prepared reference).
    """

    exact = True  # every searcher but the approximate one
    # whether rankings past the deep switch take deep_ranker's DeepRanker (references in memory,
    # and not collapsed: :data:`embedeval._core.budget.DEEP_CENTRED_FROM`)
    ranks_deep = False
    _rankers = None  # the deep rankings (memory.DeepRankers) of searchers that hold their references
    size: int
    euclidean: bool
    max_norm: float

    def _gather(self, queries: np.ndarray, n: int) -> Candidates:  # pragma: no cover - abstract
        """At least the ``n`` best candidates of each query (all, if ``n`` >= ``size``)."""
        raise NotImplementedError

    def reference_rows(self, idx: np.ndarray) -> np.ndarray:
        """The prepared float32 reference vectors at ``idx`` (c,), shape (c, d): rows of
        ``_reference`` where a subclass holds them in memory."""
        return self._reference[idx]

    def deep_ranker(self, class_codes: np.ndarray | None):
        """The deep ranking over these references (:class:`~embedeval._search.deep.DeepRanker`), made
        for the references' ``class_codes`` (or None), where ``ranks_deep``; None otherwise."""
        return None if self._rankers is None else self._rankers.get(class_codes)

    def _error_bound(self, queries: np.ndarray, unit_roundoff: float) -> np.ndarray:
        """E per query, shape (b,): no gathered distance of that query is off by more.

        :func:`~embedeval._search.error_bound.error_bound` with faiss's terms (d + 4 squared
        euclidean, d + 3 inner product) and M the largest reference norm.
        """
        d, s = queries.shape[1], scale(norms(queries), self.max_norm, self.euclidean)
        return error_bound(s, terms(d, self.euclidean), unit_roundoff, d)

    def search(self, queries: np.ndarray, k: int, ignore=None, classes=None) -> np.ndarray:
        """Indices of each query's ``k`` nearest references, nearest first, ties by lower index.

        Parameters
        ----------
        queries : numpy.ndarray of shape (b, d), float32
            Prepared (:func:`embedeval._inputs.arrays.prepare`) as the references are.
        k : int
            In [1, number of references - the fewest references a query ignores], as the entry
            points check it (not checked again here).
        ignore : Ignored or numpy.ndarray of shape (b,), optional
            References each query must not be given (:class:`~embedeval._search.ignored.Ignored`;
            an int array is one reference per query, the query itself in leave-one-out
            evaluation). Query i is ranked ``k + ignore.counts[i]`` deep exactly and its ignored
            references are then removed by index, never by position, so duplicates of them at
            the same distance keep their ranks.
        classes : callable, optional
            ``classes(rows, idx) -> array of shape (c, m)``: the relevance class of reference
            ``idx[i, j]`` for query ``rows[i]`` (``rows``: positions among ``queries``, shape
            (c,); ``idx`` may hold -1, whose class is not read). References of one class must
            be interchangeable for every metric computed from the result (binary relevance
            for binary metrics, the grade for graded ones). When given, only the sequence of
            classes of the result is guaranteed exact: near-tied candidates are recomputed in
            float64 only in runs that hold more than one class, since reordering references of
            one class changes no metric. An ignored reference may have any class: a run is
            left unordered only when all its members share one class, and then its remaining
            members still do.

        Returns
        -------
        numpy.ndarray of shape (b, k), int64
            -1 after a query's last reference, where it ignores so many that fewer than ``k``
            are left.

        Notes
        -----
        Later work reads this path: the runs that hold more than one class are the only places
        where candidates are recomputed in float64 and sorted by (distance, index), so exactly
        equal float64 distances between references of different classes are found there.
        """
        ignore = as_ignored(ignore)
        counts = np.zeros(queries.shape[0], dtype=np.int64) if ignore is None else ignore.counts
        out = np.empty((queries.shape[0], k), dtype=np.int64)
        pending = np.arange(queries.shape[0])
        n_candidates = k + max(8, k // 64)
        while pending.size:
            n = min(n_candidates + int(counts[pending].max(initial=0)), self.size)
            ranked, settled = self._rank(queries[pending], k, n, pending, ignore, classes)
            out[pending[settled]] = ranked[settled]
            pending = pending[~settled]
            n_candidates *= 2
        return out

    def _rank(self, queries, k, n_candidates, rows, ignore, classes):
        """Each row's top k in exact order, and whether that top k is certain.

        Returns ``(ranked, settled)``: ranked of shape (b, k), ignored references removed;
        settled of shape (b,), bool.
        """
        c = self._gather(queries, n_candidates)
        idx = c.idx
        b, m = idx.shape
        with np.errstate(invalid="ignore"):  # inf - inf in the padding of merged shards
            gap = np.diff(c.dist, axis=1) > 2 * self._error_bound(queries, c.unit_roundoff)[:, None]
        if (c.length < m).any():
            gap &= np.arange(1, m)[None, :] < c.length[:, None]  # between two real candidates
            joined = ~gap & (np.arange(1, m)[None, :] < c.length[:, None])
        else:
            joined = ~gap
        # Ignored references stay in place until the end: row i is ranked counts[i] columns
        # deeper, up to column last[i], and they are removed from that exact head.
        counts = np.zeros(b, dtype=np.int64) if ignore is None else ignore.counts[rows]
        last = np.minimum(k - 1 + counts, m - 1)
        if classes is not None:
            # Only a run holding references of more than one class needs ordering.
            cls = classes(rows, idx)
            pair = joined & (cls[:, 1:] != cls[:, :-1])
        else:
            pair = joined
        # Runs: maximal stretches of joined candidates, numbered across the block, row by row.
        starts = np.ones((b, m), dtype=bool)
        starts[:, 1:] = ~joined
        run = np.cumsum(starts, dtype=np.int64).reshape(b, m)
        r, col = np.nonzero(pair)
        run_of_pair = run[r, col]
        needed = run_of_pair <= run[r, last[r]]  # runs that begin after column ``last`` cannot matter
        if needed.any():
            to_order = np.zeros(int(run[-1, -1]) + 1, dtype=bool)
            to_order[run_of_pair[needed]] = True
            sel_rows, cols = np.nonzero(to_order[run])  # row-major: grouped by row, then by run
            members = idx[sel_rows, cols]
            if c.exact is not None:
                exact = c.exact[sel_rows, cols]
            else:
                exact = pair_distances(queries, sel_rows, members, self.reference_rows, self.euclidean)
            # Each run occupies contiguous positions; sorting its members by (distance, index)
            # and writing them back into the same positions orders the run exactly.
            idx[sel_rows, cols] = members[_order_runs(run[sel_rows, cols], exact, members)]
        # Settled: a gap after column ``last`` (nothing left out can come before it), or nothing
        # was left out at all.
        return drop_ignored(idx, k, rows, ignore), np.isinf(c.worst) | _gap_from(gap, last)


def _gap_from(gap: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Whether each row of ``gap`` (b, m - 1) has a True at a column >= its ``last`` (b,)."""
    if gap.shape[1] == 0:
        return np.zeros(gap.shape[0], dtype=bool)
    if (last == last[0]).all():
        return gap[:, int(last[0]) :].any(axis=1)
    final = gap.shape[1] - 1 - np.argmax(gap[:, ::-1], axis=1)  # each row's last gap
    return gap.any(axis=1) & (final >= last)


def _order_runs(run: np.ndarray, exact: np.ndarray, members: np.ndarray) -> np.ndarray:
    """The permutation that sorts entries by (run, exact distance, reference index).

    One sort of the distances and one of an integer (run, rank of the distance) key is several
    times faster than a three-key lexsort (bench/NOTES.md, 'Figures moved from the code (stop
    52)'); it is exact unless two members of one run have equal distances, in which case the
    index must decide and the lexsort is used.

    Parameters
    ----------
    run, exact, members : numpy.ndarray of shape (m,)
        Run id (int64), float64 distance and reference index of each entry.

    Returns
    -------
    numpy.ndarray of shape (m,), int64
    """
    by_distance = np.argsort(exact)
    rank = np.empty(exact.size, dtype=np.int64)
    rank[by_distance] = np.arange(exact.size)
    order = np.argsort(run * exact.size + rank)  # run ids are int64: no overflow
    sorted_run, sorted_exact = run[order], exact[order]
    if ((sorted_run[1:] == sorted_run[:-1]) & (sorted_exact[1:] == sorted_exact[:-1])).any():
        return np.lexsort((members, exact, run))
    return order
