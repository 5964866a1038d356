"""The Bayesian signed-rank test of Benavoli et al. (2017): how probable it is that one system is
better than another, practically equivalent to it, or worse, from their scores over datasets.
"""

from __future__ import annotations

import numpy as np

PRIOR_STRENGTH = 0.5  # the Dirichlet process's prior: weight 0.5 on a pseudo-difference at 0
_BLOCK = 4096  # posterior samples per block (memory: block x (n + 1) floats)
# Thetas within this of the largest share a sample: they are sums of the same products in other
# orders, equal in exact arithmetic for a symmetric input (identical systems with rope 0).
_TIE = 1e-12


def _region_indicator(sums: np.ndarray, edge: float) -> np.ndarray:
    """1 where a pairwise sum is above ``edge``, 1/2 where it equals it, 0 below."""
    return (sums > edge).astype(np.float64) + 0.5 * (sums == edge)


def bayes_signed_rank(a, b, *, rope: float, n_samples: int, rng: np.random.Generator) -> tuple[float, float, float]:
    """(P(B worse), P(practically equivalent), P(B better)) of B against A.

    The differences z_i = b_i - a_i of the n datasets, with a pseudo-observation z_0 = 0 of
    weight s = 0.5 (the prior), get posterior weights w ~ Dirichlet(s, 1, ..., 1) (a Dirichlet
    process). Each sample of w gives the posterior probabilities of the three regions of the
    pairwise means (z_i + z_j) / 2:

        theta_better = sum over i, j of w_i w_j [z_i + z_j > 2 rope],
        theta_worse  = sum over i, j of w_i w_j [z_i + z_j < -2 rope],
        theta_equivalent = 1 - theta_better - theta_worse,

    a sum on the edge counting 1/2 (with ``rope`` 0, the two regions split it). The returned
    probabilities are the shares of the ``n_samples`` samples in which each region's theta is the
    largest (Monte Carlo; with ``rope`` 0, P(equivalent) is 0 and the other two are the shares of
    samples where theta_better is above or below 1/2). Ties: a sample whose largest theta is
    shared by m regions (within 1e-12) counts 1/m to each, so two identical systems with ``rope``
    0 (theta_worse = theta_better = 1/2 in every sample) get P(B worse) = P(B better) = 1/2.

    References
    ----------
    Benavoli, A., Corani, G., Demšar, J. and Zaffalon, M. (2017). Time for a change: a tutorial
    for comparing multiple classifiers through Bayesian analysis. JMLR 18(77), 1-36.
    Benavoli, A., Corani, G., Mangili, F., Zaffalon, M. and Ruggeri, F. (2014). A Bayesian
    Wilcoxon signed-rank test based on the Dirichlet process. ICML.
    """
    z = np.concatenate([[0.0], np.asarray(b, dtype=np.float64) - np.asarray(a, dtype=np.float64)])
    sums = z[:, None] + z[None, :]
    above = _region_indicator(sums, 2 * rope)
    below = _region_indicator(-sums, 2 * rope)
    concentration = np.ones(z.size)
    concentration[0] = PRIOR_STRENGTH
    wins = np.zeros(3)
    for start in range(0, n_samples, _BLOCK):
        w = rng.dirichlet(concentration, size=min(_BLOCK, n_samples - start))
        better = np.einsum("si,ij,sj->s", w, above, w)
        worse = np.einsum("si,ij,sj->s", w, below, w)
        theta = np.stack([worse, 1.0 - worse - better, better], axis=1)
        if rope == 0:
            theta[:, 1] = -1.0  # no region of equivalence
        top = theta >= theta.max(axis=1, keepdims=True) - _TIE
        wins += (top / top.sum(axis=1, keepdims=True)).sum(axis=0)
    worse_p, same_p, better_p = wins / n_samples
    return float(worse_p), float(same_p), float(better_p)
