"""The set-level step of :func:`embedeval.evaluate`: clustering quality, pair verification and
geometry of the whole embedding set, each run only when a requested metric needs it.

:meth:`SetStep.check` refuses every impossible request before any work (label sets, ignore rules
with verification, no negative or no positive pair); :meth:`SetStep.run` computes the values and
says in ``config`` and ``conventions`` how.

What the three mean with a separate reference set (``reference=`` given):

* ``nmi``, ``ami``: k-means of the *query* embeddings into as many clusters as distinct query
  labels, scored against the query labels (pytorch-metric-learning's ``AccuracyCalculator``
  does the same); the reference set plays no part.
* verification: every (query, reference) pair is a trial, positive when the labels agree.
* ``pcf@r``: the covariance spectrum of the query embeddings.

In leave-one-out evaluation the queries are every embedding, and the verification trials are
the n (n - 1) / 2 pairs of distinct embeddings.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._inputs.arrays import prepare
from .._metrics.set_families import CLUSTERING, GEOMETRY, VERIFICATION, level_text
from .._relevance import ClassLabels, Relevance
from .clustering import kmeans
from .geometry import pcf
from .information import ami, nmi
from .kmeanspp import best_of_restarts
from .pairs import PairSpace, pair_counts
from .verification import CONVENTIONS as PAIR_CONVENTIONS
from .verification import Budgets, verify


def split(metrics) -> tuple[list, list]:
    """(per-query metrics, set-level metrics), each in the given order."""
    return [m for m in metrics if m.per_query], [m for m in metrics if not m.per_query]


def _names(metrics) -> str:
    return ", ".join(repr(m.name) for m in metrics)


@dataclass(frozen=True)
class SetStep:
    """The set-level metrics of one evaluation, checked against its labels and ignore rules.

    Attributes
    ----------
    metrics : tuple of Metric
        Set-level metrics only, in the requested order.
    query_codes, reference_codes : numpy.ndarray of shape (n_queries,) and (n_references,)
        Class codes in one coding; ``reference_codes`` is None in leave-one-out evaluation.
    """

    metrics: tuple
    query_codes: np.ndarray | None
    reference_codes: np.ndarray | None

    def of(self, need: str) -> list:
        return [m for m in self.metrics if m.spec.needs == need]

    @classmethod
    def check(cls, metrics, relevance: Relevance, leave_one_out: bool, ignoring: list[str]) -> SetStep:
        """Refuse what cannot be computed, before any work.

        Parameters
        ----------
        metrics : list of Metric
            The set-level metrics requested.
        relevance : Relevance
        leave_one_out : bool
        ignoring : list of str
            The arguments that set ignore rules beyond leave-one-out (``ignore``, ...).
        """
        if not metrics:
            return cls((), None, None)
        labelled = [m for m in metrics if m.spec.needs in (CLUSTERING, VERIFICATION)]
        source = relevance.source
        if labelled and not isinstance(source, ClassLabels):
            raise ValueError(
                f"'metrics' asks for {_names(labelled)}, which need one class label per item (clusters against "
                "classes, same-label pairs); got label sets"
            )
        if not labelled:
            return cls(tuple(metrics), None, None)
        step = cls(tuple(metrics), source.query_codes, None if leave_one_out else source.reference_codes)
        pairs = step.of(VERIFICATION)
        if pairs and ignoring:
            raise ValueError(
                f"'metrics' asks for {_names(pairs)}: pair verification scores every pair and applies no ignore "
                f"rule; got {', '.join(map(repr, ignoring))}: drop it, or ask for {_names(pairs)} in a call without it"
            )
        if pairs:
            step._check_pairs(pairs, source.classes)
        step._warn_trivial_clusters()
        return step

    def _check_pairs(self, pairs, classes: np.ndarray) -> None:
        q = self.query_codes
        n_pairs, positive = pair_counts(q, self.reference_codes)
        asks = f"'metrics' asks for {_names(pairs)}: pair verification needs"
        if n_pairs == 0:
            raise ValueError(f"{asks} at least two embeddings to pair; got {q.size}")
        if positive == n_pairs:
            label = classes[q[:1]].tolist()[0]
            raise ValueError(
                f"{asks} negative pairs (two items with different labels); got one class, every item labelled {label!r}"
            )
        if positive == 0:
            got = (
                f"each label on one embedding only ({q.size} embeddings, {q.size} labels)"
                if self.reference_codes is None
                else "no query label in 'reference_labels'"
            )
            raise ValueError(f"{asks} positive pairs (two items with the same label); got {got}")

    def _warn_trivial_clusters(self) -> None:
        clustered = self.of(CLUSTERING)
        if not clustered:
            return
        n_labels = np.unique(self.query_codes).size
        if n_labels == 1 or n_labels == self.query_codes.size:
            shape = "a single query label: one cluster" if n_labels == 1 else "every query label once: a cluster each"
            warnings.warn(
                f"{_names(clustered)}: k-means makes as many clusters as query labels, here {shape}, so NMI and "
                "AMI are 1 by convention and say nothing about the embeddings",
                UserWarning,
                stacklevel=4,
            )

    def run(self, queries: np.ndarray, references: np.ndarray, distance: str) -> tuple[dict, dict, dict, dict | None]:
        """(values, config, conventions) of the set-level metrics, and the verification's pair
        curves (:func:`~embedeval._setlevel.pair_curves.pair_curves`; None without verification)."""
        values, config, conventions = {}, {}, {}
        if not self.metrics:
            return values, config, conventions, None
        conventions["set-level metrics"] = (
            f"{_names(self.metrics)}: one number each for the whole set; no per-query values, class averages "
            "or bootstrap intervals"
        )
        if self.of(CLUSTERING):
            self._clustering(queries, distance, values, config, conventions)
        curves = None
        if self.of(VERIFICATION):
            curves = self._verification(queries, references, distance, values, config, conventions)
        if self.of(GEOMETRY):
            self._geometry(queries, distance, values, config, conventions)
        return {m.name: values[m.name] for m in self.metrics}, config, conventions, curves

    def _clustering(self, queries, distance, values, config, conventions) -> None:
        codes = self.query_codes
        n_clusters = int(np.unique(codes).size)
        scores = {"nmi": nmi, "ami": ami, "pml_nmi": nmi, "pml_ami": ami}
        families = {m.family for m in self.of(CLUSTERING)}
        normalised = ", rows L2-normalised" if distance == "cosine" else ""
        made = {}
        if families & {"nmi", "ami"}:
            x = prepare(queries, "cosine") if distance == "cosine" else np.ascontiguousarray(queries, np.float32)
            made["nmi"] = best = best_of_restarts(x, n_clusters)
            config["clustering"] = {**best.settings, "distance": distance, "n_items": int(codes.size)}
            conventions["clustering"] = (
                f"k-means of the {codes.size} query embeddings into {n_clusters} clusters (one per query label; "
                f"k-means++ seeds, {best.settings['n_init']} restarts seeded {best.settings['seed']} on, "
                f"{best.settings['niter']} Lloyd iterations each (faiss.Kmeans), the lowest objective kept"
                f"{normalised}); NMI and AMI against the query labels, arithmetic mean of the entropies, E[MI] exact"
            )
        if families & {"pml_nmi", "pml_ami"}:
            made["pml_nmi"] = pml = kmeans(queries, n_clusters, distance=distance)
            settings = pml.settings
            config["pml_clustering"] = {**settings, "n_items": int(codes.size)}
            conventions["pml_clustering"] = (
                f"pytorch-metric-learning's k-means of the {codes.size} query embeddings into {n_clusters} clusters "
                f"(faiss.Kmeans, seed {settings['seed']}, niter {settings['niter']}, nredo {settings['nredo']}, "
                f"max_points_per_centroid {settings['max_points_per_centroid']}, random initial centroids"
                f"{normalised}); pml_nmi and pml_ami against the query labels"
            )
        for m in self.of(CLUSTERING):
            clustering = made["pml_nmi" if m.family.startswith("pml_") else "nmi"]
            values[m.name] = scores[m.family](codes, clustering.assignment)

    def _verification(self, queries, references, distance, values, config, conventions) -> dict:
        metrics = self.of(VERIFICATION)
        levels = list(dict.fromkeys(m.level for m in metrics if m.level is not None))
        within = self.reference_codes is None
        budgets = Budgets()
        space = PairSpace(
            queries, self.query_codes, None if within else references, self.reference_codes, distance, budgets.tile_rows
        )
        result = verify(space, levels, distance, budgets)
        plain = {"eer": result.eer, "pair_auroc": result.auroc}
        for m in metrics:
            if m.level is None:
                values[m.name] = plain[m.family]
            else:  # tar@far=x is 1 - fnmr@fmr=x: FAR and FMR are one rate under two names
                fnmr = result.fnmr_at_fmr[m.level]
                values[m.name] = fnmr if m.family == "fnmr" else 1.0 - fnmr
        pairs = "every pair of distinct embeddings (i < j)" if within else "every (query, reference) pair"
        config["verification"] = {
            "pairs": pairs,
            "n_positive_pairs": result.n_positive,
            "n_negative_pairs": result.n_negative,
            **({"fmr_attained": {level_text(x): v for x, v in result.fmr_attained.items()}} if levels else {}),
        }
        conventions["verification"] = (
            f"{pairs} is a trial, positive when both have the same label; "
            f"{PAIR_CONVENTIONS['threshold']}; distance: {PAIR_CONVENTIONS['distance']}; the FMR attained at each "
            "level is in config['verification'] (below the level when ties or few negative pairs force it)"
        )
        return result.curves

    def _geometry(self, queries, distance, values, config, conventions) -> None:
        metrics = self.of(GEOMETRY)
        shares = pcf(queries, [m.level for m in metrics], cosine=distance == "cosine")
        for m in metrics:
            values[m.name] = shares[m.level]
        config["geometry"] = {"n_items": int(queries.shape[0]), "dim": int(queries.shape[1])}
        conventions["geometry"] = (
            "pcf: eigenvalues of the sample covariance of the query embeddings"
            + (" (rows L2-normalised, as searched)" if distance == "cosine" else "")
            + ", accumulated in float64"
        )
