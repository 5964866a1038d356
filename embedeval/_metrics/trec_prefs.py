r"""trec_eval 10's preference measures (``-m all_prefs``): what is counted, and the kernels.

Preference judgements (``-R prefs``, ``-R qrels_prefs``) say, per query, that one document is
preferred to another. They come in *judgement groups* (JG: one assessor's judgements at one
time, consistent with themselves) made of *sub-groups* (JSG): within a JSG, a document with a
higher ``rel_level`` is preferred to one with a lower level; a JG's preferences are those of its
JSGs and what they imply by transitivity. Different JGs may disagree.

Each preference A > B of a JG falls in one of three cases, by where the run put A and B
(documents ranked among the query's judged documents, in the run's order after ``-M``):

- *retrieved*: both retrieved; fulfilled when A is ranked above B;
- *implied*: one retrieved; fulfilled when it is A;
- *not retrieved*: neither; never fulfilled.

:class:`PreferenceCounts` holds these counts per JG (``ful_ret`` fulfilled among the retrieved,
``poss_ret`` possible among them, fulfilled included; ``ful_imp``, ``poss_imp`` the same for the
implied ones; ``notoccur`` the preferences between documents not retrieved), the per-JG
fulfilled and possible counts of the ``Rnonrel`` variants, and per query the sums over document
pairs that ``prefs_pair`` reads. The counting itself (trec_eval's ``form_prefs_counts``) is
done where the files are read, :mod:`embedeval._forms.trec.prefs_counts`.

Every measure is 0 where its denominator is 0, as in trec_eval. A measure averaged over JGs
(``avgjg``) adds the JGs' ratios in their order and divides by the number of JGs, and is 0 when
that sum is not positive (a 0/0 ratio of the ``Rnonrel`` variants makes it NaN, and then 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .kernels import divide_or_zero

PREFERENCES = "preferences"


@dataclass(frozen=True)
class PreferenceCounts:
    """What trec_eval's preference measures read, for ``n_queries`` queries.

    Attributes
    ----------
    n_queries : int
    jg_query : numpy.ndarray of shape (n_jgs,)
        Each judgement group's query, the groups of a query together, in trec_eval's order.
    ful_ret, poss_ret, ful_imp, poss_imp, notoccur : numpy.ndarray of shape (n_jgs,)
        Preferences fulfilled and possible among retrieved documents, implied ones, and those
        between two documents not retrieved (integers).
    rnonrel_ful, rnonrel_poss, rnonrel_ret_ful, rnonrel_ret_poss : numpy.ndarray of shape (n_jgs,)
        Fulfilled and possible preferences once a JG's non-relevant documents are set to R in
        number (``prefs_avgjg_Rnonrel`` and its ``_ret`` variant).
    pair_sum, pair_sum_ret : numpy.ndarray of shape (n_queries,)
        Over the document pairs with a preference in some JG, with at least one document
        retrieved (``pair_sum``) or both (``pair_sum_ret``): the sum of each pair's share of
        fulfilled preferences, added in trec_eval's order.
    pairs_ret, pairs_imp, pairs_not : numpy.ndarray of shape (n_queries,)
        The numbers of such pairs with both, one and no document retrieved.
    """

    n_queries: int
    jg_query: np.ndarray
    ful_ret: np.ndarray
    poss_ret: np.ndarray
    ful_imp: np.ndarray
    poss_imp: np.ndarray
    notoccur: np.ndarray
    rnonrel_ful: np.ndarray
    rnonrel_poss: np.ndarray
    rnonrel_ret_ful: np.ndarray
    rnonrel_ret_poss: np.ndarray
    pair_sum: np.ndarray
    pair_sum_ret: np.ndarray
    pairs_ret: np.ndarray
    pairs_imp: np.ndarray
    pairs_not: np.ndarray

    @property
    def n_relevant(self) -> np.ndarray:
        """The registry's R, read by no preference measure: the number of JGs per query."""
        return np.bincount(self.jg_query, minlength=self.n_queries)

    def total(self, per_jg: np.ndarray) -> np.ndarray:
        """The sum over each query's JGs, array of shape (n_queries,)."""
        return np.bincount(self.jg_query, weights=np.asarray(per_jg, dtype=np.float64), minlength=self.n_queries)

    def average(self, ful: np.ndarray, poss: np.ndarray, skip_empty: bool = True) -> np.ndarray:
        """trec_eval's average over JGs: the ratios ful / poss added one JG after another (a JG
        with poss = 0 left out with ``skip_empty``, else its 0/0 is NaN), divided by the number
        of JGs; 0 where the sum is not positive."""
        ful, poss = np.asarray(ful, dtype=np.float64), np.asarray(poss, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = ful / poss
        if skip_empty:
            ratio = np.where(poss != 0, ratio, 0.0)
        sums = np.zeros(self.n_queries)
        np.add.at(sums, self.jg_query, ratio)  # unbuffered, in JG order: trec_eval's sequential sum
        n = self.n_relevant.astype(np.float64)
        with np.errstate(invalid="ignore"):
            return np.where(sums > 0, sums / np.maximum(n, 1.0), 0.0)


def num_prefs_poss(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Every preference of the query's JGs, retrieved or not (a count)."""
    return c.total(c.poss_ret + c.poss_imp + c.notoccur)


def num_prefs_ful(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Fulfilled preferences, implied ones included (a count)."""
    return c.total(c.ful_ret + c.ful_imp)


def num_prefs_ful_ret(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Fulfilled preferences between retrieved documents (a count)."""
    return c.total(c.ful_ret)


def simp(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Fulfilled / possible preferences over all JGs; a preference between two documents not
    retrieved counts as possible and not fulfilled."""
    return divide_or_zero(num_prefs_ful(c), num_prefs_poss(c))


def simp_ret(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Fulfilled / possible among the preferences between retrieved documents."""
    return divide_or_zero(c.total(c.ful_ret), c.total(c.poss_ret))


def simp_imp(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Fulfilled / possible among the preferences with at least one document retrieved."""
    return divide_or_zero(c.total(c.ful_ret + c.ful_imp), c.total(c.poss_ret + c.poss_imp))


def pair(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Mean over document pairs of the pair's share of fulfilled preferences (a pair of two
    documents not retrieved has share 0)."""
    return divide_or_zero(c.pair_sum, c.pairs_ret + c.pairs_imp + c.pairs_not)


def pair_ret(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Mean over pairs of retrieved documents of the pair's share of fulfilled preferences."""
    return divide_or_zero(c.pair_sum_ret, c.pairs_ret)


def pair_imp(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Mean over pairs with at least one document retrieved of the pair's share."""
    return divide_or_zero(c.pair_sum, c.pairs_ret + c.pairs_imp)


def avgjg(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Mean over JGs of fulfilled / possible (preferences not retrieved count as failures)."""
    return c.average(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp + c.notoccur)


def avgjg_ret(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Mean over JGs of fulfilled / possible among retrieved documents."""
    return c.average(c.ful_ret, c.poss_ret)


def avgjg_imp(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Mean over JGs of fulfilled / possible among preferences with a retrieved document."""
    return c.average(c.ful_ret + c.ful_imp, c.poss_ret + c.poss_imp)


def avgjg_rnonrel(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """Mean over JGs of fulfilled / possible with the JG's non-relevant documents set to R."""
    return c.average(c.rnonrel_ful, c.rnonrel_poss, skip_empty=False)


def avgjg_rnonrel_ret(c: PreferenceCounts, cutoff=None) -> np.ndarray:
    """The same among retrieved documents, non-relevant retrieved set to R retrieved."""
    return c.average(c.rnonrel_ret_ful, c.rnonrel_ret_poss, skip_empty=False)


_NOT_RET = "a preference between two documents not retrieved counts as possible, never fulfilled"
_RET_ONLY = "only preferences between two retrieved documents count"
_IMP = "preferences with at least one retrieved document count (implied ones: the retrieved one must be preferred)"
_RNONREL = (
    "fulfilled / possible per JG, averaged over JGs, with the JG's non-relevant documents (rel_level 0) set to R "
    "(its rel_level > 0 documents) in number: when N < R, R - N preferences per relevant document are added, "
    "fulfilled for the retrieved ones; when N > R, only the first R non-relevant documents (in place order) are "
    "kept and the JG's preferences recounted (trec_eval's recount, which for one sub-group also pairs the lowest "
    "level with itself)"
)

# family -> (definition, kernel), in trec_eval's order (the drop-in prints the prefs_num_* counts as longs)
PREFS_FAMILIES = {
    "prefs_num_prefs_poss": ("number of preferences of every JG, whatever was retrieved", num_prefs_poss),
    "prefs_num_prefs_ful": (
        "number of fulfilled preferences: both retrieved, the preferred one above, or only the preferred one retrieved",
        num_prefs_ful,
    ),
    "prefs_num_prefs_ful_ret": ("number of fulfilled preferences between two retrieved documents", num_prefs_ful_ret),
    "prefs_simp": (f"fulfilled / possible preferences, summed over JGs; {_NOT_RET}", simp),
    "prefs_pair": (
        "mean over document pairs with a preference in some JG of (JGs preferring the one ranked higher) / "
        "(JGs with a preference between them); a pair of documents not retrieved has 0",
        pair,
    ),
    "prefs_avgjg": (f"mean over JGs of (fulfilled / possible) in the JG; {_NOT_RET}", avgjg),
    "prefs_avgjg_rnonrel": (_RNONREL, avgjg_rnonrel),
    "prefs_simp_ret": (f"fulfilled / possible preferences, summed over JGs; {_RET_ONLY}", simp_ret),
    "prefs_pair_ret": ("prefs_pair over the pairs of two retrieved documents", pair_ret),
    "prefs_avgjg_ret": (f"mean over JGs of (fulfilled / possible); {_RET_ONLY}", avgjg_ret),
    "prefs_avgjg_rnonrel_ret": (
        f"{_RNONREL}; counted among retrieved documents (N and R: those retrieved)",
        avgjg_rnonrel_ret,
    ),
    "prefs_simp_imp": (f"fulfilled / possible preferences, summed over JGs; {_IMP}", simp_imp),
    "prefs_pair_imp": ("prefs_pair over the pairs with at least one retrieved document", pair_imp),
    "prefs_avgjg_imp": (f"mean over JGs of (fulfilled / possible); {_IMP}", avgjg_imp),
}
