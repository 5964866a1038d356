"""A software prefetch for compiled kernels (numba; imported only by ``*_kernels.py`` modules,
which are imported only when :func:`embedeval._core.compiled.enabled`).

``prefetch(array, index)`` asks the processor to bring the cache line of ``array[index]`` in
ahead of its use, and does nothing else: it never reads the value, never faults (an index out
of range is harmless on x86 and ARM, though callers keep it in range), and changes no result.
It is LLVM's ``llvm.prefetch`` intrinsic (read, low temporal locality, data cache), which numba
does not expose.

Why: a loop that looks up a large table at data-dependent positions (the verification's AUROC
table, tens of MB) waits on memory for each lookup; a branch on the looked-up value then
stops the processor from running ahead to the next lookups. Prefetching the cell of the
element some iterations ahead overlaps those waits (``bench/bench_verification.py
--prefetch`` measures it).
"""

from __future__ import annotations

import llvmlite.ir as llvm_ir
from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def prefetch(typingctx, array, index):  # pragma: no cover - compiled
    """Prefetch the cache line of ``array[index]`` (a 1-d array, an integer index) for reading."""
    if not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer):
        return None
    signature = types.void(array, index)

    def codegen(context, builder, sig, args):
        array_type, index_type = sig.args
        view = context.make_array(array_type)(context, builder, args[0])
        position = context.cast(builder, args[1], index_type, types.intp)
        pointer = cgutils.get_item_pointer(context, builder, array_type, view, [position], wraparound=False)
        byte_pointer = llvm_ir.IntType(8).as_pointer()
        i32 = llvm_ir.IntType(32)
        # numba writes typed pointers (i8*), whose mangled name LLVM also accepts where its
        # pointers are opaque (it renames the declaration)
        kind = llvm_ir.FunctionType(llvm_ir.VoidType(), [byte_pointer, i32, i32, i32])
        function = cgutils.get_or_insert_function(builder.module, kind, "llvm.prefetch.p0i8")
        # read (0), locality 1 (streamed: used once soon), data cache (1)
        builder.call(function, [builder.bitcast(pointer, byte_pointer), i32(0), i32(1), i32(1)])
        return context.get_dummy_value()

    return signature, codegen
