"""The listing of a chunk row's columns within its limit (numba; imported only when
:func:`embedeval._core.compiled.enabled`), for the deep pass (:mod:`.deep_kernels`).

``n = list_within(values, limit, listed)`` writes to ``listed[:n]``, ascending, every column c
of ``values`` (w,) with ``values[c] <= limit`` (a NaN is never listed), as
``np.flatnonzero(values <= limit)`` does. ``listed`` is int32 of at least w entries; entries
from n on are left with any value.

Where the compiled code's target has AVX-512 (numba compiles for the host's features), a
block of 64 bytes of ``values`` (16 float32 or 8 float64) is compared with the limit at once,
and the columns within are packed to the front of a vector (LLVM's
``llvm.experimental.vector.compress``: one ``vpcompressd``) and stored whole at ``listed[n]``:
the lanes past the count are overwritten by the next block, and a store of 16 lanes at n,
with n at most the block's first column, never passes column w. Elsewhere, and for the
columns after the last whole block, one store a column and an index that moves only for the
columns within (no branch: a branch on "within" mispredicts where those are interleaved).
Each is ``np.flatnonzero``'s result (the tests check both ways on the same rows).
"""

from __future__ import annotations

import llvmlite.ir as llvm_ir
from llvmlite.binding import llvm_version_info
from numba.core import cgutils, types
from numba.extending import intrinsic

from .._core.compiled import kernel_numba

numba = kernel_numba()  # with the package-wide cache key (_core.compiled)

# The widest vector compared at once, in bytes (AVX-512's).
_VECTOR_BYTES = 64

# LLVM 19 (llvmlite 0.44) has a compress into a register, which is then stored whole; before it,
# LLVM's masked compressing store (``vpcompressd`` to memory: slower, as fast as the loop at best).
REGISTER_COMPRESS = llvm_version_info >= (19,)


def _target_compresses(context) -> bool:
    """Whether the code numba generates in ``context`` may use AVX-512: its target machine's
    features (the host's, or ``NUMBA_CPU_FEATURES``), which numba's cache index records, so a
    kernel cached on one host is not loaded on a host without them. numba keeps them in a private
    attribute; where it is missing, the scalar loop runs."""
    features = getattr(context.codegen(), "_tm_features", "") or ""
    return "+avx512f" in features.split(",")


@intrinsic
def compresses(typingctx):  # pragma: no cover - compiled
    """Whether :func:`list_within` compares a block of 64 bytes at once here (a compile-time
    constant of the target: True where it has AVX-512)."""
    signature = types.boolean()

    def codegen(context, builder, sig, args):
        return cgutils.true_bit if _target_compresses(context) else cgutils.false_bit

    return signature, codegen


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
    lanes = _VECTOR_BYTES * 8 // values.dtype.bitwidth
    signature = types.intp(values, start, limit, listed, at)

    def codegen(context, builder, sig, args):
        values_type, start_type, _, listed_type, at_type = sig.args
        array, first, bound, out, where = args
        first = context.cast(builder, first, start_type, types.intp)
        where = context.cast(builder, where, at_type, types.intp)
        i32 = llvm_ir.IntType(32)
        column_type = llvm_ir.VectorType(i32, lanes)
        source_view = context.make_array(values_type)(context, builder, array)
        source = cgutils.get_item_pointer(context, builder, values_type, source_view, [first], wraparound=False)
        element = context.get_value_type(values_type.dtype)
        block_type = llvm_ir.VectorType(element, lanes)
        block = builder.load(builder.bitcast(source, block_type.as_pointer()), align=values_type.dtype.bitwidth // 8)
        within = builder.fcmp_ordered("<=", block, _splat(builder, bound, lanes))  # NaN: not within
        columns = builder.add(_splat(builder, builder.trunc(first, i32), lanes), column_type(list(range(lanes))))
        out_view = context.make_array(listed_type)(context, builder, out)
        target = cgutils.get_item_pointer(context, builder, listed_type, out_view, [where], wraparound=False)
        compress_store(builder, columns, within, builder.bitcast(target, column_type.as_pointer()))
        bits = builder.bitcast(within, llvm_ir.IntType(lanes))
        return builder.zext(builder.ctpop(bits), context.get_value_type(types.intp))

    return signature, codegen


def compress_store(builder, vector, mask, target):
    """Store the lanes of ``vector`` where ``mask`` is set, packed to the front, at ``target``
    (a pointer to a vector of its type): every lane written (the register compress, LLVM 19
    and later), or only those (a masked compressing store, before)."""
    if REGISTER_COMPRESS:  # one vpcompressd/vcompresspd (register form) with AVX-512; legal on any target
        kind = llvm_ir.FunctionType(vector.type, [vector.type, mask.type, vector.type])
        name = f"llvm.experimental.vector.compress.v{vector.type.count}i{vector.type.element.width}"
        compress = cgutils.get_or_insert_function(builder.module, kind, name)
        packed = builder.call(compress, [vector, mask, llvm_ir.Constant(vector.type, llvm_ir.Undefined)])
        builder.store(packed, target, align=4)
    else:
        element = vector.type.element.as_pointer()
        kind = llvm_ir.FunctionType(llvm_ir.VoidType(), [vector.type, element, mask.type])
        name = f"llvm.masked.compressstore.v{vector.type.count}i{vector.type.element.width}"
        store = cgutils.get_or_insert_function(builder.module, kind, name)
        builder.call(store, [vector, builder.bitcast(target, element), mask])


def _splat(builder, scalar, lanes):
    """A vector of ``lanes`` copies of ``scalar``."""
    vector_type = llvm_ir.VectorType(scalar.type, lanes)
    one = builder.insert_element(llvm_ir.Constant(vector_type, None), scalar, llvm_ir.IntType(32)(0))
    zeros = llvm_ir.Constant(llvm_ir.VectorType(llvm_ir.IntType(32), lanes), [0] * lanes)
    return builder.shuffle_vector(one, one, zeros)


@numba.njit(inline="always")
def list_within(values, limit, listed):  # pragma: no cover
    """The columns of ``values`` (w,) at most ``limit`` written ascending to ``listed`` (int32, at least
    w entries); returns how many (the module's docstring)."""
    w = values.shape[0]
    n_within = 0
    c = 0
    if compresses():
        lanes = _VECTOR_BYTES // values.itemsize
        while c + lanes <= w:
            n_within += _compress_block(values, c, limit, listed, n_within)
            c += lanes
    while c < w:
        listed[n_within] = c
        n_within += values[c] <= limit
        c += 1
    return n_within


@numba.njit(inline="always")
def list_within_scalar(values, limit, listed):  # pragma: no cover
    """:func:`list_within` without the vectors (what a target without AVX-512 runs)."""
    n_within = 0
    for c in range(values.shape[0]):
        listed[n_within] = c
        n_within += values[c] <= limit
    return n_within
