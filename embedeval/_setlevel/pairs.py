"""All pairs of items, tile by tile: float64 BLAS distances with a proven error bound, exact
float64 distances on demand, and exact binning of pair distances on a uniform grid.

The pairs are either the n(n-1)/2 pairs i < j of one set, or all n_q x n_r pairs between a query
set and a reference set; a pair is *positive* when both items carry the same label. No pass
ever holds more than one tile of pair distances.

Exact distance. A pair's distance is what :func:`embedeval._search.float64.exact_distance` computes
from the float32 vectors in float64 (squared euclidean, or the negated inner product of the
vectors, L2-normalised in float64 and rounded to float32 for cosine): the same numbers as the rest of embedeval.

Approximate distance. Tiles are computed with one float64 matrix product, ``||q||^2 + ||r||^2 -
2 q.r`` or ``-q.r``, and differ from the exact distance by at most E, the one bound of
:mod:`embedeval._search.error_bound` with S from the maxima of the tile's row and column norms
and u = 2^-53. What is special here is the count of roundings t: both computations count (the
product's and the exact formula's) and the additions, |D - d| <= (gamma_d + 2u + gamma_{d+3}) S
(euclidean) or 2 gamma_d S (inner product), taken as t = 2d + 8 or 2d + 2, which leaves one
unit roundoff of S for the rounding of D +- E.

Grid. ``bin(v) = clip(floor((v - lo) * scale), -1, n_bins) + 1`` (0 and n_bins + 1 are the
under- and overflow bins), evaluated in float64. Being a composition of monotone rounded
operations it is monotone in v, so the bin of an exact distance d lies between the bins of
D - E and D + E: a pair whose approximate coordinate is not within a margin of a bin edge is in
the same bin exactly, and only the others are recomputed exactly (rare: the margin is ~1e-9 of
a bin). Histograms built this way count exact distances exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._inputs.arrays import prepare
from .._search.error_bound import FLOAT64_UNIT_ROUNDOFF as _U
from .._search.error_bound import error_bound, scale
from .._search.float64 import exact_pairs

# Columns of a tile, in multiples of its rows.
TILE_WIDTH = 4


def pair_counts(query_codes: np.ndarray, reference_codes: np.ndarray | None) -> tuple[int, int]:
    """(pairs, positive pairs): of distinct items i < j within ``query_codes`` (``reference_codes``
    None), else of every (query, reference) pair; positive when the class codes agree."""
    n_codes = int(max(query_codes.max(initial=-1), -1 if reference_codes is None else reference_codes.max(initial=-1)))
    sizes_q = np.bincount(query_codes, minlength=n_codes + 1)
    if reference_codes is None:
        return query_codes.size * (query_codes.size - 1) // 2, int((sizes_q * (sizes_q - 1) // 2).sum())
    sizes_r = np.bincount(reference_codes, minlength=n_codes + 1)
    return query_codes.size * reference_codes.size, int((sizes_q * sizes_r).sum())


@dataclass(frozen=True)
class Tile:
    """A rectangle of pairs: ``rows`` x ``cols`` (slices, or index arrays into the two sets).
    ``upper``: only the pairs above the diagonal (row position < column position) count."""

    rows: slice | np.ndarray
    cols: slice | np.ndarray
    upper: bool


class PairSpace:
    """The pairs of one set (i < j) or of two sets (all query x reference), and their distances.

    Parameters
    ----------
    queries : numpy.ndarray of shape (n_q, d), float32
    query_codes : numpy.ndarray of shape (n_q,), int64
    references, reference_codes : optional
        None for the pairs within ``queries``.
    distance : {"euclidean", "inner_product", "cosine"}
    tile_rows : int
        Rows of a tile of pairs (it has TILE_WIDTH times as many columns).
    """

    def __init__(self, queries, query_codes, references, reference_codes, distance: str, tile_rows: int):
        self.within = references is None
        self.euclidean = distance == "euclidean"
        self.q = prepare(queries, distance)
        self.r = self.q if self.within else prepare(references, distance)
        self.q_codes = query_codes
        self.r_codes = query_codes if self.within else reference_codes
        self.tile_rows = tile_rows
        self.q_sq = np.einsum("ij,ij->i", self.q, self.q, dtype=np.float64)
        self.r_sq = self.q_sq if self.within else np.einsum("ij,ij->i", self.r, self.r, dtype=np.float64)
        self.q_norm, self.r_norm = np.sqrt(self.q_sq), np.sqrt(self.r_sq)
        d = self.q.shape[1]
        self._terms = 2 * d + (8 if self.euclidean else 2)  # error_bound's t (module docstring)
        self.n_pairs, self.n_positive = pair_counts(query_codes, None if self.within else reference_codes)
        self.n_negative = self.n_pairs - self.n_positive

    # -- tiles -------------------------------------------------------------------------------
    def tiles(self):
        """Tiles covering every pair once (the upper triangle of the n x n matrix within a set):
        ``tile_rows`` rows by ``TILE_WIDTH`` times as many columns (fewer, larger products: a
        product call is where BLAS threads wake, and they compete with the work in between)."""
        t, nq, nr = self.tile_rows, len(self.q), len(self.r)
        w = t * TILE_WIDTH
        for a in range(0, nq, t):
            for b in range(a if self.within else 0, nr, w):
                yield Tile(slice(a, min(a + t, nq)), slice(b, min(b + w, nr)), self.within and a == b)

    def positive_tiles(self):
        """Tiles covering every positive pair once (and few others): items sorted by label,
        consecutive classes grouped until a group reaches a tile's side."""
        order_q = np.argsort(self.q_codes, kind="stable")
        order_r = order_q if self.within else np.argsort(self.r_codes, kind="stable")
        n_codes = int(max(self.q_codes.max(), self.r_codes.max())) + 1
        ends_q = np.cumsum(np.bincount(self.q_codes, minlength=n_codes))
        ends_r = ends_q if self.within else np.cumsum(np.bincount(self.r_codes, minlength=n_codes))
        t = self.tile_rows
        start_q = start_r = 0
        for c in range(n_codes):
            stop_q, stop_r = int(ends_q[c]), int(ends_r[c])
            if c < n_codes - 1 and max(stop_q - start_q, stop_r - start_r) < t:
                continue
            rows, cols = order_q[start_q:stop_q], order_r[start_r:stop_r]
            for a in range(0, rows.size, t):
                for b in range(a if self.within else 0, cols.size, t):
                    yield Tile(rows[a : a + t], cols[b : b + t], self.within and a == b)
            start_q, start_r = stop_q, stop_r

    def valid(self, tile: Tile, shape) -> np.ndarray | None:
        """Mask of the pairs a tile counts (None: all of them)."""
        return np.triu(np.ones(shape, dtype=bool), 1) if tile.upper else None

    def positive(self, tile: Tile) -> np.ndarray:
        """Boolean mask of the tile's positive pairs (same label)."""
        return self.q_codes[tile.rows][:, None] == self.r_codes[tile.cols][None, :]

    # -- distances ---------------------------------------------------------------------------
    def approx(self, tile: Tile, norms: bool = True) -> tuple[np.ndarray, float]:
        """float64 BLAS distances of a tile and their error bound E (see the module docstring).

        ``norms=False`` (euclidean): the product ``-2 q.r`` only; the caller adds
        ``q_sq[rows][:, None]`` then ``r_sq[cols][None, :]``, in that order (the compiled pass
        adds them as it reads the tile, instead of two more passes over it)."""
        q = self.q[tile.rows].astype(np.float64)
        r = self.r[tile.cols].astype(np.float64)
        q *= -2.0 if self.euclidean else -1.0  # a power of two: the product stays the same rounded numbers
        dist = q @ r.T
        q_max, r_max = float(self.q_norm[tile.rows].max()), float(self.r_norm[tile.cols].max())
        if self.euclidean:
            if norms:
                dist += self.q_sq[tile.rows][:, None]
                dist += self.r_sq[tile.cols][None, :]
        return dist, error_bound(scale(q_max, r_max, self.euclidean), self._terms, _U, self.q.shape[1])

    def exact(self, rows: np.ndarray, cols: np.ndarray, kernel: bool | None = None) -> np.ndarray:
        """Exact float64 distances of the pairs (q[rows[i]], r[cols[i]])
        (:func:`embedeval._search.float64.exact_pairs`; ``kernel`` as there)."""
        return exact_pairs(self.q, self.r, rows, cols, self.euclidean, kernel)

    def bounds(self) -> tuple[float, float]:
        """Bounds no pair distance goes outside."""
        q_max, r_max = float(self.q_norm.max()), float(self.r_norm.max())
        if self.euclidean:
            return 0.0, (q_max + r_max) ** 2 * (1 + 1e-6)
        return -q_max * r_max * (1 + 1e-6), q_max * r_max * (1 + 1e-6)

    def sample(self, size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A seeded random sample of pairs (uniform over all pairs) and of positive pairs.

        Returns exact distances of the random pairs, whether each is positive, and exact
        distances of the positive sample (used to place a grid and guess where thresholds lie).
        """
        rng = np.random.default_rng(seed)
        nq, nr = len(self.q), len(self.r)
        i, j = rng.integers(0, nq, size), rng.integers(0, nr, size)
        if self.within:
            i, j = i[i != j], j[i != j]
        # positive pairs: a random query item and a random reference item of its class
        n_codes = int(max(self.q_codes.max(), self.r_codes.max())) + 1
        counts = np.bincount(self.r_codes, minlength=n_codes)
        starts = np.cumsum(counts) - counts
        pi = rng.integers(0, nq, size)
        width = counts[self.q_codes[pi]]
        pick = starts[self.q_codes[pi]] + (rng.random(size) * width).astype(np.int64)
        pi, pj = pi[width > 0], np.argsort(self.r_codes, kind="stable")[pick[width > 0]]
        if self.within:
            pi, pj = pi[pi != pj], pj[pi != pj]
        positive = self.q_codes[i] == self.r_codes[j]
        return self.exact(i, j), positive, self.exact(pi, pj)


@dataclass(frozen=True)
class Grid:
    """Uniform bins ``floor((v - lo) * scale)`` over n_bins, with under- and overflow bins."""

    lo: float
    scale: float
    n_bins: int

    @classmethod
    def covering(cls, low: float, high: float, n_bins: int) -> Grid:
        """A grid of ``n_bins`` >= 2 bins spanning [low, high] (a quarter bin of margin on each
        side); bins are never narrower than the spacing of float64 numbers there, so that a
        refinement can always separate distinct distances."""
        span = high - low if high > low else max(abs(low), 1.0)  # one value: any width serves
        width = max(span / (n_bins - 0.5), float(np.spacing(max(abs(low), abs(high)))), 2.0**-1000)
        return cls(low - width / 4, 1.0 / width, n_bins)

    def coord(self, values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        out = np.subtract(values, self.lo, out=out)
        return np.multiply(out, self.scale, out=out)

    def margin(self, error: float) -> float:
        """Coordinate margin covering an error of ``error`` in the distance and the rounding of
        the coordinate itself (for coordinates near the grid, |coord| <= n_bins + 2)."""
        return error * self.scale + 5 * _U * (self.n_bins + 3)

    def bins(self, values: np.ndarray) -> np.ndarray:
        """Bins (0 .. n_bins + 1) of exact distances."""
        return self.bins_of(self.coord(np.asarray(values, dtype=np.float64)))

    def bins_of(self, coords: np.ndarray) -> np.ndarray:
        """Bins (0 .. n_bins + 1) of grid coordinates: ``clip(floor(coords), -1, n_bins) + 1``."""
        return np.clip(np.floor(coords), -1, self.n_bins).astype(np.int64) + 1

    def value_range(self, bin_index: int, within: tuple[float, float]) -> tuple[float, float]:
        """Approximate value range of a bin, intersected with ``within`` (which bounds the
        under- and overflow bins)."""
        low = within[0] if bin_index == 0 else max(within[0], self.lo + (bin_index - 1) / self.scale)
        high = within[1] if bin_index == self.n_bins + 1 else min(within[1], self.lo + bin_index / self.scale)
        return min(low, high), max(low, high)


def exact_bins(
    space: PairSpace, grid: Grid, tile: Tile, coords: np.ndarray, error: float, positions: np.ndarray | None = None
) -> np.ndarray:
    """Exact bins of pairs from their approximate coordinates (``grid.coord`` of approximate
    distances with error at most ``error``): certain where the coordinate is farther than the
    margin from a bin edge, recomputed exactly elsewhere.

    ``coords`` holds the whole tile (any shape, row-major) or, with ``positions``, the pairs at
    those flat positions of the tile. Returns int64 bins in 0 .. n_bins + 1, shaped as ``coords``.
    """
    e = grid.margin(error)
    k = np.floor(coords)
    frac = coords - k
    unsure = (frac < e) | (frac >= 1 - e)
    np.clip(k, -1, grid.n_bins, out=k)
    bins = k.astype(np.int64)
    bins += 1
    if unsure.any():
        at = np.flatnonzero(unsure)
        rows, cols = pair_indices(tile, at if positions is None else positions[at])
        bins.reshape(-1)[at] = grid.bins(space.exact(rows, cols))
    return bins


def pair_indices(tile: Tile, flat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Item indices (query, reference) of the tile's pairs at flat (row-major) positions."""
    width = tile.cols.size if isinstance(tile.cols, np.ndarray) else tile.cols.stop - tile.cols.start
    r, c = np.divmod(flat, width)
    rows = tile.rows[r] if isinstance(tile.rows, np.ndarray) else tile.rows.start + r
    cols = tile.cols[c] if isinstance(tile.cols, np.ndarray) else tile.cols.start + c
    return rows, cols
