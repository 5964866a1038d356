"""TREC run and qrels files evaluated as columns: what ``embedeval rankings`` runs.

The run's lines are grouped by query and put in trec_eval's order (:func:`order`: score
descending, ties by document id descending, checked in one pass and sorted only where needed);
each judged document is then found among its query's retrieved ones by its number
(:mod:`embedeval._forms.match`). Where the numbers are hashes, every match is confirmed on the id
strings, and a collision sends both files through the exact line reader. No Python object is
made per line: memory stays a few arrays of the run's length, not the dicts of dicts the same
data would make.
"""

from __future__ import annotations

import dataclasses
import gc
from dataclasses import dataclass

import numpy as np

from ..graded import Judged
from ..match import Collision, find, first_duplicate, offsets_of, padded_blocks
from ..rankings import result_of
from ..score_order import flagged_segments, sort_segments, tie_groups, unsorted_segments
from .columns import QRELS, RUN, Columns, MissingIds, hash_strings, keeping
from .lines import locate_duplicate, no_run_lines, read, reads_in_batches


@dataclass(frozen=True)
class Ordered:
    """A run's lines grouped by query (in order of first appearance), each query's in trec_eval's
    order: ``lines[offsets[q]:offsets[q + 1]]`` are the lines of query ``q``, best first."""

    lines: np.ndarray | None  # None: the file's own order
    doc: np.ndarray
    offsets: np.ndarray

    def line(self, positions: np.ndarray) -> np.ndarray:
        return positions if self.lines is None else self.lines[positions]


def order(run: Columns, by_id: bool = True, ascending_ids: bool = False) -> Ordered:
    """The run in trec_eval's order; raises the line reader's error for a document listed twice
    for a query. Without ``by_id``, equal scores stay in any order (the tie-aware rules read
    only which documents tie, never their ids); with ``ascending_ids``, the smaller id of equal
    scores comes first (trec_eval's rule for preference judgements)."""
    offsets, perm = run.grouped(), None
    if offsets is None:  # the lines of some query are not together
        query = run.query
        offsets = offsets_of(np.bincount(query, minlength=len(run.queries)))
        perm = np.argsort(query, kind="stable")
    score = run.value if perm is None else run.value[perm]
    unsorted = unsorted_segments(score, offsets)
    if unsorted.any():
        by_score = sort_segments(offsets, unsorted, (-score,))
        perm, score = (by_score if perm is None else perm[by_score]), score[by_score]
    same = score[1:] == score[:-1]
    tied = flagged_segments(same, offsets) if by_id else np.zeros(offsets.size - 1, dtype=bool)
    if tied.any():  # equal scores: trec_eval puts the larger id (as a string) first, unless ascending_ids
        member = np.zeros(score.size, dtype=bool)  # the lines of a tie; the others keep rank 0
        member[1:] |= same
        member[:-1] |= same
        entries = np.flatnonzero(member & np.repeat(tied, np.diff(offsets)))
        rank = np.zeros(score.size, dtype=np.int64)
        rank[entries[run.order_of(entries if perm is None else perm[entries])]] = np.arange(entries.size)
        by_id = sort_segments(offsets, tied, (rank if ascending_ids else -rank, -score))
        perm = by_id if perm is None else perm[by_id]
    doc = run.doc if perm is None else run.doc[perm]
    for _, block in padded_blocks(doc, offsets):
        if first_duplicate(block) is not None:
            locate_duplicate(run.path, RUN)  # raises, unless two ids only shared a hash
            break
    return Ordered(perm, doc, offsets)


def _check_qrels(qrels: Columns) -> None:
    query = qrels.query
    by_key = np.lexsort((qrels.doc, query))
    q, d = query[by_key], qrels.doc[by_key]
    if ((q[1:] == q[:-1]) & (d[1:] == d[:-1])).any():
        locate_duplicate(qrels.path, QRELS)


@dataclass(frozen=True)
class Coverage:
    """How the queries of a run and its qrels meet."""

    judged_without_run: int
    run_without_judgements: int
    judged_with_run: int


def evaluate_files(
    run_path,
    qrels_path,
    parsed,
    threshold: float,
    empty: str,
    complete: bool,
    ties=None,
    max_retrieved: int | None = None,
    judged_only: bool = False,
    *,
    hasher=hash_strings,
):
    """(EvaluationResult, :class:`Coverage`) of a run file against a qrels file: the common queries
    in run order, as trec_eval; with ``complete``, also every judged query without a run, after
    them, as an empty ranking (trec_eval ``-c``). ``ties``: None (trec_eval's rule) or a
    tie-aware rule (:mod:`embedeval._metrics.ties`), over the documents of equal score within
    each query's evaluated ranking. ``max_retrieved`` (trec_eval's -M) cuts each ranking at that
    many documents; ``judged_only`` (-J) then keeps the documents judged with a grade >= 0.
    ``hasher``: the document ids' hash (:func:`~.columns.hash_strings`; the result does not
    depend on it, collisions included)."""
    options = (parsed, threshold, empty, complete, ties, max_retrieved, judged_only)
    return on_both_files(run_path, qrels_path, lambda run, qrels: _evaluate(run, qrels, *options), hasher)


def on_both_files(run_path, qrels_path, evaluate, hasher=hash_strings):
    """``evaluate(run, qrels)`` on the columns of the two files, read as cheaply as stays exact:
    the qrels first (hashed, where the run is read in batches, so that the run keeps as strings
    only the ids that may be judged: enough to confirm every match); the run read again whole
    where ``evaluate`` raises :class:`MissingIds` (ties that were not neighbours in the file: their
    ids decide), and both files read with exact codes where it raises :class:`Collision`."""
    qrels = read(qrels_path, QRELS, hasher=hasher)
    if qrels.exact and reads_in_batches(run_path):  # hashes to choose the run's ids to keep by
        qrels = qrels.hashed(hasher)
    run = read(run_path, RUN, keep=None if qrels.exact else keeping(qrels.doc), hasher=hasher)
    if run.exact != qrels.exact:  # one file needed the line reader: compare hashes of both
        run, qrels = run.hashed(hasher), qrels.hashed(hasher)
    try:
        try:
            return evaluate(run, qrels)
        except MissingIds:
            return evaluate(read(run_path, RUN, hasher=hasher).hashed(hasher), qrels)
    except Collision:
        return evaluate(read(run_path, RUN, exact=True), read(qrels_path, QRELS, exact=True))


def _evaluate(
    run: Columns, qrels: Columns, parsed, threshold, empty, complete, ties=None, max_retrieved=None, judged_only=False
):
    _check_qrels(qrels)
    ordered = order(run, by_id=ties is None or max_retrieved is not None)  # -M cuts in trec_eval's order
    judged_index = {q: i for i, q in enumerate(qrels.queries)}
    ranked = {q: i for i, q in enumerate(run.queries)}
    kept = np.array([i for i, q in enumerate(run.queries) if q in judged_index], dtype=np.int64)
    orphans = [q for q in qrels.queries if q not in ranked]
    query_ids = [run.queries[i] for i in kept.tolist()] + (orphans if complete else [])
    if not query_ids and not run.queries:
        raise no_run_lines(run.path)
    if not query_ids:
        raise no_common_queries(run, qrels)
    segments = np.concatenate([kept, np.full(len(query_ids) - kept.size, -1, dtype=np.int64)])
    judged, counts = matched(run, qrels, ordered, query_ids, segments, ties, max_retrieved, judged_only)[:2]
    coverage = Coverage(len(orphans), len(run.queries) - kept.size, kept.size)
    config = {
        "max_length": int(counts.max(initial=0)),
        "complete": complete,
        "judged_without_run": coverage.judged_without_run,
        "ranked_without_judgements": coverage.run_without_judgements,
        "max_retrieved": max_retrieved,
        "judged_only": judged_only,
    }
    return result_of(judged, parsed, threshold, empty, query_ids, config, ties), coverage


def matched(run, qrels, ordered, query_ids, segments, ties, max_retrieved=None, judged_only=False, truncate=False):
    """(Judged, counts, rows, grades, found) of the evaluated queries: ``query_ids`` are the rows,
    ``segments`` each row's segment of ``ordered`` (-1: no run, an empty ranking), cut at
    ``max_retrieved`` and, with ``judged_only`` (trec_eval -J), kept to the documents judged with a
    grade >= 0, ranked anew in the same order. ``rows`` and ``grades`` (``truncate``: trec_eval's
    ``atol``) are every judged line of an evaluated query, by row (trec_eval's bpref, infAP, ...
    read grade 0 too); ``found`` indexes those the ranking retrieves; ``counts`` the documents per
    row. Every judged document retrieved, whatever its grade, is in the Judged; with ``ties``,
    each one's tie group within its row's evaluated ranking."""
    positions, counts = ranked_positions(ordered, segments, max_retrieved)
    row_of = np.full(len(qrels.queries), -1, dtype=np.int64)
    index = {q: i for i, q in enumerate(qrels.queries)}
    row_of[[index[q] for q in query_ids]] = np.arange(len(query_ids))
    rows = row_of[qrels.query]
    lines = np.flatnonzero(rows >= 0)
    lines = lines[np.argsort(rows[lines], kind="stable")]
    rows, grades = rows[lines], qrels.value[lines]
    grades = np.trunc(grades) if truncate else grades
    ids = _numbers_in_run(run, qrels)[lines]
    doc = ordered.doc[positions]
    where = match_ranked(doc, counts, rows, ids)
    if judged_only:
        positions, doc, counts = judged_ranking(positions, doc, counts, rows, where, grades)
        where = match_ranked(doc, counts, rows, ids)
    offsets = offsets_of(counts)
    found = np.flatnonzero(where >= 0)
    if not run.exact:
        run_lines = ordered.line(positions[offsets[rows[found]] + where[found]])
        if run.strings(run_lines) != qrels.strings(lines[found]):
            raise Collision
    positive = grades > 0
    judged = Judged(
        len(query_ids),
        rows[found],
        where[found] + 1.0,
        grades[found],
        rows[positive],
        grades[positive],
        n_retrieved=counts.astype(np.int64),
        n_zero=np.bincount(rows[grades == 0], minlength=len(query_ids)),
    )
    if ties is not None:
        score = run.value[ordered.line(positions)]
        at = offsets[rows[found]] + where[found]
        start, size = tie_groups(score, offsets, rows[found], score[at])
        judged = dataclasses.replace(judged, group_start=start, group_size=size)
    return judged, counts, rows, grades, found


def no_common_queries(run: Columns, qrels: Columns) -> ValueError:
    """The error for a run and a qrels without a query in common."""
    return ValueError(
        f"no query of the run appears in the qrels ({len(run.queries)} ranked queries, "
        f"{len(qrels.queries)} judged); check that both files use the same query ids"
    )


def ranked_positions(ordered: Ordered, segments: np.ndarray, max_retrieved=None) -> tuple[np.ndarray, np.ndarray]:
    """(positions in the ordered run, per-row counts) of each evaluated query's ranking: row i
    is the run's segment ``segments[i]`` (-1: a query without a run, an empty ranking), cut at
    ``max_retrieved`` documents (trec_eval's -M)."""
    have = segments >= 0
    starts = np.where(have, ordered.offsets[np.maximum(segments, 0)], 0)
    counts = np.where(have, ordered.offsets[np.maximum(segments, 0) + 1] - starts, 0)
    if max_retrieved is not None:
        counts = np.minimum(counts, max_retrieved)
    within = np.arange(counts.sum()) - np.repeat(offsets_of(counts)[:-1], counts)
    return np.repeat(starts, counts) + within, counts


def match_ranked(doc: np.ndarray, counts: np.ndarray, rows: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """0-based place of each (row, id) in its row's ranking (``doc``, ``counts`` per row), -1 if
    absent; ``rows`` sorted."""
    offsets = offsets_of(counts)
    where = np.full(rows.size, -1, dtype=np.int64)
    for start, block in padded_blocks(doc, offsets):
        sel = slice(*np.searchsorted(rows, [start, start + block.shape[0]]))
        where[sel] = find(block, rows[sel] - start, ids[sel])
    return where


def judged_ranking(positions, doc, counts, rows, where, grades) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """trec_eval's -J: each ranking kept to its documents judged with a grade >= 0, in the same
    order: (positions, doc, counts)."""
    keep = np.zeros(doc.size, dtype=bool)
    offsets, hit = offsets_of(counts), where >= 0
    keep[offsets[rows[hit]] + where[hit]] = grades[hit] >= 0
    counts = np.bincount(np.repeat(np.arange(counts.size), counts)[keep], minlength=counts.size)
    return positions[keep], doc[keep], counts


def _numbers_in_run(run: Columns, qrels: Columns) -> np.ndarray:
    """The qrels' document numbers in the run's numbering (-2: a document the run never lists)."""
    if not run.exact:
        return qrels.doc  # the same hash function
    index = {d: i for i, d in enumerate(run.ids)}
    return np.fromiter((index.get(d, -2) for d in qrels.ids), np.int64, len(qrels.ids))[qrels.doc]


def run_as_lists(path, ascending_ids: bool = False, max_retrieved: int | None = None) -> dict[str, list[str]]:
    """``{query_id: [doc_id, ...]}`` of a run file, each list in trec_eval's order (:func:`order`)
    and cut at ``max_retrieved`` documents."""
    run = read(path, RUN)
    ordered = order(run, ascending_ids=ascending_ids)
    flat = run.every_string() if ordered.lines is None else run.strings(ordered.lines)
    starts, ends = ordered.offsets[:-1], ordered.offsets[1:]
    ends = ends if max_retrieved is None else np.minimum(ends, starts + max_retrieved)
    bounds = zip(run.queries, starts.tolist(), ends.tolist(), strict=True)
    collecting = gc.isenabled()
    gc.disable()  # 100,000s of new lists would set off collections that walk every one of them
    try:
        return {q: flat[a:b] for q, a, b in bounds}
    finally:
        if collecting:
            gc.enable()


def qrels_as_dicts(path) -> dict[str, dict[str, float]]:
    """``{query_id: {doc_id: grade}}`` of a qrels file."""
    qrels = read(path, QRELS)
    _check_qrels(qrels)
    query = qrels.query
    by_query = np.argsort(query, kind="stable")
    offsets = offsets_of(np.bincount(query, minlength=len(qrels.queries)))
    docs, grades = qrels.strings(by_query), qrels.value[by_query].tolist()
    bounds = zip(qrels.queries, offsets[:-1].tolist(), offsets[1:].tolist(), strict=True)
    return {q: dict(zip(docs[a:b], grades[a:b], strict=True)) for q, a, b in bounds}
