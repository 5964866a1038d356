"""A chunk row's columns within bounds, listed (numba; imported only when
:func:`embedeval._core.compiled.enabled`):

* ``n = list_within(values, limit, listed)``, for the deep pass (:mod:`.deep_kernels`,
  :mod:`.merged_kernels`): every column c of ``values`` (w,) with ``values[c] <= limit``,
  ascending, as ``np.flatnonzero(values <= limit)``;
* ``n_within, n_below = list_between(products, norms, scale, first, last, inverse, top, listed,
  buckets)``, for the tied scan's window pass (:mod:`.tied_kernels`): each column's value
  ``v = norms[c] - scale * products[c]`` in float64 (``scale`` 2 or 1: the product by it is
  exact, so v is rounded once, as numpy's ``norms - scale * products.astype(np.float64)``); the
  columns with ``first <= v <= last``, ascending, as ``np.flatnonzero((v >= first) & (v <=
  last))``, each one's :func:`.primitives.bucket` (within [0, top]) in ``buckets``, and
  ``n_below``, the values ``< first``;
* :func:`nonzero_bits`: 64 bytes of a mask as the bits of a word.

``listed`` and ``buckets`` are int32 of at least w entries; those from n on are left with any
value; a NaN is never listed.

Where the compiled code's target has AVX-512 (:func:`embedeval._core.intrinsics.compresses`), a
block of 64 bytes (16 float32 or 8 float64) is taken at once: compared with the bounds, and the
columns within (and their buckets) packed to the front of a vector (LLVM's
``llvm.experimental.vector.compress``: one ``vpcompressd``) and stored whole at ``listed[n]``:
the lanes past the count are overwritten by the next block, and a store of 16 lanes at n, with n
at most the block's first column, never passes column w. Elsewhere, and for the columns after
the last whole block, one store a column and an index that moves only for the columns within (no
branch: a branch on "within" mispredicts where those are interleaved, as in ``bench_floor.py``'s
tied row: bench/NOTES.md, stop 52). The tests check both ways against numpy on the same rows.
"""

from __future__ import annotations

import llvmlite.ir as llvm_ir
from numba.core import types
from numba.extending import intrinsic

from .._core.compiled import kernel_numba
from .._core.intrinsics import VECTOR_BYTES, Vectors, compresses, item_pointer
from .primitives import bucket

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)


@intrinsic
def _compress_block(typingctx, values, start, limit, listed, at):  # pragma: no cover - compiled
    """Compare ``values[start:start + L]`` (L lanes of 64 bytes) with ``limit``, store the columns
    within, packed and ascending, at ``listed[at:at + L]`` (every lane written), return how many."""
    if not (
        isinstance(values, types.Array)
        and values.ndim == 1
        and values.layout == "C"
        and values.dtype in (types.float32, types.float64)
        and limit == values.dtype
        and isinstance(listed, types.Array)
        and listed.ndim == 1
        and listed.layout == "C"
        and listed.dtype == types.int32
        and isinstance(start, types.Integer)
        and isinstance(at, types.Integer)
    ):
        return None
    lanes = VECTOR_BYTES * 8 // values.dtype.bitwidth
    signature = types.intp(values, start, limit, listed, at)

    def codegen(context, builder, sig, args):
        values_type, start_type, _, listed_type, at_type = sig.args
        array, first, bound, out, where = args
        first = context.cast(builder, first, start_type, types.intp)
        where = context.cast(builder, where, at_type, types.intp)
        vector = Vectors(context, builder, lanes)
        block_at = vector.pointer(values_type, array, first, vector.of(values_type.dtype))
        block = builder.load(block_at, align=values_type.dtype.bitwidth // 8)
        within = builder.fcmp_ordered("<=", block, vector.splat(bound))  # NaN: not within
        vector.compress_store(vector.columns(first), within, vector.pointer(listed_type, out, where, vector.vi32))
        return vector.count(within)

    return signature, codegen


@numba.njit(inline="always")
def list_within(values, limit, listed):  # pragma: no cover
    """The columns of ``values`` (w,) at most ``limit`` written ascending to ``listed`` (int32, at least
    w entries); returns how many (the module's docstring)."""
    w = values.shape[0]
    n_within = 0
    c = 0
    if compresses():
        lanes = VECTOR_BYTES // values.itemsize
        while c + lanes <= w:
            n_within += _compress_block(values, c, limit, listed, n_within)
            c += lanes
    while c < w:
        listed[n_within] = c
        n_within += values[c] <= limit
        c += 1
    return n_within


@intrinsic
def _between_block(
    typingctx, products, norms, start, scale, first, last, inverse, top, listed, buckets, at
):  # pragma: no cover - compiled
    """The values of ``products[start:start + L]`` (L lanes of 64 bytes); the columns within
    [first, last] and their buckets packed at ``listed[at:at + L]`` and ``buckets[at:at + L]``
    (every lane written); returns (how many within, how many below first)."""
    f64 = types.float64
    arrays = (norms, listed, buckets)
    if not (
        isinstance(products, types.Array)
        and products.ndim == 1
        and products.layout == "C"
        and products.dtype in (types.float32, f64)
        and all(isinstance(a, types.Array) and a.ndim == 1 and a.layout == "C" for a in arrays)
        and norms.dtype == f64
        and listed.dtype == types.int32
        and buckets.dtype == types.int32
        and all(x == f64 for x in (scale, first, last, inverse, top))
        and isinstance(start, types.Integer)
        and isinstance(at, types.Integer)
    ):
        return None
    lanes = VECTOR_BYTES * 8 // products.dtype.bitwidth
    signature = types.UniTuple(types.intp, 2)(products, norms, start, scale, first, last, inverse, top, *arrays[1:], at)

    def codegen(context, builder, sig, args):
        p_type, n_type, start_type, *_, l_type, b_type, at_type = sig.args
        p_arr, n_arr, begin, factor, lo, hi, inv, end, l_arr, b_arr, where = args
        begin = context.cast(builder, begin, start_type, types.intp)
        where = context.cast(builder, where, at_type, types.intp)
        vector = Vectors(context, builder, lanes)
        splat = vector.splat
        block = builder.load(vector.pointer(p_type, p_arr, begin, vector.of(p_type.dtype)), align=4)
        if p_type.dtype == types.float32:
            block = builder.fpext(block, vector.vf64)
        norm = builder.load(vector.pointer(n_type, n_arr, begin, vector.vf64), align=8)
        value = builder.fsub(norm, builder.fmul(splat(factor), block))  # an exact product: one rounding
        below = builder.fcmp_ordered("<", value, splat(lo))
        above_first = builder.fcmp_ordered(">=", value, splat(lo))
        within = builder.and_(above_first, builder.fcmp_ordered("<=", value, splat(hi)))
        in_bucket = vector.bucket(value, splat(lo), splat(inv), splat(end))
        vector.compress_store(vector.columns(begin), within, vector.pointer(l_type, l_arr, where, vector.vi32))
        vector.compress_store(in_bucket, within, vector.pointer(b_type, b_arr, where, vector.vi32))
        return context.make_tuple(builder, sig.return_type, [vector.count(within), vector.count(below)])

    return signature, codegen


@intrinsic
def nonzero_bits(typingctx, mask, start):  # pragma: no cover - compiled
    """Bit j of the result (uint64) set where ``mask[start + j]`` (a 1-d C array of bool or bytes)
    is not zero, for j < 64: one 64-byte compare (``vptestmb`` with AVX-512, a few SSE
    instructions elsewhere). ``start + 64`` must not pass the array's end."""
    if not (
        isinstance(mask, types.Array)
        and mask.ndim == 1
        and mask.layout == "C"
        and mask.dtype in (types.boolean, types.uint8, types.int8)
        and isinstance(start, types.Integer)
    ):
        return None
    signature = types.uint64(mask, start)

    def codegen(context, builder, sig, args):
        mask_type, start_type = sig.args
        first = context.cast(builder, args[1], start_type, types.intp)
        item = item_pointer(context, builder, mask_type, args[0], first)
        byte_block = llvm_ir.VectorType(llvm_ir.IntType(8), 64)
        block = builder.load(builder.bitcast(item, byte_block.as_pointer()), align=1)
        set_bytes = builder.icmp_unsigned("!=", block, llvm_ir.Constant(byte_block, [0] * 64))
        return builder.bitcast(set_bytes, llvm_ir.IntType(64))

    return signature, codegen


@numba.njit(inline="always")
def list_between(products, norms, scale, first, last, inverse, top, listed, buckets):  # pragma: no cover
    """The columns of a row within [first, last] written ascending to ``listed``, their buckets
    to ``buckets``; returns (how many within, how many below first) (the module's docstring)."""
    w = products.shape[0]
    n_within, n_below = 0, 0
    c = 0
    if compresses():
        lanes = VECTOR_BYTES // products.itemsize
        while c + lanes <= w:
            k, under = _between_block(products, norms, c, scale, first, last, inverse, top, listed, buckets, n_within)
            n_within += k
            n_below += under
            c += lanes
    while c < w:
        v = norms[c] - scale * products[c]
        listed[n_within], buckets[n_within] = c, bucket(v, first, inverse, top)
        n_within += (v >= first) & (v <= last)
        n_below += v < first
        c += 1
    return n_within, n_below
