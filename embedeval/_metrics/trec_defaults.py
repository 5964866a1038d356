"""trec_eval 10's default parameters, in one table: what a measure asked without parameters
(``-m P``, ``-m iprec_at_recall``) prints, and its measures of preferences and judgement groups
(what ``evaluate_preferences`` computes by default). trec_eval's names (:mod:`.trec_names`,
:mod:`.trec_groups`), ``embedeval.io`` and the drop-in's catalogue (``cli/_trec_measures.py``)
read it.
"""

from __future__ import annotations

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_LEVELS = tuple(i / 10 for i in range(11))  # iprec_at_recall's
R_MULTIPLES = tuple(i / 5 for i in range(1, 11))  # Rprec_mult's and Rprec_mult_avgjg's

# trec_eval's measure, as it prints it -> its default parameters
DEFAULTS = {
    "P": CUTOFFS,
    "recall": CUTOFFS,
    "ndcg_cut": CUTOFFS,
    "map_cut": CUTOFFS,
    "relative_P": CUTOFFS,
    "success": (1, 5, 10),
    "unj": (5, 10, 20),
    "P_avgjg": CUTOFFS,
    "relstring": (10,),
    "iprec_at_recall": RECALL_LEVELS,
    "Rprec_mult": R_MULTIPLES,
    "Rprec_mult_avgjg": R_MULTIPLES,
}

# trec_eval's measures of preference judgements (-R prefs, qrels_prefs: its all_prefs set) and of
# judgement groups (-R qrels_jg), in its order
PREFERENCE_MEASURES = (
    "prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair prefs_avgjg "
    "prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret prefs_avgjg_ret prefs_avgjg_Rnonrel_ret prefs_simp_imp "
    "prefs_pair_imp prefs_avgjg_imp"
).split()
GROUP_MEASURES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")
