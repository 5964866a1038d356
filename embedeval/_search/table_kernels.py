"""A row's bucket table, for the deep pass (:mod:`.deep_kernels`; numba, imported only when
:func:`embedeval._core.compiled.enabled`): buckets of equal width over a row's sorted relevant
values, each holding how many of them lie in earlier buckets, so that a value's place among
them (how many are <= it: numpy's ``searchsorted(..., side="right")``) lies between two
neighbouring entries. A row fills its table once it has placed enough values to repay it.

:mod:`.deep_kernels` compiles these into its cached kernel; an edit here compiles it again
(the cache is keyed by the package's sources: :func:`embedeval._core.compiled.kernel_numba`).
"""

from __future__ import annotations

import llvmlite.ir as llvm_ir
import numpy as np
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._core.compiled import kernel_numba
from .list_kernels import _splat, compresses
from .placed_kernels import _search

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

# Values placed at once by _places_block: 8 lanes of float64 (a 64-byte vector).
LANES = 8


def new_tables(m, n_nearest):
    """Empty bucket tables for ``m`` padded rows of ``n_nearest`` values (filled by
    :func:`place_chunk` where they pay): (table (m, n_buckets + 1) int32, info (m, 3) float64,
    state (m,) int64: binary searches so far, -1 once the row's table is filled, -2 where it cannot
    be). ``n_buckets``: a power of two, at least 16 and ``n_nearest``. ``np.empty``: the pages of
    rows never filled are never touched."""
    n_buckets = 16
    while n_buckets < n_nearest:
        n_buckets *= 2
    return np.empty((m, n_buckets + 1), np.int32), np.empty((m, 3)), np.zeros(m, np.int64)


@numba.njit(nogil=True)
def _fill_table(row, n_nearest, table, info):  # pragma: no cover
    """Buckets of equal width over the row's finite values [first, last]: ``table[k]`` = how many
    of them lie in buckets before k (``table[-1]``: all of them), ``info`` = (first, last,
    1 / width). Returns False where no such buckets exist (no finite value, one value repeated,
    a span that overflows).

    A value v in [first, last) has its place (how many row values are <= v) in
    [table[k], table[k + 1]] for k = its bucket: the bucket is a non-decreasing function of v,
    computed the same way for both, so a row value in an earlier bucket is below v and one in a
    later bucket above it, whatever the rounding.
    """
    n_fin = n_nearest
    while n_fin > 0 and not row[n_fin] < np.inf:  # row[k + 1] holds value k; +inf values last
        n_fin -= 1
    if n_fin == 0:
        return False
    first, last = row[1], row[n_fin]
    n_buckets = table.shape[0] - 1
    width = (last - first) / n_buckets
    if not (first > -np.inf and width > 0.0 and width < np.inf):
        return False
    inverse = 1.0 / width
    if not inverse < np.inf:  # a subnormal width
        return False
    table[:] = 0
    for k in range(n_fin):
        table[_bucket(row[k + 1], first, inverse, n_buckets) + 1] += 1
    for k in range(1, n_buckets + 1):
        table[k] += table[k - 1]
    info[0], info[1], info[2] = first, last, inverse
    return True


@numba.njit(inline="always")
def _table_place(row, v, table, k):  # pragma: no cover
    """The place of v (in bucket k of the row's filled ``table``) among the row's values."""
    low, high = table[k], table[k + 1]
    if high - low > 8:  # a crowded bucket (duplicates): a binary search within it
        return _search(row, v, low, high)
    while row[low + 1] <= v:  # a few values: a scan (the value after the bucket is above v)
        low += 1
    return low


@numba.njit(inline="always")
def _bucket(v, first, inverse, n_buckets):  # pragma: no cover
    """The bucket of v (0 .. n_buckets - 1): non-decreasing in v under any rounding."""
    f = (v - first) * inverse
    if f >= n_buckets:
        return n_buckets - 1
    if f > 0.0:
        return int(f)
    return 0


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
        k = np.uint64(min(max((v - first) * inverse, 0.0), top_bucket))  # _bucket without a branch
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
            p = _table_place(row, v, table, _bucket(v, first, inverse, n_buckets))
        counts[np.uint64(min(p, top))] += 1
        if (v - row[np.uint64(p)] <= win) | (row[np.uint64(p + 1)] - v <= win):
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
        vector = _Vectors(context, builder)
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
        columns_at = vector.pointer(columns_t, args[1], at)
        v = vector.gather(
            values_t, args[0], builder.load(builder.bitcast(columns_at, vector.vi32.as_pointer()), align=4)
        )
        if values_t.dtype == types.float32:
            v = builder.fpext(v, vector.vf64)
        zero, one, two = vector.vf64([0.0] * LANES), vector.vi32([1] * LANES), vector.vi32([2] * LANES)
        f = builder.fmul(builder.fsub(v, first), inverse)
        f = builder.select(builder.fcmp_ordered(">", f, zero), f, zero)  # max(f, 0.0)
        f = builder.select(builder.fcmp_ordered("<", f, top_bucket), f, top_bucket)  # min(f, top_bucket)
        k = builder.fptosi(f, vector.vi32)
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
        builder.store(p, builder.bitcast(vector.pointer(places_t, args[2], at), vector.vi32.as_pointer()), align=4)
        return context.get_dummy_value()

    return signature, codegen


class _Vectors:
    """LLVM IR of LANES-wide vectors for :func:`_places_block`."""

    def __init__(self, context, builder):
        self.context, self.builder = context, builder
        self.i32, self.i64 = llvm_ir.IntType(32), llvm_ir.IntType(64)
        self.vi32 = llvm_ir.VectorType(self.i32, LANES)
        self.vf64 = llvm_ir.VectorType(llvm_ir.DoubleType(), LANES)

    def splat(self, scalar):
        return _splat(self.builder, scalar, LANES)

    def pointer(self, array_type, array, index):
        """The address of ``array[index]``."""
        view = self.context.make_array(array_type)(self.context, self.builder, array)
        return cgutils.get_item_pointer(self.context, self.builder, array_type, view, [index], wraparound=False)

    def gather(self, array_type, array, indices):
        """``array[indices]`` for a vector of int32 ``indices`` (each in the array)."""
        builder = self.builder
        base = builder.ptrtoint(self.pointer(array_type, array, self.context.get_constant(types.intp, 0)), self.i64)
        element = self.context.get_value_type(array_type.dtype)
        size = array_type.dtype.bitwidth // 8
        offsets = builder.mul(
            builder.sext(indices, llvm_ir.VectorType(self.i64, LANES)),
            llvm_ir.VectorType(self.i64, LANES)([size] * LANES),
        )
        addresses = builder.inttoptr(
            builder.add(self.splat(base), offsets), llvm_ir.VectorType(element.as_pointer(), LANES)
        )
        result = llvm_ir.VectorType(element, LANES)
        mask = llvm_ir.VectorType(llvm_ir.IntType(1), LANES)
        kind = llvm_ir.FunctionType(result, [addresses.type, self.i32, mask, result])
        name = {"double": "f64", "float": "f32", "i32": "i32"}[str(element)]
        function = cgutils.get_or_insert_function(
            builder.module, kind, f"llvm.masked.gather.v{LANES}{name}.v{LANES}p0{name}"
        )
        return builder.call(function, [addresses, self.i32(size), mask([1] * LANES), llvm_ir.Constant(result, None)])
