"""Reading TREC run and qrels files (the formats trec_eval reads), BEIR folders, qrels tables,
id files and OML tables.

A run line is ``query_id Q0 doc_id rank score tag``; trec_eval ignores the rank column and
orders each query's documents by score, descending, ties by doc id descending, and so does
:func:`read_run`. A qrels line is ``query_id iteration doc_id grade``. Fields are separated by
ASCII whitespace, as trec_eval separates them (an id may hold a no-break space), and a UTF-8
byte-order mark at the start of any text file is skipped. Files of 4 MB or more are parsed by
pyarrow's CSV reader (a runtime dependency); smaller ones, or any pyarrow cannot read, line by
line; the results are the same.
:func:`evaluate_files` evaluates the files without making Python objects per line, as the
``embedeval rankings`` command does.

:func:`read_qrels` also reads qrels tables (columns ``query-id``, ``corpus-id``, ``score``: BEIR's
TSV with its header row, CSV, JSON lines, parquet), :func:`read_ids` id files (one per line, or
JSON lines with ``_id`` / ``id``), :func:`read_beir` a BEIR folder, and :func:`read_oml` an
open-metric-learning table.
"""

from __future__ import annotations

from pathlib import Path

from ._forms import beir as _beir
from ._forms.oml import OmlTable, read_oml_table
from ._forms.rankings import check_options
from ._forms.tables import is_table, read_id_file, read_qrels_table
from ._forms.trec.evaluate import evaluate_files as _evaluate_files
from ._forms.trec.evaluate import qrels_as_dicts, run_as_lists
from ._metrics.registry import DEFAULT_RANKING_METRICS


def read_run(path) -> dict[str, list[str]]:
    """Read a TREC run file into ``{query_id: [doc_id, ...]}``, each list best first.

    Raises
    ------
    ValueError
        For a line without 6 fields (qid Q0 docid rank score tag), a score that is not a number
        or is NaN, or a document listed twice for one query; the message names the file and line.
    """
    return run_as_lists(path)


def read_qrels(path) -> dict[str, dict[str, float]]:
    """Read qrels into ``{query_id: {doc_id: grade}}``: a TREC qrels file, or a table.

    A table has the columns ``query-id``, ``corpus-id`` and ``score`` (or ``query_id``,
    ``corpus_id``): a ``.parquet`` file (needs pyarrow: ``pip install 'embedeval[parquet]'``),
    JSON lines (``.jsonl``), ``.csv``, or tab-separated text whose first line is the header (BEIR's
    ``qrels/test.tsv``). Any other file is read as TREC qrels. Ids are strings; in JSON and
    parquet an id is a string or an integer (read as its decimal text), and any other value (``1.0``,
    ``true``, ``null``) is refused.

    Raises
    ------
    ValueError
        TREC qrels: a line without 4 fields (qid iteration docid grade), a grade that is not a
        finite number, or a document judged twice. Tables: a missing column or field, an id that
        is neither a string nor an integer, a score that is not a finite number, or a document
        judged twice with two different grades (the same grade twice is counted once, with a
        warning). The message names the file and line.
    """
    if is_table(Path(path)):
        return read_qrels_table(path)
    return qrels_as_dicts(path)


def read_ids(path) -> list[str]:
    """Read ids, in file order: one per line (blank lines skipped), or JSON lines with ``_id``
    (BEIR's corpus.jsonl, queries.jsonl) or ``id``, read as strings (a JSON integer as its
    decimal text; a float, boolean or null is refused, naming the file and line)."""
    return read_id_file(path)


def read_beir(folder, split: str = "test") -> _beir.BeirFolder:
    """Read a BEIR folder: ``(query_ids, corpus_ids, qrels)`` for :func:`embedeval.evaluate_retrieval`.

    Parameters
    ----------
    folder : str or path
        Holds ``queries.jsonl``, ``corpus.jsonl`` (one JSON object per line with ``_id``) and
        ``qrels/<split>.tsv`` (or ``.csv``, ``.jsonl``, ``.parquet``: any qrels table).
    split : str
        The qrels file to read (``"test"``, ``"dev"``, ``"train"``).

    Returns
    -------
    BeirFolder
        A named tuple ``(query_ids, corpus_ids, qrels)``: the ids of ``queries.jsonl`` and
        ``corpus.jsonl`` in file order (so that embeddings made in file order line up with
        them), and ``{query_id: {corpus_id: grade}}``.

    Notes
    -----
    Each rule below is said in one warning line:

    * a query of ``queries.jsonl`` without judgements in the split keeps its row; evaluation
      skips it and counts it (trec_eval evaluates judged queries only);
    * a judged query missing from ``queries.jsonl`` is left out (nothing ranks for it);
    * a judgement of a document missing from ``corpus.jsonl`` is kept:
      :func:`embedeval.evaluate_retrieval` counts it as relevant and never retrieved, as
      pytrec_eval does with BEIR's qrels (``absent_docs="count"``; ``"drop"`` leaves it out),
      and says so in one warning line;
    * a document judged twice for a query: once if the grades agree, an error if they differ.

    Examples
    --------
    >>> query_ids, corpus_ids, qrels = read_beir("scifact", split="test")  # doctest: +SKIP
    >>> embedeval.evaluate_retrieval(q, c, qrels, query_ids=query_ids, corpus_ids=corpus_ids)  # doctest: +SKIP
    """
    return _beir.read_beir(folder, split, read_qrels)


def read_oml(path, split: str | None = None) -> OmlTable:
    """Read an open-metric-learning table: a CSV with ``label``, ``is_query``, ``is_gallery`` and
    optionally ``category`` and ``sequence``, one row per embedding.

    ``split`` keeps only the rows whose ``split`` column equals it (OML's ``"validation"``).
    ``evaluate(**table.inputs(embeddings), metrics=...)`` then evaluates with OML's meaning: the
    query rows search the gallery rows; a row that is both is left out of its own ranking; with
    ``sequence``, gallery rows of the query's sequence are left out; with ``category``, the
    result has per-category summaries (``result.per_group``). See :mod:`embedeval._forms.oml`.

    Raises
    ------
    ValueError
        A missing column, an empty label, a flag that is not true/false/1/0 (naming the line),
        or no query or no gallery row.
    """
    return read_oml_table(path, split)


def common_queries(run: dict, qrels: dict) -> tuple[dict, dict]:
    """Keep the queries present in both, as trec_eval does (it evaluates judged queries only)."""
    keep = [q for q in run if q in qrels]
    return {q: run[q] for q in keep}, {q: qrels[q] for q in keep}


def evaluate_files(
    run,
    qrels,
    *,
    metrics=DEFAULT_RANKING_METRICS,
    threshold: float = 1,
    empty: str = "skip",
    complete: bool = False,
    ties: str | None = None,
    groups=None,
    max_retrieved: int | None = None,
    judged_only: bool = False,
):
    """Evaluate a TREC run file against a qrels file, as ``embedeval rankings QRELS RUN`` does.

    The files are read as columns (no Python object per line), which is several times faster
    and lighter than ``evaluate_rankings(*common_queries(read_run(run), read_qrels(qrels)))``,
    with the same numbers.

    Parameters
    ----------
    run, qrels : str or path
    metrics, threshold, empty
        As in :func:`embedeval.evaluate_rankings` (trec_eval's names are accepted).
    complete : bool
        Also evaluate every judged query without a run, as an empty ranking (trec_eval ``-c``).
        By default only the queries in both files are, as trec_eval does.
    ties : {None, "expected", "optimistic", "pessimistic"}
        Documents with exactly equal scores: None ranks them by trec_eval's rule (id
        descending); the others as in :func:`embedeval.evaluate_rankings`. A run lists only its
        top documents: a tie group cut off by the end of a query's list is taken to be the
        listed documents alone (what lies beyond is unknown), so ``"expected"`` averages over
        their orders only.
    groups : mapping or array-like, optional
        ``{query id: group}`` for every evaluated query, or one group per query in the order of
        ``config["query_ids"]``: per-group summaries in ``result.per_group``.
    max_retrieved : int, optional
        Each query's first documents only, in trec_eval's order (trec_eval's ``-M``).
    judged_only : bool
        Rank only the documents judged with a grade >= 0, in the same order, the others left out
        before any metric (trec_eval's ``-J``; after ``max_retrieved``, as trec_eval applies them).

    Returns
    -------
    EvaluationResult
        ``config["query_ids"]``: the common queries in run order, then (``complete``) the judged
        queries without a run; ``config["judged_without_run"]`` and
        ``config["ranked_without_judgements"]`` count the queries found in one file only.

    Raises
    ------
    ValueError
        As :func:`read_run` and :func:`read_qrels`, naming the file and line; and when no query
        of the run is judged.
    """
    parsed, threshold, ties = check_options(metrics, threshold, empty, complete, ties)
    _check_max_retrieved(max_retrieved)
    if not isinstance(judged_only, bool):
        raise ValueError(f"'judged_only' must be True or False; got {judged_only!r}")
    result, _ = _evaluate_files(run, qrels, parsed, threshold, empty, complete, ties, max_retrieved, judged_only)
    return result if groups is None else result.with_groups(groups)


def evaluate_preferences(
    run,
    judgements,
    *,
    format: str = "prefs",
    metrics=None,
    threshold: int = 1,
    complete: bool = False,
    max_retrieved: int | None = None,
    judged_only: bool = False,
):
    r"""Evaluate a TREC run file against preference judgements or judgement groups (trec_eval 10's
    ``-R prefs``, ``-R qrels_prefs``, ``-R qrels_jg``), with trec_eval's measures and rules.

    Parameters
    ----------
    run, judgements : str or path
        A TREC run; a ``prefs`` file (``qid jg jsg docno rel_level`` lines: within sub-group
        ``jsg`` of judgement group ``jg``, a higher level is preferred), a qrels file read as
        preferences (``qrels_prefs``: each iteration field one judgement group), or a qrels file
        with judgement groups (``qrels_jg``: ``qid jg docno grade``).
    format : {"prefs", "qrels_prefs", "qrels_jg"}
    metrics : str or sequence of str, optional
        Preferences: ``prefs_simp``, ``prefs_pair``, ``prefs_avgjg``, ``prefs_avgjg_Rnonrel``,
        their ``_ret`` and ``_imp`` variants and the counts ``prefs_num_prefs_poss``,
        ``prefs_num_prefs_ful``, ``prefs_num_prefs_ful_ret`` (default: all 14, trec_eval's
        ``all_prefs``). Judgement groups: ``map_avgjg``, ``p_avgjg@k``,
        ``rprec_mult_avgjg@m`` (trec_eval's names ``P_avgjg_10``, ``Rprec_mult_avgjg`` too;
        default: trec_eval's ``qrels_jg`` set). The metric reference defines each one.
    threshold : int
        Judgement groups: the grade at which a document is relevant (trec_eval's ``-l``).
    complete : bool
        Also evaluate every judged query without a run, as an empty ranking (``-c``).
    max_retrieved : int, optional
        Each query's first documents only (``-M``).
    judged_only : bool
        Judgement groups: per group, drop the documents without a grade >= 0 before ranking (``-J``).

    Returns
    -------
    EvaluationResult
        ``per_query`` holds each measure's value per query, ``config["query_ids"]`` the queries
        in trec_eval's order (the byte order of their ids); the summary is the mean (trec_eval
        prints the sum for the three counts).

    Raises
    ------
    ValueError
        For a bad line of either file (naming the file and line), judgements that contradict
        each other within a judgement group, or a metric of another form.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "run").write_text("q Q0 a 0 2 r\nq Q0 b 0 1 r\n")
    >>> _ = (folder / "prefs").write_text("q u1 s1 a 1\nq u1 s1 b 2\n")
    >>> result = evaluate_preferences(folder / "run", folder / "prefs", metrics=["prefs_simp"])
    >>> float(result.per_query["prefs_simp"][0])  # b is preferred, a is ranked above it
    0.0
    """
    from ._forms.trec.preferences import FORMATS, evaluate_judgements
    from ._metrics.registry import JUDGEMENT_GROUPS, PREFERENCES, parse_metrics
    from ._metrics.trec_defaults import GROUP_MEASURES, PREFERENCE_MEASURES

    if format not in FORMATS:
        raise ValueError(f"'format' must be one of {', '.join(FORMATS)}; got {format!r}")
    grouped = format == "qrels_jg"
    if metrics is None:
        metrics = list(GROUP_MEASURES if grouped else PREFERENCE_MEASURES)
    if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
        raise ValueError(f"'threshold' must be an int >= 1 (trec_eval's -l); got {threshold!r}")
    _check_max_retrieved(max_retrieved)
    parsed = parse_metrics(metrics, JUDGEMENT_GROUPS if grouped else PREFERENCES)
    return evaluate_judgements(
        run,
        judgements,
        format,
        parsed,
        level=float(threshold),
        complete=complete,
        max_retrieved=max_retrieved,
        judged_only=judged_only,
    )


def _check_max_retrieved(value) -> None:
    """``max_retrieved``: None (every document) or an int >= 0, as both file evaluations take it."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
        raise ValueError(f"'max_retrieved' must be an int >= 0 or None; got {value!r}")
