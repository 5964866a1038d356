"""Tie-aware kernels: expected values against the mean over every order of tied items, best/worst orders."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from embedeval._metrics import expected as _expected
from embedeval._metrics import kernels as _kernels
from embedeval._metrics.harmonic import partial_harmonic
from embedeval._metrics.registry import EMBEDDINGS, RANKINGS, parse_metrics
from embedeval._metrics.ties import tie_order, tied_hits_from_dense, tied_hits_from_groups

CUTOFFS = (1, 2, 3, 4, 6, 8, 11)  # rankings hold up to 8 items: 11 is beyond every one
NAMES = [
    *(
        f"{f}@{k}"
        for f in ("precision", "recall", "capped_recall", "hit_rate", "f1", "map_hits", "capped_map")
        for k in CUTOFFS
    ),
    *(f"{f}@{k}" for f in ("map", "mrr", "ndcg", "ndcg_exp", "dcg", "dcg_exp", "cg") for k in CUTOFFS),
    *("r_precision", "map@r", "map", "mrr", "ndcg", "ndcg_exp", "dcg", "dcg_exp", "cg"),
    *("revisited_map", *(f"revisited_mp@{k}" for k in CUTOFFS), *(f"cmc@{k}" for k in CUTOFFS)),
]
METRICS = parse_metrics(NAMES, RANKINGS) + parse_metrics([f"recall@{k}" for k in CUTOFFS], EMBEDDINGS)
# Monotone metrics: a better item moved ahead of a worse one never lowers them (not map_hits).
MONOTONE = [m for m in METRICS if m.family != "map_hits"]


def _key(m):
    return f"{m.name} ({m.form})"


def ordinary_hits(grades, threshold, n_relevant, ideal) -> _kernels.Hits:
    """The ordinary Hits of dense ranked grades (P, depth), built independently of the library's input code."""
    q, pos = np.nonzero(grades >= threshold)
    qg, posg = np.nonzero(grades > 0)
    n = grades.shape[0]
    return _kernels.Hits(
        ranks=_kernels.pack(q, pos + 1.0, n),
        n_relevant=n_relevant,
        gain_ranks=_kernels.pack(qg, posg + 1.0, n),
        gain_grades=_kernels.pack(qg, grades[qg, posg], n, fill=0.0),
        ideal=ideal,
    )


def ordinary(metrics, grades, threshold, n_relevant, ideal) -> dict[str, np.ndarray]:
    hits = ordinary_hits(grades, threshold, n_relevant, ideal)
    out = {}
    for m in metrics:  # one metric at a time: the key keeps the form apart
        out[_key(m)] = m.values(hits)
    return out


def every_order(scores, grades):
    """(P, depth) grades of every ranking that permutes items within tie groups only."""
    bounds = [i for i in range(1, len(scores)) if not scores[i] == scores[i - 1]]
    groups = [range(a, b) for a, b in zip([0, *bounds], [*bounds, len(scores)], strict=True)]
    orders = [[i for perm in combo for i in perm] for combo in itertools.product(*map(itertools.permutations, groups))]
    return np.asarray(grades, dtype=np.float64)[np.array(orders, dtype=np.intp).reshape(len(orders), len(scores))]


def make_batch(rng, n_queries, depth=8, binary=False):
    """Ranked rows with heavy ties (coarse integer scores), NaN/0-padded to ``depth``, and their judgements."""
    scores = np.full((n_queries, depth), np.nan)
    grades = np.zeros((n_queries, depth))
    extra = np.zeros((n_queries, 3))
    threshold = 1.0 if binary else float(rng.choice([1, 2]))
    for i in range(n_queries):
        length = int(rng.integers(0, depth + 1))
        levels = int(rng.choice([1, 2, 3, 5, 50]))
        scores[i, :length] = -np.sort(-rng.integers(0, levels, length).astype(float))
        if binary:
            grades[i, :length] = rng.random(length) < rng.choice([0.2, 0.5, 0.8])
            extra[i] = rng.random(3) < 0.3
        else:
            grades[i, :length] = rng.choice([-1, 0, 0, 1, 2, 3], length)
            extra[i] = rng.choice([0, 0, 1, 2, 3], 3)  # judged, never ranked: counts in R and the ideal
    judged = np.concatenate([grades, extra], axis=1)
    n_relevant = np.count_nonzero(judged >= threshold, axis=1)
    ideal = -np.sort(-np.maximum(judged, 0.0), axis=1)
    return scores, grades, threshold, n_relevant, ideal


def brute_force(metrics, scores, grades, threshold, n_relevant, ideal):
    """Per query: (mean, max, min) of each metric over every within-group order."""
    stats = {_key(m): np.empty((3, scores.shape[0])) for m in metrics}
    for i in range(scores.shape[0]):
        length = int(np.count_nonzero(~np.isnan(scores[i])))
        rows = every_order(scores[i, :length], grades[i, :length])
        p = rows.shape[0]
        values = ordinary(metrics, rows, threshold, np.repeat(n_relevant[i], p), np.repeat(ideal[i : i + 1], p, 0))
        for key, v in values.items():
            stats[key][:, i] = v.mean(), v.max(), v.min()
    return stats


def expected(metrics, scores, grades, threshold, n_relevant, ideal):
    t = tied_hits_from_dense(scores, grades, threshold, n_relevant, ideal)
    return {_key(m): _expected.compute([m], t)[m.name] for m in metrics}


def reordered(metrics, rule, scores, grades, threshold, n_relevant, ideal):
    order = tie_order(scores, grades, rule)
    return ordinary(metrics, np.take_along_axis(grades, order, 1), threshold, n_relevant, ideal)


@pytest.mark.parametrize("binary", [False, True])
@pytest.mark.parametrize("seed", range(6))
def test_expected_and_extremes_equal_brute_force_over_every_tied_order(seed, binary):
    """Expected = mean over all within-group permutations; optimistic/pessimistic = their max/min."""
    case = make_batch(np.random.default_rng(seed), 40, binary=binary)
    truth = brute_force(METRICS, *case)
    got = expected(METRICS, *case)
    best = reordered(METRICS, "optimistic", *case)
    worst = reordered(METRICS, "pessimistic", *case)
    for m in METRICS:
        key = _key(m)
        np.testing.assert_allclose(got[key], truth[key][0], rtol=1e-12, atol=1e-12, err_msg=key)
        if m in MONOTONE:
            np.testing.assert_allclose(best[key], truth[key][1], rtol=1e-12, atol=1e-12, err_msg=key)
            np.testing.assert_allclose(worst[key], truth[key][2], rtol=1e-12, atol=1e-12, err_msg=key)


def test_brute_force_cases_cover_the_awkward_paths():
    """The seeded cases hold what the kernels branch on, so the brute-force test cannot pass vacuously."""
    seen = set()
    for seed in range(6):
        for binary in (False, True):
            scores, grades, threshold, n_relevant, ideal = make_batch(np.random.default_rng(seed), 40, binary=binary)
            t = tied_hits_from_dense(scores, grades, threshold, n_relevant, ideal)
            ranked_relevant = np.bincount(t.query, weights=t.relevant, minlength=t.n_queries)
            paths = {
                "R = 0": (n_relevant == 0).any(),
                "empty ranking": np.isnan(scores).all(axis=1).any(),
                "gain without relevance": ((t.relevant == 0) & (t.gain > 0)).any(),
                "R > relevant ranked": (n_relevant > ranked_relevant).any(),
                "group of 8": (t.size == 8).any(),
                "several relevant in a group": ((t.relevant > 1) & (t.relevant < t.size)).any(),
                "first relevant group with several relevant": (t.first_relevant[2] > 1).any(),
            }
            seen |= {path for path, present in paths.items() if present}
    assert seen == set(paths)


def test_without_ties_all_rules_give_the_ordinary_values_bit_for_bit():
    """Distinct scores: expected, optimistic and pessimistic equal the ordinary kernels exactly."""
    rng = np.random.default_rng(7)
    scores, grades, threshold, n_relevant, ideal = make_batch(rng, 300, depth=30)
    scores = -np.sort(-rng.random(scores.shape), axis=1)  # continuous: no two equal
    t = tied_hits_from_dense(scores, grades, threshold, n_relevant, ideal)
    assert (t.size == 1).all()
    plain = ordinary(METRICS, grades, threshold, n_relevant, ideal)
    for values in (
        {_key(m): _expected.compute([m], t)[m.name] for m in METRICS},
        reordered(METRICS, "optimistic", scores, grades, threshold, n_relevant, ideal),
        reordered(METRICS, "pessimistic", scores, grades, threshold, n_relevant, ideal),
    ):
        for key, v in plain.items():
            np.testing.assert_array_equal(values[key], v, err_msg=key)


def test_without_ties_tied_hits_hold_exactly_the_ranks_of_hits():
    rng = np.random.default_rng(3)
    scores, grades, threshold, n_relevant, ideal = make_batch(rng, 50, depth=20, binary=True)
    scores = -np.sort(-rng.random(scores.shape), axis=1)
    t = tied_hits_from_dense(scores, grades, threshold, n_relevant, ideal)
    h = ordinary_hits(grades, threshold, n_relevant, ideal)
    rel = t.relevant > 0
    np.testing.assert_array_equal(_kernels.pack(t.query[rel], t.start[rel] + 1.0, t.n_queries), h.ranks)
    positive = t.gain > 0
    np.testing.assert_array_equal(_kernels.pack(t.query[positive], t.start[positive] + 1.0, t.n_queries), h.gain_ranks)


def test_tied_hits_do_not_depend_on_the_given_order_within_a_tie_group():
    rng = np.random.default_rng(11)
    scores, grades, threshold, n_relevant, ideal = make_batch(rng, 60)
    a = tied_hits_from_dense(scores, grades, threshold, n_relevant, ideal)
    shuffled = np.lexsort((rng.random(scores.shape), -np.nan_to_num(scores, nan=-1.0)), axis=1)
    b = tied_hits_from_dense(scores, np.take_along_axis(grades, shuffled, 1), threshold, n_relevant, ideal)
    for name in ("query", "start", "size", "relevant", "before", "gain", "gain_exp"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@settings(max_examples=60, deadline=None)
@given(
    items=st.lists(st.tuples(st.integers(0, 2), st.integers(-1, 3)), max_size=7),
    extra=st.lists(st.integers(0, 3), max_size=3),
    threshold=st.sampled_from([1.0, 2.0]),
    k=st.integers(1, 9),
)
def test_expected_lies_between_the_extremes_and_equals_the_mean(items, extra, threshold, k):
    items = sorted(items, key=lambda it: -it[0])
    scores = np.array([[float(s) for s, _ in items]]).reshape(1, len(items))
    grades = np.array([[float(g) for _, g in items]]).reshape(1, len(items))
    judged = np.concatenate([grades[0], np.array(extra, dtype=float)])
    n_relevant = np.array([np.count_nonzero(judged >= threshold)])
    ideal = -np.sort(-np.maximum(judged, 0.0))[None, :]
    metrics = parse_metrics(
        [f"{f}@{k}" for f in ("precision", "recall", "f1", "map", "mrr", "ndcg", "map_hits")], RANKINGS
    )
    metrics += parse_metrics(["map@r", "r_precision", f"hit_rate@{k}", "dcg_exp"], RANKINGS)
    case = (scores, grades, threshold, n_relevant, ideal)
    truth, got = brute_force(metrics, *case), expected(metrics, *case)
    best, worst = reordered(metrics, "optimistic", *case), reordered(metrics, "pessimistic", *case)
    for m in metrics:
        key = _key(m)
        np.testing.assert_allclose(got[key], truth[key][0], rtol=1e-12, atol=1e-12, err_msg=key)
        if m.family != "map_hits" and not np.isnan(got[key][0]):
            assert worst[key][0] - 1e-12 <= got[key][0] <= best[key][0] + 1e-12, key


def test_map_hits_is_not_monotone_so_relevant_first_is_not_its_best_order():
    """relevance 1, 0, [1, 0] (last two tied), k = 3: relevant first gives 5/6, relevant last 1."""
    scores = np.array([[3.0, 2.0, 1.0, 1.0]])
    grades = np.array([[1.0, 0.0, 1.0, 0.0]])
    m = parse_metrics(["map_hits@3"], RANKINGS)
    case = (scores, grades, 1.0, np.array([2]), np.ones((1, 2)))
    best = reordered(m, "optimistic", *case)[_key(m[0])]
    worst = reordered(m, "pessimistic", *case)[_key(m[0])]
    assert best[0] == pytest.approx(5 / 6) and worst[0] == 1.0
    assert expected(m, *case)[_key(m[0])][0] == pytest.approx((5 / 6 + 1.0) / 2)


@pytest.mark.parametrize("k", [None, 1, 2, 5, 9, 12, 40])
def test_ndcg_and_dcg_agree_with_scikit_learn_tie_averaging(k):
    """scikit-learn's ndcg_score/dcg_score(ignore_ties=False): linear gain, log2 discount, ties averaged."""
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0 if k is None else k)
    n_items = 12
    y_true = rng.integers(0, 4, (80, n_items)).astype(float)
    y_true[:5] = 0.0  # IDCG = 0: scikit-learn says 0, embedeval NaN
    y_score = rng.integers(0, 4, (80, n_items)).astype(float)
    order = np.argsort(-y_score, axis=1, kind="stable")
    ranked_scores, ranked_grades = np.take_along_axis(y_score, order, 1), np.take_along_axis(y_true, order, 1)
    ideal = -np.sort(-y_true, axis=1)
    t = tied_hits_from_dense(ranked_scores, ranked_grades, 1.0, np.count_nonzero(y_true >= 1, axis=1), ideal)
    ours_dcg, ours_ndcg = _expected.dcg(t, k), _expected.ndcg(t, k)
    for i in range(y_true.shape[0]):
        row_true, row_score = y_true[i : i + 1], y_score[i : i + 1]
        assert ours_dcg[i] == pytest.approx(metrics.dcg_score(row_true, row_score, k=k, ignore_ties=False), rel=1e-12)
        sk_ndcg = metrics.ndcg_score(row_true, row_score, k=k, ignore_ties=False)
        if i < 5:
            assert np.isnan(ours_ndcg[i]) and sk_ndcg == 0.0
        else:
            assert ours_ndcg[i] == pytest.approx(sk_ndcg, rel=1e-12)
    assert (t.size > 1).any()


def _one_group(start, size, relevant, n_relevant, before=0):
    """TiedHits of one query: optionally ``before`` relevant singletons at ranks 1..before, then one group."""
    starts = np.array([*range(before), start], dtype=float)
    return tied_hits_from_groups(
        np.zeros(before + 1, dtype=np.intp),
        starts,
        np.array([1.0] * before + [size]),
        np.array([1.0] * before + [relevant]),
        np.array([n_relevant]),
    )


@pytest.mark.parametrize(
    ("start", "size", "relevant", "cutoff"),
    [
        (0, 300, 7, None),
        (5, 200, 150, 60),
        (10**6, 500, 3, None),
        (10**6, 500, 499, 10**6 + 20),
        (63, 64, 2, 100),
        (300, 5000, 40, 1000),
    ],
)
def test_large_groups_match_exact_references(start, size, relevant, cutoff):
    """Groups far beyond brute force: AP (math.fsum of the terms), RR, hit rate, AP over hits (exact fractions)."""
    s, n, r = start, size, relevant
    before = min(s, 2)  # relevant singletons at ranks 1..before, each with precision 1
    R = before + r + 5
    m = n if cutoff is None else max(0, min(n, cutoff - s))
    terms = [(r / n) * (before + 1 + (p - 1) * (r - 1) / (n - 1)) / (s + p) for p in range(1, m + 1)]
    want = math.fsum([before, *terms]) / R
    assert _expected.average_precision(_one_group(s, n, r, R, before), cutoff)[0] == pytest.approx(want, rel=1e-14)
    t = _one_group(s, n, r, r)  # nothing before: this is the first relevant group
    k = cutoff
    last = n - r + 1 if k is None else max(0, min(n - r + 1, k - s))
    rr = sum(Fraction(math.comb(n - j, r - 1), math.comb(n, r)) / (s + j) for j in range(1, last + 1))
    assert _expected.reciprocal_rank(t, k)[0] == pytest.approx(float(rr), rel=1e-13)
    if k is None:
        return
    mk = max(0, min(n, k - s))
    assert _expected.hit_at(t, k)[0] == pytest.approx(float(1 - Fraction(math.comb(n - r, mk), math.comb(n, mk))))
    if 0 < mk < n:
        xs = range(max(0, mk - (n - r)), min(r, mk) + 1)
        pmf = {x: Fraction(math.comb(r, x) * math.comb(n - r, mk - x), math.comb(n, mk)) for x in xs}
        hd = math.fsum(1 / (s + p) for p in range(1, mk + 1))
        kk = math.fsum((p - 1) / (s + p) for p in range(1, mk + 1))
        want = math.fsum(float(pmf[x]) * (x / mk * hd + x * (x - 1) / (mk * (mk - 1)) * kk) / x for x in xs if x > 0)
        assert _expected.average_precision_over_hits(t, k)[0] == pytest.approx(want, rel=1e-13)


def test_group_counts_give_the_tied_hits_of_the_dense_ranking():
    """Per-group counts (the Hamming-histogram route), empty groups included, equal the dense construction."""
    rng = np.random.default_rng(5)
    scores, grades, threshold, n_relevant, _ = make_batch(rng, 30, binary=True)
    dense = tied_hits_from_dense(scores, grades, threshold, n_relevant)
    groups = []  # (query, start, size, relevant items) of every tie group, empty ones included
    for i in range(scores.shape[0]):
        length = int(np.count_nonzero(~np.isnan(scores[i])))
        j = 0
        while j < length:
            end = j + 1
            while end < length and scores[i, end] == scores[i, j]:
                end += 1
            groups.append((i, j, end - j, grades[i, j:end].sum()))
            j = end
    rows, starts, sizes, counts = (np.array(column) for column in zip(*groups, strict=True))
    t = tied_hits_from_groups(rows, starts, sizes, counts, n_relevant, counts, counts)
    for name in ("query", "start", "size", "relevant", "before"):
        np.testing.assert_array_equal(getattr(t, name), getattr(dense, name), err_msg=name)
    np.testing.assert_array_equal(_expected.average_precision(t), _expected.average_precision(dense))


def test_graded_metrics_need_gains():
    t = tied_hits_from_groups(np.array([0]), np.array([0.0]), np.array([2.0]), np.array([1.0]), np.array([1]))
    with pytest.raises(ValueError, match="graded metrics"):
        _expected.dcg(t, 3)


def test_partial_harmonic_sums_keep_their_digits_deep_in_a_ranking():
    """H(x, m) and K(x, m) to 2e-15 relative from x = 1 to 10^9, across the three evaluation regimes."""
    xs = [1, 2, 17, 63, 64, 65, 127, 128, 1000, 12345, 10**6, 10**9]
    ms = [0, 1, 2, 3, 10, 63, 64, 65, 200, 5000]
    x, m = (np.array(v, dtype=float) for v in zip(*itertools.product(xs, ms), strict=True))
    h, k = partial_harmonic(x, m)
    for xi, mi, hi, ki in zip(x, m, h, k, strict=True):
        want_h = math.fsum(1.0 / (xi + q) for q in range(int(mi)))
        want_k = math.fsum(q / (xi + q) for q in range(int(mi)))
        assert hi == pytest.approx(want_h, rel=2e-15, abs=0.0)
        assert ki == pytest.approx(want_k, rel=2e-15, abs=0.0)


def test_degenerate_cases_follow_the_ordinary_kernels():
    """R = 0 gives NaN where the kernel divides by R, 0 elsewhere; empty rankings; k beyond the ranking."""
    scores = np.array([[1.0, 1.0, 0.0], [np.nan, np.nan, np.nan], [2.0, 2.0, 2.0]])
    grades = np.array([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]])
    n_relevant = np.array([0, 2, 2])
    t = tied_hits_from_dense(scores, grades, 1.0, n_relevant, np.zeros((3, 1)))
    for f in (_expected.recall_at, _expected.capped_recall_at):
        assert np.isnan(f(t, 5)[0]) and f(t, 5)[1] == 0.0
    assert np.isnan(_expected.average_precision(t)[0]) and np.isnan(_expected.r_precision(t)[0])
    assert _expected.f1_at(t, 2)[0] == 0.0 and _expected.reciprocal_rank(t)[0] == 0.0
    assert _expected.precision_at(t, 10)[2] == pytest.approx(2 / 10)  # divides by k beyond the ranking
    assert _expected.hit_at(t, 1)[2] == pytest.approx(2 / 3) and _expected.hit_at(t, 50)[2] == 1.0
    # two relevant among three tied: E[AP] = (1/2)(2/3)[1 + (2/1 + 1)/2 * ... ] checked against the mean of 3 orders
    orders = [[1, 1, 0], [1, 0, 1], [0, 1, 1]]
    ap = np.mean([sum(sum(o[: i + 1]) / (i + 1) for i in range(3) if o[i]) / 2 for o in orders])
    assert _expected.average_precision(t)[2] == pytest.approx(ap, rel=1e-15)
    empty = tied_hits_from_dense(np.zeros((2, 0)), np.zeros((2, 0)), 1.0, np.array([0, 3]), np.zeros((2, 1)))
    assert empty.start.size == 0
    plain = ordinary(METRICS, np.zeros((2, 0)), 1.0, np.array([0, 3]), np.zeros((2, 1)))
    for m in METRICS:
        np.testing.assert_array_equal(_expected.compute([m], empty)[m.name], plain[_key(m)], err_msg=_key(m))


def test_tie_order_rejects_an_unknown_rule():
    with pytest.raises(ValueError, match=r"'ties'.*optimistic, pessimistic.*'expected'"):
        tie_order(np.zeros((1, 2)), np.zeros((1, 2)), "expected")


def test_tie_order_moves_items_only_within_their_group():
    scores = np.array([[3.0, 2.0, 2.0, 2.0, 1.0, 1.0]])
    grades = np.array([[0, 1, 3, 1, 0, 2]], dtype=np.uint8)  # unsigned: must not wrap when negated
    np.testing.assert_array_equal(tie_order(scores, grades, "optimistic"), [[0, 2, 1, 3, 5, 4]])
    np.testing.assert_array_equal(tie_order(scores, grades, "pessimistic"), [[0, 1, 3, 2, 4, 5]])
