"""The lines under a table of bootstrap intervals: which intervals are not meaningful (too few
queries resampled), and which metrics have none, and why."""

from __future__ import annotations

from .set_families import no_interval_reasons as _no_interval_reasons


def interval_caveat(intervals: dict | None) -> str | None:
    """The line under a table whose intervals are not meaningful (too few queries resampled):
    each such interval's ``caveat``, once, with the metrics it concerns."""
    caveats: dict[str, list[str]] = {}
    for name, interval in (intervals or {}).items():
        if getattr(interval, "caveat", None):
            caveats.setdefault(interval.caveat, []).append(name)
    if not caveats:
        return None
    return "; ".join(f"intervals of {', '.join(names)}: {why}" for why, names in caveats.items())


def interval_note(result, intervals: dict | None) -> str | None:
    """The line under a table with intervals that says which metrics have none, and why."""
    missing = [name for name in result.summary if intervals and name not in intervals]
    if not missing:
        return None
    reasons = _no_interval_reasons(missing)
    return "no interval for " + "; ".join(f"{', '.join(names)}: {why}" for why, names in reasons.items())
