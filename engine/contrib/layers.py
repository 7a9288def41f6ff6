"""``tf.contrib.layers``: fully_connected, conv2d, flatten, layer_norm, batch_norm, dropout,
embed_sequence, xavier_initializer, variance_scaling_initializer and the regularizers (from
``contrib/regularizers``), with contrib's scopes and names (``fully_connected/weights:0``,
``Conv/biases:0``, ``LayerNorm/gamma:0``, ``BatchNorm/moving_mean:0``) and defaults (relu,
xavier-uniform weights, zero biases); the layer functions take ``arg_scope`` defaults."""

from __future__ import annotations

import math

from ..framework import dtypes as _dtypes
from ..framework.graph import GraphKeys, control_dependencies, get_collection_ref, name_scope
from ..layers.core import Flatten
from ..layers.core import dropout as _dropout
from ..layers.normalization import BatchNormalization
from ..layers.normalization import layer_norm as _layer_norm
from ..ops import initializers as _init
from ..ops.array import reshape, shape
from ..ops.conv import conv2d as _conv2d
from ..ops.conv import pair
from ..ops.core import convert_to_tensor, identity
from ..ops.embedding_ops import embedding_lookup
from ..ops.initializers import (
    VarianceScaling,
    compute_fans,
    truncated_normal,
)
from ..ops.math import matmul, relu
from ..ops.nn import bias_add
from ..ops.variables import get_variable, variable_scope
from .framework import add_arg_scope
from .regularizers import (  # noqa: F401 (contrib.layers' names)
    apply_regularization,
    l1_l2_regularizer,
    l1_regularizer,
    l2_regularizer,
    sum_regularizer,
)


class _ContribTruncatedNormal:
    """contrib's normal variant: a normal truncated at 2 sigma with stddev sqrt(1.3 * factor / n)
    (1.3 is contrib's approximate correction for the truncation; the core initializer divides by
    0.8796... instead)."""

    def __init__(self, factor, mode, seed, dtype):
        self.factor, self.mode, self.seed, self.dtype = factor, mode, seed, dtype

    def __call__(self, shape, dtype=None, partition_info=None):
        fan_in, fan_out = compute_fans(shape)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[self.mode]
        stddev = math.sqrt(1.3 * self.factor / max(1.0, n))
        return truncated_normal(shape, 0.0, stddev, dtype or self.dtype, self.seed)


def variance_scaling_initializer(factor=2.0, mode="FAN_IN", uniform=False, seed=None,
                                 dtype=_dtypes.float32):
    """contrib's initializer (He's by default): uniform in +-sqrt(3 * factor / n), or contrib's
    truncated normal of stddev sqrt(1.3 * factor / n); n is the fan ``mode`` names ('FAN_IN',
    'FAN_OUT' or 'FAN_AVG')."""
    if not _dtypes.as_dtype(dtype).is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in ("FAN_IN", "FAN_OUT", "FAN_AVG"):
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")
    if uniform:
        return VarianceScaling(factor, mode.lower(), "uniform", seed, dtype)
    return _ContribTruncatedNormal(factor, mode, seed, dtype)


def xavier_initializer(uniform=True, seed=None, dtype=_dtypes.float32):
    """Glorot: uniform in +-sqrt(6 / (fan_in + fan_out)), or contrib's truncated normal."""
    return variance_scaling_initializer(1.0, "FAN_AVG", uniform, seed, dtype)


xavier_initializer_conv2d = xavier_initializer


def _finish(out, scope_vars, biases_initializer, num_outputs, normalizer_fn, normalizer_params,
            activation_fn, dtype, data_format=None):
    if normalizer_fn is not None:
        out = normalizer_fn(out, **(normalizer_params or {}))
    elif biases_initializer is not None:
        out = bias_add(out, get_variable("biases", [num_outputs], dtype,
                                         initializer=biases_initializer, **scope_vars),
                       data_format=data_format)
    return activation_fn(out) if activation_fn is not None else out


@add_arg_scope
def fully_connected(inputs, num_outputs, activation_fn=relu, normalizer_fn=None,
                    normalizer_params=None, weights_initializer=None, weights_regularizer=None,
                    biases_initializer=_init.zeros, biases_regularizer=None, reuse=None,
                    variables_collections=None, outputs_collections=None, trainable=True,
                    scope=None):
    """``activation_fn(inputs @ weights + biases)`` in scope ``fully_connected``."""
    x = convert_to_tensor(inputs)
    n_in = x.shape.dims[-1] if x.shape.dims else None
    if n_in is None:
        raise ValueError(f"fully_connected needs the size of the last input axis, got {x.shape}")
    with variable_scope(scope, default_name="fully_connected", reuse=reuse):
        weights = get_variable("weights", [n_in, num_outputs], x.dtype,
                               initializer=weights_initializer or xavier_initializer(),
                               regularizer=weights_regularizer, trainable=trainable)
        return _finish(matmul(x, weights), {"trainable": trainable}, biases_initializer,
                       num_outputs, normalizer_fn, normalizer_params, activation_fn, x.dtype)


@add_arg_scope
def conv2d(inputs, num_outputs, kernel_size, stride=1, padding="SAME", data_format=None, rate=1,
           activation_fn=relu, normalizer_fn=None, normalizer_params=None,
           weights_initializer=None, weights_regularizer=None,
           biases_initializer=_init.zeros, biases_regularizer=None, reuse=None,
           variables_collections=None, outputs_collections=None, trainable=True, scope=None):
    """contrib's convolution layer in scope ``Conv``: weights [kh, kw, in, out]; ``data_format``
    'NHWC' (None) or 'NCHW' (channels first: its biases are added along axis 1)."""
    x = convert_to_tensor(inputs)
    data_format = data_format or "NHWC"
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"conv2d: data_format {data_format!r} is not supported: 'NHWC' or "
                         "'NCHW'")
    n_in = x.shape.dims[data_format.index("C")] if x.shape.dims else None
    if n_in is None:
        raise ValueError(f"conv2d needs the number of input channels, got shape {x.shape}")
    with variable_scope(scope, default_name="Conv", reuse=reuse):
        weights = get_variable("weights", [*pair(kernel_size, "kernel_size"), n_in, num_outputs],
                               x.dtype, initializer=weights_initializer or xavier_initializer(),
                               regularizer=weights_regularizer, trainable=trainable)
        out = _conv2d(x, weights, strides=stride, padding=padding, data_format=data_format,
                      dilations=rate)
        return _finish(out, {"trainable": trainable}, biases_initializer, num_outputs,
                       normalizer_fn, normalizer_params, activation_fn, x.dtype, data_format)


@add_arg_scope
def flatten(inputs, outputs_collections=None, scope=None):
    with variable_scope(scope, default_name="Flatten"):
        return Flatten(name="flatten")(inputs)


@add_arg_scope
def layer_norm(inputs, center=True, scale=True, activation_fn=None, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               begin_norm_axis=1, begin_params_axis=-1, scope=None):
    """contrib's layer normalization: moments over the axes from ``begin_norm_axis``, ``beta`` and
    ``gamma`` over those from ``begin_params_axis``, epsilon 1e-12, scope ``LayerNorm``."""
    x = convert_to_tensor(inputs)
    rank = x.shape.ndims
    params = None if rank is None else x.shape[begin_params_axis % rank:]
    if params is None or not params.is_fully_defined():
        raise ValueError(f"layer_norm needs the sizes of the parameter axes, got shape {x.shape}")
    params = params.as_list()
    with variable_scope(scope, default_name="LayerNorm", reuse=reuse):
        beta = get_variable("beta", params, x.dtype, initializer=_init.zeros,
                            trainable=trainable) if center else None
        gamma = get_variable("gamma", params, x.dtype, initializer=_init.ones,
                             trainable=trainable) if scale else None
        out = _layer_norm(x, gamma, beta, begin_norm_axis=begin_norm_axis, epsilon=1e-12)
        return activation_fn(out) if activation_fn is not None else out


class _BatchNorm(BatchNormalization):
    """The core layer under contrib's scope name (``BatchNorm/beta``, ``BatchNorm_1/...``)."""

    _base_name = "BatchNorm"


@add_arg_scope
def batch_norm(inputs, decay=0.999, center=True, scale=False, epsilon=0.001, activation_fn=None,
               param_initializers=None, param_regularizers=None,
               updates_collections=GraphKeys.UPDATE_OPS, is_training=True, reuse=None,
               variables_collections=None, outputs_collections=None, trainable=True,
               batch_weights=None, fused=None, data_format="NHWC",
               zero_debias_moving_mean=False, scope=None, renorm=False, renorm_clipping=None,
               renorm_decay=0.99, adjustment=None):
    """contrib's batch normalization (TF 1.x's defaults: decay 0.999, no gamma, epsilon 1e-3)
    through ``tf.layers``' layer, in scope ``BatchNorm``. As TF's, a rank-2 or rank-4 input
    takes the fused kernel's statistics unless ``fused=False`` or renorm (the moving variance
    moves toward the unbiased batch variance; a matrix is normalized as [n, 1, 1, c]); with
    ``updates_collections=None`` the moving statistics update whenever the output is computed
    (TF's control dependency) instead of through UPDATE_OPS."""
    if batch_weights is not None or zero_debias_moving_mean or adjustment is not None:
        raise NotImplementedError("batch_norm: batch_weights, zero_debias_moving_mean and "
                                  "adjustment are not supported")
    if data_format not in ("NHWC", "NCHW"):
        raise ValueError(f"data_format has to be either NCHW or NHWC, got {data_format!r}")
    x = convert_to_tensor(inputs)
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"Inputs {x.name} has undefined rank.")
    fuse = fused is not False and not renorm and rank in (2, 4)
    inits, regs = param_initializers or {}, param_regularizers or {}
    layer = _BatchNorm(axis=1 if data_format == "NCHW" else -1, momentum=decay, epsilon=epsilon,
                       center=center, scale=scale,
                       beta_initializer=inits.get("beta", _init.zeros),
                       gamma_initializer=inits.get("gamma", _init.ones),
                       moving_mean_initializer=inits.get("moving_mean", _init.zeros),
                       moving_variance_initializer=inits.get("moving_variance", _init.ones),
                       beta_regularizer=regs.get("beta"), gamma_regularizer=regs.get("gamma"),
                       renorm=renorm, renorm_clipping=renorm_clipping,
                       renorm_momentum=renorm_decay, trainable=trainable, name=scope,
                       fused=fuse, _reuse=reuse)
    updates = get_collection_ref(GraphKeys.UPDATE_OPS)
    before = len(updates)
    y = x
    if fuse and rank == 2:
        y = reshape(x, [-1, 1, 1, x.shape.dims[1] if x.shape.dims[1] is not None else -1])
    y = layer(y, training=is_training)
    if fuse and rank == 2:
        y = reshape(y, shape(x))
    if updates_collections is not GraphKeys.UPDATE_OPS:
        mine = updates[before:]
        del updates[before:]
        if updates_collections is None:
            with control_dependencies(mine), name_scope(layer.name):
                y = identity(y)
        else:
            for c in ([updates_collections] if isinstance(updates_collections, str)
                      else updates_collections):
                get_collection_ref(c).extend(mine)
    return activation_fn(y) if activation_fn is not None else y


@add_arg_scope
def dropout(inputs, keep_prob=0.5, noise_shape=None, is_training=True, outputs_collections=None,
            scope=None, seed=None):
    """contrib's dropout: keeps each element with probability ``keep_prob`` (scaled by
    1 / keep_prob) when ``is_training`` (a bool or a boolean tensor), in scope ``Dropout``."""
    with name_scope(scope or "Dropout"):
        return _dropout(inputs, rate=1 - keep_prob, noise_shape=noise_shape, seed=seed,
                        training=is_training)


def embed_sequence(ids, vocab_size=None, embed_dim=None, unique=False, initializer=None,
                   regularizer=None, trainable=True, scope=None, reuse=None):
    """``tf.contrib.layers.embed_sequence``: ``ids`` [batch, time] looked up in a new
    ``EmbedSequence/embeddings`` variable [vocab_size, embed_dim] (the variable scope's
    initializer unless ``initializer``): [batch, time, embed_dim]."""
    if vocab_size is None or embed_dim is None:
        raise ValueError("Must specify vocab size and embedding dimension")
    with variable_scope(scope, "EmbedSequence", reuse=reuse):
        embeddings = get_variable("embeddings", [int(vocab_size), int(embed_dim)],
                                  initializer=initializer, regularizer=regularizer,
                                  trainable=trainable)
        return embedding_lookup(embeddings, ids)
