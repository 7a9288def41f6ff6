"""numpy's own C loops called from compiled (numba) kernels: a ufunc's inner loop for one type
signature, found by address in the ufunc object, and a numba intrinsic that calls a C function
at an integer address.

A compiled kernel that calls the very loop numpy's ufunc call reaches computes numpy's bits
(numpy's SIMD exp, log and tanh round otherwise than libm or LLVM's), so it can replace a chain
of small numpy calls without changing a number. Callers check the loops once against numpy's own
calls before using them (a numpy built otherwise keeps its numpy code).
"""

from __future__ import annotations

import ctypes

import numpy as np

#: parameters of a ufunc inner loop ``loop(char **args, npy_intp *dimensions, npy_intp
#: *steps, void *data)``, for ``c_caller``
UFUNC_LOOP_PARAMS = "pppp"


def ufunc_loop(ufunc, dtype):
    """(inner loop, its data pointer) of ``ufunc`` with every operand of ``dtype``, as
    addresses, read from the ufunc object (numpy's C API layout of PyUFuncObject: after the
    object header, nin, nout, nargs and identity as ints, then the loop and data arrays,
    ntypes, a reserved int, name, types); None if it has no such loop."""
    address = id(ufunc)
    header = ctypes.sizeof(ctypes.c_ssize_t) + ctypes.sizeof(ctypes.c_void_p)
    base = header + 4 * ctypes.sizeof(ctypes.c_int)
    functions = ctypes.c_void_p.from_address(address + base).value
    data = ctypes.c_void_p.from_address(address + base + 8).value
    ntypes = ctypes.c_int.from_address(address + base + 16).value
    types = ctypes.c_void_p.from_address(address + base + 32).value
    if not (functions and types) or ntypes != len(ufunc.types):
        return None
    nargs = ufunc.nargs
    signatures = ctypes.string_at(types, nargs * ntypes)
    want = bytes([np.dtype(dtype).num] * nargs)
    for i in range(ntypes):
        if signatures[nargs * i:nargs * (i + 1)] == want:
            loop = ctypes.c_void_p.from_address(functions + 8 * i).value
            entry = ctypes.c_void_p.from_address(data + 8 * i).value if data else None
            return loop, entry or 0
    return None


def c_caller(params):
    """A numba intrinsic ``call(address, args)`` that calls the C function ``void f(...)`` at
    the integer ``address`` with the tuple ``args``, each cast to its parameter's type in
    ``params`` (one letter each: i int32, q int64, f float32, p a pointer given as an integer).
    Kernels take the addresses of numpy's loops as plain integers: numba unboxes a ctypes
    function argument through ``ctypes.cast`` at every call (about 2 us each), and a function
    pointer baked in as a constant would keep the kernels from being cached on disk."""
    from llvmlite import ir
    from numba import types
    from numba.core import cgutils
    from numba.extending import intrinsic

    kinds = {"i": (ir.IntType(32), types.int32), "q": (ir.IntType(64), types.int64),
             "f": (ir.FloatType(), types.float32), "p": (ir.IntType(8).as_pointer(), types.intp)}
    function = ir.FunctionType(ir.VoidType(), [kinds[c][0] for c in params])

    @intrinsic
    def call(typingctx, address, args):
        if not isinstance(args, types.BaseTuple) or len(args) != len(params):
            return None

        def codegen(context, builder, signature, llargs):
            values = []
            for c, value, ty in zip(params, cgutils.unpack_tuple(builder, llargs[1]), args):
                lltype, nbtype = kinds[c]
                value = context.cast(builder, value, ty, nbtype)
                values.append(builder.inttoptr(value, lltype) if c == "p" else value)
            pointer = context.cast(builder, llargs[0], address, types.intp)
            builder.call(builder.inttoptr(pointer, function.as_pointer()), values)
            return context.get_dummy_value()

        return types.void(address, args), codegen

    return call
