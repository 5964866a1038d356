"""The switches and budgets live in one table, ``_core/budget.py``: the values the modules kept
before they moved there, no second copy left behind, and the modules reading the table."""

import importlib

import pytest

from embedeval._core import budget
from embedeval._search import deep_merged

# Each constant moved into the table, with the module it lived in and its name and value there.
MOVED = [
    ("embedeval._search.float64", "EXACT_COMPILED_FROM", "EXACT_COMPILED_FROM", 1 << 28),
    ("embedeval._search.deep_count", "SORT_COMPILED_FROM", "SORT_COMPILED_FROM", 1 << 25),
    ("embedeval._search.deep_count", "SORT_CACHED_FROM", "SORT_CACHED_FROM", 1 << 16),
    ("embedeval._search.deep_count", "PARTITION_BELOW", "SORT_PARTITION_BELOW", 0.7),
    ("embedeval._search.deep_count", "PARTITION_BELOW_RADIX", "SORT_PARTITION_BELOW_RADIX", 0.1),
    ("embedeval._search.deep_count", "SEARCH_FROM", "DEEP_SEARCH_FROM", 8192),
    ("embedeval._search.tied_scan", "BOOKS_COMPILED_FROM", "BOOKS_COMPILED_FROM", 1 << 23),
    ("embedeval._search.tied_scan", "BOOKS_CACHED_FROM", "BOOKS_CACHED_FROM", 1 << 12),
    ("embedeval._search.tied_scan", "BUCKETS_PER_WINDOW", "TIED_BUCKETS_PER_WINDOW", 16),
    ("embedeval._search.tied_scan", "MAX_BUCKETS", "TIED_MAX_BUCKETS", 1 << 13),
    ("embedeval._metrics.kernels", "HITS_COMPILED_FROM", "HITS_COMPILED_FROM", 1 << 25),
    ("embedeval._search.deep_merged", "MERGED_FROM", "MERGED_FROM", 1024),
    ("embedeval._search.deep_merged", "MERGED_FROM_WIDE", "MERGED_FROM_WIDE", 4096),
    ("embedeval._search.deep_merged", "NARROW_DIM", "MERGED_NARROW_DIM", 128),
    ("embedeval._search.deep_merged", "ROOM", "MERGED_ROOM", 256),
    ("embedeval._search.deep_merged", "WIDEN_COLUMNS", "WIDEN_COLUMNS", 6.0),
    ("embedeval._search.deep_merged", "GUESS_COMPARISONS", "GUESS_COMPARISONS", 50.0),
    ("embedeval._search.flat", "CENTRE_FROM", "CENTRE_FROM", 0.25),
    ("embedeval._search.flat", "DEEP_CENTRED_FROM", "DEEP_CENTRED_FROM", 0.25),
    ("embedeval._search.duplicates", "DISTINCT_SHARE", "DISTINCT_SHARE", 0.5),
    ("embedeval._search.duplicates", "HASH_BLOCK", "HASH_BLOCK", 1 << 20),
]
# Switches that were in the table already, with their values.
KEPT = {
    "DEEP_FROM": 512,
    "DEEP_FROM_COMPILED": 150,
    "DEEP_REACHED_COMPILED_FROM": 1 << 14,
    "DEEP_FUSED_COMPILED_FROM": 1 << 27,
}


@pytest.mark.parametrize(("module", "old", "name", "value"), MOVED)
def test_moved_constant_keeps_its_value_and_one_place(module, old, name, value):
    assert getattr(budget, name) == value
    assert not hasattr(importlib.import_module(module), old), f"{module}.{old} would be a second copy"


def test_switches_already_in_the_table_keep_their_values():
    assert {name: getattr(budget, name) for name in KEPT} == KEPT


def test_every_switch_is_in_the_table_docstring():
    chunks = ("TIED_BUCKETS_PER_WINDOW", "TIED_MAX_BUCKETS", "HASH_BLOCK")  # sizes, not switches
    for name in [name for _, _, name, _ in MOVED if name not in chunks] + list(KEPT):
        assert f"``{name}``" in budget.__doc__, name


def test_modules_read_the_table(monkeypatch):
    monkeypatch.setattr(budget, "MERGED_FROM", 7)
    monkeypatch.setattr(budget, "MERGED_FROM_WIDE", 9)
    assert deep_merged.switch(budget.MERGED_NARROW_DIM) == 7
    assert deep_merged.switch(budget.MERGED_NARROW_DIM + 1) == 9
