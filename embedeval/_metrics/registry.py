"""Metric names parsed against the registry (:mod:`embedeval._metrics.families`), and the one dispatch to kernels.

A metric name is a family and an optional cutoff (``precision@5``, ``map@r``, ``fnmr@fmr=0.001``).
:func:`parse_metrics` turns names into :class:`Metric` objects, checked against the declarations of
:data:`~embedeval._metrics.families.FAMILIES` (per-query families) and
:data:`~embedeval._metrics.set_families.SET_FAMILIES` (set-level ones); :class:`Needs` reads what a list of
metrics needs from the ranking, and :func:`per_query_values` is where every input form meets the
kernels. The declarations' names are re-exported here for the modules that read both.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import kernels as K
from . import pml_names as _pml_names
from . import tool_names as _tool_names
from . import trec_groups as _trec_groups
from . import trec_names as _trec_names
from .families import ALL_HITS as ALL_HITS
from .families import DEFAULT_EMBEDDING_METRICS as DEFAULT_EMBEDDING_METRICS
from .families import DEFAULT_RANKING_METRICS as DEFAULT_RANKING_METRICS
from .families import EMBEDDINGS as EMBEDDINGS
from .families import FAMILIES as FAMILIES
from .families import FIRST_HIT as FIRST_HIT
from .families import JUDGEMENT_GROUPS as JUDGEMENT_GROUPS
from .families import MUSGRAVE_METRICS as MUSGRAVE_METRICS
from .families import PREFERENCES as PREFERENCES
from .families import R_ITEMS, Family, name_patterns
from .families import RANKINGS as RANKINGS
from .set_families import SET_FAMILIES, SetFamily, level_text, parse_level, set_valid_names


@dataclass(frozen=True)
class Metric:
    """A parsed metric name: a family, its cutoff (an int ``k``, or ``at_r``: the query's R, or
    neither) and the input form that gives it its meaning."""

    family: str
    k: int | None = None
    form: str = EMBEDDINGS
    at_r: bool = False
    level: float | None = None  # a set-level metric's parameter: 0.001 in fnmr@fmr=0.001
    param: str | None = None  # a parameterised family's parameter text: 0.1 in iprec_at_recall@0.1

    @property
    def per_query(self) -> bool:
        """Whether the metric has a value per query (a kernel over hits); a set-level metric
        (:data:`~embedeval._metrics.set_families.SET_FAMILIES`) is one number for the whole set."""
        return self.family in FAMILIES

    @property
    def name(self) -> str:
        """The canonical name, under which results report the metric."""
        if not self.per_query:
            return SET_FAMILIES[self.family].name(self.family, self.level)
        if self.at_r:
            return f"{self.family}@r"
        if self.param is not None:
            return f"{self.family}@{self.param}"
        return self.family if self.k is None else f"{self.family}@{self.k}"

    @property
    def spec(self) -> Family | SetFamily:
        return FAMILIES[self.family] if self.per_query else SET_FAMILIES[self.family]

    @property
    def definition(self) -> str:
        if not self.per_query:
            return self.spec.definition.format(x=None if self.level is None else level_text(self.level))
        return self.spec.r_definition if self.at_r else self.spec.forms[self.form].definition

    @property
    def uncut(self) -> str | None:
        """What the metric needs from the whole ranking: None when it has a cutoff (or no ranking)."""
        return None if self.k is not None or self.at_r or not self.per_query else self.spec.uncut

    @property
    def needs_r(self) -> bool:
        """Whether the ranking must be at least R deep."""
        return self.at_r or self.uncut == R_ITEMS

    @property
    def radius(self) -> int | None:
        """The Hamming radius of a radius family (``precision_radius@2``: 2), else None."""
        return self.k if self.spec.radius else None

    def cutoff(self, n_relevant: np.ndarray, within: np.ndarray | None = None):
        """The kernel's cutoff: the int k, the per-query R, or None for the whole ranking; for a
        radius family, the per-query count of references within the radius, read from
        ``within`` (shape (n_queries, d + 1): column t counts the references at distance <= t)."""
        if self.param is not None:
            return self.spec.param(self.param)
        if self.spec.radius:
            if within is None:
                raise ValueError(
                    f"{self.name!r} needs Hamming distances: evaluate binary codes with distance='hamming'"
                )
            return within[:, min(self.k, within.shape[1] - 1)]
        return n_relevant if self.at_r else self.k

    def values(self, hits: K.Hits, within: np.ndarray | None = None) -> np.ndarray:
        """Per-query values, array of shape (n_queries,) (``within``: see :meth:`cutoff`)."""
        return self.spec.forms[self.form].kernel(hits, self.cutoff(hits.n_relevant, within))


def per_query_values(metrics, hits: K.Hits, within: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Each metric's per-query values: the one place every input form meets the kernels."""
    return {m.name: m.values(hits, within) for m in metrics}


@dataclass(frozen=True)
class Needs:
    """What a list of metrics needs from each query's ranking, read off their declarations."""

    k: int  # the largest int cutoff (0 if none)
    r: bool  # rank at least R deep
    first_hit: bool  # rank until the first relevant item is found
    all_hits: bool  # rank until every relevant item is found
    radius: int = -1  # the largest Hamming radius (-1 if none): rank every reference within it

    @classmethod
    def of(cls, metrics) -> Needs:
        return cls(
            max([m.k for m in metrics if m.k is not None and not m.spec.radius], default=0),
            any(m.needs_r for m in metrics),
            any(m.uncut == FIRST_HIT for m in metrics),
            any(m.uncut == ALL_HITS for m in metrics),
            max([m.radius for m in metrics if m.spec.radius], default=-1),
        )

    @property
    def whole_ranking(self) -> bool:
        """Whether some metric may need the ranking to its very end."""
        return self.first_hit or self.all_hits

    def depth(self, n_relevant: np.ndarray, n_rankable: int) -> np.ndarray:
        """How deep each query must be ranked, before the whole-ranking conditions."""
        depth = np.full(n_relevant.shape, max(self.k, 1), dtype=np.int64)
        if self.r:
            depth = np.maximum(depth, n_relevant)
        return np.minimum(depth, n_rankable)


def valid_names(form: str) -> list[str]:
    """The name patterns a form accepts, in registry order (set-level metrics last, embeddings only)."""
    names = [name for family, spec in FAMILIES.items() if form in spec.forms for name in name_patterns(family)]
    return names + (set_valid_names() if form == EMBEDDINGS else [])


# The largest cutoff k: a billion ranked items per query is beyond any ranking held in memory,
# and the bound keeps k far inside int64 (ranking depths) and float64's exact integers (P@k's k).
MAX_K = 10**9

_NAME = re.compile(r"^(?P<family>[a-z_0-9]+?)(?:@(?P<cut>[^@]*))?$")

# Other tools' metric names, each mapped to embedeval names: (pattern on the stripped name,
# function of the match giving one or more canonical names, form or None for every form). A
# name is looked up here first; results always report the canonical names.
ALIASES: list[tuple[re.Pattern, Callable[[re.Match], list[str]], str | None]] = [
    *_trec_names.ALIASES,
    *_trec_groups.ALIASES,
    *_pml_names.ALIASES,
    *_tool_names.ALIASES,
]


def expand_aliases(raw: str, form: str) -> list[str]:
    """The embedeval names that ``raw`` stands for: itself unless another tool's name matches."""
    text = raw.strip()
    for pattern, names, alias_form in ALIASES:
        match = pattern.fullmatch(text)
        if match and alias_form in (None, form):
            return names(match)
    return [raw]


def _radius(raw: str, cut: str) -> int:
    """The Hamming radius of a radius family's name: an int >= 0."""
    if not (cut.isascii() and cut.isdigit()):
        raise ValueError(f"the Hamming radius in metric {raw!r} must be an int >= 0; got {cut!r}")
    if int(cut) > MAX_K:
        raise ValueError(f"the Hamming radius in metric {raw!r} must be at most {MAX_K:_}; got {cut.lstrip('0')}")
    return int(cut)


_CUT = re.compile(r"^(?P<head>.*?[@_.])(?P<cut>[-+]?[0-9]*[.eE][-+0-9.eE]*|-[0-9]+)$")


def _unknown(raw: str, family: str | None, cut: str | None, form: str) -> str:
    """Why ``raw`` is no metric of ``form``: a cutoff that is not an int (``P_1.5``: the rule is
    named), or an unknown name, with the nearest known one (difflib) when one is close."""
    match = _CUT.match(raw.strip())
    if match:
        try:
            parse_metrics([match["head"] + "1"], form)
        except ValueError:
            pass
        else:
            return f"the cutoff in metric {raw!r} must be an int >= 1; got {match['cut']!r}"
    names = [f for f, spec in FAMILIES.items() if form in spec.forms] + (
        list(SET_FAMILIES) if form == EMBEDDINGS else []
    )
    near = difflib.get_close_matches(family or raw.strip().lower(), names, n=1, cutoff=0.7)
    hint = ""
    if near:
        hint = f"; did you mean {near[0] + ('' if cut is None else '@' + cut)!r}?"
    else:
        hint = _near_alias(raw, form)
    return f"unknown metric {raw!r} for {form}{hint}; valid metrics are: {', '.join(valid_names(form))}"


def _near_alias(raw: str, form: str) -> str:
    """ "; did you mean ..." with the other tool's name (``R_cap@10``) nearest ``raw``, or ""."""
    digits = re.search(r"[0-9]+$", raw.strip())
    names = _tool_names.near_names(form, digits[0] if digits else "k")
    near = difflib.get_close_matches(raw.strip().lower(), names, n=1, cutoff=0.7)
    return f"; did you mean {names[near[0]]}?" if near else ""


def _uncut(raw: str, family: str, spec: Family, form: str) -> Metric:
    """A family named without a cutoff or parameter: valid where it takes none."""
    if "none" not in spec.cutoffs:
        if spec.radius:
            raise ValueError(f"metric {raw!r} needs a Hamming radius, as in '{family}@2'")
        if spec.param is not None:
            raise ValueError(f"metric {raw!r} needs a parameter, as in '{family}@0.5'")
        raise ValueError(f"metric {raw!r} needs a cutoff, as in '{family}@10'")
    return Metric(family, None, form)


def _with_param(raw: str, family: str, spec: Family, cut: str, form: str) -> Metric:
    """A parameterised family's metric; the parameter is checked by the family's parser."""
    try:
        spec.param(cut)
    except ValueError as exc:
        raise ValueError(f"metric {raw!r}: {exc}") from None
    return Metric(family, None, form, param=cut.strip())


def parse_metric(raw, form: str) -> Metric:
    """Parse one metric name, a str (case and surrounding spaces ignored); ValueError if unknown."""
    match = _NAME.match(raw.strip().lower())
    family, cut = (match["family"], match["cut"]) if match else (None, None)
    if family in SET_FAMILIES and form == EMBEDDINGS:
        return Metric(family, None, form, level=parse_level(raw, family, cut))
    spec = FAMILIES.get(family)
    if spec is None or form not in spec.forms:
        raise ValueError(_unknown(raw, family, cut, form))
    if cut is None:
        return _uncut(raw, family, spec, form)
    if spec.cutoffs == frozenset({"none"}):
        raise ValueError(f"metric {raw!r} takes no cutoff; write '{family}'")
    if spec.param is not None:
        return _with_param(raw, family, spec, cut, form)
    if spec.radius:
        return Metric(family, _radius(raw, cut), form)
    if cut == "r" and "r" in spec.cutoffs:
        return Metric(family, None, form, at_r=True)
    if not (cut.isascii() and cut.isdigit()) or int(cut) < 1:
        raise ValueError(f"'k' in metric {raw!r} must be an int >= 1; got {cut!r}")
    if int(cut) > MAX_K:
        raise ValueError(f"'k' in metric {raw!r} must be at most {MAX_K:_} (10^9); got {cut.lstrip('0')}")
    return Metric(family, int(cut), form)


def parse_metrics(metrics, form: str) -> list[Metric]:
    """Parse metric names, drop repeats (keeping the first), and reject unknown ones.

    Parameters
    ----------
    metrics : str or sequence of str
        Names such as ``"precision@1"``, ``"recall@10"``, ``"r_precision"``, ``"map@r"``.
        Case and surrounding spaces are ignored; ``"recall@010"`` is ``"recall@10"``.
    form : {"embeddings", "rankings"}
        The input form, which decides what ``recall@k`` means and which metrics apply.

    Returns
    -------
    list of Metric
        In the given order, one per canonical name.
    """
    if isinstance(metrics, str):
        metrics = [metrics]
    try:
        items = list(metrics)
    except TypeError:
        raise TypeError(
            f"'metrics' must be a metric name or a sequence of names; got {type(metrics).__name__}"
        ) from None
    if not items:
        raise ValueError("'metrics' must name at least one metric; got an empty sequence")
    parsed: dict[str, Metric] = {}
    for raw in items:
        if not isinstance(raw, str):
            raise TypeError(f"'metrics' entries must be strings; got {raw!r}")
        for name in expand_aliases(raw, form):
            metric = parse_metric(name, form)
            parsed.setdefault(metric.name, metric)
    return list(parsed.values())
