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

Lines are read by the tokenizer of every TREC file (:func:`.lines.trec_lines`), so the rules
are the qrels reader's: fields split at ASCII whitespace only (a no-break space is part of an
id), ``\r\n`` ends a line, a UTF-8 byte-order mark at the start is skipped, a line whose first
character is ``#`` is a comment and blank lines are skipped. A line with another number of
fields (trec_eval allows none after the level), a level that is not a finite number or is
written so that Python and C would read different numbers (:func:`.lines.trec_number`: ``1_0``;
in ``qrels_jg``, read with ``atol``, also an exponent: ``1e1``), an id that is not UTF-8, and
in ``qrels_jg`` a document judged twice in one group are refused with one line naming the file
and the line. ``qrels_jg`` grades are truncated towards zero (trec_eval's ``atol``);
preference levels are kept as read (``atof``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .lines import is_comment, trec_lines, trec_number

# -R format -> (the fields of a line, the value's name, how trec_eval reads the value)
LAYOUTS = {
    "prefs": ("qid jg jsg docno rel_level", "rel_level", "atof"),
    "qrels_prefs": ("qid jg docno rel_level", "rel_level", "atof"),
    "qrels_jg": ("qid jg docno grade", "grade", "atol"),
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
    fields, value_name, reader = LAYOUTS[layout]
    width = len(fields.split())
    columns: tuple[list, ...] = ([], [], [], [], [], [])
    seen: dict[tuple, int] = {}
    with open(path, "rb") as f:
        for number, line, parts in trec_lines(f):
            if not parts or is_comment(line, parts):
                continue
            where = f"{path}:{number}"
            if len(parts) != width:
                raise ValueError(f"{where}: a {layout} line needs {width} fields ({fields}); got {len(parts)}")
            level = trec_number(parts[-1], value_name, where, reader)
            query, group, doc = (_text(field, where) for field in (parts[0], parts[1], parts[-2]))
            if layout == "qrels_jg":
                level = float(math.trunc(level))
                if (query, group, doc) in seen:
                    raise ValueError(
                        f"{where}: document {doc!r} is judged twice in judgement group {group!r} of query "
                        f"{query!r} (first on line {seen[query, group, doc]})"
                    )
                seen[query, group, doc] = number
            subgroup = _text(parts[2], where) if layout == "prefs" else "0"
            for column, value in zip(columns, (query, group, subgroup, doc, level, number), strict=True):
                column.append(value)
    if not columns[0]:
        raise ValueError(f"{path}: no {layout} line ({fields}) in the file")
    return Judgements(str(path), layout, *columns)


def _text(field: bytes, where: str) -> str:
    """An id as text; ValueError naming the line for bytes that are not UTF-8."""
    try:
        return field.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{where}: an id must be UTF-8 text; got the bytes {field!r}") from None
