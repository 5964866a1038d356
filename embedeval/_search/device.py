"""Exact search on a GPU through torch: float64 distances to every reference computed on the card.

torch is an optional extra (``pip install torch``, or ``pip install 'embedeval[gpu]'``), imported
only here and only when a device search is made (:func:`import_torch`). The same code runs on
torch's CPU device, which is how it is tested without a card (:class:`Device` with
``torch_devices=("cpu",)``).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass

import numpy as np

from .._core import budget as _budget
from .._inputs.arrays import prepare
from .candidates import Candidates
from .deep_exact import error_bounds
from .error_bound import FLOAT64_UNIT_ROUNDOFF
from .float64 import norms
from .ranking import ExactSearcher

# The float64 values of one product block take at most this share of a card's free memory (the
# rest: the top-k's own buffers, the other threads' blocks, torch's allocator).
FREE_MEMORY_SHARE = 8
TORCH_INSTALL = "pip install torch (or pip install 'embedeval[gpu]')"


def import_torch():
    """torch, or ImportError with the line that installs it."""
    try:
        import torch
    except ImportError:
        raise ImportError(
            f"'device' 'gpu' computes on the card through torch, which is not installed: {TORCH_INSTALL}"
        ) from None
    return torch


@dataclass(frozen=True)
class Device:
    """Where the exact search computes its float64 distances: one or more torch devices.

    Parameters
    ----------
    torch_devices : tuple of str
        torch device names (``"cuda:0"``, ``"cuda:1"``, ...). Each holds a copy of the
        references; query blocks go to them in turn, so blocks run on several threads use
        every card.
    reference_block : int, optional
        References per product block. Default: as many as fit in a share of the device's free
        memory (:data:`FREE_MEMORY_SHARE`), or ``_budget.RANKING_ELEMENTS`` values on the CPU.
    name : str
        What the result's ``config`` calls the device.

    Examples
    --------
    The device path on torch's CPU device, two references per product block (a stand-in for a
    card, in tests):

    >>> stand_in = Device(("cpu",), reference_block=2)
    """

    torch_devices: tuple[str, ...] = ("cuda:0",)
    reference_block: int | None = None
    name: str = "gpu"


def gpu_device() -> Device:
    """Every visible CUDA device, through torch.

    Raises
    ------
    ImportError
        Without torch, naming the install.
    ValueError
        When torch sees no CUDA device, saying so.
    """
    torch = import_torch()
    n_gpus = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if n_gpus == 0:
        raise ValueError(
            f"'device' 'gpu' needs a visible CUDA GPU; torch {torch.__version__} sees none "
            "(a CPU-only torch build, or no card)"
        )
    return Device(tuple(f"cuda:{i}" for i in range(n_gpus)))


class DeviceSearcher(ExactSearcher):
    r"""Exact search with float64 distances computed on a :class:`Device`, for rankings of any depth.

    Each reference's value for a query, :math:`v = \|r\|^2 - 2 q \cdot r` (squared euclidean
    less the query's own :math:`\|q\|^2`, which changes no order) or :math:`v = -q \cdot r`
    (inner product; cosine once normalised), is computed in float64 on the device from the
    prepared float32 rows, a block of references at a time, and each query keeps its ``n``
    smallest (``torch.topk``); only those values and indices come back. The exact ranking
    (:meth:`~embedeval._search.ranking.ExactSearcher.search`) then orders them: candidates
    whose values differ by more than twice the bound E below are in the order of the CPU's
    float64 formula (:func:`embedeval._search.float64.exact_distance`); closer ones are
    recomputed with that formula and sorted by (distance, index). So every ranking, and every
    per-query value, is the CPU path's bit for bit, whatever the card's summation order.

    The bound is the deep ranking's float64 one (:func:`~embedeval._search.deep_exact.error_bounds`,
    proved in :mod:`embedeval._search.error_bound` for any summation order, with or without FMA):
    the card computes the same product, and the bound already adds the CPU formula's own error,
    so two candidates whose values differ by more than 2E are in the CPU formula's order.

    Hamming distances never reach this searcher: ``distance="hamming"`` takes the Hamming scan
    on the CPU (:mod:`embedeval._pipeline.hamming_scan`), whatever the device.

    Parameters
    ----------
    reference : numpy.ndarray of shape (n_references, d), float32
    distance : {"euclidean", "cosine", "inner_product"}
    device : Device

    Notes
    -----
    Memory on each device: the references in float64 and their squared norms, (n_references,
    d + 1) values, and per search a block of (b, reference_block) float64 values plus the
    kept (b, n) values and indices. Never queries x references at once unless they fit the
    block. One search at a time per device (the next block's CPU work, ordering near-ties,
    overlaps it), so the blocks sized from free memory do not add up. Rankings of every depth
    take this search (``ranks_deep`` is false): the card computes every distance anyway, so
    the CPU's deep ranking would only add a pass. On the host: the prepared references
    (float32, for the CPU formula's recomputations).
    """

    ranks_deep = False

    def __init__(self, reference: np.ndarray, distance: str, device: Device):
        torch = import_torch()
        self.euclidean = distance == "euclidean"
        self._reference = prepare(reference, distance)
        self.size = self._reference.shape[0]
        self.device = device
        self._torch = torch
        host = torch.from_numpy(np.ascontiguousarray(self._reference, dtype=np.float32))
        self._on = []  # per device: (references in float64, their squared norms, a lock)
        for name in device.torch_devices:
            rows = host.to(device=name).to(torch.float64)
            self._on.append((rows, (rows * rows).sum(dim=1), threading.Lock()))
        # The largest norm, for the bound, from the card's float64 squared norms (no pass on the
        # host): their rounding, d units at most, is within the bound's 1% slack.
        self.max_norm = float(self._on[0][1].max().sqrt()) if self.size else 0.0
        self._turn = itertools.cycle(range(len(self._on)))
        self._lock = threading.Lock()

    def _error_bound(self, queries, unit_roundoff):
        return error_bounds(norms(queries), self.max_norm, queries.shape[1], self.euclidean)[1]

    def _block(self, name: str, b: int) -> int:
        """References per product block for ``b`` queries on device ``name``."""
        if self.device.reference_block is not None:
            return self.device.reference_block
        torch = self._torch
        if torch.device(name).type == "cuda":
            free, _ = torch.cuda.mem_get_info(torch.device(name))
            values = free // (FREE_MEMORY_SHARE * 8)
        else:
            values = _budget.RANKING_ELEMENTS
        return max(1, min(self.size, int(values) // max(b, 1)))

    def _gather(self, queries, n):
        with self._lock:
            which = next(self._turn)
        name = self.device.torch_devices[which]
        rows, norms, busy = self._on[which]
        n = min(n, self.size)
        with busy:
            return self._search_block(queries, n, name, rows, norms)

    def _search_block(self, queries, n, name, rows, norms) -> Candidates:
        """The ``n`` smallest values of each query against every reference, on device ``name``."""
        torch = self._torch
        q = torch.from_numpy(np.ascontiguousarray(queries)).to(device=name, dtype=torch.float64)
        step = self._block(name, len(q))
        kept_values = kept_idx = None
        for start in range(0, self.size, step):
            block = rows[start : start + step]
            if self.euclidean:
                values = torch.addmm(norms[start : start + step], q, block.T, alpha=-2)
            else:
                values = torch.mm(q, block.T).neg_()
            if kept_values is None:
                kept_values, kept_idx = torch.topk(values, min(n, values.shape[1]), dim=1, largest=False)
                continue
            both = torch.cat([kept_values, values], dim=1)
            kept_values, at = torch.topk(both, min(n, both.shape[1]), dim=1, largest=False)
            # positions past the kept ones are columns of this block
            block_idx = torch.arange(start, start + block.shape[0], device=q.device).expand(len(q), -1)
            kept_idx = torch.gather(torch.cat([kept_idx, block_idx], dim=1), 1, at)
        dist = kept_values.cpu().numpy()
        idx = kept_idx.cpu().numpy().astype(np.int64, copy=False)
        worst = np.full(len(dist), np.inf) if n == self.size else dist[:, -1].copy()
        return Candidates(dist, idx, np.full(len(idx), n), worst, None, FLOAT64_UNIT_ROUNDOFF)
