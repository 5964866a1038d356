"""result.skipped is keyed by stable codes in every mode; the sentences are its reasons."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import embedeval

CODES = {"no_relevant", "relevant_ignored", "not_judged", "skipped"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 1000),
    mode=st.sampled_from(["leave-one-out", "gallery", "ignore_same", "own rows", "retrieval", "rankings"]),
)
def test_every_mode_counts_skips_under_stable_codes(seed, mode):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((12, 3)).astype(np.float32)
    y = rng.integers(0, 6, 12)
    if mode == "leave-one-out":
        r = embedeval.evaluate(x, y)
    elif mode == "gallery":
        r = embedeval.evaluate(x[:4], y[:4], reference=x[4:], reference_labels=y[4:])
    elif mode == "ignore_same":
        keys = rng.integers(0, 3, 12)
        r = embedeval.evaluate(x, y, ignore_same=(keys, keys))
    elif mode == "own rows":
        r = embedeval.evaluate(x[:4], y[:4], reference=x, reference_labels=y, query_in_reference=np.arange(4))
    elif mode == "retrieval":
        qrels = {i: {int(j): 1} for i, j in enumerate(rng.integers(0, 12, 3))}
        r = embedeval.evaluate_retrieval(
            x[:5], x, qrels=qrels, ignore={0: [qrels[0].popitem()[0]]} if seed % 2 else None
        )
    else:
        r = embedeval.evaluate_rankings([["a", "b"], ["c"]], [{"a"}, {"z"} if seed % 2 else set()], empty="skip")
    assert set(r.skipped) <= CODES, r.skipped
    assert set(r.skipped.reasons) == set(r.skipped)
    assert sum(r.skipped.values()) == r.n_skipped
    for code, text in r.skipped.reasons.items():
        assert r.skipped[text] == r.skipped[code]  # the sentence is still a key


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), multi=st.booleans())
def test_a_querys_skip_reason_does_not_depend_on_other_queries_rules(seed, multi):
    """A query whose label no other row shares is "no_relevant" in leave-one-out, with an ignore
    rule given for other queries only, and with its own row removed by query_in_reference; a
    query whose only classmate is ignored is "relevant_ignored"."""
    rng = np.random.default_rng(seed)
    n = 14
    x = rng.standard_normal((n, 3)).astype(np.float32)
    y = rng.integers(0, 6, n)
    y[0], y[1:3] = 99, 98  # row 0: a class of one; rows 1 and 2: a class of two
    labels = [{int(v)} for v in y] if multi else y
    ignore = [[] for _ in range(n)]
    ignore[1] = [2]  # row 1's only classmate ignored; no rule for row 0
    ignore[5] = [int(rng.integers(0, n))]
    runs = {
        "leave-one-out": embedeval.evaluate(x, labels, metrics=["map@r"]),
        "ignore others": embedeval.evaluate(x, labels, metrics=["map@r"], ignore=ignore),
        "own rows": embedeval.evaluate(
            x, labels, metrics=["map@r"], reference=x, reference_labels=labels, query_in_reference=np.arange(n)
        ),
        "own rows and ignore": embedeval.evaluate(
            x,
            labels,
            metrics=["map@r"],
            reference=x,
            reference_labels=labels,
            query_in_reference=np.arange(n),
            ignore=ignore,
        ),
    }
    for name, r in runs.items():
        assert list(r.skipped)[r.skip_codes[0]] == "no_relevant", name
    for name in ("ignore others", "own rows and ignore"):
        assert list(runs[name].skipped)[runs[name].skip_codes[1]] == "relevant_ignored", name
