"""Rankings and judgements held in Python containers -> :class:`~embedeval._forms.graded.Judged`.

The work per item is kept in C: containers are flattened with :func:`itertools.chain` into
numpy arrays and checked once per query or vectorised, never item by item in Python.

* ``{id: score}`` runs (pytrec_eval's form): each judged id is looked up in its query's run (a
  dict lookup, a few per query) and ranked by counting the documents that score higher
  (:mod:`embedeval._forms.score_order`); only ties need the ids, and only in the queries that have one.
  Under a tie-aware rule (``ties=``) ids are never compared: each judged id's tie group is the
  documents scoring more (before it) and those scoring exactly the same (the group).
* Sequences of ids: ids are hashed (``hash``, kept non-negative) and matched as integers
  (:mod:`embedeval._forms.match`). Every match is confirmed with ``==``; a hash collision (a match
  that is not equal, or two ids of one ranking with one hash) sends the whole input through
  the exact dict-based path, which also reports duplicate ids. Equal ids always have equal
  hashes, so no match is ever missed.
"""

from __future__ import annotations

import dataclasses
import itertools
import numbers
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .graded import Judged
from .match import Collision, find, first_duplicate, offsets_of, padded_blocks
from .score_order import count_above, sort_segments, tie_groups, unsorted_segments

_NONNEGATIVE = np.int64(0x7FFF_FFFF_FFFF_FFFF)


@dataclass(frozen=True)
class Judgements:
    """Every query's judged ids and grades, flat: ``ids[offsets[q]:offsets[q + 1]]``."""

    ids: list
    grades: np.ndarray
    offsets: np.ndarray

    @property
    def rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.offsets.size - 1), np.diff(self.offsets))

    def every(self) -> tuple[np.ndarray, list, np.ndarray]:
        """(rows, ids, grades) of every judged item, by query: those with a grade <= 0 count in
        trec_eval's measures of judged non-relevant documents (bpref, infAP, relstring)."""
        return self.rows, self.ids, self.grades


def order_by_score(scored: Mapping) -> list:
    """Ids of a {id: score} mapping in trec_eval's order: score descending, ties by id descending."""
    items = sorted(scored.items(), key=lambda kv: kv[0], reverse=True)
    return [doc for doc, _ in sorted(items, key=lambda kv: kv[1], reverse=True)]


def _is_id_list(entry) -> bool:
    return isinstance(entry, (Sequence, np.ndarray, set, frozenset)) and not isinstance(entry, (str, bytes))


def judgements(entries: list, name: Callable[[int], str]) -> Judgements:
    """Flatten per-query relevance: a mapping ``{id: grade}``, or a set or list of relevant ids
    (grade 1). Grades must be finite real numbers; a list may not name an id twice."""
    kinds = set(map(type, entries))
    if kinds <= {dict}:
        ids = list(itertools.chain.from_iterable(entries))
        raw = list(itertools.chain.from_iterable(map(dict.values, entries)))
    elif kinds <= {set, frozenset}:
        ids = list(itertools.chain.from_iterable(entries))
        raw = None
    else:
        ids, raw = [], []
        for i, entry in enumerate(entries):
            if isinstance(entry, Mapping):
                ids += list(entry.keys())
                raw += list(entry.values())
                continue
            if not _is_id_list(entry):
                raise TypeError(
                    f"'relevance' of query {name(i)} must be a set or list of relevant ids or a mapping id -> "
                    f"grade; got {type(entry).__name__}"
                )
            listed = entry.tolist() if isinstance(entry, np.ndarray) else list(entry)
            try:
                distinct = len(set(listed))
            except TypeError:
                raise TypeError(f"'relevance' ids must be hashable; got an unhashable id in query {name(i)}") from None
            if distinct != len(listed):
                raise ValueError(f"'relevance' of query {name(i)} lists an id twice")
            ids += listed
            raw += [1.0] * len(listed)
    offsets = offsets_of(np.fromiter(map(len, entries), np.int64, len(entries)))
    grades = np.ones(len(ids)) if raw is None else _grades(raw, ids, offsets, name)
    return Judgements(ids, grades, offsets)


def _grades(raw: list, ids: list, offsets: np.ndarray, name) -> np.ndarray:
    def bad(k: int, value) -> ValueError:
        q = int(np.searchsorted(offsets, k, side="right") - 1)
        return ValueError(
            f"'relevance' grades must be finite numbers; got {value!r} for id {ids[k]!r} of query {name(q)}"
        )

    if not set(map(type, raw)) <= {int, float}:
        for k, g in enumerate(raw):
            if isinstance(g, bool) or not isinstance(g, numbers.Real):
                raise bad(k, g)
    grades = np.array(raw, dtype=np.float64)
    if not np.isfinite(grades).all():
        k = int(np.flatnonzero(~np.isfinite(grades))[0])
        raise bad(k, raw[k])
    return grades


def check_scores(maps: list, name: Callable[[int], str]) -> np.ndarray:
    """Every score of ``{id: score}`` runs, flat, as float64; ValueError naming the query and id
    of a score that is not a real number or is NaN."""
    values = dict.values if set(map(type, maps)) <= {dict} else (lambda m: m.values())
    try:  # sum raises for strings and other non-numbers in C; np.fromiter would parse '10'
        real = not isinstance(sum(map(sum, map(values, maps))), complex)  # complex numbers add up
    except TypeError:
        real = False
    if not real:
        for i, m in enumerate(maps):
            for doc, score in m.items():
                if not isinstance(score, numbers.Real):
                    raise ValueError(
                        f"'rankings' scores must be real numbers; got {score!r} ({type(score).__name__}) for id "
                        f"{doc!r} of query {name(i)}"
                    ) from None
    total = sum(map(len, maps))
    scores = np.fromiter(itertools.chain.from_iterable(map(values, maps)), np.float64, count=total)
    if np.isnan(scores).any():
        k = int(np.flatnonzero(np.isnan(scores))[0])
        offsets = offsets_of(np.fromiter(map(len, maps), np.int64, len(maps)))
        i = int(np.searchsorted(offsets, k, side="right") - 1)
        doc = next(itertools.islice(iter(maps[i]), k - int(offsets[i]), None))
        raise ValueError(f"'rankings' scores must not be NaN; got NaN for id {doc!r} of query {name(i)}")
    return scores


def _plain(value):
    """A numpy scalar as its Python value (whose comparisons with floats are exact)."""
    return value.item() if isinstance(value, np.generic) else value


def exact_scores(maps: list, scores: np.ndarray) -> tuple[np.ndarray, dict | None]:
    """``(scores, rank)``: the float64 ``scores`` (from :func:`check_scores`) when they are exact,
    else, where an int score is beyond 2**53 (float64 would tie 2**53 and 2**53 + 1), every
    score's rank among the distinct scores, in float64, and the ``{score: rank}`` used. Python
    compares ints and floats exactly, so order and ties are those of the scores given."""
    if not scores.size or float(np.abs(scores).max()) < 2.0**53:
        return scores, None
    every = [_plain(v) for m in maps for v in m.values()]
    if all(isinstance(v, float) for v in every):
        return scores, None
    rank = {v: float(i) for i, v in enumerate(sorted(set(every)))}
    return np.fromiter(map(rank.__getitem__, every), np.float64, len(every)), rank


def from_scored(maps: list, judged: Judgements, name: Callable[[int], str], groups: bool = False) -> Judged:
    """``{id: score}`` runs (one mapping per query) against ``judged``; with ``groups``, the tie
    group of each judged id instead of trec_eval's ranks (for the tie-aware rules)."""
    scores, rank = exact_scores(maps, check_scores(maps, name))
    n = len(maps)
    offsets = offsets_of(np.fromiter(map(len, maps), np.int64, n))
    rows, ids, grades = judged.every()
    nan = float("nan")
    owners = list(map(maps.__getitem__, rows.tolist()))
    if rank is not None:  # scores replaced by their exact ranks
        looked_up = np.fromiter(
            (rank[_plain(m[d])] if d in m else nan for m, d in zip(owners, ids, strict=False)), np.float64, len(ids)
        )
    elif set(map(type, maps)) <= {dict}:  # dict.get through map: no Python frame per id
        looked_up = np.fromiter(map(dict.get, owners, ids, itertools.repeat(nan)), np.float64, len(ids))
    else:
        looked_up = np.fromiter((m.get(d, nan) for m, d in zip(owners, ids, strict=False)), np.float64, len(ids))
    found = ~np.isnan(looked_up)  # NaN scores were refused above: NaN means "not retrieved"
    rows, values = rows[found], looked_up[found]
    unsorted = unsorted_segments(scores, offsets)
    if unsorted.any():
        scores = scores[sort_segments(offsets, unsorted, (-scores,))]
    if groups:
        start, size = tie_groups(scores, offsets, rows, values)
        judged_items = _judged(n, rows, start + 1.0, grades[found], judged, maps)
        return dataclasses.replace(judged_items, group_start=start, group_size=size)
    above, tied = count_above(scores, offsets, rows, values)
    ranks = above + 1.0
    tied = np.flatnonzero(tied)  # another document has the same score: ids decide
    if tied.size:
        found_ids = list(itertools.compress(ids, found.tolist()))
        positions = {}
        for k in tied.tolist():
            q = int(rows[k])
            if q not in positions:
                positions[q] = {d: p for p, d in enumerate(order_by_score(maps[q]))}
            ranks[k] = positions[q][found_ids[k]] + 1.0
    return _judged(n, rows, ranks, grades[found], judged, maps)


def from_lists(lists: list, judged: Judgements, name: Callable[[int], str]) -> Judged:
    """Sequences of ids, best first (one per query), against ``judged``."""
    try:
        return _from_hashes(lists, judged)
    except Collision:
        return _from_lists_exactly(lists, judged, name)


def _from_hashes(lists: list, judged: Judgements) -> Judged:
    n = len(lists)
    offsets = offsets_of(np.fromiter(map(len, lists), np.int64, n))
    try:
        hashes = np.fromiter(map(hash, itertools.chain.from_iterable(lists)), np.int64, int(offsets[-1]))
    except TypeError:
        raise Collision from None  # an unhashable id: the exact path names it
    hashes &= _NONNEGATIVE
    rows, ids, grades = judged.every()
    judged_hashes = np.fromiter(map(hash, ids), np.int64, len(ids)) & _NONNEGATIVE
    where = np.full(rows.size, -1, dtype=np.int64)
    for start, block in padded_blocks(hashes, offsets):
        if first_duplicate(block) is not None:
            raise Collision  # a duplicate id, or two ids with one hash
        sel = slice(*np.searchsorted(rows, [start, start + block.shape[0]]))
        where[sel] = find(block, rows[sel] - start, judged_hashes[sel])
    found = np.flatnonzero(where >= 0)
    ranked = map(operator.getitem, map(lists.__getitem__, rows[found].tolist()), where[found].tolist())
    if not all(map(operator.eq, ranked, map(ids.__getitem__, found.tolist()))):
        raise Collision
    return _judged(n, rows[found], where[found] + 1.0, grades[found], judged, lists)


def _from_lists_exactly(lists: list, judged: Judgements, name) -> Judged:
    rows, ids, grades = judged.every()
    positions = []
    for i, ranking in enumerate(lists):
        position: dict = {}
        for p, d in enumerate(ranking):
            try:
                if position.setdefault(d, p) != p:
                    raise ValueError(f"'rankings' of query {name(i)} lists id {d!r} more than once")
            except TypeError:
                raise TypeError(
                    f"'rankings' ids must be hashable; got {type(d).__name__} {d!r} in query {name(i)}"
                ) from None
        positions.append(position)
    where = np.fromiter((positions[r].get(d, -1) for r, d in zip(rows.tolist(), ids, strict=False)), np.int64, len(ids))
    found = np.flatnonzero(where >= 0)
    return _judged(len(lists), rows[found], where[found] + 1.0, grades[found], judged, lists)


def _judged(n, rows, ranks, grades, judged: Judgements, rankings: list) -> Judged:
    if rows.size == 0 and judged.ids:
        check_id_types(rankings, judged.ids)
    keep = judged.grades > 0
    n_retrieved = np.fromiter(map(len, rankings), np.int64, n)
    n_zero = np.bincount(judged.rows[judged.grades == 0], minlength=n)
    return Judged(
        n, rows, ranks, grades, judged.rows[keep], judged.grades[keep], n_retrieved=n_retrieved, n_zero=n_zero
    )


def _kind(x) -> str:
    if isinstance(x, numbers.Number):
        return "number"
    return "str" if isinstance(x, str) else type(x).__name__


def check_id_types(rankings: list, judged_ids: list) -> None:
    """When no judged id was retrieved at all: refuse ids of different kinds (``5`` and ``'5'``),
    which can never be equal, rather than score 0 silently."""
    ranked = [next(iter(r)) for r in rankings if len(r)]
    if not ranked:
        return
    ranked_kinds, judged_kinds = set(map(_kind, ranked)), set(map(_kind, judged_ids))
    if ranked_kinds.isdisjoint(judged_kinds):
        a, b = ranked[0], judged_ids[0]
        raise ValueError(
            f"no judged id appears in any ranking: 'rankings' holds {type(a).__name__} ids (e.g. {a!r}) and "
            f"'relevance' holds {type(b).__name__} ids (e.g. {b!r}), which are never equal; give both the same type"
        )
