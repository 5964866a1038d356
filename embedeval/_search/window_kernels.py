"""The listing of a chunk row's columns within [first, last] with their buckets (numba; imported
only when :func:`embedeval._core.compiled.enabled`), for the tied scan's window pass
(:mod:`.tied_kernels`).

``n_within, n_below = list_between(products, norms, scale, first, last, inverse, top, listed,
buckets)``, for a row ``products`` (w,) float32 or float64 and ``norms`` (w,) float64, takes
each column's value ``v = norms[c] - scale * products[c]`` in float64 (``scale`` 2 or 1: the
product by it is exact, so v is rounded once, as numpy's ``norms - scale *
products.astype(np.float64)``) and

* writes to ``listed[:n_within]``, ascending, every column with ``first <= v <= last`` (a NaN
  is never listed), as ``np.flatnonzero((v >= first) & (v <= last))``, and to
  ``buckets[:n_within]`` the bucket of each, :func:`.primitives.bucket`'s ``int((v - first) * inverse)``
  within [0, top]; both int32 of at least w entries, those from ``n_within`` on left with any
  value;
* counts ``n_below``, the values ``< first``.

Where the compiled code's target has AVX-512 (:func:`embedeval._core.intrinsics.compresses`), 64 bytes of
``products`` (16 float32 or 8 float64) are taken at once: their values computed as one vector,
compared with both ends, their buckets computed, and the columns and buckets within packed to
the front of a vector each (LLVM's ``llvm.experimental.vector.compress``: one ``vpcompressd``)
stored whole at ``listed[n]`` and ``buckets[n]`` (the lanes past the count are overwritten by
the next block; n is at most the block's first column, so no store passes column w).
Elsewhere, and after the last whole block, a scalar loop: one store a column and an index that
moves only for the columns within (no branch: a branch on "within" mispredicts where those are
interleaved, as in ``bench_floor.py``'s tied row: bench/NOTES.md, stop 52). The tests check both ways against
numpy on the same rows.
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
