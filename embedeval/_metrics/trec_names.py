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

_CUT_FAMILIES = {
    "p": "precision",
    "recall": "recall",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "success": "hit_rate",
    "relative_p": "capped_recall",
    "unj": "unj",
}
_DEFAULTS = {name.lower(): DEFAULTS[name] for name in ("P", "ndcg_cut", "map_cut", "success", "relative_P", "unj")}
# measures with a real parameter per printed value (iprec_at_recall_0.10), and their defaults
_REAL = {
    "iprec_at_recall": ("iprec_at_recall", RECALL_LEVELS),
    "rprec_mult": ("rprec_mult", R_MULTIPLES),
}
# measures whose one value takes parameters after a dot (utility.2,-1,0,0, ndcg.1=3,2=9)
_PARAMS = {
    "utility": "utility",
    "11pt_avg": "11pt_avg",
    "set_f": "set_f",
    "rbp": "rbp",
    "rbp_resid": "rbp_resid",
    "g": "g",
    "ndcg_rel": "ndcg_rel",
    "rndcg": "rndcg",
    "ndcg": "ndcg_gains",
}
_PLAIN = {"recip_rank": "mrr", "rprec": "r_precision"}
_CUT = "|".join(_CUT_FAMILIES)

# embedeval family -> trec_eval's name of it with a cutoff, and without one
_TREC_CUT = {
    "precision": "P",
    "recall": "recall",
    "ndcg": "ndcg_cut",
    "map": "map_cut",
    "hit_rate": "success",
    "capped_recall": "relative_P",
    "unj": "unj",
}
_TREC_PLAIN = {
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
# registry family with a parameter -> trec_eval's name before it (printed NAME_PARAMS)
_TREC_PARAM = {"ndcg_gains": "ndcg", "set_f": "set_F", "g": "G", "rndcg": "Rndcg", "rprec_mult": "Rprec_mult"}


def _cut(match: re.Match, k: str) -> str:
    if int(k) < 1:
        raise ValueError(f"cutoffs in metric {match[0]!r} must be ints >= 1; got {k!r}")
    return f"{_CUT_FAMILIES[match[1].lower()]}@{k}"


def _one(match: re.Match) -> list[str]:
    return [_cut(match, match[2])]


def _listed(match: re.Match) -> list[str]:
    return [_cut(match, k) for k in match[2].split(",")]


def _defaults(match: re.Match) -> list[str]:
    family = match[1].lower()
    return [f"{_CUT_FAMILIES[family]}@{k}" for k in _DEFAULTS[family]]


def _real_one(match: re.Match) -> list[str]:
    return [f"{_REAL[match[1].lower()][0]}@{match[2]}"]


def _real_listed(match: re.Match) -> list[str]:
    return [f"{_REAL[match[1].lower()][0]}@{x}" for x in match[2].split(",")]


def _real_defaults(match: re.Match) -> list[str]:
    family, defaults = _REAL[match[1].lower()]
    return [f"{family}@{x:3.2f}" for x in defaults]


_REAL_NAMES = "|".join(_REAL)
ALIASES = [
    (re.compile(rf"({_CUT})_(\d+)", re.IGNORECASE), _one, RANKINGS),
    (re.compile(rf"({_CUT})\.(\d+(?:,\d+)*)", re.IGNORECASE), _listed, RANKINGS),
    (re.compile(r"(p|ndcg_cut|map_cut|success|relative_p|unj)", re.IGNORECASE), _defaults, RANKINGS),
    (re.compile(rf"({_REAL_NAMES})_([-+0-9.eE]+)", re.IGNORECASE), _real_one, RANKINGS),
    (re.compile(rf"({_REAL_NAMES})\.(.+)", re.IGNORECASE), _real_listed, RANKINGS),
    (re.compile(rf"({_REAL_NAMES})", re.IGNORECASE), _real_defaults, RANKINGS),
    (
        re.compile(rf"({'|'.join(_PARAMS)})\.(.+)", re.IGNORECASE),
        lambda m: [f"{_PARAMS[m[1].lower()]}@{m[2]}"],
        RANKINGS,
    ),
    (re.compile(r"(recip_rank|rprec)", re.IGNORECASE), lambda m: [_PLAIN[m[1].lower()]], RANKINGS),
]


def trec_name(name: str) -> str:
    """trec_eval's name of an embedeval metric (``precision@10`` -> ``P_10``), or the name itself
    when trec_eval has no such measure (``mrr@10``, ``ndcg_exp@10``)."""
    family, _, cut = name.partition("@")
    if not cut:
        return _TREC_PLAIN.get(family, name)
    if cut.isdigit() and family in _TREC_CUT:
        return f"{_TREC_CUT[family]}_{cut}"
    if family in _REAL:  # iprec_at_recall_0.10: trec_eval prints the parameter as %3.2f
        try:
            return f"{_TREC_PARAM.get(family, family)}_{float(cut):3.2f}"
        except ValueError:
            return name
    if family in _PARAMS.values() and family not in ("ndcg",):
        return f"{_TREC_PARAM.get(family, family)}_{cut}"
    return name
