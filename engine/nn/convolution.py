"""``tf.nn.separable_conv2d`` and ``tf.nn.atrous_conv2d``: compositions of the convolution ops
(TF's nn_impl.separable_conv2d and nn_ops.atrous_conv2d)."""

from __future__ import annotations

from ..framework.errors import ShapeError
from ..ops.conv import conv2d, depthwise_conv2d
from ..ops.core import as_tensors


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
