"""Binary codes for Hamming distance: read, checked and packed once, before any work.

Two layouts are accepted, as deep-hashing code and faiss hold them:

* packed: ``uint8`` of shape (n, d / 8), 8 bits per byte in faiss's order (bit j of byte b is
  bit 8 b + j, :func:`numpy.packbits` with ``bitorder="little"``), as faiss's binary indexes and
  ``IndexBinaryFromFloat`` store them;
* one value per bit: ``bool``, or any other real dtype holding only 0 and 1, of shape (n, d);
  packed here the same way (``d`` need not be a multiple of 8: the last byte is padded with
  zeros, which adds nothing to a distance).

A ``uint8`` array is always read as packed; unpacked bits held as ``uint8`` must be passed as
``bool`` (a warning says so when every byte of a ``uint8`` array is 0 or 1). Sign codes in
{-1, +1} (the usual output of ``torch.sign``) are not bits: pass ``codes > 0``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .arrays import _to_numpy

HAMMING = "hamming"


@dataclass(frozen=True)
class Codes:
    """Binary codes, packed.

    Attributes
    ----------
    packed : numpy.ndarray of shape (n, n_bytes), uint8, C-contiguous
    n_bits : int
        The code length d (``n_bytes = ceil(d / 8)``).
    layout : str
        How the input held them: "packed uint8" or "one value per bit", for messages.
    """

    packed: np.ndarray
    n_bits: int
    layout: str

    @property
    def shape(self) -> tuple[int, int]:
        """(n, n_bits): the codes as an (items, bits) matrix, as the evaluators read ``shape``."""
        return (self.packed.shape[0], self.n_bits)

    def __len__(self) -> int:
        return self.packed.shape[0]

    def __getitem__(self, rows) -> np.ndarray:
        """The packed rows ``rows``."""
        return self.packed[rows]


def pack_bits(bits) -> np.ndarray:
    """Pack an (n, d) array of 0/1 values or booleans into faiss's uint8 layout, shape (n, ceil(d / 8)).

    Examples
    --------
    >>> pack_bits([[1, 0, 0, 0, 0, 0, 0, 0, 1]]).tolist()
    [[1, 1]]
    """
    return as_codes(np.asarray(bits).astype(bool), "bits").packed


def _first_bad(arr: np.ndarray) -> tuple[int, int, object]:
    bad = (arr != 0) & (arr != 1)
    row = int(np.flatnonzero(bad.any(axis=1))[0])
    col = int(np.flatnonzero(bad[row])[0])
    return row, col, arr[row, col].item()


def as_codes(value, name: str) -> Codes:
    """Check binary codes and pack them (see the module's docstring for the layouts).

    Raises
    ------
    TypeError
        For a dtype that holds no numbers.
    ValueError
        For a shape other than (n >= 1, d >= 1), or values other than 0 and 1 in an array
        with one value per bit (NaN included).
    """
    arr = _to_numpy(value, name)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"'{name}' must hold binary codes (bool, 0/1, or packed uint8); got dtype {arr.dtype}")
    if arr.ndim != 2 or arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(
            f"'{name}' must be a 2-D array of binary codes (n_items, n_bits), or packed uint8 (n_items, n_bits / 8), "
            f"with at least one row and column; got shape {arr.shape}"
        )
    if arr.dtype == np.uint8:
        if arr.shape[1] > 1 and arr.max(initial=0) <= 1:
            warnings.warn(
                f"'{name}' is uint8 and read as packed codes (8 bits per byte, {8 * arr.shape[1]} bits), but every "
                "byte is 0 or 1: if it holds one bit per value, pass it as bool",
                UserWarning,
                stacklevel=4,
            )
        return Codes(np.ascontiguousarray(arr), 8 * arr.shape[1], "packed uint8")
    if arr.dtype != bool:
        if not ((arr == 0) | (arr == 1)).all():
            row, col, v = _first_bad(arr)
            raise ValueError(
                f"'{name}' must hold binary values (0 or 1, or bool) for distance='hamming', or packed uint8 codes; "
                f"got {v!r} at row {row}, column {col}"
            )
        arr = arr != 0
    packed = np.packbits(arr, axis=1, bitorder="little")
    return Codes(np.ascontiguousarray(packed), int(arr.shape[1]), "one value per bit")


def read_codes(queries, reference, names: tuple[str, str]) -> tuple[Codes, Codes]:
    """(query codes, reference codes); ``reference`` None means the queries themselves
    (leave-one-out). The two must have one code length."""
    q = as_codes(queries, names[0])
    if reference is None:
        return q, q
    r = as_codes(reference, names[1])
    if r.n_bits != q.n_bits:
        raise ValueError(
            f"'{names[1]}' must hold codes of the length of '{names[0]}' ({q.n_bits} bits, {q.layout}); got "
            f"{r.n_bits} bits ({r.layout}, shape {r.packed.shape if r.layout == 'packed uint8' else r.shape}): "
            "Hamming distance compares codes of one length"
        )
    return q, r
