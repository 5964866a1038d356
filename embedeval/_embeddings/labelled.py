"""Labelled embeddings, read and described: the inputs of :func:`embedeval.evaluate` and what
its result says about them.

:func:`read_embeddings` checks the arrays (or binary codes) and scales them into float32's safe
range; :func:`read_relevance` turns class labels or label sets and the ignore rules into one
:class:`~embedeval._relevance.Relevance`; :func:`skip_reasons`, :func:`config` and
:func:`conventions` are the words and settings the result carries.
"""

from __future__ import annotations

from .._inputs.arrays import as_labels
from .._inputs.codes import HAMMING, Codes
from .._pipeline import route
from .._pipeline.options import Options
from .._relevance import ClassLabels, IgnoreRules, Relevance
from .._relevance.ignore import read_keys, read_lists
from .._relevance.labels import multilabel_kind, read_multilabels
from .._relevance.self_reference import with_own_rows
from .pair import read_pair


def rows(queries, references):
    """The arrays whose rows are compared with ``query_in_reference``: packed bytes for codes."""
    if isinstance(queries, Codes):
        return queries.packed, references.packed
    return queries, references


def read_embeddings(embeddings, reference, reference_labels, distance: str):
    """(queries, references, scale), checked before any work; scaled by a power of two where
    their magnitudes need it (:mod:`embedeval._inputs.magnitude`).

    ``reference`` and ``reference_labels`` come together or not at all; the pair itself is read by
    :func:`embedeval._embeddings.pair.read_pair`.
    """
    if (reference is None) != (reference_labels is None):
        given, missing = (
            ("reference", "reference_labels") if reference is not None else ("reference_labels", "reference")
        )
        raise ValueError(f"'{missing}' is required when '{given}' is given; got None")
    return read_pair(embeddings, reference, ("embeddings", "reference"), distance)


def _label_side(value, n: int, name: str, against: str):
    """(kind, value) of one side's labels: "indicator", "sets" or "single" (a checked 1-D array)."""
    multi = multilabel_kind(value)
    if multi is None:
        return "single", as_labels(value, n, name, against)
    kind, value = multi
    if len(value) != n:
        raise ValueError(f"'{name}' must have one label set per row of '{against}' ({n}); got {len(value)}")
    return kind, value


def read_relevance(labels, reference_labels, queries, references, ignore, ignore_same, own=None):
    """(query labels or None, Relevance): single labels or label sets, and the ignore rules
    (``own``: each query's row in the reference, -1 for none, joins the ``ignore`` lists)."""
    leave_one_out = reference_labels is None
    q_kind, q_value = _label_side(labels, queries.shape[0], "labels", "embeddings")
    r_kind = r_value = None
    if not leave_one_out:
        r_kind, r_value = _label_side(reference_labels, references.shape[0], "reference_labels", "reference")
    if q_kind == "single" and r_kind in (None, "single"):
        query_labels, source = q_value, ClassLabels.from_labels(q_value, r_value)
    else:
        query_labels = None  # per-class averages are by class label: none for label sets
        source = read_multilabels(q_kind, q_value, r_kind, r_value, ("labels", "reference_labels"))
    n_q, n_r = queries.shape[0], references.shape[0]
    keys = None if ignore_same is None else read_keys(ignore_same, n_q, n_r)
    lists = with_own_rows(None if ignore is None else read_lists(ignore, n_q, n_r), own, n_r)
    rules = IgnoreRules.build(n_q, n_r, leave_one_out, keys, lists)
    return query_labels, Relevance.build(source, n_r, rules, own)


def nothing_evaluated(relevance: Relevance) -> str:
    labels = "label has" if isinstance(relevance.source, ClassLabels) else "labels have"
    ignored = "" if relevance.rules is None or _only_own(relevance) else ", or all of its relevant ones are ignored"
    return (
        f"no query was evaluated: every query's {labels} no other member in the reference set (R = 0){ignored}, "
        "so every summary value is NaN"
    )


def class_codes(relevance: Relevance):
    """(query codes, reference codes) of class labels, None for label sets."""
    source = relevance.source
    return (source.query_codes, source.reference_codes) if isinstance(source, ClassLabels) else None


def skip_reasons(relevance: Relevance, leave_one_out: bool, own_rows: bool = False, own_only: bool = False) -> tuple:
    """The skip reasons of a labelled evaluation, code 0 first: ``no_relevant`` (nothing relevant
    but, perhaps, the query's own row) and, where ignore rules other than the own row's exclusion
    exist, ``relevant_ignored``. ``own_rows``: queries name their rows by ``query_in_reference``;
    ``own_only``: that is the only ignore rule."""
    if own_rows:
        no_relevant = "no reference other than the query's own row shares " + (
            "its label (R = 0)" if isinstance(relevance.source, ClassLabels) else "a label with it (R = 0)"
        )
    elif isinstance(relevance.source, ClassLabels):
        no_relevant = (
            "no other embedding shares the query's label (R = 0)"
            if leave_one_out
            else "no reference shares the query's label (R = 0)"
        )
    else:
        no_relevant = (
            "no " + ("other embedding" if leave_one_out else "reference") + " shares a label with the query (R = 0)"
        )
    if relevance.rules is None or (leave_one_out and _only_own(relevance)) or own_only:
        return (("no_relevant", no_relevant),)
    return ("no_relevant", no_relevant), (
        "relevant_ignored",
        "every relevant reference is ignored (R = 0 after ignoring)",
    )


def _only_own(relevance: Relevance) -> bool:
    rules = relevance.rules
    return rules.query_keys is None and rules.indptr is None


def config(
    options: Options,
    relevance: Relevance,
    reference_shape,
    dim: int,
    leave_one_out: bool,
    searched: bool = True,
    ties=None,
) -> dict:
    source = relevance.source
    labels = (
        {"n_classes": int(source.classes.size)}
        if isinstance(source, ClassLabels)
        else {"labels": "multi-label", "n_labels": len(source.labels), "n_label_sets": int(source.bits.shape[0])}
    )
    return {
        "distance": options.distance,
        "mode": "leave-one-out" if leave_one_out else "separate reference set",
        "n_references": int(reference_shape[0]),
        ("n_bits" if options.distance == HAMMING else "dim"): int(dim),
        **labels,
        **route.search_settings(options, searched),
        **({} if relevance.rules is None or _only_own(relevance) else relevance.counts()),
    }


def conventions(
    distance: str, relevance: Relevance, leave_one_out: bool, own=None, own_only: bool = False, ties=None
) -> dict[str, str]:
    if isinstance(relevance.source, ClassLabels):
        relevant = "a reference is relevant when it shares the query's label; R counts them"
    else:
        relevant = (
            "multi-label: a reference is relevant when it shares at least one label with the query (binary: "
            "the number of shared labels is no grade); R counts them"
        )
    extra = {}
    if relevance.rules is not None and not _only_own(relevance):
        relevant += ", ignored references excluded"
        extra["ignore"] = relevance.rules.describe()
        if own is not None:
            named = (
                f"each query's own row of the reference, named by query_in_reference ({int((own >= 0).sum())} queries)"
            )
            extra["ignore"] = (
                f"ignored, removed by index (it takes no rank and does not count in R): {named}"
                if own_only
                else f"{extra['ignore']}; {named}, among the listed pairs"
            )
    elif leave_one_out:
        relevant += ", the query excluded"
    return {
        "recall": "metric-learning Recall@K (hit rate): a same-label reference in the top k",
        "relevance": relevant,
        **extra,
        "ties": route.describe_ties(ties, distance),
        "distance": "hamming: the number of differing bits of two binary codes" if distance == HAMMING else distance,
        "average": "summary = micro average over evaluated queries; per_class.macro = mean of class means"
        if isinstance(relevance.source, ClassLabels)
        else "summary = micro average over evaluated queries (no per-class averages for label sets)",
    }
