"""Set-level metrics in the registry: numbers of the whole embedding set, not means over queries.

Clustering quality (``nmi``, ``ami``), pair verification (``fnmr@fmr=x``, ``tar@far=x``, ``eer``,
``pair_auroc``) and geometry (``pcf@r``) are one number each for the whole set. Each family is
declared once in :data:`SET_FAMILIES` with what it needs (a k-means clustering, a pass over every
pair, the covariance spectrum: the work runs only when a requested metric needs it, as
pytorch-metric-learning's ``requires_clustering``), its parameter, its definition and why it has
no bootstrap interval. :mod:`embedeval._metrics.registry` parses their names beside the per-query families;
:mod:`embedeval._setlevel.steps` computes them.

Grammar of the parameter, after ``@``: a decimal number (``0.001``, ``1e-3``, ``.5``), written
after ``fmr=`` / ``far=`` for verification levels. Canonical names use the shortest decimal
that reads back as the same float (Python's ``repr``, exponent without padding): ``1e-3`` ->
``0.001``, ``1e-5`` -> ``1e-5``, ``pcf@1.0`` -> ``pcf@1``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

CLUSTERING, VERIFICATION, GEOMETRY = "clustering", "verification", "geometry"

_NUMBER = re.compile(r"(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?")


@dataclass(frozen=True)
class Parameter:
    """What a set-level family takes after ``@``: a level in an interval."""

    name: str  # named in errors: "fmr", "far", "share"
    prefix: str  # written before the number: "fmr=", "far=", ""
    meaning: str  # "a false match rate"
    closed_above: bool  # whether 1 itself is allowed
    example: str  # "1e-3"

    @property
    def interval(self) -> str:
        return "(0, 1]" if self.closed_above else "(0, 1)"

    def read(self, raw: str, family: str, text: str) -> float:
        """The level in ``text`` (what follows ``@`` in the name ``raw``); ValueError naming the rule."""
        if not text.startswith(self.prefix):
            raise ValueError(
                f"metric {raw!r} takes {self.meaning} written as '{family}@{self.prefix}x', "
                f"e.g. '{family}@{self.prefix}{self.example}'"
            )
        number = text[len(self.prefix) :]
        value = float(number) if _NUMBER.fullmatch(number) else math.nan
        if not (0 < value < 1 or (self.closed_above and value == 1)):
            raise ValueError(
                f"'{self.name}' in metric {raw!r} must be a number in the interval {self.interval} "
                f"({self.meaning}); got {number!r}"
            )
        return value


def level_text(value: float) -> str:
    """The canonical spelling of a level: ``0.001``, ``1e-5``, ``0.5``, ``1``."""
    text = repr(float(value)).removesuffix(".0")
    mantissa, e, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if e else text


@dataclass(frozen=True)
class SetFamily:
    """One set-level metric family.

    Attributes
    ----------
    needs : str
        CLUSTERING, VERIFICATION or GEOMETRY: the work that computes it.
    definition : str
        With ``{x}`` standing for the parameter's value, where it has one.
    no_interval : str
        Why :func:`embedeval.stats.bootstrap` gives it no interval.
    parameter : Parameter or None
    """

    needs: str
    definition: str
    no_interval: str
    parameter: Parameter | None = None

    def name(self, family: str, level: float | None) -> str:
        if self.parameter is None:
            return family
        return f"{family}@{self.parameter.prefix}{level_text(level)}"

    def pattern(self, family: str) -> str:
        """The name pattern, ``x`` standing for the parameter: ``nmi``, ``fnmr@fmr=x``."""
        return family if self.parameter is None else f"{family}@{self.parameter.prefix}x"


_FMR = Parameter("fmr", "fmr=", "a false match rate", False, "1e-3")
_FAR = Parameter("far", "far=", "a false accept rate", False, "1e-3")
_SHARE = Parameter("share", "", "a share of the variance", True, "0.5")

_CLUSTERS = (
    "the k-means clusters of the query embeddings, one per query label: k-means++ seeds, 5 restarts, the lowest "
    "objective kept (see conventions['clustering'])"
)
_PML_CLUSTERS = (
    "pytorch-metric-learning's k-means of the query embeddings, one cluster per query label: faiss.Kmeans, one run "
    "from random centroids, seed 1234, niter 20 (its NMI/AMI; see conventions['pml_clustering'])"
)
_PAIRS = "positive pair = same label, negative = different labels (pairs and ties: conventions['verification'])"
_NO_CLUSTER_INTERVAL = (
    "one k-means clustering of the whole set: resampling items with replacement duplicates points and changes "
    "the clustering itself, and the k-means seed moves the value too (rerun with other seeds for its spread)"
)
_NO_PAIR_INTERVAL = (
    "the pairs share items and are not independent; an honest interval resamples items or classes and "
    "recomputes every pair per replicate (n^2 work each)"
)

SET_FAMILIES: dict[str, SetFamily] = {
    "nmi": SetFamily(
        CLUSTERING,
        f"NMI = MI(labels, clusters) / ((H(labels) + H(clusters)) / 2) for {_CLUSTERS}",
        _NO_CLUSTER_INTERVAL,
    ),
    "ami": SetFamily(
        CLUSTERING,
        "AMI = (MI - E[MI]) / ((H(labels) + H(clusters)) / 2 - E[MI]), E[MI] exact (hypergeometric model, "
        f"Vinh et al. 2010) for {_CLUSTERS}",
        _NO_CLUSTER_INTERVAL,
    ),
    "pml_nmi": SetFamily(CLUSTERING, f"NMI as nmi, for {_PML_CLUSTERS}", _NO_CLUSTER_INTERVAL),
    "pml_ami": SetFamily(CLUSTERING, f"AMI as ami, for {_PML_CLUSTERS}", _NO_CLUSTER_INTERVAL),
    "fnmr": SetFamily(
        VERIFICATION,
        "FNMR at FMR <= {x}: share of positive pairs rejected at the largest distance threshold that accepts at "
        f"most a share {{x}} of the negative pairs; {_PAIRS}",
        _NO_PAIR_INTERVAL,
        _FMR,
    ),
    "tar": SetFamily(
        VERIFICATION,
        "TAR at FAR <= {x} = 1 - fnmr@fmr={x}: share of positive pairs accepted at the largest distance "
        f"threshold that accepts at most a share {{x}} of the negative pairs; {_PAIRS}",
        _NO_PAIR_INTERVAL,
        _FAR,
    ),
    "eer": SetFamily(
        VERIFICATION,
        f"equal error rate: the FMR where the pair ROC, straight segments between its points, crosses FMR = FNMR; "
        f"{_PAIRS}",
        _NO_PAIR_INTERVAL,
    ),
    "pair_auroc": SetFamily(
        VERIFICATION,
        "area under the pair ROC = P(d_negative > d_positive) + P(d_negative = d_positive) / 2 over all "
        f"(positive, negative) pairs of pairs; {_PAIRS}",
        _NO_PAIR_INTERVAL,
    ),
    "pcf": SetFamily(
        GEOMETRY,
        "principal components fraction (OML's pcf) = n / d, n the fewest principal components of the query "
        "embeddings that explain more than a share {x} of their variance (at most d)",
        "a property of the whole set's covariance, not a mean over queries",
        _SHARE,
    ),
}


def set_valid_names() -> list[str]:
    """The name patterns of the set-level families, in registry order."""
    return [spec.pattern(family) for family, spec in SET_FAMILIES.items()]


def no_interval_reasons(names) -> dict[str, list[str]]:
    """``{reason: [metric names]}``: why each set-level metric (canonical names) has no bootstrap interval."""
    reasons: dict[str, list[str]] = {}
    for name in names:
        family = name.partition("@")[0]
        reason = SET_FAMILIES[family].no_interval if family in SET_FAMILIES else "no per-query values"
        reasons.setdefault(reason, []).append(name)
    return reasons


def parse_level(raw: str, family: str, text: str | None) -> float | None:
    """The parameter of set-level metric ``raw`` (``text``: what follows ``@``, None without ``@``)."""
    spec = SET_FAMILIES[family]
    parameter = spec.parameter
    if parameter is None:
        if text is not None:
            raise ValueError(f"metric {raw!r} takes no parameter; write '{family}'")
        return None
    if text is None:
        raise ValueError(
            f"metric {raw!r} needs {parameter.meaning}, as in '{family}@{parameter.prefix}{parameter.example}'"
        )
    return parameter.read(raw, family, text)
