"""The result of an evaluation: numbers, and everything needed to read them correctly."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np

from ._core.names import safe_keys
from ._core.neighbors import Neighbors
from ._core.skips import Skipped, coverage, skip_code
from ._core.text import aligned_table, group_table, markdown_table, metric_table, wrapped
from ._inputs.groups import PerGroup, per_group_summaries, read_groups
from ._metrics.families import summarise
from ._metrics.interval_notes import interval_caveat, interval_note

__all__ = ["EvaluationResult", "PerClass", "PerGroup"]


@dataclass(frozen=True, repr=False)
class PerClass:
    """Per-label averages of each metric, and their macro average.

    Attributes
    ----------
    labels : numpy.ndarray of shape (n_classes,)
        Labels that have at least one evaluated query, in sorted order where orderable.
    counts : numpy.ndarray of shape (n_classes,)
        Evaluated queries per label.
    values : dict of str to numpy.ndarray of shape (n_classes,)
        Mean of each metric over the label's evaluated queries.
    macro : dict of str to float
        The average of the class averages: every class weighs the same, whatever its size.
    """

    labels: np.ndarray
    counts: np.ndarray
    values: dict[str, np.ndarray]
    macro: dict[str, float]

    def to_dict(self) -> dict[str, dict[object, float]]:
        """``{metric: {label: mean}}`` with plain Python labels and floats."""
        labels = self.labels.tolist()
        return {m: dict(zip(labels, v.tolist(), strict=True)) for m, v in self.values.items()}

    def as_dict(self) -> dict[str, dict[object, float]]:
        """Deprecated spelling of :meth:`to_dict` (until 0.2)."""
        import warnings

        warnings.warn("PerClass.as_dict() is deprecated: call PerClass.to_dict()", DeprecationWarning, stacklevel=2)
        return self.to_dict()

    def __repr__(self) -> str:
        return f"PerClass(n_classes={self.labels.size}, macro={_fmt_dict(self.macro)})"


def micro_averages(
    per_query: dict[str, np.ndarray], skip_codes: np.ndarray | None = None
) -> tuple[dict[str, float], np.ndarray]:
    """Each metric's mean over the evaluated queries, and which queries those are.

    A skipped query is NaN in every metric and an evaluated one in none, so the evaluated
    queries are read off the first metric (or off ``skip_codes`` when there is no per-query
    metric). Means are NaN when no query was evaluated.
    """
    if not per_query:
        if skip_codes is None:
            raise ValueError("a result without per-query metrics needs 'skip_codes' (one per query)")
        return {}, np.asarray(skip_codes) < 0
    evaluated = ~np.isnan(next(iter(per_query.values())))
    summary = {n: summarise(n, v[evaluated]) if evaluated.any() else float("nan") for n, v in per_query.items()}
    return summary, evaluated


def per_class_averages(per_query: dict[str, np.ndarray], codes: np.ndarray, classes: np.ndarray) -> PerClass:
    """Average per-query values within each class, ignoring skipped (NaN) queries.

    All metrics share the evaluated set (a query is skipped for every metric or none), so the
    counts are taken from the first metric.
    """
    first = next(iter(per_query.values()))
    evaluated = ~np.isnan(first)
    counts = np.bincount(codes[evaluated], minlength=classes.size)
    present = counts > 0
    values, macro = {}, {}
    for name, v in per_query.items():
        sums = np.bincount(codes[evaluated], weights=v[evaluated], minlength=classes.size)
        means = sums[present] / counts[present]
        values[name] = means
        macro[name] = float(means.mean()) if means.size else float("nan")
    return PerClass(classes[present], counts[present], values, macro)


@dataclass(frozen=True, repr=False)
class EvaluationResult:
    """What :func:`embedeval.evaluate` and the other evaluators return.

    Attributes
    ----------
    summary : dict of str to float
        Each metric's micro average: the mean over evaluated queries. NaN if none was evaluated.
        A set-level metric (``nmi``, ``ami``, ``fnmr@fmr=x``, ``tar@far=x``, ``eer``,
        ``pair_auroc``, ``pcf@r``) is one number for the whole set, given here as it is.
    per_query : dict of str to numpy.ndarray of shape (n_queries,)
        Each per-query metric's value per query, in input order; NaN for skipped queries.
        Set-level metrics have none (see :attr:`set_metrics`).
    per_class : PerClass or None
        Per-label averages and the macro average of the per-query metrics (embeddings with
        class labels only).
    definitions : dict of str to str
        The exact definition of every metric computed.
    conventions : dict of str to str
        The choices that decide the numbers: what "recall" means here, the tie rule, the
        distance, how queries are averaged, what is skipped.
    n_queries, n_evaluated : int
        Queries given, and queries that entered the averages.
    skipped : Skipped (a dict of str to int)
        How many queries were left out of the averages for each reason, keyed by a stable code
        (``"no_relevant"``, ``"relevant_ignored"``, ...); ``skipped.reasons[code]`` says it in a
        sentence, which is accepted as a key too.
    config : dict
        The evaluation's settings and sizes.
    query_labels : numpy.ndarray of shape (n_queries,) or None
        Each query's label (to resample by class and to pair queries of two evaluations);
        None for ranked lists and score matrices.
    approximation : dict or None
        For an approximate index: the index, its neighbour recall against exact search on a
        seeded sample of queries, and the metric values on that sample computed both ways.
        None when the search was exact.
    skip_codes : numpy.ndarray of shape (n_queries,) or None
        Per query, the position in ``skipped`` of the reason it was skipped, -1 if evaluated.
    query_groups : numpy.ndarray of shape (n_queries,) or None
        Each query's group (the ``groups`` argument), or None.
    per_group : PerGroup or None
        The per-query metrics averaged within each group, beside the overall ``summary``
        (set-level metrics are not split); None without ``groups``.
    neighbors : Neighbors or None
        Each query's top k (ids, distances, relevance, R) with ``keep_neighbors=k``; else None.
    pair_curves : dict or None
        With verification metrics: ROC/DET points (``threshold``, ``fmr``, ``fnmr``) and histograms
        of positive and negative pair distances (``edges``, ``positive``, ``negative``), for pages.
    """

    summary: dict[str, float]
    per_query: dict[str, np.ndarray]
    definitions: dict[str, str]
    conventions: dict[str, str]
    n_queries: int
    n_evaluated: int
    skipped: dict[str, int] = field(default_factory=lambda: Skipped({}, {}))
    per_class: PerClass | None = None
    config: dict = field(default_factory=dict)
    query_labels: np.ndarray | None = None
    approximation: dict | None = None
    skip_codes: np.ndarray | None = None
    query_groups: np.ndarray | None = None
    per_group: PerGroup | None = None
    neighbors: Neighbors | None = None
    pair_curves: dict | None = None

    @property
    def n_skipped(self) -> int:
        return self.n_queries - self.n_evaluated

    @property
    def set_metrics(self) -> list[str]:
        """The set-level metrics of ``summary`` (no per-query values, class averages or bootstrap
        interval), in its order."""
        return [name for name in self.summary if name not in self.per_query]

    @classmethod
    def from_per_query(
        cls,
        per_query: dict[str, np.ndarray],
        definitions: dict[str, str],
        conventions: dict[str, str],
        *,
        skip_codes: np.ndarray | None = None,
        skip_reasons: tuple[str, ...] = (),
        query_labels: np.ndarray | None = None,
        label_codes: tuple[np.ndarray, np.ndarray] | None = None,
        config: dict | None = None,
        approximation: dict | None = None,
        set_values: dict[str, float] | None = None,
        groups=None,
    ) -> EvaluationResult:
        """The one way a result is built: from per-query arrays, everything else derived.

        Parameters
        ----------
        per_query : dict of str to numpy.ndarray of shape (n_queries,)
            NaN for skipped queries (in every metric alike). May be empty when ``set_values``
            hold every metric; ``skip_codes`` then give the number of queries.
        definitions, conventions : dict of str to str
            ``definitions`` name every metric, per-query and set-level; their order is the
            order of ``summary``.
        skip_codes : numpy.ndarray of shape (n_queries,), optional
            Per query, the index in ``skip_reasons`` of why it was skipped, -1 if evaluated.
            Default: every NaN query is skipped for ``skip_reasons[0]`` ("skipped" if none is given).
        skip_reasons : tuple of str
        query_labels : numpy.ndarray of shape (n_queries,), optional
            Class labels: per-class averages are computed when given.
        label_codes : (classes, codes), optional
            ``query_labels`` already coded (:func:`embedeval._inputs.arrays.encode_labels`), to save the work.
        config, approximation : dict, optional
        set_values : dict of str to float, optional
            Set-level metrics: one value each for the whole set.
        groups : array-like of shape (n_queries,) or mapping, optional
            One group per query (or ``{query id: group}`` with ``config["query_ids"]``): each
            per-query metric is then also averaged within each group (:attr:`per_group`).
        """
        averages, evaluated = micro_averages(per_query, skip_codes)
        set_values = dict(set_values or {})
        summary = {name: averages[name] if name in averages else set_values[name] for name in definitions}
        n_queries = int(evaluated.size)
        reasons = tuple(map(skip_code, skip_reasons)) or (() if evaluated.all() else (("skipped", "skipped"),))
        if skip_codes is None:
            skip_codes = np.where(evaluated, -1, 0).astype(np.int8)
        counts = np.bincount(skip_codes[skip_codes >= 0], minlength=len(reasons))
        per_class = None
        if query_labels is not None and per_query:
            if label_codes is None:
                from ._inputs.arrays import encode_labels

                classes, (codes,) = encode_labels(query_labels)
            else:
                classes, codes = label_codes
            per_class = per_class_averages(per_query, codes, classes)
        query_groups = read_groups(groups, n_queries, (config or {}).get("query_ids"))
        per_group = None if query_groups is None else per_group_summaries(per_query, evaluated, query_groups)
        return cls(
            summary=summary,
            per_query=per_query,
            definitions=definitions,
            conventions=conventions,
            n_queries=n_queries,
            n_evaluated=int(evaluated.sum()),
            skipped=Skipped({code: int(c) for (code, _), c in zip(reasons, counts, strict=True)}, dict(reasons)),
            per_class=per_class,
            config=dict(config or {}),
            query_labels=query_labels,
            approximation=approximation,
            skip_codes=skip_codes,
            query_groups=query_groups,
            per_group=per_group,
        )

    def take(self, indices) -> EvaluationResult:
        """The result restricted to (and reordered as) the queries ``indices``.

        Summary, per-class averages and counts (every skip reason) are recomputed from the
        per-query values, so ``result.take(perm)`` re-aligns an evaluation made on permuted queries.
        Set-level metrics are kept when ``indices`` is a permutation of every query (the set is
        the same) and dropped otherwise: they were computed on the whole set, not on a subset.
        """
        idx = np.asarray(indices)
        codes = None if self.skip_codes is None else self.skip_codes[idx]
        whole = idx.size == self.n_queries and np.array_equal(np.sort(idx), np.arange(self.n_queries))
        kept = self.set_metrics if whole else []
        taken = EvaluationResult.from_per_query(
            {name: v[idx] for name, v in self.per_query.items()},
            {name: text for name, text in self.definitions.items() if name in self.per_query or name in kept},
            self.conventions,
            skip_codes=codes,
            skip_reasons=tuple(self.skipped.reasons.items()),
            query_labels=None if self.query_labels is None else self.query_labels[idx],
            config={**self.config, "subset": f"{idx.size} of {self.n_queries} queries"},
            approximation=self.approximation,
            set_values={name: self.summary[name] for name in kept},
            groups=None if self.query_groups is None else self.query_groups[idx],
        )
        curves = self.pair_curves if whole else None
        return dataclasses.replace(taken, neighbors=self.neighbors and self.neighbors.take(idx), pair_curves=curves)

    def select(self, names) -> EvaluationResult:
        """The result with only the metrics ``names`` (canonical names, in the given order)."""
        selected = EvaluationResult.from_per_query(
            {name: self.per_query[name] for name in names if name in self.per_query},
            {name: self.definitions[name] for name in names},
            self.conventions,
            skip_codes=self.skip_codes,
            skip_reasons=tuple(self.skipped.reasons.items()),
            query_labels=self.query_labels,
            config=self.config,
            approximation=self.approximation,
            set_values={name: self.summary[name] for name in names if name not in self.per_query},
            groups=self.query_groups,
        )
        curves = self.pair_curves if set(names) & set(self.set_metrics) else None
        return dataclasses.replace(selected, neighbors=self.neighbors, pair_curves=curves)

    def with_groups(self, groups) -> EvaluationResult:
        """The same result with per-group summaries (:attr:`per_group`) for ``groups``: one
        group per query, or ``{query id: group}`` when ``config["query_ids"]`` names the queries."""
        if groups is None:
            return dataclasses.replace(self, query_groups=None, per_group=None)
        query_groups = read_groups(groups, self.n_queries, self.config.get("query_ids"))
        evaluated = self.skip_codes < 0 if self.skip_codes is not None else np.ones(self.n_queries, bool)
        per_group = per_group_summaries(self.per_query, evaluated, query_groups)
        return dataclasses.replace(self, query_groups=query_groups, per_group=per_group)

    def to_dict(self, prefix: str = "", names: str = "plain") -> dict[str, float]:
        """A flat ``{name: float}`` with stable keys for loggers, e.g. ``prefix="val/"``.

        Keys are the metric names (set-level ones too), plus ``macro/<metric>`` for the per-query
        metrics when per-class averages exist, ``n_evaluated`` / ``n_skipped``, and with groups
        ``group/<group>/<metric>`` and ``group/<group>/n_evaluated`` per group.

        Parameters
        ----------
        prefix : str
            Put before every key.
        names : {"plain", "safe"}
            ``"plain"``: the metric names as they are (``val/map@r``). ``"safe"``: every key in
            the characters every logger accepts (MLflow's: letters, digits, ``_ - . /`` and
            space): ``@`` becomes ``_at_``, ``=`` becomes ``_``, any other character ``_``
            (``map@r`` -> ``map_at_r``, ``tar@far=0.001`` -> ``tar_at_far_0.001``), and empty,
            ``.`` and ``..`` path parts are rewritten; ValueError if two keys would become one.
        """
        if names not in ("plain", "safe"):
            raise ValueError(f"'names' must be 'plain' or 'safe'; got {names!r}")
        flat = {f"{prefix}{name}": value for name, value in self.summary.items()}
        if self.per_class is not None:
            flat.update({f"{prefix}macro/{n}": v for n, v in self.per_class.macro.items()})
        flat[f"{prefix}n_evaluated"] = float(self.n_evaluated)
        flat[f"{prefix}n_skipped"] = float(self.n_skipped)
        if self.per_group is not None:
            for group, values in self.per_group.to_dict().items():
                flat[f"{prefix}group/{group}/n_evaluated"] = float(values["n_evaluated"])
                flat.update({f"{prefix}group/{group}/{n}": v for n, v in values.items() if n in self.per_query})
        return safe_keys(flat) if names == "safe" else flat

    def table(self, fmt: str = "table", intervals: dict | None = None) -> str:
        """The result as ``fmt``: ``"table"`` (plain text), ``"markdown"`` or ``"html"``, as
        :meth:`SystemComparison.table <embedeval.stats.SystemComparison.table>` and
        :meth:`AcrossComparison.table <embedeval.stats.AcrossComparison.table>` take theirs.

        Each holds the metric, the micro average (with its interval where ``intervals``, a dict of
        :class:`~embedeval.stats.Interval`, gives one) and the macro average; the text also each
        metric's definition, the query counts and the conventions, wrapped to fit 100 columns (a
        terminal's width). When the averages leave queries out, the table opens with a line that
        says over how many and why (:func:`embedeval._core.skips.coverage`).

        ``table(intervals)`` (the intervals first, as before 0.2) still works, with a
        DeprecationWarning.
        """
        if isinstance(fmt, dict) or fmt is None:
            import warnings

            warnings.warn(
                "EvaluationResult.table(intervals) is deprecated: pass table(fmt, intervals=...) "
                "(fmt first, as the comparisons' table takes it)",
                DeprecationWarning,
                stacklevel=2,
            )
            fmt, intervals = "table", fmt
        renderers = {"table": _text, "markdown": _markdown, "html": _html}
        if fmt not in renderers:
            raise ValueError(f"'fmt' must be one of {sorted(renderers)}; got {fmt!r}")
        return renderers[fmt](self, intervals)

    def explore(self, path=None, images=None, **options):
        """Write one self-contained HTML page to explore this result; see :func:`embedeval.explorer.write_page`.

        With ``path`` None (as in a notebook) the page is returned in memory, an
        :class:`~embedeval._core.display.InlinePage` that Jupyter shows in the cell and whose
        ``save(path)`` writes it."""
        from .explorer import write_page

        return write_page(self, path, images=images, **options)

    def to_pandas(self, what: str = "per_query"):
        """The result as a pandas DataFrame (pandas is imported here; ImportError with the install
        command when it is missing).

        Parameters
        ----------
        what : {"per_query", "summary", "per_class", "per_group"}
            ``"per_query"``: one row per query in input order (index ``query``, its position),
            ``query_id`` where the evaluation named the queries, ``label`` (class labels) and
            ``group`` (with ``groups``) where present, ``skipped`` (the stable skip code, see
            :attr:`skipped`; None for an evaluated query), then one float64 column per
            per-query metric, NaN for skipped queries. ``"summary"``: one row per metric (index
            ``metric``): ``value`` (the micro average), ``macro`` where per-class averages exist
            (NaN for set-level metrics), ``definition``. ``"per_class"``: one row per label
            (index ``label``): ``n_evaluated`` and each metric's class mean. ``"per_group"``:
            likewise per group (index ``group``), with ``n_queries`` and ``n_evaluated``.

        Returns
        -------
        pandas.DataFrame
        """
        from ._core.display import frame_of, result_frames

        return frame_of(result_frames(self), what, "EvaluationResult.to_pandas")

    def _repr_html_(self) -> str:
        """Jupyter's view: :meth:`table` as ``"html"``, in the notebook's own colours."""
        return self.table("html")

    def per_query_table(self) -> dict:
        """``{"columns": [...], "data": [[...], ...]}``: one row per query, in the form W&B's
        ``wandb.Table(**table)`` and MLflow's ``log_table`` take (docs/integrations/loggers.md)."""
        from .explorer import per_query_table

        return per_query_table(self)

    def __str__(self) -> str:
        return self.table()

    def __repr__(self) -> str:
        return (
            f"EvaluationResult(summary={_fmt_dict(self.summary)}, n_queries={self.n_queries}, "
            f"n_evaluated={self.n_evaluated})"
        )


def _fmt_dict(values: dict[str, float]) -> str:
    return "{" + ", ".join(f"{k!r}: {v:.4f}" for k, v in values.items()) + "}"


def _notes(result, intervals) -> list[str]:
    return [n for n in (interval_caveat(intervals), interval_note(result, intervals)) if n]


def _text(result: EvaluationResult, intervals) -> str:
    head, rows = metric_table(result, intervals)
    over = coverage(result)
    lines = [wrapped(f"mean over {over}")] if over else []
    lines += [aligned_table(head[:-1], [r[:-1] for r in rows], rule="line"), ""]
    lines += ["definitions:", *(wrapped(f"  {r[0]}: {r[-1]}") for r in rows), ""]
    notes = _notes(result, intervals)
    lines += [*map(wrapped, notes), ""] if notes else []
    lines += _counts(result)
    lines += [wrapped(f"{key}: {text}") for key, text in result.conventions.items()]
    if result.per_group is not None:
        lines += ["", "per group (mean over each group's evaluated queries; set-level metrics are not split):"]
        lines.append(aligned_table(*group_table(result), rule="columns"))
    return "\n".join(lines)


def _counts(result: EvaluationResult) -> list[str]:
    if not result.per_query:
        return [f"queries: {result.n_queries} given, none searched (set-level metrics only)"]
    lines = [f"queries: {result.n_queries} given, {result.n_evaluated} evaluated, {result.n_skipped} skipped"]
    return lines + [f"  skipped {n}: {result.skipped.reasons[code]}" for code, n in result.skipped.items() if n]


def _markdown(result: EvaluationResult, intervals) -> str:
    over = coverage(result)
    parts = [f"mean over {over}"] if over else []
    parts.append(markdown_table(*metric_table(result, intervals)))
    parts += ["\n\n".join(_notes(result, intervals))] if _notes(result, intervals) else []
    if result.per_group is not None:
        parts.append(f"per group:\n\n{markdown_table(*group_table(result))}")
    return "\n\n".join(parts)


def _html(result: EvaluationResult, intervals) -> str:
    from ._core.display import html_block

    head, rows = metric_table(result, intervals)
    over = coverage(result)
    after = [*_notes(result, intervals), *(line.strip() for line in _counts(result))]
    return html_block(head, rows, before=[f"mean over {over}"] if over else [], after=after, details=result.conventions)
