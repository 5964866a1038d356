"""Thresholds of pair verification, found exactly: bracketed by histograms, selected exactly.

A threshold is defined by a rule on the cumulative counts of negative and positive pairs up to
a distance (the FMR levels: the (K+1)-th negative; the EER: where FMR + TPR reaches 1). The
histograms of the main pass put it in one bin; the exact distances of the pairs in that bin
(found among the pairs kept during the main pass when the bin was guessed from a sample, or by
one more pass) then give it exactly. A bin with too many pairs to collect is split by a
sub-histogram first, as often as needed: a bin holding a single distance value is settled by
its counts alone.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .pairs import Grid, PairSpace, pair_indices


class Threshold:
    """A threshold to find: the bin (or chain of refined bins) of pair distances where it lies,
    the counts of pairs below that interval, and, once collected, the interval's distinct exact
    distances with their positive and negative counts."""

    def __init__(self, reached, P: int, M: int, rank: int | None = None):
        self.reached = reached  # reached(cn, cp): does a point with these cumulative counts qualify
        self.P, self.M = P, M
        self.rank = rank  # for an FMR level: the rank among negatives of the first rejected one
        self.chain: list[tuple[Grid, int]] = []
        self.span = (-math.inf, math.inf)  # bounds of the interval's distances
        self.below = (0, 0)  # negatives, positives below the interval
        self.n_pairs = 0
        self.values = None  # (distances, positives, negatives) once known

    @classmethod
    def fmr(cls, x: float, P: int, M: int) -> Threshold:
        k = min(math.floor(x * M), M - 1)
        while (k + 1) / M <= x:
            k += 1
        while k > 0 and k / M > x:
            k -= 1
        return cls(lambda cn, cp, k=k: cn >= k + 1, P, M, k + 1)

    @classmethod
    def eer(cls, P: int, M: int) -> Threshold:
        return cls(lambda cn, cp: cn * P + cp * M >= M * P, P, M)

    def place(self, grid: Grid, pos: np.ndarray, neg: np.ndarray, within: tuple[float, float]) -> None:
        """Descend into the first bin of ``grid`` at whose end the cumulative counts qualify;
        ``within`` bounds the distances of the current interval."""
        cn = self.below[0] + np.cumsum(neg)
        cp = self.below[1] + np.cumsum(pos)
        lo, hi = 0, len(neg) - 1
        while lo < hi:
            mid = (lo + hi) // 2
            if self.reached(int(cn[mid]), int(cp[mid])):
                hi = mid
            else:
                lo = mid + 1
        self.below = (int(cn[lo] - neg[lo]), int(cp[lo] - pos[lo]))
        self.chain.append((grid, lo))
        self.span = grid.value_range(lo, within)
        self.n_pairs = int(neg[lo] + pos[lo])

    def settle(self, values: np.ndarray, positive: np.ndarray) -> None:
        """Record the exact distances of every pair in the interval (and which are positive)."""
        distinct, inverse = np.unique(values, return_inverse=True)
        pos = np.bincount(inverse, weights=positive, minlength=distinct.size).astype(np.int64)
        self.values = (distinct, pos, np.bincount(inverse, minlength=distinct.size) - pos)

    def contains(self, values: np.ndarray) -> np.ndarray:
        inside = np.ones(values.shape, dtype=bool)
        for grid, b in self.chain:
            inside &= grid.bins(values) == b
        return inside

    def _walk(self) -> tuple[int, tuple[int, int], tuple[int, int]]:
        """The first distinct distance of the interval whose point qualifies, with the cumulative
        counts before and at it."""
        vals, pos, neg = self.values
        cn, cp = self.below
        for i in range(vals.size):
            before = (cn, cp)
            cn, cp = cn + int(neg[i]), cp + int(pos[i])
            if self.reached(cn, cp):
                return i, before, (cn, cp)
        raise RuntimeError("internal error: a bracketed threshold lies in its interval")  # pragma: no cover

    def resolve_fmr(self) -> tuple[float, float]:
        _, (cn_a, cp_a), _ = self._walk()
        return (self.P - cp_a) / self.P, cn_a / self.M

    def resolve_eer(self) -> float:
        _, (cn_a, cp_a), (cn_b, cp_b) = self._walk()
        P, M = self.P, self.M
        lam = Fraction(M * P - cn_a * P - cp_a * M, (cn_b - cn_a) * P + (cp_b - cp_a) * M)
        return float((cn_a + lam * (cn_b - cn_a)) / M)


def guess_bins(targets, negatives: np.ndarray, hist_pos: np.ndarray, grid: Grid, budget: int) -> np.ndarray:
    """Bins that hold each threshold with overwhelming probability (5 binomial standard
    deviations around the sample's estimate), as long as their expected pairs fit the budget."""
    guessed = np.zeros(grid.n_bins + 2, dtype=bool)
    S = negatives.size
    if S == 0:
        return guessed
    # estimated share of negatives at or below each bin's end, and its uncertainty
    share = np.cumsum(np.bincount(grid.bins(negatives), minlength=guessed.size)) / S
    spread = 5 * np.sqrt(share * (1 - share) / S) + 3 / S
    ranges = []
    for t in targets:
        if t.rank is not None:
            r = t.rank / t.M
            first, last = np.searchsorted(share + spread, r), np.searchsorted(share - spread, r)
        else:
            tpr = np.cumsum(hist_pos) / t.P
            first, last = np.searchsorted(share + spread + tpr, 1.0), np.searchsorted(share - spread + tpr, 1.0)
        first, last = min(first, guessed.size - 1), min(last, guessed.size - 1)
        ranges.append((first, last, (share[last] - (share[first - 1] if first else 0.0)) * t.M))
    expected = 0.0
    for first, last, pairs in sorted(ranges, key=lambda r: r[2]):
        if expected + pairs > budget / 2:
            break
        guessed[first : last + 1] = True
        expected += pairs
    return guessed


class Kept:
    """The (bin, row, column) of the pairs in the ``guessed`` bins (:func:`guess_bins`), kept tile by
    tile during the main pass while they number at most ``budget`` (beyond it, none: the guess was
    wrong and the thresholds are collected by another pass). ``guessed`` None: nothing is kept."""

    def __init__(self, space: PairSpace, guessed: np.ndarray | None, budget: int):
        self.budget, self.count = budget, 0
        self.parts = None if guessed is None else {}
        self.index = np.int32 if max(len(space.q), len(space.r)) < 2**31 else np.int64

    def add(self, number: int, tile, flat: np.ndarray, bins: np.ndarray) -> None:
        """Keep the pairs at the flat positions ``flat`` of tile ``number`` (``bins``: theirs)."""
        self.count += flat.size
        if self.count > self.budget:
            self.parts = None
        elif flat.size:
            rows, cols = pair_indices(tile, flat)
            self.parts[number] = (bins.astype(np.int32), rows.astype(self.index), cols.astype(self.index))

    def pairs(self):
        """``(bins, rows, cols)`` of every kept pair in the order of the tiles, or None (nothing kept)."""
        if self.parts is None:
            return None
        parts = [self.parts[k] for k in sorted(self.parts)] or [(np.empty(0, dtype=np.int64),) * 3]
        return tuple(np.concatenate(part) for part in zip(*parts, strict=True))


def candidates(space: PairSpace, targets: list[Threshold]):
    """Per tile: exact distances and positive flags of the pairs that may lie in any target's
    interval (a margin test on the first grid of each chain, then exact distances)."""
    for tile in space.tiles():
        dist, error = space.approx(tile)
        near = np.zeros(dist.shape, dtype=bool)
        for t in targets:
            grid, b = t.chain[0]
            coords = grid.coord(dist)
            e = grid.margin(error)
            low = (b - 1) - e if b > 0 else -np.inf
            high = b + e if b < grid.n_bins + 1 else np.inf
            near |= (coords > low) & (coords < high)
        valid = space.valid(tile, dist.shape)
        if valid is not None:
            near &= valid
        flat = np.flatnonzero(near)
        if flat.size:
            rows, cols = pair_indices(tile, flat)
            yield space.exact(rows, cols), space.q_codes[rows] == space.r_codes[cols]


def collect_pass(space: PairSpace, targets: list[Threshold]) -> None:
    """Collect each target's interval: distinct exact distances with positive and negative counts."""
    if not targets:
        return
    parts = [[] for _ in targets]
    for values, positive in candidates(space, targets):
        for part, t in zip(parts, targets, strict=True):
            inside = t.contains(values)
            part.append((values[inside], positive[inside]))
    for part, t in zip(parts, targets, strict=True):
        t.settle(np.concatenate([v for v, _ in part]), np.concatenate([p for _, p in part]))


def refine_pass(space: PairSpace, targets: list[Threshold], n_bins: int) -> None:
    """Split each target's interval with a sub-grid and descend into the qualifying sub-bin; an
    interval holding a single distance value is resolved at once."""
    grids = [Grid.covering(*t.span, n_bins) for t in targets]
    hists = [(np.zeros(n_bins + 2, dtype=np.int64), np.zeros(n_bins + 2, dtype=np.int64)) for _ in targets]
    extremes = [[math.inf, -math.inf] for _ in targets]
    for values, positive in candidates(space, targets):
        for t, g, (pos, neg), ext in zip(targets, grids, hists, extremes, strict=True):
            inside = t.contains(values)
            if inside.any():
                v, p = values[inside], positive[inside]
                sub = g.bins(v)
                pos += np.bincount(sub[p], minlength=pos.size)
                neg += np.bincount(sub[~p], minlength=neg.size)
                ext[0], ext[1] = min(ext[0], float(v.min())), max(ext[1], float(v.max()))
    for t, g, (pos, neg), ext in zip(targets, grids, hists, extremes, strict=True):
        if ext[0] == ext[1]:  # a single distance value: the interval is known
            t.values = (np.array([ext[0]]), np.array([pos.sum()]), np.array([neg.sum()]))
        else:
            t.place(g, pos, neg, (ext[0], ext[1]))
