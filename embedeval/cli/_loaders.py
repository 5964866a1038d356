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


def _text_lines(path: Path) -> list[str]:
    return [line.strip() for line in path.read_text().splitlines()]


def _ints_or_strings(values: list[str]) -> list:
    try:
        return [int(v) for v in values]
    except ValueError:
        return values


def load_label_sets(path: Path, key: str | None = None):
    """Read label sets: ``.npy``/``.npz``/``.parquet`` as an array (a 2-D boolean array is an indicator,
    one column per label), or text with one line per item and its labels separated by commas
    (``cat,dog``; ints where every label is an int). An empty line is an item without labels."""
    if path.suffix.lower() in (".npy", ".npz", ".parquet"):
        return load_labels(path, key)
    rows = [[v.strip() for v in line.split(",") if v.strip()] for line in _text_lines(path)]
    flat = _ints_or_strings([v for row in rows for v in row])
    out, at = [], 0
    for row in rows:
        out.append(set(flat[at : at + len(row)]))
        at += len(row)
    return out


def load_keys(path: Path):
    """Read ``ignore_same`` keys: ``.npy``/``.npz`` as an array (a 2-D array: one key per row), or text
    with one key per line, a key of several fields (``identity camera``, or with commas) read as a
    tuple; ints where every field of the file is an int."""
    if path.suffix.lower() in (".npy", ".npz"):
        return np.asarray(load_array(path, "keys"))
    rows = [line.replace(",", " ").split() for line in _text_lines(path) if line]
    flat = _ints_or_strings([v for row in rows for v in row])
    widths = {len(row) for row in rows}
    if widths == {1}:
        return flat
    keys, at = [], 0
    for row in rows:
        keys.append(tuple(flat[at : at + len(row)]))
        at += len(row)
    return keys


def load_ids(path: Path) -> list[str]:
    """Read ids, one per line (blank lines skipped)."""
    return [line for line in _text_lines(path) if line]


def load_pairs(path: Path, positions: bool) -> dict:
    """Read ignore lists: one ``query reference`` pair per line (whitespace-separated), as
    ``{query: [references]}``; row positions (ints) with ``positions``, ids otherwise."""
    pairs: dict = {}
    for number, line in enumerate(_text_lines(path), start=1):
        if not line:
            continue
        fields = line.split()
        if len(fields) != 2:
            raise ValueError(f"{path}:{number}: a line needs 2 fields (query reference); got {len(fields)}")
        if positions:
            try:
                fields = [int(f) for f in fields]
            except ValueError:
                raise ValueError(
                    f"{path}:{number}: query and reference must be row positions (ints); got {line!r}"
                ) from None
        pairs.setdefault(fields[0], []).append(fields[1])
    return pairs
