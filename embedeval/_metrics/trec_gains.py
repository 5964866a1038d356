"""Kernels of trec_eval's gain measures with its gain tables: ndcg with custom gains, G,
ndcg_rel, Rndcg and rbp (each one's definition as trec_eval 10 computes it).

The gain of a judged grade g >= 0 is g itself unless the measure's parameters give it another
(``1=3,2=9``: grade 1 gains 3, grade 2 gains 9); a document without a grade >= 0 gains 0. The
*ideal* ranking lists every judged document of the query by gain, largest first, and stops at
the first gain <= 0. Ranks are 1-based, discounts :math:`\\log_2(i + 1)`. Signature:
``kernel(hits, cutoff) -> array of shape (n_queries,)``, ``cutoff`` the parsed gains (None: the
grades themselves).
"""

from __future__ import annotations

import numpy as np

from .kernels import divide_or_zero, row_sum
from .listing import listing


def parse_gains(text: str) -> dict[float, float]:
    """``1=3,2=9,4=4.5`` -> {1: 3.0, 2: 9.0, 4: 4.5}: a gain per judged grade (an int >= 0)."""
    gains = {}
    for part in text.split(","):
        level, eq, value = part.partition("=")
        level = level.strip()
        if not eq or not (level.isascii() and level.isdigit()):
            raise ValueError(f"gains are written grade=gain with an int grade >= 0, as in 1=3,2=9; got {part!r}")
        try:
            gains[float(int(level))] = float(value)
        except ValueError:
            raise ValueError(f"the gain in {part!r} must be a number") from None
    return gains


def _mapped(grades: np.ndarray, gains: dict | None) -> np.ndarray:
    """The gain of each grade (NaN and negative values: 0)."""
    out = np.where(np.nan_to_num(grades, nan=-1.0) >= 0, np.nan_to_num(grades), 0.0)
    for level, gain in (gains or {}).items():
        out = np.where(grades == level, gain, out)
    return out


def _ideal(lst, gains: dict | None) -> np.ndarray:
    """(n_queries, w) every judged document's gain, largest first, padded with -inf."""
    positive = np.where(lst.positive > 0, _mapped(lst.positive, gains), -np.inf)
    zero_gain = (gains or {}).get(0.0, 0.0)
    width = int(lst.n_zero.max(initial=0))
    zeros = np.where(np.arange(width)[None, :] < lst.n_zero[:, None], zero_gain, -np.inf)
    return -np.sort(-np.concatenate([positive, zeros], axis=1), axis=1)


def _fit(values: np.ndarray, width: int) -> np.ndarray:
    """``values`` cut or padded with 0 to ``width`` columns, -inf read as 0."""
    values = np.where(np.isfinite(values), values, 0.0)[:, :width]
    return np.pad(values, ((0, 0), (0, width - values.shape[1])))


def _discount(width: int) -> np.ndarray:
    return np.log2(np.arange(width, dtype=np.float64) + 2.0)


def _parts(h, gains):
    """(gain per rank, ideal gains fitted to the same width, the ideal's positive gains)."""
    lst = listing(h)
    g = _mapped(lst.rel, gains)
    ideal = _ideal(lst, gains)
    positive = np.where(ideal > 0, ideal, 0.0)
    return g, _fit(ideal, g.shape[1]), positive


def ndcg_gains(h, cutoff=None) -> np.ndarray:
    """trec_eval's ndcg with a gain table: DCG of the run / DCG of the ideal ranking (whole
    ranking, no cutoff), 0 where the ideal DCG is 0."""
    g, _, positive = _parts(h, cutoff)
    dcg = row_sum(g / _discount(g.shape[1]))
    ideal = row_sum(positive / _discount(positive.shape[1]))
    return divide_or_zero(dcg, np.where(ideal > 0, ideal, 0.0))


def gain(h, cutoff=None) -> np.ndarray:
    r"""trec_eval's G: :math:`\sum_i g_i / \log_2(2 + C_i - S_i)` / (the ideal's total gain), with
    :math:`S_i` the run's gain and :math:`C_i = \sum_{t \le i} \max(\hat g_t, 1)` the ideal's gain
    (at least 1 a rank) over ranks 1..i."""
    g, ideal, positive = _parts(h, cutoff)
    cost = np.cumsum(np.maximum(ideal, 1.0), axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(g != 0, g / np.log2(2.0 + cost - np.cumsum(g, axis=1)), 0.0)
    return divide_or_zero(row_sum(term), row_sum(positive))


def ndcg_rel(h, cutoff=None) -> np.ndarray:
    """trec_eval's ndcg_rel: nDCG averaged over the ideal's documents of positive gain: at each
    retrieved document of positive gain, DCG / ideal DCG at its rank; each one not retrieved adds
    the final DCG / ideal DCG; the sum / their number (0 where it is not positive)."""
    g, ideal, positive = _parts(h, cutoff)
    disc = _discount(g.shape[1])
    dcg = np.cumsum(g / disc, axis=1)
    ideal_dcg = np.cumsum(np.where(ideal > 0, ideal, 0.0) / disc, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = row_sum(np.where(g > 0, dcg / ideal_dcg, 0.0))
        n_pos = np.count_nonzero(positive > 0, axis=1).astype(np.float64)
        final_ideal = row_sum(positive / _discount(positive.shape[1]))
        total = total + (n_pos - np.count_nonzero(g > 0, axis=1)) * dcg[:, -1] / final_ideal
    return np.where(total > 0, divide_or_zero(total, n_pos), 0.0)


def _table(lst, gains: dict) -> tuple[np.ndarray, np.ndarray]:
    """Per query, the smallest and largest gain of trec_eval's table: grades 0 .. the largest
    judged, and the parameters' grades."""
    top = np.where(lst.positive[:, 0] > 0, np.floor(lst.positive[:, 0]), np.where(lst.n_zero > 0, 0.0, -np.inf))
    low, high = np.empty(top.size), np.empty(top.size)
    for level in np.unique(top):
        table = [gains.get(float(i), float(i)) for i in range(int(level) + 1)] if np.isfinite(level) else []
        table += list(gains.values())
        low[top == level], high[top == level] = min(table, default=0.0), max(table, default=0.0)
    return low, high


def rndcg(h, cutoff=None) -> np.ndarray:
    """trec_eval's Rndcg: DCG / ideal DCG averaged over the ranks at which the ideal's gain
    changes (before the first document of each new gain, and where it falls to 0), plus the end
    of a run longer than the ideal; 0 for a query without a relevant document."""
    lst = listing(h)
    g, _, positive = _parts(h, cutoff)
    n_pos = np.count_nonzero(positive > 0, axis=1)
    width = int(n_pos.max(initial=0)) + 1
    full = _fit(_ideal(lst, cutoff), width)
    previous = np.concatenate([_table(lst, cutoff or {})[1][:, None], full[:, :-1]], axis=1)
    t = np.arange(width)
    change = ((full != previous) & (t[None, :] < n_pos[:, None])) | (t[None, :] == n_pos[:, None])
    ideal_before = np.concatenate(
        [np.zeros((g.shape[0], 1)), np.cumsum(np.where(full > 0, full, 0.0) / _discount(width), axis=1)[:, :-1]],
        axis=1,
    )
    run_before = np.concatenate([np.zeros((g.shape[0], 1)), np.cumsum(g / _discount(g.shape[1]), axis=1)], axis=1)
    upto = np.minimum(t[None, :], lst.n_retrieved[:, None])
    dcg_before = np.take_along_axis(run_before, np.minimum(upto, run_before.shape[1] - 1), 1)
    counted = change & (ideal_before > 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        total = row_sum(np.where(counted, dcg_before / ideal_before, 0.0))
        final_ideal = row_sum(positive / _discount(positive.shape[1]))
        tail = (lst.n_retrieved > n_pos + 1) & (final_ideal > 0)
        total = total + np.where(tail, run_before[:, -1] / final_ideal, 0.0)
    count = np.count_nonzero(counted, axis=1) + tail
    return np.where(np.asarray(h.n_relevant) > 0, divide_or_zero(total, count), 0.0)


def rbp(h, cutoff=None) -> np.ndarray:
    r"""Rank-biased precision (Moffat & Zobel 2008, trec_eval's form) with persistence p (default
    0.9): :math:`(1 - p)\sum_i g_i\,p^{i-1}`, gains scaled to [0, 1] by the table's smallest and
    largest gain when one lies outside it."""
    p, gains = (0.9, {}) if cutoff is None else cutoff
    return rbp_total(rbp_gains(listing(h), gains), p)


def rbp_total(g: np.ndarray, p: float) -> np.ndarray:
    """:math:`(1 - p)\\sum_i g_i\\,p^{i-1}` of the gains per position ``g`` (or their expected values)."""
    powers = np.cumprod(np.concatenate([[1.0], np.full(g.shape[1] - 1, p)]))
    return (1 - p) * row_sum(g * powers)


def rbp_gains(lst, gains: dict) -> np.ndarray:
    """rbp's gain of the document at each position: its table gain, scaled to [0, 1] by the
    table's smallest and largest gain when one lies outside; 0 without a grade >= 0."""
    g = _mapped(lst.rel, gains)
    low, top = _table(lst, gains)
    scale = (low < 0) | (top > 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scaled = np.where(scale[:, None], (g - low[:, None]) / (top - low)[:, None], g)
    return np.where(lst.rel >= 0, scaled, 0.0)
