"""Relevance from class labels: one label per item, or a set of labels per item (multi-label).

* :class:`ClassLabels`: a reference is relevant when it has the query's label.
* :class:`MultiLabels`: a reference is relevant when it shares at least one label with the query.
  Items are grouped by their distinct label set, each set a bitset of label codes, so R is
  computed over (query set, reference set) pairs, never over (query, reference) pairs.

Both are binary. Each gives the search and the kernels the same things (see
:mod:`embedeval._relevance`): R before ignoring, the relevance of any (query, reference) pair,
the relevant references among those a key rule ignores, a reference side shipped once, and a
query part per block.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._core import budget as _budget
from .._core.csr import offsets_within
from .._inputs.arrays import encode_labels, holds_nan, label_kind
from .marked import Marked, csr_from_mask


class _LabelSource:
    """What the two label sources share: the relevant references that ignore rules remove."""

    graded = False
    threshold = None

    def relevant_ignored(self, rules) -> np.ndarray:
        """Per query, the relevant references that :class:`~embedeval._relevance.ignore.IgnoreRules`
        remove: those with the query's key, its own (leave-one-out), and those listed."""
        lost = np.zeros(rules.n_ignored.size, dtype=np.int64)
        if rules.query_keys is not None:
            lost += self.relevant_with_key(rules.query_keys, rules.reference_keys)
        own = np.flatnonzero(rules.own_only())
        lost[own] += self.pair_relevant(own, own)
        queries, references = rules.listed_pairs()
        lost += np.bincount(queries[self.pair_relevant(queries, references)], minlength=lost.size)
        return lost


@dataclass(frozen=True)
class CodePart:
    """A block's query labels (codes), relevant where a reference has the same code."""

    codes: np.ndarray

    def grades(self, reference_codes: np.ndarray, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        return reference_codes[idx] == self.codes[rows, None]

    def marked(self, _reference_codes, rows: np.ndarray, counts: np.ndarray, _gains, _threshold) -> Marked:
        """The deep ranking's view of the queries ``rows``: their class codes."""
        return Marked(counts, codes=self.codes[rows])


@dataclass(frozen=True)
class ClassLabels(_LabelSource):
    """One class label per item, coded (see :func:`embedeval._inputs.arrays.encode_labels`)."""

    classes: np.ndarray
    query_codes: np.ndarray
    reference_codes: np.ndarray

    @classmethod
    def from_labels(cls, query_labels: np.ndarray, reference_labels: np.ndarray | None = None) -> ClassLabels:
        """Leave-one-out labels without ``reference_labels``, else a query set and a gallery."""
        if reference_labels is None:
            classes, (codes,) = encode_labels(query_labels)
            return cls(classes, codes, codes)
        kinds = label_kind(query_labels), label_kind(reference_labels)
        if None not in kinds and kinds[0] != kinds[1]:
            raise ValueError(
                f"'labels' and 'reference_labels' must be labels of one kind: a {kinds[0]} never equals a "
                f"{kinds[1]} (1 != '1'), so no query would find its class; got {kinds[0]}s and {kinds[1]}s"
            )
        classes, (query_codes, reference_codes) = encode_labels(query_labels, reference_labels)
        return cls(classes, query_codes, reference_codes)

    @property
    def reference_side(self) -> np.ndarray:
        return self.reference_codes

    def query_part(self, rows: np.ndarray) -> CodePart:
        return CodePart(self.query_codes[rows])

    def n_relevant(self) -> np.ndarray:
        """R before ignoring: references with the query's label."""
        return np.bincount(self.reference_codes, minlength=self.classes.size)[self.query_codes]

    def pair_relevant(self, queries: np.ndarray, references: np.ndarray) -> np.ndarray:
        return self.query_codes[queries] == self.reference_codes[references]

    def relevant_with_key(self, query_keys: np.ndarray, reference_keys: np.ndarray) -> np.ndarray:
        """Per query, the references that have both its key and its label."""
        n_classes = np.int64(self.classes.size)
        joint, counts = np.unique(reference_keys * n_classes + self.reference_codes, return_counts=True)
        wanted = query_keys * n_classes + self.query_codes
        pos = np.minimum(np.searchsorted(joint, wanted), joint.size - 1)
        return np.where(joint[pos] == wanted, counts[pos], 0)


def _intersect(bits: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether label sets ``a`` and ``b`` (group codes, broadcastable) share a label."""
    out = np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=bool)
    for w in range(bits.shape[1]):
        column = bits[:, w]
        out |= (column[a] & column[b]) != 0
    return out


@dataclass(frozen=True)
class GroupPart:
    """A block's query label sets (group codes), relevant where a reference's set meets them."""

    groups: np.ndarray

    def grades(self, reference_side, rows: np.ndarray, idx: np.ndarray) -> np.ndarray:
        reference_groups, bits = reference_side
        return _intersect(bits, self.groups[rows, None], reference_groups[idx])

    def marked(self, reference_side, rows: np.ndarray, counts: np.ndarray, _gains, _threshold) -> Marked:
        """The deep ranking's view of the queries ``rows``: the references sharing a label, listed
        (a (queries x references) mask of the rows the ranker asks for at once)."""
        reference_groups, bits = reference_side

        def lister(local):
            mask = _intersect(bits, self.groups[rows[local], None], reference_groups[None, :])
            return (*csr_from_mask(mask), None)

        return Marked(counts, lister=lister)


@dataclass(frozen=True)
class MultiLabels(_LabelSource):
    """A set of labels per item, grouped by distinct set.

    Attributes
    ----------
    labels : list
        The distinct labels; bit j of a set stands for ``labels[j]``.
    bits : numpy.ndarray of shape (n_sets, n_words), uint64
        Each distinct label set as a bitset.
    query_groups, reference_groups : numpy.ndarray of shape (n_queries,) and (n_references,), int64
        The distinct set of each item.
    """

    labels: list
    bits: np.ndarray
    query_groups: np.ndarray
    reference_groups: np.ndarray

    @property
    def reference_side(self):
        return (self.reference_groups, self.bits)

    def query_part(self, rows: np.ndarray) -> GroupPart:
        return GroupPart(self.query_groups[rows])

    def n_relevant(self) -> np.ndarray:
        """R before ignoring: references sharing a label with the query, counted set by set."""
        ref_sets, ref_counts = np.unique(self.reference_groups, return_counts=True)
        query_sets, inverse = np.unique(self.query_groups, return_inverse=True)
        per_set = np.empty(query_sets.size, dtype=np.int64)
        step = max(1, _budget.RANKING_ELEMENTS // max(ref_sets.size, 1))
        for s in range(0, query_sets.size, step):
            meets = _intersect(self.bits, query_sets[s : s + step, None], ref_sets[None, :])
            per_set[s : s + step] = np.where(meets, ref_counts, 0).sum(axis=1)
        return per_set[inverse.reshape(-1)]

    def pair_relevant(self, queries: np.ndarray, references: np.ndarray) -> np.ndarray:
        return _intersect(self.bits, self.query_groups[queries], self.reference_groups[references])

    def relevant_with_key(self, query_keys: np.ndarray, reference_keys: np.ndarray) -> np.ndarray:
        """Per query, the references that have its key and share a label with it.

        References are grouped by (key, set) and queries by (key, set); each query group meets
        only the reference groups of its key, in chunks that bound memory.
        """
        n_sets = np.int64(self.bits.shape[0])
        pairs, pair_counts = np.unique(reference_keys * n_sets + self.reference_groups, return_counts=True)
        pair_keys, pair_sets = pairs // n_sets, pairs % n_sets
        wanted, inverse = np.unique(query_keys * n_sets + self.query_groups, return_inverse=True)
        want_keys, want_sets = wanted // n_sets, wanted % n_sets
        first = np.searchsorted(pair_keys, want_keys, side="left")
        lengths = np.searchsorted(pair_keys, want_keys, side="right") - first
        out = np.zeros(wanted.size, dtype=np.int64)
        step = max(1, _budget.RANKING_ELEMENTS // max(int(lengths.max(initial=1)), 1))
        for s in range(0, wanted.size, step):
            n = lengths[s : s + step]
            owner = np.repeat(np.arange(n.size), n)
            at = np.repeat(first[s : s + step], n) + offsets_within(n)
            meets = _intersect(self.bits, want_sets[s : s + step][owner], pair_sets[at])
            out[s : s + step] = np.bincount(owner, weights=np.where(meets, pair_counts[at], 0), minlength=n.size)
        return out[inverse.reshape(-1)]


def multilabel_kind(value):
    """("indicator", array), ("sets", list) or None: whether ``value`` holds label sets.

    A 2-D boolean array is an indicator (n, n_labels); a sequence (or object array) holding
    sets, frozensets or lists holds label sets. Tuples are single (hashable) labels.
    """
    if isinstance(value, (str, bytes)):
        return None
    if hasattr(value, "detach") or (hasattr(value, "__array__") and not isinstance(value, (list, tuple))):
        from .._inputs.arrays import _to_numpy

        arr = _to_numpy(value, "labels")
        if arr.ndim == 2 and arr.dtype == bool:
            return "indicator", arr
        if arr.dtype != object or arr.ndim != 1:
            return None
        value = arr.tolist()
    if not isinstance(value, (list, tuple)):
        return None
    if any(isinstance(v, (set, frozenset, list)) for v in value):
        return "sets", list(value)
    return None


def _sets_of(kind, value, name: str) -> list:
    """Label sets as Python frozensets, checked: every item a non-empty collection of hashables."""
    if kind == "indicator":
        return [frozenset(np.flatnonzero(row).tolist()) for row in value]
    if kind == "single":
        return [frozenset((v,)) for v in value.tolist()]
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, (set, frozenset, list)):
            raise TypeError(
                f"'{name}' mixes label sets with single labels: item {i} is {item!r}; give every item a set "
                f"of labels, e.g. {{{item!r}}}"
            )
        try:
            labels = frozenset(item)
        except TypeError:
            raise TypeError(f"'{name}' item {i} holds an unhashable label: {item!r}") from None
        if any(holds_nan(label) for label in labels):
            raise ValueError(
                f"'{name}' item {i} holds NaN (alone or inside a tuple): NaN equals nothing, so it names no "
                f"label; got {item!r:.80}"
            )
        out.append(labels)
    return out


def _check_not_empty(kind, value, name: str) -> None:
    if kind == "indicator":
        empty = np.flatnonzero(~value.any(axis=1))
        first = int(empty[0]) if empty.size else None
    else:
        first = next((i for i, item in enumerate(value) if len(item) == 0), None)
    if first is not None:
        raise ValueError(
            f"'{name}' item {first} is an empty label set; every item needs at least one label "
            "(drop the item, or give it a label of its own)"
        )


def _indicator_bits(indicators: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of the stacked boolean indicators as bitsets, and each row's group."""
    packed = np.packbits(np.concatenate(indicators), axis=1, bitorder="little")
    words = -(-packed.shape[1] // 8)
    padded = np.zeros((packed.shape[0], words * 8), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    bits, groups = np.unique(padded.view("<u8"), axis=0, return_inverse=True)
    return np.ascontiguousarray(bits, dtype=np.uint64), groups.reshape(-1).astype(np.int64)


def _set_bits(sets: list) -> tuple[list, np.ndarray, np.ndarray]:
    """Labels, bitsets of the distinct sets, and each item's group, from Python label sets."""
    codes: dict = {}
    groups: dict = {}
    item_groups = np.fromiter(
        (groups.setdefault(frozenset(codes.setdefault(v, len(codes)) for v in s), len(groups)) for s in sets),
        dtype=np.int64,
        count=len(sets),
    )
    bits = np.zeros((len(groups), max(1, -(-len(codes) // 64))), dtype=np.uint64)
    for members, g in groups.items():
        for c in members:
            bits[g, c // 64] |= np.uint64(1) << np.uint64(c % 64)
    return list(codes), bits, item_groups


def read_multilabels(query_kind, query_value, reference_kind, reference_value, names) -> MultiLabels:
    """MultiLabels from two sides, each ("indicator" | "sets" | "single", value); the reference side
    may be None (leave-one-out). Single labels on one side become sets of one label."""
    sides = [(query_kind, query_value, names[0])]
    if reference_kind is not None:
        sides.append((reference_kind, reference_value, names[1]))
    sides = [(kind, _sets_of(kind, value, name) if kind == "sets" else value, name) for kind, value, name in sides]
    for kind, value, name in sides:
        if kind != "single":
            _check_not_empty(kind, value, name)
    if all(kind == "indicator" for kind, _, _ in sides):
        widths = {value.shape[1] for _, value, _ in sides}
        if len(widths) > 1:
            raise ValueError(
                f"'{names[1]}' must have the {query_value.shape[1]} label columns of '{names[0]}'; "
                f"got {reference_value.shape[1]}"
            )
        bits, groups = _indicator_bits([value for _, value, _ in sides])
        labels = list(range(query_value.shape[1]))
    else:
        sets = [s for kind, value, name in sides for s in (value if kind == "sets" else _sets_of(kind, value, name))]
        labels, bits, groups = _set_bits(sets)
    n_queries = len(query_value)
    reference_groups = groups if reference_kind is None else groups[n_queries:]
    return MultiLabels(labels, bits, groups[:n_queries], reference_groups)
