"""Exact k-nearest-neighbour search: faiss proposes, float64 decides, ties go to the lower index.

Every searcher here answers ``search(queries, k, ignore=None)`` with each query's ``k``
nearest references, the references each query ignores (:class:`Ignored`: the query itself in
leave-one-out evaluation, junk, same-camera images) removed by index. All but
:class:`ApproximateSearcher` are *exact*: the ranking they return is the one a full stable sort
of float64 distances would give, references ordered by their distance to the query computed in
float64 from the (float32) input vectors, and references at equal distance by index, lower
first. It never depends on how queries are blocked, on thread counts, on the BLAS kernel faiss
happens to use, or on how the references are split into shards.

How exactness is reached
------------------------
faiss's flat search computes distances in float32 through BLAS, whose rounding depends on the
shape of each call, and among references tied at the k-th distance it keeps an arbitrary subset.
So each search gathers more candidates than needed (:class:`Candidates`), together with a
distance ``worst`` that no left-out reference beats, and uses a rigorous bound E on the error of
each gathered distance (|fl(d) - d| <= E for every reference):

* candidates whose gathered distances differ by more than 2E are in their true order;
* runs of candidates closer than that are recomputed in float64 and sorted by (distance, index);
* a query's top k is settled once such a gap lies after its k-th candidate (nothing left out can
  then come before it); a query that is not settled is searched again with twice as many;
* a query that ignores c references is ranked k + c deep this way, and its ignored references
  are then removed from that exact head by index.

With ``classes`` only the sequence of relevance classes is guaranteed (a run of one class is left
in faiss's order: :meth:`ExactSearcher.search`).

The bound and its preconditions
-------------------------------
E is :func:`~embedeval._search.error_bound.error_bound`, the one bound every exact path of
embedeval uses; its module holds the proof and the preconditions that
:mod:`embedeval._inputs.magnitude` and :func:`embedeval._inputs.arrays.prepare` establish for
every input. Here u = 2**-24 for faiss's float32 and t = d + 4 (squared euclidean) or d + 3
(inner product; cosine after normalisation).

Where the candidates come from
------------------------------
* :class:`FlatSearcher` (``flat.py``): one faiss flat index over the references in memory.
* the deep ranking (``deep.py`` and the ``deep_*`` modules): rankings deeper than a few hundred
  computed from float32 and float64 products against every reference, in blocks, with the same
  bound in each precision (``deep_exact.error_bounds``).
* :class:`ShardedSearcher` (``sharded.py``): shards of the references merged exactly, each kept
  as an index or, with ``stream=True``, rebuilt from a memory-mapped file at every search so
  the references never sit in memory.
* :class:`DeviceSearcher` (``device.py``): float64 distances to every reference computed on a
  :class:`Device` (GPUs through torch, never TF32), each query's top n kept there; its bound, the
  deep ranking's float64 one, also covers the CPU formula's own error, so its near-ties are
  decided as the CPU's are.
* :class:`embedeval._pipeline.cluster.DaskSearcher`: shards held by Dask workers.

Merging (:func:`merge`, ``candidates.py``) keeps, per query, the candidates of every shard that
are no farther than the nearest of the shards' ``worst`` distances. The ranking itself (the
bound, the runs and their ordering) is :class:`ExactSearcher` in ``ranking.py``; float64
recomputation is ``float64.py``. :meth:`embedeval._pipeline.options.Options.searcher` chooses among the searchers.
"""

from __future__ import annotations

from .approximate import ApproximateSearcher
from .candidates import Candidates, flat_index, from_index, merge
from .device import Device, DeviceSearcher, gpu_device
from .flat import FlatSearcher
from .ignored import Ignored
from .ranking import ExactSearcher
from .sharded import ShardedSearcher

__all__ = [
    "ApproximateSearcher",
    "Candidates",
    "Device",
    "DeviceSearcher",
    "ExactSearcher",
    "FlatSearcher",
    "Ignored",
    "ShardedSearcher",
    "flat_index",
    "from_index",
    "gpu_device",
    "merge",
]
