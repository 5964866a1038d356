r"""Exact expected metric values over all orders of tied items, in closed form, per query.

Each order of the items inside every tie group is taken as equally likely (McSherry & Najork,
ECIR 2008); groups are ordered independently. Notation, per query and per group ``g`` of
:class:`~embedeval._metrics.ties.TiedHits`: :math:`s_g` items ranked before it, :math:`n_g` items,
:math:`r_g` relevant items, :math:`c_g` relevant items in earlier groups, :math:`G_g` its gain
sum; :math:`m_g(k) = \min(n_g, \max(k - s_g, 0))` of its positions lie in the top k. Every
position of a group is relevant with probability :math:`r_g/n_g` and has expected gain
:math:`G_g/n_g`, so metrics linear in per-position relevance or gain take those means; the
others (hit rate, RR, AP, AP over hits) are derived in their docstrings.

Kernels mirror :mod:`embedeval._metrics.kernels`: float64 arrays of shape (n_queries,), NaN where they
divide by R = 0, the same cutoff conventions; without ties they return the ordinary values
bit for bit (``tests/test_ties.py`` checks that, and every kernel against the mean over all
permutations of every tie group). Work is O(groups), except RR (over the positions of the first
relevant group when it holds several relevant items), DCG (over the positions of groups with
gain inside the cutoff) and AP over hits (over the possible hit counts of the group straddling k).
"""

from __future__ import annotations

import numpy as np

from .._core.csr import offsets_within
from .harmonic import partial_harmonic
from .kernels import _ideal_dcg, divide_or_nan, f1_of
from .ties import TiedHits


def _bincount(x, weights=None, minlength=0) -> np.ndarray:
    """``np.bincount`` as float64 always: with no entries it returns int64 zeros, which then
    cannot hold the NaN of a skipped query."""
    return np.bincount(x, weights=weights, minlength=minlength).astype(np.float64, copy=False)


def _segments(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For consecutive segments of the given lengths: each element's segment and 0-based offset."""
    lengths = lengths.astype(np.intp)
    return np.repeat(np.arange(lengths.size), lengths), offsets_within(lengths).astype(np.float64)


def _segment_cumprod(values: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Cumulative products restarted at each segment, segments batched by length class (<= 2x padding)."""
    lengths = lengths.astype(np.intp)
    out = np.empty_like(values)
    starts = np.cumsum(lengths) - lengths
    busy = np.flatnonzero(lengths > 0)
    width_class = np.ceil(np.log2(lengths[busy])).astype(np.intp)
    for c in np.unique(width_class):
        sel = busy[width_class == c]
        cols = np.arange(1 << int(c))
        valid = cols < lengths[sel, None]
        idx = np.where(valid, starts[sel, None] + cols, 0)
        block = np.where(valid, values[idx], 1.0)
        np.cumprod(block, axis=1, out=block)
        out[idx[valid]] = block[valid]
    return out


def _per_query(t: TiedHits, values: np.ndarray) -> np.ndarray:
    """Sum per query, added left to right in rank order as the ordinary kernels do (same bits)."""
    return _bincount(t.query, weights=values, minlength=t.n_queries)


def _inside(t: TiedHits, cutoff) -> np.ndarray:
    """m_g: positions of each group in the top ``cutoff`` (None: all; an array: one per query)."""
    if cutoff is None:
        return t.size
    cut = np.asarray(cutoff, dtype=np.float64)
    return np.minimum(np.maximum((cut[t.query] if cut.ndim else cut) - t.start, 0.0), t.size)


def expected_hits(t: TiedHits, cutoff) -> np.ndarray:
    r"""E[relevant items in the top k] = :math:`\sum_g r_g\, m_g(k) / n_g` (``cutoff`` as in AP)."""
    return _per_query(t, t.relevant * _inside(t, cutoff) / t.size)


def precision_at(t: TiedHits, k: int) -> np.ndarray:
    r"""E[P@k] = :math:`\frac{1}{k}\sum_g r_g m_g(k)/n_g`."""
    return expected_hits(t, k) / float(k)


def precision_within(t: TiedHits, k) -> np.ndarray:
    r"""E[precision over per-query cutoffs :math:`k_q`], 0 where :math:`k_q = 0`
    (as :func:`embedeval._metrics.kernels.precision_within`)."""
    cut = np.asarray(k, dtype=np.float64)
    return np.where(cut > 0, expected_hits(t, np.maximum(cut, 1.0)) / np.maximum(cut, 1.0), 0.0)


def recall_at(t: TiedHits, k: int) -> np.ndarray:
    r"""E[recall@k] = :math:`\frac{1}{R}\sum_g r_g m_g(k)/n_g` (trec_eval); NaN where R = 0."""
    return divide_or_nan(expected_hits(t, k), t.n_relevant)


def capped_recall_at(t: TiedHits, k: int) -> np.ndarray:
    r"""E[capped recall@k] = :math:`\frac{1}{\min(k, R)}\sum_g r_g m_g(k)/n_g`; NaN where R = 0."""
    return divide_or_nan(expected_hits(t, k), np.minimum(t.n_relevant, k))


def f1_at(t: TiedHits, k: int) -> np.ndarray:
    r"""E[F1@k] = :math:`2\,E[h_k]/(k + R)`, as F1 = 2h/(k+R) is linear in the hits h; 0 where R = 0.

    Computed as the ordinary :math:`2PR/(P+R)` of P = E[h]/k and R = E[h]/R, which equals it.
    """
    h = expected_hits(t, k)
    return f1_of(h / float(k), divide_or_nan(h, t.n_relevant))


def r_precision(t: TiedHits, cutoff=None) -> np.ndarray:
    r"""E[R-precision] = :math:`\frac{1}{R}\sum_g r_g m_g(R)/n_g`; NaN where R = 0."""
    return divide_or_nan(expected_hits(t, t.n_relevant), t.n_relevant)


def _prob_none(n: np.ndarray, r: np.ndarray, m: np.ndarray) -> np.ndarray:
    r"""P(no relevant item in the first m of n positions holding r relevant), m, r >= 1.

    :math:`\binom{n-r}{m}/\binom{n}{m} = \prod_{i<L} (n - a - i)/(n - i)`, L = min(m, r), a = max(m, r).
    """
    if n.size == 0:
        return n
    length = np.minimum(m, r)
    seg, i = _segments(length)
    a = np.maximum(m, r)[seg]
    factors = np.maximum(n[seg] - a - i, 0.0) / (n[seg] - i)
    return np.multiply.reduceat(factors, (np.cumsum(length) - length).astype(np.intp))


def hit_at(t: TiedHits, k: int) -> np.ndarray:
    r"""E[hit rate@k] = P(a relevant item in the top k).

    With :math:`g^*` the first group holding a relevant item: 1 if it ends within the top k,
    0 if it starts after it, else :math:`1 - \binom{n-r}{m}/\binom{n}{m}` with m = k - s, the
    hypergeometric chance that none of its r relevant items falls in its m positions inside.
    """
    s, n, r = t.first_relevant
    m = np.clip(k - s, 0.0, n)
    out = ((r > 0) & (m >= n)).astype(np.float64)
    part = (r > 0) & (m > 0) & (m < n)
    out[part] = 1.0 - _prob_none(n[part], r[part], m[part])
    return out


def reciprocal_rank(t: TiedHits, k: int | None = None) -> np.ndarray:
    r"""E[RR] (0 unless a relevant item is in the top k) over the first group holding a relevant item.

    Its first relevant position F (1-based within the group) has
    :math:`P(F=j) = \binom{n-j}{r-1}/\binom{n}{r}`, so
    :math:`E[RR] = \sum_{j=1}^{J} P(F=j)/(s+j)` with :math:`J = \min(n-r+1,\,k-s)`. For r = 1, F
    is uniform: :math:`H(s+1, J)/n` in O(1). Otherwise the sum runs over its J positions, with
    :math:`P(F=1) = r/n` and :math:`P(F=j+1)/P(F=j) = (n-r-j+1)/(n-j)` (factors <= 1: no overflow).
    """
    s, n, r = t.first_relevant
    last = np.where(r > 0, n - r + 1.0, 0.0)
    if k is not None:
        last = np.clip(np.minimum(last, k - s), 0.0, None)
    out = np.zeros_like(s)
    one = (r == 1) & (last > 0)
    out[one] = partial_harmonic(s[one] + 1.0, last[one])[0] / n[one]
    many = np.flatnonzero((r > 1) & (last > 0))
    seg, j0 = _segments(last[many])
    ns, rs = n[many][seg], r[many][seg]
    factor = np.where(j0 == 0, rs / ns, (ns - rs - j0 + 1.0) / np.maximum(ns - j0, 1.0))
    terms = _segment_cumprod(factor, last[many]) / (s[many][seg] + j0 + 1.0)
    out[many] = _bincount(seg, weights=terms, minlength=many.size)
    return out


def _ap_terms(t: TiedHits, m: np.ndarray) -> np.ndarray:
    r"""Per group, E[sum of P(i) rel_i over its ``m`` positions in the top k] (0 without a relevant item).

    Position p of group g is relevant with probability r/n; given that, the c earlier relevant
    items precede it and each of its p - 1 predecessors in the group is relevant with
    probability (r-1)/(n-1), so :math:`E[rel_p P(s+p)] = \frac{r}{n}\,\frac{c+1+(p-1)\frac{r-1}{n-1}}{s+p}`
    and the sum over p <= m is :math:`\frac{r}{n}\left[(c+1)H(s+1,m) + \frac{r-1}{n-1}K(s+1,m)\right]`
    (:func:`embedeval._metrics.harmonic.partial_harmonic`).
    """
    x, r, n = t.start + 1.0, t.relevant, t.size
    a = t.before + 1.0
    # One position: exactly the ordinary term (c + 1) / rank, so untied input gives the same bits;
    # none: 0. The harmonic sums only for the groups with several positions inside.
    h = np.where(m == 1, a / x, 0.0)
    many = np.flatnonzero(m > 1)
    if many.size:
        hm, km = partial_harmonic(x[many], m[many])
        hm *= a[many]
        hm += (r[many] - 1.0) / np.maximum(n[many] - 1.0, 1.0) * km  # (r-1)/(n-1) is 0 for a group of one
        h[many] = hm
    return (r / n) * h


def average_precision(t: TiedHits, cutoff=None) -> np.ndarray:
    r"""E[AP@k] = :math:`\frac{1}{R}\sum_g \frac{r_g}{n_g}\sum_{p \le m_g} \frac{c_g+1+(p-1)(r_g-1)/(n_g-1)}{s_g+p}`.

    ``cutoff`` None: the whole ranking; an int: its top k; an array of shape (n_queries,):
    one cutoff per query (``t.n_relevant`` gives MAP@R). trec_eval's denominator R; NaN where
    R = 0. The inner sum is :math:`(c+1)H(s+1, m) + \frac{r-1}{n-1}K(s+1, m)` in O(1)
    (see :func:`_ap_terms`).
    """
    return divide_or_nan(_per_query(t, _ap_terms(t, _inside(t, cutoff))), t.n_relevant)


def capped_average_precision(t: TiedHits, k: int) -> np.ndarray:
    r"""E[AP@k] with the denominator :math:`\min(k, R)` (sentence-transformers' MAP@k).

    The same expected sum as :func:`average_precision`, divided by :math:`\min(k, R)`, which
    no order of the tied items changes.
    """
    return divide_or_nan(_per_query(t, _ap_terms(t, _inside(t, k))), np.minimum(t.n_relevant, k))


def _hypergeom_pmf(n: np.ndarray, r: np.ndarray, m: np.ndarray):
    """P(X = x) for X the relevant items among m of n positions holding r: (pmf, x, segment) flat.

    Built outward from the mode by ratios <= 1 (no overflow, error ~ distance * eps), then
    normalised by its sum.
    """
    lo, hi = np.maximum(0.0, m - (n - r)), np.minimum(r, m)
    mode = np.clip(np.floor((m + 1.0) * (r + 1.0) / (n + 2.0)), lo, hi)
    seg, offset = _segments(hi - lo + 1.0)
    x = lo[seg] + offset
    ns, rs, ms, ks = n[seg], r[seg], m[seg], mode[seg]
    w = np.ones_like(x)
    up = x > ks  # P(x) / P(x - 1)
    f = (rs - x + 1.0) * (ms - x + 1.0) / np.maximum(x * (ns - rs - ms + x), 1.0)
    w[up] = _segment_cumprod(f[up], hi - mode)
    down = x < ks  # P(x) / P(x + 1), multiplied from the mode downwards
    f = (x + 1.0) * (ns - rs - ms + x + 1.0) / np.maximum((rs - x) * (ms - x), 1.0)
    w[down] = _segment_cumprod(f[down][::-1], (mode - lo)[::-1])[::-1]
    return w / _bincount(seg, weights=w, minlength=n.size)[seg], x, seg


def average_precision_over_hits(t: TiedHits, k: int) -> np.ndarray:
    r"""E[AP over hits@k] = E[:math:`\sum_{i \le k} P(i) rel_i / h_k`] (0 when :math:`h_k = 0`): a ratio.

    Groups wholly inside the top k have c relevant items and expected precision sum A
    (:func:`_ap_terms`). If a group (s, n, r) straddles k with m = k - s positions inside, the
    number X of its relevant items inside is hypergeometric, and given X = x they fill a
    uniform x-subset of those positions, so

    .. math:: E = \sum_x P(X=x)\,\frac{A + x\frac{c+1}{m}H(s+1,m) + x(x-1)\frac{K(s+1,m)}{m(m-1)}}{c+x}

    (terms with c + x = 0 are 0); with no straddling group it is A / c.
    """
    m = _inside(t, k)
    full = m >= t.size
    sum_full = _per_query(t, np.where(full, _ap_terms(t, m), 0.0))
    c = _per_query(t, np.where(full, t.relevant, 0.0))
    out = np.where(c > 0, sum_full / np.maximum(c, 1.0), 0.0)
    straddle = np.flatnonzero((m > 0) & ~full & (t.relevant > 0))  # at most one per query
    if straddle.size:
        q = t.query[straddle]
        s, n, r, mm = t.start[straddle], t.size[straddle], t.relevant[straddle], m[straddle]
        h, kk = partial_harmonic(s + 1.0, mm)
        alpha = (c[q] + 1.0) * h / mm
        beta = np.where(mm > 1, kk / (mm * np.maximum(mm - 1.0, 1.0)), 0.0)
        pmf, x, seg = _hypergeom_pmf(n, r, mm)
        found = c[q][seg] + x
        value = (sum_full[q][seg] + alpha[seg] * x + beta[seg] * x * (x - 1.0)) / np.maximum(found, 1.0)
        out[q] = _bincount(seg, weights=np.where(found > 0, pmf * value, 0.0), minlength=q.size)
    return out


def _gain(t: TiedHits, exponential: bool) -> np.ndarray:
    gain = t.gain_exp if exponential else t.gain
    if gain is None:
        raise ValueError("graded metrics (dcg, ndcg, cg) need TiedHits built from grades; got none")
    return gain


def dcg(t: TiedHits, k: int | None = None, exponential: bool = False) -> np.ndarray:
    r"""E[DCG@k] = :math:`\sum_g \frac{G_g}{n_g}\sum_{p=1}^{m_g(k)} \frac{1}{\log_2(s_g+p+1)}`.

    G is the group's sum of ``max(grade, 0)`` (linear) or ``2**max(grade, 0) - 1`` (exponential).
    The discount sums are summed position by position (a difference of prefix sums of
    :math:`1/\log_2` loses digits deep in a ranking), over groups with gain only.
    """
    gain = _gain(t, exponential)
    m = _inside(t, k)
    sel = np.flatnonzero((gain > 0) & (m > 0))
    seg, p0 = _segments(m[sel])
    position = t.start[sel][seg] + p0 + 1.0
    terms = (gain[sel] / t.size[sel])[seg] / np.log2(position + 1.0)
    return _bincount(t.query[sel][seg], weights=terms, minlength=t.n_queries)


def cg(t: TiedHits, k: int | None = None) -> np.ndarray:
    r"""E[CG@k] = :math:`\sum_g G_g\, m_g(k)/n_g` (linear gain)."""
    return _per_query(t, _gain(t, False) * _inside(t, k) / t.size)


def ndcg(t: TiedHits, k: int | None = None, exponential: bool = False) -> np.ndarray:
    r"""E[nDCG@k] = E[DCG@k] / IDCG@k: the ideal, from all judged grades, does not depend on the order."""
    return divide_or_nan(dcg(t, k, exponential), _ideal_dcg(t.ideal, k, exponential))


def trapezoid_average_precision(t: TiedHits, cutoff=None) -> np.ndarray:
    r"""E[revisited Oxford/Paris AP] = :math:`\frac{1}{2R}\sum_g (A_g + B_g)` over the whole ranking.

    The trapezoidal AP is :math:`\frac{1}{2R}\sum_i rel_i\,(P(i) + P(i-1))`, P(0) = 1. :math:`A_g`
    is the group's AP term (:func:`_ap_terms`); :math:`B_g = E[\sum_p rel_p P(s+p-1)]` takes
    :math:`E[rel_p\,h_{s+p-1}] = \frac{r}{n}(c + (p-1)\frac{r-1}{n-1})` over
    :math:`s+p-1`: :math:`\frac{r}{n}[c\,H(s, m) + \frac{r-1}{n-1}K(s, m)]`; for the first group
    (s = 0, c = 0) its first position counts P(0) = 1 and each later one :math:`\frac{r-1}{n-1}`.
    """
    m, r, n, s = t.size, t.relevant, t.size, t.start
    first = s == 0
    h, k = partial_harmonic(np.where(first, 1.0, s), m)
    share = (r - 1.0) / np.maximum(n - 1.0, 1.0)
    # One position: exactly the ordinary (j - 1) / (rank - 1) (or 1 at rank 1), for the same bits.
    later = np.where(m == 1, t.before / np.maximum(s, 1.0), t.before * h + share * k)
    before = (r / n) * np.where(first, 1.0 + (m - 1.0) * share, later)
    return divide_or_nan(_per_query(t, (_ap_terms(t, m) + before) / 2), t.n_relevant)


def revisited_precision(t: TiedHits, k: int) -> np.ndarray:
    r"""E[revisited P@k]: :math:`E[h_k/k\,;\,L > k] + E[R/L\,;\,L \le k]`, L the rank of the last relevant item.

    Every relevant item is in the top k only if all R are ranked; then L lies in the last
    group g holding a relevant item: L = s + M, M the largest of its r relevant positions among
    n, :math:`P(M = j) = \binom{j-1}{r-1}/\binom{n}{r}`, built down from :math:`P(M = n) = r/n` by
    ratios :math:`(j-r)/(j-1) \le 1`. So :math:`E = (E[h_k] - R\,P(L \le k))/k + R\,E[1/L\,;\,L \le k]`.
    """
    found = expected_hits(t, k)
    has = t.relevant > 0
    last = np.full(t.n_queries, -1)
    last[t.query[has]] = np.flatnonzero(has)  # the query's last group with a relevant item
    ranked = _bincount(t.query, weights=t.relevant, minlength=t.n_queries)
    every = (last >= 0) & (ranked == t.n_relevant)
    g = last[every]
    s, n, r = t.start[g], t.size[g], t.relevant[g]
    top = np.clip(k - s, 0.0, n)  # M <= top keeps L within the top k
    span = np.where(top >= r, n - r + 1.0, 0.0)  # j = n, n - 1, ..., r
    seg, step = _segments(span)
    j = n[seg] - step
    ratio = np.where(step == 0, r[seg] / n[seg], (j + 1.0 - r[seg]) / np.maximum(j, 1.0))
    pmf = _segment_cumprod(ratio, span) if seg.size else ratio
    inside = j <= top[seg]
    R = t.n_relevant[every].astype(np.float64)
    p_inside = _bincount(seg, weights=np.where(inside, pmf, 0.0), minlength=g.size)
    # R * P(M = j) / L: a group of one gives exactly the ordinary R / L
    r_over_l = _bincount(seg, weights=np.where(inside, R[seg] * pmf / (s[seg] + j), 0.0), minlength=g.size)
    out = found / float(k)
    out[every] = (found[every] - R * p_inside) / float(k) + r_over_l
    return np.where(t.n_relevant > 0, out, np.nan)


def compute(metrics, t: TiedHits, within=None) -> dict[str, np.ndarray]:
    """Expected per-query values of each metric: the tie-aware counterpart of
    :func:`embedeval._metrics.registry.per_query_values`.

    Parameters
    ----------
    metrics : sequence of Metric
    t : TiedHits
        ``gain``, ``gain_exp`` and ``ideal`` are needed only by the DCG family.
    within : numpy.ndarray of shape (n_queries, d + 1), optional
        Hamming radius metrics only: the references within each radius (see ``Metric.cutoff``).

    Returns
    -------
    dict of str to numpy.ndarray of shape (n_queries,)
    """
    return {m.name: m.spec.forms[m.form].expected(t, m.cutoff(t.n_relevant, within)) for m in metrics}
