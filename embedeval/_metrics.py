"""The metric registry: what each metric is, where it applies, its kernel and what it needs.

A metric name is a *family* and an optional *cutoff*: ``precision@5``, ``map``, ``map@r``,
``ndcg@10``. A cutoff is an int k >= 1 (the top k of the ranking) or the letter ``r`` (the
query's own R, the number of its relevant items); the Hamming radius families take a radius
instead (``precision_radius@2``: an int >= 0, the references within that Hamming distance,
counted by the search). Each family is declared once in :data:`FAMILIES` with

* the cutoffs it accepts (none, k, r);
* what it needs from a ranking that has no cutoff: R items (``r_precision``), the first relevant
  item (``mrr``) or every relevant item (``map``, ``ndcg``, ...);
* per input form, its definition and its kernel (a function of :mod:`embedeval._kernels`).

The input form decides the meaning where the field disagrees: ``recall@k`` is the metric-learning
Recall@K for embeddings with class labels and trec_eval's recall for ranked lists and score
matrices. Everything else reads these declarations: the parser, the kernels' dispatch
(:func:`per_query_values`), the search depth (:class:`Needs`), the approximate-index check and the
README's conventions table.

Set-level metrics (``nmi``, ``ami``, ``fnmr@fmr=x``, ``tar@far=x``, ``eer``, ``pair_auroc``,
``pcf@r``; embeddings only) are one number for the whole set, with no kernel over hits: they are
declared in :data:`embedeval._set_families.SET_FAMILIES` (what they need, their parameter) and
parsed here into the same :class:`Metric`, whose ``per_query`` is False.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import _kernels as K
from ._set_families import SET_FAMILIES, SetFamily, level_text, parse_level, set_valid_names

EMBEDDINGS = "embeddings"
RANKINGS = "rankings"
BOTH = (EMBEDDINGS, RANKINGS)

# Default metric lists, each written once: the Python API's defaults per input form, and the
# Musgrave et al. set that the reality check reports and the `evaluate` command prints.
DEFAULT_EMBEDDING_METRICS = ("precision@1", "r_precision", "map@r")
DEFAULT_RANKING_METRICS = ("precision@10", "recall@10", "mrr@10", "ndcg@10", "map")
MUSGRAVE_METRICS = ("precision@1", "recall@1", "recall@10", "r_precision", "map@r")

# What a metric without a cutoff needs from the ranking.
R_ITEMS, FIRST_HIT, ALL_HITS = "R items", "the first relevant item", "every relevant item"


@dataclass(frozen=True)
class Form:
    """A family's meaning in one input form."""

    definition: str
    kernel: Callable  # kernel(hits, cutoff) -> array of shape (n_queries,)


@dataclass(frozen=True)
class Family:
    """One metric family: accepted cutoffs, what it needs uncut, and its meaning per input form."""

    cutoffs: frozenset  # of "none", "k", "r"
    uncut: str | None  # R_ITEMS, FIRST_HIT or ALL_HITS when "none" is accepted
    forms: dict[str, Form]
    r_definition: str | None = None  # the definition of family@r, where "r" is accepted
    graded: bool = False  # reads grades, not only the binary relevance
    # "@n" is a Hamming radius (cutoffs == {"radius"}): the kernel's cutoff is, per query, the
    # number of references within that distance (distance="hamming" only)
    radius: bool = False


def _forms(definition: str, kernel: Callable, forms=BOTH) -> dict[str, Form]:
    return dict.fromkeys(forms, Form(definition, kernel))


_K, _OPT, _NONE = frozenset({"k"}), frozenset({"none", "k"}), frozenset({"none"})
_RADIUS = frozenset({"radius"})
_DCG = "sum_{i<=k} g(rel_i) / log2(i + 1)"

# R is the number of relevant items of the query: for embeddings, the references sharing the
# query's label (the query excluded); for rankings, the judged items with grade >= threshold.
FAMILIES: dict[str, Family] = {
    "precision": Family(
        _K,
        None,
        _forms("P@k = (relevant items among the top k) / k; divides by k even if fewer were ranked", K.precision),
    ),
    "recall": Family(
        _K,
        None,
        {
            EMBEDDINGS: Form(
                "metric-learning Recall@K = 1 if any of the top k shares the query's label, else 0 "
                "(identical to hit_rate@k)",
                K.hit_rate,
            ),
            RANKINGS: Form("trec_eval recall@k = (relevant items among the top k) / R", K.recall),
        },
    ),
    "capped_recall": Family(
        _K,
        None,
        _forms(
            "capped recall@k = (relevant items among the top k) / min(k, R) (BEIR; OML's precision@k)",
            K.capped_recall,
        ),
    ),
    "hit_rate": Family(_K, None, _forms("hit_rate@k = 1 if any of the top k is relevant, else 0", K.hit_rate)),
    "f1": Family(
        _K,
        None,
        _forms("F1@k = 2 P@k recall@k / (P@k + recall@k), 0 when both are 0 (trec recall)", K.f1, (RANKINGS,)),
    ),
    "r_precision": Family(_NONE, R_ITEMS, _forms("R-precision = (relevant items among the top R) / R", K.r_precision)),
    "map": Family(
        frozenset({"none", "k", "r"}),
        ALL_HITS,
        _forms(
            "AP = (1/R) * sum_{i<=k} P(i) * rel(i) over the whole ranking, or its top k for map@k "
            "(trec_eval's denominator: all R relevant items)",
            K.average_precision,
        ),
        r_definition="MAP@R = (1/R) * sum_{i<=R} P(i) * rel(i), P(i) = precision at rank i (Musgrave et al. 2020)",
    ),
    "map_hits": Family(
        _K,
        None,
        _forms(
            "AP over hits@k = sum_{i<=k} P(i) * rel(i) / (relevant items among the top k), 0 without a hit "
            "(OML's map@k, the tutorial's convention and deep hashing's mAP@k as in DPSH's code; not trec_eval's)",
            K.average_precision_over_hits,
        ),
    ),
    "mrr": Family(
        _OPT,
        FIRST_HIT,
        _forms(
            "RR = 1 / rank of the first relevant item in the whole ranking, or 0 if none is in the top k for mrr@k",
            K.reciprocal_rank,
        ),
    ),
    "ndcg": Family(
        _OPT,
        ALL_HITS,
        _forms(
            f"nDCG@k = DCG@k / ideal DCG@k, DCG@k = {_DCG}, linear gain g(rel) = rel (trec_eval); ideal from "
            "all judged items sorted by grade, cut at k",
            K.ndcg,
            (RANKINGS,),
        ),
        graded=True,
    ),
    "ndcg_exp": Family(
        _OPT,
        ALL_HITS,
        _forms(
            f"nDCG@k with exponential gain g(rel) = 2^rel - 1: DCG@k = {_DCG}; ideal from all judged items "
            "sorted by grade, cut at k",
            K.ndcg_exp,
            (RANKINGS,),
        ),
        graded=True,
    ),
    "dcg": Family(_OPT, ALL_HITS, _forms(f"DCG@k = {_DCG}, linear gain g(rel) = rel", K.dcg, (RANKINGS,)), graded=True),
    "dcg_exp": Family(
        _OPT,
        ALL_HITS,
        _forms(f"DCG@k = {_DCG}, exponential gain g(rel) = 2^rel - 1", K.dcg_exp, (RANKINGS,)),
        graded=True,
    ),
    "cg": Family(
        _OPT, ALL_HITS, _forms("CG@k = sum_{i<=k} rel_i (graded, no discount)", K.cg, (RANKINGS,)), graded=True
    ),
    # Protocol metrics: a community's own convention, under its own name.
    "cmc": Family(
        _K,
        None,
        _forms(
            "CMC rank-k (re-identification): 1 if any of the top k (junk removed) is a correct match, else 0; "
            "identical to hit_rate@k",
            K.hit_rate,
        ),
    ),
    "revisited_map": Family(
        _NONE,
        ALL_HITS,
        _forms(
            "revisited Oxford/Paris AP (Radenovic et al. 2018): (1/R) * sum_j (P(r_j - 1) + P(r_j)) / 2 over the "
            "j-th relevant item at rank r_j of the whole ranking, P(r) = relevant items among the top r / r, "
            "P(0) = 1 (trapezoids under the precision-recall curve)",
            K.trapezoid_average_precision,
            (RANKINGS,),
        ),
    ),
    "precision_radius": Family(
        _RADIUS,
        None,
        _forms(
            "precision within Hamming radius r (deep hashing): relevant references at Hamming distance <= r / all "
            "references at distance <= r, 0 when none is that near; distance='hamming' only",
            K.precision_within,
            (EMBEDDINGS,),
        ),
        radius=True,
    ),
    "recall_radius": Family(
        _RADIUS,
        None,
        _forms(
            "recall within Hamming radius r: relevant references at Hamming distance <= r / R; distance='hamming' only",
            K.recall,
            (EMBEDDINGS,),
        ),
        radius=True,
    ),
    "revisited_mp": Family(
        _K,
        None,
        _forms(
            "revisited Oxford/Paris P@k (the mean is mP@k): relevant items among the top k_q / k_q, "
            "k_q = min(k, rank of the query's last relevant item)",
            K.revisited_precision,
            (RANKINGS,),
        ),
    ),
}


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: a family, its cutoff (an int ``k``, or ``at_r``: the query's R, or
    neither) and the input form that gives it its meaning."""

    family: str
    k: int | None = None
    form: str = EMBEDDINGS
    at_r: bool = False
    level: float | None = None  # a set-level metric's parameter: 0.001 in fnmr@fmr=0.001

    @property
    def per_query(self) -> bool:
        """Whether the metric has a value per query (a kernel over hits); a set-level metric
        (:data:`~embedeval._set_families.SET_FAMILIES`) is one number for the whole set."""
        return self.family in FAMILIES

    @property
    def name(self) -> str:
        """The canonical name, under which results report the metric."""
        if not self.per_query:
            return SET_FAMILIES[self.family].name(self.family, self.level)
        if self.at_r:
            return f"{self.family}@r"
        return self.family if self.k is None else f"{self.family}@{self.k}"

    @property
    def spec(self) -> Family | SetFamily:
        return FAMILIES[self.family] if self.per_query else SET_FAMILIES[self.family]

    @property
    def definition(self) -> str:
        if not self.per_query:
            return self.spec.definition.format(x=None if self.level is None else level_text(self.level))
        return self.spec.r_definition if self.at_r else self.spec.forms[self.form].definition

    @property
    def uncut(self) -> str | None:
        """What the metric needs from the whole ranking: None when it has a cutoff (or no ranking)."""
        return None if self.k is not None or self.at_r or not self.per_query else self.spec.uncut

    @property
    def needs_r(self) -> bool:
        """Whether the ranking must be at least R deep."""
        return self.at_r or self.uncut == R_ITEMS

    @property
    def radius(self) -> int | None:
        """The Hamming radius of a radius family (``precision_radius@2``: 2), else None."""
        return self.k if self.spec.radius else None

    def cutoff(self, n_relevant: np.ndarray, within: np.ndarray | None = None):
        """The kernel's cutoff: the int k, the per-query R, or None for the whole ranking; for a
        radius family, the per-query count of references within the radius, read from
        ``within`` (shape (n_queries, d + 1): column t counts the references at distance <= t)."""
        if self.spec.radius:
            if within is None:
                raise ValueError(
                    f"{self.name!r} needs Hamming distances: evaluate binary codes with distance='hamming'"
                )
            return within[:, min(self.k, within.shape[1] - 1)]
        return n_relevant if self.at_r else self.k

    def values(self, hits: K.Hits, within: np.ndarray | None = None) -> np.ndarray:
        """Per-query values, array of shape (n_queries,) (``within``: see :meth:`cutoff`)."""
        return self.spec.forms[self.form].kernel(hits, self.cutoff(hits.n_relevant, within))


def per_query_values(metrics, hits: K.Hits, within: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each metric's per-query values: the one place every input form meets the kernels."""
    return {m.name: m.values(hits, within) for m in metrics}


@dataclass(frozen=True)
class Needs:
    """What a list of metrics needs from each query's ranking, read off their declarations."""

    k: int  # the largest int cutoff (0 if none)
    r: bool  # rank at least R deep
    first_hit: bool  # rank until the first relevant item is found
    all_hits: bool  # rank until every relevant item is found
    radius: int = -1  # the largest Hamming radius (-1 if none): rank every reference within it

    @classmethod
    def of(cls, metrics) -> Needs:
        return cls(
            max([m.k for m in metrics if m.k is not None and not m.spec.radius], default=0),
            any(m.needs_r for m in metrics),
            any(m.uncut == FIRST_HIT for m in metrics),
            any(m.uncut == ALL_HITS for m in metrics),
            max([m.radius for m in metrics if m.spec.radius], default=-1),
        )

    @property
    def whole_ranking(self) -> bool:
        """Whether some metric may need the ranking to its very end."""
        return self.first_hit or self.all_hits

    def depth(self, n_relevant: np.ndarray, n_rankable: int) -> np.ndarray:
        """How deep each query must be ranked, before the whole-ranking conditions."""
        depth = np.full(n_relevant.shape, max(self.k, 1), dtype=np.int64)
        if self.r:
            depth = np.maximum(depth, n_relevant)
        return np.minimum(depth, n_rankable)


def valid_names(form: str) -> list[str]:
    """The name patterns a form accepts, in registry order (set-level metrics last, embeddings only)."""
    names = []
    for family, spec in FAMILIES.items():
        if form in spec.forms:
            suffixes = (("none", ""), ("k", "@k"), ("r", "@r"), ("radius", "@radius"))
            names += [f"{family}{suffix}" for cut, suffix in suffixes if cut in spec.cutoffs]
    return names + (set_valid_names() if form == EMBEDDINGS else [])


# The largest cutoff k: a billion ranked items per query is beyond any ranking held in memory,
# and the bound keeps k far inside int64 (ranking depths) and float64's exact integers (P@k's k).
MAX_K = 10**9

_NAME = re.compile(r"^(?P<family>[a-z_0-9]+?)(?:@(?P<cut>[^@]*))?$")

# Other tools' metric names, each mapped to embedeval names: (pattern on the stripped name,
# function of the match giving one or more canonical names, form or None for every form). A
# name is looked up here first; results always report the canonical names.
ALIASES: list[tuple[re.Pattern, Callable[[re.Match], list[str]], str | None]] = []


def expand_aliases(raw: str, form: str) -> list[str]:
    """The embedeval names that ``raw`` stands for: itself unless another tool's name matches."""
    text = raw.strip()
    for pattern, names, alias_form in ALIASES:
        match = pattern.fullmatch(text)
        if match and alias_form in (None, form):
            return names(match)
    return [raw]


def _radius(raw: str, cut: str) -> int:
    """The Hamming radius of a radius family's name: an int >= 0."""
    if not (cut.isascii() and cut.isdigit()):
        raise ValueError(f"the Hamming radius in metric {raw!r} must be an int >= 0; got {cut!r}")
    if int(cut) > MAX_K:
        raise ValueError(f"the Hamming radius in metric {raw!r} must be at most {MAX_K:_}; got {cut.lstrip('0')}")
    return int(cut)


def parse_metric(raw, form: str) -> Metric:
    """Parse one metric name (case and surrounding spaces ignored); ValueError if unknown."""
    if not isinstance(raw, str):
        raise TypeError(f"'metrics' entries must be strings; got {raw!r}")
    match = _NAME.match(raw.strip().lower())
    family, cut = (match["family"], match["cut"]) if match else (None, None)
    if family in SET_FAMILIES and form == EMBEDDINGS:
        return Metric(family, None, form, level=parse_level(raw, family, cut))
    spec = FAMILIES.get(family)
    if spec is None or form not in spec.forms:
        raise ValueError(f"unknown metric {raw!r} for {form}; valid metrics are: {', '.join(valid_names(form))}")
    if cut is None:
        if "none" not in spec.cutoffs:
            if spec.radius:
                raise ValueError(f"metric {raw!r} needs a Hamming radius, as in '{family}@2'")
            raise ValueError(f"metric {raw!r} needs a cutoff, as in '{family}@10'")
        return Metric(family, None, form)
    if spec.cutoffs == _NONE:
        raise ValueError(f"metric {raw!r} takes no cutoff; write '{family}'")
    if spec.radius:
        return Metric(family, _radius(raw, cut), form)
    if cut == "r" and "r" in spec.cutoffs:
        return Metric(family, None, form, at_r=True)
    if not (cut.isascii() and cut.isdigit()) or int(cut) < 1:
        raise ValueError(f"'k' in metric {raw!r} must be an int >= 1; got {cut!r}")
    if int(cut) > MAX_K:
        raise ValueError(f"'k' in metric {raw!r} must be at most {MAX_K:_} (10^9); got {cut.lstrip('0')}")
    return Metric(family, int(cut), form)


def parse_metrics(metrics, form: str) -> list[Metric]:
    """Parse metric names, drop repeats (keeping the first), and reject unknown ones.

    Parameters
    ----------
    metrics : str or sequence of str
        Names such as ``"precision@1"``, ``"recall@10"``, ``"r_precision"``, ``"map@r"``.
        Case and surrounding spaces are ignored; ``"recall@010"`` is ``"recall@10"``.
    form : {"embeddings", "rankings"}
        The input form, which decides what ``recall@k`` means and which metrics apply.

    Returns
    -------
    list of Metric
        In the given order, one per canonical name.
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
    parsed: dict[str, Metric] = {}
    for raw in items:
        if not isinstance(raw, str):
            raise TypeError(f"'metrics' entries must be strings; got {raw!r}")
        for name in expand_aliases(raw, form):
            metric = parse_metric(name, form)
            parsed.setdefault(metric.name, metric)
    return list(parsed.values())


from . import _pml_names, _trec_names  # noqa: E402, F401  (register PML's and trec_eval's names in ALIASES)
