"""trec_eval 10's measures as its command line names, orders and prints them.

Each measure is printed in the order of :data:`ORDER` (trec_eval's own, whatever the order of
``-m``), as one value or one value per parameter:

=============  ==============================================================================
kind           printed
=============  ==============================================================================
``runid``      the run tag of the run's last line, summary only
``num_q``      the number of evaluated queries, summary only
``long``       an integer per query; the summary is the sum
``double``     ``%6.4f`` per query; the summary is the registry's summary of the measure: the
               mean, or for ``gm_map`` and ``gm_bpref`` (summary only) the geometric mean of
               the values floored at 1e-5
``cut``        one value per integer parameter, ``NAME_k`` (``P_10``), parameters sorted,
               ``atol``'s truncation (``ndcg_cut.23.4`` is ``ndcg_cut_23``)
``fcut``       one value per real parameter, ``NAME_%3.2f`` (``iprec_at_recall_0.10``)
``param``      one value, named ``NAME`` or, with parameters, ``NAME_PARAMS`` (``ndcg_1=3,2=9``)
``string``     a string per query, no summary (``relstring``, ``relstring_20``)
=============  ==============================================================================

The values come from embedeval's metric registry, asked under trec_eval's names: ``P_10``,
``iprec_at_recall_0.10``, ``Rprec_mult_0.20`` (one name per parameter), ``ndcg`` or
``ndcg.1=3,2=9`` (the measure and its ``-m`` parameters) and ``bpref`` (no parameters); the
counts ``num_ret``, ``num_rel`` and ``num_rel_ret`` come from the reader (what trec_eval counts
before any measure). A measure the registry does not know is named in an error, or, asked
through ``official``, ``all_trec`` or ``set``, left out with a warning.
"""

from __future__ import annotations

from dataclasses import dataclass

from .._metrics.trec_defaults import DEFAULTS
from .._metrics.trec_defaults import GROUP_MEASURES as _GROUPS
from .._metrics.trec_defaults import PREFERENCE_MEASURES as _PREFS

# the judgement format each measure reads (-R); runid and num_q read none
FORMAT_OF = {**dict.fromkeys(_PREFS, "prefs"), **dict.fromkeys(_GROUPS, "qrels_jg")}

# trec_eval's measures in its order; each prints as a "double" unless _KINDS says otherwise, and a
# measure of parameters (cut, fcut, string) without them prints DEFAULTS[name]
_QRELS_MEASURES = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P relstring recall "
    "infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg ndcg_rel Rndcg ndcg_cut map_cut "
    "relative_P success set_P set_relative_P set_recall set_map set_F num_nonrel_judged_ret"
).split()
ORDER = (*_QRELS_MEASURES, *_PREFS, *_GROUPS, "yaap", "rbp", "rbp_resid", "unj")
_KINDS = {
    "runid": "runid",
    "num_q": "num_q",
    **dict.fromkeys(("num_ret", "num_rel", "num_rel_ret"), "count"),
    **dict.fromkeys(("P", "recall", "ndcg_cut", "map_cut", "relative_P", "success", "P_avgjg", "unj"), "cut"),
    **dict.fromkeys(("iprec_at_recall", "Rprec_mult", "Rprec_mult_avgjg"), "fcut"),
    **dict.fromkeys(("utility", "11pt_avg", "dcg", "ideal_dcg", "ndcg", "set_F", "rbp", "rbp_resid"), "param"),
    "relstring": "string",
    **dict.fromkeys(("num_nonrel_judged_ret", *(name for name in _PREFS if "_num_" in name)), "long"),
}
_KIND = {name: (_KINDS.get(name, "double"), DEFAULTS.get(name)) for name in ORDER}
_OFFICIAL = "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
NICKNAMES = {
    "official": _OFFICIAL.split(),
    "all_trec": (
        f"{_OFFICIAL} relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg relative_P Rprec_mult "
        "success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall set_relative_P set_map set_F "
        "num_nonrel_judged_ret"
    ).split(),
    "set": "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F".split(),
    "all_prefs": ["runid", "num_q", *_PREFS],
    "prefs": ["runid", "num_q", *_PREFS[:6]],
    "qrels_jg": ["runid", "num_q", *_GROUPS],
}


@dataclass(frozen=True)
class Value:
    """One printed value: its trec_eval name, the registry name it is asked for (None: read from
    the counts; for a string, its length), and how it prints (the measure's kind)."""

    name: str
    metric: str | None
    kind: str
    measure: str  # the trec_eval measure it belongs to (P for P_10)


def _cutoffs(name: str, params: str, real: bool) -> list:
    """trec_eval's parameters of a cut measure: atol / atof of each, sorted, > 0 and distinct."""
    values = [float(p) if real else _atol(p) for p in params.split(",")]
    values.sort()
    if not real and values[0] <= 0:
        raise ValueError(f"-m {name}.{params}: cutoffs must be > 0 (trec_eval's 'Negative cutoff detected')")
    if len(set(values)) < len(values):
        raise ValueError(f"-m {name}.{params}: a cutoff is given twice")
    return values


def _atol(text: str) -> int:
    """C's ``atol``: the leading integer of ``text`` (``23.4`` is 23); ValueError for none."""
    digits = text.strip()
    end = 1 if digits[:1] in "+-" and digits[:1] else 0
    while end < len(digits) and digits[end].isdigit():
        end += 1
    try:
        return int(digits[:end])
    except ValueError:
        raise ValueError(f"a cutoff must be an integer; got {text!r}") from None


def marked(specs: list[str]) -> dict[str, tuple[str | None, bool]]:
    """{measure: (parameters or None, whether named by itself)} of the ``-m`` arguments; the first
    parameters given for a measure win, as in trec_eval. ValueError for an unknown name."""
    chosen: dict[str, tuple[str | None, bool]] = {}
    params_of: dict[str, str] = {}
    problems = []
    for spec in specs:
        name, dot, params = spec.partition(".")
        if dot:
            if not params:
                problems.append(f"-m {spec}: parameters are missing after '.'")
                continue
            params_of.setdefault(name, params)
        if name in NICKNAMES:
            for m in NICKNAMES[name]:
                chosen.setdefault(m, (None, False))
        elif name in _KIND:
            chosen[name] = (None, True)
        else:
            problems.append(f"-m {spec}: trec_eval has no measure or set of measures named {name!r}")
    if problems:
        raise ValueError("\n".join(problems))
    return {m: (params_of.get(m), own) for m, (_, own) in chosen.items()}


def values_of(name: str, params: str | None) -> list[Value]:
    """The values one measure prints, in order."""
    kind, default = _KIND[name]
    if kind in ("cut", "fcut"):
        cuts = _cutoffs(name, params, kind == "fcut") if params else list(default)
        names = [f"{name}_{c:3.2f}" if kind == "fcut" else f"{name}_{c}" for c in cuts]
        return [Value(n, n, "double", name) for n in names]
    if kind == "param":
        return [Value(f"{name}_{params}" if params else name, f"{name}.{params}" if params else name, "double", name)]
    if kind == "string":
        length = _atol(params.split(",")[0]) if params else default[0]
        return [Value(f"{name}_{params}" if params else name, str(length), kind, name)]
    if kind in ("runid", "num_q", "count"):
        return [Value(name, None, kind, name)]
    return [Value(name, name, kind, name)]


def selection(specs: list[str]) -> tuple[list[Value], set[str]]:
    """(the values to print, in trec_eval's order; the measures named by themselves in ``-m``)
    of the ``-m`` arguments (``official`` without any)."""
    chosen = marked(specs or ["official"])
    out = []
    for name in ORDER:
        if name in chosen:
            out += values_of(name, chosen[name][0])
    return out, {m for m, (_, own) in chosen.items() if own}
