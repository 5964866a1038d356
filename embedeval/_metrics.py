"""Metric names (``"precision@5"``, ``"map@r"``, ``"mrr"``), their parsing and definitions.

A metric is a *family* and an optional cutoff ``k``. The registry says, per family, whether a
cutoff is required, allowed or forbidden, which input forms accept it, and its definition; the
definition text is what results carry and what the README's conventions table shows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

EMBEDDINGS = "embeddings"
RANKINGS = "rankings"


@dataclass(frozen=True)
class _Family:
    cutoff: str  # "required", "optional" or "never"
    definition: str
    forms: tuple[str, ...] = (EMBEDDINGS, RANKINGS)


# R is the number of relevant items of the query in the whole reference set / collection; for
# embeddings with class labels, the references sharing the query's label, the query excluded.
_FAMILIES: dict[str, _Family] = {
    "precision": _Family(
        "required",
        "P@k = (relevant items among the top k) / k; divides by k even if fewer were ranked",
    ),
    "recall": _Family(
        "required",
        "metric-learning Recall@K = 1 if any of the top k shares the query's label, else 0 (identical to hit_rate@k)",
        (EMBEDDINGS,),
    ),
    "hit_rate": _Family("required", "hit_rate@k = 1 if any of the top k is relevant, else 0"),
    "r_precision": _Family("never", "R-precision = (relevant items among the top R) / R"),
    "map@r": _Family(
        "never",
        "MAP@R = (1/R) * sum_{i<=R} P(i) * rel(i), P(i) = precision at rank i (Musgrave et al. 2020)",
    ),
    "map": _Family(
        "optional",
        "AP = (1/R) * sum_{i<=k} P(i) * rel(i) over the whole ranking, or truncated at k for map@k "
        "(trec_eval's denominator: all R relevant items)",
    ),
    "mrr": _Family(
        "optional",
        "RR = 1 / rank of the first relevant item over the whole ranking, or 0 if none is in the top k for mrr@k",
    ),
}

_NAME = re.compile(r"^(?P<family>[a-z_]+)(?:@(?P<k>[^@]*))?$")


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: a family and a cutoff."""

    family: str
    k: int | None = None

    @property
    def name(self) -> str:
        if self.family == "map@r":
            return "map@r"
        return self.family if self.k is None else f"{self.family}@{self.k}"

    @property
    def definition(self) -> str:
        return _FAMILIES[self.family].definition


def valid_names(form: str) -> list[str]:
    names = []
    for family, spec in _FAMILIES.items():
        if form not in spec.forms:
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
        if spec is None or form not in spec.forms:
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
        metric = Metric(family, k)
        parsed.setdefault(metric.name, metric)
    return list(parsed.values())
