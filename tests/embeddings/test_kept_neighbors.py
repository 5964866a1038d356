"""keep_neighbors=k: the result keeps each query's exact top k, with its relevance, as evaluated."""

from __future__ import annotations

import numpy as np
import pytest

import embedeval


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("distance", ["euclidean", "cosine", "inner_product"])
def test_kept_neighbours_are_the_exact_ones_with_their_labels(seed, distance):
    rng = np.random.default_rng(seed)
    x = rng.integers(-2, 3, size=(60, 3)).astype(np.float32)  # ties and duplicates
    x[~x.any(axis=1)] = 1.0
    labels = rng.integers(0, 4, 60)
    result = embedeval.evaluate(x, labels, metrics=["precision@1", "map@r"], distance=distance, keep_neighbors=7)
    kept, exact = result.neighbors, embedeval.neighbors(x, k=7, distance=distance)
    np.testing.assert_array_equal(kept.indices, exact.indices)
    np.testing.assert_array_equal(kept.distances, exact.distances)
    np.testing.assert_array_equal(kept.relevant, labels[kept.indices] == labels[:, None])
    np.testing.assert_array_equal(kept.classes[kept.label_codes], labels[kept.indices])
    np.testing.assert_array_equal(kept.n_relevant, np.bincount(labels)[labels] - 1)
    evaluated = ~np.isnan(result.per_query["precision@1"])
    np.testing.assert_array_equal(result.per_query["precision@1"][evaluated], kept.relevant[evaluated, 0])


def test_ignored_references_are_left_out_as_in_the_evaluation():
    x = np.array([[0.0], [0.1], [0.2], [5.0]], dtype=np.float32)
    result = embedeval.evaluate(x, [0, 0, 1, 1], ignore={0: [1]}, metrics=["precision@1"], keep_neighbors=3)
    assert result.neighbors.indices[0].tolist() == [2, 3, -1]
    assert np.isnan(result.neighbors.distances[0, 2]) and not result.neighbors.relevant[0, 2]
    assert result.neighbors.first_relevant().tolist() == [0, 1, 3, 1]


def test_retrieval_keeps_grades_and_the_threshold_decides_relevance():
    x = np.array([[0.0], [1.0], [2.0], [3.0]], dtype=np.float32)
    qrels = {"q": {"1": 1, "2": 2}}
    result = embedeval.evaluate_retrieval(
        x[:1],
        x,
        qrels,
        query_ids=["q"],
        corpus_ids=list("0123"),
        metrics=["ndcg@3"],
        threshold=2,
        keep_neighbors=3,
        distance="euclidean",
    )
    kept = result.neighbors
    assert kept.indices.tolist() == [[0, 1, 2]]
    assert kept.grades.tolist() == [[0.0, 1.0, 2.0]] and kept.relevant.tolist() == [[False, False, True]]
    assert kept.n_relevant.tolist() == [1]


def test_kept_neighbours_survive_select_and_take():
    x = np.random.default_rng(0).standard_normal((30, 2)).astype(np.float32)
    result = embedeval.evaluate(x, np.arange(30) % 3, metrics=["precision@1", "map@r"], keep_neighbors=2)
    assert result.select(["map@r"]).neighbors is result.neighbors
    taken = result.take([5, 1])
    np.testing.assert_array_equal(taken.neighbors.indices, result.neighbors.indices[[5, 1]])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"keep_neighbors": 0}, r"'keep_neighbors' must be an int >= 1; got 0"),
        ({"keep_neighbors": 2, "distance": "hamming"}, "keeps the neighbours of float embeddings"),
    ],
)
def test_bad_keep_neighbors_is_refused_before_any_work(kwargs, message):
    with pytest.raises(ValueError, match=message):
        embedeval.evaluate(np.zeros((4, 8), dtype=np.uint8), [0, 0, 1, 1], **kwargs)
