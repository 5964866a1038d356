"""Arrays and labels from the files the command accepts.

A file that cannot be read raises :class:`ValueError` naming the file, the flag that chose an
array in it and what to do, which the command prints as one error line. numpy's own messages
("mmap length is greater than file size") are kept after the file's name, with a hint where
the cause is common (a header row in a CSV file, a file cut short, Python objects).
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np

_TEXT_DELIMITERS = {".csv": ",", ".tsv": "\t", ".txt": None}  # None: any whitespace
_READ_ERRORS = (ValueError, EOFError, OSError, zipfile.BadZipFile)  # what numpy and zipfile raise for bad files


class _Problem(ValueError):
    """A problem with a file's content in embedeval's words; the caller puts the file's name first."""


def load_array(path: Path, what: str, key: str | None = None, flag: str = "--key") -> np.ndarray:
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
    flag : str
        The option that sets ``key`` (``--key``, ``--label-key``), for error messages.

    Returns
    -------
    numpy.ndarray
        Text files give an array of shape (n_lines, n_columns), at least 2-D.
    """
    suffix = path.suffix.lower()
    if suffix not in (".npy", ".npz", ".parquet", *_TEXT_DELIMITERS):
        raise ValueError(
            f"{what} file {path} has an unknown type {suffix!r}; use .npy, .npz, .parquet, .csv, .tsv or .txt"
        )
    if path.stat().st_size == 0:
        raise ValueError(f"{what} file {path} is empty (0 bytes)")
    try:
        if suffix == ".npy":
            array = np.load(path, mmap_mode="r", allow_pickle=False)
        elif suffix == ".npz":
            array = _npz_array(path, key, flag)
        elif suffix == ".parquet":
            array = _parquet_array(path, key, flag)
        else:
            array = _text_array(path)
    except _Problem as exc:
        raise ValueError(f"{what} file {path} {exc}") from None
    except _READ_ERRORS as exc:
        raise ValueError(f"{what} file {path} cannot be read: {_reason(exc, suffix)}") from None
    if array.size == 0:
        raise ValueError(f"{what} file {path} holds no values (an array of shape {array.shape})")
    return array


def _reason(exc: Exception, suffix: str) -> str:
    """numpy's message, with the likely cause where it is a common one."""
    text = str(exc) or type(exc).__name__
    if "mmap length is greater than file size" in text or text.startswith("EOF") or isinstance(exc, EOFError):
        return f"{text} (the file is shorter than its header says: cut short while it was written or copied?)"
    if "contains pickled" in text:  # numpy's guess for a file that is neither .npy nor .npz
        return f"it is not a {suffix} file written by numpy"
    if "Python objects" in text or "Object arrays" in text:
        return "it holds Python objects (dtype object), not numbers; save a numeric array, e.g. x.astype('float32')"
    if suffix in _TEXT_DELIMITERS and "could not convert string" in text:
        hint = " (a header row? remove it: the file must hold numbers only)" if "at row 0," in text else ""
        return text.rstrip(".") + hint
    if suffix in _TEXT_DELIMITERS and "number of columns changed" in text:
        return text.split("; use `usecols`")[0] + " (every line must have the same number of values)"
    return text


def _text_array(path: Path) -> np.ndarray:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # "input contained no data": reported as an empty file
        return np.loadtxt(path, delimiter=_TEXT_DELIMITERS[path.suffix.lower()], ndmin=2, encoding="utf-8-sig")


def _npz_array(path: Path, key: str | None, flag: str) -> np.ndarray:
    with np.load(path, allow_pickle=False) as archive:
        if key is None and len(archive.files) != 1:
            raise _Problem(f"holds arrays {archive.files}; choose one with {flag}")
        name = key if key is not None else archive.files[0]
        if name not in archive.files:
            raise _Problem(f"has no array {name!r} ({flag}); it holds {archive.files}")
        return archive[name]


def _parquet_array(path: Path, key: str | None, flag: str) -> np.ndarray:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise _Problem("needs pyarrow to be read: pip install 'embedeval[parquet]'") from None
    table = pq.read_table(path)
    if key is not None:
        if key not in table.column_names:
            raise _Problem(f"has no column {key!r} ({flag}); it holds {table.column_names}")
        return table.column(key).to_numpy()
    return np.column_stack([table.column(c).to_numpy() for c in table.column_names])


def load_labels(path: Path, key: str | None = None, what: str = "labels") -> np.ndarray:
    """Read labels: from ``.npy``/``.npz``/``.parquet`` as an array (a single row or column is
    flattened; ``key`` is set by ``--label-key``), or from text with one label per line, as
    int64 if every line is an integer and as strings otherwise.

    In text, blank lines at the end are ignored; a blank line between labels raises ValueError
    naming the file and the line (dropping it would shift every later label by one row).
    """
    if path.suffix.lower() in (".npy", ".npz", ".parquet"):
        labels = np.asarray(load_array(path, what, key, flag="--label-key"))
        return labels.reshape(-1) if labels.ndim == 2 and 1 in labels.shape else labels
    lines = _text_lines(path, what)
    while lines and not lines[-1]:
        lines.pop()
    if not lines:
        raise ValueError(f"{what} file {path} holds no labels")
    blank = [i + 1 for i, line in enumerate(lines) if not line]
    if blank:
        raise ValueError(
            f"{what} file {path} has {len(blank)} blank line(s) between labels, first at line {blank[0]}; "
            "every line must hold one label"
        )
    try:
        return np.array([int(v) for v in lines], dtype=np.int64)
    except ValueError:
        return np.array(lines)


def _text_lines(path: Path, what: str = "text") -> list[str]:
    """The lines of a text file, stripped: a line ends at ``\\n`` (``\\r\\n`` too, its ``\\r``
    stripped), as trec_eval and line tools count lines; U+2028, U+2029, U+0085 and form feed
    (where ``str.splitlines`` would also split) are characters of a line. A byte-order mark is not
    part of the first line; bytes that are not UTF-8 raise ValueError naming the file."""
    try:
        text = path.read_bytes().decode("utf-8-sig")  # not read_text: it would end lines at a lone \r too
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} file {path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    lines = [line.strip() for line in text.split("\n")]
    return lines[:-1] if text.endswith("\n") else lines


def _typed_rows(rows: list[list[str]]) -> list[list]:
    """The rows' fields as ints where every field of the file is an int, else as strings."""
    flat = [v for row in rows for v in row]
    try:
        flat = [int(v) for v in flat]
    except ValueError:
        pass
    out, at = [], 0
    for row in rows:
        out.append(flat[at : at + len(row)])
        at += len(row)
    return out


def load_label_sets(path: Path, key: str | None = None):
    """Read label sets: ``.npy``/``.npz``/``.parquet`` as an array (a 2-D boolean array is an indicator,
    one column per label), or text with one line per item and its labels separated by commas
    (``cat,dog``; ints where every label is an int). An empty line is an item without labels."""
    if path.suffix.lower() in (".npy", ".npz", ".parquet"):
        return load_labels(path, key)
    rows = [[v.strip() for v in line.split(",") if v.strip()] for line in _text_lines(path, "label sets")]
    return [set(row) for row in _typed_rows(rows)]


def load_keys(path: Path):
    """Read ``ignore_same`` keys: ``.npy``/``.npz`` as an array (a 2-D array: one key per row), or text
    with one key per line, a key of several fields (``identity camera``, or with commas) read as a
    tuple; ints where every field of the file is an int."""
    if path.suffix.lower() in (".npy", ".npz"):
        return np.asarray(load_array(path, "keys"))
    rows = _typed_rows([line.replace(",", " ").split() for line in _text_lines(path, "keys") if line])
    if {len(row) for row in rows} == {1}:
        return [row[0] for row in rows]
    return [tuple(row) for row in rows]


def load_groups(path: Path, by_id: bool = False):
    """Read ``--groups``: one group per query row, as :func:`load_labels` reads labels; or with
    ``by_id``, ``query_id group`` per line (whitespace-separated) as ``{query_id: group}``."""
    if not by_id:
        return load_labels(path, what="--groups")
    groups: dict = {}
    for number, _, fields in _two_fields(path, "query_id group"):
        if groups.setdefault(fields[0], fields[1]) != fields[1]:
            raise ValueError(
                f"{path}:{number}: query {fields[0]!r} is given two groups, {groups[fields[0]]!r} and {fields[1]!r}"
            )
    return groups


def _two_fields(path: Path, fields: str):
    """(line number, line, its two fields) of each line that is not blank; ValueError naming the
    line for another number of (whitespace-separated) ``fields``."""
    for number, line in enumerate(_text_lines(path), start=1):
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise ValueError(f"{path}:{number}: a line needs 2 fields ({fields}); got {len(parts)}")
        yield number, line, parts


def load_pairs(path: Path, positions: bool) -> dict:
    """Read ignore lists: one ``query reference`` pair per line (whitespace-separated), as
    ``{query: [references]}``; row positions (ints) with ``positions``, ids otherwise."""
    pairs: dict = {}
    for number, line, fields in _two_fields(path, "query reference"):
        if positions:
            try:
                fields = [int(f) for f in fields]
            except ValueError:
                raise ValueError(
                    f"{path}:{number}: query and reference must be row positions (ints); got {line!r}"
                ) from None
        pairs.setdefault(fields[0], []).append(fields[1])
    return pairs
