"""Float embeddings under a tie-aware rule: the ``ties=`` path of ``evaluate`` and ``evaluate_retrieval``.

Query blocks (prepared as the searchers prepare them) -> :class:`~embedeval._search.tied_scan.TiedScanner`
(each graded reference's exact float64 distance, and the references strictly nearer and exactly
as near) -> the tie groups of each query -> :func:`embedeval._pipeline.hamming_scan.values` (the expected
kernels, or each group split by grade for the optimistic/pessimistic orders). The block step,
the relevance sources and the ignore rules are the Hamming path's
(:func:`embedeval._pipeline.hamming_scan.evaluate_block`); only the scanner differs.

Tied means exactly equal float64 distances, by the formula that orders near-ties under the
index rule (:func:`embedeval._search.float64.exact_distance` on the float32 vectors as searched:
scaled by a power of two where needed, normalised for cosine): distances that are equal in
float32 but not in float64 are not ties, and the index rule's order is one of the orders that
these groups allow.
"""

from __future__ import annotations

import numpy as np

from .._inputs.arrays import prepare
from .._relevance import CodePart
from .._search.tied_scan import TiedScanner
from . import hamming_scan as _hamming

TIED = (
    "exactly equal float64 distances (squared euclidean distance or minus the inner product, computed in float64 "
    "from the float32 vectors as searched; equal in float32 but not in float64 is not tied)"
)
SEARCH = "exact: every reference's float64 distance counted around each graded reference's exact distance, in chunks"


def plan(options, queries, references, relevance, metrics, evaluated, n_workers, scanner=None):
    """The tie-aware route: ``(the Hamming path's block step, scanner, (rows, Job) per block)``;
    ``scanner`` (a :class:`TiedScanner` over the prepared ``references``) is made here unless
    given. With class labels the queries are blocked by class (each block reads the rows of few
    classes' members for its graded pairs' values); the values go back to each query's place."""
    if scanner is None:
        scanner = TiedScanner(prepare(np.asarray(references), options.distance), options.distance == "euclidean")
    part = relevance.source.query_part(evaluated) if relevance.shared.class_codes is not None else None
    if isinstance(part, CodePart):  # blocks of few classes: their members' rows stay in cache
        evaluated = evaluated[np.argsort(part.codes, kind="stable")]

    def read(rows):  # prepared as the searchers prepare them
        return np.ascontiguousarray(prepare(np.asarray(queries[rows]), options.distance), dtype=np.float32)

    planned = _hamming.jobs(read, relevance, evaluated, metrics, options.ties, options.block_size, n_workers)
    return _hamming.evaluate_block, scanner, planned
