"""The explorer's data for one evaluation: Python computes every number, the page only draws.

Size rule (a 100,000-query result stays a few MB): every query keeps its row (each per-query
value, its label, its skip reason, the rank of its first relevant neighbour), but its neighbours
are kept for at most :data:`NEIGHBOUR_QUERIES` queries: all of them when there are that few, else
the ``NEIGHBOUR_QUERIES // 2`` evaluated queries with the lowest value of the first per-query
metric (ties by lower index) and as many others drawn at random (seed 0). The page says which.
Curves and top-1 confusions are computed from every query's kept neighbours before that cut.
"""

from __future__ import annotations

import numpy as np

from .._metrics.kernels import hits_from_dense
from .._metrics.registry import EMBEDDINGS, RANKINGS, parse_metrics, per_query_values

NEIGHBOUR_QUERIES = 2000  # queries whose neighbours the page holds, at most
CURVE_FAMILIES = {EMBEDDINGS: ("recall", "precision", "map"), RANKINGS: ("recall", "precision", "map", "ndcg")}
MAX_CURVE_K = 100  # curves for k = 1..min(kept k, this)
TOP_CONFUSIONS = 30


def form_of(result) -> str:
    """The input form whose definitions the result's metrics follow (what ``recall@k`` means)."""
    return EMBEDDINGS if result.config.get("input") in (None, "embeddings") else RANKINGS


def _label_codes(labels, classes) -> tuple[np.ndarray, list[str]]:
    """(code of each label in ``classes``, the classes as text); a label not in ``classes`` is -1."""
    names = classes.tolist()
    position = {c: i for i, c in enumerate(names)}
    codes = np.fromiter((position.get(v, -1) for v in labels.tolist()), dtype=np.int64, count=len(labels))
    return codes, [str(c) for c in names]


def _classes(result) -> tuple[np.ndarray | None, list[str] | None, np.ndarray | None]:
    """(query label codes, class names, classes array) from the kept neighbours' classes or the labels."""
    if result.query_labels is None:
        return None, None, None
    kept = result.neighbors
    classes = kept.classes if kept is not None and kept.classes is not None else None
    if classes is None:
        classes = np.unique(np.asarray(result.query_labels, dtype=object).astype(str))
        codes, names = _label_codes(np.asarray(result.query_labels).astype(str), classes)
        return codes, names, None
    codes, names = _label_codes(np.asarray(result.query_labels, dtype=object), classes)
    return codes, names, classes


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
    depth = min(kept.k, MAX_CURVE_K)
    hits = hits_from_dense(kept.relevant[evaluated, :depth], kept.n_relevant[evaluated])
    series = {}
    for family in CURVE_FAMILIES[form]:
        if family == "ndcg" and kept.grades is not None:
            continue  # graded gains are not kept in binary hits: no curve rather than a wrong one
        metrics = parse_metrics([f"{family}@{k}" for k in range(1, depth + 1)], form)
        values = per_query_values(metrics, hits)
        series[family] = [float(np.mean(values[m.name])) for m in metrics]
    definitions = {f: parse_metrics([f"{f}@{depth}"], form)[0].definition for f in series}
    return {"k": list(range(1, depth + 1)), "series": series, "definitions": definitions, "n": int(evaluated.sum())}


def confusions(result, query_codes, class_names) -> list[dict] | None:
    """The class pairs that take the top-1 of the most queries: (query class, top-1 neighbour's class)."""
    kept = result.neighbors
    if kept is None or kept.label_codes is None or query_codes is None:
        return None
    top = kept.label_codes[:, 0]
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


def chosen_queries(result) -> tuple[np.ndarray, str]:
    """The queries whose neighbours the page holds (sorted), and the rule in a sentence."""
    n = result.n_queries
    if n <= NEIGHBOUR_QUERIES:
        return np.arange(n), f"neighbours kept for all {n:,} queries"
    half = NEIGHBOUR_QUERIES // 2
    first = next(iter(result.per_query.values()), None)
    worst = np.zeros(0, dtype=np.int64)
    metric = ""
    if first is not None:
        metric = next(iter(result.per_query))
        evaluated = np.flatnonzero(~np.isnan(first))
        worst = evaluated[np.lexsort((evaluated, first[evaluated]))[:half]]
    others = np.setdiff1d(np.arange(n), worst)
    drawn = np.random.default_rng(0).choice(
        others, size=min(NEIGHBOUR_QUERIES - worst.size, others.size), replace=False
    )
    rule = (
        f"neighbours kept for {worst.size + drawn.size:,} of {n:,} queries: the {worst.size:,} with the lowest "
        f"{metric} and {drawn.size:,} others drawn at random (seed 0); the other queries show their values only"
    )
    return np.sort(np.concatenate([worst, drawn])), rule


def neighbour_rows(result, chosen: np.ndarray, images) -> dict | None:
    kept = result.neighbors
    if kept is None:
        return None
    sub = kept.take(chosen)
    out = {
        "k": kept.k,
        "queries": chosen,
        "ids": sub.indices.ravel(),
        "distances": sub.distances.ravel(),
        "relevant": sub.relevant.ravel(),
        "grades": None if sub.grades is None else sub.grades.ravel(),
        "labels": None if sub.label_codes is None else sub.label_codes.ravel(),
        "n_relevant": kept.n_relevant,
    }
    if images is not None:
        ids = np.unique(sub.indices[sub.indices >= 0])
        out["images"] = {int(i): str(images[i]) for i in ids.tolist()}
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
    query_codes, class_names, _ = _classes(result)
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
        "confusions": confusions(result, query_codes, class_names),
        "neighbours": neighbour_rows(result, chosen, images),
        "rule": rule if result.neighbors is not None else "no neighbours kept (evaluate with keep_neighbors=k)",
    }
    if query_images is not None:
        data["query_images"] = {int(i): str(query_images[i]) for i in chosen.tolist()}
    return data


def _per_class(result) -> dict | None:
    pc = result.per_class
    if pc is None:
        return None
    return {"labels": [str(v) for v in pc.labels.tolist()], "counts": pc.counts, "values": dict(pc.values)}
