"""Figures. matplotlib is imported here only, when a figure is drawn, never by ``import embedeval``.

Figures are drawn on matplotlib's Agg canvas through the object API (no pyplot), so they work
without a display and never change the user's backend.
"""

from __future__ import annotations

from pathlib import Path

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
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.22), ncol=2, fontsize=8, markerscale=2, frameon=False)


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
