"""Neural-network functions: softmax family and the cross-entropy losses, composed from
primitives where TF composes them too (so their gradients follow from the primitives')."""

from __future__ import annotations

import numpy as np

from ..framework.errors import ShapeError
from ..framework.registry import apply, broadcast_shapes, export, register, same_dtype
from ..framework.tensor_shape import TensorShape
from . import xent_compiled
from .array import expand_dims, reshape, reshape_like, transpose
from .core import broadcast_like, convert_to_tensor, stop_gradient, unbroadcast, zeros_like
from .math import abs_, cast, exp, expm1, log1p, softplus, square, subtract
from .reduce import reduce_sum
from .where import where_v2


def _softmax_axis(x, axis, dim, what):
    """TF1's axis/dim arguments -> a non-negative axis (or the given one if the rank is unknown)."""
    axis = dim if axis is None else axis
    axis = -1 if axis is None else int(axis)
    rank = x.shape.ndims
    if rank is None:
        return axis
    if rank == 0:
        raise ShapeError(f"{what}: logits must have at least one dimension, got a scalar ({x.name})")
    if not -rank <= axis < rank:
        raise ShapeError(f"{what}: axis {axis} is out of range for logits of shape {x.shape}")
    return axis % rank


def _softmax_forward(x, axis):
    z = np.exp(x - x.max(axis=axis, keepdims=True))
    return z / z.sum(axis=axis, keepdims=True)


def _log_softmax_forward(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def _softmax_grad(op, g):
    """TF's SoftmaxGrad: (g - sum(g * y)) * y over the softmax axis."""
    y, axis = op.outputs[0], op.attrs["axis"]
    return [(g - reduce_sum(g * y, axis=axis, keepdims=True)) * y]


def _log_softmax_grad(op, g):
    """TF's LogSoftmax gradient: g - sum(g) * exp(y) over the softmax axis."""
    axis = op.attrs["axis"]
    return [g - reduce_sum(g, axis=axis, keepdims=True) * exp(op.outputs[0])]


def _float_same(inputs, **_):
    x = inputs[0]
    if not x.dtype.is_floating:
        raise TypeError(f"expected a float tensor, got {x.dtype.name} ({x.name})")
    return [(x.dtype, x.shape)]


register("Softmax", _softmax_forward, _float_same, grad=_softmax_grad)
register("LogSoftmax", _log_softmax_forward, _float_same, grad=_log_softmax_grad)


@export("softmax")
def softmax(logits, axis=None, name="Softmax", dim=None):
    """exp(x) / sum(exp(x)) along ``axis`` (the last by default; ``dim`` is TF1's old name)."""
    x = convert_to_tensor(logits)
    return apply("Softmax", [x], name=name, axis=_softmax_axis(x, axis, dim, "softmax"))


@export("log_softmax")
def log_softmax(logits, axis=None, name="LogSoftmax", dim=None):
    """x - logsumexp(x) along ``axis`` (the last by default)."""
    x = convert_to_tensor(logits)
    return apply("LogSoftmax", [x], name=name, axis=_softmax_axis(x, axis, dim, "log_softmax"))


# -- cross-entropy losses ------------------------------------------------------------------
#
# TF computes both softmax cross-entropies in one kernel with two outputs, the loss and
# ``backprop = softmax(logits) - onehot_or_labels``, and its gradient rule multiplies backprop
# by the incoming gradient. That is the true derivative only when each row of labels sums to
# one; TF does it regardless, and so do we (checked against TF, see tests/engine/test_tf_parity).


def _check_same_shape(labels, logits, what):
    if not labels.shape.is_compatible_with(logits.shape):
        raise ShapeError(f"{what}: labels shape {labels.shape} and logits shape {logits.shape} "
                         "must be the same")


def _merge(a: TensorShape, b: TensorShape) -> TensorShape:
    """The more precise of two compatible static shapes, dim by dim."""
    if a.dims is None:
        return b
    if b.dims is None:
        return a
    return TensorShape(x if x is not None else y for x, y in zip(a.dims, b.dims))


def _shifted(logits):
    shifted = logits - logits.max(axis=-1, keepdims=True, initial=-np.inf)
    return shifted, np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def _xent_forward(logits, labels):
    # TF's kernel broadcasts first: a logits row of one class against two labels is two classes.
    logits = np.broadcast_to(logits, np.broadcast_shapes(logits.shape, labels.shape))
    shifted, log_sum = _shifted(logits)
    loss = (labels * (log_sum - shifted)).sum(axis=-1)
    return np.asarray(loss, logits.dtype), np.exp(shifted - log_sum) - labels


def _xent_infer(inputs):
    """Labels and logits broadcast against each other (TF's kernel does); classes on the last axis."""
    logits, labels = inputs
    dtype = same_dtype(inputs, "SoftmaxCrossEntropyWithLogits")
    shape = broadcast_shapes(logits.shape, labels.shape)
    if shape.dims is not None and not shape.dims:
        raise ShapeError("logits and labels must have at least one dimension")
    loss_shape = TensorShape(None if shape.dims is None else shape.dims[:-1])
    return [(dtype, loss_shape), (dtype, shape)]


def _logits_grad(op, grad_loss, grad_grad):
    """grad_loss * backprop, plus (for gradients of gradients) backprop's softmax Jacobian."""
    grad = expand_dims(grad_loss, -1) * op.outputs[1]
    if grad_grad.op.type != "ZerosLike":
        sm = softmax(broadcast_like(op.inputs[0], op.outputs[1]))
        grad = grad + (grad_grad - reduce_sum(grad_grad * sm, axis=-1, keepdims=True)) * sm
    return unbroadcast(grad, op.inputs[0])


def _xent_grad(op, grad_loss, grad_grad):
    # TF's rule: the labels get -log_softmax(logits) * grad_loss and nothing through backprop.
    logits = broadcast_like(op.inputs[0], op.outputs[1])
    labels_grad = expand_dims(grad_loss, -1) * -log_softmax(logits)
    return [_logits_grad(op, grad_loss, grad_grad), unbroadcast(labels_grad, op.inputs[1])]


register("SoftmaxCrossEntropyWithLogits", _xent_forward, _xent_infer, grad=_xent_grad)


def _sparse_xent_forward(logits, labels):
    """Rows of classes: the loss ``log_sum - shifted[label]`` and backprop ``softmax - onehot``,
    the one subtracted in place at each row's label (the same bits as subtracting a one-hot
    array, in a third of the calls: this op ran ~20 numpy calls for a [64, 10] batch); after a
    warm-up, one compiled call with these bits (xent_compiled)."""
    fast = xent_compiled.sparse_xent(logits, labels)
    if fast is not None:
        return fast
    depth = logits.shape[-1]
    flat_labels = labels.reshape(-1)
    # negative labels wrap to large unsigned ones: one reduction checks both bounds
    if flat_labels.size and flat_labels.view(flat_labels.dtype.char.upper()).max() >= depth:
        bad = (labels < 0) | (labels >= depth)
        raise ValueError(f"Received a label value of {labels[bad].flat[0]} which is outside the "
                         f"valid range of [0, {depth}).")
    rows = logits.reshape(-1, depth)
    shifted = rows - rows.max(axis=-1, keepdims=True, initial=-np.inf)
    backprop = np.exp(shifted)
    log_sum = np.log(backprop.sum(axis=-1, keepdims=True))
    at = (np.arange(rows.shape[0]), flat_labels)
    loss = log_sum[:, 0] - shifted[at]  # TF's order: a single class gives +0.0, not -0.0
    np.exp(np.subtract(shifted, log_sum, out=backprop), out=backprop)
    backprop[at] -= 1
    return (loss.reshape(labels.shape).astype(logits.dtype, copy=False),
            backprop.reshape(logits.shape))


def _sparse_xent_infer(inputs):
    logits, labels = inputs
    if not logits.dtype.is_floating:
        raise TypeError(f"logits must be a float tensor, got {logits.dtype.name} ({logits.name})")
    if not labels.dtype.is_integer:
        raise TypeError(f"labels must be integer class indices, got {labels.dtype.name} "
                        f"({labels.name})")
    if logits.shape.dims is not None and not logits.shape.dims:
        raise ShapeError("logits must have at least one dimension")
    loss_shape = TensorShape(None if logits.shape.dims is None else logits.shape.dims[:-1])
    if not labels.shape.is_compatible_with(loss_shape):
        raise ShapeError(f"labels shape {labels.shape} must equal logits shape {logits.shape} "
                         "without its last dimension")
    loss_shape = _merge(loss_shape, labels.shape)
    shape = logits.shape if loss_shape.dims is None else TensorShape(
        loss_shape.dims + (logits.shape.dims[-1] if logits.shape.dims else None,))
    return [(logits.dtype, loss_shape), (logits.dtype, shape)]


# TF forbids second derivatives here (prevent_gradient); we give backprop's softmax Jacobian.
register("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_forward, _sparse_xent_infer,
         grad=lambda op, grad_loss, grad_grad: [_logits_grad(op, grad_loss, grad_grad), None])


def _to_last_axis(t, axis):
    """Move ``axis`` of ``t`` to the end (TF's wrapper does the same before its kernel)."""
    rank = t.shape.ndims
    if rank is None or axis in (-1, rank - 1):
        return t
    axis %= rank
    perm = [i for i in range(rank) if i != axis] + [axis]
    return transpose(t, perm)


def _ensure_xent_args(name, sentinel, labels, logits):
    """TF 1.x's check: these losses take keyword arguments only, since TF 0.x's positional order
    (logits, labels) was swapped; a positional call would silently swap them."""
    if sentinel is not None:
        raise ValueError(f"Only call `{name}` with named arguments (labels=..., logits=..., ...)")
    if labels is None or logits is None:
        raise ValueError("Both labels and logits must be provided.")


@export("softmax_cross_entropy_with_logits_v2", "softmax_cross_entropy")
def softmax_cross_entropy_with_logits_v2(labels=None, logits=None, axis=None, name=None,
                                         dim=None):
    """Per-example -sum(labels * log_softmax(logits)); gradients reach labels too (v2)."""
    logits = convert_to_tensor(logits)
    labels = cast(convert_to_tensor(labels, preferred_dtype=logits.dtype), logits.dtype)
    if axis is None:
        axis = -1 if dim is None else dim
    logits, labels = _to_last_axis(logits, axis), _to_last_axis(labels, axis)
    loss, _ = apply("SoftmaxCrossEntropyWithLogits", [logits, labels],
                    name=name or "SoftmaxCrossEntropyWithLogits")
    if logits.shape.dims is None or labels.shape.dims is None or \
            broadcast_shapes(logits.shape, labels.shape) != logits.shape:
        # labels may broadcast: the loss has the shape of the logits without the class axis (TF)
        loss = reshape_like(loss, logits[..., 0])
    return loss


@export("softmax_cross_entropy_with_logits")
def softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, dim=-1, name=None,
                                      axis=None):
    """TF1's deprecated form: no gradient flows into the labels."""
    _ensure_xent_args("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    logits = convert_to_tensor(logits)
    labels = stop_gradient(convert_to_tensor(labels, preferred_dtype=logits.dtype))
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits,
                                                axis=dim if axis is None else axis, name=name)


@export("sparse_softmax_cross_entropy_with_logits")
def sparse_softmax_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """-log_softmax(logits)[label] per example; labels are class indices (no gradient)."""
    _ensure_xent_args("sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels)
    loss, _ = apply("SparseSoftmaxCrossEntropyWithLogits", [logits, labels],
                    name=name or "SparseSoftmaxCrossEntropyWithLogits")
    return loss


@export("sigmoid_cross_entropy_with_logits")
def sigmoid_cross_entropy_with_logits(_sentinel=None, labels=None, logits=None, name=None):
    """TF's stable form, op for op: max(x, 0) - x * z + log(1 + exp(-|x|))."""
    _ensure_xent_args("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, preferred_dtype=logits.dtype)
    _check_same_shape(labels, logits, "sigmoid_cross_entropy_with_logits")
    zeros = zeros_like(logits)
    cond = logits >= zeros
    relu_logits = where_v2(cond, logits, zeros)
    neg_abs_logits = where_v2(cond, -logits, logits)
    return relu_logits - logits * labels + log1p(exp(neg_abs_logits))


@export("weighted_cross_entropy_with_logits")
def weighted_cross_entropy_with_logits(labels=None, logits=None, pos_weight=None, name=None,
                                       targets=None):
    """The sigmoid cross-entropy with the positive term weighted by ``pos_weight``, TF's stable
    form: ``(1 - z) * x + (1 + (q - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0))``; ``targets``
    is TF 1.x's older name of ``labels``."""
    if labels is not None and targets is not None:
        raise ValueError("Cannot specify both 'labels' and 'targets'")
    labels = targets if labels is None else labels
    if labels is None or logits is None or pos_weight is None:
        raise TypeError("weighted_cross_entropy_with_logits needs labels (or targets), logits "
                        "and pos_weight")
    logits = convert_to_tensor(logits)
    labels = convert_to_tensor(labels, preferred_dtype=logits.dtype)
    _check_same_shape(labels, logits, "weighted_cross_entropy_with_logits")
    log_weight = 1.0 + (convert_to_tensor(pos_weight, dtype=logits.dtype) - 1.0) * labels
    zeros = zeros_like(logits)
    return (1.0 - labels) * logits + log_weight * (
        log1p(exp(-abs_(logits))) + where_v2(logits < zeros, -logits, zeros))


def _l2_loss_forward(x):
    """sum(x * x) / 2 in one pass over memory and no temporary (a BLAS dot), in x's dtype."""
    flat = x.reshape(-1)
    return np.dot(flat, flat) / x.dtype.type(2)


def _l2_loss_infer(inputs, **_):
    x = inputs[0]
    if not x.dtype.is_floating:
        raise TypeError(f"l2_loss: expected a float tensor, got {x.dtype.name} ({x.name})")
    return [(x.dtype, TensorShape([]))]


register("L2Loss", _l2_loss_forward, _l2_loss_infer, grad=lambda op, g: [op.inputs[0] * g])


def _global_norm_forward(*xs):
    """sqrt(2 * sum of l2_loss(x)) as TF's global_norm composes it (L2Loss per tensor, Stack,
    Sum, Mul, Sqrt), the same operations in the same order, in one op: a clipping stage's norm
    is one plan step instead of one per tensor and four more. For float32/64 and fewer than 8
    tensors the halves are added as numpy scalars: numpy's sum of so few values is that
    sequence of additions in the dtype from +0 (its pairwise sum starts blocks of 8), and the
    halves are never -0, so the bits are the same without building an array (1-2 us less)."""
    dtype = xs[0].dtype
    if len(xs) < 8 and dtype in _SCALAR_SUM_DTYPES:
        two = dtype.type(2)
        total = dtype.type(0)
        for x in xs:
            flat = x.reshape(-1)
            total = np.dot(flat, flat) / two + total  # of two NaNs, numpy's sum keeps the first
        return np.sqrt(np.asarray(total * two))
    halves = np.array([_l2_loss_forward(x) for x in xs], dtype)
    return np.sqrt(np.asarray(np.add.reduce(halves) * dtype.type(2)))


_SCALAR_SUM_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _global_norm_infer(inputs, **_):
    for x in inputs:
        _l2_loss_infer([x])
        if x.dtype != inputs[0].dtype:
            raise TypeError(f"global_norm: {x.name} has dtype {x.dtype.name} but "
                            f"{inputs[0].name} has {inputs[0].dtype.name}; the tensors of one "
                            "global norm must share a dtype")
    return [(inputs[0].dtype, TensorShape([]))]


def _global_norm_grad(op, g):
    """d norm / d x = x / norm."""
    per_norm = g / op.outputs[0]
    return [x * per_norm for x in op.inputs]


register("GlobalNorm", _global_norm_forward, _global_norm_infer, grad=_global_norm_grad)


def global_norm_op(values, name="global_norm"):
    """The GlobalNorm op over tensors of one float dtype (``clip_ops.global_norm`` is the API)."""
    return apply("GlobalNorm", list(values), name=name)


@export("l2_loss")
def l2_loss(t, name="L2Loss"):
    """sum(t ** 2) / 2, as TF's l2_loss: one op, whose gradient is t * grad."""
    return apply("L2Loss", [convert_to_tensor(t)], name=name)


@export("bias_add")
def bias_add(value, bias, data_format=None, name="BiasAdd"):
    """``value + bias`` along value's channel axis: the last (``data_format`` None, 'NHWC',
    'N...C'), or axis 1 ('NCHW', 'NC...')."""
    value = convert_to_tensor(value)
    bias = convert_to_tensor(bias, preferred_dtype=value.dtype)
    if data_format in (None, "NHWC", "NWC", "N...C"):
        return value + bias
    if data_format not in ("NCHW", "NCW", "NC..."):
        raise ValueError(f"bias_add: data_format {data_format!r} is not 'NHWC' or 'NCHW'")
    rank = value.shape.ndims
    if rank is None or rank < 2:
        raise ValueError(f"bias_add: data_format {data_format!r} needs a value of known rank "
                         f">= 2, got shape {value.shape}")
    return value + reshape(bias, [-1] + [1] * (rank - 2))


# -- more activations, composed as TF's gradients dictate at their kinks --------------------


@export("leaky_relu")
def leaky_relu(features, alpha=0.2, name="LeakyRelu"):
    """x for x > 0, alpha * x otherwise; the gradient at 0 is alpha (TF's LeakyReluGrad).

    TF keeps alpha in a float32 attribute, also for float64 features: so do we.
    """
    x = convert_to_tensor(features)
    return where_v2(x > 0, x, x * float(np.float32(alpha)))


@export("elu")
def elu(features, name="Elu"):
    """x for x > 0, exp(x) - 1 otherwise (gradient 1 at 0 either way)."""
    x = convert_to_tensor(features)
    return where_v2(x > 0, x, expm1(where_v2(x > 0, zeros_like(x), x)))


@export("selu")
def selu(features, name="Selu"):
    """scale * elu with alpha; TF's SeluGrad gives scale (the x > 0 branch) at 0."""
    x = convert_to_tensor(features)
    alpha, scale = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
    neg = alpha * expm1(where_v2(x >= 0, zeros_like(x), x))
    return scale * where_v2(x >= 0, x, neg)


@export("relu6")
def relu6(features, name="Relu6"):
    """min(max(x, 0), 6); the gradient is 1 strictly inside (0, 6) only (TF's Relu6Grad)."""
    x = convert_to_tensor(features)
    inside = (x > 0) & (x < 6)
    return where_v2(inside, x, where_v2(x <= 0, zeros_like(x), zeros_like(x) + 6))


@export("softsign")
def softsign(features, name="Softsign"):
    x = convert_to_tensor(features)
    return x / (1 + abs_(x))


@export("log_sigmoid")
def log_sigmoid(x, name="LogSigmoid"):
    """log(sigmoid(x)) = -softplus(-x), as TF computes it."""
    return -softplus(-convert_to_tensor(x))


@export("squared_difference")
def squared_difference(x, y, name="SquaredDifference"):
    """(x - y) ** 2 with broadcasting; gradient 2 * (x - y) * g to x, its negative to y."""
    return square(subtract(x, y))
