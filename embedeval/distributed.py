"""Evaluation on a Dask cluster: query blocks run on the workers, references sharded across them.

``embedeval.evaluate(..., client=client)`` ships each query block to a worker; the reference set
is cut into shards scattered over the workers, and only per-query metric arrays travel back, so
the numbers are those of a single process. dask.distributed is an optional extra
(``pip install 'embedeval[dask]'``). The implementation lives in
:mod:`embedeval._pipeline.cluster`; this module is its public face.
"""

from ._pipeline.cluster import DaskExecutor, DaskSearcher

__all__ = ["DaskExecutor", "DaskSearcher"]
