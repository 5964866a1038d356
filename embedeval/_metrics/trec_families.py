"""Declarations of trec_eval's own measures (ranked lists only), read by
:mod:`embedeval._metrics.families` into the registry.

Each entry: the cutoffs accepted (none, k), the definition, the kernel, whether it reads grades,
the parser of its parameter (``family@PARAMS``: ``iprec_at_recall@0.1``, ``utility@2,-1,0,0``,
``ndcg_gains@1=3,2=9``, ``rbp@p=0.8``; None: no parameter) and its summary over queries
(``mean``, or ``gm``: the geometric mean of the values floored at 1e-5, trec_eval's gm_map).
Every one needs the whole ranking. Their names are trec_eval's, lowercased (``infap``,
``set_p``, ``g``, ``bing``); :mod:`embedeval._metrics.trec_names` maps trec_eval's spellings.
"""

from __future__ import annotations

from . import kernels as K
from . import trec_extra as X
from . import trec_gains as G
from . import trec_sets as S
from . import trec_tied as T

_GAINS = "gains: the grade unless a parameter grade=gain gives another (ndcg_gains@1=3,2=9)"


def _point(text: str) -> float:
    return X.one_float(text, "a recall point")


def _multiple(text: str) -> float:
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

# name -> (cutoffs, definition, kernel, graded, parameter parser, summary)
TREC_FAMILIES = {
    "bpref": (
        "none",
        "bpref (trec_eval): (1/R) sum over retrieved relevant r of 1 - min(n_r, R) / min(N, R), n_r judged "
        "non-relevant above r, N all judged non-relevant (grade in [0, level)); unjudged documents passed over",
        X.bpref,
        False,
        None,
        "mean",
    ),
    "gm_bpref": (
        "none",
        "bpref per query; summary = geometric mean, each value at least 1e-5",
        X.bpref,
        False,
        None,
        "gm",
    ),
    "gm_map": (
        "none",
        "AP per query (trec_eval's map); summary = geometric mean, each value at least 1e-5 (trec_eval's gm_map)",
        K.average_precision,
        False,
        None,
        "gm",
    ),
    "infap": (
        "none",
        "infAP (Yilmaz & Aslam, trec_eval's form): inferred AP from judged documents; negative grades are pooled "
        "but unjudged, documents outside the qrels unpooled",
        X.infap,
        False,
        None,
        "mean",
    ),
    "iprec_at_recall": (
        "param",
        "interpolated precision at recall p: the largest precision at or below the rank of the lround(p R)-th "
        "relevant document (the first for p R < 0.5), 0 if fewer are retrieved",
        X.iprec_at_recall,
        False,
        _point,
        "mean",
    ),
    "11pt_avg": (
        "optional",
        "mean interpolated precision at the recall points given (default 0, 0.1, ..., 1)",
        X.eleven_point_average,
        False,
        _points,
        "mean",
    ),
    "rprec_mult": (
        "param",
        "precision at floor(m R + 0.9) documents (trec_eval's Rprec_mult_m), 0 when that is 0",
        X.rprec_mult,
        False,
        _multiple,
        "mean",
    ),
    "bing": (
        "none",
        "binG (trec_eval): (1/R) sum over retrieved relevant r of 1 / log2(2 + n_r), n_r non-relevant above r",
        X.binary_gain,
        False,
        None,
        "mean",
    ),
    "set_p": ("none", "set_P = relevant retrieved / retrieved", S.set_precision, False, None, "mean"),
    "set_recall": ("none", "set_recall = relevant retrieved / R", S.set_recall, False, None, "mean"),
    "set_relative_p": (
        "none",
        "set_relative_P = relevant retrieved / min(retrieved, R)",
        S.set_relative_precision,
        False,
        None,
        "mean",
    ),
    "set_map": ("none", "set_map = set_P * set_recall", S.set_map, False, None, "mean"),
    "set_f": (
        "optional",
        "set_F@x = (x + 1) P R' / (x P + R'), P = set_P, R' = set_recall, x default 1",
        S.set_f,
        False,
        S.parse_set_f,
        "mean",
    ),
    "utility": (
        "optional",
        "utility@a,b,c,d = a rel_ret + b nonrel_ret + c rel_not_ret + d nonrel_not_ret (collection size 0), "
        "default 1,-1,0,0",
        S.utility,
        False,
        S.parse_utility,
        "mean",
    ),
    "num_nonrel_judged_ret": (
        "none",
        "retrieved documents judged non-relevant (grade in [0, level)), a count; summary = their mean",
        S.num_nonrel_judged_ret,
        False,
        None,
        "mean",
    ),
    "unj": ("k", "unj@k = documents without a grade >= 0 among the top k / k", S.unjudged_at, False, None, "mean"),
    "rbp_resid": (
        "optional",
        "rbp_resid@p=x (trec_eval): p^n + (1 - p) sum of p^(i-1) over unjudged ranks i, 0 if none; p default 0.9",
        S.rbp_residual,
        False,
        S.parse_p,
        "mean",
    ),
    "rbp": (
        "optional",
        "rank-biased precision (Moffat & Zobel): (1 - p) sum_i g_i p^(i-1), gains scaled into [0, 1] when one lies "
        f"outside; p default 0.9 (rbp@p=0.8); {_GAINS}",
        G.rbp,
        True,
        S.parse_p,
        "mean",
    ),
    "ndcg_gains": (
        "optional",
        f"trec_eval's ndcg with a gain table: DCG / ideal DCG over the whole ranking; {_GAINS}",
        G.ndcg_gains,
        True,
        G.parse_gains,
        "mean",
    ),
    "g": (
        "optional",
        f"trec_eval's G: sum_i g_i / log2(2 + C_i - S_i) / ideal total gain, C_i the ideal's gain (>= 1 a rank); "
        f"{_GAINS}",
        G.gain,
        True,
        G.parse_gains,
        "mean",
    ),
    "ndcg_rel": (
        "optional",
        f"trec_eval's ndcg_rel: nDCG averaged over the documents of positive gain; {_GAINS}",
        G.ndcg_rel,
        True,
        G.parse_gains,
        "mean",
    ),
    "rndcg": (
        "optional",
        f"trec_eval's Rndcg: nDCG averaged over the ranks where the ideal gain changes; {_GAINS}",
        G.rndcg,
        True,
        G.parse_gains,
        "mean",
    ),
}
