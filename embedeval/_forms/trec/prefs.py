"""trec_eval 10's other judgement files, read: preferences and judgement groups.

===============  ===============================  ==================================================
``-R``           a line                           what it says
===============  ===============================  ==================================================
``prefs``        ``qid jg jsg docno rel_level``   within judgement sub-group ``jsg`` of judgement
                                                  group ``jg``, a document with a higher
                                                  ``rel_level`` is preferred to one with a lower
``qrels_prefs``  ``qid jg docno rel_level``       a qrels file read as preferences: each ``jg``
                                                  (a qrels' iteration field) is one sub-group
``qrels_jg``     ``qid jg docno grade``           qrels, once per judgement group ``jg``
===============  ===============================  ==================================================

The rules of the qrels reader: a line whose first character is ``#`` is a comment; blank lines
are skipped; a line with another number of fields (trec_eval allows none after the level), a
level that is not a finite number, and in ``qrels_jg`` a document judged twice in one group are
refused with one line naming the file and the line. ``qrels_jg`` grades are truncated towards
zero (trec_eval's ``atol``); preference levels are kept as read (``atof``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

# -R format -> (the fields of a line, the value's name)
LAYOUTS = {
    "prefs": ("qid jg jsg docno rel_level", "rel_level"),
    "qrels_prefs": ("qid jg docno rel_level", "rel_level"),
    "qrels_jg": ("qid jg docno grade", "grade"),
}


@dataclass(frozen=True)
class Judgements:
    """The lines of a judgement file, one entry per line in file order.

    Attributes
    ----------
    path, layout : str
    query, group, subgroup, doc : list of str
        The ids of each line (``subgroup`` is ``"0"`` where the layout has none).
    level : list of float
    line : list of int
        Each entry's line number in the file, for messages.
    """

    path: str
    layout: str
    query: list
    group: list
    subgroup: list
    doc: list
    level: list
    line: list

    def queries(self) -> list[str]:
        """The judged queries in the byte order of their ids (trec_eval's ``strcmp`` order)."""
        return sorted(set(self.query))

    def by_query(self) -> dict[str, list[int]]:
        """{query: the indices of its lines, in file order}."""
        out: dict[str, list[int]] = {}
        for i, q in enumerate(self.query):
            out.setdefault(q, []).append(i)
        return out


def read_judgements(path, layout: str) -> Judgements:
    """The lines of a ``prefs``, ``qrels_prefs`` or ``qrels_jg`` file (:data:`LAYOUTS`);
    ValueError naming the file and line for a bad line, or for a file without judgements."""
    if layout not in LAYOUTS:
        raise ValueError(f"'layout' must be one of {', '.join(LAYOUTS)}; got {layout!r}")
    fields, value_name = LAYOUTS[layout]
    width = len(fields.split())
    columns: tuple[list, ...] = ([], [], [], [], [], [])
    seen: dict[tuple, int] = {}
    with open(path, encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            parts = text.split()
            if not parts or text.startswith("#"):
                continue
            where = f"{path}:{number}"
            if len(parts) != width:
                raise ValueError(f"{where}: a {layout} line needs {width} fields ({fields}); got {len(parts)}")
            level = _level(parts[-1], value_name, where)
            query, group, doc = parts[0], parts[1], parts[-2]
            if layout == "qrels_jg":
                level = float(math.trunc(level))
                if (query, group, doc) in seen:
                    raise ValueError(
                        f"{where}: document {doc!r} is judged twice in judgement group {group!r} of query "
                        f"{query!r} (first on line {seen[query, group, doc]})"
                    )
                seen[query, group, doc] = number
            subgroup = parts[2] if layout == "prefs" else "0"
            for column, value in zip(columns, (query, group, subgroup, doc, level, number), strict=True):
                column.append(value)
    if not columns[0]:
        raise ValueError(f"{path}: no {layout} line ({fields}) in the file")
    return Judgements(str(path), layout, *columns)


def _level(text: str, name: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: {name} must be a number; got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{where}: {name} must be a finite number; got {text!r}")
    return value
