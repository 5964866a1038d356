"""A run's preferences counted as trec_eval 10 counts them (its ``form_prefs_counts``).

For each query, the documents named in its preference lines (any judgement group) are *judged*;
each gets a place: the retrieved ones ``0 .. n_ret - 1`` in the run's order (score descending,
ties by document id *ascending*: trec_eval's preference code breaks ties the other way round
from its qrels code), the others ``n_ret ..`` in the byte order of their ids. Lines are ordered
by (judgement group, sub-group, level descending, place), and each judgement group (JG) becomes

- with one sub-group, *equivalence classes*: the documents of each level; every document of a
  higher class is preferred to every document of a lower one (a document named twice counts
  twice; a document at two levels is an error);
- with several, a *preference array*: the preferences of each sub-group, closed under
  transitivity (a preference and its reverse in one JG is an error, as is a document at level
  0 in one sub-group and above 0 in another).

A JG's relevant documents are those with a level > 0, its non-relevant ones those at 0 (and,
with one sub-group, below 0). :mod:`embedeval._metrics.trec_prefs` says what is then counted.
"""

from __future__ import annotations

import numpy as np

from ..._metrics.trec_prefs import PreferenceCounts
from .prefs import Judgements

_PER_JG = ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "notoccur", "rn_ful", "rn_poss", "rnr_ful", "rnr_poss")


def count_preferences(judgements: Judgements, rankings: dict, queries: list[str]) -> PreferenceCounts:
    """:class:`PreferenceCounts` of ``queries`` (judged ones, in their order); ``rankings`` gives
    each query's retrieved documents in trec_eval's order, after ``-M``. ValueError for
    inconsistent judgements, naming the file, query, group and document."""
    lines = judgements.by_query()
    per_jg: dict[str, list] = {name: [] for name in ("query", *_PER_JG)}
    per_query = np.zeros((5, len(queries)))
    for i, q in enumerate(queries):
        jgs, pairs = _query(judgements, lines[q], rankings.get(q, []))
        for jg in jgs:
            per_jg["query"].append(i)
            for name, value in zip(_PER_JG, jg, strict=True):
                per_jg[name].append(value)
        per_query[:, i] = pairs
    col = {name: np.asarray(v, dtype=np.int64) for name, v in per_jg.items()}
    return PreferenceCounts(
        len(queries),
        col["query"],
        col["ful_ret"],
        col["poss_ret"],
        col["ful_imp"],
        col["poss_imp"],
        col["notoccur"],
        col["rn_ful"],
        col["rn_poss"],
        col["rnr_ful"],
        col["rnr_poss"],
        per_query[0],
        per_query[1],
        per_query[2],
        per_query[3],
        per_query[4],
    )


def _places(judgements: Judgements, idx: list[int], ranked: list[str]) -> tuple[dict, int, int]:
    """({document: its place}, judged retrieved, judged) of one query."""
    judged = {judgements.doc[i] for i in idx}
    place = {d: n for n, d in enumerate(d for d in ranked if d in judged)}
    n_ret = len(place)
    for d in sorted(judged - set(place)):
        place[d] = len(place)
    return place, n_ret, len(place)


def _query(judgements: Judgements, idx: list[int], ranked: list[str]):
    """(each JG's counts, the query's pair sums) of one query."""
    place, n_ret, n = _places(judgements, idx, ranked)
    rows = sorted(
        (judgements.group[i], judgements.subgroup[i], -judgements.level[i], place[judgements.doc[i]], i) for i in idx
    )
    counts: list = []  # each JG's preferences (a, b): a preferred to b, as places
    jgs = []
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and rows[end][0] == rows[start][0]:
            end += 1
        group = rows[start:end]
        where = (judgements.path, judgements.query[group[0][4]], group[0][0])
        if len({r[1] for r in group}) > 1:
            jgs.append(_array_jg(group, n_ret, n, counts, judgements, where))
        else:
            jgs.append(_classes_jg(group, n_ret, counts, judgements, where))
        start = end
    return jgs, _pair_sums(counts, n_ret, n)


def _areas(a: np.ndarray, b: np.ndarray, n_ret: int) -> tuple[int, int, int, int, int]:
    """(ful_ret, poss_ret, ful_imp, poss_imp, notoccur) of preferences a[i] > b[i] (places)."""
    above = a < b
    ful_ret = int(np.count_nonzero(above & (b < n_ret)))
    ful_imp = int(np.count_nonzero(above & (a < n_ret) & (b >= n_ret)))
    miss_ret = int(np.count_nonzero(~above & (a < n_ret)))
    miss_imp = int(np.count_nonzero(~above & (a >= n_ret) & (b < n_ret)))
    notoccur = a.size - ful_ret - ful_imp - miss_ret - miss_imp
    return ful_ret, ful_ret + miss_ret, ful_imp, ful_imp + miss_imp, notoccur


def _fulfilled(a: np.ndarray, b: np.ndarray, n_ret: int, retrieved_only: bool) -> tuple[int, int]:
    """(fulfilled, possible) of preferences a[i] > b[i] as the Rnonrel variants count them:
    fulfilled when a is retrieved and above b; with ``retrieved_only`` only pairs of retrieved."""
    if retrieved_only:
        keep = (a < n_ret) & (b < n_ret)
        a, b = a[keep], b[keep]
    return int(np.count_nonzero((a < b) & (a < n_ret))), int(a.size)


def _classes_jg(group, n_ret, counts: list, judgements, where):
    """The counts of a JG of one sub-group (equivalence classes by level)."""
    level = np.array([-r[2] for r in group])
    place = np.array([r[3] for r in group], dtype=np.int64)
    higher = level[:, None] > level[None, :]
    ia, ib = np.nonzero(higher)
    a, b = place[ia], place[ib]
    clash = np.flatnonzero(a == b)
    if clash.size:
        first, second = sorted((group[ia[clash[0]]][4], group[ib[clash[0]]][4]))
        raise ValueError(
            f"{where[0]}:{judgements.line[second]}: query {where[1]!r}, judgement group {where[2]!r}: document "
            f"{judgements.doc[first]!r} has two rel_levels in one sub-group (the other on line "
            f"{judgements.line[first]})"
        )
    counts.append((a, b))
    areas = _areas(a, b, n_ret)
    relevant, retrieved = level > 0, place < n_ret
    r, nonrel = int(relevant.sum()), int((~relevant).sum())
    r_ret, nonrel_ret = int((relevant & retrieved).sum()), int((~relevant & retrieved).sum())
    classes = [place[level == x] for x in sorted(set(level.tolist()), reverse=True)]  # each sorted by place
    if r >= nonrel:
        rn = (areas[0] + areas[2] + r_ret * (r - nonrel), areas[1] + areas[3] + areas[4] + r * (r - nonrel))
    else:
        rn = _classes_recount(classes, classes[-1][:r], n_ret, False)
    if r_ret >= nonrel_ret:
        rnr = (areas[0] + r_ret * (r_ret - nonrel_ret), areas[1] + r * (r_ret - nonrel_ret))
    else:
        rnr = _classes_recount(classes, classes[-1][:r_ret], n_ret, True)
    return (*areas, *rn, *rnr)


def _classes_recount(classes: list, kept: np.ndarray, n_ret: int, retrieved_only: bool) -> tuple[int, int]:
    """trec_eval's recount for the Rnonrel variants of equivalence classes: the preferences
    between classes other than the last, then those of every class (the last included, as
    trec_eval does) over ``kept``, the first documents of the last class."""
    pairs = [(c1, c2) for i, c1 in enumerate(classes) for c2 in classes[i + 1 : len(classes) - 1]]
    pairs += [(c1, kept) for c1 in classes]
    ful = poss = 0
    for c1, c2 in pairs:
        a, b = np.repeat(c1, c2.size), np.tile(c2, c1.size)
        f, p = _fulfilled(a, b, n_ret, retrieved_only)
        ful, poss = ful + f, poss + p
    return ful, poss


def _array_jg(group, n_ret, n, counts: list, judgements, where):
    """The counts of a JG of several sub-groups (a preference array, closed by transitivity)."""
    members = sorted({r[3] for r in group})
    local = {p: i for i, p in enumerate(members)}
    m = len(members)
    prefer = np.zeros((m, m), dtype=bool)
    rel = {}
    for k, (_, subgroup, neg_level, p, line) in enumerate(group):
        old, new = rel.get(p, -1.0), -neg_level
        if (old > 0 and new == 0) or (old == 0 and new > 0):
            raise ValueError(
                f"{where[0]}:{judgements.line[line]}: query {where[1]!r}, judgement group {where[2]!r}: document "
                f"{judgements.doc[line]!r} has rel_level 0 in one sub-group and above 0 in another"
            )
        rel[p] = new
        for _, sub2, neg2, p2, _ in group[k + 1 :]:
            if sub2 != subgroup:
                break
            if neg2 > neg_level:
                prefer[local[p], local[p2]] = True
    closed = prefer | np.eye(m, dtype=bool)
    while True:
        wider = (closed.astype(np.int64) @ closed.astype(np.int64)) > 0
        if (wider == closed).all():
            break
        closed = wider
    np.fill_diagonal(closed, False)
    both = np.argwhere(closed & closed.T)
    if both.size:
        raise ValueError(
            f"{where[0]}: query {where[1]!r}, judgement group {where[2]!r}: the preferences of its sub-groups "
            "contradict each other (a document is both preferred and not preferred to another)"
        )
    ia, ib = np.nonzero(closed)
    place = np.asarray(members, dtype=np.int64)
    a, b = place[ia], place[ib]
    counts.append((a, b))
    areas = _areas(a, b, n_ret)
    level = np.array([rel[p] for p in members])
    retrieved = place < n_ret
    r, nonrel = int((level > 0).sum()), int((level == 0).sum())
    r_ret, nonrel_ret = int(((level > 0) & retrieved).sum()), int(((level == 0) & retrieved).sum())
    if r >= nonrel:
        rn = (areas[0] + areas[2] + r_ret * (r - nonrel), areas[1] + areas[3] + areas[4] + r * (r - nonrel))
    else:
        rn = _fulfilled(*_without_late_nonrel(a, b, place, level, r, n), n_ret, False)
    if r_ret >= nonrel_ret:
        rnr = (areas[0] + r_ret * (r_ret - nonrel_ret), areas[1] + r * (r_ret - nonrel_ret))
    else:
        rnr = _fulfilled(*_without_late_nonrel(a, b, place, level, r, n_ret), n_ret, True)
    return (*areas, *rn, *rnr)


def _without_late_nonrel(a, b, place, level, r: int, scan: int) -> tuple[np.ndarray, np.ndarray]:
    """The preferences a > b without those of a non-relevant document (level 0) placed at or
    after the (r + 1)-th non-relevant one among places ``0 .. scan - 1`` (trec_eval's recount)."""
    nonrel_places = np.sort(place[(level == 0) & (place < scan)])
    first_dropped = nonrel_places[r] if nonrel_places.size > r else scan
    dropped = place[(level == 0) & (place >= first_dropped)]
    keep = ~np.isin(a, dropped) & ~np.isin(b, dropped)
    return a[keep], b[keep]


def _pair_sums(prefs: list, n_ret: int, n: int) -> tuple[float, float, int, int, int]:
    """(sum of shares with a retrieved document, sum with both, pairs with both, with one, with
    none) over the document pairs with a preference in some JG (``prefs``: each JG's (a, b)),
    the shares added in trec_eval's order (by place of the higher, then of the lower)."""
    a = np.concatenate([p[0] for p in prefs]) if prefs else np.zeros(0, dtype=np.int64)
    b = np.concatenate([p[1] for p in prefs]) if prefs else np.zeros(0, dtype=np.int64)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    keys, inverse = np.unique(lo * n + hi, return_inverse=True)  # sorted: trec_eval's loop order
    forward = np.bincount(inverse, weights=(a < b), minlength=keys.size)  # the higher one preferred
    ratio = forward / np.bincount(inverse, minlength=keys.size)
    lo, hi = keys // max(n, 1), keys % max(n, 1)
    both, one = hi < n_ret, (lo < n_ret) & (hi >= n_ret)
    ordered = np.concatenate([ratio[both], ratio[one]])
    total = float(np.cumsum(ordered)[-1]) if ordered.size else 0.0
    total_ret = float(np.cumsum(ratio[both])[-1]) if both.any() else 0.0
    return total, total_ret, int(both.sum()), int(one.sum()), int((lo >= n_ret).sum())
