"""LLVM IR for the compiled kernels, where numba has no expression of its own (numba; imported
only by ``*_kernels.py`` modules, which are imported only when
:func:`embedeval._core.compiled.enabled`).

* :func:`prefetch`: an ``@intrinsic`` asking the processor for the cache line of
  ``array[index]`` ahead of its use;
* :func:`compresses`: an ``@intrinsic``, True where the compiled code's target has AVX-512 (the
  vector paths of :mod:`embedeval._search.list_kernels` and ``table_kernels`` are compiled
  only there);
* :class:`Vectors`: the pieces those paths' ``@intrinsic`` code generators build their
  ``lanes``-wide vectors from: a splat, an element's address, a gather, the monotone bucket of
  :func:`embedeval._search.primitives.bucket` in vectors, and a compressing store.
"""

from __future__ import annotations

import llvmlite.ir as llvm_ir
from llvmlite.binding import llvm_version_info
from numba.core import cgutils, types
from numba.extending import intrinsic

# The widest vector compared at once, in bytes (AVX-512's).
VECTOR_BYTES = 64

# LLVM 19 (llvmlite 0.44) has a compress into a register, which is then stored whole; before it,
# LLVM's masked compressing store (``vpcompressd`` to memory: slower, as fast as the loop at best).
REGISTER_COMPRESS = llvm_version_info >= (19,)


@intrinsic
def prefetch(typingctx, array, index):  # pragma: no cover - compiled
    """Prefetch the cache line of ``array[index]`` (a 1-d array, an integer index) for reading.

    It never reads the value, never faults (an index out of range is harmless on x86 and ARM,
    though callers keep it in range) and changes no result: LLVM's ``llvm.prefetch`` (read, low
    temporal locality, data cache), which numba does not expose. A loop that looks up a large
    table at data-dependent positions, with a branch on each looked-up value, otherwise waits on
    memory at each lookup (``bench/bench_verification.py --prefetch`` measures it).
    """
    if not isinstance(array, types.Array) or array.ndim != 1 or not isinstance(index, types.Integer):
        return None
    signature = types.void(array, index)

    def codegen(context, builder, sig, args):
        position = context.cast(builder, args[1], sig.args[1], types.intp)
        pointer = item_pointer(context, builder, sig.args[0], args[0], position)
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


def item_pointer(context, builder, array_type, array, index):
    """The address of ``array[index]`` (a 1-d array, an intp index) in LLVM IR."""
    view = context.make_array(array_type)(context, builder, array)
    return cgutils.get_item_pointer(context, builder, array_type, view, [index], wraparound=False)


def _target_compresses(context) -> bool:
    """Whether the code numba generates in ``context`` may use AVX-512: its target machine's
    features (the host's, or ``NUMBA_CPU_FEATURES``), which numba's cache index records, so a
    kernel cached on one host is not loaded on a host without them. numba keeps them in a private
    attribute; where it is missing, the scalar loops run."""
    features = getattr(context.codegen(), "_tm_features", "") or ""
    return "+avx512f" in features.split(",")


@intrinsic
def compresses(typingctx):  # pragma: no cover - compiled
    """Whether the vector paths run here (a compile-time constant of the target: True where it
    has AVX-512)."""
    signature = types.boolean()

    def codegen(context, builder, sig, args):
        return cgutils.true_bit if _target_compresses(context) else cgutils.false_bit

    return signature, codegen


class Vectors:
    """LLVM IR of ``lanes``-wide vectors, for an ``@intrinsic``'s code generator (``context``,
    ``builder``: its arguments)."""

    def __init__(self, context, builder, lanes):
        self.context, self.builder, self.lanes = context, builder, lanes
        self.i32, self.i64 = llvm_ir.IntType(32), llvm_ir.IntType(64)
        self.vi32 = llvm_ir.VectorType(self.i32, lanes)
        self.vf64 = llvm_ir.VectorType(llvm_ir.DoubleType(), lanes)

    def of(self, dtype):
        """The LLVM type of a vector of the numba scalar type ``dtype``."""
        return llvm_ir.VectorType(self.context.get_value_type(dtype), self.lanes)

    def splat(self, scalar):
        """A vector of ``lanes`` copies of ``scalar``."""
        vector_type = llvm_ir.VectorType(scalar.type, self.lanes)
        one = self.builder.insert_element(llvm_ir.Constant(vector_type, None), scalar, self.i32(0))
        return self.builder.shuffle_vector(one, one, self.vi32([0] * self.lanes))

    def pointer(self, array_type, array, index, vector_type=None):
        """The address of ``array[index]`` (``index`` an intp), as a pointer to ``vector_type``
        where one is given (a whole vector's load or store from there)."""
        item = item_pointer(self.context, self.builder, array_type, array, index)
        return item if vector_type is None else self.builder.bitcast(item, vector_type.as_pointer())

    def columns(self, start):
        """The int32 vector ``start, start + 1, ...`` (``start`` an intp)."""
        return self.builder.add(self.splat(self.builder.trunc(start, self.i32)), self.vi32(list(range(self.lanes))))

    def gather(self, array_type, array, indices):
        """``array[indices]`` for a vector of int32 ``indices`` (each in the array): LLVM's
        ``masked.gather``, every lane on."""
        builder, lanes = self.builder, self.lanes
        base = builder.ptrtoint(self.pointer(array_type, array, self.context.get_constant(types.intp, 0)), self.i64)
        result = self.of(array_type.dtype)
        element = result.element
        size = array_type.dtype.bitwidth // 8
        vi64 = llvm_ir.VectorType(self.i64, lanes)
        offsets = builder.mul(builder.sext(indices, vi64), vi64([size] * lanes))
        pointers = llvm_ir.VectorType(element.as_pointer(), lanes)
        addresses = builder.inttoptr(builder.add(self.splat(base), offsets), pointers)
        mask = llvm_ir.VectorType(llvm_ir.IntType(1), lanes)
        kind = llvm_ir.FunctionType(result, [addresses.type, self.i32, mask, result])
        name = {"double": "f64", "float": "f32", "i32": "i32"}[str(element)]
        name = f"llvm.masked.gather.v{lanes}{name}.v{lanes}p0{name}"
        function = cgutils.get_or_insert_function(builder.module, kind, name)
        return builder.call(function, [addresses, self.i32(size), mask([1] * lanes), llvm_ir.Constant(result, None)])

    def bucket(self, value, first, inverse, top):
        """:func:`embedeval._search.primitives.bucket` of each lane of the float64 vector
        ``value`` (``first``, ``inverse``, ``top``: float64 vectors), as int32 lanes: the same
        operations, so the same buckets (0 for a NaN)."""
        builder = self.builder
        zero = self.vf64([0.0] * self.lanes)
        f = builder.fmul(builder.fsub(value, first), inverse)
        f = builder.select(builder.fcmp_ordered(">", f, zero), f, zero)
        f = builder.select(builder.fcmp_ordered("<", f, top), f, top)
        return builder.fptosi(f, self.vi32)

    def count(self, mask):
        """How many lanes of the i1 vector ``mask`` are set, as an intp."""
        bits = self.builder.bitcast(mask, llvm_ir.IntType(self.lanes))
        return self.builder.zext(self.builder.ctpop(bits), self.context.get_value_type(types.intp))

    def compress_store(self, vector, mask, target):
        """Store the lanes of ``vector`` where ``mask`` is set, packed to the front, at ``target``
        (a pointer to a vector of its type): every lane written (the register compress, LLVM 19
        and later: one vpcompressd with AVX-512, legal on any target), or only those (a masked
        compressing store, before)."""
        builder = self.builder
        if REGISTER_COMPRESS:
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
