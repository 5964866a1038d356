"""A sentence-transformers evaluator that scores retrieval exactly with embedeval.

``RetrievalEvaluator`` takes the same three dicts as sentence-transformers'
``InformationRetrievalEvaluator`` (query texts, corpus texts, relevant documents), encodes them
with the model's ``encode_query`` and ``encode_document``, and evaluates the exact ranking with
:func:`embedeval.evaluate_retrieval`::

    from embedeval.integrations.sentence_transformers import RetrievalEvaluator

    evaluator = RetrievalEvaluator(queries, corpus, relevant_docs, metrics=["ndcg@10", "mrr@10"])
    evaluator(model)                       # {"ndcg_at_10": ..., "mrr_at_10": ...}
    SentenceTransformerTrainer(..., evaluator=evaluator)

It is a subclass of sentence-transformers' own ``SentenceEvaluator``, with ``primary_metric``
and ``greater_is_better``, so its trainer can select the best checkpoint by it.

Where it differs from ``InformationRetrievalEvaluator`` (everything else agrees to the last bit
on the same ranking; ``tests/integrations/test_sentence_transformers.py`` checks it):

* **MAP@k**: sentence-transformers divides by min(k, R); that is embedeval's ``capped_map@k``.
  embedeval's ``map@k`` is trec_eval's, which divides by R.
* **Ties**: sentence-transformers orders equal scores by the corpus id's string order;
  embedeval by corpus row (the order of ``corpus``), or with ``ties="expected"`` their exact
  expected value over every order.
* **Self-matches**: neither skips a document whose id equals the query's id by default;
  ``ignore_query_id=True`` does, as BEIR and MTEB do (Quora, ArguAna).
* **Scores**: sentence-transformers ranks by float32 similarities on top-k chunks; embedeval by
  exact float64 distances of the float32 embeddings, over the whole corpus.
* **Grades**: sentence-transformers treats every listed document as relevant with gain 1;
  here ``relevant_docs`` may give grades (``{query id: {doc id: grade}}``), used by ``ndcg``.
"""

from __future__ import annotations

import importlib

import numpy as np

from .._core.names import safe_key
from .._embeddings.retrieval import evaluate_retrieval
from .._metrics.registry import RANKINGS, parse_metrics
from . import distance_for, require

_WHAT = "embedeval.integrations.sentence_transformers"
try:  # sentence-transformers >= 6 moved the evaluators; the old path warns there
    _evaluation = importlib.import_module("sentence_transformers.sentence_transformer.evaluation")
except ImportError:
    _evaluation = require("sentence_transformers.evaluation", _WHAT)

_DEFAULT_METRICS = ("hit_rate@1", "precision@10", "recall@10", "mrr@10", "ndcg@10", "capped_map@100")


class RetrievalEvaluator(_evaluation.SentenceEvaluator):
    """Exact retrieval metrics of a sentence-transformers model on queries, a corpus and judgements.

    Parameters
    ----------
    queries : dict of {str: str}
        Query id -> query text.
    corpus : dict of {str: str}
        Document id -> document text; the corpus rows follow this order (ties by row).
    relevant_docs : dict of {str: set of str} or dict of {str: dict of {str: int}}
        Query id -> its relevant document ids, or -> ``{document id: grade}``. Queries without
        a relevant document are skipped (and counted in ``result.skipped``), as
        sentence-transformers drops them.
    metrics : sequence of str
        Any metric of :func:`embedeval.evaluate_retrieval`. Default: ``hit_rate@1``,
        ``precision@10``, ``recall@10`` (trec_eval's), ``mrr@10``, ``ndcg@10``,
        ``capped_map@100`` (sentence-transformers' accuracy@1, precision@10, recall@10, mrr@10,
        ndcg@10 and map@100).
    primary_metric : str
        The metric the trainer selects checkpoints by (default the first of ``metrics``
        containing ``ndcg``, else the first).
    name : str
        Put before every key as ``{name}_`` (sentence-transformers' convention).
    names : {"safe", "plain"}
        ``"safe"`` (default): keys every logger accepts (``ndcg_at_10``); ``"plain"``: the metric
        names (``ndcg@10``).
    ignore_query_id : bool
        Skip documents whose id equals the query's id (BEIR and MTEB do; sentence-transformers
        does not).
    ties : {None, "expected", "optimistic", "pessimistic"}
        As in :func:`embedeval.evaluate_retrieval` (None: equal distances ranked by corpus row).
    batch_size, show_progress_bar, truncate_dim : optional
        Passed to the model's encode methods.
    query_prompt, query_prompt_name, corpus_prompt, corpus_prompt_name : str, optional
        Prompts for the query and document encoders.
    **evaluate_kwargs
        Passed to :func:`embedeval.evaluate_retrieval` (``block_size=``, ``threshold=``, ...).

    Attributes
    ----------
    result : embedeval.EvaluationResult or None
        The last call's result: per-query values, definitions, skipped queries.
    primary_metric : str
        The key of the primary metric in the returned dict.
    greater_is_better : bool
        True: every metric here is better when higher.
    """

    def __init__(
        self,
        queries: dict,
        corpus: dict,
        relevant_docs: dict,
        *,
        metrics=_DEFAULT_METRICS,
        primary_metric: str | None = None,
        name: str = "",
        names: str = "safe",
        ignore_query_id: bool = False,
        ties: str | None = None,
        batch_size: int = 32,
        show_progress_bar: bool = False,
        truncate_dim: int | None = None,
        query_prompt: str | None = None,
        query_prompt_name: str | None = None,
        corpus_prompt: str | None = None,
        corpus_prompt_name: str | None = None,
        **evaluate_kwargs,
    ):
        super().__init__()
        _check_texts(queries, "queries")
        _check_texts(corpus, "corpus")
        if names not in ("safe", "plain"):
            raise ValueError(f"names must be 'safe' or 'plain'; got {names!r}")
        self.metrics = [m.name for m in parse_metrics(metrics, RANKINGS)]  # canonical; bad names fail here
        self.query_ids, self.queries = list(queries), list(queries.values())
        self.corpus_ids, self.corpus = list(corpus), list(corpus.values())
        self.relevant_docs = relevant_docs
        self.name, self.names, self.ignore_query_id, self.ties = name, names, ignore_query_id, ties
        self.batch_size, self.show_progress_bar, self.truncate_dim = batch_size, show_progress_bar, truncate_dim
        self.prompts = {"query": (query_prompt, query_prompt_name), "document": (corpus_prompt, corpus_prompt_name)}
        self.evaluate_kwargs = evaluate_kwargs
        primary = (
            _first_ndcg(self.metrics) if primary_metric is None else parse_metrics(primary_metric, RANKINGS)[0].name
        )
        if primary not in self.metrics:
            raise ValueError(f"primary_metric must be one of metrics {self.metrics}; got {primary_metric!r}")
        self.primary_metric = self._key(primary)
        self.greater_is_better = True
        self.result = None

    @property
    def prefix(self) -> str:
        """What every returned key starts with: ``{name}_``, or nothing without a name."""
        return f"{self.name}_" if self.name else ""

    def _key(self, metric: str) -> str:
        key = self.prefix + metric
        return safe_key(key) if self.names == "safe" else key

    def embed(self, model, texts: list, kind: str) -> np.ndarray:
        """Encode ``texts`` with ``model.encode_query`` or ``model.encode_document`` (``kind``),
        falling back on ``model.encode``; float32 array of shape (len(texts), d)."""
        encode = getattr(model, f"encode_{kind}", None) or model.encode
        prompt, prompt_name = self.prompts[kind]
        out = encode(
            texts,
            prompt=prompt,
            prompt_name=prompt_name,
            batch_size=self.batch_size,
            show_progress_bar=self.show_progress_bar,
            convert_to_numpy=True,
            truncate_dim=self.truncate_dim,
        )
        return np.asarray(out, dtype=np.float32)

    def __call__(self, model, output_path: str | None = None, epoch: int = -1, steps: int = -1) -> dict:
        """Encode, evaluate and return ``{key: value}``: each metric, ``n_evaluated`` and
        ``n_skipped`` (and per group with ``groups=``), keys as ``names`` and ``name`` say."""
        similarity = getattr(model, "similarity_fn_name", None) or "cosine"
        distance = distance_for(similarity, "RetrievalEvaluator", "similarity_fn_name")
        queries = self.embed(model, self.queries, "query")
        corpus = self.embed(model, self.corpus, "document")
        ids = (self.query_ids, self.corpus_ids)
        self.result = evaluate_retrieval(
            queries,
            corpus,
            self.relevant_docs,
            query_ids=self.query_ids,
            corpus_ids=self.corpus_ids,
            metrics=self.metrics,
            distance=distance,
            ignore_same=ids if self.ignore_query_id else None,
            ties=self.ties,
            **self.evaluate_kwargs,
        )
        values = self.result.to_dict(self.prefix, names=self.names)
        if hasattr(model, "model_card_data"):
            self.store_metrics_in_model_card_data(model, values, epoch, steps)
        return values

    def get_config_dict(self) -> dict:
        """What the model card records about this evaluator."""
        config = {"metrics": self.metrics, "ties": self.ties or "index", "ignore_query_id": self.ignore_query_id}
        if self.truncate_dim is not None:
            config["truncate_dim"] = self.truncate_dim
        return config


def _check_texts(texts, argument: str) -> None:
    if not isinstance(texts, dict) or not texts:
        got = f"an empty {type(texts).__name__}" if hasattr(texts, "__len__") and not texts else type(texts).__name__
        raise ValueError(f"{argument} must be a non-empty dict of {{id: text}}; got {got}")


def _first_ndcg(metrics: list) -> str:
    return next((m for m in metrics if "ndcg" in m), metrics[0])
