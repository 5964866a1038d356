"""pytorch-metric-learning's metric names: accepted for embeddings as aliases of embedeval's names.

Results report the embedeval names. What each of ``AccuracyCalculator``'s metrics is, read from
its source (2.x), and the embedeval metric that equals it:

===============================  ==========================  ===========================================
PML                              embedeval                   PML's definition
===============================  ==========================  ===========================================
``precision_at_1``               ``precision@1``             same label as the nearest reference
``r_precision``                  ``r_precision``             same-label references among the R nearest / R
``mean_average_precision_at_r``  ``map@r``                   (1/R) sum_{i<=R} P(i) rel(i)
``mean_average_precision``       ``map``                     (1/R) sum_{i<=k} P(i) rel(i) over PML's k
                                                             nearest; with its default ``k=None`` k is
                                                             every reference, so it is ``map``; with an
                                                             int ``k`` it is ``map@k``
``mean_reciprocal_rank``         ``mrr``                     1 / rank of the first same-label reference
                                                             among the k nearest, 0 if none (default
                                                             ``k=None``: ``mrr``; an int k: ``mrr@k``)
``NMI``, ``AMI``                 ``pml_nmi``, ``pml_ami``    scikit-learn's scores (arithmetic mean) of
                                                             ``faiss.Kmeans(niter=20)`` of the queries
                                                             (embedeval's ``nmi``/``ami`` cluster from
                                                             k-means++ seeds with restarts instead)
===============================  ==========================  ===========================================

PML's ``k="max_bin_count"`` (k = the largest class's size) has no name here: ``map``/``mrr`` cut
at that depth are ``map@k``/``mrr@k`` with that k. Names are matched ignoring case, except
``NMI``/``AMI``: in capitals they are PML's (``pml_nmi``/``pml_ami``), in lower case embedeval's.
"""

from __future__ import annotations

import re

from .families import EMBEDDINGS

PML_NAMES = {
    "precision_at_1": "precision@1",
    "mean_average_precision_at_r": "map@r",
    "mean_average_precision": "map",
    "mean_reciprocal_rank": "mrr",
}
# PML's clustering scores, in PML's own capitals: lower-case ``nmi``/``ami`` are embedeval's.
PML_CLUSTERING = {"NMI": "pml_nmi", "AMI": "pml_ami"}

ALIASES = [
    (
        re.compile("|".join(PML_NAMES), re.IGNORECASE),
        lambda match: [PML_NAMES[match[0].lower()]],
        EMBEDDINGS,
    ),
    (re.compile("NMI|AMI"), lambda match: [PML_CLUSTERING[match[0]]], EMBEDDINGS),
]
