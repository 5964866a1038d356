"""The deep ranking's compiled count (embedeval._search.deep_fused, numba) against the numpy
passes: identical ranks on the same cases (ties and duplicates on a lattice, float32 near-ties far
from the origin, a dominant class, ignored references, every precision, blocks of any size), and
both against a full stable float64 sort."""

from __future__ import annotations

import numpy as np
import pytest
from test_deep import Codes, assert_ranks_equal, class_codes, expected, searched, vectors

from embedeval._core import budget as _budget
from embedeval._core import compiled
from embedeval._search import deep_count, deep_fused
from embedeval._search.deep import DeepRanker

pytest.importorskip("numba")


def ranks_both_ways(monkeypatch, x, codes, depth, ignored, **options):
    """(numpy ranks, compiled ranks, rows the compiled count handled, rows it handed back)."""
    calls = {"rows": 0, "redone": 0}
    count = deep_fused.count

    def spied(block, mixed, rows, top, threshold):
        calls["rows"] += rows.size
        ranks, short = count(block, mixed, rows, top, threshold)
        return ranks, short

    def spied_redo(self, values, mixed, rows, top, threshold, fused=True):
        if not fused:
            calls["redone"] += rows.size
        return original(self, values, mixed, rows, top, threshold, fused)

    from embedeval._search.deep_block import Block

    original = Block.count
    monkeypatch.setattr(_budget, "DEEP_FUSED_COMPILED_FROM", 0)  # the compiled pass from the first value
    monkeypatch.setattr(_budget, "SORT_COMPILED_FROM", 0)  # the compiled sort of the nearest relevant values too
    monkeypatch.setattr(deep_count, "RADIX_SORT", True)
    monkeypatch.setattr(_budget, "DEEP_REACHED_COMPILED_FROM", 0)  # and the sampled others' merge walk
    monkeypatch.setattr(deep_fused, "count", spied)
    monkeypatch.setattr(Block, "count", spied_redo)
    found = []
    for kernels in ("numpy", "auto"):
        monkeypatch.setenv(compiled.KERNELS_VARIABLE, kernels)
        ranker = DeepRanker(x, True, codes, **options)
        counts = np.bincount(codes)[codes] - (ignored is not None)
        marked = Codes(codes, codes).marked(np.arange(len(x)), counts)
        found.append(ranker.ranks(x, marked, depth, None, ignored))
    return found[0], found[1], calls


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("precision", ["auto", "float64", "mixed"])
def test_compiled_count_equals_the_numpy_passes_and_a_full_sort(monkeypatch, seed, precision):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(20, 200)), int(rng.integers(1, 6))
    x, _ = searched(vectors(rng, n, d, ("lattice", "far", "normal")[seed % 3]), "euclidean")
    codes = class_codes(rng, n, ("dominant", "singletons", "few")[(seed // 3) % 3])
    depth = rng.integers(1, n, n) if seed % 2 else np.full(n, n - 1)  # random depths, or whole rankings
    ignored = np.arange(n)[:, None]
    if seed % 3:
        # chunks of a few rows: several row groups per block, each class's slice and the ignored
        # references masked in the group that holds them; one reference of another class ignored
        monkeypatch.setattr(_budget, "DEEP_CHUNK_ROWS", int(rng.integers(1, n)))
        other = np.array([rng.choice(np.flatnonzero(codes != c)) if (codes != c).any() else -1 for c in codes])
        ignored = np.column_stack([np.arange(n), other])
        depth = np.minimum(depth, n - 2)
    options = {"precision": precision, "block_elements": int(rng.integers(1, 4 * n * n))}
    (ranks_np, _), (ranks_c, _), calls = ranks_both_ways(monkeypatch, x, codes, depth, ignored, **options)
    np.testing.assert_array_equal(ranks_c, ranks_np)
    assert calls["rows"] > 0
    relevant = codes[:, None] == codes[None, :]
    want = expected(x, x, "euclidean", relevant, depth, [set(row[row >= 0].tolist()) for row in ignored])[0]
    assert_ranks_equal((ranks_c, None), want)


def test_near_ties_are_handed_back_and_ranked_exactly(monkeypatch):
    """Crowded float32 values far from the origin and a lattice: rows with near-ties go back to
    the numpy passes (the test fails if none does), and the ranks still equal theirs."""
    rng = np.random.default_rng(3)
    redone = 0
    for x in (
        (1000 + 1e-3 * rng.standard_normal((300, 2))).astype(np.float32),
        rng.integers(-2, 3, size=(300, 3)).astype(np.float32),
    ):
        codes = np.where(rng.random(300) < 0.5, 0, rng.integers(1, 4, 300))
        depth = np.full(300, 299)
        (ranks_np, _), (ranks_c, _), calls = ranks_both_ways(
            monkeypatch, x, codes, depth, np.arange(300)[:, None], precision="mixed"
        )
        np.testing.assert_array_equal(ranks_c, ranks_np)
        redone += calls["redone"]
    assert redone > 0


def test_the_compiled_count_is_switched_off_by_the_environment(monkeypatch):
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "numpy")
    assert not compiled.enabled()
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, "auto")
    assert compiled.enabled()


def _rows(rng, m, j):
    """Padded rows (m, j + 2): -inf, j ascending values (duplicates, lattices, extreme magnitudes,
    a tail of +inf), +inf."""
    kind = rng.integers(0, 5)
    if kind == 0:
        values = rng.standard_normal((m, j))
    elif kind == 1:
        values = rng.integers(-3, 4, (m, j)).astype(np.float64)  # heavy duplicates
    elif kind == 2:
        values = rng.standard_normal((m, j)) * 10.0 ** rng.integers(-300, 300, (m, 1))
    elif kind == 3:
        values = 1e6 + rng.standard_normal((m, j)) * 1e-9  # crowded far from the origin
    else:
        values = np.exp(rng.standard_normal((m, j)) * 20)  # very uneven spacing
    values.sort(axis=1)
    tail = rng.integers(0, j + 1, m)
    values[np.arange(j)[None, :] >= j - tail[:, None]] = np.inf
    padded = np.full((m, j + 2), np.inf)
    padded[:, 0] = -np.inf
    padded[:, 1:-1] = values
    return padded


@pytest.mark.parametrize("eager", [False, True, "filled"])
@pytest.mark.parametrize("seed", range(40))
def test_the_compiled_placement_equals_numpy_searchsorted(seed, eager):
    """place_chunk's counts and near-ties equal numpy's searchsorted and comparisons for any
    window: uneven spacing, duplicates, +inf tails, a single value,
    1e±300 magnitudes, values just inside and outside the windows, +inf,
    NaN, limits below the smallest relevant value; by binary search alone, or (``eager``) with
    every row's bucket table filled at its first value, or (``"filled"``) filled by an earlier
    chunk, so that every value of the chunk is placed through the table."""
    from embedeval._search import deep_kernels as kernels

    rng = np.random.default_rng(seed)
    m, j, w = int(rng.integers(1, 9)), int(rng.integers(1, 300)), int(rng.integers(1, 400))
    padded = _rows(rng, m, j)
    finite = padded[:, 1:-1][np.isfinite(padded[:, 1:-1])]
    offsets = np.array([0.0, 1e-12, -1e-9, 1.5e-9, 2.5e-9, 0.05, -0.1, 0.15, -0.25])  # inside and just outside windows
    near = (finite[:, None] + offsets * np.maximum(np.abs(finite[:, None]), 1)).ravel()
    pool = np.concatenate([finite, near, np.array([0.0, -1e308, 1e308, np.inf, np.nan])])
    chunk = rng.choice(pool if pool.size else np.zeros(1), size=(m, w))
    limits = (
        rng.choice(np.concatenate([pool[np.isfinite(pool)], [np.inf]]), size=m) if pool.size else np.full(m, np.inf)
    )
    window = rng.choice([0.0, 1e-300, 1e-9, 0.1], m)
    threshold = rng.choice(np.concatenate([[np.nan], chunk.ravel()]), m)  # NaN: no threshold; or a value met

    ranked = rng.integers(0, j + 1, m)
    counts = np.zeros((m, j + 1), dtype=np.int64)
    below = np.zeros(m, dtype=np.int64)
    out = np.empty((chunk.size, 3), dtype=np.int32)
    tables = kernels.new_tables(m, j)
    if eager:
        tables[2][:] = 10**9  # past any count of searches: the table is filled at the first value
    if eager == "filled":  # an earlier chunk of one value fills the tables; its counts are dropped
        kernels.place_chunk(
            np.zeros((m, 1)), 0, 0, np.full(m, np.inf), padded, ranked, threshold, window, counts, below, out, tables
        )
        counts[:], below[:] = 0, 0
    n = kernels.place_chunk(chunk, 0, 0, limits, padded, ranked, threshold, window, counts, below, out, tables)
    filled = tables[2] == -1
    if eager:  # rows with a finite span have their table; the others keep binary searches
        spans = np.isfinite(padded[:, 1]) & (
            np.nanmax(np.where(np.isinf(padded[:, 1:-1]), np.nan, padded[:, 1:-1]), axis=1, initial=-np.inf)
            > padded[:, 1]
        )
        assert (filled == spans)[np.any(chunk <= limits[:, None], axis=1)].all()
    want = np.zeros_like(counts)
    np.testing.assert_array_equal(
        below, [np.count_nonzero(r[r <= lim] <= t) for r, lim, t in zip(chunk, limits, threshold, strict=True)]
    )
    for i in range(m):
        inside = chunk[i][chunk[i] <= limits[i]]
        places = np.searchsorted(padded[i, 1:-1], inside, side="right")
        np.add.at(want[i], np.minimum(places, ranked[i]), 1)
        on = out[:n][out[:n, 0] == i]
        on = on[np.argsort(on[:, 1])]  # a row's near-ties in any order (sorted rows: by value)
        ties = (inside - padded[i, places] <= window[i]) | (padded[i, places + 1] - inside <= window[i])
        np.testing.assert_array_equal(on[:, 1], np.flatnonzero(chunk[i] <= limits[i])[ties])
        np.testing.assert_array_equal(on[:, 2], places[ties])
    np.testing.assert_array_equal(counts, want)


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("seed", range(40))
def test_float32_chunks_are_placed_as_numpy_searchsorted_places_them(seed, eager):
    """Float32 chunks (the mixed precision's) through place_chunk: several chunks over row groups
    and column ranges, against numpy's searchsorted and comparisons over all chunks: counts,
    below and the near-ties (as a set of (row, column, place)). Values: the relevant values
    rounded to float32 and moved by an ulp or a window, -0.0 and 0.0, +inf, float32's extremes,
    duplicates; rows with a table (``eager``: filled at their first value) and rows placing by
    binary searches until their table pays."""
    from embedeval._search import deep_kernels as kernels

    rng = np.random.default_rng(seed)
    m, j = int(rng.integers(1, 12)), int(rng.integers(1, 300))
    padded = _rows(rng, m, j)
    finite = padded[:, 1:-1][np.isfinite(padded[:, 1:-1])]
    finite = finite[np.abs(finite) < 3e38]
    f32 = finite.astype(np.float32)
    pool = np.concatenate(
        [
            f32,
            np.nextafter(f32, np.float32(np.inf)),
            np.nextafter(f32, np.float32(-np.inf)),
            f32 + np.float32(0.1),
            np.array([0.0, -0.0, np.inf, 3e38, -3e38, 1e-45], np.float32),
        ]
    ).astype(np.float32)
    window = rng.choice([0.0, 1e-300, 1e-9, 0.1], m)
    threshold = rng.choice(np.concatenate([[np.nan], pool.astype(np.float64)]), m)
    ranked = rng.integers(0, j + 1, m)
    counts, below = np.zeros((m, j + 1), dtype=np.int64), np.zeros(m, dtype=np.int64)
    tables = kernels.new_tables(m, j)
    if eager:
        tables[2][rng.random(m) < 0.5] = 10**9
    want = np.zeros_like(counts)
    want_below = np.zeros(m, dtype=np.int64)
    want_ties, found = set(), []
    for _ in range(int(rng.integers(1, 6))):
        i0 = int(rng.integers(0, m))
        h, w, c0 = int(rng.integers(1, m - i0 + 1)), int(rng.integers(1, 40)), int(rng.integers(0, 10**6))
        chunk = rng.choice(pool, size=(h, w)).astype(np.float32)
        limits = rng.choice(np.concatenate([pool, [np.float32(np.inf)]]), size=h).astype(np.float32)
        out = np.empty((chunk.size, 3), dtype=np.int32)
        args = (padded, ranked, threshold, window, counts, below, out, tables)
        n = kernels.place_chunk(chunk, i0, c0, limits, *args)
        found.append(out[:n].astype(np.int64))
        for a in range(h):
            i = i0 + a
            inside = chunk[a][chunk[a] <= limits[a]].astype(np.float64)
            columns = c0 + np.flatnonzero(chunk[a] <= limits[a])
            places = np.searchsorted(padded[i, 1:-1], inside, side="right")
            np.add.at(want[i], np.minimum(places, ranked[i]), 1)
            want_below[i] += np.count_nonzero(inside <= threshold[i])
            with np.errstate(invalid="ignore"):  # inf - inf: not a near-tie
                ties = (inside - padded[i, places] <= window[i]) | (padded[i, places + 1] - inside <= window[i])
            want_ties |= {(i, int(c), int(p)) for c, p in zip(columns[ties], places[ties], strict=True)}
    near = np.concatenate(found)
    assert len(near) == len(want_ties) and {tuple(t) for t in near.tolist()} == want_ties
    np.testing.assert_array_equal(below, want_below)
    np.testing.assert_array_equal(counts, want)


@pytest.mark.parametrize("seed", range(6))
def test_the_compiled_ranks_from_counts_equal_the_numpy_step(seed):
    from embedeval._search import deep_count, deep_kernels

    rng = np.random.default_rng(seed)
    m, w = int(rng.integers(1, 30)), int(rng.integers(1, 50))
    counts = rng.integers(0, 4, (m, w + 1))
    ranked = rng.integers(0, w + 1, m)
    depth = rng.integers(1, 3 * w, m)
    want = deep_count.ranks_from_counts(counts, ranked, depth)
    np.testing.assert_array_equal(deep_kernels.ranks_from_counts(counts, ranked, depth.astype(np.float64)), want)


@pytest.mark.parametrize("copies", [1, 3])
def test_a_filled_row_places_infinite_values_after_its_infinite_tail(copies):
    """+inf among the other values of a row whose table an earlier chunk filled is placed after
    every relevant value, +inf ones included (numpy's searchsorted), counted at min(that, ranked)
    even where ``ranked`` reaches past the row's finite values; a value within the window after
    the last finite one is a near-tie, one beyond it is not. Three copies: 18 values listed, two
    blocks of the vector path (where the host has AVX-512) and a few after them."""
    from embedeval._search import deep_kernels as kernels

    padded = np.array([[-np.inf, 1.0, 2.0, 3.0, np.inf, np.inf, np.inf]])  # j = 5: three finite, two +inf
    ranked, threshold, window = np.array([5]), np.array([np.nan]), np.array([0.5])
    counts, below = np.zeros((1, 6), dtype=np.int64), np.zeros(1, dtype=np.int64)
    out = np.empty((64, 3), dtype=np.int32)
    tables = kernels.new_tables(1, 5)
    tables[2][:] = 10**9
    kernels.place_chunk(
        np.array([[2.5]]), 0, 0, np.array([np.inf]), padded, ranked, threshold, window, counts, below, out, tables
    )
    assert tables[2][0] == -1
    counts[:] = 0
    chunk = np.tile([[np.inf, 3.2, 1.5, np.inf, 9.0, 0.5, np.nan]], copies)
    n = kernels.place_chunk(
        chunk, 0, 100, np.array([np.inf]), padded, ranked, threshold, window, counts, below, out, tables
    )
    # 0.5 | 1.5 | - | 3.2, 9.0 | - | two +inf
    np.testing.assert_array_equal(counts[0], np.array([1, 1, 0, 2, 0, 2]) * copies)
    # 3.2 near 3, 1.5 and 0.5 near 1 and 2: (row, column, place), by column
    near = np.array([[0, 100 + 7 * c + k, p] for c in range(copies) for k, p in ((1, 3), (2, 1), (5, 0))])
    np.testing.assert_array_equal(out[:n][np.argsort(out[:n, 1])], near)


@pytest.mark.parametrize("seed", range(20))
def test_reached_walk_equals_numpys_search(seed):
    """deep_kernels.reached (a galloping walk) against np.searchsorted, side "right", row by row: ties,
    duplicates, infinities on either side, empty rows, counts below the row's length, and rows of
    hundreds whose others jump far (long gallops, a binary search at their end)."""
    from embedeval._search import deep_kernels as kernels

    rng = np.random.default_rng(seed)
    b, j, s = int(rng.integers(1, 8)), int(rng.integers(0, 40 if seed % 2 else 600)), int(rng.integers(0, 30))
    pool = np.concatenate([rng.integers(-3, 4, 10).astype(np.float64), [-np.inf, np.inf, 0.5]])
    if seed % 4 == 0:  # mostly distinct values
        pool = np.concatenate([pool, rng.standard_normal(200)])
    nearest = np.sort(rng.choice(pool, (b, j)), axis=1)
    padded = np.concatenate([np.full((b, 1), -np.inf), nearest, np.full((b, 1), np.inf)], axis=1)
    others = np.sort(rng.choice(pool, (b, s)), axis=1)
    count = rng.integers(0, s + 1, b)
    got = kernels.reached(padded, others, count)
    for r in range(b):
        want = np.searchsorted(nearest[r], others[r, : count[r]], side="right")
        np.testing.assert_array_equal(got[r, : count[r]], want)
        assert (got[r, count[r] :] == 0).all()
