"""Arrays and labels from the files the command accepts.

A file that cannot be read raises :class:`ValueError` naming the file and what to do, which the
command prints as one error line.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

_TEXT_DELIMITERS = {".csv": ",", ".tsv": "\t", ".txt": None}  # None: any whitespace


def load_array(path: Path, what: str, key: str | None = None) -> np.ndarray:
    """Read one numeric array.

    Parameters
    ----------
    path : Path
        ``.npy`` (memory-mapped, not read into memory), ``.npz`` (the array ``key``, or its only
        array), ``.parquet`` (the column ``key``, or every column side by side; needs pyarrow)
        or text (``.csv``, ``.tsv``, ``.txt``: one row per line).
    what : str
        What the file holds, for error messages ("embeddings", "reference").
    key : str, optional
        The array in an ``.npz`` or the column in a ``.parquet`` file.

    Returns
    -------
    numpy.ndarray
        Text files give an array of shape (n_lines, n_columns), at least 2-D.
    """
    suffix = path.suffix.lower()
    if suffix == ".npy":
        return np.load(path, mmap_mode="r", allow_pickle=False)
    if suffix == ".npz":
        return _npz_array(path, what, key)
    if suffix == ".parquet":
        return _parquet_array(path, key)
    if suffix in _TEXT_DELIMITERS:
        return np.loadtxt(path, delimiter=_TEXT_DELIMITERS[suffix], ndmin=2)
    raise ValueError(f"{what} file {path} has an unknown type {suffix!r}; use .npy, .npz, .parquet, .csv, .tsv or .txt")


def _npz_array(path: Path, what: str, key: str | None) -> np.ndarray:
    with np.load(path, allow_pickle=False) as archive:
        if key is None and len(archive.files) != 1:
            raise ValueError(f"{what} file {path} holds arrays {archive.files}; choose one with --key")
        name = key if key is not None else archive.files[0]
        if name not in archive.files:
            raise ValueError(f"{what} file {path} has no array {name!r}; it holds {archive.files}")
        return archive[name]


def _parquet_array(path: Path, key: str | None) -> np.ndarray:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ValueError(f"reading {path} needs pyarrow: pip install 'embedeval[parquet]'") from None
    table = pq.read_table(path)
    if key is not None:
        return table.column(key).to_numpy()
    return np.column_stack([table.column(c).to_numpy() for c in table.column_names])


def load_labels(path: Path, key: str | None = None) -> np.ndarray:
    """Read labels: from ``.npy``/``.npz``/``.parquet`` as an array (a single row or column is
    flattened), or from text with one label per line (blank lines ignored), as int64 if every
    line is an integer and as strings otherwise."""
    if path.suffix.lower() in (".npy", ".npz", ".parquet"):
        labels = np.asarray(load_array(path, "labels", key))
        return labels.reshape(-1) if labels.ndim == 2 and 1 in labels.shape else labels
    lines = [line.strip() for line in path.read_text().splitlines() if line.strip()]
    try:
        return np.array([int(v) for v in lines], dtype=np.int64)
    except ValueError:
        return np.array(lines)
