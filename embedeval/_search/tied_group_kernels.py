"""Compiled twins (numba) of the tied scan's bookkeeping in :mod:`~embedeval._search.tied_groups`.

* :func:`arrange`: the graded pairs sorted by (query, a), chained, and their merged windows: the
  same :class:`~embedeval._search.tied_groups.Items` as :meth:`Items.arrange`. The sort is
  numpy's sort of one 64-bit key per pair (its query, the top bits of a key that orders as a
  does, its index), vectorised on hosts that have it (faster than a compiled merge sort: bench/NOTES.md, stop
  52); the pairs whose keys tie in those bits are then sorted by a itself;
* :func:`resolve_counts`: the members placed against the graded values, the chains that need
  the exact formula sorted by it, the tie groups, and the scan's counts (``total``, ``graded``)
  in the layout of :meth:`~embedeval._search.tied_scan.TiedScanner.count`.

Only the exact formula (:func:`~embedeval._search.float64.pair_distances`, numpy's float64
sums: they define the exact value) stays outside the loops. Every comparison here is the one
the numpy passes make, on the same float64 values, so the counts are identical (the suite
compares both paths with a full sort). Items with equal ``a`` may stand in another order than
numpy's (unstable) argsort leaves them; they are in one chain, and the counts do not depend on
the order within a chain.

As in :mod:`~embedeval._search.tied_kernels`, the plain Python wrappers allocate and the
compiled ``_..._into`` loops allocate nothing.
"""

from __future__ import annotations

import numpy as np

from .._core.compiled import kernel_numba
from .primitives import count_at_most, count_below, ordered_key
from .tied_groups import Items

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

_LAST = np.uint64(0xFFFF_FFFF_FFFF_FFFF)


def arrange(b, rows, cols, level, a, chain_gap, window_half):
    """:meth:`Items.arrange` compiled: the same arrays (see there)."""
    n = rows.size
    row_bits, index_bits = max(b - 1, 1).bit_length(), max(n - 1, 1).bit_length()
    if row_bits + index_bits > 56:
        raise ValueError(f"{n} graded pairs in a block of {b} queries: too many to sort in one pass")
    packed = np.empty(n, dtype=np.uint64)
    _pack_into(rows, a, a.view(np.uint64), row_bits, index_bits, packed)
    packed.sort()  # numpy's sort (vectorised where the host has it)
    out = np.empty((3, n), dtype=np.int64)  # rows, cols, level in (query, a) order
    a_sorted, window, window_start = np.empty(n), np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64)
    chain_head = np.empty(n, dtype=np.bool_)
    n_windows = np.zeros(b, dtype=np.int64)
    order = np.empty(n, dtype=np.int64)
    heads = (chain_head, window, window_start, n_windows)
    items = (rows, cols, level, a, chain_gap, window_half)
    n_all = _arrange_into(packed, index_bits, items, out, a_sorted, heads, order)
    window_stop = window_start[1 : n_all + 1].copy()
    window_start = window_start[:n_all]
    window_first = np.cumsum(n_windows) - n_windows
    g = int(n_windows.max(initial=0))
    low, high = np.full((b, g), np.inf), np.full((b, g), np.inf)
    _window_ends_into(out[0], a_sorted, window_start, window_stop, window_first, window_half, low, high)
    windows = (window, window_start, window_stop, window_first, low, high, n_windows)
    return Items(out[0], out[1], out[2], a_sorted, chain_head, *windows)


@numba.njit(cache=True, nogil=True)
def _pack_into(rows, a, bits, row_bits, index_bits, packed):  # pragma: no cover - compiled
    """``packed`` (n,) uint64: each item's query in the top ``row_bits``, then the top bits of
    a's :func:`.primitives.ordered_key` (NaN last), then its index in the low ``index_bits``."""
    top, cut, low = np.uint64(64 - row_bits), np.uint64(row_bits + index_bits), np.uint64(index_bits)
    for t in range(rows.size):
        key = ordered_key(bits[t]) if a[t] == a[t] else _LAST
        packed[t] = (np.uint64(rows[t]) << top) | ((key >> cut) << low) | np.uint64(t)


@numba.njit(cache=True, nogil=True)
def _arrange_into(packed, index_bits, items, out, a_sorted, heads, order):  # pragma: no cover - compiled
    """:func:`arrange`'s loop over the sorted ``packed`` keys (``items``: rows, cols, level, a,
    chain_gap, window_half): ``out`` (3, n) rows, cols, level and ``a_sorted`` (n,) in (query, a)
    order; ``heads``: ``chain_head``, ``window`` (n,), ``window_start`` (n + 1,: the first item of
    each window, then n), ``n_windows`` (b,) of 0; ``order`` (n,) scratch. Returns the number of
    windows."""
    rows, cols, level, a, chain_gap, window_half = items
    chain_head, window, window_start, n_windows = heads
    n, low = rows.size, np.uint64(index_bits)
    mask = (np.uint64(1) << low) - np.uint64(1)
    for p in range(n):
        order[p] = np.int64(packed[p] & mask)
        a_sorted[p] = a[order[p]]
    s = 0
    for p in range(1, n + 1):  # runs equal in the keys' top bits: sorted by a itself
        if p == n or packed[p] >> low != packed[s] >> low:
            if p - s > 1:
                shell_sort(a_sorted, order, s, p)
            s = p
    n_all = 0
    for p in range(n):
        k = order[p]
        i = rows[k]
        out[0, p], out[1, p], out[2, p] = i, cols[k], level[k]
        first = p == 0 or i != out[0, p - 1]
        gap = np.inf if first else a_sorted[p] - a_sorted[p - 1]
        chain_head[p] = first or not gap <= 2.0 * chain_gap[i]
        if first or not gap <= 2.0 * window_half[i]:
            window_start[n_all] = p
            n_all += 1
            n_windows[i] += 1
        window[p] = n_all - 1
    window_start[n_all] = n
    return n_all


@numba.njit(cache=True, nogil=True)
def _window_ends_into(rows, a, window_start, window_stop, window_first, window_half, low, high):  # pragma: no cover
    """``low``, ``high`` (b, g) of +inf: the ends of each query's merged windows."""
    for w in range(window_start.size):
        s, e = window_start[w], window_stop[w]
        i = rows[s]
        low[i, w - window_first[i]] = a[s] - window_half[i]
        high[i, w - window_first[i]] = a[e - 1] + window_half[i]


@numba.njit(cache=True, nogil=True)
def shell_sort(keys, order, lo, hi):  # pragma: no cover - compiled
    """Sort ``keys[lo:hi]`` (float64, NaN last) ascending, ``order[lo:hi]`` along with it:
    Shell's sort with the gaps 3 h + 1 (insertion for a short run; the runs here are short but
    for ties and near-ties, and this compiles in a tenth of a merge sort's time)."""
    h = 1
    while 3 * h + 1 < hi - lo:
        h = 3 * h + 1
    while h >= 1:
        for x in range(lo + h, hi):
            k, o = keys[x], order[x]
            y = x
            while y - h >= lo and _before(k, keys[y - h]):
                keys[y], order[y] = keys[y - h], order[y - h]
                y -= h
            keys[y], order[y] = k, o
        h //= 3


@numba.njit(cache=True, nogil=True, inline="always")
def _before(x, y):  # pragma: no cover - compiled
    """x strictly before y in numpy's sort order (NaN last)."""
    return x < y or (y != y and x == x)


def resolve_counts(items, below, members, values, exact, chain_gap, n_levels):
    """:func:`~embedeval._search.tied_groups.resolve` and the counts' layout compiled: ``total``
    (b, 2 G) and ``graded`` (b, 2 G, n_levels) of
    :meth:`~embedeval._search.tied_scan.TiedScanner.count` (G the most tie groups of a query).
    ``items`` (:func:`arrange`) is reordered in place within the chains sorted by the exact
    formula, as there."""
    n, b = items.rows.size, items.n_windows.size
    pr, pk, pc = members
    m = pr.size
    a2 = values(pr, pc)
    ends = np.empty((2, m), dtype=np.int64)  # per member: p_lo, p_hi; then the start of its range
    chain, chain_start = np.empty(n, dtype=np.int64), np.empty(n + 1, dtype=np.int64)
    wanted, touched = np.empty(n, dtype=np.int64), np.empty(m, dtype=np.int64)
    needs = np.empty(n, dtype=np.bool_)
    marks = (chain, chain_start, needs, wanted, touched)
    windows = (items.window_first, items.window_start, items.window_stop)
    n_wanted, n_touched = _touch_into(items.a, items.chain_head, *windows, pr, pk, a2, chain_gap, ends, marks)
    wanted, touched = wanted[:n_wanted], touched[:n_touched]
    e_all = exact(np.concatenate((items.rows[wanted], pr[touched])), np.concatenate((items.cols[wanted], pc[touched])))
    head, near, equal = np.empty(n, dtype=np.bool_), np.zeros(n + 1, dtype=np.int64), np.zeros(n + 1, dtype=np.int64)
    n_groups = np.zeros(b, dtype=np.int64)
    scratch = (np.empty(n), np.empty(n), np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64))
    arrays = (items.rows, items.cols, items.level, items.a, items.chain_head, items.window, *windows[::2])
    marks = (chain, chain_start, wanted, touched)
    _groups_into(arrays, (pr, pk), below, ends, marks, e_all, head, near, equal, n_groups, scratch)
    g = int(n_groups.max(initial=0))
    total, graded = np.zeros((b, 2 * g), dtype=np.int64), np.zeros((b, 2 * g, n_levels), dtype=np.int64)
    _layout_into(items.rows, items.level, head, near, equal, n_groups, total, graded)
    return total, graded


@numba.njit(cache=True, nogil=True)
def _touch_into(
    a, chain_head, window_first, window_start, window_stop, pr, pk, a2, chain_gap, ends, marks
):  # pragma: no cover
    """The chains of the items, and per member where its value lies among its window's graded
    values: ``ends`` (2, m) p_lo, p_hi (the first value >= a2 - T, > a2 + T). ``marks``: chain
    (n,) and chain_start (n + 1,) filled here, needs (n,), and ``wanted`` (n,), ``touched`` (m,):
    the items of the chains that need the exact formula (more than one item, or a member
    touches it) and the members that touch one, each in increasing order. Returns their
    numbers."""
    chain, chain_start, needs, wanted, touched = marks
    n = a.size
    c = -1
    for t in range(n):
        if chain_head[t]:
            c += 1
            chain_start[c] = t
        chain[t] = c
    chain_start[c + 1] = n
    for k in range(c + 1):
        needs[k] = chain_start[k + 1] - chain_start[k] > 1
    n_touched = 0
    for j in range(pr.size):
        i = pr[j]
        w = window_first[i] + pk[j]
        lo = count_below(a, window_start[w], window_stop[w], a2[j] - chain_gap[i])
        hi = count_at_most(a, window_start[w], window_stop[w], a2[j] + chain_gap[i])
        ends[0, j], ends[1, j] = lo, hi
        if lo < hi:
            touched[n_touched] = j
            n_touched += 1
            needs[chain[lo]] = True
    n_wanted = 0
    for t in range(n):
        if needs[chain[t]]:
            wanted[n_wanted] = t
            n_wanted += 1
    return n_wanted, n_touched


@numba.njit(cache=True, nogil=True)
def _groups_into(items, members, below, ends, marks, e_all, head, near, equal, n_groups, scratch):  # pragma: no cover
    """The chains of ``wanted`` sorted by their exact values (the items' cols, level, a with
    them), the group heads, and at each head the other references strictly nearer (``near``)
    and exactly as near (``equal``); ``n_groups`` (b,) of 0. ``items``: rows, cols, level, a,
    chain_head, window, window_first, window_stop; ``members``: pr, pk; ``marks``: chain,
    chain_start, wanted, touched; ``e_all``: the exact values of ``wanted``, then of the
    touched members; ``near``, ``equal`` (n + 1,) of 0; ``scratch``: e, spare keys (n,) float64,
    perm, spare order (n,) int64."""
    rows, cols, level, a, chain_head, window, window_first, window_stop = items
    chain, chain_start, wanted, touched = marks
    e, spare_keys, perm, spare_order = scratch
    n, n_wanted = rows.size, wanted.size
    for t in range(n):
        e[t] = np.nan
    for k in range(n_wanted):
        e[wanted[k]] = e_all[k]
    k = 0
    while k < n_wanted:  # wanted holds whole chains, in order
        c = chain[wanted[k]]
        cs, ce = chain_start[c], chain_start[c + 1]
        for t in range(cs, ce):
            perm[t] = t
        shell_sort(e, perm, cs, ce)
        for t in range(cs, ce):  # cols, level and a in the new order
            spare_order[t], spare_keys[t] = cols[perm[t]], a[perm[t]]
        for t in range(cs, ce):
            cols[t], a[t], perm[t] = spare_order[t], spare_keys[t], level[perm[t]]
        for t in range(cs, ce):
            level[t] = perm[t]
        k += ce - cs
    t_k = 0
    pr, pk = members
    for j in range(pr.size):  # each member's range of items it is strictly nearer than
        we = window_stop[window_first[pr[j]] + pk[j]]
        start = ends[1, j]
        if t_k < touched.size and touched[t_k] == j:  # the exact formula against its chain
            c = chain[ends[0, j]]
            x = e_all[n_wanted + t_k]
            lo = count_below(e, chain_start[c], chain_start[c + 1], x)
            start = count_at_most(e, chain_start[c], chain_start[c + 1], x)
            equal[lo] += 1
            equal[start] -= 1
            t_k += 1
        near[start] += 1
        near[we] -= 1
    in_near, in_equal = 0, 0
    for t in range(n):
        in_near += near[t]
        in_equal += equal[t]
        i = rows[t]
        head[t] = chain_head[t] or e[t] != e[t - 1]
        near[t] = below[i, window[t] - window_first[i]] + in_near
        equal[t] = in_equal
        n_groups[i] += head[t]


@numba.njit(cache=True, nogil=True)
def _layout_into(rows, level, head, near, equal, n_groups, total, graded):  # pragma: no cover - compiled
    """The scan's counts: ``total`` (b, 2 G) and ``graded`` (b, 2 G, L) of 0, from the heads."""
    j, previous = -1, -1
    for t in range(rows.size):
        i = rows[t]
        if i != previous:
            j, previous = -1, i
        if head[t]:
            j += 1
            total[i, 2 * j], total[i, 2 * j + 1] = near[t], equal[t]
        graded[i, 2 * j + 1, level[t]] += 1
    for i in range(n_groups.size):
        running, end = 0, 0  # the graded items of the earlier groups; where the last one ends
        for j in range(n_groups[i]):
            at = 0
            for level in range(graded.shape[2]):
                at += graded[i, 2 * j + 1, level]
            start = total[i, 2 * j] + running
            size = total[i, 2 * j + 1] + at
            total[i, 2 * j], total[i, 2 * j + 1] = start - end, size
            end, running = start + size, running + at
