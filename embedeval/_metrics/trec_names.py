"""trec_eval's measure names: accepted for ranked lists as aliases of embedeval's names, and
printed by ``--format trec``.

=================================  =================================================
trec_eval                          embedeval
=================================  =================================================
``P_k``, ``P.k1,k2``, ``P``        ``precision@k``
``recall_k``, ``recall.k1,k2``     ``recall@k`` (trec_eval's recall: found / R)
``ndcg_cut_k``, ``ndcg_cut.k,..``  ``ndcg@k`` (linear gain, ideal from every judged grade)
``ndcg``                           ``ndcg`` (the whole ranking, no cutoff)
``map``, ``map_cut_k``             ``map``, ``map@k``
``recip_rank``                     ``mrr`` (the whole ranking)
``Rprec``                          ``r_precision``
``success_k``, ``success.k,..``    ``hit_rate@k``
=================================  =================================================

A family without cutoffs (``P``, ``ndcg_cut``, ``map_cut``, ``success``) means trec_eval's
default cutoffs, as ``trec_eval -m P`` does. Bare ``recall`` is embedeval's own family name and
keeps its meaning (it needs a cutoff). Names are matched ignoring case.
"""

from __future__ import annotations

import re

from .families import RANKINGS
from .trec_defaults import DEFAULTS, R_MULTIPLES, RECALL_LEVELS

# embedeval family -> trec_eval's name of it with a cutoff (P_10), and without one (map)
TREC_CUT = {
    "precision": "P",
    "recall": "recall",
    "ndcg": "ndcg_cut",
    "map": "map_cut",
    "hit_rate": "success",
    "capped_recall": "relative_P",
    "unj": "unj",
}
TREC_PLAIN = {
    "map": "map",
    "ndcg": "ndcg",
    "mrr": "recip_rank",
    "r_precision": "Rprec",
    "infap": "infAP",
    "set_p": "set_P",
    "set_relative_p": "set_relative_P",
    "set_f": "set_F",
    "g": "G",
    "bing": "binG",
    "rndcg": "Rndcg",
}
# registry families whose one value takes parameters after a dot (utility.2,-1,0,0, ndcg.1=3,2=9),
# and trec_eval's name before the parameters where it is not the family's (printed NAME_PARAMS)
_PARAM_FAMILIES = ("utility", "11pt_avg", "set_f", "rbp", "rbp_resid", "g", "ndcg_rel", "rndcg", "ndcg_gains")
_TREC_PARAM = {"ndcg_gains": "ndcg", "set_f": "set_F", "g": "G", "rndcg": "Rndcg", "rprec_mult": "Rprec_mult"}
# measures with a real parameter per printed value (iprec_at_recall_0.10), and their defaults
_REAL = {"iprec_at_recall": RECALL_LEVELS, "rprec_mult": R_MULTIPLES}

# trec_eval's lowercased spellings -> registry family
_CUT_FAMILIES = {trec.lower(): family for family, trec in TREC_CUT.items()}
_PARAMS = {_TREC_PARAM.get(family, family).lower(): family for family in _PARAM_FAMILIES}
_PLAIN = {TREC_PLAIN[family].lower(): family for family in ("mrr", "r_precision")}
# bare recall is embedeval's own family (it needs a cutoff), not trec_eval's default cutoffs
_DEFAULTS = {trec.lower(): DEFAULTS[trec] for trec in TREC_CUT.values() if trec != "recall"}


def _cut(match: re.Match, k: str) -> str:
    if int(k) < 1:
        raise ValueError(f"cutoffs in metric {match[0]!r} must be ints >= 1; got {k!r}")
    return f"{_CUT_FAMILIES[match[1].lower()]}@{k}"


def _listed(match: re.Match) -> list[str]:
    return [_cut(match, k) for k in match[2].split(",")]


def _defaults(match: re.Match) -> list[str]:
    family = match[1].lower()
    return [f"{_CUT_FAMILIES[family]}@{k}" for k in _DEFAULTS[family]]


def _real_listed(match: re.Match) -> list[str]:
    return [f"{match[1].lower()}@{x}" for x in match[2].split(",")]


def _real_defaults(match: re.Match) -> list[str]:
    family = match[1].lower()
    return [f"{family}@{x:3.2f}" for x in _REAL[family]]


_CUT, _REAL_NAMES = "|".join(_CUT_FAMILIES), "|".join(_REAL)
ALIASES = [
    (re.compile(rf"({_CUT})_(\d+)", re.IGNORECASE), _listed, RANKINGS),
    (re.compile(rf"({_CUT})\.(\d+(?:,\d+)*)", re.IGNORECASE), _listed, RANKINGS),
    (re.compile(rf"({'|'.join(_DEFAULTS)})", re.IGNORECASE), _defaults, RANKINGS),
    (re.compile(rf"({_REAL_NAMES})_([-+0-9.eE]+)", re.IGNORECASE), _real_listed, RANKINGS),
    (re.compile(rf"({_REAL_NAMES})\.(.+)", re.IGNORECASE), _real_listed, RANKINGS),
    (re.compile(rf"({_REAL_NAMES})", re.IGNORECASE), _real_defaults, RANKINGS),
    (
        re.compile(rf"({'|'.join(_PARAMS)})\.(.+)", re.IGNORECASE),
        lambda m: [f"{_PARAMS[m[1].lower()]}@{m[2]}"],
        RANKINGS,
    ),
    (re.compile(rf"({'|'.join(_PLAIN)})", re.IGNORECASE), lambda m: [_PLAIN[m[1].lower()]], RANKINGS),
]


def trec_name(name: str) -> str:
    """trec_eval's name of an embedeval metric (``precision@10`` -> ``P_10``), or the name itself
    when trec_eval has no such measure (``mrr@10``, ``ndcg_exp@10``)."""
    family, _, cut = name.partition("@")
    if not cut:
        return TREC_PLAIN.get(family, name)
    if cut.isdigit() and family in TREC_CUT:
        return f"{TREC_CUT[family]}_{cut}"
    if family in _REAL:  # iprec_at_recall_0.10: trec_eval prints the parameter as %3.2f
        try:
            return f"{_TREC_PARAM.get(family, family)}_{float(cut):3.2f}"
        except ValueError:
            return name
    if family in _PARAM_FAMILIES:
        return f"{_TREC_PARAM.get(family, family)}_{cut}"
    return name
