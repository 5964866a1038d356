"""Helpers shared by the benchmark scripts (run as `python bench/<script>.py`)."""

from __future__ import annotations

import time


def timed(fn):
    """(seconds, result) of one call."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def best_of(repeat: int, fn):
    """(fastest seconds, last result) over ``repeat`` calls."""
    runs = [timed(fn) for _ in range(repeat)]
    return min(t for t, _ in runs), runs[-1][1]


def summary_line(summary: dict[str, float]) -> str:
    return ", ".join(f"{k}={v:.4f}" for k, v in summary.items())
