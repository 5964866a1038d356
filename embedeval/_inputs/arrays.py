"""Checking and normalising user inputs, once, before any work is done.

Every public entry point passes its arguments through these helpers so that bad input fails
with one clear message (argument, rule, what arrived) and nothing is half-computed.
"""

from __future__ import annotations

import mmap
import numbers
from collections.abc import Sequence

import numpy as np

from .._core import budget as _budget

DISTANCES = ("euclidean", "cosine", "inner_product")


def row_blocks(arr: np.ndarray, rows: int = _budget.SCAN_ROWS):
    """``(start, arr[start : start + rows])`` over consecutive blocks of rows, so that a
    memory-mapped array is streamed, never held whole."""
    for start in range(0, arr.shape[0], rows):
        yield start, arr[start : start + rows]


def _to_numpy(value, name: str) -> np.ndarray:
    """Return ``value`` as a numpy array; accepts torch tensors and anything with ``__array__``.

    torch is never imported: a tensor is recognised by its ``detach``/``cpu`` methods, so a
    tensor that requires grad or lives on a GPU is copied to host memory first. numpy has no
    bfloat16, so a bfloat16 tensor is widened to float32 first (exactly: bfloat16 is float32
    with a shorter mantissa).
    """
    if hasattr(value, "detach") and hasattr(value, "cpu"):
        value = value.detach().cpu()
        if str(getattr(value, "dtype", "")) == "torch.bfloat16":
            value = value.float()
    try:
        return np.asarray(value)
    except (TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(
            f"'{name}' must be an array-like (numpy array, torch tensor, list); got {type(value).__name__} ({exc})"
        ) from None


def as_embeddings(value, name: str = "embeddings", wide: bool = False) -> np.ndarray:
    """Check an embedding matrix and return it as C-contiguous float32 (or float64, see ``wide``).

    Parameters
    ----------
    value : array-like of shape (n, d)
        Real numbers, finite. float64 input is rounded to float32, the precision faiss
        computes in.
    name : str
        The argument's name, used in error messages.
    wide : bool
        True: float64 (and wider) input is returned as float64, checked for finiteness there,
        and rounded to float32 later, after the power-of-two scale of
        :func:`embedeval._magnitude.into_safe_range`, so that any finite magnitude keeps its
        bits. False: it is rounded here, and refused when its largest |component| is outside
        [2**-100, 2**100], where rounding to float32 would flush it to 0 or inf, or leave most
        of it in float32's subnormal numbers.

    Returns
    -------
    numpy.ndarray of shape (n, d), dtype float32 (float64 for wide float64 input)
    """
    _check_mapped_file(value, name)
    arr = _to_numpy(value, name)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"'{name}' must hold real numbers; got dtype {arr.dtype}")
    if arr.ndim != 2:
        raise ValueError(f"'{name}' must be a 2-D array of shape (n_samples, n_dims); got shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"'{name}' must have at least one row and one column; got shape {arr.shape}")
    keep = np.float64 if wide and arr.dtype.kind == "f" and arr.dtype.itemsize >= 8 else np.float32
    rounded = arr.dtype != keep
    if rounded and keep == np.float32 and arr.dtype.kind == "f" and arr.dtype.itemsize >= 8:
        _check_float32_range(arr, name)
    if rounded or not arr.flags.c_contiguous:
        arr = np.ascontiguousarray(arr, dtype=keep)  # a float32 (or kept float64) memory map stays mapped
    bad_rows = np.concatenate([start + np.flatnonzero(~np.isfinite(b).all(axis=1)) for start, b in row_blocks(arr)])
    if bad_rows.size:
        raise ValueError(
            f"'{name}' must be finite; got NaN or inf in {bad_rows.size} row(s), "
            f"first at row {bad_rows[0]}" + (" (after rounding to float32)" if rounded else "")
        )
    return arr


def _check_float32_range(arr: np.ndarray, name: str) -> None:
    """Refuse wide floats that rounding to float32 would flush to 0 or inf (see as_embeddings)."""
    largest = max((float(np.abs(block).max(initial=0.0)) for _, block in row_blocks(arr)), default=0.0)
    if np.isfinite(largest) and largest != 0.0 and not 2.0**-100 <= largest <= 2.0**100:
        raise ValueError(
            f"'{name}' must have its largest |component| within [2**-100, 2**100] to be rounded to float32 "
            f"without flushing values to 0 or inf; got {arr.dtype} values up to {largest:.3g}: multiply the "
            "embeddings by a power of two first"
        )


def _check_mapped_file(value, name: str) -> None:
    """Refuse a memory map whose file was cut short after it was mapped: reading the missing
    pages would kill the process (SIGBUS) instead of raising. The size is the mapped file's own
    (its open descriptor), so a file replaced under the same name does not count. A file cut
    short while the evaluation runs cannot be caught this way."""
    mapped = value
    while isinstance(mapped, np.ndarray) and not isinstance(mapped, np.memmap):
        mapped = mapped.base  # a view of a memory map (np.asarray, slices) leads back to it
    handle = getattr(mapped, "_mmap", None) if isinstance(mapped, np.memmap) else None
    if handle is None:
        return
    try:
        size = handle.size()
    except (OSError, ValueError):  # closed, or no file behind it
        return
    needed = mapped.offset - mapped.offset % mmap.ALLOCATIONGRANULARITY + len(handle)
    if size < needed:
        raise ValueError(
            f"'{name}' is memory-mapped from {mapped.filename}, which is now {size} bytes, shorter than the "
            f"{needed} bytes mapped: the file was cut short after it was opened"
        )


def as_labels(value, n: int, name: str = "labels", against: str = "embeddings") -> np.ndarray:
    """Return labels as a 1-D array that keeps each label's identity.

    Integers stay integers (64-bit ids are never cast to float), strings stay strings. Labels
    must be of one kind (numbers, strings, bytes, tuples, ...): ``1`` and ``"1"`` never compare
    equal, so a list mixing them would silently make two classes where one was meant; it is
    refused with the positions of each kind (ints and floats are one kind: ``1 == 1.0``; None,
    no label, is a class of its own beside any kind).

    NaN is refused wherever it appears (a float array, a mixed list, an object array): it equals
    nothing, not even itself, so it cannot name a class, and a missing label must be dropped or
    given a label of its own rather than silently forming (or not forming) a class. Labels must
    be hashable (ints, strings, tuples, ...): they are compared by equality through a hash table.

    Parameters
    ----------
    value : array-like of shape (n,)
        One hashable label per row of ``against``.
    n : int
        The required length.
    """
    if value is None:
        raise ValueError(f"'{name}' is required; got None")
    if isinstance(value, np.ndarray) or hasattr(value, "__array__") or hasattr(value, "detach"):
        arr = _to_numpy(value, name)
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        kinds = {type(v) for v in value}
        if kinds == {int}:
            arr = int_array(value)
        elif len(kinds) == 1 and next(iter(kinds)) in (float, str, bool):
            arr = np.asarray(value)
        else:
            arr = np.fromiter(value, dtype=object, count=len(value))
    else:
        raise TypeError(f"'{name}' must be a 1-D array-like of labels; got {type(value).__name__}")
    if arr.ndim != 1:
        raise ValueError(f"'{name}' must be 1-D (one label per row); got shape {arr.shape}")
    if arr.shape[0] != n:
        raise ValueError(f"'{name}' must have one label per row of '{against}' ({n}); got {arr.shape[0]}")
    if arr.dtype.kind in "fc":
        _refuse_nan_labels(np.flatnonzero(np.isnan(arr)), name)
    elif arr.dtype.kind == "O":
        _check_label_objects(arr, name)
    return arr


def int_array(values: Sequence[int]) -> np.ndarray:
    """Python ints as int64, else uint64 (all >= 0), else an object array: never float64.

    ``np.asarray`` turns ints on both sides of 2**63 (64-bit hashes, some negative) into float64,
    which merges distinct ids; this keeps every value.
    """
    for dtype in (np.int64, np.uint64):
        try:
            return np.array(values, dtype=dtype)
        except OverflowError:
            continue
    return np.fromiter(values, dtype=object, count=len(values))


def holds_nan(value) -> bool:
    """Whether ``value`` is NaN or a tuple/frozenset holding one (at any depth)."""
    if isinstance(value, (float, complex, np.inexact)):
        return value != value
    if isinstance(value, (tuple, frozenset)):
        return any(holds_nan(v) for v in value)
    return False


def _refuse_nan_labels(positions: np.ndarray, name: str) -> None:
    if positions.size:
        raise ValueError(
            f"'{name}' must not contain NaN (alone or inside a tuple: NaN equals nothing, so it names no class; "
            f"drop those rows or give them a label); got {positions.size} NaN label(s), first at position "
            f"{positions[0]}"
        )


# What kind of value a label is: labels of two kinds never compare equal (1 != "1"), so a mix in
# one array silently makes two classes where one was meant; it is refused.
_KINDS = ((bool, "number"), (int, "number"), (float, "number"), (np.number, "number"), (np.bool_, "number"),
          (str, "string"), (bytes, "bytes"), (tuple, "tuple"), (frozenset, "frozenset"))  # fmt: skip
_DTYPE_KINDS = {"b": "number", "i": "number", "u": "number", "f": "number", "c": "number", "U": "string", "S": "bytes"}


def _label_kind(value) -> str:
    return next((kind for cls, kind in _KINDS if isinstance(value, cls)), type(value).__name__)


def label_kind(arr: np.ndarray) -> str | None:
    """The one kind of the labels of ``arr`` (as :func:`as_labels` returns them): ``"number"``,
    ``"string"``, ``"bytes"``, ``"tuple"``, ... ; None for an empty array or one of Nones."""
    if arr.dtype.kind != "O":
        return _DTYPE_KINDS.get(arr.dtype.kind, arr.dtype.name)
    return next((_label_kind(v) for v in arr.tolist() if v is not None), None)


def _positions(positions: list[int]) -> str:
    shown = ", ".join(map(str, positions[:5]))
    return f"{shown}, ... ({len(positions)} in all)" if len(positions) > 5 else shown


def _refuse_mixed_kinds(kinds: dict[str, list[int]], name: str) -> None:
    if len(kinds) > 1:
        found = "; ".join(f"{kind} at position(s) {_positions(where)}" for kind, where in kinds.items())
        raise ValueError(
            f"'{name}' must hold labels of one kind (numbers, strings, tuples, ...): labels of two kinds never "
            f"match (1 and '1' would be two classes); got {found}"
        )


def _check_label_objects(arr: np.ndarray, name: str) -> None:
    """Every label of an object array hashable, none NaN, and all of one kind (a Python loop, as
    encoding is)."""
    nan = []
    kinds: dict[str, list[int]] = {}
    for i, v in enumerate(arr.tolist()):
        if v is not None:  # None (no label) is a class of its own beside any kind, as it always was
            kinds.setdefault(_label_kind(v), []).append(i)
        try:
            hash(v)
        except TypeError:
            raise TypeError(
                f"'{name}' must hold hashable labels (ints, strings, tuples, ...); got a {type(v).__name__} "
                f"at position {i}: {v!r:.60}"
            ) from None
        if holds_nan(v):  # NaN, or a tuple holding one: NaNs match by object identity, not value
            nan.append(i)
    _refuse_nan_labels(np.asarray(nan, dtype=np.int64), name)
    _refuse_mixed_kinds(kinds, name)


def encode_labels(*label_arrays: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Map labels to dense integer codes shared by all arrays.

    Returns
    -------
    classes : numpy.ndarray of shape (n_classes,)
        The distinct labels, sorted where they are orderable.
    codes : list of numpy.ndarray of shape (n_i,), dtype int64
        ``classes[codes[i]] == label_arrays[i]``.
    """
    dtypes = {a.dtype for a in label_arrays}
    if len(dtypes) == 1 and next(iter(dtypes)).kind != "O":
        joined = np.concatenate(label_arrays)
        classes, inverse = np.unique(joined, return_inverse=True)
        inverse = inverse.reshape(-1).astype(np.int64)
    else:
        # Mixed dtypes or Python objects: code by hash equality so that no label is coerced
        # (np.concatenate would turn 1 and "1" into the same string, int64 and uint64 into float).
        table: dict = {}
        inverse = np.fromiter(
            (table.setdefault(v, len(table)) for a in label_arrays for v in a.tolist()),
            dtype=np.int64,
        )
        classes = np.empty(len(table), dtype=object)
        for label, code in table.items():
            classes[code] = label
    bounds = np.cumsum([0] + [a.shape[0] for a in label_arrays])
    return classes, [inverse[bounds[i] : bounds[i + 1]] for i in range(len(label_arrays))]


def check_choice(value, name: str, choices: Sequence[str]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"'{name}' must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_positive_int(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"'{name}' must be an int >= {minimum}; got {value!r}")
    return int(value)


def check_seed(value) -> int | None:
    """A seed of numpy's generator as a Python int (a numpy integer would stop a result's JSON):
    an int >= 0, or None for fresh entropy."""
    return None if value is None else check_positive_int(value, "seed", minimum=0)


def check_fraction(value, name: str, *, none_means: str = "") -> float | None:
    """``value`` as a float in the open interval (0, 1); None passes where ``none_means`` says
    what it means (named in the error)."""
    if value is None and none_means:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not 0 < value < 1:
        also = f", or None for {none_means}" if none_means else ""
        raise ValueError(f"'{name}' must be in (0, 1){also}; got {value!r}")
    return float(value)


def check_directions(vectors: np.ndarray, name: str, chunk: int = _budget.SCAN_ROWS) -> None:
    """Raise ValueError if a row of ``vectors`` (n, d) is all zeros (its cosine is undefined).

    Reads in chunks of ``chunk`` rows, so a memory-mapped array is streamed.
    """
    zero = np.concatenate([start + np.flatnonzero(~block.any(axis=1)) for start, block in row_blocks(vectors, chunk)])
    if zero.size:
        raise ValueError(
            f"cosine distance is undefined for zero vectors; got {zero.size} all-zero row(s) in '{name}', "
            f"first at row {zero[0]}"
        )


def prepare(vectors: np.ndarray, distance: str) -> np.ndarray:
    """Vectors as searched: for cosine, L2-normalised in float64 and rounded to float32 (so no
    norm underflows or overflows, whatever the magnitude of a row); unchanged otherwise.

    Parameters
    ----------
    vectors : numpy.ndarray of shape (n, d)
        Under cosine, no row may be all zeros (see :func:`check_directions`).
    distance : {"euclidean", "cosine", "inner_product"}

    Returns
    -------
    numpy.ndarray of shape (n, d)
        float32 (C-contiguous) for cosine; ``vectors`` itself otherwise.
    """
    if distance != "cosine":
        return vectors
    out = np.empty(vectors.shape, dtype=np.float32)
    step = max(1, _budget.NORMALISE_ELEMENTS // max(vectors.shape[1], 1))
    for start, block in row_blocks(vectors, step):  # in blocks: no float64 copy of the whole array
        wide = np.array(block, dtype=np.float64)  # a copy: divided in place
        wide /= np.sqrt(np.einsum("ij,ij->i", wide, wide))[:, None]
        out[start : start + step] = wide
    return out
