"""Declarations of trec_eval's own measures (ranked lists only), read by
:mod:`embedeval._metrics.families` into the registry: one :class:`TrecFamily` each, whose
parameter, when it has one, is written ``family@PARAMS`` (``iprec_at_recall@0.1``,
``utility@2,-1,0,0``, ``ndcg_gains@1=3,2=9``, ``rbp@p=0.8``). Every one needs the whole ranking.
Their names are trec_eval's, lowercased (``infap``, ``set_p``, ``g``, ``bing``);
:mod:`embedeval._metrics.trec_names` maps trec_eval's spellings.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from . import kernels as K
from . import trec_extra as X
from . import trec_gains as G
from . import trec_sets as S
from . import trec_tied as T

_GAINS = "gains: the grade unless a parameter grade=gain gives another (ndcg_gains@1=3,2=9)"


def _point(text: str) -> float:
    return X.one_float(text, "a recall point")


def parse_multiple(text: str) -> float:
    return X.one_float(text, "an R multiple")


def _points(text: str) -> tuple[float, ...]:
    return X.floats(text, "11pt_avg")


# the measures of the retrieved set, whatever its order: every tie rule gives their ordinary value
ORDER_FREE = frozenset(
    {"set_p", "set_recall", "set_relative_p", "set_map", "set_f", "utility", "num_nonrel_judged_ret"}
)

# the measures whose kernels read the whole listing (embedeval._metrics.listing): only for them is
# it built
LISTING = frozenset(
    {"bpref", "gm_bpref", "infap", "set_p", "set_recall", "set_relative_p", "set_map", "set_f", "utility"}
    | {"num_nonrel_judged_ret", "unj", "rbp", "rbp_resid", "ndcg_gains", "g", "ndcg_rel", "rndcg"}
)

# the tie-aware twins (ties="expected") of the measures that add one term per position; the
# others of the listing have none (see docs/guides/trec_eval.md)
TIED = {"unj": T.unjudged_at, "rbp": T.rbp, "rbp_resid": T.rbp_residual}


class TrecFamily(NamedTuple):
    """One trec_eval measure, as :mod:`embedeval._metrics.families` reads it into a ``Family``."""

    cutoffs: str  # "none", "k", "param" (required) or "optional" (a parameter with a default)
    definition: str
    kernel: Callable  # kernel(hits, cutoff) -> array of shape (n_queries,)
    graded: bool = False
    param: Callable | None = None  # parser of the parameter text, for "param" and "optional"
    summary: str = "mean"  # or "gm": the geometric mean of the values floored at GM_FLOOR


def _on_gains(definition: str, kernel: Callable) -> TrecFamily:
    """A measure of graded gains whose parameter is a gain table (``ndcg_gains@1=3,2=9``)."""
    return TrecFamily("optional", f"{definition}; {_GAINS}", kernel, graded=True, param=G.parse_gains)


TREC_FAMILIES = {
    "bpref": TrecFamily(
        "none",
        "bpref (trec_eval): (1/R) sum over retrieved relevant r of 1 - min(n_r, R) / min(N, R), n_r judged "
        "non-relevant above r, N all judged non-relevant (grade in [0, level)); unjudged documents passed over",
        X.bpref,
    ),
    "gm_bpref": TrecFamily(
        "none", "bpref per query; summary = geometric mean, each value at least 1e-5", X.bpref, summary="gm"
    ),
    "gm_map": TrecFamily(
        "none",
        "AP per query (trec_eval's map); summary = geometric mean, each value at least 1e-5 (trec_eval's gm_map)",
        K.average_precision,
        summary="gm",
    ),
    "infap": TrecFamily(
        "none",
        "infAP (Yilmaz & Aslam, trec_eval's form): inferred AP from judged documents; negative grades are pooled "
        "but unjudged, documents outside the qrels unpooled",
        X.infap,
    ),
    "iprec_at_recall": TrecFamily(
        "param",
        "interpolated precision at recall p: the largest precision at or below the rank of the lround(p R)-th "
        "relevant document (the first for p R < 0.5), 0 if fewer are retrieved",
        X.iprec_at_recall,
        param=_point,
    ),
    "11pt_avg": TrecFamily(
        "optional",
        "mean interpolated precision at the recall points given (default 0, 0.1, ..., 1)",
        X.eleven_point_average,
        param=_points,
    ),
    "rprec_mult": TrecFamily(
        "param",
        "precision at floor(m R + 0.9) documents (trec_eval's Rprec_mult_m), 0 when that is 0",
        X.rprec_mult,
        param=parse_multiple,
    ),
    "bing": TrecFamily(
        "none",
        "binG (trec_eval): (1/R) sum over retrieved relevant r of 1 / log2(2 + n_r), n_r non-relevant above r",
        X.binary_gain,
    ),
    "set_p": TrecFamily("none", "set_P = relevant retrieved / retrieved", S.set_precision),
    "set_recall": TrecFamily("none", "set_recall = relevant retrieved / R", S.set_recall),
    "set_relative_p": TrecFamily(
        "none", "set_relative_P = relevant retrieved / min(retrieved, R)", S.set_relative_precision
    ),
    "set_map": TrecFamily("none", "set_map = set_P * set_recall", S.set_map),
    "set_f": TrecFamily(
        "optional",
        "set_F@x = (x + 1) P R' / (x P + R'), P = set_P, R' = set_recall, x default 1",
        S.set_f,
        param=S.parse_set_f,
    ),
    "utility": TrecFamily(
        "optional",
        "utility@a,b,c,d = a rel_ret + b nonrel_ret + c rel_not_ret + d nonrel_not_ret (collection size 0), "
        "default 1,-1,0,0",
        S.utility,
        param=S.parse_utility,
    ),
    "num_nonrel_judged_ret": TrecFamily(
        "none",
        "retrieved documents judged non-relevant (grade in [0, level)), a count; summary = their mean",
        S.num_nonrel_judged_ret,
    ),
    "unj": TrecFamily("k", "unj@k = documents without a grade >= 0 among the top k / k", S.unjudged_at),
    "rbp_resid": TrecFamily(
        "optional",
        "rbp_resid@p=x (trec_eval): p^n + (1 - p) sum of p^(i-1) over unjudged ranks i, 0 if none; p default 0.9",
        S.rbp_residual,
        param=S.parse_p,
    ),
    "rbp": TrecFamily(
        "optional",
        "rank-biased precision (Moffat & Zobel): (1 - p) sum_i g_i p^(i-1), gains scaled into [0, 1] when one lies "
        f"outside; p default 0.9 (rbp@p=0.8); {_GAINS}",
        G.rbp,
        graded=True,
        param=S.parse_p,
    ),
    "ndcg_gains": _on_gains("trec_eval's ndcg with a gain table: DCG / ideal DCG over the whole ranking", G.ndcg_gains),
    "g": _on_gains(
        "trec_eval's G: sum_i g_i / log2(2 + C_i - S_i) / ideal total gain, C_i the ideal's gain (>= 1 a rank)",
        G.gain,
    ),
    "ndcg_rel": _on_gains("trec_eval's ndcg_rel: nDCG averaged over the documents of positive gain", G.ndcg_rel),
    "rndcg": _on_gains("trec_eval's Rndcg: nDCG averaged over the ranks where the ideal gain changes", G.rndcg),
}
