"""Property-based tests: hypothesis draws the inputs, the references decide.

* ``evaluate`` against the float64 full-sort reference (tests/reference.py): tie-heavy lattices
  and continuous values, duplicated rows, every distance, leave-one-out and separate sets, and
  every searcher configuration (block size, threads, shards, streaming, a stand-in device);
* ``evaluate_rankings`` and ``evaluate_scores`` against trec_eval (pytrec_eval);
* the rank correlations against scipy and the AUROC against scikit-learn.

Example counts are modest so the suite stays fast. For a long local hunt set
``EMBEDEVAL_HYPOTHESIS_EXAMPLES`` (examples per test, default 25), e.g.
``EMBEDEVAL_HYPOTHESIS_EXAMPLES=2000 python -m pytest tests/test_properties.py``. A failure
prints the smallest input hypothesis found and a ``@reproduce_failure`` line to replay it.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from reference import TREC_MEASURES as TREC
from reference import evaluate_reference

import embedeval
from embedeval._search import Device
from embedeval.confidence import auroc, kendall, spearman

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.extra.numpy import arrays  # noqa: E402

EXAMPLES = int(os.environ.get("EMBEDEVAL_HYPOTHESIS_EXAMPLES", "25"))
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,  # timings on a shared machine are noise, not failures
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---------------------------------------------------------------------------------------------
# MAGNITUDES. Every embedding is (a lattice or continuous values of magnitude 1 or 0) x 2**e,
# e drawn from SCALE_EXPONENTS, and no nonzero component is smaller than SMALLEST_COMPONENT
# before scaling: row norms from ~1e-38 to ~1e30, products deep in float32's subnormal range,
# distances that would overflow float32. The inputs are scaled by a power of two into the safe
# range and the bound covers underflow (embedeval._inputs.magnitude), so every one is ranked exactly.
SCALE_EXPONENTS = (-120, 100)
SMALLEST_COMPONENT = 2.0**-24
# ---------------------------------------------------------------------------------------------

EMBEDDING_METRICS = [
    "precision@1",
    "precision@3",
    "recall@2",
    "hit_rate@4",
    "r_precision",
    "map@r",
    "map",
    "map@3",
    "mrr",
    "mrr@2",
]


@st.composite
def magnitudes(draw):
    """A component of magnitude 0 or in [SMALLEST_COMPONENT, 1], either sign, as float32."""
    size = draw(st.one_of(st.just(0.0), st.floats(SMALLEST_COMPONENT, 1.0, width=32)))
    return float(np.float32(size if draw(st.booleans()) else -size))


@st.composite
def vectors(draw, n: int, d: int, kind: str, exponent: int) -> np.ndarray:
    """n rows of d components: a coarse lattice (many exact ties and duplicates) or continuous
    values (near-ties), scaled by 2**exponent (exact in floating point)."""
    if kind == "lattice":
        elements = st.integers(-3, 3).map(float)
    else:
        elements = magnitudes()
    x = draw(arrays(np.float64, (n, d), elements=elements))
    for source, target in draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=n)):
        x[target] = x[source]  # exact duplicates, whatever their labels
    return (x * 2.0**exponent).astype(np.float32)


@st.composite
def exactly_normalisable(draw, n: int, d: int, exponent: int) -> np.ndarray:
    """Rows of +-1 on d = 1 or 4 components, each row times its own power of two: their norm is a
    power of two, so float32 normalisation is exact and the reference's float64 cosine of the raw
    rows is the cosine searched (many exact ties, and duplicates)."""
    signs = draw(arrays(np.float64, (n, d), elements=st.sampled_from([-1.0, 1.0])))
    rows = draw(arrays(np.float64, (n, 1), elements=st.integers(-2, 2).map(lambda e: 2.0**e)))
    return (signs * rows * 2.0**exponent).astype(np.float32)


@st.composite
def embedding_cases(draw):
    """(embeddings, labels, evaluate's keyword arguments, reference arguments)."""
    distance = draw(st.sampled_from(["euclidean", "inner_product", "cosine"]))
    n = draw(st.integers(2, 24))
    exponent = draw(st.integers(*SCALE_EXPONENTS))
    if distance == "cosine":
        d = draw(st.sampled_from([1, 4]))
        make = lambda rows: exactly_normalisable(rows, d, exponent)  # noqa: E731
    else:
        d, kind = draw(st.integers(1, 5)), draw(st.sampled_from(["lattice", "continuous"]))
        make = lambda rows: vectors(rows, d, kind, exponent)  # noqa: E731
    n_classes = draw(st.integers(1, 5))
    x = draw(make(n))
    labels = draw(arrays(np.int64, n, elements=st.integers(0, n_classes - 1)))
    gallery = {}
    if draw(st.booleans()):  # a separate reference set, else leave-one-out
        n_ref = draw(st.integers(1, 30))
        gallery = {
            "reference": draw(make(n_ref)),
            "reference_labels": draw(arrays(np.int64, n_ref, elements=st.integers(0, n_classes - 1))),
        }
    n_ref = len(gallery.get("reference", x))
    options = draw(searcher_options(n, n_ref))
    return x, labels, {"distance": distance, **gallery, **options}


@st.composite
def searcher_options(draw, n: int, n_ref: int) -> dict:
    """Block size, thread count and one searcher: one index, shards (kept or streamed), or a
    stand-in device that returns at most max_k results per search."""
    options = {
        "block_size": draw(st.one_of(st.none(), st.integers(1, n + 2))),
        "n_threads": draw(st.integers(1, 3)),
    }
    searcher = draw(st.sampled_from(["flat", "shards", "stream", "device"]))
    if searcher in ("shards", "stream"):
        options["shard_size"] = draw(st.integers(1, n_ref + 1))
        options["stream_reference"] = searcher == "stream"
    elif searcher == "device":
        options["device"] = Device(("cpu",), reference_block=draw(st.integers(1, 8)))
    return options


@PROPERTY
@given(embedding_cases())
def test_evaluate_equals_the_float64_full_sort_reference(case):
    x, labels, kwargs = case
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # k beyond the references, nothing evaluated: legal here
        result = embedeval.evaluate(x, labels, metrics=EMBEDDING_METRICS, **kwargs)
    expected = evaluate_reference(
        x, labels, EMBEDDING_METRICS, kwargs["distance"], kwargs.get("reference"), kwargs.get("reference_labels")
    )
    for name in EMBEDDING_METRICS:
        np.testing.assert_allclose(result.per_query[name], expected[name], rtol=1e-12, atol=0, err_msg=name)
    assert result.n_evaluated == int((~np.isnan(expected["map@r"])).sum())


# trec_eval keeps run scores as C floats (float32): scores that differ only beyond float32's
# precision (1.00000001 and 1.0), or that underflow or overflow in it (1e-50 and 0.0, 1e39 and
# 1e40), are ties there, broken by document id, while embedeval orders them by their float64
# values. So the scores compared with trec_eval are float32 values, the same numbers to both.
SCORES = st.one_of(
    st.integers(-3, 3).map(float),  # ties, broken by trec_eval's rule
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False, width=32),
)


def doc_id(column: int, n_items: int) -> str:
    """Item ``column`` of a score matrix as a trec_eval document id. trec_eval breaks ties by
    document id, descending, and score matrices by column, ascending: ids that sort in the
    opposite order of the columns make the two rules one."""
    return f"d{n_items - 1 - column:04d}"


@st.composite
def trec_cases(draw):
    """A run and graded qrels over up to 12 queries, each retrieving 1 to 15 of 20 documents."""
    run, qrels = {}, {}
    for q in range(draw(st.integers(1, 12))):
        docs = draw(st.lists(st.integers(0, 19), min_size=1, max_size=15, unique=True))
        scores = draw(st.lists(SCORES, min_size=len(docs), max_size=len(docs)))
        run[f"q{q}"] = {f"d{i:04d}": s for i, s in zip(docs, scores, strict=True)}
        judged = draw(st.dictionaries(st.integers(0, 19), st.integers(0, 3), min_size=1, max_size=10))
        qrels[f"q{q}"] = {f"d{i:04d}": g for i, g in judged.items()}
    return run, qrels


def trec_eval(run: dict, qrels: dict) -> dict:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    return pytrec_eval.RelevanceEvaluator(qrels, set(TREC.values())).evaluate(run)


@PROPERTY
@pytest.mark.filterwarnings("ignore:no query has a relevant item")  # such cases are drawn on purpose too
@given(trec_cases())
def test_evaluate_rankings_equals_trec_eval(case):
    run, qrels = case
    expected = trec_eval(run, qrels)
    result = embedeval.evaluate_rankings(run, qrels, metrics=list(TREC), empty="zero")
    order = result.config["query_ids"]
    assert sorted(order) == sorted(expected)
    for name, measure in TREC.items():
        want = np.array([expected[q][measure] for q in order])
        np.testing.assert_allclose(result.per_query[name], want, rtol=0, atol=1e-9, err_msg=name)


@st.composite
def score_matrices(draw):
    n_queries, n_items = draw(st.integers(1, 10)), draw(st.integers(1, 20))
    scores = draw(arrays(np.float64, (n_queries, n_items), elements=SCORES))
    grades = draw(arrays(np.int64, (n_queries, n_items), elements=st.sampled_from([0, 0, 0, 1, 2, 3])))
    return scores, grades


@PROPERTY
@pytest.mark.filterwarnings("ignore:no query has a relevant item")  # such cases are drawn on purpose too
@given(score_matrices())
def test_evaluate_scores_equals_trec_eval(case):
    """Every item scored; trec_eval reads the matrix as a run whose document ids sort against the columns."""
    scores, grades = case
    n_items = scores.shape[1]
    run = {f"q{q}": {doc_id(j, n_items): float(s) for j, s in enumerate(row)} for q, row in enumerate(scores)}
    qrels = {f"q{q}": {doc_id(j, n_items): int(g) for j, g in enumerate(row)} for q, row in enumerate(grades)}
    expected = trec_eval(run, qrels)
    result = embedeval.evaluate_scores(scores, grades, metrics=list(TREC), empty="zero")
    for name, measure in TREC.items():
        want = np.array([expected[f"q{q}"][measure] for q in range(len(scores))])
        np.testing.assert_allclose(result.per_query[name], want, rtol=0, atol=1e-9, err_msg=name)


TIES_AND_INFINITIES = st.one_of(
    st.sampled_from([-np.inf, np.inf, 0.0, 1.0, 2.0]),
    st.floats(-1e300, 1e300, allow_nan=False, allow_infinity=False),
)


@PROPERTY
@given(st.integers(2, 40).flatmap(lambda n: st.tuples(*[arrays(np.float64, n, elements=TIES_AND_INFINITIES)] * 2)))
def test_rank_correlations_equal_scipy(pair):
    """Tied values and repeated infinities included; a constant input gives NaN in both."""
    stats = pytest.importorskip("scipy.stats")
    a, b = pair
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # scipy warns on constant input
        want_rho, want_tau = stats.spearmanr(a, b)[0], stats.kendalltau(a, b)[0]
    np.testing.assert_allclose(spearman(a, b), want_rho, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(kendall(a, b), want_tau, rtol=1e-9, atol=1e-12)


@PROPERTY
@given(
    st.integers(2, 60).flatmap(
        lambda n: st.tuples(arrays(np.bool_, n), arrays(np.float64, n, elements=TIES_AND_INFINITIES))
    )
)
def test_auroc_equals_scikit_learn(case):
    metrics = pytest.importorskip("sklearn.metrics")
    correct, confidence = case
    if correct.all() or not correct.any():
        assert np.isnan(auroc(correct.astype(float), confidence))
        return
    # scikit-learn needs finite scores; only the order matters, so infinities become the extremes
    finite = np.nan_to_num(confidence, posinf=1e308, neginf=-1e308)
    assert auroc(correct.astype(float), confidence) == pytest.approx(metrics.roc_auc_score(correct, finite), abs=1e-12)
