"""The exact formula compiled (numba; imported only when :func:`embedeval._core.compiled.enabled`):
:func:`pair_values` gives, bit for bit, what :func:`embedeval._search.float64.exact_distance`
gives for listed (query, reference) pairs, without its gathered float64 temporaries.

The exact value is defined by numpy's float64 arithmetic: each term rounded on its own (the
difference ``float64(r_j) - float64(q_j)`` then its square, or the product
``float64(r_j) * float64(q_j)``), and the terms added by ``numpy.add.reduce`` along a contiguous
row, which is numpy's pairwise summation of the d terms onto the identity 0.0:

* n < 8 terms: added one by one, left to right;
* 8 <= n <= 128: eight running sums, term i into sum ``i % 8`` over the first ``n - n % 8``
  terms, combined as ``((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))``, then the last
  ``n % 8`` terms added one by one;
* n > 128: the sums of the first ``n2 = n // 2 - (n // 2) % 8`` terms and of the rest, each
  by the same rule, added.

Compiled without fast-math flags, every operation here is that rounded operation in that order
(no fused multiply-add, no reassociation), so the values are identical, signed zeros included
(the final ``0.0 + s`` is numpy's identity). ``tests/search/test_exact_kernels.py`` compares
both on many shapes and magnitudes; if a numpy release changed its summation, that test fails.
"""

from __future__ import annotations

import numpy as np

from .._core.compiled import kernel_numba

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

# Numpy's block of pairwise summation (PW_BLOCKSIZE) and its unrolling.
BLOCK = 128
LANES = 8


def pair_values(queries, references, rows, cols, euclidean: bool) -> np.ndarray:
    r"""Exact float64 distances of ``(queries[rows[i]], references[cols[i]])``.

    Parameters
    ----------
    queries, references : numpy.ndarray of shape (n_q, d), (n_r, d), float32, C-contiguous
    rows, cols : numpy.ndarray of shape (m,), int
    euclidean : bool
        True: :math:`\sum_j (r_j - q_j)^2`; False: :math:`-\sum_j q_j r_j`.

    Returns
    -------
    numpy.ndarray of shape (m,), float64
        Equal, bit for bit, to ``exact_distance(queries[rows], references[cols], euclidean)``.
    """
    out = np.empty(len(rows))
    blocks, steps = plan(queries.shape[1])
    scratch = np.empty(queries.shape[1] + LANES + steps.size)
    _pair_values_into(queries, references, rows, cols, euclidean, blocks, steps, scratch, out)
    return out


def plan(d: int) -> tuple[np.ndarray, np.ndarray]:
    """numpy's pairwise summation of d terms as a program without recursion (numba's on-disk
    cache does not load recursive functions): ``blocks`` (k, 2), the (start, length) of each
    block of at most :data:`BLOCK` terms, left to right; ``steps``, read in order: a block's
    number (>= 0) pushes that block's sum, -1 pops two sums and pushes theirs (left + right)."""
    blocks, steps = [], []

    def split(lo: int, n: int) -> None:
        if n <= BLOCK:
            steps.append(len(blocks))
            blocks.append((lo, n))
            return
        half = n // 2
        half -= half % LANES
        split(lo, half)
        split(lo + half, n - half)
        steps.append(-1)

    split(0, d)
    return np.array(blocks, dtype=np.int64).reshape(-1, 2), np.array(steps, dtype=np.int64)


@numba.njit(cache=True, nogil=True)
def _pair_values_into(queries, references, rows, cols, euclidean, blocks, steps, scratch, out):  # pragma: no cover
    """:func:`pair_values` into ``out`` (m,). ``scratch`` (d + 8 + steps): each pair's terms,
    written first (a loop LLVM vectorises), the eight running sums of a block (an array, so that
    their additions become one vector addition), and the stack of :func:`plan`'s program."""
    d = queries.shape[1]
    terms, sums, stack = scratch[:d], scratch[d : d + LANES], scratch[d + LANES :]
    for t in range(rows.size):
        q, r = queries[rows[t]], references[cols[t]]
        if euclidean:
            for j in range(d):
                x = np.float64(r[j]) - np.float64(q[j])
                terms[j] = x * x
        else:
            for j in range(d):
                terms[j] = np.float64(r[j]) * np.float64(q[j])
        if d <= BLOCK:
            s = _block(terms, 0, d, sums)
        else:
            top = 0
            for step in steps:
                if step >= 0:
                    stack[top] = _block(terms, blocks[step, 0], blocks[step, 1], sums)
                    top += 1
                else:
                    top -= 1
                    stack[top - 1] = stack[top - 1] + stack[top]
            s = stack[0]
        s = 0.0 + s  # numpy's identity: a sum of -0.0 terms is +0.0
        out[t] = s if euclidean else -s


@numba.njit(inline="always")
def _block(v, lo, n, sums):  # pragma: no cover - compiled
    """numpy's sum of at most :data:`BLOCK` values ``v[lo:lo + n]``: eight running sums
    (``sums``, scratch of 8), term i into sum i % 8, then added pairwise, then the last n % 8."""
    if n < LANES:
        s = 0.0
        for i in range(lo, lo + n):
            s += v[i]
        return s
    for k in range(LANES):
        sums[k] = v[lo + k]
    whole = lo + n - n % LANES
    for i in range(lo + LANES, whole, LANES):
        for k in range(LANES):
            sums[k] += v[i + k]
    s = ((sums[0] + sums[1]) + (sums[2] + sums[3])) + ((sums[4] + sums[5]) + (sums[6] + sums[7]))
    for i in range(whole, lo + n):
        s += v[i]
    return s
