"""The rnn op's time loops compiled with numba (the ``fast`` extra), bit-identical to the numpy
loops of rnn.py.

A time step of the numpy loop is a GEMM and about ten small ufunc calls, each costing more in
numpy's call overhead than in arithmetic at the sizes configs use (hidden 32, batch 32). These
loops run the whole recurrence in one call, and each step calls the very kernels numpy's own calls
reach: the BLAS ``sgemm`` that ``np.matmul`` calls for these shapes (numpy's bundled OpenBLAS,
found through ctypes, so its thread setting applies as well) and numpy's float32 ``tanh`` inner
loop (read from the ufunc object); the other elementwise arithmetic is the same float32 operations
in the same order per element (no fast-math). Both are checked once against numpy on sample
values before use. So the results equal the numpy loops' bit for bit, and the op may switch
between the two at any run without changing a number.

``kernels()`` returns None (the numpy loops run) without numba, with ``GRADPIPE_NUMBA=0``, where
numpy's BLAS or tanh loop cannot be found or disagrees with numpy, or if compiling fails.
"""

from __future__ import annotations

import ctypes

import numpy as np

from ..framework import jit, numpy_loops

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
#: the C signature of cblas_sgemm with 64-bit integers (see numpy_loops.c_caller)
_GEMM_PARAMS = "iiiqqqfpqpqfpq"
#: numba intrinsics calling C functions (numpy_loops.c_caller) and LLVM's float32 fused
#: multiply-add (_fma32_intrinsic), made by kernels() before the loops are compiled
_call_gemm = _call_ufunc_loop = _fma32 = None
#: the most input features for which the input product is computed as fma chains (_thin_product)
MAX_THIN_FEATURES = 4


# -- numpy's own kernels -------------------------------------------------------------------


def _numpy_sgemm():
    """The address of numpy's ``cblas_sgemm`` (64-bit integers: numpy's wheels bundle an ILP64
    OpenBLAS whose symbols carry a prefix and suffix), from the library numpy has loaded."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "openblas" in line.lower()}
    for path in sorted(paths):
        lib = ctypes.CDLL(path)
        for symbol in ("scipy_cblas_sgemm64_", "cblas_sgemm64_"):
            if hasattr(lib, symbol):
                return ctypes.cast(getattr(lib, symbol), ctypes.c_void_p).value
    return None


def _fma32_intrinsic():
    """A numba intrinsic ``fma(a, b, c)``: LLVM's float32 fused multiply-add (a * b + c rounded
    once), which numba does not offer and its loops vectorize."""
    from llvmlite import ir
    from numba import types
    from numba.extending import intrinsic

    f32 = ir.FloatType()

    @intrinsic
    def fma(typingctx, a, b, c):
        if not all(t == types.float32 for t in (a, b, c)):
            return None

        def codegen(context, builder, signature, args):
            function = builder.module.declare_intrinsic("llvm.fma", [f32],
                                                        ir.FunctionType(f32, [f32] * 3))
            return builder.call(function, args)

        return types.float32(a, b, c), codegen

    return fma


def _thin_agrees(thin_product):
    """The fma chains of ``_thin_product`` against np.matmul, bit for bit, for 1 to
    MAX_THIN_FEATURES features, with zeros of both signs, infinities and NaN among the values:
    what numpy's BLAS computes for a product this thin depends on its kernels (OpenBLAS's
    Haswell and SkylakeX kernels give one fma chain per element from a zero accumulator, alpha
    applied by an fma onto the zeroed output, so -0 becomes +0)."""
    rng = np.random.default_rng(1)
    for features in range(1, MAX_THIN_FEATURES + 1):
        for rows, cols in ((37, 12), (64, 128)):
            x = (rng.standard_normal((rows, features))
                 * 10.0 ** rng.integers(-20, 20, (rows, features))).astype(np.float32)
            w = (rng.standard_normal((features, cols))
                 * 10.0 ** rng.integers(-20, 20, (features, cols))).astype(np.float32)
            x[:4, 0] = [-0.0, 0.0, np.inf, np.nan]
            w[0, :2] = [-0.0, 0.0]
            out = np.empty((rows, cols), np.float32)
            with np.errstate(all="ignore"):
                want = x @ w
                thin_product(x, w, out)
            if not np.array_equal(out.view(np.int32), want.view(np.int32)):
                return False
    return True


def _agrees_with_numpy(gemm, tanh, tanh_data, kernel):
    """One GEMM, one of a transposed matrix and one tanh through the found kernels, compared
    with numpy's bit for bit."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 7)).astype(np.float32)
    b = rng.standard_normal((7, 12)).astype(np.float32)
    t = rng.standard_normal((300, 9)).astype(np.float32)
    u = rng.standard_normal((300, 12)).astype(np.float32)
    x = (rng.standard_normal(1000) * 4).astype(np.float32)
    x[:5] = [0.0, -0.0, np.inf, -np.inf, 1e-30]
    c, tu, y = np.empty((5, 12), np.float32), np.empty((9, 12), np.float32), np.empty_like(x)
    kernel(gemm, tanh, tanh_data, a, b, c, t, u, tu, x, y)
    return (np.array_equal(c, a @ b) and np.array_equal(tu.view(np.int32), (t.T @ u).view(np.int32))
            and np.array_equal(y, np.tanh(x)))


# -- the loops (see rnn.py's numpy loops: each line here is one of their ufunc calls) --------


def _gemm(gemm, a, b, out):
    """out = a @ b for C-contiguous float32 matrices, as np.matmul calls it (``gemm``: the
    address of cblas_sgemm)."""
    m, k = a.shape
    n = b.shape[1]
    _call_gemm(gemm, (_ROW_MAJOR, _NO_TRANS, _NO_TRANS, m, n, k, np.float32(1.0), a.ctypes.data,
                      k, b.ctypes.data, n, np.float32(0.0), out.ctypes.data, n))


def _gemm_tn(gemm, a, b, out):
    """out = a.T @ b for C-contiguous float32 matrices, as np.matmul calls it for the transposed
    view (CblasTrans, lda the width of ``a``)."""
    k, m = a.shape
    n = b.shape[1]
    _call_gemm(gemm, (_ROW_MAJOR, _TRANS, _NO_TRANS, m, n, k, np.float32(1.0), a.ctypes.data,
                      m, b.ctypes.data, n, np.float32(0.0), out.ctypes.data, n))


def _tanh(tanh, tanh_data, x, out, call):
    """out = np.tanh(x) over contiguous arrays, through numpy's inner loop (``tanh``,
    ``tanh_data``: its addresses); ``call`` is scratch [pointers in, out; length; strides in,
    out]."""
    call[0] = x.ctypes.data
    call[1] = out.ctypes.data
    call[2] = x.size
    call[3] = call[4] = 4
    _call_ufunc_loop(tanh, (call.ctypes.data, call[2:].ctypes.data, call[3:].ctypes.data,
                            tanh_data))


def _check(gemm, tanh, tanh_data, a, b, c, t, u, tu, x, y):
    _gemm(gemm, a, b, c)
    _gemm_tn(gemm, t, u, tu)
    _tanh(tanh, tanh_data, x, y, np.empty(5, np.int64))


def _recurrent_input(gemm, h_prev, w_h, bias, hw, z):
    """z = (z + bias) + h_prev @ w_h (hw: scratch for the product), as the numpy loops add the
    bias to every step's input part first."""
    _gemm(gemm, h_prev, w_h, hw)
    for b in range(z.shape[0]):
        for k in range(z.shape[1]):
            z[b, k] = (z[b, k] + bias[k]) + hw[b, k]


def _thin_product(x, w, out):
    """out = x @ w for a thin x (C-contiguous float32 [rows, 1 to MAX_THIN_FEATURES]) as numpy's
    BLAS computes it (an fma chain per element from +0, then + 0: see _thin_agrees): BLAS spends
    most of such a product packing (clip_adam's [1280, 2] x [2, 128]: about 14 us)."""
    zero = np.float32(0.0)
    features = x.shape[1]
    last = features - 1
    w0, w1, w2, w3 = w[0], w[min(1, last)], w[min(2, last)], w[min(3, last)]
    for r in range(x.shape[0]):
        row, o = x[r], out[r]
        x0 = row[0]
        if features == 1:
            for c in range(o.size):
                o[c] = _fma32(x0, w0[c], zero) + zero
        elif features == 2:
            x1 = row[1]
            for c in range(o.size):
                o[c] = _fma32(x1, w1[c], _fma32(x0, w0[c], zero)) + zero
        elif features == 3:
            x1, x2 = row[1], row[2]
            for c in range(o.size):
                o[c] = _fma32(x2, w2[c], _fma32(x1, w1[c], _fma32(x0, w0[c], zero))) + zero
        else:
            x1, x2, x3 = row[1], row[2], row[3]
            for c in range(o.size):
                o[c] = _fma32(x3, w3[c], _fma32(x2, w2[c], _fma32(x1, w1[c], _fma32(
                    x0, w0[c], zero)))) + zero


def _tanh_loop(gemm, tanh, tanh_data, w_h, bias, h0, h_all, hw):
    call = np.empty(5, np.int64)
    for t in range(h_all.shape[0]):
        _recurrent_input(gemm, h0 if t == 0 else h_all[t - 1], w_h, bias, hw, h_all[t])
        _tanh(tanh, tanh_data, h_all[t], h_all[t], call)


def _tanh_bptt(gemm, dh_all, dz, w_ht, dh, dh_next):
    for t in range(dz.shape[0] - 1, -1, -1):
        for b in range(dz.shape[1]):
            for k in range(dz.shape[2]):
                dh[b, k] = dh_all[t, b, k] + dh_next[b, k]
                dz[t, b, k] = dh[b, k] * dz[t, b, k]
        _gemm(gemm, dz[t], w_ht, dh_next)


def _lstm_loop(gemm, tanh, tanh_data, w_h, bias, c0, h0, all_gates, tanh_c, c_all, h_all, hw):
    # indexed by gate (no range with an offset, such as range(hidden, 4 * hidden), which the
    # compiler left scalar: 34 of the loop's 100 us of elementwise work at hidden 32, batch 32)
    call = np.empty(5, np.int64)
    batch, hidden = h_all.shape[1], h_all.shape[2]
    half = np.float32(0.5)
    gates = all_gates.reshape(all_gates.shape[0], batch, 4, hidden)
    for t in range(h_all.shape[0]):
        _recurrent_input(gemm, h0 if t == 0 else h_all[t - 1], w_h, bias, hw, all_gates[t])
        _tanh(tanh, tanh_data, all_gates[t], all_gates[t], call)
        c_prev = c0 if t == 0 else c_all[t - 1]
        c, g = c_all[t], gates[t]
        for b in range(batch):
            for gate in range(1, 4):  # i, f, o: 0.5 * tanh(z / 2) + 0.5
                for k in range(hidden):
                    g[b, gate, k] = g[b, gate, k] * half + half
            for k in range(hidden):
                c[b, k] = c_prev[b, k] * g[b, 2, k] + g[b, 0, k] * g[b, 1, k]
        _tanh(tanh, tanh_data, c, tanh_c[t], call)
        h, tc = h_all[t], tanh_c[t]
        for b in range(batch):
            for k in range(hidden):
                h[b, k] = tc[b, k] * g[b, 3, k]


def _lstm_bptt(gemm, all_gates, tanh_c, c0, c_all, dh_all, dc_all, has_dc, w_ht, dgates,
               dh_next, dc_next):
    # The local derivatives that the numpy loop computes for all steps before its loop are
    # computed here per element when needed, by the same operations in the same order. One
    # loop per gate gradient: a loop writing all four was scalar code (the compiler gives up
    # checking that many arrays for overlap), 2.5 of a step's 3 us at hidden 32, batch 32.
    batch, hidden = dh_next.shape
    one = np.float32(1.0)
    gates = all_gates.reshape(all_gates.shape[0], batch, 4, hidden)
    dh = np.empty((batch, hidden), np.float32)
    dc = np.empty((batch, hidden), np.float32)
    for t in range(dh_all.shape[0] - 1, -1, -1):
        c_prev = c0 if t == 0 else c_all[t - 1]
        g, tc, dg, dh_in, dc_in = gates[t], tanh_c[t], dgates[t], dh_all[t], dc_all[t]
        for b in range(batch):
            for k in range(hidden):
                dh_k = dh_in[b, k] + dh_next[b, k]
                dc_k = dh_k * (g[b, 3, k] * (one - tc[b, k] * tc[b, k]))
                if has_dc:
                    dc_k += dc_in[b, k]
                dc_k += dc_next[b, k]
                dh[b, k], dc[b, k] = dh_k, dc_k
                dc_next[b, k] = dc_k * g[b, 2, k]
            for k in range(hidden):  # j
                dg[b, 0, k] = dc[b, k] * (g[b, 1, k] * (one - g[b, 0, k] * g[b, 0, k]))
            for k in range(hidden):  # i
                dg[b, 1, k] = dc[b, k] * ((g[b, 0, k] * g[b, 1, k]) * (one - g[b, 1, k]))
            for k in range(hidden):  # f
                dg[b, 2, k] = dc[b, k] * ((c_prev[b, k] * g[b, 2, k]) * (one - g[b, 2, k]))
            for k in range(hidden):  # o
                dg[b, 3, k] = dh[b, k] * ((tc[b, k] * g[b, 3, k]) * (one - g[b, 3, k]))
        _gemm(gemm, dg.reshape(batch, 4 * hidden), w_ht, dh_next)


def _lstm_grad(gemm, x, h0, h_all, all_gates, tanh_c, c0, c_all, dh_all, dc_all, has_dc, kernel,
               xh, w_ht, dgates, dh_next, dc_next, dweights, dkernel, dbias):
    """rnn._rnn_grad_forward's LSTM part in one call (no numpy call between the loops): the
    step inputs, the recurrent weights transposed, BPTT, the weights' gradient (the GEMM numpy
    makes of xh.T @ dgates) and its columns back in TF's gate order."""
    time, batch, features = x.shape
    _step_inputs(x, h0, h_all, xh)
    _recurrent_weights_t(kernel, features, w_ht)
    _lstm_bptt(gemm, all_gates, tanh_c, c0, c_all, dh_all, dc_all, has_dc, w_ht, dgates, dh_next,
               dc_next)
    _gemm_tn(gemm, xh.reshape(time * batch, xh.shape[2]),
             dgates.reshape(time * batch, dgates.shape[2] * dgates.shape[3]), dweights)
    _tf_gate_order(dweights, dkernel, dbias)


# -- copies around the loops (each replaces numpy calls on rows of a few elements) -----------


def _lstm_weights(kernel, bias, forget_bias, kernel_out, bias_out):
    """rnn._lstm_weights into ``kernel_out``, ``bias_out``: the columns in the gate order j, i,
    f, o from TF's i, j, f, o, forget_bias added to f's bias, the sigmoid gates (i, f, o)
    halved; the same float32 operations as the numpy version."""
    hidden = kernel.shape[1] // 4
    half = np.float32(0.5)
    for r in range(kernel.shape[0]):
        src, dst = kernel[r], kernel_out[r]
        for k in range(hidden):
            dst[k] = src[hidden + k]
        for k in range(hidden):
            dst[hidden + k] = src[k] * half
        for k in range(2 * hidden, 4 * hidden):
            dst[k] = src[k] * half
    for k in range(hidden):
        bias_out[k] = bias[hidden + k]
        bias_out[hidden + k] = bias[k] * half
        bias_out[2 * hidden + k] = (bias[2 * hidden + k] + forget_bias) * half
        bias_out[3 * hidden + k] = bias[3 * hidden + k] * half


def _step_inputs(x, h0, h_all, xh):
    """rnn._step_inputs into ``xh``: concat([x_t, h_{t-1}, 1]) for every step."""
    features, hidden = x.shape[2], h_all.shape[2]
    one = np.float32(1.0)
    for t in range(x.shape[0]):
        h_prev = h0 if t == 0 else h_all[t - 1]
        for b in range(x.shape[1]):
            row, x_row, h_row = xh[t, b], x[t, b], h_prev[b]
            for f in range(features):
                row[f] = x_row[f]
            for k in range(hidden):
                row[features + k] = h_row[k]
            row[features + hidden] = one


def _recurrent_weights_t(kernel, features, w_ht):
    """rnn._recurrent_weights_t into ``w_ht`` [4 * hidden, hidden]: the kernel's rows from
    ``features`` on, columns in the gate order j, i, f, o, transposed."""
    hidden = w_ht.shape[1]
    for c in range(w_ht.shape[0]):
        src = c + hidden if c < hidden else c - hidden if c < 2 * hidden else c
        row = w_ht[c]
        for r in range(hidden):
            row[r] = kernel[features + r, src]


def _tf_gate_order(dweights, dkernel, dbias):
    """rnn._tf_gate_order: ``dweights``' rows but the last into ``dkernel``, its last into
    ``dbias``, the columns from the gate order j, i, f, o back to TF's i, j, f, o (the swap of
    the first two blocks is its own inverse)."""
    hidden = dweights.shape[1] // 4
    rows = dkernel.shape[0]
    for r in range(rows + 1):
        src = dweights[r]
        dst = dkernel[r] if r < rows else dbias
        for k in range(hidden):
            dst[k] = src[hidden + k]
        for k in range(hidden):
            dst[hidden + k] = src[k]
        for k in range(2 * hidden, 4 * hidden):
            dst[k] = src[k]


# callees before callers; the last four are loops that _lstm_grad calls, too
_HELPERS = {"_gemm": _gemm, "_gemm_tn": _gemm_tn, "_tanh": _tanh,
            "_recurrent_input": _recurrent_input, "_step_inputs": _step_inputs,
            "_recurrent_weights_t": _recurrent_weights_t, "_lstm_bptt": _lstm_bptt,
            "_tf_gate_order": _tf_gate_order}
_LOOPS = {"tanh_loop": _tanh_loop, "tanh_bptt": _tanh_bptt, "lstm_loop": _lstm_loop,
          "lstm_bptt": _lstm_bptt, "lstm_weights": _lstm_weights, "step_inputs": _step_inputs,
          "recurrent_weights_t": _recurrent_weights_t, "tf_gate_order": _tf_gate_order,
          "thin_product": _thin_product, "lstm_grad": _lstm_grad}
_state: dict = {}


def run(name, *args) -> bool:
    """Run a compiled loop; whether it ran. A loop that fails to compile for these argument
    types (numba types them on the first call, before running) leaves the numpy loops to run
    from then on."""
    try:
        _state["kernels"][name](*args)
    except Exception:  # noqa: BLE001 - an optional accelerator: the numpy loops remain
        _state["kernels"] = None
        return False
    return True


def kernels():
    """{name: compiled loop or copy} with numpy's ``gemm`` and ``tanh`` kernels, and ``thin``:
    whether ``thin_product`` gives numpy's bits here; or None."""
    if "kernels" in _state:
        return _state["kernels"]
    _state["kernels"] = None
    if not jit.enabled():
        return None
    try:
        gemm, (tanh, tanh_data) = _numpy_sgemm(), numpy_loops.ufunc_loop(np.tanh, np.float32)
    except (OSError, TypeError, ValueError):
        return None
    if gemm is None:
        return None
    # the loops call the helpers, so these become numba functions first (numba reads a
    # function's globals when it compiles it), callees before callers
    try:
        globals().update(_call_gemm=numpy_loops.c_caller(_GEMM_PARAMS),
                         _call_ufunc_loop=numpy_loops.c_caller(numpy_loops.UFUNC_LOOP_PARAMS),
                         _fma32=_fma32_intrinsic())
    except ImportError:
        return None
    for name, fn in _HELPERS.items():
        globals()[name] = jit.njit(fn)
        if globals()[name] is None:
            return None
    check = jit.njit(_check)
    try:
        if check is None or not _agrees_with_numpy(gemm, tanh, tanh_data, check):
            return None
    except Exception:  # noqa: BLE001 - an optional accelerator: the numpy loops remain
        return None
    loops = {name: jit.njit(fn) for name, fn in _LOOPS.items()}
    if None in loops.values():
        return None
    try:  # the input product as fma chains only where they give numpy's BLAS's bits
        thin = _thin_agrees(loops["thin_product"])
    except Exception:  # noqa: BLE001 - numpy's BLAS remains
        thin = False
    _state["kernels"] = {"gemm": gemm, "tanh": tanh, "tanh_data": tanh_data, "thin": thin,
                         **loops}
    return _state["kernels"]
