"""A small JSON writer for the explorer's data: arrays as short numbers, safe inside a page.

:func:`json.dumps` writes every float with 17 digits and knows nothing of numpy; the explorer's
data is mostly long float arrays (per-query values), so they are written here with 6 significant
digits (what a page can show), NaN and infinities as ``null``, and the text is made safe to sit
inside a ``<script>`` element (no ``<`` survives, so neither ``</script>`` nor ``<!--`` can).
"""

from __future__ import annotations

import json
import math

import numpy as np


def _number(value: float) -> str:
    if not math.isfinite(value):
        return "null"
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return f"{value:.6g}"


def _array(values: np.ndarray) -> str:
    if values.dtype == bool:
        return "[" + ",".join("1" if v else "0" for v in values.ravel().tolist()) + "]"
    if values.dtype.kind in "iu":
        return "[" + ",".join(map(str, values.ravel().tolist())) + "]"
    if values.dtype.kind == "f":
        return "[" + ",".join(map(_number, values.ravel().tolist())) + "]"
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
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, np.ndarray):
        return _array(value)
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    return json.dumps(str(value), ensure_ascii=False)


def for_script(text: str) -> str:
    """JSON text that can sit inside ``<script type="application/json">``: every ``<`` escaped
    (JSON reads ``\\u003c`` as ``<``), and the line separators JavaScript once refused."""
    return text.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
