"""open-metric-learning's (OML) dataset table, evaluated with OML's meaning.

OML describes a retrieval validation set as one CSV row per item: ``label``, ``is_query``,
``is_gallery``, and optionally ``category`` and ``sequence`` (other columns, such as ``path``,
are ignored). Its retrieval metrics compare every query row with every gallery row:

* a gallery row is relevant to a query row when their labels are equal;
* a row that is both a query and a gallery item is left out of its own ranking (OML's
  "duplicates of queries" mask), and only of its own: an identical row elsewhere stays;
* with ``sequence``, gallery rows of the query's sequence are left out of its ranking (frames
  of one video, photos of one sequence);
* with ``category``, OML also reports the metrics of each category's queries.

Left out means ignored as :func:`embedeval.evaluate` ignores: no rank, not counted in R. OML sets
their distance to infinity and their relevance to false, which ranks them after every other
gallery row; the two agree wherever a ranking is not cut below the gallery's end.
:meth:`OmlTable.inputs` gives :func:`embedeval.evaluate` exactly these rules (``reference``,
``query_in_reference``, ``ignore_same``, and ``groups`` from ``category``).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_TRUE, _FALSE = {"1", "true", "yes", "1.0"}, {"0", "false", "no", "0.0", ""}


@dataclass(frozen=True)
class OmlTable:
    """An OML table read by :func:`embedeval.io.read_oml`; row ``i`` describes embedding ``i``.

    Attributes
    ----------
    path : str
    labels : numpy.ndarray of shape (n_rows,)
        int64 where every label is an integer, else strings.
    is_query, is_gallery : numpy.ndarray of shape (n_rows,), bool
    category : numpy.ndarray of shape (n_rows,) or None
    sequence : numpy.ndarray of shape (n_rows,) or None
        Strings; an empty cell is a sequence of its own row only.
    """

    path: str
    labels: np.ndarray
    is_query: np.ndarray
    is_gallery: np.ndarray
    category: np.ndarray | None = None
    sequence: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return int(self.labels.size)

    def inputs(self, embeddings) -> dict:
        """The arguments of :func:`embedeval.evaluate` for ``embeddings`` (one row per table row):
        ``embeddings``, ``labels`` (the query rows), ``reference``, ``reference_labels`` (the
        gallery rows), ``query_in_reference`` and, where the table has them, ``ignore_same``
        (sequences) and ``groups`` (categories of the query rows)."""
        x = np.asarray(embeddings) if not hasattr(embeddings, "shape") else embeddings
        if len(x.shape) != 2 or x.shape[0] != self.n_rows:
            raise ValueError(
                f"'embeddings' must have one row per row of {self.path} ({self.n_rows}); got shape {tuple(x.shape)}"
            )
        queries, gallery = np.flatnonzero(self.is_query), np.flatnonzero(self.is_gallery)
        position = np.full(self.n_rows, -1, dtype=np.int64)
        position[gallery] = np.arange(gallery.size)
        out = {
            "embeddings": x[queries],
            "labels": self.labels[queries],
            "reference": x[gallery],
            "reference_labels": self.labels[gallery],
            "query_in_reference": position[queries],
        }
        if self.sequence is not None:
            out["ignore_same"] = (self.sequence[queries], self.sequence[gallery])
        if self.category is not None:
            out["groups"] = self.category[queries]
        return out


def _flag(value: str, column: str, where: str) -> bool:
    text = value.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise ValueError(f"{where}: {column} must be true or false (1 or 0); got {value!r}")


def _labels(values: list[str]) -> np.ndarray:
    try:
        return np.array([int(v) for v in values], dtype=np.int64)
    except ValueError:
        return np.array(values)


def read_oml_table(path, split: str | None = None) -> OmlTable:
    """Read an OML table; ``split`` keeps the rows whose ``split`` column equals it (OML's
    ``"validation"``), the embeddings then being those rows'."""
    path = Path(path)
    with open(path, encoding="utf-8-sig", newline="") as f:
        rows = list(csv.DictReader(f))
        names = list(rows[0]) if rows else []
    missing = [c for c in ("label", "is_query", "is_gallery") if c not in names]
    if not rows or missing:
        raise ValueError(
            f"{path}: an OML table needs the columns label, is_query, is_gallery; missing {missing or 'rows'}"
        )
    numbers = list(range(2, len(rows) + 2))
    if split is not None:
        if "split" not in names:
            raise ValueError(f"{path}: split={split!r} needs a 'split' column; the columns are {names}")
        numbers = [n for n, r in zip(numbers, rows, strict=True) if r["split"] == split]
        rows = [r for r in rows if r["split"] == split]
        if not rows:
            raise ValueError(f"{path}: no row has split {split!r}")
    flags = {
        c: np.array([_flag(r[c] or "", c, f"{path}:{n}") for n, r in zip(numbers, rows, strict=True)])
        for c in ("is_query", "is_gallery")
    }
    blank = [n for n, r in zip(numbers, rows, strict=True) if not (r["label"] or "").strip()]
    if blank:
        raise ValueError(f"{path}:{blank[0]}: label is empty ({len(blank)} row(s) without a label)")
    for c, what in (("is_query", "query"), ("is_gallery", "gallery")):
        if not flags[c].any():
            raise ValueError(f"{path}: no row is a {what} ({c} is false everywhere)")
    sequence = None
    if "sequence" in names:  # an empty cell: a sequence of its own row, equal to no other
        sequence = np.array([r["sequence"] or f"\0row {i}" for i, r in enumerate(rows)], dtype=object)
    category = np.array([r["category"] or "" for r in rows]) if "category" in names else None
    return OmlTable(
        str(path),
        _labels([r["label"].strip() for r in rows]),
        flags["is_query"],
        flags["is_gallery"],
        category,
        sequence,
    )
