"""Normalization: ``nn.moments``, ``nn.batch_normalization``, ``nn.fused_batch_norm``,
``nn.l2_normalize``, ``nn.lrn``, and the stateful ``batch_norm`` that the layers and the runner
build on.

Composed from primitives as TF's Python composes them (``nn_impl.py``), so the gradients, first
and second order, follow from the primitives' rules:

- ``moments``: mean, and the mean squared difference from ``stop_gradient(mean)`` (TF's form; the
  gradient through the mean of a centred sum is zero anyway).
- ``batch_normalization``: ``x * inv + (offset - mean * inv)`` with ``inv = rsqrt(variance +
  epsilon) * scale``.
- ``fused_batch_norm`` (NHWC): normalizes with the batch's biased variance but returns the
  unbiased one (``n / (n - 1)``), which its callers average into the moving variance, as TF's
  kernel does; epsilon at least 1.001e-5 (TF1's wrapper).
"""

from __future__ import annotations

import numpy as np

from ..framework.errors import ShapeError
from ..framework.registry import apply, export, normalize_axis, register
from .array import shape, squeeze, stack
from .core import convert_to_tensor, stop_gradient
from .math import cast, maximum, pow_, rsqrt, square, subtract
from .reduce import reduce_mean, reduce_prod, reduce_sum


@export("moments")
def moments(x, axes, shift=None, name=None, keep_dims=None, keepdims=None):
    """``tf.nn.moments``: (mean, variance) of ``x`` over ``axes``."""
    keep = bool(keepdims if keepdims is not None else keep_dims)
    x = convert_to_tensor(x)
    axes = list(normalize_axis(axes, x.shape.ndims) or axes)
    # float16 inputs are averaged in float32, as TF does
    y = cast(x, "float32") if x.dtype.name == "float16" else x
    mean = reduce_mean(y, axes, keepdims=True)
    variance = reduce_mean(square(subtract(y, stop_gradient(mean))), axes, keepdims=True)
    if not keep:
        mean, variance = squeeze(mean, axes), squeeze(variance, axes)
    if y is not x:
        mean, variance = cast(mean, x.dtype), cast(variance, x.dtype)
    return mean, variance


@export("batch_normalization")
def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """``tf.nn.batch_normalization``: ``scale * (x - mean) / sqrt(variance + epsilon) + offset``
    (``offset`` and ``scale`` may be None)."""
    x = convert_to_tensor(x)
    inv = rsqrt(convert_to_tensor(variance, dtype=x.dtype) + variance_epsilon)
    if scale is not None:
        inv = inv * convert_to_tensor(scale, dtype=x.dtype)
    mean = convert_to_tensor(mean, dtype=x.dtype)
    shift = -mean * inv if offset is None else convert_to_tensor(offset, dtype=x.dtype) - mean * inv
    return x * inv + shift


def bessel(x, axes):
    """n / (n - 1) for the n elements of ``x`` over ``axes`` (a tensor when n is not static)."""
    dims = [x.shape.dims[a] for a in axes] if x.shape.dims is not None else [None]
    if all(d is not None for d in dims):
        n = int(np.prod(dims))
        return n / max(n - 1, 1)
    sizes = shape(x)
    n = cast(reduce_prod(stack([sizes[a] for a in axes])), x.dtype)
    return n / maximum(n - 1, 1)


@export("fused_batch_norm")
def fused_batch_norm(x, scale, offset, mean=None, variance=None, epsilon=0.001,
                     data_format="NHWC", is_training=True, name=None):
    """``tf.nn.fused_batch_norm`` over NHWC ``x``: (y, batch mean, batch variance) when
    training (the variance unbiased), (y, mean, variance) otherwise."""
    if data_format != "NHWC":
        raise ValueError(f"data_format {data_format!r} is not supported: NHWC only")
    x = convert_to_tensor(x)
    if x.shape.ndims not in (None, 4):
        raise ShapeError(f"fused_batch_norm: x must be NHWC (rank 4), got shape {x.shape}")
    epsilon = max(float(epsilon), 1.001e-5)
    if is_training:
        batch_mean, batch_var = moments(x, [0, 1, 2])
        y = batch_normalization(x, batch_mean, batch_var, offset, scale, epsilon)
        return y, batch_mean, batch_var * bessel(x, (0, 1, 2))
    if mean is None or variance is None:
        raise ValueError("fused_batch_norm: inference (is_training=False) needs mean and "
                         "variance")
    y = batch_normalization(x, mean, variance, offset, scale, epsilon)
    return y, convert_to_tensor(mean, dtype=x.dtype), convert_to_tensor(variance, dtype=x.dtype)


@export("l2_normalize")
def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """``tf.nn.l2_normalize``: ``x / sqrt(max(sum(x ** 2, axis), epsilon))``."""
    x = convert_to_tensor(x)
    axis = dim if axis is None else axis
    square_sum = reduce_sum(square(x), axis, keepdims=True)
    return x * rsqrt(maximum(square_sum, epsilon))


# -- local response normalization ----------------------------------------------------------


def _channel_window_sum(x, radius):
    """s[..., d] = sum of x[..., d - radius : d + radius + 1] (clipped at the edges)."""
    c = x.shape[-1]
    padded = np.zeros(x.shape[:-1] + (c + 1,), x.dtype)
    np.cumsum(x, axis=-1, out=padded[..., 1:])
    hi = np.minimum(np.arange(c) + radius + 1, c)
    lo = np.maximum(np.arange(c) - radius, 0)
    return padded[..., hi] - padded[..., lo]


# The window is symmetric, so the sum is its own adjoint: its gradient is the same window sum.
register("ChannelWindowSum", lambda x, radius: _channel_window_sum(x, radius),
         lambda inputs, radius: [(inputs[0].dtype, inputs[0].shape)],
         grad=lambda op, g: [apply("ChannelWindowSum", [g], name="ChannelWindowSum",
                                   radius=op.attrs["radius"])])


@export("local_response_normalization", "lrn")
def local_response_normalization(input, depth_radius=5, bias=1.0, alpha=1.0, beta=0.5,  # noqa: A002
                                 name=None):
    """``tf.nn.lrn``: ``input / (bias + alpha * sqr_sum) ** beta`` where ``sqr_sum[..., d]`` sums
    the squares of the channels ``d - depth_radius .. d + depth_radius`` (TF's LRN over the
    last axis of a 4-D input); composed of a channel window sum, so gradients of any order
    follow from the primitives' rules."""
    x = convert_to_tensor(input)
    if x.shape.ndims not in (None, 4):
        raise ShapeError(f"lrn: input must be 4-D, got shape {x.shape} ({x.name})")
    if not x.dtype.is_floating:
        raise TypeError(f"lrn: input must be float, got {x.dtype.name} ({x.name})")
    sqr_sum = apply("ChannelWindowSum", [square(x)], name="ChannelWindowSum",
                    radius=int(depth_radius))
    scale = bias + alpha * sqr_sum
    return x * pow_(scale, -beta)


lrn = local_response_normalization
