"""The metric table: every registry family as one plain dict, for people (the docs' metric
reference, ``embedeval metrics``) and for code (:func:`embedeval.list_metrics`).

Everything that the registry declares is read from it: name patterns, definitions per input
form, grading, what an uncut name needs, tie-aware support (an expected-value kernel
beside the ordinary one). What the registry does not hold is kept here, one entry per family: the paper or
tool that defines the metric, and the names other tools give the same number. A family missing
from :data:`ABOUT` makes :func:`list_metrics` raise, so a new metric cannot reach the docs
without them (``tests/docs/test_metric_reference.py``).
"""

from __future__ import annotations

from .families import EMBEDDINGS, FAMILIES, JUDGEMENT_GROUPS, PREFERENCES, RANKINGS, name_patterns
from .pml_names import PML_CLUSTERING, PML_NAMES
from .set_families import SET_FAMILIES
from .ties import RULES, TIE_RULES
from .tool_names import accepted_names
from .trec_defaults import DEFAULTS
from .trec_names import TREC_CUT, TREC_PLAIN
from .trec_prefs import PREFS_FAMILIES

# Tools whose names the metric parser accepts as aliases: trec_eval's and pytorch-metric-learning's
# by their grammar; every other tool's listed name that names one metric (tool_names.TOOL_NAMES).
ACCEPTED = {"trec_eval": RANKINGS, "pytorch-metric-learning": EMBEDDINGS}

_MUSGRAVE = "Musgrave, Belongie & Lim, A Metric Learning Reality Check, ECCV 2020"
_TREC = "trec_eval (NIST), as computed by pytrec_eval"
_JARVELIN = "Järvelin & Kekäläinen, Cumulated gain-based evaluation of IR techniques, TOIS 2002"
_BURGES = "Burges et al., Learning to rank using gradient descent, ICML 2005 (exponential gain)"
_RADENOVIC = "Radenović et al., Revisiting Oxford and Paris, CVPR 2018"
_VINH = "Vinh, Epps & Bailey, Information theoretic measures for clusterings comparison, JMLR 2010"
_OML = "open-metric-learning (OML), oml.functional.metrics"
_HASHING = "Li, Wang & Kang, Feature learning based deep supervised hashing (DPSH), IJCAI 2016"

# family -> (reference, {tool: [that tool's names for the same number]})
ABOUT: dict[str, tuple[str, dict[str, list[str]]]] = {
    "precision": (
        _TREC,
        {"trec_eval": ["P_k"], "BEIR": ["P@k"], "MTEB": ["precision_at_k"], "ranx": ["precision@k"]},
    ),
    "recall": (
        f"{_MUSGRAVE} (embeddings: Recall@K); {_TREC} (rankings: recall_k)",
        {"trec_eval": ["recall_k"], "BEIR": ["Recall@k"], "MTEB": ["recall_at_k"], "ranx": ["recall@k"]},
    ),
    "capped_recall": (
        "Thakur et al., BEIR, NeurIPS 2021 datasets track (R_cap@k)",
        {"BEIR": ["R_cap@k"], "OML": ["precision@k"]},
    ),
    "hit_rate": (_TREC, {"trec_eval": ["success_k"], "ranx": ["hit_rate@k"]}),
    "f1": ("van Rijsbergen, Information Retrieval, 1979 (F measure)", {"ranx": ["f1@k"]}),
    "r_precision": (_MUSGRAVE, {"trec_eval": ["Rprec"], "pytorch-metric-learning": ["r_precision"]}),
    "map": (
        f"{_TREC} (map, map_cut_k); {_MUSGRAVE} (MAP@R)",
        {
            "trec_eval": ["map", "map_cut_k"],
            "pytorch-metric-learning": ["mean_average_precision", "mean_average_precision_at_r"],
            "BEIR": ["MAP@k"],
            "MTEB": ["map_at_k"],
            "ranx": ["map@k"],
        },
    ),
    "map_hits": (
        f"{_OML} (map@k); {_HASHING} (mAP@k as in its CalcTopMap)",
        {"OML": ["map@k"], "deep hashing": ["mAP@k"]},
    ),
    "capped_map": (
        "sentence-transformers, InformationRetrievalEvaluator (MAP@k)",
        {"sentence-transformers": ["map@k"]},
    ),
    "mrr": (
        "Voorhees, The TREC-8 Question Answering Track Report, 1999",
        {
            "trec_eval": ["recip_rank"],
            "pytorch-metric-learning": ["mean_reciprocal_rank"],
            "BEIR": ["MRR@k"],
            "MTEB": ["mrr_at_k"],
        },
    ),
    "ndcg": (
        _JARVELIN,
        {"trec_eval": ["ndcg", "ndcg_cut_k"], "BEIR": ["NDCG@k"], "MTEB": ["ndcg_at_k"], "ranx": ["ndcg@k"]},
    ),
    "ndcg_exp": (_BURGES, {"ranx": ["ndcg_burges@k"]}),
    "dcg": (_JARVELIN, {"ranx": ["dcg@k"]}),
    "dcg_exp": (_BURGES, {"ranx": ["dcg_burges@k"]}),
    "cg": (_JARVELIN, {}),
    "cmc": (
        "Moon & Phillips, Computational and performance aspects of PCA-based face recognition, 2001",
        {"OML": ["cmc@k"]},
    ),
    "revisited_map": (_RADENOVIC, {"revisitop": ["mAP (compute_map)"]}),
    "revisited_mp": (_RADENOVIC, {"revisitop": ["mP@k (compute_map)"]}),
    "precision_radius": (_HASHING, {"deep hashing": ["P@H<=r"]}),
    "recall_radius": (_HASHING, {"deep hashing": ["R@H<=r"]}),
    "nmi": (
        "Strehl & Ghosh, Cluster ensembles, JMLR 2002 (NMI, arithmetic mean as in scikit-learn)",
        {"scikit-learn": ["normalized_mutual_info_score"]},
    ),
    "ami": (_VINH, {"scikit-learn": ["adjusted_mutual_info_score"]}),
    "pml_nmi": (
        "pytorch-metric-learning's AccuracyCalculator (its k-means settings); NMI as Strehl & Ghosh 2002",
        {"pytorch-metric-learning": ["NMI"]},
    ),
    "pml_ami": (
        f"pytorch-metric-learning's AccuracyCalculator (its k-means settings); AMI as {_VINH}",
        {"pytorch-metric-learning": ["AMI"]},
    ),
    "fnmr": ("ISO/IEC 19795-1 (biometric performance testing)", {"OML": ["fnmr@fmr"]}),
    "tar": ("ISO/IEC 19795-1 (TAR = 1 - FNMR)", {"face verification": ["TAR@FAR"]}),
    "eer": ("ISO/IEC 19795-1 (equal error rate)", {}),
    "pair_auroc": ("Hanley & McNeil, The meaning and use of the area under a ROC curve, Radiology 1982", {}),
    "pcf": (_OML, {"OML": ["pcf"]}),
}

# trec_eval's own measures (trec_families.py): the reference, and the name trec_eval prints
_TREC10 = "trec_eval 10 (NIST), its C source; agreement with pytrec_eval (trec_eval 9) where it has the measure"
_BUCKLEY = "Buckley & Voorhees, Retrieval evaluation with incomplete information, SIGIR 2004"
_TREC_OWN = {
    "bpref": (_BUCKLEY, "bpref"),
    "gm_bpref": (_BUCKLEY + "; summary as trec_eval's gm_bpref", "gm_bpref"),
    "gm_map": ("Robertson, On GMAP, CIKM 2006; trec_eval's gm_map", "gm_map"),
    "infap": (
        "Yilmaz & Aslam, Estimating average precision with incomplete and imperfect judgments, CIKM 2006",
        "infAP",
    ),
    "iprec_at_recall": (_TREC10, "iprec_at_recall_p"),
    "11pt_avg": (_TREC10, "11pt_avg"),
    "rprec_mult": (_TREC10, "Rprec_mult_m"),
    "bing": (_TREC10, "binG"),
    "set_p": (_TREC10, "set_P"),
    "set_recall": (_TREC10, "set_recall"),
    "set_relative_p": (_TREC10, "set_relative_P"),
    "set_map": (_TREC10, "set_map"),
    "set_f": ("van Rijsbergen, Information Retrieval, 1979 (F measure); trec_eval's set_F", "set_F"),
    "utility": (_TREC10, "utility"),
    "num_nonrel_judged_ret": (_TREC10, "num_nonrel_judged_ret"),
    "unj": (_TREC10, "unj_k"),
    "rbp": ("Moffat & Zobel, Rank-biased precision for measurement of retrieval effectiveness, TOIS 2008", "rbp"),
    "rbp_resid": ("Moffat & Zobel, TOIS 2008 (the residual); trec_eval's rbp_resid", "rbp_resid"),
    "ndcg_gains": (_JARVELIN + "; trec_eval's ndcg with gain parameters", "ndcg.g=gain,..."),
    "g": (_TREC10, "G"),
    "ndcg_rel": (_TREC10, "ndcg_rel"),
    "rndcg": (_TREC10, "Rndcg"),
}
ABOUT.update({family: (ref, {"trec_eval": [name]}) for family, (ref, name) in _TREC_OWN.items()})
# preference judgements (-R prefs, qrels_prefs) and judgement groups (-R qrels_jg): trec_eval 10's
# C source is their only definition (pytrec_eval reads qrels only)
_OWN_FORMS_REF = "trec_eval 10 (NIST), its C source ({}); byte-identical with its binary (bench/prefs_differential.py)"
ABOUT.update(
    {
        family: (_OWN_FORMS_REF.format("m_prefs_*.c over form_prefs_counts.c"), {"trec_eval": [trec]})
        for family, trec in ((f, f.replace("rnonrel", "Rnonrel")) for f in PREFS_FAMILIES)
    }
)
ABOUT.update(
    {
        "map_avgjg": (_OWN_FORMS_REF.format("m_map_avgjg.c"), {"trec_eval": ["map_avgjg"]}),
        "p_avgjg": (_OWN_FORMS_REF.format("m_P_avgjg.c"), {"trec_eval": ["P_avgjg_k"]}),
        "rprec_mult_avgjg": (_OWN_FORMS_REF.format("m_Rprec_mult_avgjg.c"), {"trec_eval": ["Rprec_mult_avgjg_m"]}),
    }
)


def _trec_aliases(family: str) -> list[str]:
    names = []
    if family in TREC_CUT:
        cut = TREC_CUT[family]
        names += [f"{cut}_k", f"{cut}.k1,k2"]
        if cut in DEFAULTS and cut != "recall":  # bare recall is embedeval's family, not trec_eval's
            names.append(f"{cut} (its default cutoffs)")
    if family in TREC_PLAIN:
        names.append(TREC_PLAIN[family])
    if family in ("p_avgjg", "rprec_mult_avgjg"):  # the parser takes trec_eval's names of these two
        names += ABOUT[family][1]["trec_eval"]
    return names


def _accepted(family: str) -> list[str]:
    """The other tools' names the parser takes for this family (and reports under embedeval's)."""
    pml = [name for name, canonical in PML_NAMES.items() if canonical.partition("@")[0] == family]
    pml += [name for name, canonical in PML_CLUSTERING.items() if canonical == family]
    return _trec_aliases(family) + pml + accepted_names(family)


def _ties(spec) -> list[str]:
    """The tie rules a family supports: the preference and judgement-group measures have only
    trec_eval's order (their files are read by the drop-in's rules alone)."""
    if {PREFERENCES, JUDGEMENT_GROUPS} & set(spec.forms):
        return ["index"]
    if spec.order_free or all(form.expected is not None for form in spec.forms.values()):
        return ["index", *RULES]
    return ["index", *TIE_RULES]


def _per_query_row(family: str) -> dict:
    spec = FAMILIES[family]
    reference, aliases = ABOUT[family]
    forms = list(spec.forms)
    definitions = {form: spec.forms[form].definition for form in forms}
    definition = definitions[forms[0]] if len(set(definitions.values())) == 1 else None
    if definition is None:
        definition = "; ".join(f"{form}: {text}" for form, text in definitions.items())
    return {
        "name": name_patterns(family)[0],
        "family": family,
        "names": name_patterns(family),
        "kind": "per-query",
        "definition": definition,
        "definitions": definitions,
        "at_r_definition": spec.r_definition,
        "forms": forms,
        "graded": spec.graded,
        "needs_uncut": spec.uncut,
        "ties": _ties(spec),
        "aliases": aliases,
        "accepted_aliases": _accepted(family),
        "reference": reference,
    }


def _set_row(family: str) -> dict:
    spec = SET_FAMILIES[family]
    reference, aliases = ABOUT[family]
    parameter, pattern = spec.parameter, spec.pattern(family)
    definition = spec.definition if parameter is None else spec.definition.replace("{x}", "x")
    if parameter is not None:
        definition += f"; x: {parameter.meaning} in {parameter.interval}"
    return {
        "name": pattern,
        "family": family,
        "names": [pattern],
        "kind": "set-level",
        "definition": definition,
        "definitions": {EMBEDDINGS: definition},
        "at_r_definition": None,
        "forms": [EMBEDDINGS],
        "graded": False,
        "needs_uncut": spec.needs,
        "ties": [],
        "aliases": aliases,
        "accepted_aliases": _accepted(family),
        "reference": reference,
        "no_interval": spec.no_interval,
    }


def list_metrics() -> list[dict]:
    """Every metric embedeval knows: one plain dict per family, per-query families first, in
    registry order (what ``embedeval metrics`` prints and the docs' metric reference shows).

    Returns
    -------
    list of dict
        Keys: ``name`` (the first name pattern), ``family``, ``names`` (every pattern:
        ``map``, ``map@k``, ``map@r``), ``kind`` (``"per-query"`` or ``"set-level"``),
        ``definition``, ``definitions`` (per input form), ``at_r_definition``, ``forms``,
        ``graded``, ``needs_uncut``, ``ties`` (the ``ties=`` rules it supports; ``"index"`` is
        the default rule), ``aliases`` (``{tool: [names]}``: the same number under another
        tool's name, for reading), ``accepted_aliases`` (the other tools' names that
        ``metrics=`` accepts), ``reference``; set-level rows add ``no_interval``.

    Raises
    ------
    LookupError
        If a registry family has no entry in :data:`ABOUT` (its reference and other names).

    Examples
    --------
    >>> import embedeval
    >>> table = {row["family"]: row for row in embedeval.list_metrics()}
    >>> table["map"]["names"]
    ['map', 'map@k', 'map@r']
    >>> table["capped_recall"]["aliases"]["BEIR"]
    ['R_cap@k']
    >>> table["ndcg"]["forms"]
    ['rankings']
    """
    missing = sorted(set(FAMILIES).union(SET_FAMILIES) - set(ABOUT))
    if missing:
        raise LookupError(f"metric families without a reference in embedeval._metrics.catalogue.ABOUT: {missing}")
    return [_per_query_row(f) for f in FAMILIES] + [_set_row(f) for f in SET_FAMILIES]
