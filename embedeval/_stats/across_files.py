"""Tables of scores per dataset and system from files: CSV/TSV (wide or long), JSON, and a folder
of MTEB result files, read with the standard library alone.

MTEB writes one JSON per model and task, ``<folder>/<model>/<revision>/<TaskName>.json``, holding
``"task_name"`` and ``"scores": {split: [{"main_score": ..., "hf_subset": ..., "languages": [...],
...}, ...]}``, with a ``model_meta.json`` beside it whose ``"name"`` is the model's name (without
it, the name is the ``<model>`` folder with ``__`` read as ``/``, as MTEB's own loader does).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

_LONG = ["dataset", "system", "score"]
_PER_QUERY = ["dataset", "system", "query", "value"]


def _number(text: str, where: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{where}: a score must be a number; got {text!r}") from None


def _rows(path: Path) -> list[list[str]]:
    text = path.read_text(encoding="utf-8-sig")
    dialect = csv.excel_tab if path.suffix.lower() in (".tsv", ".txt") else csv.excel
    return [[c.strip() for c in row] for row in csv.reader(io.StringIO(text, newline=""), dialect) if row and any(row)]


def _put(table: dict, dataset: str, system: str, value, where: str) -> None:
    row = table.setdefault(dataset, {})
    if system in row:
        raise ValueError(f"{where}: system {system!r} appears twice for dataset {dataset!r}")
    row[system] = value


def read_score_table(path) -> dict:
    """``{dataset: {system: score}}`` from a CSV/TSV or JSON file.

    CSV (``.tsv``/``.txt``: tab-separated) is wide, one row per dataset with its name first and a
    head row naming the systems, or long, with the head ``dataset,system,score``. JSON is
    ``{dataset: {system: score}}``, every score a JSON number. Either way a dataset or a system
    given twice, and a score that is not a number, are refused, naming the file and the place.
    """
    path = Path(path)
    if path.suffix.lower() == ".json":
        return _json_scores(path)
    rows = _rows(path)
    if len(rows) < 2:
        raise ValueError(f"{path}: a table of scores needs a head row and a row per dataset; got {len(rows)} rows")
    head, table = rows[0], {}
    if [h.lower() for h in head] == _LONG:
        for i, row in enumerate(rows[1:], start=2):
            if len(row) != 3:
                raise ValueError(f"{path}, line {i}: expected 3 fields (dataset, system, score); got {len(row)}")
            _put(table, row[0], row[1], _number(row[2], f"{path}, line {i}"), f"{path}, line {i}")
        return table
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != len(head):
            raise ValueError(f"{path}, line {i}: expected {len(head)} fields like the head row; got {len(row)}")
        for system, cell in zip(head[1:], row[1:], strict=True):
            _put(table, row[0], system, _number(cell, f"{path}, line {i}"), f"{path}, line {i}")
    return table


class _Pairs(list):
    """A JSON object as its (key, value) pairs in order, so that a key given twice is seen."""


def _json_scores(path: Path) -> dict:
    data = json.loads(path.read_text(encoding="utf-8-sig"), object_pairs_hook=_Pairs)
    if not isinstance(data, _Pairs) or not all(isinstance(row, _Pairs) for _, row in data):
        raise ValueError(f"{path}: JSON scores must be {{dataset: {{system: score}}}}")
    table: dict = {}
    for dataset, row in data:
        if dataset in table:
            raise ValueError(f"{path}: dataset {dataset!r} appears twice")
        table[dataset] = {}
        for system, value in row:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                got = f"the string {value!r}" if isinstance(value, str) else json.dumps(value)
                got = "an object" if isinstance(value, _Pairs) else got
                raise ValueError(f"{path} ({dataset}, {system}): a score must be a JSON number; got {got}")
            _put(table, dataset, system, float(value), str(path))
    return table


def read_per_query_table(path) -> dict:
    """``{dataset: {system: {query: value}}}`` from a CSV/TSV with the head
    ``dataset,system,query,value`` (one row per dataset, system and query)."""
    path = Path(path)
    rows = _rows(path)
    if not rows or [h.lower() for h in rows[0]] != _PER_QUERY:
        got = rows[0] if rows else []
        raise ValueError(f"{path}: per-query values need the head row {','.join(_PER_QUERY)}; got {','.join(got)!r}")
    table: dict = {}
    for i, row in enumerate(rows[1:], start=2):
        if len(row) != 4:
            raise ValueError(f"{path}, line {i}: expected 4 fields (dataset, system, query, value); got {len(row)}")
        queries = table.setdefault(row[0], {}).setdefault(row[1], {})
        if row[2] in queries:
            raise ValueError(f"{path}, line {i}: query {row[2]!r} appears twice for ({row[0]}, {row[1]})")
        queries[row[2]] = _number(row[3], f"{path}, line {i}")
    return table


def _model_name(file: Path, root: Path) -> str:
    meta = file.parent / "model_meta.json"
    if meta.is_file():
        name = json.loads(meta.read_text(encoding="utf-8")).get("name")
        if name:
            return str(name)
    parts = file.relative_to(root).parts  # <model>/<revision>/<task>.json, or <model>/<task>.json
    folder = parts[-3] if len(parts) >= 3 else parts[0] if len(parts) == 2 else root.resolve().name
    return folder.replace("__", "/")


def _split_score(result: dict, split, where: Path) -> float:
    scores = result["scores"]
    if split is None:
        split = "test" if "test" in scores else (next(iter(scores)) if len(scores) == 1 else None)
    if split is None or split not in scores:
        raise ValueError(f"{where}: split {split!r} not in its scores; it has {sorted(scores)} (choose one with split)")
    entries = scores[split]
    if not isinstance(entries, list) or not entries or not all("main_score" in e for e in entries):
        raise ValueError(f"{where}: scores[{split!r}] must be a non-empty list of {{'main_score': ..., ...}}")
    return sum(float(e["main_score"]) for e in entries) / len(entries)


def read_mteb_results(folder, *, split=None) -> dict:
    """``{task: {model: score}}`` from a folder of MTEB result files.

    Every ``*.json`` under ``folder`` (``model_meta.json`` aside) that holds ``"task_name"`` and
    ``"scores"`` is one (model, task); other JSON files are skipped. The score is the mean of
    ``main_score`` over the split's subsets (``hf_subset``), as MTEB's ``TaskResult.get_score``
    averages them; ``split`` defaults to ``"test"``, or a file's only split.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"'folder' must be a folder of MTEB results; no such folder: {folder}")
    table: dict = {}
    for file in sorted(root.rglob("*.json")):
        if file.name == "model_meta.json":
            continue
        try:
            result = json.loads(file.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise ValueError(f"{file}: not JSON ({exc})") from None
        if not isinstance(result, dict) or "task_name" not in result or not isinstance(result.get("scores"), dict):
            continue
        _put(table, str(result["task_name"]), _model_name(file, root), _split_score(result, split, file), str(file))
    if not table:
        raise ValueError(f"{folder}: no MTEB result file (JSON with 'task_name' and 'scores') under it")
    return table
