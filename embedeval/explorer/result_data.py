"""The explorer's data for one evaluation: Python computes every number, the page only draws.

Size rule (a 100,000-query result stays a few MB): every query keeps its row (each per-query
value, its label, its skip reason, the rank of its first relevant neighbour); the page holds at
most :data:`MAX_DEPTH` neighbours of a query and at most :data:`PAGE_NEIGHBOURS` neighbours in
all. Where every query's neighbours fit, all are kept; else (:func:`chosen_queries`) half the
budget goes to the worst queries by each thing the query table sorts by (the lowest values of
each per-query metric, the latest first relevant neighbour; ties by lower index, as the page
sorts them), shared equally, and the rest to queries drawn at random (seed 0). The page says
which. Curves and top-1 confusions are computed from every query's kept neighbours before that cut.
"""

from __future__ import annotations

import numpy as np

from .._metrics.kernels import hits_from_dense
from .._metrics.registry import EMBEDDINGS, RANKINGS, parse_metrics, per_query_values

PAGE_NEIGHBOURS = 400_000  # neighbours the page holds in all, at most (20,000 queries x 20)
MAX_DEPTH = 100  # neighbours of one query on the page, and the curves' last k, at most
CURVE_FAMILIES = {EMBEDDINGS: ("recall", "precision", "map"), RANKINGS: ("recall", "precision", "map", "ndcg")}
TOP_CONFUSIONS = 30


def form_of(result) -> str:
    """The input form whose definitions the result's metrics follow (what ``recall@k`` means)."""
    return EMBEDDINGS if result.config.get("input") in (None, "embeddings") else RANKINGS


def _is_number(value) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))


def class_order(classes: list) -> list[int]:
    """Positions of ``classes`` in the order the page lists them: by value where every class is a
    number (2 before 10), else by text."""
    if classes and all(_is_number(c) for c in classes):
        return sorted(range(len(classes)), key=lambda i: (float(classes[i]), i))
    return sorted(range(len(classes)), key=lambda i: (str(classes[i]), i))


def _key(value):
    """A label as a dict key: itself where it is hashable, else its text (a list, a set)."""
    try:
        hash(value)
    except TypeError:
        return str(value)
    return value


def _classes(result) -> tuple[np.ndarray | None, list[str] | None]:
    """(each query's class as a position in the class names, the class names in the page's order)
    from the kept neighbours' classes, else from the labels (any hashable value: numbers, text,
    tuples such as (identity, camera)); -1 for a label not among the classes."""
    if result.query_labels is None:
        return None, None
    labels = [_key(v) for v in np.asarray(result.query_labels, dtype=object).tolist()]
    kept = result.neighbors
    if kept is not None and kept.classes is not None:
        classes = [_key(v) for v in kept.classes.tolist()]
    else:
        classes = list(dict.fromkeys(labels))
    order = class_order(classes)
    position = {classes[j]: i for i, j in enumerate(order)}
    codes = np.fromiter((position.get(v, -1) for v in labels), dtype=np.int64, count=len(labels))
    return codes, [str(classes[j]) for j in order]


def _kept_codes(result) -> np.ndarray | None:
    """The kept neighbours' label codes, renumbered to the page's class order."""
    kept = result.neighbors
    if kept is None or kept.label_codes is None or kept.classes is None:
        return None
    rank = np.empty(len(kept.classes), dtype=np.int64)
    rank[class_order([_key(v) for v in kept.classes.tolist()])] = np.arange(len(kept.classes))
    return np.where(kept.label_codes >= 0, rank[np.maximum(kept.label_codes, 0)], -1)


def summary_rows(result, intervals) -> list[dict]:
    rows = []
    for name, value in result.summary.items():
        interval = (intervals or {}).get(name)
        macro = result.per_class.macro.get(name) if result.per_class is not None else None
        rows.append(
            {
                "metric": name,
                "value": value,
                "low": None if interval is None else interval.low,
                "high": None if interval is None else interval.high,
                "level": None if interval is None else interval.level,
                "macro": macro,
                "definition": result.definitions.get(name, ""),
                "per_query": name in result.per_query,
            }
        )
    return rows


def curves(result) -> dict | None:
    """Mean of each curve family at k = 1..K over the evaluated queries' kept neighbours."""
    kept = result.neighbors
    if kept is None or not result.per_query:
        return None
    evaluated = result.skip_codes < 0 if result.skip_codes is not None else np.ones(result.n_queries, bool)
    evaluated &= kept.n_relevant > 0
    if not evaluated.any():
        return None
    form = form_of(result)
    depth = min(kept.k, MAX_DEPTH)
    hits = hits_from_dense(kept.relevant[evaluated, :depth], kept.n_relevant[evaluated])
    series = {}
    for family in CURVE_FAMILIES[form]:
        if family == "ndcg" and kept.grades is not None:
            continue  # graded gains are not kept in binary hits: no curve rather than a wrong one
        metrics = parse_metrics([f"{family}@{k}" for k in range(1, depth + 1)], form)
        values = per_query_values(metrics, hits)
        series[family] = [float(np.mean(values[m.name])) for m in metrics]
    definitions = {f: parse_metrics([f"{f}@{depth}"], form)[0].definition for f in series}
    return {
        "k": list(range(1, depth + 1)),
        "series": series,
        "definitions": definitions,
        "n": int(evaluated.sum()),
        "ties": tie_note(result, series),
    }


def tie_note(result, series: dict) -> str | None:
    """Why a curve's value can differ from the summary's at the same k, where it can: the curves
    count the kept neighbours in their order (ties by lower index); ``ties="expected"`` averages
    over every order of tied neighbours (and "pessimistic"/"optimistic" put relevant ones last or
    first). The metrics of the summary that the curves draw are named with both values."""
    ties = result.config.get("ties")
    if ties not in ("expected", "optimistic", "pessimistic"):
        return None
    differ = []
    for family, values in series.items():
        for k, value in enumerate(values, start=1):
            name = f"{family}@{k}"
            if name in result.summary and abs(result.summary[name] - value) > 1e-12:
                differ.append(f"{name}: summary {result.summary[name]:.4f}, curve {value:.4f}")
    return (
        f"The summary counts tied distances by ties={ties!r}; the curves and the neighbour lists take "
        "tied neighbours in index order (lower first), so where a tie crosses k they can differ"
        + (" (" + "; ".join(differ) + ")." if differ else "; here they agree at every k the summary reports.")
    )


def confusions(kept_codes, query_codes, class_names) -> list[dict] | None:
    """The class pairs that take the top-1 of the most queries: (query class, top-1 neighbour's class)."""
    if kept_codes is None or query_codes is None:
        return None
    top = kept_codes[:, 0]
    wrong = (top >= 0) & (query_codes >= 0) & (top != query_codes)
    if not wrong.any():
        return []
    n_classes = len(class_names)
    pairs = np.bincount(query_codes[wrong] * n_classes + top[wrong], minlength=n_classes * n_classes)
    per_class = np.bincount(query_codes[query_codes >= 0], minlength=n_classes)
    order = np.lexsort((np.arange(pairs.size), -pairs))[:TOP_CONFUSIONS]
    return [
        {
            "query_class": class_names[i // n_classes],
            "neighbour_class": class_names[i % n_classes],
            "count": int(pairs[i]),
            "share": float(pairs[i] / per_class[i // n_classes]),
        }
        for i in order
        if pairs[i] > 0
    ]


def page_depth(result) -> int:
    """Neighbours of one query the page holds: the kept ones, at most :data:`MAX_DEPTH`."""
    return 0 if result.neighbors is None else min(result.neighbors.k, MAX_DEPTH)


def chosen_queries(result) -> tuple[np.ndarray, str]:
    """The queries whose neighbours the page holds (sorted), and the rule in a sentence."""
    n, depth = result.n_queries, max(1, page_depth(result))
    shown = (
        ""
        if result.neighbors is None or depth == result.neighbors.k
        else f" (the first {depth:,} of the {result.neighbors.k:,} kept)"
    )
    budget = max(1, PAGE_NEIGHBOURS // depth)
    if n <= budget:
        return np.arange(n), f"neighbours{shown} on the page for all {n:,} queries"
    keys = {f"the lowest {m}": v for m, v in result.per_query.items()}
    if result.neighbors is not None:  # the latest first relevant: none kept first, then by rank, descending
        first = result.neighbors.first_relevant().astype(float)
        first[first == 0] = np.inf
        if result.skip_codes is not None:
            first[result.skip_codes >= 0] = np.nan
        keys["the latest first relevant neighbour"] = -first
    share = (budget // 2) // max(1, len(keys))
    worst = [np.zeros(0, dtype=np.int64)]
    for values in keys.values():
        evaluated = np.flatnonzero(~np.isnan(values))
        worst.append(evaluated[np.lexsort((evaluated, values[evaluated]))[:share]])
    worst = np.unique(np.concatenate(worst))
    others = np.setdiff1d(np.arange(n), worst)
    drawn = np.random.default_rng(0).choice(others, size=min(budget - worst.size, others.size), replace=False)
    rule = (
        f"neighbours{shown} on the page for {worst.size + drawn.size:,} of {n:,} queries: the {share:,} "
        f"with {', '.join(keys)} (each, ties by lower index; {worst.size:,} queries in all) and {drawn.size:,} others "
        "drawn at random (seed 0); the other queries show their values only"
    )
    return np.sort(np.concatenate([worst, drawn])), rule


def neighbour_rows(result, chosen: np.ndarray, kept_codes, images) -> dict | None:
    kept = result.neighbors
    if kept is None:
        return None
    depth = page_depth(result)
    sub = kept.take(chosen)
    out = {
        "k": depth,
        "kept": kept.k,
        "queries": chosen,
        "ids": sub.indices[:, :depth].ravel(),
        "distances": sub.distances[:, :depth].ravel(),
        "relevant": sub.relevant[:, :depth].ravel(),
        "grades": None if sub.grades is None else sub.grades[:, :depth].ravel(),
        "labels": None if kept_codes is None else kept_codes[chosen, :depth].ravel(),
        "n_relevant": kept.n_relevant,
    }
    shown = np.unique(out["ids"][out["ids"] >= 0]).tolist()
    if kept.reference_ids is not None:  # corpus ids: the page names each neighbour by its id
        out["names"] = {int(i): str(kept.reference_ids[i]) for i in shown}
    if images is not None:
        out["images"] = {int(i): str(images[i]) for i in shown}
    return out


def config_rows(result) -> dict:
    """The result's settings that read as text (lists of ids and other long values left out)."""
    return {
        key: value if isinstance(value, (int, float, str, bool)) else str(value)
        for key, value in result.config.items()
        if key != "query_ids" and (not isinstance(value, (list, tuple, dict)) or len(str(value)) < 200)
    }


def result_data(result, intervals=None, images=None, query_images=None, title: str = "") -> dict:
    """Everything the result page draws, as JSON-ready values (arrays stay numpy)."""
    query_codes, class_names = _classes(result)
    kept_codes = _kept_codes(result)
    chosen, rule = chosen_queries(result)
    data = {
        "kind": "result",
        "title": title or "embedeval result",
        "counts": {"n_queries": result.n_queries, "n_evaluated": result.n_evaluated, "n_skipped": result.n_skipped},
        "skipped": [
            {"code": code, "reason": result.skipped.reasons[code], "count": count}
            for code, count in result.skipped.items()
        ],
        "skip_reasons": list(result.skipped.reasons.values()),
        "summary": summary_rows(result, intervals),
        "conventions": dict(result.conventions),
        "config": config_rows(result),
        "metrics": list(result.per_query),
        "queries": {
            "values": dict(result.per_query),
            "labels": query_codes,
            "skip": result.skip_codes,
            "ids": [str(q) for q in result.config["query_ids"]] if "query_ids" in result.config else None,
            "first": None if result.neighbors is None else result.neighbors.first_relevant(),
        },
        "classes": class_names,
        "per_class": _per_class(result),
        "curves": curves(result),
        "confusions": confusions(kept_codes, query_codes, class_names),
        "neighbours": neighbour_rows(result, chosen, kept_codes, images),
        "rule": rule if result.neighbors is not None else "no neighbours kept (evaluate with keep_neighbors=k)",
        "verification": verification(result),
    }
    if query_images is not None:
        data["query_images"] = {int(i): str(query_images[i]) for i in chosen.tolist()}
    return data


def verification(result) -> dict | None:
    """The pair curves of a result with verification metrics (:attr:`EvaluationResult.pair_curves`),
    with the distance they are in and the summary's EER and FNMR/TAR levels to mark on them."""
    curves = result.pair_curves
    if curves is None:
        return None
    marks = {name: value for name, value in result.summary.items() if name == "eer" or "@f" in name}
    return {**curves, "distance": result.config.get("distance", ""), "marks": marks}


def _per_class(result) -> dict | None:
    pc = result.per_class
    if pc is None:
        return None
    labels = pc.labels.tolist()
    return {
        "labels": [str(v) for v in labels],
        "numeric": all(_is_number(v) for v in labels),
        "counts": pc.counts,
        "values": dict(pc.values),
    }
