"""The compiled kernels' cost on the first call of a fresh process (numba's import, then the
machine code loaded from the on-disk cache, or compiled when the cache is cold).

    python bench/bench_compile.py            # a warm cache (run once before to fill it)
    python bench/bench_compile.py --cold     # the cache emptied first: the compilation itself
    python bench/bench_compile.py --cold --deep   # a first deep ranking (two classes of 1,000)
    python bench/bench_compile.py --cold --ties   # a first tie-aware evaluate (ties="expected")
    python bench/bench_compile.py --cold --large  # a first deep ranking large enough for the radix sort
    python bench/bench_compile.py --place    # the deep pass alone, compiled from an empty cache
    python bench/bench_compile.py --place --root DIR   # the same for another checkout (an older commit)
    python bench/bench_compile.py --routines # what one numpy routine inside a kernel adds to its compilation
    python bench/bench_compile.py --switched # the radix sort and the Hits reductions: cold

Prints the seconds of ``import numba`` and of a first small pair verification (or, with
``--deep``, a first evaluate whose rankings take the deep ranking; with ``--ties``, a first
evaluate with ``ties="expected"``, the tied scan; with ``--large``, a first evaluate of 12,000
points, half of them in one class, which sorts 3.6e7 values: past ``budget.SORT_COMPILED_FROM``
and ``budget.HITS_COMPILED_FROM``, so that the radix sort and the Hits reductions compile in the
call, the --cold figure less the warm one is what they and the deep pass compile) with the
compiled kernels and with the numpy passes, each in a new interpreter. A last line times a fixed
pure-Python loop in the same sitting: compilation is single-threaded Python and LLVM work, so
that loop says how fast the machine was when the figures were taken.
"""

from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir)
PROGRAM = """
import time, os
t0 = time.perf_counter()
import numpy as np
import embedeval
from embedeval._setlevel.verification import pair_verification
rng = np.random.default_rng(0)
x = rng.standard_normal((300, 16)).astype(np.float32)
y = rng.integers(0, 5, 300)
t1 = time.perf_counter()
if os.environ["EMBEDEVAL_KERNELS"] != "numpy":
    import numba
t2 = time.perf_counter()
call = pair_verification
if os.environ["BENCH_MODE"] == "deep":
    x = rng.standard_normal((2000, 16)).astype(np.float32)
    y = rng.integers(0, 2, 2000)
    call = lambda x, y: embedeval.evaluate(x, y, metrics=["r_precision", "map@r"], n_threads=1)
elif os.environ["BENCH_MODE"] == "ties":
    x = rng.standard_normal((1000, 16)).astype(np.float32)
    y = rng.integers(0, 20, 1000)
    call = lambda x, y: embedeval.evaluate(x, y, metrics=["r_precision", "map@r"], ties="expected", n_threads=1)
elif os.environ["BENCH_MODE"] == "large":
    x = rng.standard_normal((12000, 16)).astype(np.float32)
    y = np.where(np.arange(12000) < 6000, 0, rng.integers(1, 600, 12000))
    call = lambda x, y: embedeval.evaluate(x, y, metrics=["precision@1", "r_precision", "map@r"], n_threads=1)
call(x, y)
t3 = time.perf_counter()
call(x, y)
t4 = time.perf_counter()
kernels = os.environ["EMBEDEVAL_KERNELS"]
print(f"{kernels:6s} import numba {t2 - t1:.2f} s, first call {t3 - t2:.2f} s, second {t4 - t3:.2f} s")
"""

PLACE = """
import time
import numpy as np
t0 = time.perf_counter()
from embedeval._search import deep_kernels as kernels
t1 = time.perf_counter()
m, j = 4, 10
padded = np.full((m, j + 2), np.inf)
padded[:, 0] = -np.inf
padded[:, 1:-1] = np.sort(np.random.default_rng(0).random((m, j)), axis=1)
rest = (padded, np.full(m, j), np.full(m, np.nan), np.zeros(m), np.zeros((m, j + 1), np.int64),
        np.zeros(m, np.int64), np.empty((200, 3), np.int32))
rest += (kernels.new_tables(m, j),) if hasattr(kernels, "new_tables") else ()  # before the bucket tables: none
seconds = []
for dtype in (np.float32, np.float64):
    start = time.perf_counter()
    kernels.place_chunk(np.ones((m, 50), dtype), 0, 0, np.full(m, np.inf, dtype), *rest)
    seconds.append(time.perf_counter() - start)
print(f"import numba and the kernels {t1 - t0:.2f} s; place_chunk compiled for float32 {seconds[0]:.2f} s, "
      f"then float64 {seconds[1]:.2f} s")
"""

SWITCHED = """
import time
import numba
import numpy as np

@numba.njit
def warm(a):
    return a[0]

warm(np.ones(2))  # numba's own start-up, paid once per process
from embedeval._search import sort_kernels
from embedeval._metrics import hits_kernels
values, bound = np.random.default_rng(0).random((3, 50)), np.full(3, 0.5)
start = time.perf_counter()
sort_kernels.sorted_rows(values, np.empty((3, 50)), np.arange(3))
middle = time.perf_counter()
hits_kernels.within(values, bound)
hits_kernels.precision_sums(values, bound)
end = time.perf_counter()
print(f"radix sort compiled in {middle - start:.2f} s; the two Hits reductions in {end - middle:.2f} s")
"""

ROUTINES = """
import time
import numba
import numpy as np

@numba.njit
def warm(a):
    return a[0]

@numba.njit
def plain(a):
    for i in range(a.shape[0]):
        a[i] = 0
    return a

@numba.njit
def zeros(n):
    return np.zeros(n)

@numba.njit
def empty(n):
    return np.empty((n, n), dtype=np.int32)

@numba.njit
def full(n):
    return np.full((n, n), -1, dtype=np.int32)

@numba.njit
def slice_set(a):
    a[:] = 0
    return a

warm(np.ones(2))  # numba's own start-up, paid once per process
for name, f, arg in (("a loop writing zeros", plain, np.ones(3)), ("np.zeros(n)", zeros, 3),
                     ("np.empty((n, n), int32)", empty, 3), ("np.full((n, n), -1, int32)", full, 3),
                     ("a[:] = 0", slice_set, np.ones(3))):
    start = time.perf_counter()
    f(arg)
    print(f"a function with {name}: compiled in {time.perf_counter() - start:.3f} s")
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cold", action="store_true", help="remove the kernels' numba cache first")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--deep", action="store_true", help="a deep ranking instead of a verification")
    mode.add_argument("--ties", action="store_true", help='a tie-aware evaluate (ties="expected") instead')
    mode.add_argument("--large", action="store_true", help="a deep ranking that takes the radix sort instead")
    parser.add_argument("--place", action="store_true", help="the deep pass alone (empties its cache first)")
    parser.add_argument("--routines", action="store_true", help="compile time of tiny functions, one routine each")
    parser.add_argument(
        "--switched", action="store_true", help="the radix sort and Hits reductions alone, from an empty cache"
    )
    parser.add_argument("--root", default=ROOT, help="the checkout whose embedeval is timed (--place)")
    args = parser.parse_args()
    if args.routines:
        subprocess.run([sys.executable, "-c", ROUTINES], check=True)
        return
    if args.switched:
        empty_cache(ROOT, "sort_kernels", "hits_kernels")
        subprocess.run([sys.executable, "-c", SWITCHED], env=dict(os.environ, PYTHONPATH=ROOT), check=True)
        print(f"yardstick: a fixed pure-Python loop took {yardstick():.2f} s")
        return
    if args.place:
        root = args.root
        empty_cache(root, "deep_kernels")
        subprocess.run([sys.executable, "-c", PLACE], env=dict(os.environ, PYTHONPATH=root), check=True, cwd=root)
        return
    if args.cold:
        print(f"cache emptied: {empty_cache(ROOT)} files removed")
    mode = "deep" if args.deep else "ties" if args.ties else "large" if args.large else "verification"
    for kernels in ("auto", "numpy"):
        env = dict(os.environ, EMBEDEVAL_KERNELS=kernels, PYTHONPATH=ROOT, BENCH_MODE=mode)
        subprocess.run([sys.executable, "-c", PROGRAM], env=env, check=True)
    print(f"yardstick: a fixed pure-Python loop took {yardstick():.2f} s")


def empty_cache(root, *modules) -> int:
    """Remove numba's cached machine code of the kernel modules ``modules`` (every ``*_kernels``
    module by default) under ``root``'s embedeval; returns how many files went."""
    paths = [
        path
        for module in modules or ("*_kernels",)
        for path in glob.glob(os.path.join(root, "embedeval", "*", "__pycache__", f"{module}.*.nb[ic]"))
    ]
    for path in paths:
        os.remove(path)
    return len(paths)


def yardstick():
    """Seconds of a fixed pure-Python loop (best of three): the machine's speed at the time."""
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        total = 0
        for k in range(3_000_000):
            total += k % 7
        best = min(best, time.perf_counter() - start)
    return best


if __name__ == "__main__":
    main()
