"""A row's bucket table (:mod:`.primitives`) over its sorted relevant values, and the placement
of values through it, for the deep pass (:mod:`.deep_kernels`; numba, imported only when
:func:`embedeval._core.compiled.enabled`). A row fills its table once it has placed enough
values to repay it.
"""

from __future__ import annotations

import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._core.compiled import kernel_numba
from .._core.intrinsics import Vectors, compresses
from .primitives import bucket, count_at_most, fill_table, near_tie, span_inverse, table_size

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

# Values placed at once by _places_block: 8 lanes of float64 (a 64-byte vector).
LANES = 8

# A row's ``state`` in :func:`new_tables` once it stops counting its binary searches (>= 0).
TABLE_FILLED, NO_TABLE = -1, -2


def new_tables(m, n_nearest):
    """Empty bucket tables for ``m`` padded rows of ``n_nearest`` values (filled by
    :func:`place_chunk` where they pay): (table (m, n_buckets + 1) int32, info (m, 3) float64,
    state (m,) int64: binary searches so far, :data:`TABLE_FILLED` once the row's table is filled,
    :data:`NO_TABLE` where it cannot be). ``n_buckets``: a power of two, at least 16 and
    ``n_nearest``. ``np.empty``: the pages of rows never filled are never touched."""
    n_buckets = table_size.py_func(n_nearest)
    return np.empty((m, n_buckets + 1), np.int32), np.empty((m, 3)), np.zeros(m, np.int64)


@numba.njit(nogil=True)
def _fill_table(row, n_nearest, table, info):  # pragma: no cover
    """The bucket table of the row's finite values (:func:`.primitives.fill_table`: ``table[k]``
    = how many lie in buckets before k, ``table[-1]``: all of them) and ``info`` = (first, last,
    1 / width). Returns False where no such buckets exist (no finite value, one value repeated,
    a span that overflows)."""
    n_fin = n_nearest
    while n_fin > 0 and not row[n_fin] < np.inf:  # row[k + 1] holds value k; +inf values last
        n_fin -= 1
    if n_fin == 0:
        return False
    first, last = row[1], row[n_fin]
    inverse = span_inverse(first, last, table.shape[0] - 1)
    if inverse == 0.0:
        return False
    fill_table(row[1 : n_fin + 1], first, inverse, table)
    info[0], info[1], info[2] = first, last, inverse
    return True


@numba.njit(inline="always")
def _table_place(row, v, table, k):  # pragma: no cover
    """The place of v (in bucket k of the row's filled ``table``) among the row's values."""
    low, high = table[k], table[k + 1]
    if high - low > 8:  # a crowded bucket (duplicates): a binary search within it
        return count_at_most(row, low + 1, high + 1, v) - 1
    while row[low + 1] <= v:  # a few values: a scan (the value after the bucket is above v)
        low += 1
    return low


@numba.njit(nogil=True)
def _place_tabled(
    values, listed, start, n_within, row, table, counts, top, t, win, info, i, c0, out, n_out
):  # pragma: no cover
    """Place the listed values ``start:n_within`` of row i (``listed[0]``: their columns in
    ``values``; ``listed[1]``: scratch), whose ``table`` is filled (``info``: its first, last and
    1 / width; ``counts``: the row's), as a binary search places them: ``counts[min(p, top)] += 1``
    for each place p, and (row i, column ``c0`` + c, p) written to ``out`` from ``n_out`` for each
    near-tie (within ``win`` of the row value on either side). Returns (how many of the values
    are <= t, ``n_out``).

    Two loops, so that the first has no branch that mispredicts and the processor overlaps the
    values' loads (in a function of its own, not inlined: the caller's registers are all taken;
    unsigned indices: no test for a negative one). The first gives each value the place that
    its bucket and the bucket's first two row values give (:func:`_table_place`'s; after every
    relevant value: ``n_fin``; +inf: every row value, as the binary search), and marks those of
    buckets holding more; the second places those by :func:`_table_place`, counts every value
    and writes the near-ties. Where the target has AVX-512, the first loop takes ``LANES``
    values at a time (:func:`_places_block`: the same comparisons in vectors, the loads
    gathered), the last few one at a time.
    """
    first, last, inverse = info[0], info[1], info[2]
    n_buckets = table.shape[0] - 1
    n_fin = np.int64(table[n_buckets])
    top_bucket = np.float64(n_buckets - 1)
    end = row.shape[0] - 1  # the +inf after the row's values
    columns, places = listed[0], listed[1]
    n_below = 0
    rest = start
    if compresses():  # AVX-512: LANES values at once, their loads gathered
        while rest + LANES <= n_within:
            _places_block(values, columns, places, rest, table, row, first, last, inverse, top_bucket, n_fin)
            rest += LANES
    for q in range(rest, n_within):
        v = np.float64(values[np.uint64(columns[q])])
        k = np.uint64(bucket(v, first, inverse, top_bucket))
        low, high = np.int64(table[k]), np.int64(table[k + np.uint64(1)])
        p = low + ((low < high) & (row[np.uint64(low + 1)] <= v))  # low <= n_fin: in the row
        p += (low + 2 <= high) & (row[np.uint64(min(low + 2, high))] <= v)
        p = n_fin if v >= last else p
        p = p if v < np.inf else end - 1
        places[q] = -1 if (high - low > 2) & (v < last) else p
    for q in range(start, n_within):
        p = np.int64(places[q])
        v = np.float64(values[np.uint64(columns[q])])
        n_below += v <= t
        if p < 0:  # a crowded bucket
            p = _table_place(row, v, table, bucket(v, first, inverse, top_bucket))
        counts[np.uint64(min(p, top))] += 1
        if near_tie(v, row[np.uint64(p)], row[np.uint64(p + 1)], win):
            out[n_out, 0], out[n_out, 1], out[n_out, 2] = i, c0 + columns[q], p
            n_out += 1
    return n_below, n_out


@intrinsic
def _places_block(
    typingctx, values, columns, places, q, table, row, first, last, inverse, top_bucket, n_fin
):  # pragma: no cover - compiled
    """The first loop of :func:`_place_tabled` for its values ``q:q + LANES``, in vectors: the
    same comparisons, in the same precision, of the same values, each value a lane (the loads of
    ``values``, ``table`` and ``row`` at each lane's index gathered: LLVM's ``masked.gather``)."""
    arrays = (values, columns, places, table, row)
    if not all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" for a in arrays):
        return None
    if values.dtype not in (types.float32, types.float64) or row.dtype != types.float64:
        return None
    if not (columns.dtype == places.dtype == table.dtype == types.int32 and isinstance(q, types.Integer)):
        return None
    signature = types.void(values, columns, places, q, table, row, first, last, inverse, top_bucket, n_fin)

    def codegen(context, builder, sig, args):
        vector = Vectors(context, builder, LANES)
        values_t, columns_t, places_t, q_t, table_t, row_t = sig.args[:6]
        at = context.cast(builder, args[3], q_t, types.intp)
        first, last, inverse, top_bucket = (
            vector.splat(context.cast(builder, a, t, types.float64))
            for a, t in zip(args[6:10], sig.args[6:10], strict=True)
        )
        n_fin = vector.splat(builder.trunc(context.cast(builder, args[10], sig.args[10], types.int64), vector.i32))
        row_view = context.make_array(row_t)(context, builder, args[5])
        n_row = cgutils.unpack_tuple(builder, row_view.shape, 1)[0]
        n_nearest = vector.splat(builder.trunc(builder.sub(n_row, n_row.type(2)), vector.i32))
        columns = builder.load(vector.pointer(columns_t, args[1], at, vector.vi32), align=4)
        v = vector.gather(values_t, args[0], columns)
        if values_t.dtype == types.float32:
            v = builder.fpext(v, vector.vf64)
        one, two = vector.vi32([1] * LANES), vector.vi32([2] * LANES)
        k = vector.bucket(v, first, inverse, top_bucket)
        low, high = vector.gather(table_t, args[4], k), vector.gather(table_t, args[4], builder.add(k, one))
        second = builder.add(low, two)
        second_ok = builder.icmp_signed("<=", second, high)
        first_row = vector.gather(row_t, args[5], builder.add(low, one))  # low <= n_fin: in the row
        second_row = vector.gather(row_t, args[5], builder.select(second_ok, second, high))
        p = builder.add(
            low,
            builder.zext(
                builder.and_(builder.icmp_signed("<", low, high), builder.fcmp_ordered("<=", first_row, v)), vector.vi32
            ),
        )
        p = builder.add(
            p, builder.zext(builder.and_(second_ok, builder.fcmp_ordered("<=", second_row, v)), vector.vi32)
        )
        p = builder.select(builder.fcmp_ordered(">=", v, last), n_fin, p)
        p = builder.select(builder.fcmp_ordered("<", v, vector.vf64([float("inf")] * LANES)), p, n_nearest)
        crowded = builder.and_(
            builder.icmp_signed(">", builder.sub(high, low), two), builder.fcmp_ordered("<", v, last)
        )
        p = builder.select(crowded, vector.vi32([-1] * LANES), p)
        builder.store(p, vector.pointer(places_t, args[2], at, vector.vi32), align=4)
        return context.get_dummy_value()

    return signature, codegen
