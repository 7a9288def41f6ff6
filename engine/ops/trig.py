"""Trigonometric and hyperbolic functions beyond sin and cos: ``tan``, ``asin``, ``acos``,
``atan``, ``atan2``, ``sinh``, ``cosh``, with TF's gradients (math_grad.py), written with the
public functions so that they differentiate again."""

from __future__ import annotations

import numpy as np

from ..framework.registry import apply, elementwise_infer, export, register
from .core import as_tensors, convert_to_tensor, unbroadcast
from .math import cos, reciprocal, rsqrt, square

_same = elementwise_infer()


def _float_infer(inputs, **_):
    if not inputs[0].dtype.is_floating:
        raise TypeError(f"expected a float tensor, got {inputs[0].dtype.name} ({inputs[0].name})")
    return _same(inputs)


register("Tan", np.tan, _float_infer, grad=lambda op, g: [g * square(reciprocal(
    cos(op.inputs[0])))])
register("Asin", np.arcsin, _float_infer,
         grad=lambda op, g: [g * rsqrt(1 - square(op.inputs[0]))])
register("Acos", np.arccos, _float_infer,
         grad=lambda op, g: [-g * rsqrt(1 - square(op.inputs[0]))])
register("Atan", np.arctan, _float_infer,
         grad=lambda op, g: [g * reciprocal(1 + square(op.inputs[0]))])
register("Sinh", np.sinh, _float_infer, grad=lambda op, g: [g * cosh(op.inputs[0])])
register("Cosh", np.cosh, _float_infer, grad=lambda op, g: [g * sinh(op.inputs[0])])


def _atan2_grad(op, g):
    y, x = op.inputs
    scale = g * reciprocal(square(x) + square(y))
    return [unbroadcast(x * scale, y), unbroadcast(-y * scale, x)]


register("Atan2", np.arctan2, _float_infer, grad=_atan2_grad)


def _unary(op_type, public):
    def fn(x, name=None):
        return apply(op_type, [convert_to_tensor(x)], name=name or op_type)

    fn.__name__ = public
    fn.__doc__ = f"``tf.{public}``, elementwise."
    return export(public)(fn)


tan = _unary("Tan", "tan")
asin = _unary("Asin", "asin")
acos = _unary("Acos", "acos")
atan = _unary("Atan", "atan")
sinh = _unary("Sinh", "sinh")
cosh = _unary("Cosh", "cosh")


@export("atan2")
def atan2(y, x, name="Atan2"):
    """``tf.atan2``: the angle of the point (x, y), elementwise, in (-pi, pi]."""
    y, x = as_tensors(y, x)
    return apply("Atan2", [y, x], name=name)
