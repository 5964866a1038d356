"""When two sums of float64 values count as equal: a bound on their rounding error.

The resampling tests compare a resampled statistic (a sum or mean of per-query values) with
the observed one, and count it when it is at least as extreme. When the two are equal in exact
arithmetic (metric values on a grid such as 0, 1/3, 2/3, 1 make this common), their float64
values may differ in the last bits, and a strict comparison then undercounts: a sign flip whose
exact sum is 0 against an observed sum of -5.6e-17. Every comparison of a resampled statistic
with an observed one therefore widens by :func:`tolerance`, toward counting.

The bound. With unit roundoff u = 2**-53 and gamma_m = m u / (1 - m u), a float64 sum of m terms
x_i (in any order or blocking, as BLAS does) is off from the exact sum by at most
gamma_m * sum |x_i| (Higham, *Accuracy and Stability of Numerical Algorithms*, 2002, sec. 4.2),
and each per-query value read as a difference or a mean of t floats adds at most gamma_t times
its magnitude. Two such statistics, each summing ``n_terms`` values whose magnitudes add up to
at most ``scale``, are off by at most 2 gamma_(n_terms + 2) * scale together;
:func:`tolerance` returns 8 (n_terms + 2) eps scale with eps = 2 u, at least twice that bound
for any n_terms below 10**14. So a resampled statistic whose exact value is at least as extreme
as the exact observed one is always counted (no undercount: p-values are never too small for
rounding), and a count includes a statistic that is less extreme only when the two differ by
less than the tolerance in exact arithmetic. For values on a grid of step 1/m, distinct exact
sums differ by at least 1/m, so the counts are exact while the tolerance is below 1/m (for
values in [0, 1], while 8 (n + 2) eps n < 1/m: n up to about 10**7 queries for m = 12).
"""

from __future__ import annotations

import numpy as np

EPS = float(np.finfo(np.float64).eps)


def tolerance(n_terms: int, scale) -> np.ndarray | float:
    """8 (n_terms + 2) eps scale: twice a bound on the rounding error of two float64 sums of
    ``n_terms`` terms whose magnitudes add up to at most ``scale`` (a float or an array)."""
    return 8.0 * (n_terms + 2) * EPS * np.asarray(scale, dtype=np.float64)
