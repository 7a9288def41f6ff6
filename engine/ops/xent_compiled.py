"""SparseSoftmaxCrossEntropyWithLogits' forward (the loss and backprop) as one compiled call
(the ``fast`` extra), with the numpy code's bits.

The numpy code (nn.py) is about fifteen numpy calls on a [batch, classes] array; in a training
step each costs several microseconds more than its arithmetic (digits_cnn's [64, 10]: 16 us warm,
45-50 us inside a step). This kernel does the same operations in one call: the rows' maxima and
sums through numpy's own maximum and add reduction loops (numpy's summation order), exp and log
through numpy's own loops over the same arrays (numpy's SIMD exp and log, whose bits libm's
would not give), the subtractions as the same float operations. The loops are found in the
ufunc objects (``framework/numpy_loops``) and checked once against numpy's calls.

``sparse_xent(logits, labels)`` is None (the numpy code runs) for the first ``WARM_RUNS`` calls
of a process, without numba, with ``GRADPIPE_NUMBA=0``, where numpy's loops are not found or
disagree, for arrays that are not C-contiguous float32/float64, and for a label out of range
(the numpy code raises TF's error).
"""

from __future__ import annotations

import numpy as np

from ..framework import jit, numpy_loops

#: calls in a process before the kernel is compiled (a short run never starts numba)
WARM_RUNS = 50
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
#: the ufuncs whose loops the kernel calls, and their positions in its ``loops``
_UFUNCS = (np.maximum, np.add, np.exp, np.log)
_MAXIMUM, _ADD, _EXP, _LOG = range(4)
#: the numba intrinsic calling numpy's loops (numpy_loops.c_caller), made before compiling
_call_loop = None
_state: dict = {}


def _unary(loops, k, x, out, call):
    """``out = ufunc(x)`` over contiguous arrays of the same size through numpy's inner loop
    ``k`` of ``loops``, called once over all of them as numpy calls it; ``call``: int64 scratch
    of 7."""
    call[0] = x.ctypes.data
    call[1] = out.ctypes.data
    call[2] = x.size
    call[3] = call[4] = x.itemsize
    _call_loop(loops[2 * k], (call.ctypes.data, call[2:].ctypes.data, call[3:].ctypes.data,
                              loops[2 * k + 1]))


def _reduce_row(loops, k, row, acc, i, call):
    """``acc[i] = ufunc.reduce(row)`` from the value in ``acc[i]``, through numpy's binary inner
    loop ``k`` of ``loops`` in its reduction form (the output is the first input, both with stride 0:
    numpy's pairwise summation for add), as numpy's reduction over a contiguous last axis calls
    it once per row."""
    out = acc[i:].ctypes.data
    call[0] = out
    call[1] = row.ctypes.data
    call[2] = out
    call[3] = row.size
    call[4] = 0
    call[5] = row.itemsize
    call[6] = 0
    _call_loop(loops[2 * k], (call.ctypes.data, call[3:].ctypes.data, call[4:].ctypes.data,
                              loops[2 * k + 1]))


def _sparse_xent(loops, rows, labels, loss, backprop, shifted):
    """Whether every label is in range; then ``loss`` [n] and ``backprop`` [n, depth] of the
    rows of logits as nn.py's numpy code computes them (``shifted``: scratch of rows' shape).
    ``loops``: numpy's loop and data addresses of maximum, add, exp and log for the rows'
    dtype (int64 [8])."""
    n, depth = rows.shape
    for i in range(n):
        if labels[i] < 0 or labels[i] >= depth:
            return False
    call = np.empty(7, np.int64)
    tops = np.full(n, -np.inf, rows.dtype)
    sums = np.zeros(n, rows.dtype)
    for i in range(n):
        _reduce_row(loops, _MAXIMUM, rows[i], tops, i, call)
        for j in range(depth):
            shifted[i, j] = rows[i, j] - tops[i]
    _unary(loops, _EXP, shifted, backprop, call)
    for i in range(n):
        _reduce_row(loops, _ADD, backprop[i], sums, i, call)
    _unary(loops, _LOG, sums, sums, call)
    one = rows.dtype.type(1)
    for i in range(n):
        loss[i] = sums[i] - shifted[i, labels[i]]
        for j in range(depth):
            backprop[i, j] = shifted[i, j] - sums[i]
    _unary(loops, _EXP, backprop, backprop, call)
    for i in range(n):
        backprop[i, labels[i]] -= one
    return True


def _check(loops, x, unary_out, tops, sums):
    """numpy's loops through the kernel's helpers: exp and log of ``x`` (flat), the maxima and
    sums of its rows (``x`` [n, d])."""
    call = np.empty(7, np.int64)
    _unary(loops, _EXP, x, unary_out[0], call)
    _unary(loops, _LOG, x, unary_out[1], call)
    for i in range(x.shape[0]):
        _reduce_row(loops, _MAXIMUM, x[i], tops, i, call)
        _reduce_row(loops, _ADD, x[i], sums, i, call)


_HELPERS = {"_unary": _unary, "_reduce_row": _reduce_row}


def _agrees(check, loops, dtype) -> bool:
    """The helpers over numpy's loops against numpy's own calls, bit for bit, on values with
    zeros of both signs, infinities, NaN, subnormals and rows of 1-130 values."""
    rng = np.random.default_rng(0)
    for depth in (1, 3, 10, 17, 130):
        x = (rng.standard_normal((40, depth)) * 30).astype(dtype)
        x.flat[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, np.finfo(dtype).tiny / 4][:x.size]
        out = np.empty((2,) + x.shape, dtype)
        tops, sums = np.full(40, -np.inf, dtype), np.zeros(40, dtype)
        with np.errstate(all="ignore"):
            check(loops, x, out, tops, sums)
            want = (np.exp(x), np.log(x), x.max(axis=-1, initial=-np.inf), x.sum(axis=-1))
        got = (out[0], out[1], tops, sums)
        if not all(np.array_equal(a, b, equal_nan=True) for a, b in zip(got, want)):
            return False
    return True


def _kernel(dtype):
    """(compiled forward, numpy's loops for ``dtype``) or None; made once per dtype."""
    if dtype in _state:
        return _state[dtype]
    _state[dtype] = None
    found = [numpy_loops.ufunc_loop(u, dtype) for u in _UFUNCS]
    if None in found or not jit.enabled():
        return None
    loops = np.array([a for pair in found for a in pair], np.int64)
    try:
        globals()["_call_loop"] = numpy_loops.c_caller(numpy_loops.UFUNC_LOOP_PARAMS)
        check = jit.njit_calling(globals(), _HELPERS, _check)
        if check is None or not _agrees(check, loops, dtype):
            return None
        forward = jit.njit(_sparse_xent)
    except Exception:  # noqa: BLE001 - an optional accelerator: the numpy code remains
        return None
    if forward is not None:
        _state[dtype] = (forward, loops)
    return _state[dtype]


def sparse_xent(logits, labels):
    """(loss, backprop) of nn.py's sparse cross-entropy, or None (see the module's docstring)."""
    runs = _state["runs"] = _state.get("runs", 0) + 1
    if runs <= WARM_RUNS:
        return None
    if not (logits.dtype in _FLOATS and logits.flags.c_contiguous and logits.size
            and labels.dtype.kind in "iu" and labels.size * logits.shape[-1] == logits.size):
        return None
    made = _kernel(logits.dtype)
    if made is None:
        return None
    forward, loops = made
    depth = logits.shape[-1]
    rows = logits.reshape(-1, depth)
    loss = np.empty(rows.shape[0], logits.dtype)
    backprop = np.empty_like(rows)
    try:
        ok = forward(loops, rows, labels.reshape(-1), loss, backprop, np.empty_like(rows))
    except Exception:  # noqa: BLE001 - e.g. a type numba does not compile: numpy's code remains
        _state[logits.dtype] = None
        return None
    return (loss.reshape(labels.shape), backprop.reshape(logits.shape)) if ok else None
