"""``cumsum`` and ``cumprod`` along an axis, with TF's ``exclusive`` and ``reverse`` flags.

``cumsum([a, b, c])`` is ``[a, a + b, a + b + c]``; ``exclusive=True`` gives
``[0, a, a + b]`` (``[1, a, a * b]`` for cumprod) and ``reverse=True`` runs from the end:
``[a + b + c, b + c, c]`` (TF's math_ops.cumsum docstring). Gradients are TF's (math_grad.py):
cumsum's is the cumsum of the gradient in the other direction; cumprod's divides by x, so it
is defined where x has no zeros, as in TF.
"""

from __future__ import annotations

import numpy as np

from ..framework.errors import ShapeError
from ..framework.registry import apply, export, normalize_axis, register
from .core import convert_to_tensor


def _scan(ufunc, identity):
    def forward(x, axis, exclusive, reverse):
        if reverse:
            x = np.flip(x, axis)
        out = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
        if exclusive:
            head = [slice(None)] * x.ndim
            head[axis] = slice(0, 1)
            body = [slice(None)] * x.ndim
            body[axis] = slice(0, -1)
            first = np.full_like(out[tuple(head)], identity)
            out = np.concatenate([first, out[tuple(body)]], axis=axis)
        return np.flip(out, axis) if reverse else np.ascontiguousarray(out)

    return forward


def _infer(inputs, axis, exclusive, reverse):
    x = inputs[0]
    if x.shape.ndims is not None and not 0 <= axis < max(x.shape.ndims, 1):
        raise ShapeError(f"axis {axis} is out of range for a tensor of shape {x.shape}")
    return [(x.dtype, x.shape)]


def _cumsum_grad(op, g):
    a = op.attrs
    return [cumsum(g, a["axis"], exclusive=a["exclusive"], reverse=not a["reverse"])]


def _cumprod_grad(op, g):
    x, y, a = op.inputs[0], op.outputs[0], op.attrs
    return [cumsum(y * g, a["axis"], exclusive=a["exclusive"], reverse=not a["reverse"]) / x]


register("Cumsum", _scan(np.add, 0), _infer, grad=_cumsum_grad)
register("Cumprod", _scan(np.multiply, 1), _infer, grad=_cumprod_grad)


def _apply(op_type, x, axis, exclusive, reverse, name):
    x = convert_to_tensor(x)
    if x.shape.ndims == 0:
        raise ShapeError(f"{op_type.lower()}: the input must have rank >= 1 ({x.name})")
    axis = normalize_axis(int(axis), x.shape.ndims)[0]
    if axis < 0:
        raise ValueError(f"{op_type.lower()}: a negative axis needs a known rank ({x.name})")
    return apply(op_type, [x], name=name, axis=axis, exclusive=bool(exclusive),
                 reverse=bool(reverse))


@export("cumsum")
def cumsum(x, axis=0, exclusive=False, reverse=False, name="Cumsum"):
    """``tf.cumsum``: running sums along ``axis``."""
    return _apply("Cumsum", x, axis, exclusive, reverse, name)


@export("cumprod")
def cumprod(x, axis=0, exclusive=False, reverse=False, name="Cumprod"):
    """``tf.cumprod``: running products along ``axis``."""
    return _apply("Cumprod", x, axis, exclusive, reverse, name)
