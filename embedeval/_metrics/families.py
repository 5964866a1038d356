"""The metric registry's declarations: what each family is, where it applies, its kernel, what it needs.

A metric name is a *family* and an optional *cutoff*: ``precision@5``, ``map``, ``map@r``,
``ndcg@10``. A cutoff is an int k >= 1 (the top k of the ranking) or the letter ``r`` (the
query's own R, the number of its relevant items); the Hamming radius families take a radius
instead (``precision_radius@2``: an int >= 0, the references within that Hamming distance,
counted by the search). Each family is declared once in :data:`FAMILIES` with

* the cutoffs it accepts (none, k, r);
* what it needs from a ranking that has no cutoff: R items (``r_precision``), the first relevant
  item (``mrr``) or every relevant item (``map``, ``ndcg``, ...);
* per input form, its definition and its kernel (a function of :mod:`embedeval._metrics.kernels`).

The input form decides the meaning where the field disagrees: ``recall@k`` is the metric-learning
Recall@K for embeddings with class labels and trec_eval's recall for ranked lists and score
matrices. Everything else reads these declarations: the parser and the kernels' dispatch
(:mod:`embedeval._metrics.registry`), the search depth (:class:`~embedeval._metrics.registry.Needs`), the
approximate-index check and the metric table (catalogue.py: list_metrics, the docs' metric reference).

Set-level metrics (``nmi``, ``ami``, ``fnmr@fmr=x``, ``tar@far=x``, ``eer``, ``pair_auroc``,
``pcf@r``; embeddings only) are one number for the whole set, with no kernel over hits: they are
declared in :data:`embedeval._metrics.set_families.SET_FAMILIES` (what they need, their parameter) and
parsed by :mod:`embedeval._metrics.registry` into the same
:class:`~embedeval._metrics.registry.Metric`, whose ``per_query`` is False.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import numpy as np

from . import expected as E
from . import kernels as K
from .trec_families import LISTING, ORDER_FREE, TIED, TREC_FAMILIES, TrecFamily
from .trec_groups import JG_FAMILIES, JUDGEMENT_GROUPS
from .trec_prefs import PREFERENCES, PREFS_FAMILIES

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
    # The tie-aware twin: expected(tied_hits, cutoff) -> the expected value over every order of
    # the tied items (McSherry & Najork), array of shape (n_queries,).
    expected: Callable


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
    # "@text" is a parameter (cutoffs holds "param"): param(text) -> the kernel's cutoff, or
    # ValueError naming the rule (iprec_at_recall@0.1, utility@2,-1,0,0, ndcg_gains@1=3,2=9)
    param: Callable | None = None
    # how per-query values are summarised: "mean", or "gm" (geometric mean of the values, each
    # floored at GM_FLOOR: trec_eval's gm_map and gm_bpref)
    summary: str = "mean"
    # the value does not depend on the order of the retrieved items (set_P): every tie rule gives
    # the ordinary value, so ties="expected" needs no twin
    order_free: bool = False
    # the kernel reads the whole listing (Hits.listing): the input form must build it
    listing: bool = False


def _forms(definition: str, kernel: Callable, expected: Callable, forms=BOTH) -> dict[str, Form]:
    return dict.fromkeys(forms, Form(definition, kernel, expected))


def _graded(definition: str, kernel: Callable, expected: Callable) -> Family:
    """A family of graded gains over ranked lists, with or without a cutoff (uncut: every hit)."""
    return Family(_OPT, ALL_HITS, _forms(definition, kernel, expected, (RANKINGS,)), graded=True)


_K, _OPT, _NONE = frozenset({"k"}), frozenset({"none", "k"}), frozenset({"none"})
_RADIUS = frozenset({"radius"})
_DCG = "sum_{i<=k} g(rel_i) / log2(i + 1)"

# R is the number of relevant items of the query: for embeddings, the references sharing the
# query's label (the query excluded); for rankings, the judged items with grade >= threshold.
FAMILIES: dict[str, Family] = {
    "precision": Family(
        _K,
        None,
        _forms(
            "P@k = (relevant items among the top k) / k; divides by k even if fewer were ranked",
            K.precision,
            E.precision_at,
        ),
    ),
    "recall": Family(
        _K,
        None,
        {
            EMBEDDINGS: Form(
                "metric-learning Recall@K = 1 if any of the top k shares the query's label, else 0 "
                "(identical to hit_rate@k)",
                K.hit_rate,
                E.hit_at,
            ),
            RANKINGS: Form("trec_eval recall@k = (relevant items among the top k) / R", K.recall, E.recall_at),
        },
    ),
    "capped_recall": Family(
        _K,
        None,
        _forms(
            "capped recall@k = (relevant items among the top k) / min(k, R) (BEIR's R_cap@k, not its Recall@k; "
            "OML's precision@k)",
            K.capped_recall,
            E.capped_recall_at,
        ),
    ),
    "hit_rate": Family(
        _K, None, _forms("hit_rate@k = 1 if any of the top k is relevant, else 0", K.hit_rate, E.hit_at)
    ),
    "f1": Family(
        _K,
        None,
        _forms("F1@k = 2 P@k recall@k / (P@k + recall@k), 0 when both are 0 (trec recall)", K.f1, E.f1_at, (RANKINGS,)),
    ),
    "r_precision": Family(
        _NONE, R_ITEMS, _forms("R-precision = (relevant items among the top R) / R", K.r_precision, E.r_precision)
    ),
    "map": Family(
        frozenset({"none", "k", "r"}),
        ALL_HITS,
        _forms(
            "AP = (1/R) * sum_{i<=k} P(i) * rel(i) over the whole ranking, or its top k for map@k "
            "(trec_eval's denominator: all R relevant items)",
            K.average_precision,
            E.average_precision,
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
            E.average_precision_over_hits,
        ),
    ),
    "capped_map": Family(
        _K,
        None,
        _forms(
            "capped AP@k = sum_{i<=k} P(i) * rel(i) / min(k, R) (sentence-transformers' MAP@k; not trec_eval's, "
            "which divides by R)",
            K.capped_average_precision,
            E.capped_average_precision,
        ),
    ),
    "mrr": Family(
        _OPT,
        FIRST_HIT,
        _forms(
            "RR = 1 / rank of the first relevant item in the whole ranking, or 0 if none is in the top k for mrr@k",
            K.reciprocal_rank,
            E.reciprocal_rank,
        ),
    ),
    "ndcg": _graded(
        f"nDCG@k = DCG@k / ideal DCG@k, DCG@k = {_DCG}, linear gain g(rel) = rel (trec_eval); ideal from "
        "all judged items sorted by grade, cut at k",
        K.ndcg,
        E.ndcg,
    ),
    "ndcg_exp": _graded(
        f"nDCG@k with exponential gain g(rel) = 2^rel - 1: DCG@k = {_DCG}; ideal from all judged items "
        "sorted by grade, cut at k",
        partial(K.ndcg, exponential=True),
        partial(E.ndcg, exponential=True),
    ),
    "dcg": _graded(f"DCG@k = {_DCG}, linear gain g(rel) = rel", K.dcg, E.dcg),
    "dcg_exp": _graded(
        f"DCG@k = {_DCG}, exponential gain g(rel) = 2^rel - 1",
        partial(K.dcg, exponential=True),
        partial(E.dcg, exponential=True),
    ),
    "cg": _graded("CG@k = sum_{i<=k} rel_i (graded, no discount)", K.cg, E.cg),
    # Protocol metrics: a community's own convention, under its own name.
    "cmc": Family(
        _K,
        None,
        _forms(
            "CMC rank-k (re-identification): 1 if any of the top k (junk removed) is a correct match, else 0; "
            "identical to hit_rate@k",
            K.hit_rate,
            E.hit_at,
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
            E.trapezoid_average_precision,
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
            E.precision_within,
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
            E.recall_at,
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
            E.revisited_precision,
            (RANKINGS,),
        ),
    ),
}


GM_FLOOR = 1e-5  # trec_eval's MIN_GEO_MEAN: a value below it counts as it in a geometric mean
_TREC_CUTOFFS = {
    "none": _NONE,
    "k": _K,
    "param": frozenset({"param"}),
    "optional": frozenset({"none", "param"}),
}


def _trec_family(name: str, spec: TrecFamily, form: str) -> Family:
    """The registry's family of a trec_eval measure, declared in ``form``."""
    return Family(
        _TREC_CUTOFFS[spec.cutoffs],
        None if spec.cutoffs == "k" else ALL_HITS,
        _forms(spec.definition, spec.kernel, {"gm_map": E.average_precision, **TIED}.get(name), (form,)),
        graded=spec.graded,
        param=spec.param,
        summary=spec.summary,
        order_free=name in ORDER_FREE,
        listing=name in LISTING,
    )


# trec_eval's own measures, then those of preference judgements and of judgement groups (each its
# own input form), in that order
FAMILIES.update({name: _trec_family(name, spec, RANKINGS) for name, spec in TREC_FAMILIES.items()})
FAMILIES.update(
    {name: Family(_NONE, ALL_HITS, _forms(d, k, None, (PREFERENCES,))) for name, (d, k) in PREFS_FAMILIES.items()}
)
FAMILIES.update({name: _trec_family(name, spec, JUDGEMENT_GROUPS) for name, spec in JG_FAMILIES.items()})


_SUFFIXES = {"none": "", "k": "@k", "r": "@r", "radius": "@radius", "param": "@params"}


def name_patterns(family: str) -> list[str]:
    """The name patterns of a per-query family, in the order none, k, r, radius, param: ``map``,
    ``map@k``, ``map@r``."""
    return [f"{family}{suffix}" for cut, suffix in _SUFFIXES.items() if cut in FAMILIES[family].cutoffs]


def summarise(name: str, values: np.ndarray) -> float:
    """The summary of a metric's per-query ``values`` (evaluated queries only) by its family's
    declared rule: the mean, or for ``summary == "gm"`` the geometric mean of the values floored
    at :data:`GM_FLOOR` (trec_eval's gm_map)."""
    family = FAMILIES.get(name.partition("@")[0])
    if family is not None and family.summary == "gm":
        return float(np.exp(np.mean(np.log(np.maximum(values, GM_FLOOR)))))
    return float(values.mean())
