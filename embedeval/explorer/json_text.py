"""A small JSON writer for the explorer's data: arrays as short numbers, safe inside a page.

:func:`json.dumps` writes every float with 17 digits and knows nothing of numpy; the explorer's
data is mostly long float arrays (per-query values, distances). Their numbers are written short,
but never shorter than what the page draws from them needs (:func:`_array_numbers`): the page
shows a number with 2, 3 or 4 decimals (10 significant digits from 1e6 on), and it shows the
value's own digits, not those of a rounded copy. Single numbers (summaries, tests) are written
exactly (the shortest text that reads back to the same float64). NaN and infinities are
``null``. The text is made safe to sit inside a ``<script>`` element (no ``<`` survives, so
neither ``</script>`` nor ``<!--`` can), and text that cannot be written as UTF-8 (lone
surrogates, as ``surrogateescape`` decodes bytes that are not UTF-8) is shown by :func:`readable`.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np

SHORT_DIGITS = 6  # the fewest significant digits written
DRAWN_DECIMALS = (2, 3, 4)  # the decimals the page draws numbers with (explorer.js, fmt)
LARGE = 1e6  # from here on the page draws 10 significant digits instead (explorer.js, fmt)
TIE_MARGIN = 1e-3  # a value within this many units of the last decimal drawn from a half: written exactly


def readable(text: str) -> str:
    """``text`` as UTF-8 can write it: a lone surrogate that stands for a byte that is not UTF-8
    (U+DC80..U+DCFF, as ``surrogateescape`` decodes one) becomes ``\\xNN`` (that byte), any
    other ``\\udNNN``."""
    return _SURROGATE.sub(_escaped, text)


_SURROGATE = re.compile("[\ud800-\udfff]")


def _escaped(found: re.Match) -> str:
    code = ord(found.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"\\u{code:04x}"


def _string(text: str) -> str:
    return json.dumps(readable(text), ensure_ascii=False)


def _number(value: float) -> str:
    """One number, exactly: an integer as an integer, else the shortest text of the same float64."""
    if not math.isfinite(value):
        return "null"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(value)


def _risky(values: np.ndarray, stored: np.ndarray) -> np.ndarray:
    """Where the page could draw ``stored`` with other digits than ``values``: a different
    rounding at any of :data:`DRAWN_DECIMALS`, a value or its stored copy near a half of the last
    decimal drawn (rounding the copy may go the other way, and the page's rounding and Python's
    part there), or a value too large for fixed decimals."""
    with np.errstate(invalid="ignore", over="ignore"):
        risky = ~(np.abs(values) < LARGE)
        for decimals in DRAWN_DECIMALS:
            scaled, back = np.abs(values) * 10.0**decimals, np.abs(stored) * 10.0**decimals
            near_half = np.abs(scaled - np.floor(scaled) - 0.5) < TIE_MARGIN
            stored_half = np.abs(back - np.floor(back) - 0.5) < TIE_MARGIN
            risky |= near_half | stored_half | (np.floor(scaled + 0.5) != np.floor(back + 0.5))
    return risky


def _array_numbers(values: np.ndarray) -> list[str]:
    """The texts of a float array: each with the significant digits that keep 2 more decimals
    than the page draws (at least :data:`SHORT_DIGITS`, at most 12), where the page draws that
    text as it draws the value itself (:func:`_risky`), else the exact text."""
    values = values.astype(np.float64, copy=False).ravel()
    finite = np.isfinite(values)
    whole = finite & (values == np.round(values)) & (np.abs(values) < 1e15)
    with np.errstate(divide="ignore", invalid="ignore"):
        digits = np.floor(np.log10(np.abs(values))) + 1 + max(DRAWN_DECIMALS) + 2
    digits = np.clip(np.nan_to_num(digits, nan=SHORT_DIGITS, neginf=SHORT_DIGITS), SHORT_DIGITS, 12).astype(int)
    texts = [""] * values.size
    for d in np.unique(digits).tolist():
        at = np.flatnonzero(digits == d)
        for i, text in zip(at.tolist(), map(f"{{:.{d}g}}".format, values[at].tolist()), strict=True):
            texts[i] = text
    for i in np.flatnonzero(~finite).tolist():
        texts[i] = "null"
    for i in np.flatnonzero(whole).tolist():
        texts[i] = str(int(values[i]))
    open_ = np.flatnonzero(finite & ~whole)
    if open_.size:
        stored = np.array([texts[i] for i in open_.tolist()], dtype=np.float64)
        for i in open_[_risky(values[open_], stored)].tolist():
            texts[i] = repr(float(values[i]))
    return texts


def _array(values: np.ndarray) -> str:
    if values.dtype == bool:
        return "[" + ",".join("1" if v else "0" for v in values.ravel().tolist()) + "]"
    if values.dtype.kind in "iu":
        return "[" + ",".join(map(str, values.ravel().tolist())) + "]"
    if values.dtype.kind == "f":
        return "[" + ",".join(_array_numbers(values)) + "]"
    return "[" + ",".join(dumps(v) for v in values.ravel().tolist()) + "]"


def dumps(value) -> str:
    """JSON text of ``value``: dicts (keys made strings), lists, tuples, strings, numbers, bools,
    None and numpy arrays (flattened: give 1-D ones, or lists of them) and scalars."""
    if value is None or isinstance(value, (bool, np.bool_)):
        return {None: "null", True: "true", False: "false"}[None if value is None else bool(value)]
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        return _number(float(value))
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, np.ndarray):
        return _array(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{_string(str(k))}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return _string(str(value))


def for_script(text: str) -> str:
    """JSON text that can sit inside ``<script type="application/json">``: every ``<`` escaped
    (JSON reads ``\\u003c`` as ``<``), and the line separators JavaScript once refused."""
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
