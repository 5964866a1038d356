"""A comparison across datasets as text: an aligned table, Markdown, HTML, CSV, JSON or LaTeX.

Three tables in the text formats: the leaderboard (each system's mean rank with its interval, its
place and place interval, its mean score, and a mark for the systems tied for first), the scores
per dataset (with intervals where per-query values were given), and the pairs (the post-hoc
tests, the datasets where each pair differs, the Bayesian probabilities); then the tests and a
legend saying how every number was made. LaTeX prints the scores per dataset and the mean ranks
as papers do.
"""

from __future__ import annotations

from .._core.text import csv_table, format_p_value, format_value, percent
from .tables import _cell, _tex, noted, render_as, span, valued


def _p(x) -> str:
    return "-" if x is None else format_p_value(x)


def _p_is(x) -> str:
    """``p = 0.0123``, or ``p < 0.0001``."""
    text = _p(x)
    return f"p {text.replace('<', '< ')}" if text.startswith("<") else f"p = {text}"


def leaderboard_rows(c) -> tuple[list[str], list[list[str]]]:
    level = c.settings["confidence"]
    head = ["place", "system", f"mean rank [{percent(level)} interval]" if level else "mean rank"]
    head += ["place interval"] * bool(level) + ["mean score", "tied for first"]
    rows = []
    order = sorted(c.systems, key=lambda s: (c.mean_ranks[s]["mean_rank"], c.systems.index(s)))
    for i, s in enumerate(order):
        r = c.mean_ranks[s]
        rank = f"{r['mean_rank']:.2f}" + (f" [{r['low']:.2f}, {r['high']:.2f}]" if level else "")
        row = [str(i + 1), s, rank]
        if level:
            row.append(span(r["place_low"], r["place_high"]))
        row += [format_value(r["mean_score"]), "*" if s in c.tied_for_first else ""]
        rows.append(row)
    return head, rows


def dataset_rows(c) -> tuple[list[str], list[list[str]]]:
    head = ["dataset", *(["queries"] if c.n_queries else []), *c.systems]
    rows = []
    for d in c.datasets:
        row = [d, *([str(c.n_queries[d])] if c.n_queries else [])]
        for s in c.systems:
            interval = None if c.intervals is None else c.intervals[d][s]
            row.append(valued(c.scores[d][s], interval) + f" ({c.ranks[d][s]:g})")
        rows.append(row)
    rows.append(
        ["mean rank", *([""] if c.n_queries else []), *(f"{c.mean_ranks[s]['mean_rank']:.2f}" for s in c.systems)]
    )
    return head, rows


def pair_rows(c) -> tuple[list[str], list[list[str]]]:
    per_query = c.settings["per_query"]
    bayes = c.settings["rope"] is not None
    head = ["pair (B vs A)", "mean ranks", "p (Nemenyi)", "W", "p (Wilcoxon)", "p (Holm)", "significant"]
    head += ["datasets B above/below/neither"] * per_query + ["P(B worse/equivalent/better)"] * bayes
    rows = []
    for r in c.pairs:
        row = [
            f"{r['b']} vs {r['a']}",
            f"{r['mean_rank_b']:.2f} / {r['mean_rank_a']:.2f}",
            _p(r["p_nemenyi"]),
            f"{r['wilcoxon_statistic']:g}",
            _p(r["p_wilcoxon"]),
            _p(r["p_wilcoxon_holm"]),
            "*" if r["significant"] else "",
        ]
        if per_query:
            row.append(f"{r['datasets_b_above']}/{r['datasets_b_below']}/{r['datasets_neither']}")
        if bayes:
            b = r["bayes"]
            row.append(f"{b['p_b_worse']:.3f}/{b['p_equivalent']:.3f}/{b['p_b_better']:.3f}")
        rows.append(row)
    return head, rows


def tests(c) -> dict[str, str]:
    """The tests over all systems, and the set tied for first, ``{what: result}``."""
    f, s = c.friedman, c.settings
    if f["f_infinite"]:
        f_text = "infinite, p = 0 (every dataset ranks the systems alike)"
    else:
        f_text = f"{f['f']:.3f} on ({f['df1']}, {f['df2']}) df, {_p_is(f['p_f'])}"
    out = {
        "Friedman": f"chi2 = {f['statistic']:.3f} on {f['df']} df, {_p_is(f['p_value'])} "
        f"({f['n_systems']} systems, {f['n_datasets']} datasets)",
        "Iman-Davenport": f"F = {f_text}",
        "Nemenyi": f"critical difference {c.nemenyi['critical_difference']:.3f} of mean rank at alpha {s['alpha']} "
        f"(q_alpha = {c.nemenyi['q_alpha']:.3f})",
        "best": c.best,
        "tied for first": ", ".join(c.tied_for_first),
    }
    if c.could_be_first is not None:
        out["could be first"] = ", ".join(c.could_be_first)
    return out


def legend(c) -> dict[str, str]:
    """How every number was made, ``{what: how}``, one sentence each."""
    s = c.settings
    level = s["confidence"]
    post = "Nemenyi's p" if s["post_hoc"] == "nemenyi" else "Wilcoxon's p with Holm's correction over all pairs"
    out = {"ranks": "within each dataset, 1 = highest score, ties averaged; mean rank over the datasets"}
    if level:
        levels = "datasets, then the queries of each drawn dataset (two levels)" if s["per_query"] else "datasets"
        out["intervals"] = (
            f"{percent(level)} percentile bootstrap, {s['n_bootstrap']} resamples of the {levels}; seed {s['seed']}"
        )
        out["place interval"] = "the places (1 = lowest mean rank) the system takes in the same resamples"
        out["could be first"] = "systems whose place interval includes 1"
    out["tied for first"] = f"the best and every system not significantly worse than it by {post} < {s['alpha']}"
    out["p (Nemenyi)"] = "studentized range of the mean-rank difference (controls the family-wise error itself)"
    zero = {"wilcox": "zeros dropped", "pratt": "zeros ranked, then dropped (Pratt)", "zsplit": "zero ranks split"}
    out["p (Wilcoxon)"] = (
        f"Wilcoxon signed-rank over the datasets' scores, two-sided, {zero[s['zero_method']]}, "
        f"method {s['wilcoxon_method']}; W = min(W+, W-)"
    )
    out["p (Holm)"] = f"Holm's step-down over the {s['n_pairs']} pairs"
    out["significant"] = f"{post} < {s['alpha']}"
    if s["per_query"]:
        out["datasets B above/below/neither"] = (
            f"paired randomization test per dataset on the per-query differences ({s['n_resamples']} sign flips), "
            f"p < {s['alpha']} without correction, and the sign of the mean difference"
        )
    if s["rope"] is not None:
        out["P(B worse/equivalent/better)"] = (
            f"Bayesian signed-rank test (Benavoli et al. 2017), rope {s['rope']:g} on the score difference, "
            f"prior 0.5 at 0, {s['n_bayes_samples']} Dirichlet samples; share where each region is the most probable"
        )
    return noted(out, c.notes)


def _csv(c) -> str:
    head = ["kind", "dataset", "system", "value", "low", "high", "rank"]
    rows = []
    for d in c.datasets:
        for s in c.systems:
            lo, hi = c.intervals[d][s] if c.intervals is not None else (None, None)
            rows.append(["score", d, s, _cell(c.scores[d][s]), _cell(lo), _cell(hi), _cell(c.ranks[d][s])])
    for s in c.systems:
        r = c.mean_ranks[s]
        rows.append(["mean_rank", "", s, _cell(r["mean_rank"]), _cell(r["low"]), _cell(r["high"]), str(r["place"])])
    return csv_table(head, rows)


def render(c, fmt: str) -> str:
    """``c`` (an AcrossComparison) as ``fmt``."""
    return render_as(c, fmt, (leaderboard_rows, dataset_rows, pair_rows), (tests, legend), _csv, _latex)


def _latex(c) -> str:
    """A booktabs tabular: datasets as rows, systems as columns, the best score of each dataset in
    bold, then the mean rank, and the systems tied for first marked with a dagger."""
    s = c.settings
    lines = [r"\begin{tabular}{l" + "r" * len(c.systems) + "}", r"\toprule"]
    names = [_tex(x) + (r"$^{\dagger}$" if x in c.tied_for_first else "") for x in c.systems]
    lines += ["Dataset & " + " & ".join(names) + r" \\", r"\midrule"]
    for d in c.datasets:
        top = max(c.scores[d].values())
        cells = [rf"\textbf{{{format_value(v)}}}" if v == top else format_value(v) for v in c.scores[d].values()]
        lines.append(f"{_tex(d)} & " + " & ".join(cells) + r" \\")
    lines.append(r"\midrule")
    lines.append("Mean rank & " + " & ".join(f"{c.mean_ranks[x]['mean_rank']:.2f}" for x in c.systems) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    post = "Nemenyi" if s["post_hoc"] == "nemenyi" else "Wilcoxon signed-rank, Holm"
    lines.append(
        f"% dagger: tied for first (not significantly worse than {_tex(c.best)} by {post}, p < {s['alpha']}); "
        f"Friedman {_p_is(c.friedman['p_value'])}, Iman-Davenport {_p_is(c.friedman['p_f'])}; bold: best per dataset"
    )
    return "\n".join(lines)
