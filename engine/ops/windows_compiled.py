"""Loops over image windows compiled with numba (the ``fast`` extra), bit-identical to the numpy
code of conv.py (col2im; im2col of one channel), pooling.py (MaxPool of
2x2 tiles, MaxPoolGrad), core.py (a bias gradient's sum) and math.py
(a bias added to an image; Relu and ReluGrad, which a convolution's output goes through).

numpy does these as one vectorized pass per filter tap over strided slabs, or as a reduction
whose inner loop is a handful of channels (a convolution's bias gradient, ``[batch, h, w, c] ->
[c]``, costs numpy 2 ns an element): at LeNet's sizes each costs several times its memory
traffic. These loops repeat the numpy code's float operations in the same order per element
(col2im and the max-pool gradient add each tap's contributions tap by tap, as numpy's passes do;
the sum adds whole rows in order, as numpy's reduction over leading axes does), so results equal
the numpy code's bit for bit and an op may switch between the two at any run (NaN signs aside,
which numpy's own loops do not keep alike). Measured on LeNet's shapes (one thread): col2im 660
-> 440 us (first version), 730 -> 220 us (position-major rows, under load 4), MaxPoolGrad 720 ->
330 us (general loop; the 2x2 loop 1.4x that), the bias sum 440 -> 110 us (then 1.5x with a
local accumulator), the bias add 290 -> 20 us and Relu 306 -> 15 us (under load 10-12). (im2col
of several channels and the general MaxPool as loops were no faster than numpy's copies, so they
stay numpy; MaxPool of tiling 2x2 windows is a loop, 2x; im2col of one channel, 2.4-2.9x.)

Loops index through views made per row (``row = x[b, r]``; ``row[k]``) so that every index in an
inner loop is a ``range`` variable: an index numba cannot prove non-negative gets a wraparound
check that keeps LLVM from vectorizing (a plain row copy ran 4x slower).

With two or more threads for an op (a session's ``intra_op_parallelism_threads``), a loop over
a large batch is cut by batch item (the elementwise ones by element ranges) and the parts run
at once on the calling thread and the engine's workers (``framework/workers.py``; the loops
release the GIL). Every output element is computed by the same operations in the same order
whichever part holds it, so the result is the same bits as one thread's. numba's own parallel
layer is OpenMP here, whose threads spin after each loop and starve the next matmul's BLAS
threads on shared cores; the pool's threads sleep.

``kernel(name)`` returns None (the numpy code runs) without numba, with ``GRADPIPE_NUMBA=0``, if
compiling fails, and for the first ``WARM_RUNS`` requests in a process, so that short runs and
the tests never pay numba's import and compilation (about a second; cached on disk afterwards).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from ..framework import jit, threads, workers

#: requests for a kernel in this process before compiled kernels are used
WARM_RUNS = 50


def _valid(lo_offset, stride, size, count):
    """The range [lo, hi) of positions k < count with 0 <= k * stride + lo_offset < size."""
    lo = 0
    while lo < count and lo * stride + lo_offset < 0:
        lo += 1
    hi = count
    while hi > lo and (hi - 1) * stride + lo_offset >= size:
        hi -= 1
    return lo, hi


def _col2im(rows, kh, kw, pt, pl, sh, sw, dh, dw, oh, ow, image):
    """The adjoint of im2col: ``rows`` ``[positions, taps * channels]`` (a window's taps, each
    its channels, as conv.py's input-gradient product leaves them) added into ``image`` (zeros
    on entry, NHWC, unpadded, flattened to one axis of ``n * h * w * c``); padding positions
    are dropped.

    Positions are visited last to first: an image element then receives its contributions tap
    after tap (a later window position reaches it through an earlier tap), the order of
    conv.py's numpy passes. Per position and filter row, the taps that land inside the image
    are one contiguous run of both the row and the image when the dilation is 1 (a run of
    ``kw * c`` values), else ``c`` values per tap."""
    n, h, w, c = image.shape
    flat = image.reshape(n * h * w * c)
    for b in range(n):
        for yy in range(oh):
            y = oh - 1 - yy
            for xx in range(ow):
                x = ow - 1 - xx
                src = rows[(b * oh + y) * ow + x]
                s0 = x * sw - pl
                lo, hi = _valid(s0, dw, w, kw)
                if hi <= lo:
                    continue
                for i in range(kh):
                    r = y * sh + i * dh - pt
                    if r < 0 or r >= h:
                        continue
                    base = ((b * h + r) * w + s0) * c
                    if dw == 1:
                        seg = src[(i * kw + lo) * c:(i * kw + hi) * c]
                        dst = flat[base + lo * c:base + hi * c]
                        for k in range(seg.size):
                            dst[k] += seg[k]
                        continue
                    for j in range(lo, hi):
                        seg = src[(i * kw + j) * c:(i * kw + j + 1) * c]
                        dst = flat[base + j * dw * c:base + (j * dw + 1) * c]
                        for k in range(c):
                            dst[k] += seg[k]


def _im2col_taps(xp, kh, kw, sh, sw, dh, dw, first, taps):
    """The windows of a padded one-channel image ``xp`` ``[batch, hp, wp]`` tap-major, as
    conv.py's im2col lays them out for one channel: ``taps[i, j, first + b, y, x]`` is
    ``xp[b, y * sh + i * dh, x * sw + j * dw]``, one output row a run of ``ow`` values."""
    n, oh, ow = xp.shape[0], taps.shape[3], taps.shape[4]
    for i in range(kh):
        for j in range(kw):
            for b in range(n):
                for y in range(oh):
                    src = xp[b, y * sh + i * dh, j * dw:]
                    dst = taps[i, j, first + b, y]
                    if sw == 1:
                        for x in range(ow):
                            dst[x] = src[x]
                    else:
                        for x in range(ow):
                            dst[x] = src[x * sw]


def _max_pool_grad(x, y, dy, kh, kw, pt, pl, sh, sw, tiled, first, dx):
    """``dx`` (zeros on entry) gets each output's gradient at the first position of its window
    (row-major) where x equals the maximum, in the float operations of pooling.py's numpy path:
    for windows that tile the image (``tiled``), hit * dy at every window position; else, where
    windows do not overlap, dy or 0 added; where they overlap, ``first`` (y's shape) receives
    the tap and the gradients are added tap after tap."""
    n, h, w, c = x.shape
    oh, ow = y.shape[1], y.shape[2]
    overlap = sh < kh or sw < kw
    found = np.zeros(c, np.bool_)
    for b in range(n):
        for yo in range(oh):
            for xo in range(ow):
                target, g, tap = y[b, yo, xo], dy[b, yo, xo], first[b, yo, xo]
                found[:] = False
                tap[:] = -1
                for i in range(kh):
                    r = yo * sh + i - pt
                    if r < 0 or r >= h:
                        continue
                    for j in range(kw):
                        s = xo * sw + j - pl
                        if s < 0 or s >= w:
                            continue
                        v, d = x[b, r, s], dx[b, r, s]
                        for ch in range(c):
                            hit = v[ch] == target[ch] and not found[ch]
                            found[ch] = found[ch] or hit
                            if tiled:
                                d[ch] = g[ch] * (1 if hit else 0)
                            elif not overlap:
                                d[ch] += g[ch] if hit else 0
                            elif hit:
                                tap[ch] = i * kw + j
    if not overlap:
        return
    for t in range(kh * kw):
        i, j = t // kw, t % kw
        for b in range(n):
            for yo in range(oh):
                for xo in range(ow):
                    for ch in range(c):
                        if first[b, yo, xo, ch] == t:
                            dx[b, yo * sh + i - pt, xo * sw + j - pl, ch] += dy[b, yo, xo, ch]


def maximum_value(a, b):
    """``np.maximum(a, b)`` of two floats: a NaN wins (the first if both are), ties give b
    (also a helper of activation_chains' loops)."""
    return a if (a > b) | (a != a) else b


def tiled_row(b, run):
    """``b`` repeated to ``run`` values (a multiple of ``b.size``): the bias row the add loops
    read against a run of image rows, so that the loop over the run vectorizes."""
    c = b.size
    tiled = np.empty(run, b.dtype)
    for k in range(run):
        tiled[k] = b[k % c]
    return tiled


def _max_pool_2x2(x, y, row):
    """MaxPool of 2x2 windows that tile the image (C-contiguous; ``row`` scratch of ``w * c``):
    per pair of image rows, ``max(max(max(x00, x01), x10), x11)`` in pooling.py's tap order
    with numpy's maximum, for every column (a run the loop vectorizes; half of it is windows
    that start at odd columns, not kept), then the windows' values copied out. LeNet's first
    pool: 2x faster than numpy's four passes over strided views."""
    n, h, w, c = x.shape
    oh, ow = y.shape[1], y.shape[2]
    run = (2 * ow - 1) * c
    for b in range(n):
        for yo in range(oh):
            top = x[b, 2 * yo].reshape(w * c)
            bottom = x[b, 2 * yo + 1].reshape(w * c)
            top_right, bottom_right = top[c:], bottom[c:]
            for k in range(run):
                row[k] = maximum_value(maximum_value(maximum_value(top[k], top_right[k]), bottom[k]),
                                  bottom_right[k])
            out = y[b, yo].reshape(ow * c)
            for xo in range(ow):
                src = row[2 * xo * c:(2 * xo + 1) * c]
                dst = out[xo * c:(xo + 1) * c]
                for ch in range(c):
                    dst[ch] = src[ch]


def _max_pool_grad_2x2(x, y, dy, dx):
    """MaxPoolGrad of 2x2 windows that tile the image (stride 2, no padding; C-contiguous
    arrays): each window's four gradients at once, ``dy * 1`` at the first maximum and
    ``dy * 0`` at the others, as the tiled numpy path computes them (about 1.4x faster than the
    general loop, which keeps a flag per channel across the window's taps). Rows and columns
    past the last window keep dx's zeros."""
    n, h, w, c = x.shape
    oh, ow = y.shape[1], y.shape[2]
    xf, df = x.reshape(x.size), dx.reshape(dx.size)
    yf, gf = y.reshape(y.size), dy.reshape(dy.size)
    one, zero = dx.dtype.type(1), dx.dtype.type(0)
    for b in range(n):
        for yo in range(oh):
            top = (b * h + 2 * yo) * w * c
            out = (b * oh + yo) * ow * c
            for xo in range(ow):
                for ch in range(c):
                    target, g = yf[out + xo * c + ch], gf[out + xo * c + ch]
                    i00 = top + 2 * xo * c + ch
                    i10 = i00 + w * c
                    h00 = xf[i00] == target
                    h01 = (xf[i00 + c] == target) & (not h00)
                    taken = h00 | h01
                    h10 = (xf[i10] == target) & (not taken)
                    h11 = (xf[i10 + c] == target) & (not (taken | h10))
                    df[i00] = g * (one if h00 else zero)
                    df[i00 + c] = g * (one if h01 else zero)
                    df[i10] = g * (one if h10 else zero)
                    df[i10 + c] = g * (one if h11 else zero)


def _sum_rows(a, out):
    """``out[c]`` = the sum of ``a[:, c]``, rows added in order (numpy's order for a sum over
    the leading axes of a C-contiguous array), into a local accumulator (1.5x faster than adding
    into ``out``, which the compiled loop reloads and stores at every row)."""
    acc = np.zeros(a.shape[1], a.dtype)
    for p in range(a.shape[0]):
        row = a[p]
        for ch in range(acc.size):
            acc[ch] += row[ch]
    for ch in range(acc.size):
        out[ch] = acc[ch]


def _add_rows(a, b, out):
    """``out = a + b`` for ``a`` and ``out`` flat C-contiguous arrays of rows of ``b.size``
    values (a bias added to an image): sixteen rows at a time against ``b`` repeated sixteen
    times, a run that the loop vectorizes; numpy's broadcast loops over one row of a few values
    at a time (LeNet's [64, 24, 24, 6] + [6]: 120 -> 20 us). One addition per element, in
    numpy's operand order: the same bits."""
    run = 16 * b.size
    tiled = tiled_row(b, run)
    blocks = a.size // run
    for q in range(blocks):
        src = a[q * run:(q + 1) * run]
        dst = out[q * run:(q + 1) * run]
        for k in range(run):
            dst[k] = src[k] + tiled[k]
    src = a[blocks * run:]
    dst = out[blocks * run:]
    for k in range(src.size):
        dst[k] = src[k] + tiled[k]


def _relu(x, out):
    """``out = np.maximum(x, 0)`` over flat arrays, numpy's values: NaN stays, -0.0 becomes
    0.0 (numpy's maximum returns its second operand on ties). numpy's loop costs about 20x
    this one on a convolution's output."""
    zero = x.dtype.type(0)
    for k in range(x.size):
        v = x[k]
        out[k] = v if (v > zero or v != v) else zero


def _relu_grad(g, y, out):
    """``out = g * (y > 0)`` over flat arrays, as math.py's ReluGrad multiplies (0 * inf or
    0 * NaN stays NaN, a negative g gives -0.0)."""
    one, zero = g.dtype.type(1), g.dtype.type(0)
    for k in range(g.size):
        out[k] = g[k] * (one if y[k] > 0 else zero)


_KERNELS = {"im2col_taps": _im2col_taps, "col2im": _col2im,
            "max_pool_grad": _max_pool_grad, "max_pool_2x2": _max_pool_2x2,
            "max_pool_grad_2x2": _max_pool_grad_2x2, "sum_rows": _sum_rows, "add_rows": _add_rows,
            "relu": _relu, "relu_grad": _relu_grad}
_HELPERS = {"_valid": _valid, "maximum_value": maximum_value, "tiled_row": tiled_row}


class _Split(NamedTuple):
    """How a loop's arguments are cut into parts that threads share: the arrays at ``cut``
    along their first axis, in proportion to the first of them (whose first axis, the batch, or
    the elements of a flat array, is cut at multiples of ``quantum(args)``), and a copy of each
    scratch array at ``scratch`` per part; the argument at ``offset`` is the part's first batch
    item (for an output written at it). ``min_size``: elements of the largest cut array from
    which it is worth it (a part handed to a worker costs some 10 us at idle)."""

    cut: tuple[int, ...]
    scratch: tuple[int, ...] = ()
    offset: int | None = None
    quantum: Callable = lambda args: 1
    min_size: int = 32768


#: the elementwise loops are cheap per element (LeNet's relu, 221K elements: 15-20 us)
_ELEMENTWISE_MIN = 1 << 20
_SPLITS = {"im2col_taps": _Split((0,), offset=7),
           "col2im": _Split((11, 0)),  # the image [n, h, w, c], then its rows [n * oh * ow, ...]
           "max_pool_grad": _Split((0, 1, 2, 10, 11)),
           "max_pool_2x2": _Split((0, 1), scratch=(2,)),
           "max_pool_grad_2x2": _Split((0, 1, 2, 3)),
           "add_rows": _Split((0, 2), quantum=lambda args: args[1].size,  # whole rows
                              min_size=_ELEMENTWISE_MIN),
           "relu": _Split((0, 1), quantum=lambda args: 64, min_size=_ELEMENTWISE_MIN),
           "relu_grad": _Split((0, 1, 2), quantum=lambda args: 64, min_size=_ELEMENTWISE_MIN)}
#: parts per thread a split loop is cut into (the threads take them in turn; under load 12,
#: LeNet's col2im and im2col: 2 slightly ahead of 1 and 4)
PARTS_PER_THREAD = 2
_state = {"runs": 0}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def kernel(name):
    """The compiled loop ``name``, or None: the numpy code runs (see the module's docstring)."""
    return jit.warm_loop(_state, WARM_RUNS, globals(), _HELPERS, _KERNELS, name)


def run(name, *args) -> bool:
    """Run a compiled loop over float32 or float64 arrays (the first argument's dtype); whether
    it ran. One that fails (numba types its arguments on the first call, before running) is not
    tried again."""
    return _run(name, args, min(threads.intra_op_threads(), workers.SIZE + 1))


def run_whole(name, *args) -> bool:
    """``run`` on the calling thread only, not cut: a part of a kernel that the workers
    already share."""
    return _run(name, args, 1)


#: elements from which a sum over rows is cut into partial sums at two threads or more
SUM_ROWS_SPLIT_MIN = 1 << 17


def sum_rows(a, out) -> bool:
    """``out`` = the sum of the rows of ``a`` ``[rows, c]`` by the compiled loop (numpy's order:
    one thread's bits); whether it ran. At two threads or more, a large one (a convolution's
    bias gradient: LeNet's first, [36864, 6]) is cut into row ranges whose partial sums the
    calling thread and the workers make, then added in part order: other rounding than one
    thread, the same at every run with the same count."""
    count = min(threads.intra_op_threads(), workers.SIZE + 1)
    if count < 2 or a.size < SUM_ROWS_SPLIT_MIN or a.dtype not in _FLOATS:
        return run("sum_rows", a, out)
    k = kernel("sum_rows")
    if k is None:
        return False
    cuts = workers.ranges(a.shape[0], count * PARTS_PER_THREAD)
    partial = np.empty((len(cuts), a.shape[1]), a.dtype)
    try:
        workers.run_parts(k, [(a[lo:hi], p) for (lo, hi), p in zip(cuts, partial)], count)
    except Exception:  # noqa: BLE001 - an optional accelerator: the numpy code remains
        _state["sum_rows"] = None
        return False
    np.copyto(out, partial[0])
    for p in partial[1:]:
        out += p
    return True


def _run(name, args, count) -> bool:
    if args[0].dtype not in _FLOATS:
        return False
    k = kernel(name)
    if k is None:
        return False
    try:
        workers.run_parts(k, _parts(name, args, count), count)
    except Exception:  # noqa: BLE001 - an optional accelerator: the numpy code remains
        _state[name] = None
        return False
    return True


def _parts(name, args, count) -> list[tuple]:
    """``args`` cut into ``PARTS_PER_THREAD`` argument tuples per thread of ``count`` (see
    ``_Split``); ``[args]`` for one thread, a loop that is not split, or a small one."""
    split = _SPLITS.get(name)
    if split is None or count < 2 or max(args[i].size for i in split.cut) < split.min_size:
        return [args]
    n = args[split.cut[0]].shape[0]
    if any(args[i].shape[0] % n for i in split.cut):
        return [args]
    parts = []
    for lo, hi in workers.ranges(n, count * PARTS_PER_THREAD, split.quantum(args)):
        part = list(args)
        for i in split.cut:
            per = args[i].shape[0] // n
            part[i] = args[i][lo * per:hi * per]
        for i in split.scratch:
            part[i] = args[i] if not parts else np.empty_like(args[i])
        if split.offset is not None:
            part[split.offset] = lo
        parts.append(tuple(part))
    return parts or [args]
