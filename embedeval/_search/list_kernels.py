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

from numba.core import types
from numba.extending import intrinsic

from .._core.compiled import kernel_numba
from .._core.intrinsics import VECTOR_BYTES, Vectors, compresses

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
