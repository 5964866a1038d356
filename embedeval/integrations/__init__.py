"""Thin adapters between embedeval and the training frameworks people already use.

Each adapter is a module of its own, imported on demand, and needs its framework installed
(``pip install 'embedeval[integrations]'``); without it, importing the module raises an
ImportError that gives that command.

* :mod:`embedeval.integrations.lightning`: :class:`~embedeval.integrations.lightning.RetrievalMetrics`,
  a Lightning callback that evaluates the validation embeddings at the end of each epoch.
* :mod:`embedeval.integrations.transformers`:
  :func:`~embedeval.integrations.transformers.compute_metrics`, a ``compute_metrics`` function
  for the Hugging Face ``Trainer``, batch by batch with ``batch_eval_metrics=True`` too.
* :mod:`embedeval.integrations.sentence_transformers`:
  :class:`~embedeval.integrations.sentence_transformers.RetrievalEvaluator`, a sentence-transformers
  evaluator (queries, a corpus, judgements) scored exactly by embedeval.
* :mod:`embedeval.integrations.mteb`: :class:`~embedeval.integrations.mteb.ExactSearchIndex`, an
  exact search backend for MTEB's retrieval tasks.
"""

from __future__ import annotations

import importlib

INSTALL = "pip install 'embedeval[integrations]'"


def require(module: str, what: str):
    """Import ``module`` (a framework), or raise an ImportError naming ``what`` needs it and the
    exact command that installs it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ImportError(f"{what} needs {module}: {INSTALL}") from None


def host(values):
    """A tensor (any device) as a numpy array on the host; anything else as it is."""
    return values.detach().cpu().numpy() if hasattr(values, "detach") else values


# sentence-transformers' similarity_fn_name and MTEB's ScoringFunction values -> embedeval's distances
DISTANCES = {"cosine": "cosine", "dot": "inner_product", "euclidean": "euclidean"}


def distance_for(similarity, who: str, what: str) -> str:
    """embedeval's distance for a framework's similarity name, or ValueError saying ``who`` ranks
    by which ones and what the model's ``what`` (its attribute) holds."""
    key = similarity if similarity in DISTANCES else str(similarity)  # a str enum is its value
    if key not in DISTANCES:
        raise ValueError(f"{who} ranks by cosine, dot or euclidean similarity; the model's {what} is {similarity!r}")
    return DISTANCES[key]
