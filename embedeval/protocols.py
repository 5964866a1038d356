"""Evaluation protocols that decide relevance from a dataset's own annotation.

:func:`revisited` turns revisited Oxford / Paris ground truth (per query: easy, hard and junk
images) into the positives and the ignored images of its Easy, Medium or Hard protocol, in the
form :func:`embedeval.evaluate_retrieval` takes::

    qrels, ignore = embedeval.protocols.revisited(cfg["gnd"], "medium")
    result = embedeval.evaluate_retrieval(
        Q, X, qrels, ignore=ignore, distance="inner_product",
        metrics=["revisited_map", "revisited_mp@1", "revisited_mp@5", "revisited_mp@10"],
    )
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

# protocol -> (lists that are positives, lists that are ignored), as Radenovic et al. 2018 define them
REVISITED = {
    "easy": (("easy",), ("junk", "hard")),
    "medium": (("easy", "hard"), ("junk",)),
    "hard": (("hard",), ("junk", "easy")),
}


def _positions(entry: Mapping, key: str, query: int) -> list[int]:
    """The non-negative integer positions listed under ``key`` (1.7 is refused, not truncated; an
    integral float such as 3.0, as MATLAB-converted files hold, is position 3)."""
    values = entry.get(key, ())
    try:
        flat = np.asarray(values).reshape(-1).tolist()
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v) or v < 0 for v in flat):
            raise ValueError
        return [int(v) for v in flat]
    except (TypeError, ValueError, OverflowError):
        raise ValueError(
            f"'gnd' entry {query} must list database positions (integers >= 0) under {key!r}; got {values!r:.80}"
        ) from None


def revisited(gnd: Sequence[Mapping], protocol: str) -> tuple[dict, dict]:
    """Positives and ignored images of revisited Oxford / Paris for one protocol.

    Parameters
    ----------
    gnd : sequence of mapping
        One mapping per query with lists of database positions under ``"easy"``, ``"hard"`` and
        ``"junk"`` (a missing list is empty): the ``gnd`` of the datasets' ``gnd_roxford5k.pkl``
        and ``gnd_rparis6k.pkl``.
    protocol : {"easy", "medium", "hard"}
        Easy: easy images are positives, hard and junk ones are ignored. Medium: easy and hard are
        positives, junk is ignored. Hard: hard images are positives, easy and junk are ignored.

    Returns
    -------
    qrels : dict
        ``{query position: {database position: 1}}`` for every query (empty when it has no
        positive under the protocol: such a query is skipped, as the protocol skips it).
    ignore : dict
        ``{query position: [database positions]}``: images that take no rank and do not count.

    Examples
    --------
    >>> gnd = [{"easy": [0], "hard": [2], "junk": [1]}]
    >>> revisited(gnd, "hard")
    ({0: {2: 1}}, {0: [1, 0]})
    """
    if protocol not in REVISITED:
        raise ValueError(f"'protocol' must be one of {', '.join(map(repr, REVISITED))}; got {protocol!r}")
    if isinstance(gnd, (str, bytes, Mapping)) or not isinstance(gnd, Sequence):
        raise TypeError(f"'gnd' must be a sequence with one mapping per query; got {type(gnd).__name__}")
    positives, ignored = REVISITED[protocol]
    qrels, ignore = {}, {}
    for i, entry in enumerate(gnd):
        if not isinstance(entry, Mapping):
            raise TypeError(f"'gnd' entry {i} must be a mapping with 'easy', 'hard' and 'junk'; got {entry!r}")
        qrels[i] = {j: 1 for key in positives for j in _positions(entry, key, i)}
        ignore[i] = [j for key in ignored for j in _positions(entry, key, i)]
    return qrels, ignore
