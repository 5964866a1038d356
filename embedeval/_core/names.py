"""Keys that every experiment logger accepts: what ``EvaluationResult.to_dict(names="safe")`` gives.

MLflow, the strictest of the common loggers, accepts metric names made of letters, digits,
``_``, ``-``, ``.``, space and ``/`` (and, except on Windows, ``:``), whose path form is
already normal (no empty, ``.`` or ``..`` part, no leading ``/``). embedeval's names use ``@``
(``map@r``, ``ndcg@10``) and ``=`` (``tar@far=0.001``). :func:`safe_key` maps a key into the
allowed characters: ``@`` -> ``_at_`` (as MTEB spells ``ndcg_at_10``), ``=`` -> ``_``, any other
character -> ``_``; a leading or trailing ``/`` is dropped, an empty path part inside becomes
``_``, a ``.`` or ``..`` part ``_`` or ``__``. :func:`safe_keys` maps a whole dict and refuses
two keys that would become one.
"""

from __future__ import annotations

import re

_REPLACED = {"@": "_at_", "=": "_"}
_ALLOWED = re.compile(r"[\w.\- ]")  # inside a path part; "/" separates parts


def _safe_part(part: str) -> str:
    text = "".join(c if _ALLOWED.fullmatch(c) else _REPLACED.get(c, "_") for c in part)
    return "_" * len(text) if text in (".", "..") else text


def safe_key(key: str) -> str:
    """``key`` in the characters every logger accepts (``val/map@r`` -> ``val/map_at_r``)."""
    parts = str(key).strip("/").split("/")  # a leading or trailing "/" goes; an empty part inside is "_"
    return "/".join(_safe_part(p) or "_" for p in parts)


def safe_keys(flat: dict) -> dict:
    """``{safe_key(k): v}``, in the same order; ValueError naming both keys if two become one."""
    out: dict = {}
    source: dict = {}
    for key, value in flat.items():
        new = safe_key(key)
        if new in source:
            raise ValueError(
                f"names='safe': keys {source[new]!r} and {key!r} both become {new!r}; rename one "
                "(a group name, or the prefix)"
            )
        source[new] = key
        out[new] = value
    return out
