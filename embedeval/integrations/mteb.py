"""An exact search backend for MTEB's retrieval tasks.

MTEB (2.x) lets a search wrapper hand the corpus to an index backend
(``IndexEncoderSearchProtocol``: ``add_documents``, ``search``, ``clear``); its own is a faiss
flat index. :class:`ExactSearchIndex` answers the same calls with embedeval's exact search::

    import mteb
    from mteb.models.search_wrappers import SearchEncoderWrapper
    from embedeval.integrations.mteb import ExactSearchIndex

    encoder = mteb.get_model("sentence-transformers/all-MiniLM-L6-v2")
    model = SearchEncoderWrapper(encoder, index_backend=ExactSearchIndex(encoder))
    mteb.evaluate(model, tasks)

What it changes against faiss's flat index:

* **exact top k**: the k nearest documents of a float64 full sort, where faiss's float32
  scores can swap two documents whose similarities differ in the last bits (and so change which
  document is the k-th);
* **exact scores**: each returned score is the float64 similarity of the float32 embeddings
  (cosine: of the L2-normalised rows; dot; euclidean as minus the distance, as faiss's backend
  reports it), so MTEB's own sort sees no float32 ties that are not real ties;
* **ties by corpus row**: documents at exactly equal similarity are returned lower corpus row
  first, whatever the block size or thread count;
* **bounded memory**: queries are searched in blocks, never a queries x corpus matrix.

MTEB then evaluates the returned lists with its own code (pytrec_eval), whose conventions are its
own: equal scores are ordered by document id there.
"""

from __future__ import annotations

import numpy as np

from .._inputs.arrays import check_directions, prepare
from .._search import FlatSearcher
from . import DISTANCES, distance_for, host

_BLOCK = 1024  # queries per search block


def _as_array(embeddings, argument: str) -> np.ndarray:
    out = np.asarray(host(embeddings), dtype=np.float32)
    if out.ndim != 2 or not np.isfinite(out).all():
        raise ValueError(f"'{argument}' must be a 2-D array of finite numbers (n, d); got shape {out.shape}")
    return np.ascontiguousarray(out)


def _distance_of(model) -> str:
    meta = getattr(model, "mteb_model_meta", None)
    name = getattr(getattr(meta, "similarity_fn_name", None), "value", getattr(meta, "similarity_fn_name", None))
    return "cosine" if name is None else distance_for(name, "ExactSearchIndex", "similarity")


class ExactSearchIndex:
    """MTEB's ``IndexEncoderSearchProtocol``, answered by embedeval's exact search.

    Parameters
    ----------
    model : MTEB encoder, optional
        Its ``mteb_model_meta.similarity_fn_name`` chooses the similarity (cosine, dot or
        euclidean), as MTEB's faiss backend reads it. Default cosine.
    distance : {"cosine", "inner_product", "euclidean"}, optional
        The similarity, given directly (overrides ``model``).
    block_size : int
        Queries searched at once.
    """

    def __init__(self, model=None, *, distance: str | None = None, block_size: int = _BLOCK):
        if distance is not None and distance not in DISTANCES.values():
            raise ValueError(f"'distance' must be one of {sorted(DISTANCES.values())}; got {distance!r}")
        if not isinstance(block_size, int) or block_size < 1:
            raise ValueError(f"'block_size' must be an int >= 1; got {block_size!r}")
        self.distance = distance or _distance_of(model)
        self.block_size = block_size
        self.clear()

    def clear(self) -> None:
        """Forget every document (MTEB calls it after each split's search)."""
        self.idxs: list[str] = []
        self._parts: list[np.ndarray] = []
        self._corpus: np.ndarray | None = None
        self._searcher: FlatSearcher | None = None

    def add_documents(self, embeddings, idxs: list[str]) -> None:
        """Add documents: ``embeddings`` of shape (n, d) and their ids, in corpus order."""
        rows = _as_array(embeddings, "embeddings")
        if len(idxs) != rows.shape[0]:
            raise ValueError(f"'idxs' must hold one id per embedding ({rows.shape[0]}); got {len(idxs)}")
        if self._parts and rows.shape[1] != self._parts[0].shape[1]:
            raise ValueError(f"'embeddings' must keep the dimension {self._parts[0].shape[1]}; got {rows.shape[1]}")
        if self.distance == "cosine":
            check_directions(rows, "embeddings")
        self._parts.append(rows)
        self.idxs.extend(idxs)
        self._corpus, self._searcher = None, None

    def _prepared(self) -> tuple[np.ndarray, FlatSearcher]:
        if not self._parts:
            raise ValueError("no documents: call add_documents() before search()")
        if self._searcher is None:
            corpus = np.concatenate(self._parts) if len(self._parts) > 1 else self._parts[0]
            self._corpus = prepare(corpus, self.distance)
            self._searcher = FlatSearcher(corpus, self.distance)
        return self._corpus, self._searcher

    def _scores(self, queries: np.ndarray, rows: np.ndarray, corpus: np.ndarray) -> np.ndarray:
        """float64 similarities of each query with the corpus rows ``rows`` (b, m): higher is nearer."""
        q = queries.astype(np.float64)[:, None, :]
        c = corpus[rows].astype(np.float64)
        if self.distance == "euclidean":
            return -np.sqrt(np.einsum("bmd,bmd->bm", c - q, c - q))
        return np.einsum("bmd,bmd->bm", c, np.broadcast_to(q, c.shape))

    def search(self, embeddings, top_k: int, similarity_fn=None, top_ranked=None, query_idx_to_id=None):
        """Each query's ``top_k`` nearest documents, nearest first, ties by lower corpus row.

        Parameters
        ----------
        embeddings : array-like of shape (n_queries, d)
        top_k : int
        similarity_fn : callable, optional
            Ignored: the similarity is the one chosen at construction (MTEB passes the model's).
        top_ranked : dict of {query id: list of document ids}, optional
            Reranking: each query is ranked among its own candidates only.
        query_idx_to_id : dict of {int: query id}, optional
            Needed with ``top_ranked``.

        Returns
        -------
        (list of list of float, list of list of int)
            Per query, the scores (float64 similarities; minus the distance for euclidean) and
            the documents' positions: in the added corpus, or with ``top_ranked`` in the
            query's candidate list.
        """
        if not isinstance(top_k, int | np.integer) or top_k < 1:
            raise ValueError(f"'top_k' must be an int >= 1; got {top_k!r}")
        queries = _as_array(embeddings, "embeddings")
        corpus, searcher = self._prepared()
        if queries.shape[1] != corpus.shape[1]:
            raise ValueError(
                f"'embeddings' must have the documents' dimension {corpus.shape[1]}; got {queries.shape[1]}"
            )
        if self.distance == "cosine":
            check_directions(queries, "embeddings")
        prepared = prepare(queries, self.distance)
        if top_ranked is not None:
            return self._rerank(prepared, top_k, corpus, top_ranked, query_idx_to_id)
        k = min(int(top_k), corpus.shape[0])
        scores, indices = [], []
        for start in range(0, prepared.shape[0], self.block_size):
            block = np.ascontiguousarray(prepared[start : start + self.block_size])
            rows = searcher.search(block, k)
            scores.extend(self._scores(block, rows, corpus).tolist())
            indices.extend(rows.tolist())
        return scores, indices

    def _rerank(self, queries, top_k, corpus, top_ranked, query_idx_to_id):
        if query_idx_to_id is None:
            raise ValueError("'query_idx_to_id' must be given with 'top_ranked' (reranking)")
        position = {doc: i for i, doc in enumerate(self.idxs)}
        scores, indices = [], []
        for i in range(queries.shape[0]):
            candidates = list(top_ranked.get(query_idx_to_id[i]) or [])
            unknown = [doc for doc in candidates if doc not in position]
            if unknown:
                query = query_idx_to_id[i]
                raise ValueError(f"'top_ranked' of query {query!r} names documents not added: {unknown[:3]}")
            if not candidates:
                scores.append([])
                indices.append([])
                continue
            rows = np.array([position[doc] for doc in candidates], dtype=np.int64)
            s = self._scores(queries[i : i + 1], rows[None, :], corpus)[0]
            order = np.lexsort((rows, -s))[:top_k]  # nearest first, ties by lower corpus row
            scores.append(s[order].tolist())
            indices.append(order.tolist())
        return scores, indices
