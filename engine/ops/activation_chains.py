"""A convolution's activation chains as one compiled pass each (``registry.CHAINS``; the plan
pass ``runtime/chain_fusion.py`` finds them):

- forward: the bias add and relu (``AddV2 -> Relu``), and with a 2x2 max pool after them
  (``AddV2 -> Relu -> MaxPool``: the relu image and the pooled one);
- gradient: the pool's gradient and relu's (``MaxPoolGrad -> ReluGrad``), with the bias's
  gradient, a sum over the image's rows (``-> SumToShapeOf``), and relu's gradient with that
  sum (``ReluGrad -> SumToShapeOf``).

Each op alone is a pass over an image-sized array (digits_cnn's [64, 8, 8, 32]: 131K elements,
each op 10-40 us, mostly memory traffic; the pool's gradient about 100 us); a chain's loop reads
its inputs once and writes what is read outside it. Per element the loops do the ops' own float
operations in their order: the add, relu as ``v if v > 0 or v != v else 0`` (numpy's maximum
with 0), the pool's ``max(max(max(x00, x01), x10), x11)`` with numpy's maximum, the pool's
gradient ``dy * 1`` at a window's first maximum and ``dy * 0`` elsewhere, relu's gradient
``g * 1`` or ``g * 0``, the bias sum rows added in order from zeros (the compiled ``sum_rows``'s
order): the same bits as the unfused ops (NaN payloads aside, as between numpy's loops).

The loops are numba's (``jit.WarmKernel``): after ``WARM_RUNS`` runs of a chain in a process,
only for C-contiguous float32/float64 arrays of at least ``MIN_ELEMENTS`` elements; anywhere
else the chain's ops run as they are. At two intra-op threads or more a large image's loop is
cut by batch items across the engine's workers (``_run``): the images' bits are one thread's,
a bias gradient's the parts' sums added in part order.
"""

from __future__ import annotations

import numpy as np

from ..framework import jit, threads, workers
from ..framework.registry import register_chain
from .windows_compiled import maximum_value, tiled_row

#: runs of a chain in a process before its compiled loop is used (a short run never compiles)
WARM_RUNS = 50
#: elements of the image from which a chain takes its compiled loop (the unfused ops' own
#: compiled loops start about there, so smaller models never start numba for these)
MIN_ELEMENTS = 16384
#: elements of the image from which a chain's loop is cut by batch items across the engine's
#: workers at two intra-op threads or more (a part handed to a worker costs about 10 us idle;
#: LeNet's chains over [64, 24, 24, 6] take 70-200 us at one thread)
SPLIT_MIN = 1 << 16
#: parts per thread (the threads take them in turn: one that starts late leaves its share)
PARTS_PER_THREAD = 2
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# -- the loops -------------------------------------------------------------------------------


def _relu_value(v, zero):
    """relu as numpy's ``maximum(v, 0)``: NaN stays, -0.0 gives 0.0."""
    return v if (v > zero or v != v) else zero


def _bias_relu(x, b, out):
    """``out = relu(x + b)`` over flat C-contiguous arrays of rows of ``b.size`` values, sixteen
    rows at a time against ``b`` repeated (a run the loop vectorizes)."""
    run = 16 * b.size
    zero = x.dtype.type(0)
    tiled = tiled_row(b, run)
    blocks = x.size // run
    for q in range(blocks):
        src = x[q * run:(q + 1) * run]
        dst = out[q * run:(q + 1) * run]
        for k in range(run):
            dst[k] = _relu_value(src[k] + tiled[k], zero)
    src = x[blocks * run:]
    dst = out[blocks * run:]
    for k in range(src.size):
        dst[k] = _relu_value(src[k] + tiled[k], zero)


def _bias_relu_pool(x, b, r, y):
    """``r = relu(x + b)`` (NHWC, even height and width) and ``y`` its 2x2 max pool, a pair of
    image rows at a time: the rows' relu values, then their windows' maxima in pooling.py's tap
    order."""
    n, h, w, c = x.shape
    oh, ow = y.shape[1], y.shape[2]
    zero = x.dtype.type(0)
    run = w * c
    tiled = tiled_row(b, run)
    for i in range(n):
        for yo in range(oh):
            xt, xb = x[i, 2 * yo].reshape(run), x[i, 2 * yo + 1].reshape(run)
            rt, rb = r[i, 2 * yo].reshape(run), r[i, 2 * yo + 1].reshape(run)
            for k in range(run):
                rt[k] = _relu_value(xt[k] + tiled[k], zero)
            for k in range(run):
                rb[k] = _relu_value(xb[k] + tiled[k], zero)
            out = y[i, yo].reshape(ow * c)
            for xo in range(ow):
                t0, t1 = rt[2 * xo * c:(2 * xo + 1) * c], rt[(2 * xo + 1) * c:(2 * xo + 2) * c]
                b0, b1 = rb[2 * xo * c:(2 * xo + 1) * c], rb[(2 * xo + 1) * c:(2 * xo + 2) * c]
                dst = out[xo * c:(xo + 1) * c]
                for ch in range(c):
                    top = maximum_value(t0[ch], t1[ch])
                    dst[ch] = maximum_value(maximum_value(top, b0[ch]), b1[ch])


def _pool_relu_grad(x, y, dy, dz, acc, summed):
    """``dz`` = relu's gradient of the 2x2 max pool's gradient, where the pool's input ``x`` is
    relu's output (``y`` the pool's output, ``dy`` its gradient; even height and width), and
    with ``summed`` each row of ``dz`` added into ``acc`` in order (the bias gradient)."""
    n, h, w, c = x.shape
    oh, ow = y.shape[1], y.shape[2]
    one, zero = dz.dtype.type(1), dz.dtype.type(0)
    run = w * c
    for i in range(n):
        for yo in range(oh):
            xt, xb = x[i, 2 * yo].reshape(run), x[i, 2 * yo + 1].reshape(run)
            zt, zb = dz[i, 2 * yo].reshape(run), dz[i, 2 * yo + 1].reshape(run)
            targets, grads = y[i, yo].reshape(ow * c), dy[i, yo].reshape(ow * c)
            for xo in range(ow):
                o, p, q = xo * c, 2 * xo * c, (2 * xo + 1) * c
                for ch in range(c):
                    t, g = targets[o + ch], grads[o + ch]
                    a, b, d, e = xt[p + ch], xt[q + ch], xb[p + ch], xb[q + ch]
                    h00 = a == t
                    h01 = (b == t) & (not h00)
                    taken = h00 | h01
                    h10 = (d == t) & (not taken)
                    h11 = (e == t) & (not (taken | h10))
                    zt[p + ch] = (g * (one if h00 else zero)) * (one if a > zero else zero)
                    zt[q + ch] = (g * (one if h01 else zero)) * (one if b > zero else zero)
                    zb[p + ch] = (g * (one if h10 else zero)) * (one if d > zero else zero)
                    zb[q + ch] = (g * (one if h11 else zero)) * (one if e > zero else zero)
            if summed:
                for s in range(w):
                    row = zt[s * c:(s + 1) * c]
                    for ch in range(c):
                        acc[ch] += row[ch]
                for s in range(w):
                    row = zb[s * c:(s + 1) * c]
                    for ch in range(c):
                        acc[ch] += row[ch]


def _relu_grad_sum(g, y, out, acc):
    """``out = g * (y > 0)`` over ``[rows, c]`` arrays and each row added into ``acc`` in order."""
    one, zero = out.dtype.type(1), out.dtype.type(0)
    c = acc.size
    for p in range(g.shape[0]):
        gr, yr, dst = g[p], y[p], out[p]
        for ch in range(c):
            v = gr[ch] * (one if yr[ch] > zero else zero)
            dst[ch] = v
            acc[ch] += v


_HELPERS = {"_relu_value": _relu_value, "maximum_value": maximum_value, "tiled_row": tiled_row}


class _Loop(jit.WarmKernel):
    """A chain's loop; its helpers become numba functions before it compiles (numba reads a
    function's globals when it compiles it)."""

    def ready(self):
        if self.compiled is None and self.runs >= self.after:
            for name, fn in _HELPERS.items():
                if globals()[name] is fn:
                    globals()[name] = jit.njit(fn) or fn
        return super().ready()


_BIAS_RELU = _Loop(_bias_relu, WARM_RUNS)
_BIAS_RELU_POOL = _Loop(_bias_relu_pool, WARM_RUNS)
_POOL_RELU_GRAD = _Loop(_pool_relu_grad, WARM_RUNS)
_RELU_GRAD_SUM = _Loop(_relu_grad_sum, WARM_RUNS)


# -- run-time conditions -------------------------------------------------------------------


def _takes(*arrays) -> bool:
    """Whether the compiled loops take these arrays: C-contiguous, one float dtype, an image of
    at least MIN_ELEMENTS first."""
    first = arrays[0]
    return (first.size >= MIN_ELEMENTS and first.dtype in _FLOATS
            and all(a.dtype == first.dtype and a.flags.c_contiguous for a in arrays))


def _run(loop, args, cut, acc=None, flat=False) -> bool:
    """``loop(*args)``; whether it ran. At two intra-op threads or more and an image of
    SPLIT_MIN elements or more, the arrays at positions ``cut`` are cut along their first axis
    (the batch) into parts that the calling thread and the workers take in turn
    (``workers.run_parts``; ``flat``: each part passed flattened). Every element an image loop
    writes is computed alike in whichever part holds it: one thread's bits. A sum into the
    array at position ``acc`` (the bias gradient) is made per part from zeros, the parts' sums
    then added in part order: other rounding than one thread, the same at every run (the cuts
    depend on the shapes and the thread count only)."""
    count = min(threads.intra_op_threads(), workers.SIZE + 1)
    n = args[cut[0]].shape[0]
    ranges = workers.ranges(n, count * PARTS_PER_THREAD) \
        if count > 1 and args[cut[0]].size >= SPLIT_MIN else []
    if len(ranges) < 2:
        whole = [a.reshape(-1) if flat and i in cut else a for i, a in enumerate(args)]
        return loop(*whole)
    compiled = loop.ready()
    if compiled is None:
        return False
    total = args[acc] if acc is not None else None
    partial = np.zeros((len(ranges),) + total.shape, total.dtype) if total is not None else None
    parts = []
    for k, (lo, hi) in enumerate(ranges):
        part = list(args)
        for i in cut:
            part[i] = args[i][lo:hi].reshape(-1) if flat else args[i][lo:hi]
        if acc is not None:
            part[acc] = partial[k]
        parts.append(tuple(part))
    try:
        workers.run_parts(compiled, parts, count)
    except Exception:  # noqa: BLE001 - e.g. a type numba cannot compile: the ops run apart
        loop.compiled = False
        return False
    if acc is not None:
        np.copyto(total, partial[0])
        for p in partial[1:]:
            total += p
    return True


def _pooled_2x2(x, y) -> bool:
    """x [n, h, w, c] with even h and w, y its 2x2 pool's shape."""
    n, h, w, c = x.shape
    return h % 2 == 0 and w % 2 == 0 and y.shape == (n, h // 2, w // 2, c)


# -- the chains' makers (called when a plan is compiled) -----------------------------------


def _links(positions, *members) -> bool:
    """Whether each of these chain members reads the previous one's output as its first input
    and no other (relu's gradient as ``g``, not ``y``; a sum's ``g``, not ``like``)."""
    return all(positions[k][0] is None and None not in positions[k][1:] for k in members)


def _static_channels(add) -> int | None:
    """The channel count of an AddV2 of a vector along its image's last axis, else None."""
    x, b = add.inputs
    if b.shape.ndims != 1 or (x.shape.ndims or 0) < 2 or x.dtype != b.dtype \
            or not x.dtype.is_floating:
        return None
    c = x.shape.dims[-1]
    return c if c is not None and c == b.shape.dims[0] else None


def _tiles_2x2(pool) -> bool:
    return pool.attrs.get("ksize") == (2, 2) and pool.attrs.get("strides") == (2, 2) and \
        pool.attrs.get("padding") in ("VALID", "SAME") and pool.inputs[0].shape.ndims == 4


def _bias_relu_maker(ops, positions, exported):
    add, _ = ops
    if exported[0] or _static_channels(add) is None or not _links(positions, 1):
        return None
    ix, ib = positions[0]

    def fast(*args):
        x, b = args[ix], args[ib]
        if not (_takes(x, b) and b.ndim == 1 and x.shape[-1] == b.size):
            return None
        out = np.empty_like(x)
        rows = (x.shape[0], -1)
        return (out,) if _run(_BIAS_RELU, (x.reshape(rows), b, out.reshape(rows)), (0, 2),
                              flat=True) else None

    return fast


def _bias_relu_pool_maker(ops, positions, exported):
    add, _, pool = ops
    if exported[0] or _static_channels(add) is None or not _tiles_2x2(pool) \
            or add.inputs[0].shape.ndims != 4 or not _links(positions, 1, 2):
        return None
    ix, ib = positions[0]
    keep_relu = exported[1]

    def fast(*args):
        x, b = args[ix], args[ib]
        if not (_takes(x, b) and x.ndim == 4 and b.shape == (x.shape[3],)
                and x.shape[1] % 2 == 0 and x.shape[2] % 2 == 0):
            return None
        r = np.empty_like(x)
        y = np.empty((x.shape[0], x.shape[1] // 2, x.shape[2] // 2, x.shape[3]), x.dtype)
        if not _run(_BIAS_RELU_POOL, (x, b, r, y), (0, 2, 3)):
            return None
        return (r, y) if keep_relu else (y,)

    return fast


def _pool_relu_grad_maker(ops, positions, exported):
    summed = len(ops) == 3
    if exported[0] or not _tiles_2x2(ops[0]) or not _links(positions, *range(1, len(ops))) \
            or (summed and not _sums_channels(ops[2])):
        return None
    ix, iy, idy = positions[0]
    ir = positions[1][1]
    keep_grad = exported[1]

    def fast(*args):
        x, y, dy = args[ix], args[iy], args[idy]
        if not (args[ir] is x and _takes(x, y, dy) and x.ndim == 4 and dy.shape == y.shape
                and _pooled_2x2(x, y)):
            return None  # relu's output pooled (an Identity between them returns it): else apart
        dz = np.empty_like(x)
        acc = np.zeros(x.shape[3] if summed else 0, x.dtype)
        if not _run(_POOL_RELU_GRAD, (x, y, dy, dz, acc, summed), (0, 1, 2, 3), acc=4):
            return None
        if not summed:
            return (dz,)
        return (dz, acc) if keep_grad else (acc,)

    return fast


def _sums_channels(sum_op) -> bool:
    """A SumToShapeOf of an image onto a vector of its last axis's 2-64 values (the compiled
    ``sum_rows``'s case, whose order the loops keep)."""
    g, like = sum_op.inputs
    c = like.shape.dims[0] if like.shape.ndims == 1 else None
    return c is not None and 2 <= c <= 64 and (g.shape.ndims or 0) >= 2 and g.shape.dims[-1] == c


def _relu_grad_sum_maker(ops, positions, exported):
    if not (_sums_channels(ops[1]) and _links(positions, 1)):
        return None
    ig, iy = positions[0]
    keep_grad = exported[0]

    def fast(*args):
        g, y = args[ig], args[iy]
        if not (_takes(g, y) and g.ndim >= 2 and y.shape == g.shape):
            return None
        c = g.shape[-1]
        out = np.empty_like(g)
        acc = np.zeros(c, g.dtype)
        if not _run(_RELU_GRAD_SUM, (g.reshape(-1, c), y.reshape(-1, c), out.reshape(-1, c), acc),
                    (0, 1, 2), acc=3):
            return None
        return (out, acc) if keep_grad else (acc,)

    return fast


register_chain(("AddV2", "Relu", "MaxPool"), _bias_relu_pool_maker)
register_chain(("AddV2", "Relu"), _bias_relu_maker)
register_chain(("MaxPoolGrad", "ReluGrad", "SumToShapeOf"), _pool_relu_grad_maker)
register_chain(("MaxPoolGrad", "ReluGrad"), _pool_relu_grad_maker)
register_chain(("ReluGrad", "SumToShapeOf"), _relu_grad_sum_maker)
