"""The deep pass's chunk loop in isolation, on chunks captured from a real call (issue 42, the listing).

    python bench/bench_listing.py --row 2            # R ~ 2,000 (bench_floor.py's row 2), n = 20,000
    python bench/bench_listing.py --row 4 --chunks 64
    python bench/bench_listing.py --row 4 --variants pass listing
    python bench/bench_listing.py --row 1            # R ~ 200, ranked by the deep ranking here
    python bench/bench_listing.py --row 4 --save /tmp/a.npz      # then, in another checkout:
    python bench/bench_listing.py --row 4 --compare /tmp/a.npz   # the same counts and near-ties?

Runs one ``evaluate`` of the row (one thread; the compiled pass at once, whatever numba's cache
holds) and keeps the first ``--chunks`` chunks that the compiled pass
(:func:`embedeval._search.deep_kernels.place_chunk`) receives, with everything they are placed
among, then times each chunk (copied first into a buffer of its shape, so that it is in cache
as the product leaves it; wall seconds, best of ``--repeat`` runs over the chunks), in ns a
value:

  pass     the whole pass (``place_chunk``)
  listing  only the listing of each row's values within its limit (:mod:`.list_kernels`), as
           the pass lists them
  scalar   the same listing by the branch-free scalar loop (the fallback without AVX-512)

and the share of values within the limits (``--save`` and ``--compare``: the pass's results,
counts, below and near-ties, checked equal across checkouts).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))  # this checkout's embedeval
from _common import in_cache, save_or_compare
from bench_floor import rows_of

import embedeval


def capture(row, n, d, k):
    """The first ``k`` chunks the pass gets in the row's call: (shared, [(i0, c0, chunk, lim), ...])."""
    from embedeval._core import budget
    from embedeval._search import deep_kernels

    # the compiled pass at once, whether or not numba's cache holds it yet
    budget.DEEP_FUSED_COMPILED_FROM = 0
    budget.DEEP_FROM_COMPILED = min(budget.DEEP_FROM_COMPILED, 128)  # row 1 (R ~ 200) by the deep ranking too
    _, _, make, metrics, keywords, *_ = rows_of(n, d)[row - 1]
    x, labels = make()
    kept, shared = [], {}
    original = deep_kernels.place_chunk

    def place_chunk(chunk, i0, c0, lim, padded, ranked, threshold, window, counts, *rest, **kw):
        if len(kept) < k and (not shared or shared["padded"] is padded):
            shared.setdefault("padded", padded)
            shared.update(ranked=ranked.copy(), threshold=threshold.copy(), window=window.copy(), w=counts.shape[1])
            kept.append((i0, c0, chunk.copy(), lim.copy()))
        return original(chunk, i0, c0, lim, padded, ranked, threshold, window, counts, *rest, **kw)

    deep_kernels.place_chunk = place_chunk
    try:
        embedeval.evaluate(x, labels, metrics=metrics, **{**keywords, "n_threads": 1})
    finally:
        deep_kernels.place_chunk = original
    shared["padded"] = shared["padded"].copy()
    return shared, kept


def run_pass(shared, kept):
    from embedeval._search import deep_kernels

    padded = shared["padded"]
    m = padded.shape[0]
    counts = np.zeros((m, shared["w"]), dtype=np.int64)
    below = np.zeros(m, dtype=np.int64)
    tables = deep_kernels.new_tables(m, padded.shape[1] - 2)
    out = np.empty((max(c.size for _, _, c, _ in kept), 3), dtype=np.int32)
    found, seconds = [], 0.0
    for i0, c0, chunk, lim in kept:
        args = (padded, shared["ranked"], shared["threshold"], shared["window"], counts, below, out, tables)
        hot = in_cache(chunk)
        start = time.perf_counter()
        k = deep_kernels.place_chunk(hot, i0, c0, lim, *args)
        seconds += time.perf_counter() - start
        found.append(out[:k].astype(np.int64))
    near = np.concatenate(found)
    near = near[np.lexsort(near.T[::-1])]  # the same order in every checkout
    return seconds, (counts, below, near)


def run_listing(kept, scalar):
    listed = np.empty(max(c.shape[1] for _, _, c, _ in kept), dtype=np.int32)
    total, seconds = 0, 0.0
    for _, _, chunk, lim in kept:
        hot = in_cache(chunk)
        start = time.perf_counter()
        total += _count_listed(hot, lim, listed, scalar)
        seconds += time.perf_counter() - start
    return seconds, total


def _count_listed(chunk, lim, listed, scalar):
    """The listed values of every row of ``chunk``; ``scalar``: compiled as for a target without
    AVX-512 (``compresses()`` False while it compiles: the scalar loop)."""
    import numba

    from embedeval._core import intrinsics
    from embedeval._search import list_kernels

    if scalar not in _COUNT_LISTED:

        def count_listed(chunk, lim, listed):
            total = 0
            for a in range(chunk.shape[0]):
                total += list_kernels.list_within(chunk[a], lim[a], listed)
            return total

        _COUNT_LISTED[scalar] = numba.njit(count_listed)
    compresses = intrinsics._target_compresses
    try:
        if scalar:
            intrinsics._target_compresses = lambda context: False
        return _COUNT_LISTED[scalar](chunk, lim, listed)
    finally:
        intrinsics._target_compresses = compresses


_COUNT_LISTED = {}


def fewest_seconds(repeat, fn):
    """(fewest seconds, result) of ``fn``, which returns (seconds timed, result)."""
    best, result = float("inf"), None
    for _ in range(repeat):
        seconds, result = fn()
        best = min(best, seconds)
    return best, result


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--row", type=int, default=2, help="a row of bench_floor.py (1, 2 or 4)")
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=128)
    parser.add_argument("--chunks", type=int, default=48)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--save", help="write the pass's results (counts, below, near-ties) to this .npz")
    parser.add_argument("--compare", help="check the pass's results equal those of this .npz (another checkout's)")
    parser.add_argument("--variants", nargs="+", default=["pass", "listing", "scalar"])
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = os.environ["OPENBLAS_NUM_THREADS"] = "1"
    shared, kept = capture(args.row, args.n, args.d, args.chunks)
    values = sum(c.size for _, _, c, _ in kept)
    print(f"row {args.row}, n = {args.n}: {len(kept)} chunks, {values} values, load {os.getloadavg()[0]:.2f}")
    for variant in args.variants:
        if variant == "pass":
            run_pass(shared, kept)  # compiled or loaded
            seconds, result = fewest_seconds(args.repeat, lambda: run_pass(shared, kept))
            save_or_compare(result, args.save, args.compare)
            extra = f"near-ties {result[2].shape[0]}"
        else:
            run_listing(kept, variant == "scalar")
            seconds, within = fewest_seconds(args.repeat, lambda v=variant: run_listing(kept, v == "scalar"))
            extra = f"within {within / values:.1%}"
        print(f"| {variant} | {seconds / values * 1e9:.2f} ns a value | {extra} |")


if __name__ == "__main__":
    main()
