"""``tf.nn.separable_conv2d``, ``tf.nn.atrous_conv2d``, ``tf.nn.conv3d`` (and its backprops, its
own gradient) and the 3-D pools:
compositions of the 2-D convolution and pooling ops (TF's nn_impl.separable_conv2d and
nn_ops.atrous_conv2d; conv3d as one conv2d per depth tap over the depth slices folded into the
batch, summed, its filter gradient one conv2d filter gradient per tap; max_pool3d / avg_pool3d
as 2-D pools of every depth plane, then the max or mean over each depth window's planes inside
the input, which is TF's window: the box's count factors into depth and plane counts)."""

from __future__ import annotations

import numpy as np

from ..autodiff.gradients import gradients
from ..framework.errors import ShapeError
from ..framework.graph import Tensor
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import shape_tensor_dims
from ..ops.array import reshape, stack, transpose
from ..ops.conv import conv2d, conv2d_backprop_filter, depthwise_conv2d, out_dim
from ..ops.core import as_tensors, zeros
from ..ops.math import add_n
from ..ops.pooling import avg_pool, max_pool
from ..ops.reduce import reduce_max, reduce_mean
from ..ops.slicing import pad
from ..ops.strided_slice import strided_slice


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


def _conv3d_geometry(what, strides, padding, data_format, dilations):
    """(strides, dilations) as ``[d, h, w]`` from TF's 5-entry lists in ``data_format``'s order
    (NDHWC ``[1, d, h, w, 1]``, NCDHW ``[1, 1, d, h, w]``), and whether channels come first;
    checked, as TF's Conv3D checks them."""
    if data_format not in ("NDHWC", "NCDHW"):
        raise ValueError(f"{what}: data_format must be 'NDHWC' or 'NCDHW', got {data_format!r}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"{what}: padding must be SAME or VALID, got {padding!r}")
    first = data_format == "NCDHW"

    def spatial(values, name):
        given = [1] * 5 if values is None else [int(v) for v in values]
        ndhwc = [given[0], *given[2:], given[1]] if first and len(given) == 5 else given
        if len(ndhwc) != 5 or ndhwc[0] != 1 or ndhwc[4] != 1 or min(ndhwc) < 1:
            layout = "[1, 1, d, h, w]" if first else "[1, d, h, w, 1]"
            raise ValueError(f"{what}: {name} must be {layout} ({data_format}: 1 in the batch "
                             f"and channel dimensions), got {given}")
        return ndhwc[1:4]

    return spatial(strides, "strides"), spatial(dilations, "dilations"), first


def _depth_taps(x, kd, sd, dd, padding, what):
    """The depth planes of ``x`` (NDHWC, all but the batch known) that each of a filter's
    ``kd`` depth taps reads for the output planes, folded into the batch: ``kd`` tensors
    ``[batch * out_d, h, w, c]``, and ``out_d`` (TF's SAME or VALID windows; SAME pads the
    depth, the odd plane after)."""
    depth, height, width, channels = _volume(x, what)
    k_eff = (kd - 1) * dd + 1
    if padding == "SAME":
        out_d = -(-depth // sd)
        total = max((out_d - 1) * sd + k_eff - depth, 0)
        if total:
            x = pad(x, [[0, 0], [total // 2, total - total // 2], [0, 0], [0, 0], [0, 0]])
    else:
        out_d = (depth - k_eff) // sd + 1
        if out_d < 1:
            raise ShapeError(f"{what}: a filter of depth {kd} (dilation {dd}) does not fit an "
                             f"input of depth {depth}")
    return [reshape(strided_slice(x, (slice(None), slice(i * dd, i * dd + (out_d - 1) * sd + 1,
                                                          sd))), [-1, height, width, channels])
            for i in range(kd)], out_d


def _ndhwc(x):
    return transpose(x, [0, 2, 3, 4, 1])


def conv3d(input, filter=None, strides=None, padding=None, data_format="NDHWC",  # noqa: A002
           dilations=None, name=None, filters=None):
    """A 3-D convolution of ``input`` [batch, depth, height, width, in] (NDHWC; NCDHW: [batch,
    in, depth, height, width]) with ``filter`` [kd, kh, kw, in, out]; ``strides`` and
    ``dilations`` 5 entries in ``data_format``'s order, 1 in the batch and channel dimensions;
    SAME or VALID padding (TF's windows on every axis). One conv2d per depth tap over the
    planes it reads folded into the batch, summed. (TF's CPU kernel takes NDHWC and no
    dilation only; its GPU kernels take both.)"""
    what = "conv3d"
    x, k = as_tensors(input, filters if filter is None else filter)
    (sd, sh, sw), (dd, dh, dw), first = _conv3d_geometry(what, strides, padding, data_format,
                                                        dilations)
    if x.shape.ndims != 5 or k.shape.ndims != 5:
        raise ShapeError(f"conv3d: input must be 5-D and filter 5-D, got {x.shape} and {k.shape}")
    if first:
        x = _ndhwc(x)
    kd = k.shape.dims[0]
    if kd is None:
        raise ValueError(f"conv3d: the filter's depth must be known, got filter {k.shape}")
    taps, out_d = _depth_taps(x, kd, sd, dd, padding, what)
    outs = [conv2d(t, k[i], [1, sh, sw, 1], padding, dilations=[1, dh, dw, 1])
            for i, t in enumerate(taps)]
    out = add_n(outs) if len(outs) > 1 else outs[0]
    _, oh, ow, oc = out.shape.dims
    if first:
        return transpose(reshape(out, [-1, out_d, oh, ow, oc]), [0, 4, 1, 2, 3],
                         name=name or "Conv3D")
    return reshape(out, [-1, out_d, oh, ow, oc], name=name or "Conv3D")


def _static_sizes(sizes, what, name):
    """5 sizes known when the graph is built (conv3d needs them): a list, an array or a
    constant tensor."""
    dims = shape_tensor_dims(sizes).dims if isinstance(sizes, Tensor) else \
        [int(d) for d in np.ravel(sizes)]
    if dims is None or len(dims) != 5 or None in dims:
        raise ValueError(f"{what}: {name} must be 5 sizes known when the graph is built, got "
                         f"{sizes!r}")
    return dims


def _check_out_backprop(what, dy, expected, x_shape, k_shape, sizes_name):
    if not dy.shape.is_compatible_with(expected):
        raise ShapeError(f"{what}: out_backprop shape {dy.shape} does not fit input shape "
                         f"{x_shape} and filter shape {k_shape} (the {sizes_name}): expected "
                         f"{expected}")


def conv3d_backprop_input_v2(input_sizes, filter, out_backprop, strides, padding,  # noqa: A002
                             data_format="NDHWC", dilations=None, name=None):
    """The gradient of ``conv3d`` with respect to an input of ``input_sizes`` (5 sizes in
    ``data_format``'s order): conv3d's own gradient at zeros of those sizes (conv3d is linear
    in its input; only the zeros' shape is read, so no forward convolution runs)."""
    what = name or "conv3d_backprop_input_v2"
    k, dy = as_tensors(filter, out_backprop)
    _conv3d_geometry(what, strides, padding, data_format, dilations)
    x = zeros(_static_sizes(input_sizes, what, "input_sizes"), k.dtype)
    y = conv3d(x, k, strides, padding, data_format, dilations)
    _check_out_backprop(what, dy, y.shape, x.shape, k.shape, "input_sizes")
    return gradients(y, [x], grad_ys=dy)[0]


def conv3d_backprop_input(input, filter, out_backprop, strides, padding,  # noqa: A002
                          data_format="NDHWC", dilations=None, name=None):
    """TF's first Conv3DBackpropInput: the gradient of ``conv3d`` with respect to an input
    shaped like ``input`` (a 5-D tensor whose values are not read), or of the 5 sizes
    ``input`` holds (a 1-D int list or tensor, as ``conv3d_backprop_input_v2``)."""
    what = name or "conv3d_backprop_input"
    if not isinstance(input, Tensor) and np.ndim(input) == 1:
        sizes = input
    else:
        x = as_tensors(input)[0]
        sizes = x if x.shape.ndims == 1 and x.dtype.is_integer else x.shape.dims
    return conv3d_backprop_input_v2(sizes, filter, out_backprop, strides, padding, data_format,
                                    dilations, what)


def conv3d_backprop_filter_v2(input, filter_sizes, out_backprop, strides, padding,  # noqa: A002
                              data_format="NDHWC", dilations=None, name=None):
    """The gradient of ``conv3d`` with respect to a filter of ``filter_sizes``
    ``[depth, height, width, in, out]`` (also TF1's ``conv3d_backprop_filter``): per depth tap
    the conv2d filter gradient over the planes that tap reads, stacked (no forward
    convolution)."""
    what = name or "conv3d_backprop_filter_v2"
    x, dy = as_tensors(input, out_backprop)
    (sd, sh, sw), (dd, dh, dw), first = _conv3d_geometry(what, strides, padding, data_format,
                                                        dilations)
    sizes = _static_sizes(filter_sizes, what, "filter_sizes")
    if x.shape.ndims != 5:
        raise ShapeError(f"{what}: input must be 5-D, got {x.shape}")
    if first:
        x, dy = _ndhwc(x), (_ndhwc(dy) if dy.shape.ndims == 5 else dy)
    kd, kh, kw, c, oc = sizes
    taps, out_d = _depth_taps(x, kd, sd, dd, padding, what)
    _, height, width, _ = _volume(x, what)
    oh = out_dim(height, kh, sh, dh, padding, 0)
    ow = out_dim(width, kw, sw, dw, padding, 1)
    _check_out_backprop(what, dy, TensorShape([x.shape.dims[0], out_d, oh, ow, oc]), x.shape,
                        TensorShape(sizes), "filter_sizes")
    flat = reshape(dy, [-1, oh, ow, oc])
    grads = [conv2d_backprop_filter(t, [kh, kw, c, oc], flat, [1, sh, sw, 1], padding,
                                    dilations=[1, dh, dw, 1]) for t in taps]
    return stack(grads, name=name or "Conv3DBackpropFilterV2")


def conv3d_transpose(value, filter=None, output_shape=None, strides=None, padding="SAME",  # noqa: A002
                     data_format="NDHWC", name=None, input=None, filters=None,  # noqa: A002
                     dilations=None):
    """``tf.nn.conv3d_transpose``: the gradient of ``conv3d`` with respect to an input of
    ``output_shape``; ``filter`` is ``[depth, height, width, out, in]``."""
    return conv3d_backprop_input_v2(output_shape, filters if filter is None else filter,
                                    input if value is None else value, strides, padding,
                                    data_format, dilations, name or "conv3d_transpose")


def _volume(x, what):
    if x.shape.ndims != 5 or None in x.shape.dims[1:]:
        raise ValueError(f"{what}: input must be [batch, depth, height, width, channels] with all "
                         f"but the batch size known, got {x.shape}")
    return x.shape.dims[1:]


def _five(values, what, name):
    values = [int(v) for v in values]
    if len(values) != 5 or values[0] != 1 or values[4] != 1:
        raise ValueError(f"{what}: {name} must be [1, d, h, w, 1], got {values}")
    return values


def _depth_windows(depth, kd, sd, padding):
    """The input planes of each output plane's depth window (TF's SAME or VALID windows)."""
    if padding == "SAME":
        out_d = -(-depth // sd)
        before = max((out_d - 1) * sd + kd - depth, 0) // 2
    elif padding == "VALID":
        out_d, before = (depth - kd) // sd + 1, 0
    else:
        raise ValueError(f"padding must be SAME or VALID, got {padding!r}")
    if out_d < 1:
        raise ShapeError(f"a window of depth {kd} does not fit an input of depth {depth}")
    return [[p for p in range(d * sd - before, d * sd - before + kd) if 0 <= p < depth]
            for d in range(out_d)]


def _pool3d(pool2d, reduce, value, ksize, strides, padding, what, name):
    x = as_tensors(value)[0]
    depth, height, width, channels = _volume(x, what)
    _, kd, kh, kw, _ = _five(ksize, what, "ksize")
    _, sd, sh, sw, _ = _five(strides, what, "strides")
    planes = pool2d(reshape(x, [-1, height, width, channels]), [1, kh, kw, 1], [1, sh, sw, 1],
                    padding)
    _, oh, ow, _ = planes.shape.dims
    planes = reshape(planes, [-1, depth, oh, ow, channels])
    outs = [reduce(strided_slice(planes, (slice(None), slice(w[0], w[-1] + 1))), axis=1)
            for w in _depth_windows(depth, kd, sd, padding)]
    return stack(outs, axis=1, name=name)


def max_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """``tf.nn.max_pool3d``: the maximum of each [kd, kh, kw] window."""
    return _pool3d(max_pool, reduce_max, input, ksize, strides, padding, "max_pool3d",
                   name or "MaxPool3D")


def avg_pool3d(input, ksize, strides, padding, data_format="NDHWC", name=None):  # noqa: A002
    """``tf.nn.avg_pool3d``: the mean of each window's elements inside the input."""
    return _pool3d(avg_pool, reduce_mean, input, ksize, strides, padding, "avg_pool3d",
                   name or "AvgPool3D")
