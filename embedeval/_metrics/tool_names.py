"""Other tools' metric names (BEIR, MTEB, ranx, scikit-learn, deep hashing, revisitop), accepted
as aliases of embedeval's names where each names one metric, and the listed names that are not.

The names are data: ``(their name, embedeval's name, the input form or None for both, tool)``,
``{k}`` standing for a cutoff and ``{r}`` for a Hamming radius (digits). Names are matched
ignoring case, as embedeval's own; results report embedeval's names. trec_eval's names are in
:mod:`.trec_names`, pytorch-metric-learning's in :mod:`.pml_names`.

A listed name that is already embedeval's (``NDCG@k``, ``Recall@k``, ``cmc@k``) needs no alias.
:data:`NOT_ACCEPTED` holds the listed names that do not name one embedeval metric, with why:
they spell an embedeval name that means another number, or they need a parameter they do not
carry. ``tests/metrics/test_tool_names.py`` checks every name :func:`embedeval.list_metrics`
lists against these two tables.
"""

from __future__ import annotations

import re

from .families import EMBEDDINGS, RANKINGS

TOOL_NAMES: list[tuple[str, str, str | None, str]] = [
    ("P@{k}", "precision@{k}", None, "BEIR"),
    ("R_cap@{k}", "capped_recall@{k}", None, "BEIR"),
    # MTEB's retrieval scores (pytrec_eval's, named measure_at_k); ranked lists only: recall_at_k
    # is trec_eval's recall, which embeddings' recall@k is not
    ("ndcg_at_{k}", "ndcg@{k}", RANKINGS, "MTEB"),
    ("map_at_{k}", "map@{k}", RANKINGS, "MTEB"),
    ("recall_at_{k}", "recall@{k}", RANKINGS, "MTEB"),
    ("precision_at_{k}", "precision@{k}", RANKINGS, "MTEB"),
    ("mrr_at_{k}", "mrr@{k}", RANKINGS, "MTEB"),
    ("ndcg_burges@{k}", "ndcg_exp@{k}", RANKINGS, "ranx"),
    ("dcg_burges@{k}", "dcg_exp@{k}", RANKINGS, "ranx"),
    ("mP@{k}", "revisited_mp@{k}", RANKINGS, "revisitop"),
    ("P@H<={r}", "precision_radius@{r}", EMBEDDINGS, "deep hashing"),
    ("R@H<={r}", "recall_radius@{r}", EMBEDDINGS, "deep hashing"),
    ("normalized_mutual_info_score", "nmi", EMBEDDINGS, "scikit-learn"),
    ("adjusted_mutual_info_score", "ami", EMBEDDINGS, "scikit-learn"),
]

# Listed names (as catalogue.ABOUT spells them) that are not accepted, and why.
NOT_ACCEPTED = {
    ("OML", "precision@k"): "embedeval's precision@k divides by k; OML's is capped_recall@k",
    ("OML", "map@k"): "embedeval's map@k divides by R; OML's is map_hits@k",
    ("sentence-transformers", "map@k"): "embedeval's map@k divides by R; sentence-transformers' is capped_map@k",
    ("deep hashing", "mAP@k"): "read ignoring case it is embedeval's map@k; deep hashing's is map_hits@k",
    ("revisitop", "mAP (compute_map)"): "read ignoring case mAP is embedeval's map; revisitop's is revisited_map",
    ("OML", "fnmr@fmr"): "needs the false match rate: fnmr@fmr=0.01",
    ("face verification", "TAR@FAR"): "needs the false accept rate: tar@far=0.001",
    ("OML", "pcf"): "needs the share of the variance: pcf@0.5",
}

_FIELDS = {"{k}": r"(?P<k>[0-9]+)", "{r}": r"(?P<r>[0-9]+)"}


def _pattern(name: str) -> re.Pattern:
    text = re.escape(name)
    for field, group in _FIELDS.items():
        text = text.replace(re.escape(field), group)
    return re.compile(text, re.IGNORECASE)


def _expander(canonical: str):
    return lambda match: [canonical.format(**match.groupdict())]


ALIASES = [(_pattern(name), _expander(canonical), form) for name, canonical, form, _ in TOOL_NAMES]


def accepted_names(family: str) -> list[str]:
    """The names of :data:`TOOL_NAMES` that stand for ``family`` (``{k}`` written ``k``)."""
    return [
        name.replace("{k}", "k").replace("{r}", "r")
        for name, canonical, _, _ in TOOL_NAMES
        if canonical.partition("@")[0] == family
    ]


def near_names(form: str, cut: str) -> dict[str, str]:
    """``{their name (lower case): "their name (tool's name for embedeval's)"}`` of the names
    accepted for ``form``, with ``cut`` for ``{k}`` and ``{r}``, for "did you mean"."""
    out = {}
    for name, canonical, alias_form, tool in TOOL_NAMES:
        if alias_form in (None, form):
            theirs, ours = (text.replace("{k}", cut).replace("{r}", cut) for text in (name, canonical))
            out[theirs.lower()] = f"{theirs!r} ({tool}'s name for {ours})"
    return out
