"""Clustering quality: k-means of the embeddings into as many clusters as classes, scored by
NMI and AMI (:mod:`embedeval._setlevel.information`).

The k-means is faiss's, seeded, with pytorch-metric-learning's settings by default, so that
``nmi``/``ami`` here and PML's ``NMI``/``AMI`` agree on the same embeddings.
Against pytorch-metric-learning's ``AccuracyCalculator`` (``NMI``, ``AMI``): it clusters the
*query* embeddings, as handed to it, into as many clusters as there are distinct query labels with
``faiss.Kmeans(d, k, niter=20)`` (faiss defaults otherwise: seed 1234, one run, random initial
centroids, at most 256 training points per centroid), assigns each embedding to its nearest
centroid, and scores with scikit-learn (arithmetic mean). :func:`kmeans` with its defaults, scored
by :func:`~embedeval._setlevel.information.nmi` and ``ami``, gives the same clusters and scores. Differences: PML
casts labels to float32 (integer labels beyond 2**24 can merge there, not here); PML never
normalises (here ``distance="cosine"`` clusters the L2-normalised rows, as embedeval searches
them); and PML runs faiss's GPU k-means when a GPU is present, whose rounding can change clusters.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import faiss
import numpy as np

from .._inputs.arrays import prepare

# pytorch-metric-learning's AccuracyCalculator: FaissKMeans(niter=20), faiss's other defaults.
PML_KMEANS = {"niter": 20, "nredo": 1, "seed": 1234, "max_points_per_centroid": 256}


@dataclass(frozen=True)
class KMeans:
    """A k-means clustering and everything needed to reproduce it.

    Attributes
    ----------
    assignment : numpy.ndarray of shape (n,), int64
        The cluster of each embedding (its nearest centroid, faiss float32 L2 search).
    centroids : numpy.ndarray of shape (n_clusters, d), float32
    objective : float
        Sum of squared distances to the assigned centroids after the last iteration (faiss's).
    settings : dict
        Implementation, faiss version, n_clusters, seed, niter, nredo, max_points_per_centroid,
        distance and whether rows were L2-normalised: what a result should record.
    """

    assignment: np.ndarray
    centroids: np.ndarray
    objective: float
    settings: dict = field(default_factory=dict)


def kmeans(
    embeddings,
    n_clusters: int,
    *,
    seed: int = PML_KMEANS["seed"],
    niter: int = PML_KMEANS["niter"],
    nredo: int = PML_KMEANS["nredo"],
    max_points_per_centroid: int = PML_KMEANS["max_points_per_centroid"],
    distance: str = "euclidean",
) -> KMeans:
    """Seeded k-means of the embeddings with ``faiss.Kmeans``; defaults are PML's.

    pytorch-metric-learning's ``AccuracyCalculator`` clusters the query embeddings into as many
    clusters as there are distinct query labels with ``faiss.Kmeans(d, k, niter=20)`` and faiss's
    other defaults (seed 1234, nredo 1, random initial centroids, at most 256 points per centroid
    sampled for training), then assigns each embedding to its nearest centroid. With the same
    settings and the same float32 embeddings, this function returns the same assignment.

    Parameters
    ----------
    embeddings : numpy.ndarray of shape (n, d), float32
        As the entry point checked them (finite; under cosine, no zero row).
    n_clusters : int
        1 <= n_clusters <= n (an evaluation asks for one cluster per query label).
    seed : int
        faiss's random seed (initial centroids, training subsample), 0 <= seed < 2**31.
    niter, nredo : int
        Lloyd iterations; independent runs (seeds ``seed + i``), the lowest objective kept.
    max_points_per_centroid : int
        faiss trains on a seeded sample of ``n_clusters * max_points_per_centroid`` points when
        there are more.
    distance : {"euclidean", "inner_product", "cosine"}
        k-means minimises squared euclidean distances; for "cosine" the rows are L2-normalised
        first (as embedeval searches them), for "euclidean" and "inner_product" they are
        clustered as given (PML clusters whatever embeddings it is handed, unnormalised).

    Returns
    -------
    KMeans

    Notes
    -----
    Reproducible for a given seed, faiss version and thread count: faiss's assignment step is a
    float32 BLAS search, whose rounding (and so a point equidistant from two centroids) can
    depend on the BLAS kernel. faiss's warning about fewer than 39 points per centroid is
    silenced (``min_points_per_centroid=1``); that setting changes nothing else.
    """
    x = prepare(embeddings, "cosine") if distance == "cosine" else np.ascontiguousarray(embeddings, np.float32)
    settings = {
        "implementation": "faiss.Kmeans",
        "faiss_version": faiss.__version__,
        "n_clusters": n_clusters,
        "seed": seed,
        "niter": niter,
        "nredo": nredo,
        "max_points_per_centroid": max_points_per_centroid,
        "init": "random",
        "distance": distance,
        "normalised": distance == "cosine",
    }
    params = {"niter": niter, "nredo": nredo, "seed": seed, "max_points_per_centroid": max_points_per_centroid}
    return faiss_kmeans(x, n_clusters, settings, **params)


def faiss_kmeans(x: np.ndarray, k: int, settings: dict, init: np.ndarray | None = None, **params) -> KMeans:
    """``faiss.Kmeans`` of ``x`` into ``k`` clusters with ``params``, from the initial centroids
    ``init`` (None: faiss's random ones), each point assigned to its nearest final centroid by the
    index faiss leaves (as PML reads them); its objective is faiss's."""
    km = faiss.Kmeans(x.shape[1], k, min_points_per_centroid=1, **params)
    objective = km.train(x, init_centroids=init)
    _, assignment = km.index.search(x, 1)
    return KMeans(assignment.ravel().astype(np.int64), km.centroids.copy(), float(objective), settings)
