"""Elementwise arithmetic, casts, matmul and range (TF's ``math_ops``; comparisons and logic in
``comparisons``, ``where`` in ``where``): forward, shape rule and gradient side by side.

Gradient rules are TF's (``math_grad.py``), written with the same public functions so that
gradient nodes are ordinary graph nodes (and can be differentiated or fused in turn).
"""

from __future__ import annotations

import sys

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import jit, threads
from ..framework.errors import InvalidArgumentError, ShapeError
from ..framework.graph import Tensor
from ..framework.registry import apply, broadcast_shapes, elementwise_infer, export, register, same_dtype
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import static_value
from . import split_gemm, windows_compiled
from .comparisons import greater, greater_equal, less, less_equal, logical_and, logical_not, logical_or
from .core import as_tensors, convert_to_tensor, ones_like, unbroadcast, zeros_like
from .elementwise import binary_op, unary_op
from .where import where_v2

# -- binary arithmetic ---------------------------------------------------------------------


#: elements of an image from which adding a per-channel vector goes to a compiled loop
CHANNEL_ADD_MIN = 4096


def _add_channels(x, y):
    """``x + y`` where ``y`` may be a vector along x's last axis of at most 64 values (a bias
    added to an image or a batch of activations): a compiled loop for large float arrays (the
    same bits as numpy, which loops over one row of the few channels at a time), else numpy."""
    if (y.ndim == 1 and x.ndim >= 2 and x.shape[-1] == y.size <= 64 and x.dtype == y.dtype
            and x.size >= CHANNEL_ADD_MIN and x.flags.c_contiguous):
        out = np.empty_like(x)
        if windows_compiled.run("add_rows", x.reshape(-1), y, out.reshape(-1)):
            return out
    return np.add(x, y)


def _specialize_add(op):
    """AddV2 of a vector to an array of rank 2 or more: ``_add_channels``."""
    x, y = op.inputs
    if y.shape.ndims == 1 and (x.shape.ndims or 0) >= 2 and x.dtype.is_floating:
        return _add_channels
    return None


register("AddV2", np.add, elementwise_infer(), numexpr="({0} + {1})",
         grad=lambda op, g: [unbroadcast(g, op.inputs[0]), unbroadcast(g, op.inputs[1])],
         specialize=_specialize_add)
register("Sub", np.subtract, elementwise_infer(), numexpr="({0} - {1})",
         grad=lambda op, g: [unbroadcast(g, op.inputs[0]), unbroadcast(-g, op.inputs[1])])
register("Mul", np.multiply, elementwise_infer(), numexpr="({0} * {1})",
         grad=lambda op, g: [unbroadcast(g * op.inputs[1], op.inputs[0]),
                             unbroadcast(g * op.inputs[0], op.inputs[1])])
register("RealDiv", np.true_divide, elementwise_infer(), numexpr="({0} / {1})",
         grad=lambda op, g: [unbroadcast(g / op.inputs[1], op.inputs[0]),
                             unbroadcast(g * (-op.inputs[0] / op.inputs[1] / op.inputs[1]),
                                         op.inputs[1])])


def _pow_grad(op, g):
    x, y = op.inputs
    z = op.outputs[0]
    if y.op.type == "Const" and y.dtype.is_floating and _all_equal(static_value(y), 2):
        gx = g * y * x  # x ** (2 - 1) is x itself: pow(x, 1) = x exactly, one op less (``** 2``)
    else:
        gx = g * y * pow_(x, y - 1)
    log_x = where_v2(x > 0, log(where_v2(x > 0, x, ones_like(x))), zeros_like(x))
    return [unbroadcast(gx, x), unbroadcast(g * z * log_x, y)]


def _all_equal(value, number) -> bool:
    return value is not None and value.size == 1 and value.reshape(-1)[0] == number


register("Pow", np.power, elementwise_infer(), numexpr="({0} ** {1})", grad=_pow_grad)


def _maximum_grad(op, g, select_x):
    x, y = op.inputs
    mask = select_x(x, y)
    zeros = zeros_like(g)
    return [unbroadcast(where_v2(mask, g, zeros), x), unbroadcast(where_v2(mask, zeros, g), y)]


register("Maximum", np.maximum, elementwise_infer(), numexpr="where({0} >= {1}, {0}, {1})",
         grad=lambda op, g: _maximum_grad(op, g, greater_equal))
register("Minimum", np.minimum, elementwise_infer(), numexpr="where({0} <= {1}, {0}, {1})",
         grad=lambda op, g: _maximum_grad(op, g, less_equal))
register("FloorDiv", np.floor_divide, elementwise_infer())


def _truncate_div(x, y):
    """Division rounded toward zero (C's): floor division, plus one where the signs differ
    and the division is inexact."""
    if np.issubdtype(np.result_type(x, y), np.floating):
        return np.trunc(np.true_divide(x, y))
    q = np.floor_divide(x, y)
    return q + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0))).astype(q.dtype)


register("TruncateDiv", _truncate_div, elementwise_infer())
register("TruncateMod", lambda x, y: np.fmod(x, y), elementwise_infer())


def _floormod_grad(op, g):
    """TF: d(x mod y) = (1, -floor(x / y)) away from the jumps."""
    x, y = op.inputs
    return [unbroadcast(g, x), unbroadcast(g * -floordiv(x, y), y)]


register("FloorMod", np.mod, elementwise_infer(), grad=_floormod_grad)

add = export("add")(binary_op("AddV2", "add"))
subtract = export("subtract")(binary_op("Sub", "sub"))
multiply = export("multiply")(binary_op("Mul", "mul"))
maximum = export("maximum")(binary_op("Maximum", "Maximum"))
minimum = export("minimum")(binary_op("Minimum", "Minimum"))
floordiv = export("floordiv")(binary_op("FloorDiv", "floordiv"))
floormod = export("mod", "floormod")(binary_op("FloorMod", "mod"))
pow_ = export("pow")(binary_op("Pow", "pow"))
truncatediv = export("truncatediv")(binary_op("TruncateDiv", "truncatediv"))
truncatemod = export("truncatemod")(binary_op("TruncateMod", "truncatemod"))


@export("divide", "truediv")
def truediv(x, y, name=None):
    """``/``: integer operands are cast to a float type first, as in TF."""
    x, y = as_tensors(x, y)
    if x.dtype.is_integer:
        target = _dtypes.float32 if x.dtype.np.itemsize <= 2 else _dtypes.float64
        x, y = cast(x, target), cast(y, target)
    return apply("RealDiv", [x, y], name=name or "truediv")


realdiv = divide = truediv


def div(x, y, name=None):
    """TF 1.x's ``tf.div``: Python 2's division, so integers are floor-divided (``div(3, 4)`` is
    0, ``div(-7, 2)`` is -4) and floats divided; ``tf.divide`` and ``/`` are true division."""
    x, y = as_tensors(x, y)
    if x.dtype.is_integer:
        return apply("FloorDiv", [x, y], name=name or "div")
    return apply("RealDiv", [x, y], name=name or "div")


@export("add_n")
def add_n(inputs, name="AddN"):
    inputs = [convert_to_tensor(t) for t in inputs]
    if len(inputs) == 1:
        return inputs[0]
    return apply("AddN", inputs, name=name)


def _add_n_infer(inputs):
    dtype = same_dtype(inputs, "AddN")
    shape = inputs[0].shape
    for t in inputs[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ShapeError(f"inputs must have the same shape, got {shape} and {t.shape}")
        if shape.dims is None or (t.shape.dims is not None and None in shape.dims):
            shape = t.shape
    return [(dtype, shape)]


def _add_n_forward(*xs):
    out = xs[0] + xs[1]
    for x in xs[2:]:
        out += x
    return out


register("AddN", _add_n_forward, _add_n_infer, grad=lambda op, g: [g] * len(op.inputs))

# -- unary ---------------------------------------------------------------------------------


def _float_only(fn):
    """Unary ops of float tensors (ints would silently become float64 in numpy)."""

    def infer(inputs, **_):
        if not (inputs[0].dtype.is_floating):
            raise TypeError(f"expected a float tensor, got {inputs[0].dtype.name} ({inputs[0].name})")
        return [(inputs[0].dtype, inputs[0].shape)]

    return infer


_same = elementwise_infer()


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype, copy=False)


def _softplus(x):
    return np.logaddexp(np.zeros((), x.dtype), x)


register("Neg", np.negative, _same, numexpr="(-{0})", grad=lambda op, g: [-g])
register("Abs", np.abs, _same, numexpr="abs({0})", grad=lambda op, g: [g * sign(op.inputs[0])])
register("Sign", np.sign, _same, grad=lambda op, g: [zeros_like(op.inputs[0])])
register("Exp", np.exp, _float_only(np.exp), numexpr="exp({0})",
         grad=lambda op, g: [g * op.outputs[0]])
register("Log", np.log, _float_only(np.log), numexpr="log({0})",
         grad=lambda op, g: [g * reciprocal(op.inputs[0])])
register("Log1p", np.log1p, _float_only(np.log1p), numexpr="log1p({0})",
         grad=lambda op, g: [g * reciprocal(1 + op.inputs[0])])
register("Expm1", np.expm1, _float_only(np.expm1), numexpr="expm1({0})",
         grad=lambda op, g: [g * exp(op.inputs[0])])


def _y_grad(name):
    """The gradient of a unary op as TF's fused kernel ``name``(y, dy) of its output y."""
    return lambda op, g: [apply(name, [op.outputs[0], g], name=name)]


def _guarded(fn):
    """TF's SqrtGrad, RsqrtGrad and ReciprocalGrad kernels return 0 wherever dy == 0, also
    where y is 0 or inf (cwise_ops_gradients.h), instead of the nan of 0 * inf."""

    def forward(y, dy):
        return np.where(dy == 0, np.zeros((), dy.dtype), fn(y, dy))

    return forward


register("Sqrt", np.sqrt, _float_only(np.sqrt), numexpr="sqrt({0})", grad=_y_grad("SqrtGrad"))
register("Rsqrt", lambda x: 1 / np.sqrt(x), _float_only(None), numexpr="(1 / sqrt({0}))",
         grad=_y_grad("RsqrtGrad"))
# Their own gradients are TF's (math_grad.py: _SqrtGradGrad, _RsqrtGradGrad, _ReciprocalGradGrad),
# with inputs (y, dy) and output z. The numexpr fragments halve with "/ 2", not "0.5 *": numexpr
# computes float32 operands in float64 when an expression holds a float literal.
register("SqrtGrad", _guarded(lambda y, dy: (0.5 * dy) / y), elementwise_infer(),
         numexpr="where({1} == 0, 0, ({1} / 2) / {0})",
         grad=lambda op, g: [-(g / op.inputs[0]) * op.outputs[0], 0.5 * (g / op.inputs[0])])
register("RsqrtGrad", _guarded(lambda y, dy: -0.5 * (dy * y) * (y * y)), elementwise_infer(),
         numexpr="where({1} == 0, 0, -((({1} * {0}) / 2) * ({0} * {0})))",
         grad=lambda op, g: [-1.5 * g * op.inputs[1] * square(op.inputs[0]),
                             apply("RsqrtGrad", [op.inputs[0], g], name="RsqrtGrad")])
register("ReciprocalGrad", _guarded(lambda y, dy: -y * y * dy), elementwise_infer(),
         numexpr="where({1} == 0, 0, -{0} * {0} * {1})",
         grad=lambda op, g: [g * -2.0 * op.inputs[1] * op.inputs[0],
                             apply("ReciprocalGrad", [op.inputs[0], g], name="ReciprocalGrad")])
register("Square", np.square, _same, numexpr="({0} * {0})",
         grad=lambda op, g: [g * (2 * op.inputs[0])])
register("Reciprocal", np.reciprocal, _float_only(None), numexpr="(1 / {0})",
         grad=_y_grad("ReciprocalGrad"))
register("Sin", np.sin, _float_only(np.sin), numexpr="sin({0})",
         grad=lambda op, g: [g * cos(op.inputs[0])])
register("Cos", np.cos, _float_only(np.cos), numexpr="cos({0})",
         grad=lambda op, g: [-g * sin(op.inputs[0])])
register("Tanh", np.tanh, _float_only(np.tanh), numexpr="tanh({0})",
         grad=lambda op, g: [g * (1 - op.outputs[0] * op.outputs[0])])
register("Sigmoid", _sigmoid, _float_only(None), numexpr="(1 / (1 + exp(-{0})))",
         grad=lambda op, g: [g * op.outputs[0] * (1 - op.outputs[0])])
#: elements from which Relu and ReluGrad of float arrays go to compiled loops
COMPILED_RELU_MIN = 16384


def _compiled(name, *arrays):
    """The result of a compiled elementwise loop over C-contiguous float arrays of one dtype
    and shape, at least COMPILED_RELU_MIN elements; None where it does not apply (numpy runs)."""
    first = arrays[0]
    if first.size < COMPILED_RELU_MIN or not all(
            a.shape == first.shape and a.dtype == first.dtype and a.flags.c_contiguous
            for a in arrays):
        return None
    out = np.empty_like(first)
    if windows_compiled.run(name, *(a.reshape(-1) for a in arrays), out.reshape(-1)):
        return out
    return None


def _relu(x):
    out = _compiled("relu", x)
    return np.maximum(x, np.zeros((), x.dtype)) if out is None else out


def _relu_grad(g, y):
    out = _compiled("relu_grad", g, y)
    return g * (y > 0).astype(g.dtype) if out is None else out


register("Relu", _relu, _same,
         numexpr="where({0} > 0, {0}, 0)",
         grad=lambda op, g: [apply("ReluGrad", [g, op.outputs[0]], name="ReluGrad")])
# TF's ReluGrad(g, y) = g * (y > 0): a product (0 at y = 0; an inf or nan g stays nan, as in
# TF's kernel). Its own gradient is ReluGrad again for g and zeros (not None) for y, so second
# derivatives through relu are zero tensors as in TF.
register("ReluGrad", _relu_grad, _same,
         numexpr="where({1} > 0, {0}, {0} * 0)",
         grad=lambda op, dy: [apply("ReluGrad", [dy, op.inputs[1]], name="ReluGrad"),
                              zeros_like(op.inputs[1])])
register("Softplus", _softplus, _float_only(None), numexpr="where({0} > 30, {0}, log1p(exp({0})))",
         grad=lambda op, g: [g * sigmoid(op.inputs[0])])
register("Floor", np.floor, _same)
register("Ceil", np.ceil, _same)
register("Round", np.rint, _same)
register("IsFinite", np.isfinite, elementwise_infer("bool"))
register("IsNan", np.isnan, elementwise_infer("bool"))
register("IsInf", np.isinf, elementwise_infer("bool"))


#: total elements up to which AllFinite checks its inputs as one concatenated array
_ALL_FINITE_CONCAT_MAX = 65_536


def _all_finite(*arrays):
    """One isfinite and one reduction over the inputs concatenated while they are small (a
    training step's loss and a small model's gradients: about 0.3 us an input instead of 1
    us), an input at a time when they are large (no copy of large gradients). Concatenation
    casts to the inputs' common type, which keeps every value's finiteness. Where numba is
    loaded already (by another op's loops), after 50 runs: one compiled pass, no copy."""
    if arrays and "numba" in sys.modules:
        finite = _ALL_FINITE_LOOP.value(*arrays)
        if finite is not jit.SKIPPED:
            return np.bool_(finite)
    if sum(a.size for a in arrays) <= _ALL_FINITE_CONCAT_MAX:
        try:
            return _land(_isfinite(np.concatenate(arrays, axis=None)), axis=None)
        except (TypeError, ValueError, AttributeError):
            pass  # a type that does not concatenate: the general path raises or answers
    for a in arrays:
        if not _land(_isfinite(a), axis=None):
            return np.False_
    return np.True_


_isfinite, _land = np.isfinite, np.logical_and.reduce


def _all_finite_loop(*arrays):
    """Whether no element of the arrays is NaN or infinite, in one pass without branches: x - x
    is exactly 0 for a finite x, NaN for an infinite or NaN one (a complex one too)."""
    bad = False
    for a in _literal_unroll(arrays):
        flat = np.ravel(np.asarray(a))
        for i in range(flat.size):
            v = flat[i]
            bad |= (v - v) != 0
    return not bad


class _AllFiniteLoop(jit.WarmKernel):
    """The loop over inputs of several types (a tuple numba unrolls with its literal_unroll,
    bound in this module's globals when the loop compiles, since numba is imported late)."""

    def value(self, *args):
        if self.compiled is None and self.runs >= self.after:
            try:
                from numba import literal_unroll
            except ImportError:
                self.compiled = False
            else:
                globals()["_literal_unroll"] = literal_unroll
        return super().value(*args)


_literal_unroll = None
_ALL_FINITE_LOOP = _AllFiniteLoop(_all_finite_loop, 50)


register("AllFinite", _all_finite, lambda inputs, **_: [(_dtypes.bool_, TensorShape([]))])


def all_finite(tensors, name="AllFinite"):
    """Scalar bool: no element of any of ``tensors`` is NaN or Inf. The same as
    ``reduce_all(stack([reduce_all(is_finite(t)) for t in tensors]))`` in one op: a training
    step's gate over its loss and every gradient is one plan step, not three per tensor."""
    tensors = list(dict.fromkeys(as_tensors(*tensors)))  # a tensor checked twice is checked once
    return apply("AllFinite", tensors, name=name)

negative = export("negative", "neg")(unary_op("Neg", "Neg"))
abs_ = export("abs")(unary_op("Abs", "Abs"))
sign = unary_op("Sign", "Sign", "sign")
exp = unary_op("Exp", "Exp", "exp")
log = unary_op("Log", "Log", "log")
log1p = unary_op("Log1p", "Log1p", "log1p")
expm1 = unary_op("Expm1", "Expm1", "expm1")
sqrt = unary_op("Sqrt", "Sqrt", "sqrt")
rsqrt = unary_op("Rsqrt", "Rsqrt", "rsqrt")
square = unary_op("Square", "Square", "square")
reciprocal = unary_op("Reciprocal", "Reciprocal", "reciprocal")
sin = unary_op("Sin", "Sin", "sin")
cos = unary_op("Cos", "Cos", "cos")
tanh = unary_op("Tanh", "Tanh", "tanh")
sigmoid = unary_op("Sigmoid", "Sigmoid", "sigmoid")
relu = unary_op("Relu", "Relu", "relu")
softplus = unary_op("Softplus", "Softplus", "softplus")
floor = unary_op("Floor", "Floor", "floor")
ceil = unary_op("Ceil", "Ceil", "ceil")
round_ = export("round")(unary_op("Round", "Round"))
is_finite = unary_op("IsFinite", "IsFinite", "is_finite")
is_nan = unary_op("IsNan", "IsNan", "is_nan")
is_inf = unary_op("IsInf", "IsInf", "is_inf")

# -- casts ---------------------------------------------------------------------------------


def _cast_grad(op, g):
    src = op.inputs[0].dtype
    if src.is_floating and op.outputs[0].dtype.is_floating:
        return [cast(g, src)]
    return [None]


register("Cast", lambda x, dtype: x.astype(dtype.np), lambda inputs, dtype: [(dtype, inputs[0].shape)],
         grad=_cast_grad)


@export("cast", "to_float")
def cast(x, dtype=_dtypes.float32, name="Cast"):
    """``x`` as ``dtype``; a SparseTensor or IndexedSlices has its values cast (as TF's)."""
    if hasattr(x, "dense_shape") and hasattr(x, "indices") and hasattr(x, "values"):
        return type(x)(values=cast(x.values, dtype, name), indices=x.indices,
                       dense_shape=x.dense_shape)
    x = convert_to_tensor(x)
    dtype = _dtypes.as_dtype(dtype)
    if x.dtype == dtype:
        return x
    return apply("Cast", [x], name=name, dtype=dtype)


# -- matmul --------------------------------------------------------------------------------


def _matmul_forward(a, b, transpose_a, transpose_b):
    if transpose_a:  # .T of a matrix: the same view as swapaxes, without its Python layer
        a = a.T if a.ndim == 2 else np.swapaxes(a, -1, -2)
    if transpose_b:
        b = b.T if b.ndim == 2 else np.swapaxes(b, -1, -2)
    if a.ndim == 2 and b.ndim == 2 and threads.intra_op_threads() > 1:
        return split_gemm.product(a, b)  # at one BLAS thread, cut by rows across the workers
    return np.matmul(a, b)


def _matmul_infer(inputs, transpose_a, transpose_b):
    a, b = inputs
    dtype = same_dtype(inputs, "MatMul")
    if any(t.shape.ndims is not None and t.shape.ndims < 2 for t in inputs):
        raise ShapeError(f"both inputs must be at least rank 2, got shapes {a.shape} and {b.shape}")
    if a.shape.dims is None or b.shape.dims is None:
        return [(dtype, TensorShape(None))]
    m, k = a.shape.dims[-2:][::-1] if transpose_a else a.shape.dims[-2:]
    k2, n = b.shape.dims[-2:][::-1] if transpose_b else b.shape.dims[-2:]
    if k is not None and k2 is not None and k != k2:
        raise ShapeError(f"inner dimensions differ: {a.shape} @ {b.shape} ({k} vs {k2})")
    batch = broadcast_shapes(TensorShape(a.shape.dims[:-2]), TensorShape(b.shape.dims[:-2]))
    return [(dtype, TensorShape(batch.dims + (m, n)))]


def _matmul_grad(op, g):
    a, b = op.inputs
    ta, tb = op.attrs["transpose_a"], op.attrs["transpose_b"]
    if not ta and not tb:
        ga, gb = matmul(g, b, transpose_b=True), matmul(a, g, transpose_a=True)
    elif not ta and tb:
        ga, gb = matmul(g, b), matmul(g, a, transpose_a=True)
    elif ta and not tb:
        ga, gb = matmul(b, g, transpose_b=True), matmul(a, g)
    else:
        ga, gb = matmul(b, g, transpose_a=True, transpose_b=True), matmul(g, a, True, True)
    return [unbroadcast(ga, a), unbroadcast(gb, b)]


register("MatMul", _matmul_forward, _matmul_infer, grad=_matmul_grad)


@export("matmul")
def matmul(a, b, transpose_a=False, transpose_b=False, name="MatMul"):
    """``a @ b`` over the last two axes, batch axes broadcast (TF's BatchMatMulV2)."""
    a, b = as_tensors(a, b)
    return apply("MatMul", [a, b], name=name, transpose_a=bool(transpose_a),
                 transpose_b=bool(transpose_b))


# -- Python operators on tensors -----------------------------------------------------------


def _install_operators():
    def reflected(fn):
        return lambda self, other: fn(other, self)

    ops = {"add": add, "sub": subtract, "mul": multiply, "truediv": truediv, "pow": pow_,
           "floordiv": floordiv, "mod": floormod, "matmul": matmul}
    for name, fn in ops.items():
        setattr(Tensor, f"__{name}__", lambda self, other, fn=fn: fn(self, other))
        setattr(Tensor, f"__r{name}__", reflected(fn))
    Tensor.__neg__ = lambda self: negative(self)
    Tensor.__abs__ = lambda self: abs_(self)
    Tensor.__lt__ = lambda self, other: less(self, other)
    Tensor.__le__ = lambda self, other: less_equal(self, other)
    Tensor.__gt__ = lambda self, other: greater(self, other)
    Tensor.__ge__ = lambda self, other: greater_equal(self, other)
    Tensor.__and__ = lambda self, other: logical_and(self, other)
    Tensor.__or__ = lambda self, other: logical_or(self, other)
    Tensor.__invert__ = lambda self: logical_not(self)


_install_operators()


# -- range ---------------------------------------------------------------------------------


def _range_forward(start, limit, delta):
    start, limit, delta = start[()], limit[()], delta[()]
    if delta == 0:
        raise InvalidArgumentError(f"Requires delta != 0: {delta}")
    if (delta > 0 and start > limit) or (delta < 0 and start < limit):
        sign = ">" if delta > 0 else "<"
        raise InvalidArgumentError(f"Requires start {'<=' if delta > 0 else '>='} limit when "
                                   f"delta {sign} 0: {start}/{limit}")
    dtype = np.asarray(start).dtype
    if dtype.kind in "iu":
        size = (abs(int(limit) - int(start)) + abs(int(delta)) - 1) // abs(int(delta))
    else:
        size = int(np.ceil(abs((limit - start) / delta)))
    # As TF's kernel: start + i * delta, computed in the tensor's dtype.
    return (np.arange(size, dtype=dtype) * delta + start).astype(dtype, copy=False)


def _range_infer(inputs):
    dtype = same_dtype(inputs, "Range")
    for t in inputs:
        if t.shape.ndims not in (None, 0):
            raise ShapeError(f"start, limit and delta must be scalars, got {t.name} of shape "
                             f"{t.shape}")
    values = [static_value(t) for t in inputs]  # tf.range(tf.shape(x)[1] * 2): (12,) as TF's
    if all(v is not None for v in values):
        return [(dtype, TensorShape([len(_range_forward(*values))]))]
    return [(dtype, TensorShape([None]))]


register("Range", _range_forward, _range_infer)


@export("range")
def range_(start, limit=None, delta=1, dtype=None, name="range"):
    """``tf.range``: ``start, start + delta, ...`` up to but excluding ``limit`` (``range(n)``
    counts from 0). The dtype is ``dtype``, else the widest of the arguments' (int32 for Python
    ints, float32 as soon as one is a float)."""
    if limit is None:
        start, limit = 0, start
    raw = (start, limit, delta)
    args = [a if isinstance(a, Tensor) or hasattr(a, "_as_graph_element")
            else np.asarray(a) for a in raw]
    if dtype is None:
        given = [convert_to_tensor(a).dtype if not isinstance(a, np.ndarray)
                 else _dtypes.default_for(r) for a, r in zip(args, raw)]
        order = [_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64]
        dtype = max(given, key=lambda d: order.index(d) if d in order else -1)
    dtype = _dtypes.as_dtype(dtype)
    tensors = []
    for a in args:
        t = convert_to_tensor(a.astype(dtype.np) if isinstance(a, np.ndarray) else a)
        tensors.append(t if t.dtype == dtype else cast(t, dtype))
    return apply("Range", tensors, name=name)
