"""Image windows for the convolutions and pools (conv.py, pooling.py): their geometry, padding,
im2col and its adjoint col2im, and a convolution's windows and products cut by batch items
across the engine's workers at two threads or more.

Geometry (TF's ``GetWindowedOutputSize``): a filter of size k with dilation d covers
``(k - 1) * d + 1`` input positions. VALID: no padding, ``out = (n - k_eff) // s + 1``. SAME:
``out = ceil(n / s)``, padded by ``max((out - 1) * s + k_eff - n, 0)`` of which the smaller half
goes before. Explicit: ``[[0, 0], [top, bottom], [left, right], [0, 0]]`` as TF takes it.

im2col copies the padded image's windows into a ``[batch * out_h * out_w, kh * kw, in]`` array,
whose rows times the filter reshaped to ``[kh * kw * in, out]`` are a convolution's output;
col2im scatters rows back into an image (the input gradient).
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ..framework.errors import ShapeError
from . import split_gemm, windows_compiled

# -- geometry ------------------------------------------------------------------------------


def pair(value, what, rank4_name=None):
    """An int, or a list of 1, 2 or 4 ints (``[1, h, w, 1]`` NHWC), -> ``(h, w)``."""
    if isinstance(value, int | np.integer):
        return int(value), int(value)
    vals = [int(v) for v in value]
    if len(vals) == 1:
        return vals[0], vals[0]
    if len(vals) == 2:
        return tuple(vals)
    if len(vals) == 4:
        if vals[0] != 1 or vals[3] != 1:
            raise ValueError(f"{what} {list(value)}: the batch and channel entries must be 1 "
                             "(NHWC)")
        return vals[1], vals[2]
    raise ValueError(f"{what} must be an int or a list of 1, 2 or 4 ints, got {value!r}")


def padding_attr(padding):
    """'SAME' / 'VALID' (any case), or TF's explicit ``[[0, 0], [t, b], [l, r], [0, 0]]`` (or
    ``[[t, b], [l, r]]``) -> the op attribute: the string, or ``((t, b), (l, r))``."""
    if isinstance(padding, str):
        if padding.upper() not in ("SAME", "VALID"):
            raise ValueError(f"padding must be 'SAME', 'VALID' or a list of pairs, got {padding!r}")
        return padding.upper()
    pads = [tuple(int(p) for p in pr) for pr in padding]
    if len(pads) == 4:
        if pads[0] != (0, 0) or pads[3] != (0, 0):
            raise ValueError(f"explicit padding {padding!r}: the batch and channel dimensions "
                             "cannot be padded")
        pads = pads[1:3]
    if len(pads) != 2 or any(len(p) != 2 or min(p) < 0 for p in pads):
        raise ValueError(f"explicit padding must be [[0, 0], [top, bottom], [left, right], [0, 0]] "
                         f"of non-negative ints, got {padding!r}")
    return tuple(pads)


def window(n, k, s, d, padding, axis):
    """(out, pad_before, pad_after) along one spatial axis (``axis`` 0 or 1 of an explicit pad)."""
    k_eff = (k - 1) * d + 1
    if padding == "VALID":
        before = after = 0
    elif padding == "SAME":
        out = -(-n // s)
        total = max((out - 1) * s + k_eff - n, 0)
        before = total // 2
        after = total - before
    else:
        before, after = padding[axis]
    if n + before + after < k_eff:
        raise ShapeError(f"a window of {k_eff} (size {k}, dilation {d}) does not fit an input of "
                         f"{n} padded by {before} + {after}: computed output size would be "
                         "negative")
    return (n + before + after - k_eff) // s + 1, before, after


def out_dim(n, k, s, d, padding, axis):
    return None if n is None else window(n, k, s, d, padding, axis)[0]


def geometry(h, w, kh, kw, strides, dilations, padding):
    oh, pt, pb = window(h, kh, strides[0], dilations[0], padding, 0)
    ow, pl, pr = window(w, kw, strides[1], dilations[1], padding, 1)
    return oh, ow, ((pt, pb), (pl, pr))


def pad_image(x, pads, value=0):
    """x padded on H and W (the array itself when nothing is padded)."""
    (pt, pb), (pl, pr) = pads
    if not (pt or pb or pl or pr):
        return x
    n, h, w, c = x.shape
    out = np.empty((n, h + pt + pb, w + pl + pr, c), x.dtype)
    out[:, :pt], out[:, h + pt:], out[:, :, :pl], out[:, :, w + pl:] = value, value, value, value
    out[:, pt:pt + h, pl:pl + w] = x
    return out


def window_slices(i, j, oh, ow, strides, dilations):
    """The (H, W) slices of the padded image that filter tap (i, j) reads for every output."""
    (sh, sw), (dh, dw) = strides, dilations
    return (slice(i * dh, i * dh + sh * (oh - 1) + 1, sh),
            slice(j * dw, j * dw + sw * (ow - 1) + 1, sw))


def im2col(xp, kh, kw, oh, ow, strides, dilations):
    """The windows of a padded image as rows ``[batch * oh * ow, kh * kw, channels]``.

    Two copy strategies, measured on LeNet's shapes: with several channels one copy of the
    sliding-window view (its innermost run, a window row of all channels, is contiguous: 6 GB/s);
    with one channel that run would be kw floats, so each filter tap is copied as one contiguous
    slab of a tap-major array instead (4x faster there) and the rows are its transposed view.
    With the ``fast`` extra a compiled loop makes the one-channel slabs, split by batch item
    across the engine's workers with two threads or more (one thread, under load 15: 2.4-2.9x
    numpy's slab copies, digits' 8x8 images 24 -> 8 us, LeNet's 28x28 210 -> 88 us; several
    channels: a loop copying runs of kw * c values was 4x slower than numpy's one copy, and
    numpy's copies split across threads waited for the GIL between them).
    """
    n, c = xp.shape[0], xp.shape[3]
    p = n * oh * ow
    if (kh, kw) == (1, 1) and strides == (1, 1) and xp.shape[1:3] == (oh, ow):
        return xp.reshape(p, 1, c)
    if c == 1:
        taps = np.empty((kh, kw, n, oh, ow), xp.dtype)
        if xp.flags.c_contiguous and windows_compiled.run(
                "im2col_taps", xp.reshape(xp.shape[:3]), kh, kw, *strides, *dilations, 0, taps):
            return taps.reshape(kh * kw, p).T[:, :, None]
        for i in range(kh):
            for j in range(kw):
                hs, ws = window_slices(i, j, oh, ow, strides, dilations)
                taps[i, j] = xp[:, hs, ws, 0]
        return taps.reshape(kh * kw, p).T[:, :, None]
    view = windows_view(xp, kh, kw, oh, ow, strides, dilations)
    return np.ascontiguousarray(view).reshape(p, kh * kw, c)


def windows_view(xp, kh, kw, oh, ow, strides, dilations):
    """The windows of a padded image as a view ``[batch, oh, ow, kh, kw, channels]``."""
    (sh, sw), (dh, dw) = strides, dilations
    view = sliding_window_view(xp, ((kh - 1) * dh + 1, (kw - 1) * dw + 1), axis=(1, 2))
    view = view[:, :sh * (oh - 1) + 1:sh, :sw * (ow - 1) + 1:sw, :, ::dh, ::dw]
    return view.transpose(0, 1, 2, 4, 5, 3)


def im2col_product_parts(xp, w2, kh, kw, oh, ow, strides, dilations):
    """At two threads or more, a large convolution's windows and their product with the filter
    ``w2`` ``[kh * kw * c, out]`` cut by batch items (``split_gemm.cuts``): each part copies its
    items' windows into its rows (laid out as ``im2col`` lays them: one numpy copy, or for one
    channel the compiled tap-major slab loop) and multiplies them, on the calling thread or a
    worker, so that the copy is shared too and a part's rows are multiplied while in cache.
    (output rows, the windows as ``im2col`` returns them), or None: ``im2col``, then the
    product."""
    n, c = xp.shape[0], xp.shape[3]
    per = oh * ow
    parts = split_gemm.cuts(n, per, kh * kw * c, w2.shape[1])
    if parts is None:
        return None
    view = windows_view(xp, kh, kw, oh, ow, strides, dilations)
    out = np.empty((n * per, w2.shape[1]), np.result_type(xp, w2))
    if c == 1:  # tap-major: each tap's windows one contiguous slab
        windows = np.empty((kh, kw, n, oh, ow), xp.dtype)
        view = view[..., 0].transpose(3, 4, 0, 1, 2)
        rows = windows.reshape(kh * kw, n * per).T
        image = xp.reshape(xp.shape[:3]) if xp.flags.c_contiguous else None

        def part(lo, hi):
            if image is None or not windows_compiled.run_whole(
                    "im2col_taps", image[lo:hi], kh, kw, *strides, *dilations, lo, windows):
                np.copyto(windows[:, :, lo:hi], view[:, :, lo:hi])
            np.matmul(rows[lo * per:hi * per], w2, out=out[lo * per:hi * per])
    else:
        windows = np.empty((n, oh, ow, kh, kw, c), xp.dtype)
        rows = windows.reshape(n * per, kh * kw * c)

        def part(lo, hi):
            np.copyto(windows[lo:hi], view[lo:hi])
            np.matmul(rows[lo * per:hi * per], w2, out=out[lo * per:hi * per])
    split_gemm.run(part, parts)
    return out, rows.reshape(n * per, kh * kw, c)


def col2im(rows, image_shape, pads, kernel, out_hw, strides, dilations, split=True):
    """The adjoint of ``im2col``: rows ``[batch * oh * ow, kh * kw, channels]`` summed back into
    an unpadded NHWC image of ``image_shape``, tap after tap. With the ``fast`` extra one
    compiled loop over the rows (a copy first if they are not one block, as the depthwise
    kind's; ``split=False``: not cut across the workers); else numpy accumulates in a
    channel-major image, where each tap's slab is a run of contiguous rows (2x faster than NHWC
    for LeNet's shapes)."""
    (kh, kw), (oh, ow) = kernel, out_hw
    n, c = int(image_shape[0]), int(image_shape[3])
    (pt, pb), (pl, pr) = pads
    h, w = int(image_shape[1]), int(image_shape[2])
    image = np.zeros((n, h, w, c), rows.dtype)
    if (windows_compiled.run if split else windows_compiled.run_whole)(
            "col2im", rows.reshape(rows.shape[0], -1), kh, kw, pt, pl, *strides, *dilations, oh,
            ow, image):
        return image
    image = np.zeros((c, n, h + pt + pb, w + pl + pr), rows.dtype)
    for i in range(kh):
        for j in range(kw):
            hs, ws = window_slices(i, j, oh, ow, strides, dilations)
            image[:, :, hs, ws] += rows[:, i * kw + j, :].reshape(n, oh, ow, c).transpose(3, 0, 1, 2)
    return np.ascontiguousarray(image[:, :, pt:pt + h, pl:pl + w].transpose(1, 2, 3, 0))


def product_col2im_parts(dy2, w2t, image_shape, pads, kernel, out_hw, strides, dilations):
    """At two threads or more, a large input gradient cut by batch items
    (``split_gemm.cuts``): each part multiplies its items' output gradients ``dy2`` by the
    filter ``w2t`` ``[out, kh * kw * c]`` (their windows' gradients) and adds those back into
    its items' image (``col2im``), on the calling thread or a worker; None below that."""
    n, h, w, c = (int(d) for d in image_shape)
    per = out_hw[0] * out_hw[1]
    parts = split_gemm.cuts(n, per, dy2.shape[1], w2t.shape[1])
    if parts is None:
        return None
    image = np.empty((n, h, w, c), np.result_type(dy2, w2t))

    def part(lo, hi):
        cols = (dy2[lo * per:hi * per] @ w2t).reshape(-1, kernel[0] * kernel[1], c)
        image[lo:hi] = col2im(cols, (hi - lo, h, w, c), pads, kernel, out_hw, strides,
                              dilations, split=False)

    split_gemm.run(part, parts)
    return image


def padded_zeros(image_shape, pads, dtype):
    """Zeros shaped like an image of ``image_shape`` after padding."""
    (pt, pb), (pl, pr) = pads
    n, h, w, c = (int(d) for d in image_shape)
    return np.zeros((n, h + pt + pb, w + pl + pr, c), dtype)


def crop(xp, pads, image_shape):
    """The unpadded image inside a padded one."""
    (pt, _), (pl, _) = pads
    return xp[:, pt:pt + int(image_shape[1]), pl:pl + int(image_shape[2])]
