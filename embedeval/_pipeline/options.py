"""The checked options of an embedding evaluation: what it scores with, and how it runs.

:class:`Options` is built by keyword only, from the entry point's arguments, and travels as one
object through the pipeline (route, searcher, executor, scans). The execution settings are
declared once, here, as its fields: :func:`embedeval.evaluate` and
:func:`embedeval.evaluate_retrieval` spell each one out in their signatures for their users and
hand them over with :meth:`Options.from_arguments`, which picks exactly these names.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from .._core.progress import reporter
from .._inputs.arrays import DISTANCES, check_choice, check_positive_int
from .._inputs.codes import HAMMING
from .._metrics.registry import ALL_HITS, FIRST_HIT
from .._search import ApproximateSearcher, Device, DeviceSearcher, FlatSearcher, ShardedSearcher, gpu_device
from .._search.sharded import default_shard_size
from .cluster import DaskSearcher
from .executors import Sequential, Threads, default_threads


@dataclass(frozen=True, kw_only=True)
class Options:
    """What an evaluation scores with (``distance``, ``ties``) and how it runs (the rest).

    Attributes
    ----------
    distance : {"euclidean", "cosine", "inner_product", "hamming"}
    ties : {None, "expected", "optimistic", "pessimistic"}
        None is the index rule (references at equal distance ranked by index).
    block_size, n_threads, progress, shard_size, stream_reference, client, index, index_params,
    device, check_sample, seed, keep_neighbors
        The execution settings of :func:`embedeval.evaluate`, with its defaults. ``device`` is
        ``"cpu"`` or a :class:`~embedeval._search.Device` once checked (``"gpu"`` becomes one).
    """

    distance: str
    ties: str | None = None
    block_size: int | None = None
    n_threads: int | None = None
    progress: object = None
    shard_size: int | None = None
    stream_reference: bool = False
    client: object = None
    index: str = "flat"
    index_params: str | None = None
    device: str | Device = "cpu"
    check_sample: int = 1000
    seed: int = 0
    keep_neighbors: int | None = None

    @classmethod
    def from_arguments(cls, metrics, arguments: dict) -> Options:
        """The checked options among an entry point's ``arguments`` (its ``locals()``): every
        field of this class found there by name, the rest ignored."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls.check(metrics, **{name: value for name, value in arguments.items() if name in names})

    @classmethod
    def check(cls, metrics, **settings) -> Options:
        """Every option checked, and every conflict refused, before any work (keywords only)."""
        raw = cls(**settings)
        raw = dataclasses.replace(raw, distance=check_choice(raw.distance, "distance", (*DISTANCES, HAMMING)))
        _refuse_what_the_scans_do_not_do(raw, metrics)
        checked = {}
        for name in ("block_size", "n_threads", "shard_size"):
            if getattr(raw, name) is not None:
                checked[name] = check_positive_int(getattr(raw, name), name)
        checked["device"] = _check_device(raw)
        checked["progress"] = reporter(raw.progress)
        if raw.keep_neighbors is not None:
            checked["keep_neighbors"] = _check_kept(raw)
        if raw.index != "flat":
            _check_approximate(raw, metrics)
            checked["check_sample"] = check_positive_int(raw.check_sample, "check_sample")
        return dataclasses.replace(raw, **checked)

    @property
    def approximate(self) -> bool:
        return self.index != "flat"

    def searcher(self, references):
        """The searcher over ``references`` that these options ask for.

        ``references``: float32 rows of shape (n_references, d), not prepared (each searcher
        prepares them); a memory map is read shard by shard when sharded. In order of precedence:
        an ``index`` other than ``"flat"`` gives an :class:`~embedeval._search.ApproximateSearcher`
        (its training sample drawn with ``seed``); a Dask ``client`` a
        :class:`~embedeval._pipeline.cluster.DaskSearcher`; a :class:`~embedeval._search.Device`
        a :class:`~embedeval._search.DeviceSearcher`; a ``shard_size`` or ``stream_reference`` a
        :class:`~embedeval._search.ShardedSearcher` (with ``stream_reference`` or ``client`` and no
        ``shard_size``, shards of ``_budget.DEFAULT_SHARD_BYTES``); otherwise a
        :class:`~embedeval._search.FlatSearcher`. It lives with the pipeline rather than in
        :mod:`embedeval._search` because the Dask searcher is an execution concern.
        """
        if self.approximate:
            return ApproximateSearcher(references, self.distance, self.index, self.index_params, self.seed)
        shard_size = self.shard_size
        if shard_size is None and (self.stream_reference or self.client is not None):
            shard_size = default_shard_size(references.shape[1])
        if self.client is not None:
            return DaskSearcher(self.client, references, self.distance, shard_size)
        if isinstance(self.device, Device):  # "gpu" became one when checked
            return DeviceSearcher(np.asarray(references), self.distance, self.device)
        if shard_size is not None:
            return ShardedSearcher(references, self.distance, shard_size, stream=self.stream_reference)
        return FlatSearcher(references, self.distance)

    def executor(self):
        """Where the blocks run: a Dask cluster, local threads, or one after another."""
        if self.client is not None:
            from .cluster import DaskExecutor

            return DaskExecutor(self.client)
        n_workers = 1 if self.approximate else self.n_threads or default_threads()
        return Threads(n_workers) if n_workers > 1 else Sequential()

    def search_config(self) -> str:
        if self.distance == HAMMING:
            return "exact: every Hamming distance counted (faiss.hammings), in chunks of references"
        if self.approximate:
            return f"approximate: faiss {self.index!r} {self.index_params or ''}".strip()
        if isinstance(self.device, Device):
            return f"exact: float64 distances on the {self.device.name} (torch), near-ties by the CPU's float64 formula"
        return "exact: faiss flat candidates (cpu), ranked by float64 distance"


def _check_device(raw: Options):
    device = raw.device if isinstance(raw.device, Device) else check_choice(raw.device, "device", ("cpu", "gpu"))
    if device != "cpu" and (
        raw.index != "flat" or raw.client is not None or raw.shard_size is not None or raw.stream_reference
    ):
        raise ValueError(
            "'device' 'gpu' searches exactly with the references on the GPU; drop index, client, shard_size "
            "and stream_reference"
        )
    return gpu_device() if device == "gpu" else device  # fails here, before any work, without a GPU


def _check_kept(raw: Options) -> int:
    if raw.distance == HAMMING:
        raise ValueError("'keep_neighbors' keeps the neighbours of float embeddings; got distance='hamming'")
    return check_positive_int(raw.keep_neighbors, "keep_neighbors")


def _check_approximate(raw: Options, metrics) -> None:
    if not isinstance(raw.index, str):
        raise TypeError(f"'index' must be 'flat' or a faiss index-factory string; got {type(raw.index).__name__}")
    whole = [m.name for m in metrics if m.uncut in (FIRST_HIT, ALL_HITS)]
    if whole:
        raise ValueError(
            f"{whole} rank every reference, which an approximate index cannot; use index='flat' or "
            "a cutoff (map@k, mrr@k)"
        )
    if raw.client is not None or raw.shard_size is not None or raw.stream_reference:
        raise ValueError("an approximate 'index' runs in one process; drop client, shard_size and stream_reference")


def _refuse_what_the_scans_do_not_do(options: Options, metrics) -> None:
    """Refuse what the exact scans (Hamming, or float embeddings under a tie-aware rule) do not
    do, and Hamming-only metrics elsewhere."""
    if options.distance != HAMMING:
        radius = [m.name for m in metrics if m.spec.radius]
        if radius:
            raise ValueError(f"{radius} count references within a Hamming radius: use distance='hamming'")
        if options.ties is None:
            return
    given = {
        "index": options.index != "flat",
        "device": options.device != "cpu",
        "client": options.client is not None,
        "shard_size": options.shard_size is not None,
        "stream_reference": bool(options.stream_reference),
    }
    refused = [name for name, set_ in given.items() if set_]
    if refused:
        what = (
            "distance='hamming' scans every code"
            if options.distance == HAMMING
            else f"'ties'={options.ties!r} scans every reference"
        )
        raise ValueError(
            f"{what} exactly in this process ({', '.join(refused)} given); drop {', '.join(refused)}"
            + ("" if options.distance == HAMMING else " or leave 'ties' at None")
        )
