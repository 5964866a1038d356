"""embedeval.neighbors: each query's exact top k against a float64 full sort, ties by lower index."""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import embedeval


def sorted_reference(queries, references, distance, k, leave_one_out):
    """(indices, distances) by a full stable sort of float64 keys computed from the float32
    vectors as searched (cosine: normalised in float64, rounded to float32)."""
    q = np.asarray(queries, dtype=np.float32).astype(np.float64)
    r = np.asarray(references, dtype=np.float32).astype(np.float64)
    if distance == "cosine":
        q = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32).astype(np.float64)
        r = (r / np.linalg.norm(r, axis=1, keepdims=True)).astype(np.float32).astype(np.float64)
    indices, distances = [], []
    for i, row in enumerate(q):
        keys = ((r - row) ** 2).sum(axis=1) if distance == "euclidean" else -(r * row).sum(axis=1)
        order = sorted((j for j in range(len(r)) if not (leave_one_out and j == i)), key=lambda j: (keys[j], j))[:k]
        shown = keys[order]
        shown = np.sqrt(shown) if distance == "euclidean" else shown + 1 if distance == "cosine" else shown
        indices.append(order)
        distances.append(shown)
    return np.array(indices, dtype=np.int64), np.array(distances)


@st.composite
def cases(draw):
    n = draw(st.integers(2, 40))
    d = draw(st.integers(1, 4))
    kind = draw(st.sampled_from(["ties", "duplicates", "normal"]))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    if kind == "ties":  # small integers: many exactly equal distances
        x = rng.integers(-2, 3, size=(n, d)).astype(np.float32)
    elif kind == "duplicates":  # few distinct rows, each repeated
        x = rng.standard_normal((max(1, n // 4), d)).astype(np.float32)[rng.integers(0, max(1, n // 4), n)]
    else:
        x = rng.standard_normal((n, d)).astype(np.float32)
    x[~x.any(axis=1)] = 1.0  # cosine: no zero rows
    separate = draw(st.booleans())
    distance = draw(st.sampled_from(["euclidean", "cosine", "inner_product"]))
    if separate:
        n_queries = draw(st.integers(1, n))
        queries, references = x[:n_queries], x[rng.permutation(n)]
        k = draw(st.integers(1, n))
    else:
        queries, references = x, None
        k = draw(st.integers(1, n - 1))
    block = draw(st.one_of(st.none(), st.integers(1, 7)))
    return queries, references, distance, k, block


@settings(max_examples=150, deadline=None)
@given(cases())
def test_neighbors_equal_a_float64_full_sort_with_ties_by_lower_index(case):
    queries, references, distance, k, block = case
    found = embedeval.neighbors(queries, references, k=k, distance=distance, block_size=block)
    leave_one_out = references is None
    expected_idx, expected_dist = sorted_reference(
        queries, queries if leave_one_out else references, distance, k, leave_one_out
    )
    np.testing.assert_array_equal(found.indices, expected_idx)
    np.testing.assert_allclose(found.distances, expected_dist, rtol=1e-12, atol=1e-12)
    assert found.indices.dtype == np.int64 and found.distances.dtype == np.float64
    assert found.leave_one_out is leave_one_out and found.k == k


@pytest.mark.parametrize("distance", ["euclidean", "cosine", "inner_product"])
def test_a_query_never_finds_itself_in_leave_one_out_but_finds_its_copies(distance):
    x = np.array([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=np.float32)
    found = embedeval.neighbors(x, k=3, distance=distance)
    assert not (found.indices == np.arange(4)[:, None]).any()
    assert found.indices[0, :2].tolist() == [1, 3]  # its two copies first, lower index first
    np.testing.assert_allclose(found.distances[0, :2], [-1.0, -1.0] if distance == "inner_product" else [0.0, 0.0])


def test_large_and_tiny_magnitudes_report_unscaled_distances():
    """Inputs scaled by a power of two for the search give distances in their own units."""
    for factor in (2.0**-60, 2.0**60):
        x = np.array([[0.0], [3.0], [4.0]]) * factor
        found = embedeval.neighbors(x, k=2)
        np.testing.assert_allclose(found.distances[0], [3.0 * factor, 4.0 * factor], rtol=1e-12)
        ip = embedeval.neighbors(x, k=1, distance="inner_product")
        np.testing.assert_allclose(ip.distances[2], [-12.0 * factor**2], rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"k": 4}, r"'k' must be an int from 1 to 3 \(4 rows, each excluding itself\); got 4"),
        ({"k": 0}, r"'k' must be an int from 1 to 3"),
        ({"k": 2.0}, r"'k' must be an int"),
        ({"k": 5, "reference": np.zeros((4, 2))}, r"'k' must be an int from 1 to 4 \(4 references\); got 5"),
        ({"distance": "manhattan"}, r"'distance' must be one of 'euclidean', 'cosine', 'inner_product'"),
        ({"reference": np.zeros((4, 3))}, r"'reference' must have the dimension of 'queries' \(2\); got 3"),
        ({"block_size": 0}, r"'block_size' must be an int >= 1; got 0"),
    ],
)
def test_bad_arguments_are_named(kwargs, message):
    x = np.arange(8, dtype=np.float32).reshape(4, 2)
    with pytest.raises(ValueError, match=message):
        embedeval.neighbors(x, **{"k": 1, **kwargs})


def test_cosine_refuses_zero_rows():
    with pytest.raises(ValueError, match="zero vectors"):
        embedeval.neighbors(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]]), k=1, distance="cosine")


def test_memory_stays_far_below_a_queries_by_references_matrix():
    """20,000 queries against themselves: numpy's allocations peak far below one float32
    queries x references matrix (1.6 GB) and near inputs + output + one block."""
    x = np.random.default_rng(0).standard_normal((20_000, 4)).astype(np.float32)
    tracemalloc.start()
    try:
        found = embedeval.neighbors(x, k=5)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    output = found.indices.nbytes + found.distances.nbytes
    assert peak < output + 64 * 2**20, peak
