"""Pair verification (FNMR@FMR, TAR@FAR, EER, AUROC) against a brute force over all pairs that
scikit-learn's roc_curve and roc_auc_score score, with heavy ties in distance."""

from __future__ import annotations

import numpy as np
import pytest

from embedeval._inputs.arrays import encode_labels, prepare
from embedeval._search.float64 import exact_distance
from embedeval._setlevel.pairs import PairSpace
from embedeval._setlevel.verification import Budgets, verify

sklearn_metrics = pytest.importorskip("sklearn.metrics")

DISTANCES = ["euclidean", "inner_product", "cosine"]
LEVELS = [1e-3, 0.01, 0.1, 0.25, 0.5, 0.9]


def pair_verification(
    x, labels, *, reference=None, reference_labels=None, distance="euclidean", fmr=(1e-3,), tile_rows=None
):
    """The verification an evaluation's set step runs (:func:`verify` over a :class:`PairSpace`),
    on float32 rows and labels as ``evaluate`` passes them once it has checked them."""
    q = np.ascontiguousarray(x, dtype=np.float32)
    if reference is None:
        q_codes, r, r_codes = encode_labels(np.asarray(labels))[1][0], None, None
    else:
        r = np.ascontiguousarray(reference, dtype=np.float32)
        q_codes, r_codes = encode_labels(np.asarray(labels), np.asarray(reference_labels))[1]
    budgets = Budgets() if tile_rows is None else Budgets(tile_rows=tile_rows)
    space = PairSpace(q, q_codes, r, r_codes, distance, budgets.tile_rows)
    return verify(space, [float(level) for level in np.atleast_1d(fmr)], distance, budgets)


def brute_force(x, labels, distance, levels, reference=None, reference_labels=None):
    """Every pair materialised with its exact float64 distance; ROC from scikit-learn."""
    q = prepare(np.asarray(x, dtype=np.float32), distance)
    if reference is None:
        i, j = np.triu_indices(len(q), 1)
        r, rl = q, np.asarray(labels)
    else:
        r = prepare(np.asarray(reference, dtype=np.float32), distance)
        i, j = (a.ravel() for a in np.meshgrid(np.arange(len(q)), np.arange(len(r)), indexing="ij"))
        rl = np.asarray(reference_labels)
    d = exact_distance(q[i], r[j], distance == "euclidean")
    positive = np.asarray(labels)[i] == rl[j]
    fpr, tpr, _ = sklearn_metrics.roc_curve(positive, -d, drop_intermediate=False)
    fnmr = {x_: 1 - tpr[np.searchsorted(fpr, x_, side="right") - 1] for x_ in levels}
    attained = {x_: fpr[np.searchsorted(fpr, x_, side="right") - 1] for x_ in levels}
    # EER: walk the ROC's points to the first on or past FMR = FNMR, interpolate on the segment
    b = next(k for k in range(len(fpr)) if fpr[k] + tpr[k] >= 1)
    lam = (1 - fpr[b - 1] - tpr[b - 1]) / (fpr[b] + tpr[b] - fpr[b - 1] - tpr[b - 1])
    eer = fpr[b - 1] + lam * (fpr[b] - fpr[b - 1])
    return fnmr, attained, eer, sklearn_metrics.roc_auc_score(positive, -d)


def make(seed, distance):
    """Small random data; every third seed on a lattice (heavy ties and duplicate rows)."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(6, 90)), int(rng.integers(1, 6))
    if seed % 3 == 0:
        x = rng.integers(-2, 3, size=(n, d)).astype(np.float32)
        if distance == "cosine":
            x[~x.any(axis=1), 0] = 1
    elif seed % 3 == 1:
        x = (rng.standard_normal((n, d)) + (30 if seed % 2 else 0)).astype(np.float32)
    else:
        x = rng.standard_normal((n, d)).astype(np.float32)
    sizes = rng.integers(2, 9)
    labels = rng.integers(0, sizes, n)
    labels[:2] = labels[0]  # at least one positive pair
    labels[-1] = labels[0] + 1 if (labels == labels[0]).all() else labels[-1]  # and a negative one
    return x, labels


def assert_matches(result, expected, levels):
    fnmr, attained, eer, auroc = expected
    for x in levels:
        assert result.fnmr_at_fmr[x] == pytest.approx(fnmr[x], abs=1e-12), x
        assert result.fmr_attained[x] == pytest.approx(attained[x], abs=1e-12), x
    assert result.eer == pytest.approx(eer, abs=1e-12)
    assert result.auroc == pytest.approx(auroc, abs=1e-12)


@pytest.mark.parametrize("seed", range(15))
@pytest.mark.parametrize("distance", DISTANCES)
def test_pairs_within_a_set_match_a_brute_force_roc(seed, distance):
    x, labels = make(seed, distance)
    result = pair_verification(x, labels, distance=distance, fmr=LEVELS)
    assert_matches(result, brute_force(x, labels, distance, LEVELS), LEVELS)
    n = len(x)
    assert result.n_positive + result.n_negative == n * (n - 1) // 2


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("distance", DISTANCES)
def test_query_reference_pairs_match_a_brute_force_roc(seed, distance):
    x, labels = make(seed, distance)
    ref, ref_labels = make(seed + 100, distance)
    ref = np.ascontiguousarray(np.resize(ref, (len(ref), x.shape[1])))
    if distance == "cosine":
        ref[~ref.any(axis=1), 0] = 1
    ref_labels[0] = labels[0]  # a shared label: positive pairs exist
    result = pair_verification(x, labels, reference=ref, reference_labels=ref_labels, distance=distance, fmr=LEVELS)
    assert_matches(result, brute_force(x, labels, distance, LEVELS, ref, ref_labels), LEVELS)
    assert result.n_positive + result.n_negative == len(x) * len(ref)


def tiny_budgets(rng):
    """Budgets so small that every fallback runs: several positive chunks, refinement passes,
    failed guesses, table cells shared by many positives."""
    return Budgets(
        tile_rows=int(rng.integers(1, 30)),
        bins=int(rng.integers(2, 6)),
        held=int(rng.integers(1, 25)),
        collected=int(rng.integers(1, 25)),
        cells=int(rng.integers(1, 8)),
    )


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("distance", DISTANCES)
def test_budgets_and_tile_sizes_change_nothing(seed, distance):
    """Tiles of any size, a few histogram bins, chunks of a handful of positives and tiny
    collection budgets give the very same numbers (==) as the defaults."""
    x, labels = make(seed, distance)
    rng = np.random.default_rng(seed)
    space = PairSpace(x, encode_labels(labels)[1][0], None, None, distance, 512)
    default = verify(space, LEVELS, distance, Budgets())
    for _ in range(3):
        budgets = tiny_budgets(rng)
        small = PairSpace(x, encode_labels(labels)[1][0], None, None, distance, budgets.tile_rows)
        result = verify(small, LEVELS, distance, budgets)
        assert result.fnmr_at_fmr == default.fnmr_at_fmr
        assert result.fmr_attained == default.fmr_attained
        assert (result.eer, result.auroc) == (default.eer, default.auroc)
    assert_matches(default, brute_force(x, labels, distance, LEVELS), LEVELS)


@pytest.mark.parametrize("seed", range(6))
def test_budgets_change_nothing_between_two_sets(seed):
    x, labels = make(seed, "euclidean")
    ref, ref_labels = make(seed + 50, "euclidean")
    ref = np.ascontiguousarray(np.resize(ref, (len(ref), x.shape[1])))
    ref_labels[0] = labels[0]
    q_codes, r_codes = encode_labels(labels, ref_labels)[1]
    rng = np.random.default_rng(seed)
    results = []
    for budgets in [Budgets(), tiny_budgets(rng), tiny_budgets(rng)]:
        space = PairSpace(x, q_codes, ref, r_codes, "euclidean", budgets.tile_rows)
        r = verify(space, LEVELS, "euclidean", budgets)
        results.append((r.fnmr_at_fmr, r.fmr_attained, r.eer, r.auroc))
    assert results[1] == results[0] and results[2] == results[0]
    expected = brute_force(x, labels, "euclidean", LEVELS, ref, ref_labels)
    assert_matches(
        verify(PairSpace(x, q_codes, ref, r_codes, "euclidean", 7), LEVELS, "euclidean", Budgets()), expected, LEVELS
    )


def test_a_larger_set_through_the_guessed_bins_matches_the_brute_force():
    """n = 700 (244,650 pairs) with default budgets: thresholds settled from the bins guessed
    by the sample, the AUROC through the lookup table."""
    rng = np.random.default_rng(5)
    labels = rng.integers(0, 12, 700)
    centres = rng.standard_normal((12, 16)).astype(np.float32)
    x = (centres[labels] + rng.standard_normal((700, 16)).astype(np.float32)).astype(np.float32)
    levels = [1e-4, 1e-3, 1e-2, 0.2]
    for distance in DISTANCES:
        result = pair_verification(x, labels, distance=distance, fmr=levels, tile_rows=128)
        assert_matches(result, brute_force(x, labels, distance, levels), levels)


def test_hand_computed_example():
    """Points 0, 1, 3, 6 on a line, labels a a b b: positive squared distances 1 and 9,
    negatives 9, 25, 4, 36 (a tie at 9 between a positive and a negative)."""
    x = np.array([[0.0], [1.0], [3.0], [6.0]])
    result = pair_verification(x, ["a", "a", "b", "b"], fmr=[0.2, 0.25, 0.5])
    # negatives sorted 4, 9, 25, 36. FMR <= 0.2 accepts no negative: the threshold stays below 4
    # and rejects the positive at 9; FMR <= 0.25 accepts 4 but not 9, which goes with the positive
    # at 9; FMR <= 0.5 accepts up to 9, both positives
    assert result.fnmr_at_fmr == {0.2: 0.5, 0.25: 0.5, 0.5: 0.0}
    assert result.fmr_attained == {0.2: 0.0, 0.25: 0.25, 0.5: 0.5}
    # positive 1 beats all 4 negatives; positive 9 beats 25 and 36, ties with 9: (4 + 2.5) / 8
    assert result.auroc == 6.5 / 8
    # ROC points (FMR, TPR): (0, 0), (0, .5) at 1, (.25, .5) at 4, (.5, 1) at 9: the segment from
    # (.25, .5) to (.5, 1) meets FMR = 1 - TPR at FMR = 1/3
    assert result.eer == pytest.approx(1 / 3, abs=1e-15)


def test_renaming_labels_and_permuting_items_change_nothing():
    x, labels = make(4, "euclidean")
    base = pair_verification(x, labels, fmr=LEVELS)
    perm = np.random.default_rng(0).permutation(len(x))
    moved = pair_verification(x[perm], np.array([f"c{v}" for v in labels])[perm], fmr=LEVELS)
    assert moved.fnmr_at_fmr == base.fnmr_at_fmr
    assert (moved.eer, moved.auroc) == (base.eer, base.auroc)


def test_perfect_separation_and_all_ties():
    """Classes far apart: AUROC 1, EER 0, FNMR 0. All items identical: every pair ties,
    AUROC 1/2, the ROC is the diagonal, so EER = 1/2."""
    x = np.array([[0.0], [0.1], [10.0], [10.1], [20.0], [20.1]])
    labels = [0, 0, 1, 1, 2, 2]
    separated = pair_verification(x, labels, fmr=[0.01, 0.5])
    assert (separated.auroc, separated.eer) == (1.0, 0.0)
    assert separated.fnmr_at_fmr == {0.01: 0.0, 0.5: 0.0}
    tied = pair_verification(np.ones((6, 3)), labels, fmr=[0.01, 0.5])
    assert (tied.auroc, tied.eer) == (0.5, 0.5)
    assert tied.fnmr_at_fmr == {0.01: 1.0, 0.5: 1.0}  # accepting any pair accepts all negatives


def test_result_records_counts_and_distance():
    x, labels = make(2, "cosine")
    result = pair_verification(x, labels, distance="cosine")
    assert result.distance == "cosine"
    counts = np.bincount(encode_labels(labels)[1][0])
    assert result.n_positive == int((counts * (counts - 1) // 2).sum())
    assert list(result.fnmr_at_fmr) == [1e-3]
