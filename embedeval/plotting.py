"""Figures. matplotlib is imported here only, when a figure is drawn, never by ``import embedeval``.

Figures are drawn on matplotlib's Agg canvas through the object API (no pyplot), so they work
without a display and never change the user's backend.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

# Dark blue circles and light orange triangles: told apart by hue, by lightness in greyscale
# print, and by marker shape.
_CLASS_STYLE = ({"color": "#1f3a93", "marker": "o"}, {"color": "#f5a623", "marker": "^"})
_SHORT = {"precision@1": "P@1", "recall@1": "R@1", "recall@10": "R@10", "r_precision": "R-prec", "map@r": "MAP@R"}


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=120, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _save(fig, path, title: str = "") -> Path:
    """Write ``fig`` to ``path`` (its folder made if needed), under a suptitle when ``title`` is given."""
    if title:
        fig.suptitle(title, fontsize=10)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    return path


def _legend_below(ax, y: float, fontsize: int = 7, **options) -> None:
    """A legend in two columns under the axes, ``y`` below them (inside, it would cover curves)."""
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, y), ncol=2, fontsize=fontsize, frameon=False, **options)


def metric_caption(summary: dict[str, float], names=None) -> str:
    """The metric values exactly as printed on figures: ``P@1 0.9990  MAP@R 0.5123``."""
    names = list(summary) if names is None else names
    return "   ".join(f"{_SHORT.get(m, m)} {summary[m]:.4f}" for m in names)


def _draw_example(ax, number, x, labels, result):
    from .reality_check import CLASS_NAMES, TITLES

    for label, style in enumerate(_CLASS_STYLE):
        pts = x[labels == label]
        ax.scatter(pts[:, 0], pts[:, 1], s=6, alpha=0.8, linewidths=0, label=f"class {CLASS_NAMES[label]}", **style)
    ax.set_aspect("equal")
    ax.set_xlim(-1.05, 1.05)
    ax.set_ylim(-0.05, 1.05)
    ax.set_xlabel("x")
    ax.set_ylabel("y")
    names = list(result.summary)
    half = (len(names) + 1) // 2
    caption = metric_caption(result.summary, names[:half]) + "\n" + metric_caption(result.summary, names[half:])
    ax.set_title(f"Example {number}: {TITLES[number]}\n{caption}", fontsize=9)
    _legend_below(ax, -0.22, fontsize=8, markerscale=2)


def plot_reality_check(results, out_dir) -> list[Path]:
    """Save one figure per toy example and one with the three side by side.

    Parameters
    ----------
    results : dict of int to (embeddings, labels, EvaluationResult)
        As returned by :func:`embedeval.reality_check.evaluate_examples`.
    out_dir : str or Path
        Created if missing.

    Returns
    -------
    list of Path
        ``reality_check_1.png``, ``_2``, ``_3`` and ``reality_check.png``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for number, (x, labels, result) in results.items():
        fig = _figure(5.0, 3.8)
        _draw_example(fig.add_subplot(), number, x, labels, result)
        paths.append(out / f"reality_check_{number}.png")
        fig.savefig(paths[-1])
    fig = _figure(14.0, 3.9)
    for i, (number, (x, labels, result)) in enumerate(results.items()):
        _draw_example(fig.add_subplot(1, len(results), i + 1), number, x, labels, result)
    paths.append(out / "reality_check.png")
    fig.savefig(paths[-1])
    return paths


_LINES = ("-", "--", "-.", ":")
_COLORS = ("#1f3a93", "#d35400", "#16a085", "#7d3c98")


def plot_error_reject(curves: dict, path, title: str = "Error vs reject") -> Path:
    """Error-vs-reject curves of several metrics on one figure, with their oracle curves
    (thin, same colour) and their random curves (dotted, same colour); areas in the legend."""
    fig = _figure(6.0, 5.0)
    ax = fig.add_subplot()
    for i, (name, c) in enumerate(curves.items()):
        line, color = _LINES[i % len(_LINES)], _COLORS[i % len(_COLORS)]
        ax.plot(c.rejected, c.error, line, color=color, lw=2, label=f"{name} (area {c.area:.4f})")
        ax.plot(
            c.rejected, c.oracle, line, color=color, lw=0.8, alpha=0.7, label=f"{name} oracle ({c.oracle_area:.4f})"
        )
        # each metric's random curve (its mean error, flat), in its colour, with its own entry
        ax.plot(c.rejected, c.random, ":", color=color, lw=1.2, label=f"{name} random (mean error {c.random[0]:.4f})")
    ax.set_xlabel("fraction of queries rejected (least confident first)")
    ax.set_ylabel("mean error of kept queries (1 - metric)")
    ax.set_xlim(0, 1)
    ax.set_ylim(bottom=0)
    ax.set_title(title, fontsize=10)
    _legend_below(ax, -0.16)  # inside, it would cover the random curves, which sit at the top left
    return _save(fig, path)


def plot_confidence_experiment(exp: dict, path) -> Path:
    """The seed's experiment: example 2 with injected errors (left, opacity = confidence at the
    middle level) and each score as the errors' confidence rises (right)."""
    fig = _figure(11.0, 4.2)
    left, right = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
    x, labels, err = exp["embeddings"], exp["labels"], exp["is_error"]
    mid = exp["levels"][len(exp["levels"]) // 2]
    conf = np.where(err, mid, exp["base_confidence"])
    names = [f"class {'AB'[label]} (opacity grows with confidence)" for label in range(len(_CLASS_STYLE))]
    for label, style in enumerate(_CLASS_STYLE):
        keep = (labels == label) & ~err
        colors = [style["color"]] * int(keep.sum())
        left.scatter(x[keep, 0], x[keep, 1], s=9, linewidths=0, c=colors, marker=style["marker"], label=names[label])
        left.collections[-1].set_alpha(np.clip(0.25 + 0.75 * conf[keep], 0.25, 1.0))
    left.scatter(
        x[err, 0], x[err, 1], s=22, marker="x", color="#c0392b", lw=1, label=f"injected label errors ({err.sum()})"
    )
    left.set_aspect("equal")
    left.set_xlabel("x")
    left.set_ylabel("y")
    left.set_title(f"Example 2 with injected errors (their confidence = {mid:.2f})", fontsize=9)
    # legend entries at full opacity (the scatter's per-point opacity would make them faint)
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], ls="none", marker=st["marker"], color=st["color"], ms=5, label=names[i])
        for i, st in enumerate(_CLASS_STYLE)
    ]
    handles.append(left.collections[-1])
    _legend_below(left, -0.2, handles=handles)
    lv = exp["levels"]
    right.plot(
        lv, exp["erc_area_precision@1"], "-o", ms=3, color=_COLORS[0], label="ERC area, precision@1 (lower is better)"
    )
    right.plot(lv, exp["erc_area_map@r"], "--s", ms=3, color=_COLORS[1], label="ERC area, MAP@R (lower is better)")
    twin = right.twinx()
    twin.plot(lv, exp["top1_auroc"], "-.^", ms=3, color=_COLORS[2], label="top-1 AUROC (higher is better)")
    twin.set_ylabel("AUROC")
    right.set_xlabel("confidence given to the injected errors")
    right.set_ylabel("area under the error-vs-reject curve")
    right.set_title("Scores as the model grows confident on its errors", fontsize=9)
    handles = right.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
    _legend_below(right, -0.16, handles=handles)
    return _save(fig, path)


def plot_evaluation(result, path, title: str = "") -> Path:
    """Recall@k against k (from the result's ``recall@k`` metrics) and the distribution of
    per-class MAP@R (when the result has ``map@r`` and per-class values)."""
    ks = sorted(int(name.split("@")[1]) for name in result.summary if name.startswith("recall@"))
    per_class = result.per_class.values.get("map@r") if result.per_class is not None else None
    panels = int(bool(ks)) + int(per_class is not None)
    if panels == 0:
        raise ValueError("nothing to plot: the result has no recall@k and no per-class map@r")
    from matplotlib.ticker import MaxNLocator

    fig = _figure(5.0 * panels, 3.8)
    i = 1
    if ks:
        ax = fig.add_subplot(1, panels, i)
        ax.plot(ks, [result.summary[f"recall@{k}"] for k in ks], "-o", ms=3, color=_COLORS[0])
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel("k")
        ax.set_ylabel("Recall@k (a same-label item in the top k)")
        ax.set_ylim(min(result.summary[f"recall@{k}"] for k in ks) - 0.02, 1.005)
        ax.grid(alpha=0.3)
        ax.set_title("Recall@k", fontsize=10)
        i += 1
    if per_class is not None:
        ax = fig.add_subplot(1, panels, i)
        ax.hist(per_class, bins=min(30, max(5, per_class.size // 3)), range=(0, 1), color=_COLORS[1], edgecolor="white")
        ax.axvline(
            result.per_class.macro["map@r"],
            color="black",
            ls="--",
            lw=1,
            label=f"macro average {result.per_class.macro['map@r']:.4f}",
        )
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # a count of classes: no fractional ticks
        ax.set_xlabel("MAP@R of a class (mean over its queries)")
        ax.set_ylabel("classes")
        ax.set_title(f"Per-class MAP@R ({per_class.size} classes)", fontsize=10)
        ax.legend(fontsize=8)
    return _save(fig, path, title)


def plot_hamming_pr(curve, path, title: str = "") -> Path:
    """The precision-recall curve over Hamming radii (:func:`embedeval.hashing.pr_curve`), and
    precision and recall against the radius.

    Left: one point per radius, the usual hashing PR curve (radii 0, 2 and d / 2 labelled).
    Right: both against the radius, precision counting 0 for a query with nothing that near.
    """
    fig = _figure(10.0, 3.8)
    ax = fig.add_subplot(1, 2, 1)
    ax.plot(curve.recall, curve.precision, "-o", ms=3, color=_COLORS[0])
    d = curve.radius.size - 1
    labelled: list[list[int]] = []  # radii whose points nearly coincide share one label
    for t in sorted({0, min(2, d), d // 2}):
        near = [g for g in labelled if abs(curve.recall[g[0]] - curve.recall[t]) < 0.05]
        near = [g for g in near if abs(curve.precision[g[0]] - curve.precision[t]) < 0.05]
        if near:
            near[0].append(t)
        else:
            labelled.append([t])
    for group in labelled:
        t = group[0]
        # The curve falls from left to right: below-left of a point lies under it, free of the line;
        # near recall 0 the curve rises vertically, so the label goes to the right, and at the origin
        # (small radii: nothing within r) up and right, off the axes' corner, with a leader line.
        under = curve.recall[t] > 0.15
        corner = not under and curve.precision[t] < 0.15
        ax.annotate(
            "r=" + ",".join(map(str, group)),
            (curve.recall[t], curve.precision[t]),
            textcoords="offset points",
            xytext=(-8, -14) if under else (28, 22) if corner else (8, 2),
            ha="right" if under else "left",
            fontsize=8,
            arrowprops={"arrowstyle": "-", "lw": 0.6, "color": "0.4"} if corner else None,
        )
    ax.set_xlabel("recall within radius r")
    ax.set_ylabel("precision within radius r")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.set_title("Precision-recall over Hamming radii", fontsize=10)
    ax = fig.add_subplot(1, 2, 2)
    ax.plot(curve.radius, curve.precision, "-o", ms=3, color=_COLORS[0], label="precision (0 if none within r)")
    ax.plot(curve.radius, curve.recall, "-^", ms=3, color=_COLORS[1], label="recall")
    ax.set_xlabel("Hamming radius r")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="center right")
    ax.set_title(f"Within radius r ({curve.result.n_evaluated} queries, {d}-bit codes)", fontsize=10)
    return _save(fig, path, title)


def plot_critical_difference(comparison, path, title: str = "") -> Path:
    """The critical-difference diagram (Demšar 2006) of a comparison across datasets
    (:func:`embedeval.stats.compare_across`): each system at its mean rank on an axis from 1 to k,
    the best on the left, a bar of Nemenyi's critical difference above the axis, and a thick line
    under every maximal group of systems the post-hoc test does not tell apart (with a control, the
    band of one critical difference either side of the control instead). PNG, SVG or PDF by the
    suffix of ``path``. Names are drawn as they are written (``$`` is no mathtext switch here)."""
    from ._stats.across_ranks import not_different_groups

    c = comparison
    k = len(c.systems)
    order = sorted(c.systems, key=lambda s: (c.mean_ranks[s]["mean_rank"], c.systems.index(s)))
    ranks = [c.mean_ranks[s]["mean_rank"] for s in order]
    left = (k + 1) // 2
    fig = _figure(max(6.0, 0.9 * k), 1.6 + 0.28 * max(left, k - left))
    ax = fig.add_subplot(1, 1, 1)
    ax.set_axis_off()
    ax.set_xlim(0.3 - 0.25 * k, k + 0.7 + 0.25 * k)
    depth = 0.4 * (max(left, k - left) + 1)
    ax.set_ylim(-depth - 0.4, 1.3)
    ax.hlines(0, 1, k, color="black", lw=1)
    for r in range(1, k + 1):
        ax.vlines(r, 0, 0.12, color="black", lw=1)
        ax.text(r, 0.2, str(r), ha="center", va="bottom", fontsize=9)
    cd = c.nemenyi["critical_difference"]
    ax.hlines(0.9, 1, 1 + cd, color="black", lw=1.5)
    ax.vlines([1, 1 + cd], 0.82, 0.98, color="black", lw=1.5)
    ax.text(1 + cd / 2, 1.0, f"CD = {cd:.2f} (Nemenyi, alpha {c.settings['alpha']})", ha="center", fontsize=8)
    for i, (s, r) in enumerate(zip(order, ranks, strict=True)):
        on_left = i < left
        y = -0.4 * ((i if on_left else k - 1 - i) + 1)
        end = 1 - 0.2 * k if on_left else k + 0.2 * k
        ax.plot([r, r, end], [0, y, y], color="#1f3a93", lw=0.9)
        star = " *" if s in c.tied_for_first else ""
        label = f"{s}{star} ({r:.2f})" if on_left else f"({r:.2f}) {s}{star}"
        # parse_math=False: a name is text, never mathtext ("$x_{$" would stop the drawing)
        ax.text(end, y, label, ha="right" if on_left else "left", va="center", fontsize=9, parse_math=False)
    if c.settings["baseline"] is None:
        different = {frozenset((p["a"], p["b"])) for p in c.pairs if p["significant"]}
        bars = [
            (c.mean_ranks[g[0]]["mean_rank"], c.mean_ranks[g[-1]]["mean_rank"])
            for g in not_different_groups(order, different)
        ]
    else:
        centre = c.mean_ranks[c.settings["baseline"]]["mean_rank"]
        bars = [(max(1.0, centre - cd), min(float(k), centre + cd))]
    for j, (lo, hi) in enumerate(bars):
        ax.hlines(-0.12 - 0.12 * j, lo - 0.05, hi + 0.05, color="#c0392b", lw=3.5)
    test = "Nemenyi" if c.settings["post_hoc"] == "nemenyi" else "Wilcoxon, Holm"
    what = "within one CD of the control" if c.settings["baseline"] else f"not told apart ({test})"
    ax.text((k + 1) / 2, -depth - 0.2, f"* tied for first; red bars: {what}", ha="center", fontsize=8, color="0.3")
    return _save(fig, path, title)
