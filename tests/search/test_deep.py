"""The deep ranking (embedeval._search.deep): ranks of marked references against a full stable float64 sort.

Relevance reaches the ranker as the evaluation ships it: through the query parts of
embedeval._relevance (class codes, label bitsets, judgements), as :class:`Marked`.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import full_ranking

from embedeval._inputs.arrays import prepare
from embedeval._relevance.judged import JudgedPart
from embedeval._relevance.labels import ClassLabels, read_multilabels
from embedeval._search.deep import DeepRanker
from embedeval._search.deep_exact import error_bounds


class Codes:
    """Class codes as evaluate ships them: the ranker gets the references' codes, a search its queries'."""

    def __init__(self, query_codes, reference_codes):
        self.source = ClassLabels(
            np.unique(np.concatenate([query_codes, reference_codes])), query_codes, reference_codes
        )
        self.class_codes = np.asarray(reference_codes)

    def marked(self, rows, counts):
        part = self.source.query_part(rows)
        return part.marked(self.source.reference_side, np.arange(rows.size), counts, False, None)


class LabelSets:
    """Boolean label indicators as evaluate ships them: label bitsets grouped by distinct set."""

    def __init__(self, query_labels, reference_labels):
        self.source = read_multilabels("indicator", query_labels, "indicator", reference_labels, ("a", "b"))
        self.class_codes = None

    def marked(self, rows, counts):
        part = self.source.query_part(rows)
        return part.marked(self.source.reference_side, np.arange(rows.size), counts, False, None)


class Judged:
    """Judgements (grades, 0: unjudged) as evaluate_retrieval ships them; marked: graded >= threshold,
    or with ``gains`` every positive grade, with its grade."""

    def __init__(self, grades, threshold=1.0, gains=False):
        self.grades, self.threshold, self.gains = np.asarray(grades, dtype=np.float64), threshold, gains
        self.class_codes = None

    def marked(self, rows, counts):
        judged = self.grades[rows] != 0
        local, refs = np.nonzero(judged)
        n = self.grades.shape[1]
        part = JudgedPart(local * n + refs, self.grades[rows][judged], n)
        return part.marked(None, np.arange(rows.size), counts, self.gains, self.threshold)

    def is_marked(self):
        return self.grades > 0 if self.gains else self.grades >= self.threshold


def vectors(rng, n, d, kind):
    if kind == "lattice":  # heavy ties and duplicates
        return rng.integers(-2, 3, size=(n, d)).astype(np.float32)
    if kind == "far":  # far from the origin: large float32 error
        return (1000 + rng.standard_normal((n, d))).astype(np.float32)
    return rng.standard_normal((n, d)).astype(np.float32)


def searched(x, distance):
    """(prepared vectors, the distance ranked): cosine is the inner product of normalised vectors."""
    if distance == "cosine":  # cosine has no direction for a zero vector
        x = np.where((x == 0).all(axis=1, keepdims=True), np.float32(1), x)
    return prepare(x, distance), "euclidean" if distance == "euclidean" else "inner_product"


def expected(queries, references, distance, relevant, depth, ignored, first=None, grades=None):
    """Ranks (and grades) of the first ``first`` marked references within depth, by a full stable
    float64 sort; ``relevant`` marks them (bool (b, n))."""
    ranks, found_grades = [], []
    for i, q in enumerate(queries):
        order = [j for j in full_ranking(q, references, distance) if j not in ignored[i]]
        rel = relevant[i][order]
        at = [p for p in range(min(depth[i], len(order))) if rel[p]]
        if first is not None and grades is None:
            at = at[: first[i]]
        ranks.append([p + 1 for p in at])
        found_grades.append([] if grades is None else [float(grades[i][order[p]]) for p in at])
    return ranks, found_grades


def n_marked(relevant, ignored):
    """Marked references each query does not ignore."""
    return np.array([int(row.sum()) - sum(int(row[j]) for j in g) for row, g in zip(relevant, ignored, strict=True)])


def assert_ranks_equal(found, ranks, grades=None):
    got, got_grades = found
    finite = np.isfinite(got)  # rows ascend, +inf only after the ranks (what Hits.ascending claims)
    assert not (~finite[:, :-1] & finite[:, 1:]).any()
    assert all((np.diff(row[np.isfinite(row)]) > 0).all() for row in got)
    assert [list(row[np.isfinite(row)].astype(int)) for row in got] == ranks
    if grades is not None:
        assert [list(g[np.isfinite(r)]) for g, r in zip(got_grades, got, strict=True)] == grades


def ignored_matrix(ignored):
    width = max(1, max(len(g) for g in ignored))
    out = np.full((len(ignored), width), -1)
    for i, g in enumerate(ignored):
        out[i, : len(g)] = sorted(g)
    return out


def run_case(rng, x_q, x_r, distance, relevance, relevant, leave_one_out, extra_ignored=0, grades=None, **options):
    """Rank every query at random depths (and for some, only its first few marked references) with a
    DeepRanker and compare with the full sort."""
    queries, metric = searched(x_q, distance)
    references = queries if leave_one_out else searched(x_r, distance)[0]
    n = len(references)
    ignored = [{i} if leave_one_out else set() for i in range(len(queries))]
    for g in ignored:
        g.update(rng.choice(n, size=min(extra_ignored, n - 1 - len(g)), replace=False).tolist())
    depth = np.array([rng.integers(1, n - len(g) + 1) for g in ignored])
    first = np.where(rng.random(len(queries)) < 0.3, rng.integers(1, 4, len(queries)), n)
    ranker = DeepRanker(references, metric == "euclidean", relevance.class_codes, **options)
    ign = ignored_matrix(ignored) if any(ignored) else None
    marked = relevance.marked(np.arange(len(queries)), n_marked(relevant, ignored))
    found = ranker.ranks(queries, marked, depth, first, ign)
    want = expected(queries, references, metric, relevant, depth, ignored, first, grades)
    assert_ranks_equal(found, want[0], None if grades is None else want[1])


def class_codes(rng, n, kind):
    """Imbalanced classes: a dominant class, small ones and singletons."""
    if kind == "dominant":
        return np.where(rng.random(n) < 0.6, 0, rng.integers(1, 6, n))
    if kind == "singletons":
        return rng.permutation(np.concatenate([np.zeros(n // 3, int), np.arange(1, n - n // 3 + 1)]))
    return rng.integers(0, rng.integers(1, 6), n)


@pytest.mark.parametrize("seed", range(18))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product", "cosine"])
@pytest.mark.parametrize("precision", ["auto", "float64", "mixed"])
def test_class_codes_equal_a_full_stable_sort(seed, distance, precision):
    """Leave-one-out and separate references, ties, duplicates, imbalanced classes, depth 1 to n."""
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(2, 160)), int(rng.integers(1, 7))
    kind = ("lattice", "far", "normal")[seed % 3]
    leave_one_out = seed % 2 == 0
    codes_kind = ("dominant", "singletons", "few")[(seed // 3) % 3]
    if leave_one_out:
        x_q = x_r = vectors(rng, n, d, kind)
        q_codes = r_codes = class_codes(rng, n, codes_kind)
    else:
        x_q, x_r = vectors(rng, int(rng.integers(1, 60)), d, kind), vectors(rng, n, d, kind)
        q_codes, r_codes = rng.integers(0, 4, len(x_q)), class_codes(rng, n, codes_kind)
    relevant = q_codes[:, None] == r_codes[None, :]
    run_case(
        rng,
        x_q,
        x_r,
        distance,
        Codes(q_codes, r_codes),
        relevant,
        leave_one_out,
        precision=precision,
        sample_sigmas=float(rng.uniform(-2, 3)),  # below 0: most sampled thresholds are redone
        sample_columns=int(rng.integers(1, 64)),
    )


def label_sets(rng, n, n_labels):
    """Boolean indicators (n, n_labels), every item with at least one label."""
    labels = rng.random((n, n_labels)) < rng.uniform(0.1, 0.7)
    labels[np.arange(n), rng.integers(0, n_labels, n)] |= ~labels.any(axis=1)
    return labels


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
def test_multi_labels_equal_a_full_stable_sort(seed, distance):
    """Relevant when a query and a reference share a label (bitsets over several words)."""
    rng = np.random.default_rng(100 + seed)
    n, d = int(rng.integers(2, 120)), int(rng.integers(1, 6))
    n_labels = int(rng.choice([3, 70]))  # one word, or two
    leave_one_out = seed % 2 == 0
    x_r = vectors(rng, n, d, ("lattice", "far", "normal")[seed % 3])
    x_q = x_r if leave_one_out else vectors(rng, int(rng.integers(1, 40)), d, "lattice")
    r_labels = label_sets(rng, n, n_labels)
    q_labels = r_labels if leave_one_out else label_sets(rng, len(x_q), n_labels)
    relevance = LabelSets(q_labels, r_labels)
    relevant = (q_labels.astype(int) @ r_labels.T.astype(int)) > 0
    run_case(rng, x_q, x_r, distance, relevance, relevant, leave_one_out, extra_ignored=seed % 3)


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
def test_sparse_judgements_equal_a_full_stable_sort(seed, distance):
    """Per-query lists of relevant references, some queries with none or with every reference."""
    rng = np.random.default_rng(200 + seed)
    n, d = int(rng.integers(2, 120)), int(rng.integers(1, 6))
    x_r = vectors(rng, n, d, ("lattice", "far", "normal")[seed % 3])
    x_q = vectors(rng, int(rng.integers(1, 30)), d, "lattice")
    relevant = rng.random((len(x_q), n)) < rng.uniform(0, 1, (len(x_q), 1))
    relevant[0] = seed % 2 == 0  # none, or every reference
    run_case(rng, x_q, x_r, distance, Judged(relevant), relevant, False, extra_ignored=seed % 4)


@pytest.mark.parametrize("seed", range(16))
@pytest.mark.parametrize("distance", ["euclidean", "inner_product"])
def test_graded_judgements_give_every_positive_grade_in_exact_order(seed, distance):
    """Grades -1 to 3 (0: unjudged): the rank and grade of every positively graded reference within
    depth; references of different grades at equal or nearly equal distances ordered by index."""
    rng = np.random.default_rng(250 + seed)
    n, d = int(rng.integers(2, 120)), int(rng.integers(1, 4))
    x_r = vectors(rng, n, d, ("lattice", "far", "normal", "lattice")[seed % 4])
    x_q = vectors(rng, int(rng.integers(1, 30)), d, "lattice")
    grades = np.where(rng.random((len(x_q), n)) < rng.uniform(0, 1), rng.integers(-1, 4, (len(x_q), n)), 0)
    judged = Judged(grades, threshold=float(rng.choice([1, 2])), gains=True)
    relevant = judged.is_marked()
    run_case(rng, x_q, x_r, distance, judged, relevant, False, extra_ignored=seed % 3, grades=grades)


@pytest.mark.parametrize("seed", range(6))
def test_several_ignored_references_take_no_rank(seed):
    """Up to five ignored references per query, relevant or not, are neither ranked nor counted in R."""
    rng = np.random.default_rng(300 + seed)
    n = int(rng.integers(8, 100))
    x = vectors(rng, n, 3, "lattice")
    codes = rng.integers(0, 3, n)
    run_case(rng, x, x, "euclidean", Codes(codes, codes), codes[:, None] == codes, True, extra_ignored=4)


def test_ties_between_relevant_and_other_references_go_to_the_lower_index():
    """Equal distances: the lower reference index ranks first, whatever its relevance."""
    references = np.array([[1.0], [1.0], [1.0], [2.0], [-1.0]], dtype=np.float32)
    codes = np.array([0, 1, 0, 1, 1])
    ranker = DeepRanker(references, True, codes)
    ranks, grades = ranker.ranks(
        np.zeros((1, 1), np.float32), Codes(np.array([1]), codes).marked(np.array([0]), np.array([3])), 5
    )
    # order by (distance, index): 0 (other), 1, 2 (other), 4, 3 -> relevant at ranks 2, 4, 5
    np.testing.assert_array_equal(ranks, [[2.0, 4.0, 5.0]])
    assert grades is None


def test_ties_between_grades_go_to_the_lower_index():
    """Equal distances between references of different grades: the lower index ranks first."""
    references = np.array([[1.0], [1.0], [1.0], [2.0]], dtype=np.float32)
    grades = np.array([[0, 3, 1, 2]])  # reference 0 unjudged
    ranker = DeepRanker(references, True)
    marked = Judged(grades, gains=True).marked(np.array([0]), np.array([3]))
    ranks, found = ranker.ranks(np.zeros((1, 1), np.float32), marked, 4)
    np.testing.assert_array_equal(ranks, [[2.0, 3.0, 4.0]])
    np.testing.assert_array_equal(found, [[3.0, 1.0, 2.0]])


def test_a_query_with_no_relevant_reference_has_no_ranks():
    """R = 0: nothing ranked, ranks all +inf."""
    codes = Codes(np.array([7]), np.zeros(4, int))
    ranker = DeepRanker(np.eye(4, dtype=np.float32), True, codes.class_codes)
    ranks, _ = ranker.ranks(np.ones((1, 4), np.float32), codes.marked(np.array([0]), np.array([0])), 4)
    assert np.isinf(ranks).all()


@pytest.mark.parametrize("seed", range(4))
def test_results_do_not_depend_on_blocks_precision_or_sample(seed):
    """Block sizes, query splits, product precision and the sampled references change no rank."""
    rng = np.random.default_rng(400 + seed)
    n = 300
    x = vectors(rng, n, 4, ("lattice", "far", "normal", "lattice")[seed])
    codes = np.where(rng.random(n) < 0.5, 0, rng.integers(1, 20, n))
    depth = rng.integers(1, n, n)
    ids = np.arange(n)
    relevance = Codes(codes, codes)
    counts = np.bincount(codes)[codes] - 1
    results = []
    for precision, block_elements, sample_seed, split in [
        ("auto", 1 << 22, 0, n),
        ("float64", n, 1, 7),
        ("mixed", 13 * n, 2, 64),
        ("mixed", 1, 3, 1),
    ]:
        ranker = DeepRanker(x, True, codes, precision, block_elements=block_elements, seed=sample_seed)
        parts = []
        for s in range(0, n, split):
            sl = ids[s : s + split]
            marked = relevance.marked(sl, counts[sl])
            parts.append(ranker.ranks(x[sl], marked, depth[sl], None, sl[:, None])[0])
        width = max(p.shape[1] for p in parts)
        results.append(np.vstack([np.pad(p, ((0, 0), (0, width - p.shape[1])), constant_values=np.inf) for p in parts]))
    width = max(r.shape[1] for r in results)
    results = [np.pad(r, ((0, 0), (0, width - r.shape[1])), constant_values=np.inf) for r in results]
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_deep_rankings_of_a_large_class_equal_a_full_sort():
    """Thousands of references, a class holding most of them, depth = R: the regime the module is for."""
    rng = np.random.default_rng(7)
    n, d = 3000, 8
    codes = np.where(rng.random(n) < 0.7, 0, rng.integers(1, 30, n))
    x = (rng.standard_normal((30, d))[codes] + rng.standard_normal((n, d))).astype(np.float32)
    queries = np.arange(0, n, 97)
    R = np.bincount(codes)[codes[queries]] - 1
    ranker = DeepRanker(x, True, codes)
    found = ranker.ranks(x[queries], Codes(codes, codes).marked(queries, R), R, None, queries[:, None])
    relevant = codes[queries][:, None] == codes[None, :]
    assert_ranks_equal(found, expected(x[queries], x, "euclidean", relevant, R, [{int(i)} for i in queries])[0])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("precision", ["mixed", "float64"])
def test_crowded_values_far_from_the_origin_equal_a_full_sort(seed, precision):
    """Distances closer together than float32 resolves, everywhere, the threshold included."""
    rng = np.random.default_rng(600 + seed)
    n, d = int(rng.integers(100, 400)), int(rng.integers(1, 4))
    x = (1000 + 1e-3 * rng.standard_normal((n, d))).astype(np.float32)
    codes = np.where(rng.random(n) < 0.5, 0, rng.integers(1, 4, n))
    relevant = codes[:, None] == codes
    run_case(rng, x, x, "euclidean", Codes(codes, codes), relevant, True, precision=precision, sample_sigmas=-1.0)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("euclidean", [True, False])
def test_error_bounds_hold_for_products_in_either_precision(seed, euclidean):
    """|product value - exact formula| <= the bound, for float32 and float64 products of any shape."""
    rng = np.random.default_rng(700 + seed)
    n, d = 500, int(rng.choice([1, 7, 64, 300]))
    x = (rng.standard_normal((n, d)) * 10.0 ** rng.uniform(-3, 3) + rng.uniform(-1e3, 1e3)).astype(np.float32)
    ranker = DeepRanker(x, euclidean, np.zeros(n, int))
    q = x[:20]
    q_norms = np.sqrt(np.einsum("ij,ij->i", q, q, dtype=np.float64))
    bound32, bound64 = error_bounds(q_norms, ranker.max_norm, d, euclidean)
    cols = ranker.column_of_reference[np.arange(n)]
    exact = np.array([[-(r.astype(np.float64) @ v.astype(np.float64)) for r in x] for v in q])
    if euclidean:  # the exact formula, less ||q||^2
        exact = np.array([((x.astype(np.float64) - v.astype(np.float64)) ** 2).sum(axis=1) for v in q])
        exact -= (q.astype(np.float64) ** 2).sum(axis=1)[:, None]
    for dtype, bound, matrix in ((np.float32, bound32, ranker.matrix32), (np.float64, bound64, ranker.matrix64)):
        values = (ranker.factors(q, dtype) @ matrix[:].T)[:, cols].astype(np.float64)
        assert (np.abs(values - exact) <= bound[:, None]).all()


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 40),
    st.integers(1, 4),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["euclidean", "inner_product"]),
    st.sampled_from(["auto", "float64", "mixed"]),
)
def test_property_lattice_points_equal_a_full_sort(n, d, seed, distance, precision):
    """Any small lattice data set, labels and depths: the ranks of a full stable float64 sort."""
    rng = np.random.default_rng(seed)
    x = rng.integers(-1, 2, size=(n + 1, d)).astype(np.float32)
    codes = rng.integers(0, 3, n + 1)
    run_case(rng, x, x, distance, Codes(codes, codes), codes[:, None] == codes, True, precision=precision)


@pytest.mark.parametrize("seed", range(3))
def test_listed_marks_agree_with_a_dense_relevance_matrix(seed):
    """Label sets and judgements list each query's marked references (and grades) as the matrix says."""
    rng = np.random.default_rng(500 + seed)
    nq, n = 9, 40
    q_labels, r_labels = label_sets(rng, nq, 70), label_sets(rng, n, 70)
    grades = np.where(rng.random((nq, n)) < 0.3, rng.integers(-1, 4, (nq, n)), 0)
    sources = [
        (LabelSets(q_labels, r_labels), (q_labels.astype(int) @ r_labels.T.astype(int)) > 0, None),
        (Judged(grades), grades >= 1, None),
        (Judged(grades, gains=True), grades > 0, grades),
    ]
    ids = rng.permutation(nq)[:6]
    for source, matrix, graded in sources:
        marked = source.marked(ids, matrix[ids].sum(axis=1))
        local = np.array([4, 1, 2])
        indptr, cols, found = marked.part(local).columns()
        rows, want = np.nonzero(matrix[ids[local]])
        np.testing.assert_array_equal(cols, want)
        np.testing.assert_array_equal(indptr, np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=3))]))
        if graded is None:
            assert found is None
        else:
            np.testing.assert_array_equal(found, graded[ids[local]][rows, want])


def test_no_queries_give_empty_hits():
    """A block of no queries: ranks of shape (0, 1)."""
    codes = Codes(np.zeros(1, int), np.zeros(4, int))
    ranker = DeepRanker(np.eye(4, dtype=np.float32), True, codes.class_codes)
    ranks, _ = ranker.ranks(np.zeros((0, 4), np.float32), codes.marked(np.zeros(0, int), np.zeros(0, int)), 1)
    assert ranks.shape == (0, 1)


@pytest.mark.parametrize("euclidean", [True, False])
def test_float64_factors_are_made_on_demand_and_equal_the_whole_matrix(euclidean):
    """With class codes the ranker keeps no float64 copy of the references: each slice or gather
    of its float64 factors is made when asked for, equal bit for bit to those rows of the whole
    matrix (float32 widened exactly, the float64 squared norms appended)."""
    from embedeval._search.deep_factors import Float64Factors, factor_matrix

    rng = np.random.default_rng(3)
    x = (rng.standard_normal((300, 9)) * 10.0 ** rng.uniform(-3, 3, (300, 1))).astype(np.float32)
    codes = rng.integers(0, 7, 300)
    ranker = DeepRanker(x, euclidean, codes)
    assert isinstance(ranker.matrix64, Float64Factors)
    columns = x[ranker.index_of_column]
    norms = np.einsum("ij,ij->i", columns, columns, dtype=np.float64)
    whole = factor_matrix(columns, norms, euclidean, np.float64)
    assert ranker.matrix64.shape == whole.shape and ranker.matrix64.dtype == np.float64
    gather = rng.integers(0, 300, 50)
    for key in (slice(None), slice(40, 170), slice(5, 5), gather, ...):
        got = ranker.matrix64[key]
        assert got.flags.c_contiguous
        np.testing.assert_array_equal(got.view(np.uint64), whole[key].view(np.uint64))
    assert isinstance(DeepRanker(x, euclidean).matrix64, np.ndarray)  # no classes: made once
    # rows(start, stop): the slice, read-only, kept for the calling thread's next call of the same
    first = ranker.matrix64.rows(40, 170)
    np.testing.assert_array_equal(first.view(np.uint64), whole[40:170].view(np.uint64))
    assert not first.flags.writeable
    assert ranker.matrix64.rows(40, 170) is first
    assert ranker.matrix64.rows(41, 170) is not first
    # a ranker travels (pickled) without the slices its threads keep, and keeps working
    import pickle

    again = pickle.loads(pickle.dumps(ranker)).matrix64.rows(40, 170)
    np.testing.assert_array_equal(again.view(np.uint64), whole[40:170].view(np.uint64))
