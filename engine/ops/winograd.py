"""Winograd F(4x4, 3x3) for 3x3 convolutions of stride 1 and dilation 1 (conv.py's ``Conv2D``
and its two gradient ops choose it where it measurably wins over im2col: ``applies``).

Lavin & Gray 2015, "Fast Algorithms for Convolutional Neural Networks": a 4x4 block of a
3x3 convolution's output is ``A^T [(G g G^T) * (B^T d B)] A`` for the 6x6 input tile ``d`` that
covers it and the 3x3 filter ``g`` (``*`` elementwise), 36 multiplications where the direct
form takes 144. Over channels, the elementwise products become 36 independent GEMMs, one per
tile position: ``M[p] = V[p] @ U[p]`` with ``V[p]`` ``[tiles, in]`` the transformed input
tiles' entry p (``V`` is stored tile-major, ``[tiles, 36, in]``: the products read strided
matrices, as fast) and ``U`` ``[36, in, out]`` the transformed filter, one batched matmul of
2.25x fewer FLOPs than im2col's GEMM (and no im2col copy). TF (through oneDNN and cuDNN) uses the same
algorithm for these shapes.

- Forward: ``V`` of the padded input (tiles every 4 positions, the last ones padded with zeros
  beyond the image), ``U = G g G^T`` (in float64, rounded once), ``M = V @ U``, the output
  ``A^T M A`` cut to the output's size. ``V`` is kept (the op's reserve) for the filter gradient.
- Input gradient: the same forward over the output gradient padded by ``2 - pad`` on each
  side, with the filter rotated by 180 degrees and its channels swapped (a stride-1
  convolution's input gradient is that full convolution).
- Filter gradient: the adjoint of the forward in ``g``: ``dU[p] = V[p]^T @ dM[p]`` with ``dM =
  A dy A^T`` of the output gradient's 4x4 tiles, then ``G^T dU G`` (float64).

The tile transforms are row formulas (``winograd_compiled``) run over all tiles at once by
numpy, or one tile at a time by compiled loops after a warm-up, with the same bits.

Accuracy: it rounds differently from im2col's dot products. Its error is bounded by the
transform's constants: with ``u`` the unit roundoff, each output differs from the exact
convolution by at most about ``(in + 16) * u`` times the same computation done in absolute
values (``|A|^T [sum over channels (|G| |g| |G|^T) * (|B|^T |d| |B|)] |A|``, the transforms'
entries up to 5 and 8 included); measured on random float32 inputs the worst error relative to
the output's scale is about 10x im2col's (tests/engine/test_winograd.py), as the literature
reports for F(4x4, 3x3) (Barabasz et al. 2020).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from . import winograd_compiled as compiled
from .winograd_compiled import grad_rows, input_rows, output_rows

#: ``G`` (6x3): the filter transform
G = np.array([[1 / 4, 0, 0], [-1 / 6, -1 / 6, -1 / 6], [-1 / 6, 1 / 6, -1 / 6],
              [1 / 24, 1 / 12, 1 / 6], [1 / 24, -1 / 12, 1 / 6], [0, 0, 1]])

#: the size rule (measured, see ``applies``): channels in and out at least this many, and their
#: product at least MIN_PRODUCT
MIN_CHANNELS = 16
MIN_PRODUCT = 512


def applies(kind, w_shape, strides, dilations, pads, dtype, out_hw) -> bool:
    """Whether a convolution is computed by Winograd F(4x4, 3x3) rather than im2col: a dense
    ``Conv2D`` with a 3x3 filter, stride and dilation 1, no side padded by more than 2 (the
    input gradient's padding ``2 - pad`` must not be negative), float32 or float64, and where
    it was measured to win (the three ops of a training step, one thread, batch 64): at least
    ``MIN_CHANNELS`` channels in and out with a product of ``MIN_PRODUCT`` (fewer leave the
    tile transforms, which cost per channel, larger than the GEMM time saved: [64, 8, 8, 8] ->
    16 channels took 1.1-1.3x im2col's time, 16 -> 16 about the same, 16 -> 32 0.55-0.95x), and
    4x4 tiles at least three quarters filled by the output (a 5x5 output needs 2x2 tiles of
    which 39% are used: 1.8x im2col's time; 7x7 uses 77%, 8x8 all)."""
    if not (kind == "Conv2D" and tuple(w_shape[:2]) == (3, 3) and tuple(strides) == (1, 1)
            and tuple(dilations) == (1, 1) and max(max(p) for p in pads) <= 2
            and np.dtype(dtype) in (np.float32, np.float64)
            and min(w_shape[2], w_shape[3]) >= MIN_CHANNELS
            and w_shape[2] * w_shape[3] >= MIN_PRODUCT):
        return False
    th, tw = tiles(*out_hw)
    return 4 * out_hw[0] * out_hw[1] >= 3 * 16 * th * tw


def tiles(out_h, out_w):
    """The number of 4x4 output tiles along H and W."""
    return -(-out_h // 4), -(-out_w // 4)


def _consts(dtype):
    return np.array([2, 4, 5, 8], dtype)


def transform_input(xp, th, tw):
    """``V`` ``[n * th * tw, 36, c]``, tile-major: ``B^T d B`` of the 6x6 tiles (every 4
    positions) of ``xp`` ``[n, 4 th + 2, 4 tw + 2, c]``; row ``6 a + b`` of a tile holds its
    entry (a, b). (Tile-major, a tile's 36 rows are written together, one run of 36 c values:
    3x faster in the compiled loop than into 36 rows ``[36, tiles, c]`` far apart; the
    products read ``V[:, p]`` as strided matrices.)"""
    n, c = xp.shape[0], xp.shape[3]
    k = _consts(xp.dtype)
    v = np.empty((n * th * tw, 36, c), xp.dtype)
    if compiled.run("input", xp, k, v, np.empty((36, c), xp.dtype)):
        return v
    tile = sliding_window_view(xp, (6, 6), axis=(1, 2))[:, ::4, ::4]  # [n, th, tw, c, 6, 6]
    cols = input_rows(*(tile[..., i, :] for i in range(6)), k)  # each [n, th, tw, c, 6 (b)]
    v6 = v.reshape(n, th, tw, 6, 6, c)
    for a in range(6):
        v6[:, :, :, a] = np.stack(input_rows(*(cols[a][..., j] for j in range(6)), k), axis=3)
    return v


def transform_output(m, n, th, tw):
    """``A^T M A`` of each tile's products ``m`` ``[36, n * th * tw, c]``: the output
    ``[n, 4 th, 4 tw, c]``."""
    c = m.shape[2]
    k = _consts(m.dtype)
    y = np.empty((n, 4 * th, 4 * tw, c), m.dtype)
    if compiled.run("output", m, k, y, np.empty((24, c), m.dtype)):
        return y
    m6 = m.reshape(6, 6, n, th, tw, c)
    rows = output_rows(*(m6[a] for a in range(6)), k)  # each [6 (j), n, th, tw, c]
    y6 = y.reshape(n, th, 4, tw, 4, c)
    for i in range(4):
        y6[:, :, i] = np.stack(output_rows(*(rows[i][j] for j in range(6)), k), axis=3)
    return y


def transform_grad(dy, th, tw):
    """``dM`` ``[n * th * tw, 36, c]`` (tile-major, as ``transform_input``'s): ``A g A^T`` of
    the 4x4 tiles ``g`` of ``dy`` ``[n, 4 th, 4 tw, c]`` (the adjoint of ``transform_output``)."""
    n, c = dy.shape[0], dy.shape[3]
    k = _consts(dy.dtype)
    dm = np.empty((n * th * tw, 36, c), dy.dtype)
    if compiled.run("grad", dy, k, dm, np.empty((24, c), dy.dtype)):
        return dm
    g = dy.reshape(n, th, 4, tw, 4, c)
    cols = grad_rows(*(g[:, :, i] for i in range(4)), k)  # each [n, th, tw, 4 (j), c]
    dm6 = dm.reshape(n, th, tw, 6, 6, c)
    for a in range(6):
        dm6[:, :, :, a] = np.stack(grad_rows(*(cols[a][:, :, :, j] for j in range(4)), k), axis=3)
    return dm


def transform_filter(w):
    """``U`` ``[36, in, out]`` = ``G g G^T`` of a ``[3, 3, in, out]`` filter, in float64 and
    rounded once to the filter's dtype."""
    half = (G @ w.astype(np.float64).reshape(3, -1)).reshape(6, 3, -1)  # G g, then (G g) G^T
    return np.matmul(G, half).reshape(36, w.shape[2], w.shape[3]).astype(w.dtype)


def _padded(x, before, shape):
    """``x`` inside zeros of ``shape`` from offset ``before`` (itself when it fills them)."""
    if x.shape == shape and before == (0, 0):
        return np.ascontiguousarray(x)
    out = np.zeros(shape, x.dtype)
    (top, left), (h, w) = before, x.shape[1:3]
    out[:, top:top + h, left:left + w] = x
    return out


def input_tiles(x, pads):
    """``V`` of ``x`` padded by ``pads`` ``((top, bottom), (left, right))``, and the output's
    size: ``(v, out_h, out_w)``."""
    n, h, w, c = x.shape
    (pt, pb), (pl, pr) = pads
    oh, ow = h + pt + pb - 2, w + pl + pr - 2
    th, tw = tiles(oh, ow)
    xp = _padded(x, (pt, pl), (n, 4 * th + 2, 4 * tw + 2, c))
    return transform_input(xp, th, tw), oh, ow


def conv2d(x, w, pads):
    """The convolution of NHWC ``x`` with a ``[3, 3, in, out]`` filter (stride 1), and its
    reserve: ``V`` as ``[4 * tiles, 9, in]`` (conv.py's reserve has im2col's rank and taps)."""
    v, oh, ow = input_tiles(x, pads)
    th, tw = tiles(oh, ow)
    y = transform_output(np.matmul(v.transpose(1, 0, 2), transform_filter(w)), x.shape[0], th, tw)
    if y.shape[1:3] != (oh, ow):
        y = np.ascontiguousarray(y[:, :oh, :ow])
    return y, v.reshape(-1, 9, x.shape[3])


def conv2d_backprop_input(w, dy, pads):
    """The gradient of ``conv2d`` with respect to its input: the full convolution of ``dy``
    with the filter rotated by 180 degrees, its channels swapped."""
    (pt, pb), (pl, pr) = pads
    return conv2d(dy, w[::-1, ::-1].transpose(0, 1, 3, 2), ((2 - pt, 2 - pb), (2 - pl, 2 - pr)))[0]


def conv2d_backprop_filter(x, dy, pads, reserve=None):
    """The gradient of ``conv2d`` with respect to its filter ``[3, 3, in, out]``, from the
    forward's reserve (``V``) when it is given and fits, else from ``x``."""
    n, oh, ow, out = dy.shape
    th, tw = tiles(oh, ow)
    c = x.shape[3]
    if reserve is not None and reserve.shape == (4 * n * th * tw, 9, c):
        v = reserve.reshape(-1, 36, c)
    else:
        v = input_tiles(x, pads)[0]
    dm = transform_grad(_padded(dy, (0, 0), (n, 4 * th, 4 * tw, out)), th, tw)
    du = np.matmul(v.transpose(1, 2, 0), dm.transpose(1, 0, 2)).astype(np.float64)  # [36, in, out]
    half = (G.T @ du.reshape(6, -1)).reshape(3, 6, -1)  # G^T dU, then (G^T dU) G
    return np.matmul(G.T, half).reshape(3, 3, c, out).astype(x.dtype)
