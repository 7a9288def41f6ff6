"""Dropout: ``tf.nn.dropout`` (TF1's ``keep_prob`` or ``rate``, ``noise_shape``) and the switched
form that layers, Keras and the runner's expressions use.

One op draws the mask: ``DropoutMask(noise_shape, rate, training)`` is, when ``training`` is
true, ``(u >= rate) / (1 - rate)`` for u uniform in [0, 1) of ``noise_shape`` (TF's dropout_v2
formula), and ones otherwise, drawing nothing: evaluation steps leave the random stream where
training left it, so a run's training does not depend on how often it evaluates. The generator
is seeded from the graph seed and the op seed like every random op (and checkpointed with them).
The output is ``x * mask``, the mask broadcast along the dimensions where ``noise_shape`` is 1;
its gradient is the mask times the incoming gradient (the mask itself has none).
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import ShapeError
from ..framework.graph import Tensor
from ..framework.registry import apply, export, register
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import shape_tensor_dims
from . import dropout_compiled
from .array import shape
from .core import constant, convert_to_tensor, identity
from .learning_phase import training_tensor


def _mask_forward(state, op, noise_shape, rate, training):
    dtype = op.attrs["dtype"].np
    dims = tuple(int(d) for d in noise_shape)
    if not training:
        return np.broadcast_to(dtype.type(1), dims)
    rate = float(rate)
    if not 0.0 <= rate < 1.0:
        raise ValueError(f"dropout rate must be a number in [0, 1), got {rate}")
    rng = state.rng_for(op)
    scale = dtype.type(1.0 / (1.0 - rate))
    keep = None
    if dtype == np.float32:
        mask = _mask_compiled(rng, dims, rate, scale)
        if mask is not None:
            return mask
        keep = _kept_from_bits(rng, dims, rate)
    if keep is None:
        u = rng.random(dims, dtype=np.float32 if dtype == np.float32 else np.float64)
        keep = u >= rate
    return np.multiply(keep, scale, dtype=dtype)


#: 2 ** 24: a float32 uniform is ``(bits >> 8) / 2 ** 24`` for 32 random bits
_F32_STEPS = 1 << 24


def _kept_from_bits(rng, dims, rate):
    """``rng.random(dims, dtype=float32) >= rate`` from the same random bits without making the
    floats (a third less time): numpy's float32 uniform is ``(b >> 8) * 2 ** -24`` for the next
    32 bits b, which PCG64 takes as the low then the high half of each 64-bit output, and the
    comparison is with rate as a float32, so ``u >= rate`` is ``b >= ceil(rate * 2 ** 24) << 8``.
    None where that does not hold exactly: another bit generator, a half output buffered, an
    odd count (which would leave one), a threshold beyond 32 bits."""
    bits = rng.bit_generator
    threshold = _raw_threshold(bits, math.prod(dims), rate)
    if threshold is None or bits.state["has_uint32"]:
        return None
    raw = bits.random_raw(math.prod(dims) // 2).view(np.uint32)
    return (raw >= np.uint32(threshold)).reshape(dims)


def _raw_threshold(bits, n, rate):
    """The 32-bit threshold ``ceil(rate * 2 ** 24) << 8`` the raw bits are compared with (as
    ``_kept_from_bits`` says), or None where the comparison does not give numpy's uniform's
    mask: another bit generator than PCG64, an odd count, a threshold beyond 32 bits."""
    threshold = math.ceil(float(np.float32(rate)) * _F32_STEPS)
    if n % 2 or threshold >= _F32_STEPS or not isinstance(bits, np.random.PCG64):
        return None
    return threshold << 8


def _mask_compiled(rng, dims, rate, scale):
    """The float32 mask of ``_kept_from_bits`` times ``scale`` drawn by dropout_compiled's loop
    (the same values, the generator left in the same state), or None where that loop is not
    used (see dropout_compiled)."""
    bits = rng.bit_generator
    n = math.prod(dims)
    threshold = _raw_threshold(bits, n, rate)
    flat = None if threshold is None else dropout_compiled.draw(bits, n, threshold, scale)
    return None if flat is None else flat.reshape(dims)


def _mask_infer(inputs, dtype, seed):
    noise_shape, rate, training = inputs
    if not noise_shape.dtype.is_integer or noise_shape.shape.ndims not in (None, 1):
        raise ShapeError(f"noise_shape must be a 1-D integer tensor, got {noise_shape!r}")
    if rate.shape.ndims not in (None, 0):
        raise ShapeError(f"dropout rate must be a scalar, got shape {rate.shape} ({rate.name})")
    if training.dtype != _dtypes.bool_ or training.shape.ndims not in (None, 0):
        raise TypeError(f"training must be a bool scalar, got {training.dtype.name} of shape "
                        f"{training.shape} ({training.name})")
    return [(dtype, shape_tensor_dims(noise_shape))]


register("DropoutMask", _mask_forward, _mask_infer, stateful=True)


def _rate(keep_prob, rate):
    """TF1's two spellings -> the rate (a Python float or a tensor); exactly one is given."""
    if (keep_prob is None) == (rate is None):
        raise ValueError("dropout: give exactly one of keep_prob and rate")
    if rate is None:
        if isinstance(keep_prob, numbers.Real):
            if not 0.0 < keep_prob <= 1.0:
                raise ValueError(f"keep_prob must be a scalar tensor or a float in the range "
                                 f"(0, 1], got {keep_prob}")
            return 1.0 - float(keep_prob)
        return 1.0 - convert_to_tensor(keep_prob)
    if isinstance(rate, numbers.Real) and not 0.0 <= rate < 1.0:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate}")
    return float(rate) if isinstance(rate, numbers.Real) else rate


def _noise_shape(x, noise_shape):
    if noise_shape is None:
        return constant(np.asarray(x.shape.as_list(), np.int32)) if x.shape.is_fully_defined() \
            else shape(x)
    if isinstance(noise_shape, Tensor):
        return noise_shape
    dims = list(noise_shape)
    if x.shape.dims is not None:
        TensorShape(dims)  # validates ints / None
        if len(dims) != len(x.shape.dims):
            raise ShapeError(f"noise_shape {dims} must have the rank of x {x.shape}")
        dims = [d if d is not None else x.shape.dims[i] for i, d in enumerate(dims)]
    if any(d is None for d in dims):
        raise ShapeError(f"noise_shape {noise_shape} has unknown dimensions that x {x.shape} "
                         "does not fix")
    return constant(np.asarray(dims, np.int32), name="noise_shape")


def _dropped(x, rate, noise_shape, seed, training, name):
    x = convert_to_tensor(x)
    if not x.dtype.is_floating:
        raise TypeError(f"dropout: x must be a float tensor, got {x.dtype.name} ({x.name})")
    rate_t = convert_to_tensor(rate, preferred_dtype=x.dtype)
    mask = apply("DropoutMask", [_noise_shape(x, noise_shape), rate_t,
                                 convert_to_tensor(training)],
                 name=f"{name}/mask", dtype=x.dtype, seed=seed)
    return x * mask


def nn_dropout(x, keep_prob=None, noise_shape=None, seed=None, name="dropout", rate=None):
    """``tf.nn.dropout``: each element (or each slice along the dims where ``noise_shape`` is 1)
    kept with probability ``keep_prob = 1 - rate`` and scaled by ``1 / keep_prob``, else 0;
    always active."""
    rate = _rate(keep_prob, rate)
    if isinstance(rate, float) and rate == 0.0:
        return identity(x, name=name)
    return _dropped(x, rate, noise_shape, seed, True, name)


@export("dropout")
def dropout(x, rate=None, noise_shape=None, seed=None, training=None, keep_prob=None,
            name="dropout"):
    """Dropout behind the training switch: active when ``training`` is true, the identity
    otherwise. ``training`` is a bool, a bool tensor, or None for the graph's switch
    (``learning_phase()``, which the runner sets in its training steps). ``rate`` defaults to
    0.5 (Keras' and tf.layers' default) unless ``keep_prob`` is given."""
    if rate is None and keep_prob is None:
        rate = 0.5
    rate = _rate(keep_prob, rate)
    training = training_tensor(training)
    if isinstance(training, bool | np.bool_) and not training or (isinstance(rate, float) and rate == 0.0):
        return identity(x, name=name)
    return _dropped(x, rate, noise_shape, seed, training, name)
