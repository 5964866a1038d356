"""trec_eval 10's measures over judgement groups (``-R qrels_jg``, ``-m qrels_jg``).

A qrels_jg file judges each query several times, once per *judgement group* (JG: one assessor,
``qid jg docno grade``). ``map_avgjg``, ``P_avgjg_k`` and ``Rprec_mult_avgjg_m`` are ``map``,
``P_k`` and ``Rprec_mult_m`` computed against each JG's judgements as if they were the qrels,
then averaged over the query's JGs (trec_eval adds the JGs' values in the order of their names
and divides by their number). :class:`GroupedHits` holds the hits of every (query, JG) pair and
which query each belongs to; the registry's own kernels compute the values per pair.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from . import kernels as K
from . import trec_extra as X
from .trec_defaults import DEFAULTS
from .trec_families import TrecFamily, parse_multiple

JUDGEMENT_GROUPS = "judgement_groups"


@dataclass(frozen=True)
class GroupedHits:
    """The hits of each (query, judgement group) pair, as rows of ``hits``.

    Attributes
    ----------
    hits : Hits
        One row per pair, the pairs of a query together, in trec_eval's order.
    query_of_row : numpy.ndarray of shape (n_pairs,)
        Each row's query.
    n_queries : int
    """

    hits: K.Hits
    query_of_row: np.ndarray
    n_queries: int

    @property
    def n_relevant(self) -> np.ndarray:
        """R per row (the registry's cutoff reads it)."""
        return self.hits.n_relevant

    def average(self, per_row: np.ndarray) -> np.ndarray:
        """Each query's mean over its JGs, the values added in row order, array of shape (n_queries,);
        a JG without a relevant document adds 0 (trec_eval's rule: nothing is added for it)."""
        values = np.asarray(per_row, dtype=np.float64)
        sums = np.zeros(self.n_queries)
        np.add.at(sums, self.query_of_row, np.where(np.isnan(values), 0.0, values))
        n = np.bincount(self.query_of_row, minlength=self.n_queries)
        return np.where(n > 1, sums / np.maximum(n, 1), sums)


def map_avgjg(g: GroupedHits, cutoff=None) -> np.ndarray:
    """AP against each JG's judgements, averaged over the query's JGs."""
    return g.average(K.average_precision(g.hits, None))


def p_avgjg(g: GroupedHits, cutoff) -> np.ndarray:
    """P@k against each JG's judgements, averaged over the query's JGs."""
    return g.average(K.precision(g.hits, cutoff))


def rprec_mult_avgjg(g: GroupedHits, cutoff) -> np.ndarray:
    """Precision at floor(m R + 0.9) documents, R that of each JG, averaged over the query's JGs."""
    return g.average(X.rprec_mult(g.hits, cutoff))


JG_FAMILIES = {
    "map_avgjg": TrecFamily(
        "none",
        "mean over the query's judgement groups of AP against that group's judgements (trec_eval's map_avgjg)",
        map_avgjg,
    ),
    "p_avgjg": TrecFamily(
        "k",
        "mean over the query's judgement groups of P@k against that group's judgements (trec_eval's P_avgjg_k)",
        p_avgjg,
    ),
    "rprec_mult_avgjg": TrecFamily(
        "param",
        "mean over the query's judgement groups of the precision at floor(m R + 0.9) documents, R that group's "
        "relevant documents (trec_eval's Rprec_mult_avgjg_m)",
        rprec_mult_avgjg,
        param=parse_multiple,
    ),
}


def _p_cuts(text: str) -> list[str]:
    cuts = text.split(",")
    if not all(c.isdigit() and int(c) >= 1 for c in cuts):
        raise ValueError(f"cutoffs of P_avgjg must be ints >= 1; got {text!r}")
    return [f"p_avgjg@{int(c)}" for c in cuts]


# trec_eval's names, for the judgement-group form: (pattern, names, form), as trec_names.ALIASES
ALIASES = [
    (re.compile(r"P_avgjg_(\d+)", re.IGNORECASE), lambda m: _p_cuts(m[1]), JUDGEMENT_GROUPS),
    (re.compile(r"P_avgjg\.(.+)", re.IGNORECASE), lambda m: _p_cuts(m[1]), JUDGEMENT_GROUPS),
    (re.compile(r"P_avgjg", re.IGNORECASE), lambda m: [f"p_avgjg@{k}" for k in DEFAULTS["P_avgjg"]], JUDGEMENT_GROUPS),
    (
        re.compile(r"Rprec_mult_avgjg[_.](.+)", re.IGNORECASE),
        lambda m: [f"rprec_mult_avgjg@{x}" for x in m[1].split(",")],
        JUDGEMENT_GROUPS,
    ),
    (
        re.compile(r"Rprec_mult_avgjg", re.IGNORECASE),
        lambda m: [f"rprec_mult_avgjg@{x:3.2f}" for x in DEFAULTS["Rprec_mult_avgjg"]],
        JUDGEMENT_GROUPS,
    ),
]
