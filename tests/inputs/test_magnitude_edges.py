"""Exact at any magnitude, float32 and float64 input alike, or refused with a clear error.

Scaling by a power of two changes no ranking, so embeddings whose values are exact in float32
(small integers here) must give the values of a float64 full-sort reference at every exponent
float32 or float64 can hold; the scale factor itself must not overflow float32 (2**130 for
embeddings near 1e-40), and float64 input must not be rounded to 0 or inf before it is scaled.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from reference import evaluate_reference

import embedeval

METRICS = ["precision@1", "r_precision", "map@r"]
FAST = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def base_case(seed):
    rng = np.random.default_rng(seed)
    n, d = int(rng.integers(6, 30)), int(rng.integers(1, 5))
    x = rng.integers(-3, 4, size=(n, d)).astype(np.float64)
    x[np.abs(x).sum(axis=1) == 0, 0] = 1.0
    return x, rng.integers(0, 3, n)


def assert_matches_reference(x_in, base, labels, distance="euclidean"):
    got = embedeval.evaluate(x_in, labels, metrics=METRICS, distance=distance)
    expected = evaluate_reference(base, labels, METRICS, distance)
    for m in METRICS:
        np.testing.assert_allclose(got.per_query[m], expected[m], rtol=1e-12, err_msg=m)
    return got


@FAST
@given(
    seed=st.integers(0, 2**32 - 1),
    exponent=st.integers(-140, 120),
    distance=st.sampled_from(["euclidean", "inner_product"]),
)
def test_float32_embeddings_at_any_exponent_match_the_reference(seed, exponent, distance):
    # integers up to 3 times 2**exponent: exact in float32 down to its subnormal numbers
    # (whose last bits hold them exactly from 2**-147 up)
    x, labels = base_case(seed)
    x32 = np.ldexp(x, exponent).astype(np.float32)
    assert (x32.astype(np.float64) == np.ldexp(x, exponent)).all()
    got = assert_matches_reference(x32, x, labels, distance)
    if not 2.0**-40 <= np.sqrt((np.ldexp(x, exponent) ** 2).sum(axis=1)).max() <= 2.0**40:
        assert "scaled" in got.config


@FAST
@given(
    seed=st.integers(0, 2**32 - 1),
    exponent=st.integers(-1000, 1000),
    distance=st.sampled_from(["euclidean", "inner_product", "cosine"]),
)
def test_float64_embeddings_at_any_exponent_match_the_reference(seed, exponent, distance):
    x, labels = base_case(seed)
    if distance != "cosine":
        assert_matches_reference(np.ldexp(x, exponent), x, labels, distance)
        return
    # cosine rounds normalised rows to float32, which the float64 reference does not: compare
    # with the same rows at magnitude 1 instead (a power of two changes no direction)
    got = embedeval.evaluate(np.ldexp(x, exponent), labels, metrics=METRICS, distance=distance)
    plain = embedeval.evaluate(x.astype(np.float32), labels, metrics=METRICS, distance=distance)
    for m in METRICS:
        np.testing.assert_array_equal(got.per_query[m], plain.per_query[m], err_msg=m)


@pytest.mark.parametrize("exponent", [-170, -160, 130])
def test_float64_retrieval_at_extreme_exponents_matches_its_normal_twin(exponent):
    x, labels = base_case(3)
    qrels = {i: {j: 1 for j in np.flatnonzero(labels == labels[i])} for i in range(len(x))}
    plain = embedeval.evaluate_retrieval(x[:5], x, qrels={i: qrels[i] for i in range(5)}, metrics=["map"])
    far = embedeval.evaluate_retrieval(
        np.ldexp(x[:5], exponent), np.ldexp(x, exponent), qrels={i: qrels[i] for i in range(5)}, metrics=["map"]
    )
    np.testing.assert_array_equal(far.per_query["map"], plain.per_query["map"])


def test_tiny_float32_embeddings_give_set_level_metrics():
    """Below 2**-127 the scale factor is 2**128 or more: it used to overflow float32 to inf."""
    x, labels = base_case(5)
    tiny = np.ldexp(x, -135).astype(np.float32)
    got = embedeval.evaluate(tiny, labels, metrics=["precision@1", "eer", "pair_auroc"])
    plain = embedeval.evaluate(x.astype(np.float32), labels, metrics=["precision@1", "eer", "pair_auroc"])
    for m in ("precision@1", "eer", "pair_auroc"):
        assert got.summary[m] == pytest.approx(plain.summary[m], abs=1e-12), m


def test_float64_outside_float32_range_is_refused_where_it_cannot_be_scaled():
    """Functions that round float64 to float32 without a scale refuse values it would flush."""
    from embedeval._inputs.arrays import as_embeddings

    with pytest.raises(ValueError, match=r"'embeddings' must have its largest \|component\| within"):
        as_embeddings(np.full((3, 2), 1e-50))
    with pytest.raises(ValueError, match="values up to 1e\\+39"):
        as_embeddings(np.full((3, 2), 1e39))
    assert as_embeddings(np.full((3, 2), 1e-50), wide=True).dtype == np.float64
