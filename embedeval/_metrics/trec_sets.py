"""Kernels of trec_eval's set measures (the retrieved documents as an unordered set) and of its
measures over unjudged documents (each one's definition as trec_eval 10 computes it).

With ret the documents retrieved, rel_ret the relevant ones among them and R the relevant
documents of the query, a value trec_eval leaves unset (a zero denominator) is 0. Signature:
``kernel(hits, cutoff) -> array of shape (n_queries,)``.
"""

from __future__ import annotations

import numpy as np

from .kernels import divide_or_zero
from .listing import listing
from .trec_extra import floats, one_float
from .trec_gains import parse_gains

UTILITY_DEFAULT = (1.0, -1.0, 0.0, 0.0)


def _counts(h) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(ret, rel_ret, R) as float arrays."""
    lst = listing(h)
    rel_ret = np.count_nonzero(lst.relevant, axis=1).astype(np.float64)
    return lst.n_retrieved.astype(np.float64), rel_ret, np.asarray(h.n_relevant, dtype=np.float64)


def set_precision(h, cutoff=None) -> np.ndarray:
    """set_P = rel_ret / ret."""
    ret, rel_ret, _ = _counts(h)
    return divide_or_zero(rel_ret, ret)


def set_recall(h, cutoff=None) -> np.ndarray:
    """set_recall = rel_ret / R."""
    _, rel_ret, r = _counts(h)
    return divide_or_zero(rel_ret, r)


def set_relative_precision(h, cutoff=None) -> np.ndarray:
    """set_relative_P = rel_ret / min(ret, R)."""
    ret, rel_ret, r = _counts(h)
    return divide_or_zero(rel_ret, np.minimum(ret, r))


def set_map(h, cutoff=None) -> np.ndarray:
    """set_map = set_P * set_recall = rel_ret^2 / (ret R)."""
    ret, rel_ret, r = _counts(h)
    return divide_or_zero(rel_ret * rel_ret, ret * r)


def set_f(h, cutoff=None) -> np.ndarray:
    """set_F with weight x (default 1): (x + 1) P R' / (x P + R'), P = set_P, R' = set_recall;
    0 without a relevant document retrieved."""
    x = 1.0 if cutoff is None else cutoff
    ret, rel_ret, r = _counts(h)
    p, rc = divide_or_zero(rel_ret, ret), divide_or_zero(rel_ret, r)
    return np.where(rel_ret > 0, divide_or_zero((x + 1.0) * p * rc, x * p + rc), 0.0)


def utility(h, cutoff=None) -> np.ndarray:
    """utility with coefficients (a, b, c, d), default (1, -1, 0, 0): a rel_ret + b (ret - rel_ret)
    + c (R - rel_ret) + d (N + rel_ret - ret - R), N the collection's size, 0 (trec_eval's default,
    its -N)."""
    a, b, c, d = UTILITY_DEFAULT if cutoff is None else cutoff
    ret, rel_ret, r = _counts(h)
    return a * rel_ret + b * (ret - rel_ret) + c * (r - rel_ret) + d * (0.0 + rel_ret - ret - r)


def num_nonrel_judged_ret(h, cutoff=None) -> np.ndarray:
    """Retrieved documents judged non-relevant (grade in [0, level)): a count."""
    return np.count_nonzero(listing(h).judged_nonrelevant, axis=1).astype(np.float64)


def unjudged_at(h, cutoff) -> np.ndarray:
    """unj_k: documents without a grade >= 0 among the top k, / k (trec_eval's unjudged measure)."""
    return top_share(listing(h).unjudged, cutoff)


def top_share(unjudged: np.ndarray, cutoff) -> np.ndarray:
    """unj_k from a value per position (1 for an unjudged document, or its probability): the sum
    over the top k positions / k."""
    return np.sum(unjudged[:, : int(cutoff)], axis=1, dtype=np.float64) / float(cutoff)


def rbp_p(cutoff) -> float:
    return 0.9 if cutoff is None else cutoff[0]


def rbp_residual(h, cutoff=None) -> np.ndarray:
    r"""trec_eval's rbp_resid with persistence p (default 0.9), for a run with an unjudged
    document: :math:`p^{n} + (1 - p)\sum_{i\ \mathrm{unjudged}} p^{i}` over 0-based positions i
    of the n retrieved documents; 0 when every retrieved document is judged."""
    lst = listing(h)
    return residual(lst, lst.unjudged.astype(np.float64), rbp_p(cutoff))


def residual(lst, unjudged: np.ndarray, p: float) -> np.ndarray:
    """rbp_resid of ``lst`` from a value per position (1 for an unjudged document, or its
    probability); whether any retrieved document is unjudged is read from ``lst``, whatever
    the order of its documents."""
    width = lst.rel.shape[1]
    powers = np.cumprod(np.concatenate([[1.0], np.full(width, p)]))  # p^0 .. p^width, multiplied in turn
    total = np.cumsum(unjudged * powers[:-1], axis=1)[:, -1]
    value = powers[lst.n_retrieved] + (1 - p) * total
    return np.where(lst.unjudged.any(axis=1), value, 0.0)


def parse_utility(text: str):
    values = floats(text, "utility")
    if len(values) != 4:
        raise ValueError(f"utility takes 4 coefficients (a,b,c,d); got {text!r}")
    return values


def parse_set_f(text: str) -> float:
    return one_float(text, "set_F")


def parse_p(text: str) -> tuple[float, dict]:
    """``p=0.8`` (the persistence of rbp) and ``level=gain`` pairs."""
    p, gains = 0.9, {}
    for part in text.split(","):
        name, eq, value = part.partition("=")
        if name.strip() == "p" and eq:
            p = one_float(value, "rbp's p")
            if not 0 <= p < 1:
                raise ValueError(f"rbp's p must be in [0, 1); got {value!r}")
        else:
            gains.update(parse_gains(part))
    return p, gains
