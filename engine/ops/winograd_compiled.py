"""Winograd F(4x4, 3x3)'s tile transforms (``ops/winograd.py``), written once as row formulas
that both its numpy code and its compiled loops (numba, the ``fast`` extra) call.

A formula takes six (or four) rows and writes six (or four) rows: numpy calls it on whole slabs
of every tile at once, a compiled loop on one tile's rows of channels (so its inner loops run
over channels, contiguous). Each output element is computed by the same float operations in
the same order either way (Python's expression order, no fused multiply-add: ``framework/jit``),
so the two give the same bits and an op may switch between them at any run; ``kernel`` returns
None for the first ``WARM_RUNS`` requests of a process, so that tests and short runs never pay
numba's import and compilation. The constants come in ``k`` = [2, 4, 5, 8] of the data's dtype
(a Python number would make numba compute in float64).

The matrices (Lavin & Gray 2015, "Fast Algorithms for Convolutional Neural Networks", F(4x4,
3x3) with the points 0, 1, -1, 2, -2, infinity), applied along one axis of a tile at a time:

- ``input_rows``: ``B^T d`` for 6 input rows (``r0 = 4 d0 - 5 d2 + d4`` ... ``r5 = 4 d1 - 5 d3
  + d5``);
- ``output_rows``: ``A^T m`` for 6 rows of products, 4 output rows;
- ``grad_rows``: ``A y``, the adjoint of ``output_rows``: 4 rows of an output gradient, 6 rows.
"""

from __future__ import annotations

import numpy as np

from ..framework import jit

#: requests for a compiled loop in this process before it is used
WARM_RUNS = 50


def input_rows(d0, d1, d2, d3, d4, d5, k):
    """``B^T d``: 6 rows from 6 rows ``d`` (``k`` = [2, 4, 5, 8])."""
    two, four, five = k[0], k[1], k[2]
    a, b = d4 - d2, two * (d3 - d1)
    return (four * d0 - five * d2 + d4, (d3 + d4) - four * (d1 + d2),
            (d4 - d3) + four * (d1 - d2), a + b, a - b, four * d1 - five * d3 + d5)


def output_rows(m0, m1, m2, m3, m4, m5, k):
    """``A^T m``: 4 output rows from 6 rows of a tile's products."""
    two, four, eight = k[0], k[1], k[3]
    s12, d12, s34, d34 = m1 + m2, m1 - m2, m3 + m4, m3 - m4
    return (m0 + s12 + s34, d12 + two * d34, s12 + four * s34, d12 + eight * d34 + m5)


def grad_rows(y0, y1, y2, y3, k):
    """``A y``, the adjoint of ``output_rows``: 6 rows from 4 rows of an output gradient."""
    two, four, eight = k[0], k[1], k[3]
    s02, s13 = y0 + y2, y1 + y3
    p, q = y0 + four * y2, two * y1 + eight * y3
    return y0, s02 + s13, s02 - s13, p + q, p - q, y3


def _input_loop(xp, k, v, e):
    """``v`` ``[tiles, 36, c]`` = ``B^T d B`` of each 6x6 tile ``d`` of the padded image ``xp``
    ``[n, 4 th + 2, 4 tw + 2, c]`` (tiles every 4 positions); ``e`` scratch ``[36, c]``."""
    n, hp, wp, c = xp.shape
    th, tw = (hp - 2) // 4, (wp - 2) // 4
    for b in range(n):
        img = xp[b]
        for ty in range(th):
            for tx in range(tw):
                t = (b * th + ty) * tw + tx
                y, x, vt = 4 * ty, 4 * tx, v[t]
                for j in range(6):  # down each column of the tile: e[6 a + j]
                    d0, d1, d2 = img[y, x + j], img[y + 1, x + j], img[y + 2, x + j]
                    d3, d4, d5 = img[y + 3, x + j], img[y + 4, x + j], img[y + 5, x + j]
                    o0, o1, o2, o3, o4, o5 = e[j], e[6 + j], e[12 + j], e[18 + j], e[24 + j], e[30 + j]
                    for ch in range(c):
                        r = input_rows(d0[ch], d1[ch], d2[ch], d3[ch], d4[ch], d5[ch], k)
                        o0[ch], o1[ch], o2[ch], o3[ch], o4[ch], o5[ch] = r
                for a in range(6):  # along each row: v[t, 6 a + b]
                    i = 6 * a
                    d0, d1, d2, d3, d4, d5 = e[i], e[i + 1], e[i + 2], e[i + 3], e[i + 4], e[i + 5]
                    o0, o1, o2, o3, o4, o5 = vt[i], vt[i + 1], vt[i + 2], vt[i + 3], vt[i + 4], vt[i + 5]
                    for ch in range(c):
                        r = input_rows(d0[ch], d1[ch], d2[ch], d3[ch], d4[ch], d5[ch], k)
                        o0[ch], o1[ch], o2[ch], o3[ch], o4[ch], o5[ch] = r


def _output_loop(m, k, y, p):
    """``y`` ``[n, 4 th, 4 tw, c]`` = ``A^T m A`` of each tile's products ``m`` ``[36, tiles,
    c]``; ``p`` scratch ``[24, c]``."""
    n, th, tw, c = y.shape[0], y.shape[1] // 4, y.shape[2] // 4, y.shape[3]
    for b in range(n):
        img = y[b]
        for ty in range(th):
            for tx in range(tw):
                t = (b * th + ty) * tw + tx
                for j in range(6):  # down each column: p[6 i + j]
                    m0, m1, m2, m3, m4, m5 = (m[j, t], m[6 + j, t], m[12 + j, t], m[18 + j, t],
                                              m[24 + j, t], m[30 + j, t])
                    o0, o1, o2, o3 = p[j], p[6 + j], p[12 + j], p[18 + j]
                    for ch in range(c):
                        r = output_rows(m0[ch], m1[ch], m2[ch], m3[ch], m4[ch], m5[ch], k)
                        o0[ch], o1[ch], o2[ch], o3[ch] = r
                yy, xx = 4 * ty, 4 * tx
                for i in range(4):  # along each row: the image's row yy + i
                    o = 6 * i
                    m0, m1, m2, m3, m4, m5 = p[o], p[o + 1], p[o + 2], p[o + 3], p[o + 4], p[o + 5]
                    row = img[yy + i]
                    o0, o1, o2, o3 = row[xx], row[xx + 1], row[xx + 2], row[xx + 3]
                    for ch in range(c):
                        r = output_rows(m0[ch], m1[ch], m2[ch], m3[ch], m4[ch], m5[ch], k)
                        o0[ch], o1[ch], o2[ch], o3[ch] = r


def _grad_loop(dy, k, dm, e):
    """``dm`` ``[tiles, 36, c]`` = ``A g A^T`` of each 4x4 tile ``g`` of ``dy`` ``[n, 4 th,
    4 tw, c]``; ``e`` scratch ``[24, c]``."""
    n, th, tw, c = dy.shape[0], dy.shape[1] // 4, dy.shape[2] // 4, dy.shape[3]
    for b in range(n):
        img = dy[b]
        for ty in range(th):
            for tx in range(tw):
                t = (b * th + ty) * tw + tx
                y, x, mt = 4 * ty, 4 * tx, dm[t]
                for j in range(4):  # down each column: e[4 a + j]
                    g0, g1, g2, g3 = img[y, x + j], img[y + 1, x + j], img[y + 2, x + j], img[y + 3, x + j]
                    o0, o1, o2, o3, o4, o5 = e[j], e[4 + j], e[8 + j], e[12 + j], e[16 + j], e[20 + j]
                    for ch in range(c):
                        r = grad_rows(g0[ch], g1[ch], g2[ch], g3[ch], k)
                        o0[ch], o1[ch], o2[ch], o3[ch], o4[ch], o5[ch] = r
                for a in range(6):  # along each row: dm[t, 6 a + b]
                    i = 4 * a
                    g0, g1, g2, g3 = e[i], e[i + 1], e[i + 2], e[i + 3]
                    o = 6 * a
                    o0, o1, o2, o3, o4, o5 = mt[o], mt[o + 1], mt[o + 2], mt[o + 3], mt[o + 4], mt[o + 5]
                    for ch in range(c):
                        r = grad_rows(g0[ch], g1[ch], g2[ch], g3[ch], k)
                        o0[ch], o1[ch], o2[ch], o3[ch], o4[ch], o5[ch] = r


_HELPERS = {"input_rows": input_rows, "output_rows": output_rows, "grad_rows": grad_rows}
_LOOPS = {"input": _input_loop, "output": _output_loop, "grad": _grad_loop}
_state: dict = {"runs": 0}


def kernel(name):
    """The compiled loop ``name`` (``input``, ``output`` or ``grad``), or None: the numpy code
    runs (see the module's docstring)."""
    # the loops call the row formulas (winograd.py keeps the Python ones); each argument is its
    # own buffer (winograd.py allocates every output and scratch array), so LLVM may vectorize
    # the six rows in, six out (``jit.njit``'s noalias: 1.3-2x faster at 16-32 channels)
    return jit.warm_loop(_state, WARM_RUNS, globals(), _HELPERS, _LOOPS, name, noalias=True)


def run(name, *args) -> bool:
    """Run the compiled loop ``name``; whether it ran. One that fails is not tried again."""
    k = kernel(name)
    if k is None:
        return False
    try:
        k(*args)
    except Exception:  # noqa: BLE001 - an optional accelerator: the numpy code remains
        _state[name] = None
        return False
    return True


def scratch(rows, c, dtype):
    """A loop's scratch rows."""
    return np.empty((rows, c), dtype)
