"""Qrels as tables and id files: the BEIR, MTEB and Hugging Face layouts beside TREC's.

A qrels table has the columns ``query-id``, ``corpus-id`` and ``score`` (``query_id`` /
``corpus_id`` are accepted too; other columns are ignored), as:

* TSV or CSV with a header row (BEIR's ``qrels/test.tsv``);
* JSON lines, one object per judgement;
* parquet (MTEB's and Hugging Face's layout; needs pyarrow: ``pip install 'embedeval[parquet]'``).

Ids are read as strings: a JSON or parquet id is a string, or an integer read as its decimal
text (``7`` is ``"7"``, as in a TSV file); any other value (``1.0``, ``true``, ``null``, a list)
is refused, naming the file, line and value, rather than matched as ``"1.0"`` or ``"True"``. A
UTF-8 byte-order mark at the start of a text file is skipped. A file that is none of these is
read as TREC qrels (``qid iteration docid grade``). An id file holds one id per line, or JSON
lines with ``_id`` (BEIR) or ``id``. Rules, each said in one line:

* a document judged twice for a query with the same grade: kept once, with a warning; with two
  different grades: an error naming the file and both lines;
* a grade that is not a finite number, a missing column or field: an error naming the file and line.
"""

from __future__ import annotations

import csv
import json
import math
import warnings
from pathlib import Path

_QUERY, _DOC, _SCORE = ("query-id", "query_id"), ("corpus-id", "corpus_id"), ("score",)
_JSON_SUFFIXES = (".jsonl", ".json", ".ndjson")


def is_table(path: Path) -> bool:
    """Whether ``path`` is a qrels table (by its suffix, or a header row naming the columns)."""
    suffix = path.suffix.lower()
    if suffix in (*_JSON_SUFFIXES, ".parquet", ".csv"):
        return True
    with open(path, encoding="utf-8-sig", errors="replace") as f:
        for line in f:
            if line.strip():
                fields = [c.strip().lower() for c in line.replace(",", "\t").split("\t")]
                return any(n in fields for n in _QUERY) and any(n in fields for n in _DOC)
    return False


def read_qrels_table(path) -> dict[str, dict[str, float]]:
    """``{query id: {corpus id: grade}}`` of a qrels table, queries and documents in file order."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        rows = _parquet_rows(path)
    elif suffix in _JSON_SUFFIXES:
        rows = _json_rows(path)
    else:
        rows = _delimited_rows(path, "," if suffix == ".csv" else "\t")
    return _collect(path, rows)


def _column(names: list[str], wanted: tuple[str, ...], path: Path) -> int:
    lowered = [n.strip().lower() for n in names]
    for name in wanted:
        if name in lowered:
            return lowered.index(name)
    raise ValueError(f"{path}: a qrels table needs a column {wanted[0]!r}; its columns are {names}")


def _delimited_rows(path: Path, delimiter: str):
    with open(path, encoding="utf-8-sig", newline="") as f:
        reader = csv.reader(f, delimiter=delimiter)
        head = next(reader, None)
        if head is None:
            raise ValueError(f"{path} is empty; a qrels table needs a header row (query-id, corpus-id, score)")
        at = [_column(head, wanted, path) for wanted in (_QUERY, _DOC, _SCORE)]
        for number, fields in enumerate(reader, start=2):
            if not fields or not "".join(fields).strip():
                continue
            if len(fields) <= max(at):
                raise ValueError(
                    f"{path}:{number}: a line needs the {len(head)} fields of the header; got {len(fields)}"
                )
            yield number, fields[at[0]].strip(), fields[at[1]].strip(), fields[at[2]].strip()


def _json_rows(path: Path):
    with open(path, encoding="utf-8-sig") as f:
        for number, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{number}: not a JSON object ({exc.msg})") from None
            if not isinstance(record, dict):
                raise ValueError(f"{path}:{number}: a line must be a JSON object; got {type(record).__name__}")
            values = [_field(record, wanted, path, number) for wanted in (_QUERY, _DOC, _SCORE)]
            where = f"{path}:{number}"
            yield number, id_text(values[0], where, _QUERY[0]), id_text(values[1], where, _DOC[0]), values[2]


def id_text(value, where: str, name: str) -> str:
    """An id read from JSON or parquet as a string: a string as it is, an integer as its decimal
    text; ValueError naming ``where``, the field and the value for anything else (a float, a
    boolean, null, a list or object would otherwise be matched as ``"1.0"``, ``"True"``...)."""
    if isinstance(value, str):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    shown = json.dumps(value) if isinstance(value, (float, bool, list, dict, type(None))) else repr(value)
    raise ValueError(f"{where}: {name!r} must be a string or an integer; got {shown}")


def _field(record: dict, wanted: tuple[str, ...], path: Path, number: int):
    for name in wanted:
        if name in record:
            return record[name]
    raise ValueError(f"{path}:{number}: the object has no {wanted[0]!r}; it has {sorted(record)}")


def _parquet_rows(path: Path):
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(f"reading {path} needs pyarrow: pip install 'embedeval[parquet]'") from None
    table = pq.read_table(path)
    at = [table.column_names[_column(table.column_names, wanted, path)] for wanted in (_QUERY, _DOC, _SCORE)]
    queries, docs, scores = (table.column(name).to_pylist() for name in at)
    for number, (q, d, s) in enumerate(zip(queries, docs, scores, strict=True), start=1):
        where = f"{path}: row {number}"
        yield number, id_text(q, where, at[0]), id_text(d, where, at[1]), s


def _grade(value, where: str) -> float:
    if isinstance(value, bool):  # float(True) is 1.0: a JSON true is no grade
        raise ValueError(f"{where}: score must be a number; got {json.dumps(value)}")
    try:
        grade = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{where}: score must be a number; got {value!r}") from None
    if not math.isfinite(grade):
        raise ValueError(f"{where}: score must be a finite number; got {value!r}")
    return grade


def _collect(path: Path, rows) -> dict[str, dict[str, float]]:
    qrels: dict[str, dict[str, float]] = {}
    first_line: dict[tuple[str, str], int] = {}
    repeated, example = 0, None
    for number, query, doc, value in rows:
        grade = _grade(value, f"{path}:{number}")
        judged = qrels.setdefault(query, {})
        if doc in judged:
            if judged[doc] != grade:
                raise ValueError(
                    f"{path}:{number}: document {doc!r} is judged twice for query {query!r} with different grades "
                    f"({judged[doc]:g} at line {first_line[query, doc]}, {grade:g} here)"
                )
            repeated += 1
            example = example or (number, query, doc)
            continue
        judged[doc] = grade
        first_line[query, doc] = number
    if repeated:
        number, query, doc = example
        warnings.warn(
            f"{path}: {repeated} judgement(s) repeat an earlier line with the same grade and are counted once "
            f"(first at line {number}: document {doc!r} of query {query!r})",
            UserWarning,
            stacklevel=4,
        )
    return qrels


def read_id_file(path) -> list[str]:
    """The ids of an id file, in file order: one per line (blank lines skipped), or JSON lines
    with ``_id`` (BEIR's corpus.jsonl and queries.jsonl) or ``id``, read as strings."""
    path = Path(path)
    ids = []
    with open(path, encoding="utf-8-sig", newline="\n") as f:  # lines end at \n (\r\n: \r is stripped)
        json_lines = None
        for number, line in enumerate(f, start=1):
            text = line.strip()
            if not text:
                continue
            if json_lines is None:
                json_lines = text.startswith("{")
            if not json_lines:
                ids.append(text)
                continue
            try:
                record = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(
                    f"{path}:{number}: not a JSON object ({exc.msg}); the file's first line is one"
                ) from None
            if not isinstance(record, dict) or not ("_id" in record or "id" in record):
                raise ValueError(f"{path}:{number}: a JSON line needs an '_id' (BEIR) or 'id' field")
            name = "_id" if "_id" in record else "id"
            ids.append(id_text(record[name], f"{path}:{number}", name))
    return ids
