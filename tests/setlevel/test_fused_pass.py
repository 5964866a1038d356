"""The compiled verification pass (numba tile kernels) against the numpy passes: the same
histogram, AUROC counts and kept pairs, tile by tile budget by budget, on the awkward cases of
test_verification.py (lattices with heavy ties and duplicate rows, large offsets, tiny budgets
that force every fallback), and the same metrics as the brute force."""

from __future__ import annotations

import numpy as np
import pytest
from test_verification import DISTANCES, LEVELS, assert_matches, brute_force, make, tiny_budgets

from embedeval._core import compiled
from embedeval._inputs.arrays import encode_labels
from embedeval._setlevel import verification
from embedeval._setlevel.pairs import PairSpace
from embedeval._setlevel.verification import Budgets, verify

pytest.importorskip("numba")


def passes(monkeypatch, kernels, x, labels, distance, budgets, reference=None, reference_labels=None):
    """(metrics, every main pass's (histogram, AUROC count, kept pairs)) with the given kernels."""
    monkeypatch.setenv(compiled.KERNELS_VARIABLE, kernels)
    assert compiled.enabled() == (kernels == "auto")
    seen, main_pass = [], verification._main_pass

    def recorded(*args):
        out = main_pass(*args)
        seen.append(out)
        return out

    monkeypatch.setattr(verification, "_main_pass", recorded)
    if reference is None:
        space = PairSpace(x, encode_labels(labels)[1][0], None, None, distance, budgets.tile_rows)
    else:
        q_codes, r_codes = encode_labels(labels, reference_labels)[1]
        space = PairSpace(x, q_codes, reference, r_codes, distance, budgets.tile_rows)
    result = verify(space, LEVELS, distance, budgets)
    monkeypatch.setattr(verification, "_main_pass", main_pass)
    return (result.fnmr_at_fmr, result.fmr_attained, result.eer, result.auroc), seen


def assert_same_passes(a, b):
    assert len(a) == len(b)
    for (hist_a, count_a, kept_a), (hist_b, count_b, kept_b) in zip(a, b, strict=True):
        np.testing.assert_array_equal(hist_a, hist_b)
        assert count_a == count_b
        assert (kept_a is None) == (kept_b is None)
        if kept_a is not None:
            for part_a, part_b in zip(kept_a, kept_b, strict=True):
                np.testing.assert_array_equal(part_a, part_b)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("distance", DISTANCES)
def test_compiled_pass_equals_the_numpy_passes(monkeypatch, seed, distance):
    x, labels = make(seed, distance)
    rng = np.random.default_rng(seed)
    for budgets in [Budgets(), tiny_budgets(rng), Budgets(tile_rows=int(rng.integers(1, 9)))]:
        numpy_result, numpy_passes = passes(monkeypatch, "numpy", x, labels, distance, budgets)
        result, compiled_passes = passes(monkeypatch, "auto", x, labels, distance, budgets)
        assert result == numpy_result
        assert_same_passes(compiled_passes, numpy_passes)
    metrics = dict(zip(["fnmr", "attained", "eer", "auroc"], result, strict=True))
    expected = brute_force(x, labels, distance, LEVELS)
    assert_matches(verification.PairVerification(*result, 1, 1, distance), expected, LEVELS)
    assert metrics["auroc"] == numpy_result[3]


@pytest.mark.parametrize("seed", range(4))
def test_compiled_pass_equals_the_numpy_passes_between_two_sets(monkeypatch, seed):
    x, labels = make(seed, "euclidean")
    ref, ref_labels = make(seed + 50, "euclidean")
    ref = np.ascontiguousarray(np.resize(ref, (len(ref), x.shape[1])))
    ref_labels[0] = labels[0]
    budgets = tiny_budgets(np.random.default_rng(seed))
    a = passes(monkeypatch, "numpy", x, labels, "euclidean", budgets, ref, ref_labels)
    b = passes(monkeypatch, "auto", x, labels, "euclidean", budgets, ref, ref_labels)
    assert a[0] == b[0]
    assert_same_passes(b[1], a[1])


def test_a_larger_set_with_the_guessed_bins_and_extreme_magnitudes(monkeypatch):
    """n = 600 with default budgets (thresholds settled from the kept pairs, the AUROC through the
    lookup table), once at ordinary scale and once multiplied by 2^60 (extreme magnitudes)."""
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 12, 600)
    x = (rng.standard_normal((12, 16))[labels] + rng.standard_normal((600, 16))).astype(np.float32)
    for data in (x, x * np.float32(2.0**60)):
        a = passes(monkeypatch, "numpy", data, labels, "euclidean", Budgets(tile_rows=64))
        b = passes(monkeypatch, "auto", data, labels, "euclidean", Budgets(tile_rows=64))
        assert a[0] == b[0]
        assert_same_passes(b[1], a[1])
        assert b[1][0][2] is not None and b[1][0][2][0].size  # pairs were kept in guessed bins


@pytest.mark.parametrize("n_threads", [1, 3])
def test_tiles_on_any_number_of_threads_give_the_same_passes(monkeypatch, n_threads):
    import functools

    from embedeval._setlevel import fused_pass

    x, labels = make(4, "euclidean")
    budgets = Budgets(tile_rows=3)  # many tiles, finishing in any order
    reference = passes(monkeypatch, "numpy", x, labels, "euclidean", budgets)
    monkeypatch.setattr(fused_pass, "main_pass", functools.partial(fused_pass.main_pass, n_threads=n_threads))
    result = passes(monkeypatch, "auto", x, labels, "euclidean", budgets)
    assert result[0] == reference[0]
    assert_same_passes(result[1], reference[1])


@pytest.mark.parametrize("ahead", [0, 1, 3, 1000])
def test_prefetch_distance_changes_no_result(monkeypatch, ahead):
    """The tile pass prefetches the AUROC table ``ahead`` columns on: any distance (none, next
    column, past every row's end) gives the numpy passes' histogram, counts and kept pairs."""
    from embedeval._core import budget

    x, labels = make(3, "euclidean")
    budgets = tiny_budgets(np.random.default_rng(3))
    numpy_result, numpy_passes = passes(monkeypatch, "numpy", x, labels, "euclidean", budgets)
    monkeypatch.setattr(budget, "VERIFICATION_PREFETCH", ahead)
    result, compiled_passes = passes(monkeypatch, "auto", x, labels, "euclidean", budgets)
    assert result == numpy_result
    assert_same_passes(compiled_passes, numpy_passes)


def test_prefetch_compiles_and_reads_nothing():
    import numba

    from embedeval._core.intrinsics import prefetch

    @numba.njit
    def walk(values, ahead):
        total = 0.0
        for i in range(values.size):
            if i + ahead < values.size:
                prefetch(values, i + ahead)
            total += values[i]
        return total

    values = np.arange(1000, dtype=np.float64)
    assert walk(values, 16) == walk(values, 0) == values.sum()
    assert walk(values[::3], 5) == values[::3].sum()  # strided: the element's own address

    @numba.njit
    def matrix(values):
        prefetch(values, 0)

    with pytest.raises(numba.core.errors.TypingError):
        matrix(np.zeros((2, 2)))


def test_every_bin_not_held_looks_up_empty_cells():
    """The compiled pass looks up every negative's cell without asking whether its bin is held:
    the cells of any bin not held (no positive, or outside the chunk) must be empty, before = 0."""
    from embedeval._setlevel.pair_auroc import HeldPositives
    from embedeval._setlevel.pairs import Grid

    rng = np.random.default_rng(0)
    grid = Grid.covering(0.0, 10.0, 64)
    values = np.concatenate([rng.uniform(1, 4, 300), rng.uniform(6, 7, 50), [8.5, 8.5]])
    chunk = np.ones(grid.n_bins + 2, dtype=bool)
    chunk[grid.bins(np.array([6.5]))[0] :] = False  # bins with positives left out of the chunk
    held = HeldPositives(values, grid, chunk, cells=1 << 12)
    assert held.bins.any() and not held.bins.all()
    f = held.f
    for b in np.flatnonzero(~held.bins):
        index = (b - 1) * f + np.arange(f) + held.offset[b]
        assert (held.count[index] == 0).all() and (held.before[index] == 0).all()
    for b in np.flatnonzero(held.bins):  # held bins: their own cells, holding their positives
        index = (b - 1) * f + np.arange(f) + held.offset[b]
        assert held.count[index].sum() == (grid.bins(values) == b).sum()


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("distance", DISTANCES)
@pytest.mark.parametrize("narrow", [True, False])
def test_exact_kernel_and_either_table_width_give_the_numpy_passes(monkeypatch, seed, distance, narrow):
    """The compiled exact formula from the first pair (the positive pairs binned on their exact
    distances, no product; the sample, near-ties and collected pairs too) and the lookup table
    in uint16 cells (``narrow``) or int32: the numpy passes' histograms, counts and kept pairs."""
    from embedeval._search import exact_kernels
    from embedeval._setlevel import pair_auroc

    monkeypatch.setattr(compiled, "repaid", lambda key, units, after, cached=None, cached_from=None: compiled.enabled())
    calls, pair_values = [], exact_kernels.pair_values
    monkeypatch.setattr(exact_kernels, "pair_values", lambda *args: calls.append(len(args[2])) or pair_values(*args))
    if not narrow:
        monkeypatch.setattr(pair_auroc, "NARROW_CELLS", 0)
    x, labels = make(seed, distance)
    rng = np.random.default_rng(seed)
    for budgets in [Budgets(), tiny_budgets(rng)]:
        numpy_result, numpy_passes = passes(monkeypatch, "numpy", x, labels, distance, budgets)
        result, compiled_passes = passes(monkeypatch, "auto", x, labels, distance, budgets)
        assert result == numpy_result
        assert_same_passes(compiled_passes, numpy_passes)
    assert sum(calls) >= 1  # this test's exact distances came from the kernel


@pytest.mark.parametrize("narrow", [True, False])
def test_table_cells_equal_a_count_of_every_cell(monkeypatch, narrow):
    """Each cell's ``count`` is the number of held positives whose coordinate falls in it and its
    ``before`` those in earlier cells of its bin (counted here cell by cell), in uint16 cells
    where every bin holds fewer than NARROW_CELLS positives, int32 otherwise."""
    from embedeval._setlevel import pair_auroc
    from embedeval._setlevel.pairs import Grid

    if not narrow:
        monkeypatch.setattr(pair_auroc, "NARROW_CELLS", 40)  # a bin below holds more
    rng = np.random.default_rng(1)
    grid = Grid.covering(0.0, 10.0, 16)
    values = np.concatenate([rng.uniform(1, 4, 500), rng.normal(6, 0.01, 80), [8.5] * 7, [-3.0, 12.0]])
    held = pair_auroc.HeldPositives(values, grid, np.ones(grid.n_bins + 2, dtype=bool), cells=1 << 10)
    assert held.cells.dtype == (np.uint16 if narrow else np.int32)
    f, scaled = held.f, np.sort(grid.coord(values)) * held.f
    bins = grid.bins(np.sort(values))
    for b in np.unique(bins):
        index = (b - 1) * f + np.arange(f) + held.offset[b]
        cell = np.clip(np.floor(scaled[bins == b]) - (b - 1) * f, 0, f - 1).astype(np.int64)
        count = np.array([(cell == k).sum() for k in range(f)])
        np.testing.assert_array_equal(held.count[index], count)
        np.testing.assert_array_equal(held.before[index], np.cumsum(count) - count)
        assert held.values[held.first[b]] == np.sort(values)[bins == b][0]
