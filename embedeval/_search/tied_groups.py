"""The tied scan's bookkeeping: graded references in order, their windows, and exact tie groups.

:class:`~embedeval._search.tied_scan.TiedScanner` gives each positively graded pair (query i,
reference k) a value a_k within ``E_a`` of s_k (the exact distance minus ||q||^2, see there),
and each other reference a value v within ``E_v``. With ``T = 4 E_a`` and ``W = 2 (E_v + E_a)``
(each twice what the proof needs, for the rounding of the sums that place the windows):

* two graded values with |a_j - a_k| > T are in the order of a; graded values closer than that
  are *chained* (consecutive gaps <= 2 T), and a chain of two or more is ordered by the exact
  formula and split where it differs (tie groups of graded references);
* the windows [a_k - W, a_k + W] are merged where they touch (consecutive gaps <= 2 W): a
  reference below a merged window is strictly nearer than every graded one of it, a reference
  above it strictly farther; a *member* (inside) gets its own float64 value a_c (within E_a),
  which decides it against the graded values with |a_c - a_k| > T, and it touches at most one
  chain otherwise (chains are more than 2 T apart); there the exact formula decides.

Everything here is numpy over the pairs; only the per-chunk window pass has a compiled twin.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Items:
    """The graded pairs of a query block, sorted by (query, a) (arrays of shape (n,)), and the
    merged windows of each query (arrays of shape (b, g) for the window pass)."""

    rows: np.ndarray
    cols: np.ndarray
    level: np.ndarray
    a: np.ndarray
    chain_head: np.ndarray  # bool: first item of a chain
    window: np.ndarray  # each item's merged window, numbered across the block
    window_start: np.ndarray  # first item of each merged window
    window_stop: np.ndarray
    window_first: np.ndarray  # (b,) number of each query's first window
    low: np.ndarray  # (b, g) window ends, +inf past a query's last
    high: np.ndarray
    n_windows: np.ndarray  # (b,)

    @classmethod
    def arrange(cls, b, rows, cols, level, a, chain_gap, window_half):
        """Sort the pairs by (query, a), chain them and merge their windows.

        ``chain_gap`` (T) and ``window_half`` (W) have shape (b,), one per query.
        """
        # by a, then by query with a stable sort (a radix sort on 16-bit row numbers)
        order = np.argsort(a)
        order = order[np.argsort(rows[order].astype(np.int16 if b < 1 << 15 else np.int64), kind="stable")]
        rows, cols, level, a = rows[order], cols[order], level[order], a[order]
        new_row = np.ones(rows.size, dtype=bool)
        new_row[1:] = rows[1:] != rows[:-1]
        gap = np.full(rows.size, np.inf)
        gap[1:] = a[1:] - a[:-1]
        chain_head = new_row | ~(gap <= 2.0 * chain_gap[rows])
        window_head = new_row | ~(gap <= 2.0 * window_half[rows])
        window = np.cumsum(window_head) - 1
        window_start = np.flatnonzero(window_head)
        # each window stops where the next starts; no pair (all ungraded or ignored), no window
        window_stop = np.append(window_start[1:], rows.size)[: window_start.size]
        n_windows = np.bincount(rows[window_head], minlength=b).astype(np.int64)
        window_first = np.cumsum(n_windows) - n_windows
        g = int(n_windows.max(initial=0))
        low, high = np.full((b, g), np.inf), np.full((b, g), np.inf)
        w_rows = rows[window_start]
        column = np.arange(window_start.size) - window_first[w_rows]
        low[w_rows, column] = a[window_start] - window_half[w_rows]
        high[w_rows, column] = a[window_stop - 1] + window_half[w_rows]
        return cls(
            rows, cols, level, a, chain_head, window, window_start, window_stop, window_first, low, high, n_windows
        )


def resolve(items: Items, below, members, values, exact, chain_gap, n_levels):
    """Tie groups of every query: (nearer, equal, at, n_groups), the layout of the scan's counts.

    Parameters
    ----------
    items : Items
    below : numpy.ndarray of shape (b, g), int64
        The other references strictly below each merged window.
    members : tuple of three numpy.ndarray of shape (m,)
        (query, window of that query, reference) of each reference inside a window.
    values, exact : callable
        ``values(rows, cols)``: float64 values within E_a of s; ``exact(rows, cols)``: the exact
        formula (:func:`~embedeval._search.float64.pair_distances`).
    chain_gap : numpy.ndarray of shape (b,)
        T.
    n_levels : int

    Returns
    -------
    nearer, equal : numpy.ndarray of shape (b, G), int64
        Per tie group (G the most of a query), the other references strictly nearer and exactly
        as near.
    at : numpy.ndarray of shape (b, G, n_levels), int64
        The graded references of each group, by level.
    n_groups : numpy.ndarray of shape (b,), int64
    """
    n = items.rows.size
    pr, pk, pc = members
    window = items.window_first[pr] + pk
    ws, we = items.window_start[window], items.window_stop[window]
    a2 = values(pr, pc)
    p_lo = search_slices(items.a, ws, we, a2 - chain_gap[pr], right=False)
    p_hi = search_slices(items.a, ws, we, a2 + chain_gap[pr], right=True)
    touch = p_lo < p_hi
    chain = np.cumsum(items.chain_head) - 1
    chain_start = np.flatnonzero(items.chain_head)
    chain_stop = np.append(chain_start[1:], n)[: chain_start.size]
    size = chain_stop - chain_start
    needs = size > 1
    needs[chain[p_lo[touch]]] = True
    e = _exact_chains(items, chain, needs[chain], exact)
    # Decided members: strictly nearer than the window's graded values from p_hi on.
    starts, stops = [p_hi[~touch]], [we[~touch]]
    eq_starts, eq_stops = [], []
    if touch.any():  # the exact formula against the chain's graded values, sorted by it
        t_rows, t_chain, t_stop = pr[touch], chain[p_lo[touch]], we[touch]
        e_c = exact(t_rows, pc[touch])
        cs, ce = chain_start[t_chain], chain_stop[t_chain]
        lo = search_slices(e, cs, ce, e_c, right=False)
        hi = search_slices(e, cs, ce, e_c, right=True)
        starts.append(hi)
        stops.append(t_stop)
        eq_starts.append(lo)
        eq_stops.append(hi)
    nearer_item = below[items.rows, items.window - items.window_first[items.rows]] + _ranges(starts, stops, n)
    equal_item = _ranges(eq_starts, eq_stops, n)
    head = items.chain_head.copy()
    head[1:] |= e[1:] != e[:-1]  # NaN (not computed) only at chain heads
    return _groups(items, head, nearer_item, equal_item, n_levels)


def _exact_chains(items, chain, exact_item, exact):
    """Each item's exact value where its chain needs one (NaN elsewhere); the items of those
    chains reordered in place by it (a permutation within each chain)."""
    e = np.full(items.rows.size, np.nan)
    idx = np.flatnonzero(exact_item)
    if idx.size:
        values = exact(items.rows[idx], items.cols[idx])
        sub = np.lexsort((values, chain[idx]))
        e[idx] = values[sub]
        order = idx[sub]
        for name in ("cols", "level", "a"):
            array = getattr(items, name)
            array[idx] = array[order]
    return e


def _ranges(starts, stops, n):
    """How many of the ranges [start, stop) hold each of 0 .. n - 1."""
    starts = np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)
    stops = np.concatenate(stops) if stops else np.zeros(0, dtype=np.int64)
    diff = np.bincount(starts, minlength=n + 1) - np.bincount(stops, minlength=n + 1)
    return np.cumsum(diff[:n])


def search_slices(sorted_values, starts, stops, x, right):
    """Per query t, the first position p in [starts[t], stops[t]) with sorted_values[p] >= x[t]
    (> x[t] if ``right``), stops[t] if none: a binary search in each slice, vectorised."""
    lo, hi = starts.astype(np.int64), stops.astype(np.int64)
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        value = sorted_values[np.where(active, mid, 0)]
        go_right = (value <= x) if right else (value < x)
        go_right &= active
        lo = np.where(go_right, mid + 1, lo)
        hi = np.where(active & ~go_right, mid, hi)


def _groups(items, head, nearer_item, equal_item, n_levels):
    """(nearer, equal, at, n_groups) from the items' group heads."""
    b = items.n_windows.size
    rows = items.rows
    group = np.cumsum(head) - 1
    n_groups = np.bincount(rows[head], minlength=b).astype(np.int64)
    g = int(n_groups.max(initial=0))
    first = np.cumsum(n_groups) - n_groups
    column = group - first[rows]
    nearer, equal = np.zeros((b, g), dtype=np.int64), np.zeros((b, g), dtype=np.int64)
    nearer[rows[head], column[head]] = nearer_item[head]
    equal[rows[head], column[head]] = equal_item[head]
    at = np.bincount((rows * g + column) * n_levels + items.level, minlength=b * g * n_levels)
    return nearer, equal, at.reshape(b, g, n_levels).astype(np.int64), n_groups
