"""``tf.nn.separable_conv2d``, ``tf.nn.atrous_conv2d`` and ``tf.nn.conv3d``: compositions of
the 2-D convolution ops (TF's nn_impl.separable_conv2d and nn_ops.atrous_conv2d; conv3d as one
conv2d per depth tap over the depth slices folded into the batch, summed)."""

from __future__ import annotations

from ..framework.errors import ShapeError
from ..ops.array import reshape, strided_slice
from ..ops.conv import conv2d, depthwise_conv2d
from ..ops.core import as_tensors
from ..ops.math import add_n
from ..ops.slicing import pad


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding, rate=None,  # noqa: A002
                     name=None, data_format=None, dilations=None):
    """A depthwise convolution (``depthwise_filter`` ``[h, w, in, m]``) followed by a 1x1
    convolution (``pointwise_filter`` ``[1, 1, in * m, out]``) that mixes the channels."""
    x, dw, pw = as_tensors(input, depthwise_filter, pointwise_filter)
    if pw.shape.ndims is not None:
        dims = pw.shape.dims
        if list(dims[:2]) != [1, 1]:
            raise ShapeError(f"separable_conv2d: pointwise_filter must be [1, 1, in * m, out], "
                             f"got {pw.shape}")
        if dw.shape.ndims == 4 and None not in dw.shape.dims[2:] and dims[2] is not None \
                and dims[2] != dw.shape.dims[2] * dw.shape.dims[3]:
            raise ShapeError(f"separable_conv2d: pointwise_filter {pw.shape} must have "
                             f"in * m = {dw.shape.dims[2] * dw.shape.dims[3]} input channels "
                             f"(depthwise_filter {dw.shape})")
    depthwise = depthwise_conv2d(x, dw, strides, padding, rate=rate, data_format=data_format,
                                 dilations=dilations)
    return conv2d(depthwise, pw, [1, 1, 1, 1], "VALID", data_format=data_format or "NHWC",
                  name=name or "separable_conv2d")


def atrous_conv2d(value, filters, rate, padding, name=None):
    """A convolution with holes: the filter's taps ``rate`` apart, stride 1 (conv2d with
    dilations ``rate``)."""
    if int(rate) < 1:
        raise ValueError(f"atrous_conv2d: rate must be >= 1, got {rate}")
    return conv2d(value, filters, [1, 1, 1, 1], padding, dilations=[1, int(rate), int(rate), 1],
                  name=name or "atrous_conv2d")


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002
           dilations=None, name=None, filters=None):
    """A 3-D convolution of ``input`` [batch, depth, height, width, in] with ``filter``
    [kd, kh, kw, in, out], ``strides`` [1, sd, sh, sw, 1], SAME or VALID padding (TF's
    windows on every axis); no dilation."""
    x, k = as_tensors(input, filters if filter is None else filter)
    if data_format != "NDHWC":
        raise ValueError(f"conv3d: only data_format NDHWC is supported, got {data_format}")
    if dilations is not None and list(dilations) != [1] * 5:
        raise ValueError(f"conv3d: dilations are not supported, got {dilations}")
    strides = [1] * 5 if strides is None else [int(s) for s in strides]
    if len(strides) != 5 or strides[0] != 1 or strides[4] != 1:
        raise ValueError(f"conv3d: strides must be [1, sd, sh, sw, 1], got {strides}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"conv3d: padding must be SAME or VALID, got {padding!r}")
    if x.shape.ndims != 5 or k.shape.ndims != 5:
        raise ShapeError(f"conv3d: input must be 5-D and filter 5-D, got {x.shape} and {k.shape}")
    depth, height, width, channels = x.shape.dims[1:]
    kd = k.shape.dims[0]
    if None in (depth, height, width, channels, kd):
        raise ValueError(f"conv3d: all but the batch size must be known, got input {x.shape} "
                         f"and filter {k.shape}")
    sd = strides[1]
    if padding == "SAME":
        out_d = -(-depth // sd)
        total = max((out_d - 1) * sd + kd - depth, 0)
        x = pad(x, [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0], [0, 0]])
        depth += total
    else:
        out_d = (depth - kd) // sd + 1
        if out_d < 1:
            raise ShapeError(f"conv3d: a filter of depth {kd} does not fit an input of depth "
                             f"{depth}")
    taps = []
    for i in range(kd):
        planes = strided_slice(x, (slice(None), slice(i, i + (out_d - 1) * sd + 1, sd)))
        flat = reshape(planes, [-1, height, width, channels])
        taps.append(conv2d(flat, k[i], [1, strides[2], strides[3], 1], padding))
    out = add_n(taps) if len(taps) > 1 else taps[0]
    _, oh, ow, oc = out.shape.dims
    return reshape(out, [-1, out_d, oh, ow, oc], name=name or "Conv3D")
