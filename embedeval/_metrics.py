"""Metric names (``"precision@5"``, ``"map@r"``, ``"ndcg@10"``), their parsing and definitions.

A metric is a *family* and an optional cutoff ``k``. The registry says, per family, whether a
cutoff is required, allowed or forbidden, which input forms accept it, and its definition in each
form: ``recall@k`` is the metric-learning Recall@K for embeddings with class labels and
trec_eval's recall for ranked lists and score matrices. The definition text is what results
carry and what the README's conventions table shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EMBEDDINGS = "embeddings"
RANKINGS = "rankings"
BOTH = (EMBEDDINGS, RANKINGS)

# Default metric lists, each written once: the Python API's defaults per input form, and the
# Musgrave et al. set that the reality check reports and the `evaluate` command prints.
DEFAULT_EMBEDDING_METRICS = ("precision@1", "r_precision", "map@r")
DEFAULT_RANKING_METRICS = ("precision@10", "recall@10", "mrr@10", "ndcg@10", "map")
MUSGRAVE_METRICS = ("precision@1", "recall@1", "recall@10", "r_precision", "map@r")


@dataclass(frozen=True)
class _Family:
    cutoff: str  # "required", "optional" or "never"
    definitions: dict[str, str]  # form -> definition; the forms that accept the family


def _same(text: str, forms=BOTH) -> dict[str, str]:
    return dict.fromkeys(forms, text)


# R is the number of relevant items of the query: for embeddings, the references sharing the
# query's label (the query excluded); for rankings, the judged items with grade >= threshold.
_DCG = "sum_{i<=k} g(rel_i) / log2(i + 1)"
_FAMILIES: dict[str, _Family] = {
    "precision": _Family(
        "required", _same("P@k = (relevant items among the top k) / k; divides by k even if fewer were ranked")
    ),
    "recall": _Family(
        "required",
        {
            EMBEDDINGS: "metric-learning Recall@K = 1 if any of the top k shares the query's label, else 0 "
            "(identical to hit_rate@k)",
            RANKINGS: "trec_eval recall@k = (relevant items among the top k) / R",
        },
    ),
    "capped_recall": _Family(
        "required", _same("capped recall@k = (relevant items among the top k) / min(k, R) (BEIR)", (RANKINGS,))
    ),
    "hit_rate": _Family("required", _same("hit_rate@k = 1 if any of the top k is relevant, else 0")),
    "f1": _Family(
        "required", _same("F1@k = 2 P@k recall@k / (P@k + recall@k), 0 when both are 0 (trec recall)", (RANKINGS,))
    ),
    "r_precision": _Family("never", _same("R-precision = (relevant items among the top R) / R")),
    "map@r": _Family(
        "never",
        _same("MAP@R = (1/R) * sum_{i<=R} P(i) * rel(i), P(i) = precision at rank i (Musgrave et al. 2020)"),
    ),
    "map": _Family(
        "optional",
        _same(
            "AP = (1/R) * sum_{i<=k} P(i) * rel(i) over the whole ranking, or its top k for map@k "
            "(trec_eval's denominator: all R relevant items)"
        ),
    ),
    "map_hits": _Family(
        "required",
        _same(
            "AP over hits@k = sum_{i<=k} P(i) * rel(i) / (relevant items among the top k), 0 without a hit "
            "(the tutorial's convention, not trec_eval's)",
            (RANKINGS,),
        ),
    ),
    "mrr": _Family(
        "optional",
        _same("RR = 1 / rank of the first relevant item in the whole ranking, or 0 if none is in the top k for mrr@k"),
    ),
    "ndcg": _Family(
        "optional",
        _same(
            f"nDCG@k = DCG@k / ideal DCG@k, DCG@k = {_DCG}, linear gain g(rel) = rel (trec_eval); ideal from "
            "all judged items sorted by grade, cut at k",
            (RANKINGS,),
        ),
    ),
    "ndcg_exp": _Family(
        "optional",
        _same(
            f"nDCG@k with exponential gain g(rel) = 2^rel - 1: DCG@k = {_DCG}; ideal from all judged items "
            "sorted by grade, cut at k",
            (RANKINGS,),
        ),
    ),
    "dcg": _Family("optional", _same(f"DCG@k = {_DCG}, linear gain g(rel) = rel", (RANKINGS,))),
    "dcg_exp": _Family("optional", _same(f"DCG@k = {_DCG}, exponential gain g(rel) = 2^rel - 1", (RANKINGS,))),
    "cg": _Family("optional", _same("CG@k = sum_{i<=k} rel_i (graded, no discount)", (RANKINGS,))),
}

_NAME = re.compile(r"^(?P<family>[a-z_0-9]+?)(?:@(?P<k>[^@]*))?$")


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: a family, a cutoff and the input form that gives it its meaning."""

    family: str
    k: int | None = None
    form: str = EMBEDDINGS

    @property
    def name(self) -> str:
        if self.family == "map@r":
            return "map@r"
        return self.family if self.k is None else f"{self.family}@{self.k}"

    @property
    def definition(self) -> str:
        return _FAMILIES[self.family].definitions[self.form]


def valid_names(form: str) -> list[str]:
    names = []
    for family, spec in _FAMILIES.items():
        if form not in spec.definitions:
            continue
        if family == "map@r":
            names.append("map@r")
        elif spec.cutoff == "required":
            names.append(f"{family}@k")
        elif spec.cutoff == "optional":
            names += [family, f"{family}@k"]
        else:
            names.append(family)
    return names


def parse_metrics(metrics, form: str) -> list[Metric]:
    """Parse metric names, drop repeats (keeping the first), and reject unknown ones.

    Parameters
    ----------
    metrics : str or sequence of str
        Names such as ``"precision@1"``, ``"recall@10"``, ``"r_precision"``, ``"map@r"``.
        Case and surrounding spaces are ignored.
    form : {"embeddings", "rankings"}
        The input form, which decides what ``recall@k`` means and which metrics apply.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    try:
        items = list(metrics)
    except TypeError:
        raise TypeError(
            f"'metrics' must be a metric name or a sequence of names; got {type(metrics).__name__}"
        ) from None
    if not items:
        raise ValueError("'metrics' must name at least one metric; got an empty sequence")
    valid = ", ".join(valid_names(form))
    parsed: dict[str, Metric] = {}
    for raw in items:
        if not isinstance(raw, str):
            raise TypeError(f"'metrics' entries must be strings; got {raw!r}")
        text = raw.strip().lower()
        match = _NAME.match(text)
        family = match["family"] if match else None
        k_text = match["k"] if match else None
        if text == "map@r":
            family, k_text = "map@r", None
        spec = _FAMILIES.get(family)
        if spec is None or form not in spec.definitions:
            raise ValueError(f"unknown metric {raw!r} for {form}; valid metrics are: {valid}")
        if k_text is None and spec.cutoff == "required":
            raise ValueError(f"metric {raw!r} needs a cutoff, as in '{family}@10'")
        if k_text is not None and spec.cutoff == "never":
            raise ValueError(f"metric {raw!r} takes no cutoff; write '{family}'")
        k = None
        if k_text is not None:
            k = int(k_text) if k_text.isdigit() else None
            if k is None or k < 1:
                raise ValueError(f"'k' in metric {raw!r} must be an int >= 1; got {k_text!r}")
        metric = Metric(family, k, form)
        parsed.setdefault(metric.name, metric)
    return list(parsed.values())
