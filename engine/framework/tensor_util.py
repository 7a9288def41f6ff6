"""What a tensor's value is known to be when the graph is built, as TF's shape functions find
it (``EvaluateConstantTensor``, ``ConstantPartialShape``): the sizes ``tf.reshape``,
``tf.zeros``, ``tf.fill``, the random ops and others read from a shape tensor or from scalars
(``[-1, tf.shape(x)[1] // 3]``), so that their static shapes are TF's."""

from __future__ import annotations

import math

import numpy as np

from .eager import EagerTensor
from .graph import Tensor
from .registry import get_op
from .tensor_shape import TensorShape

#: how many ops a value known at build time is computed from, at most, and how many elements it
#: has: what TF's shape functions evaluate is a small sub-graph of sizes (tf.shape(x)[1] // 3)
STATIC_VALUE_OPS = 32
STATIC_VALUE_ELEMENTS = 1024


def static_value(t, _budget=None):
    """The value ``t`` is known to have when the graph is built, else None, as TF's shape
    functions find it (its ``EvaluateConstantTensor``): a constant; ``tf.shape(x)`` or
    ``tf.size(x)`` where x's static shape is fully known, an element of ``tf.shape(x)`` that x's
    static shape knows; a pure op (not stateful, foldable, no control inputs, one small output)
    of such values, computed now by its forward (``tf.shape(x)[1] * 2``, a cast, a maximum)."""
    if isinstance(t, EagerTensor):  # executed: its value is known
        return np.asarray(t)
    budget = [STATIC_VALUE_OPS] if _budget is None else _budget
    op = t.op
    if op.type == "Const":
        return np.asarray(op.attrs["value"])
    budget[0] -= 1
    if budget[0] < 0 or op.type == "PlaceholderWithDefault" or not op.inputs:
        return None
    if op.type == "StridedSlice" and op.inputs[0].op.type == "Shape":
        index, of = op.attrs["index"], op.inputs[0].op.inputs[0].shape
        if (len(index) == 1 and isinstance(index[0], int | np.integer)
                and of.dims is not None and -of.ndims <= index[0] < of.ndims):
            d = of.dims[index[0]]
            return None if d is None else np.asarray(d, t.dtype.np)
    if op.type in ("Shape", "Size") and op.inputs[0].shape.is_fully_defined():
        dims = op.inputs[0].shape.as_list()
        return np.asarray(dims if op.type == "Shape" else math.prod(dims), t.dtype.np)
    op_def = get_op(op.type)
    if (op_def.stateful or not op_def.foldable or op_def.skips_unused or op.control_inputs
            or len(op.outputs) != 1 or not t.shape.is_fully_defined()
            or math.prod(t.shape.as_list()) > STATIC_VALUE_ELEMENTS):
        return None
    inputs = []
    for x in op.inputs:
        value = static_value(x, budget)
        if value is None:
            return None
        inputs.append(value)
    try:
        with np.errstate(all="ignore"):
            return np.asarray(op_def.forward(*inputs, **op.attrs))
    except Exception:  # noqa: BLE001 (unknown here; the op's own error shows when it runs)
        return None


def dim_value(t):
    """The size a scalar of a shape tensor is known to have when the graph is built, else None
    (a negative value, -1 included, is unknown, as in TF's shape functions)."""
    value = static_value(t)
    if value is None or value.ndim != 0 or value.dtype.kind not in "iu" or value < 0:
        return None
    return int(value)


def shape_tensor_dims(t):
    """The static shape a shape tensor ``t`` (an int vector) is known to describe when the graph
    is built, as far as TF's shape functions see (its ``ConstantPartialShape``): a constant's
    values (-1 unknown), ``tf.shape(x)`` as x's static shape, a ``tf.stack`` of scalars whose
    values ``static_value`` knows (``tf.shape(x)[1] // 3``), a ``tf.concat`` of such vectors, a
    vector ``static_value`` knows; else only the rank, from ``t``'s length."""
    if isinstance(t, EagerTensor):
        return TensorShape([None if d < 0 else int(d) for d in np.asarray(t).reshape(-1)])
    if t.op.type == "Const":
        return TensorShape([None if d < 0 else int(d)
                            for d in np.asarray(t.op.attrs["value"]).reshape(-1)])
    if t.op.type == "Shape":
        return t.op.inputs[0].shape
    if t.op.type == "StridedSlice" and t.op.inputs[0].op.type == "Shape":
        index, of = t.op.attrs["index"], t.op.inputs[0].op.inputs[0].shape
        if len(index) == 1 and isinstance(index[0], slice) and of.dims is not None:
            return TensorShape(of.dims[index[0]])  # tf.shape(x)[1:]
    if t.op.type == "Pack" and t.shape.ndims == 1:
        return TensorShape([dim_value(d) for d in t.op.inputs])
    if t.op.type == "ConcatV2" and t.shape.ndims == 1:
        parts = [shape_tensor_dims(p) for p in t.op.inputs]
        if all(p.dims is not None for p in parts):
            return TensorShape([d for p in parts for d in p.dims])
    value = static_value(t)
    if value is not None and value.ndim == 1 and value.dtype.kind in "iu":
        return TensorShape([None if d < 0 else int(d) for d in value])
    rank = t.shape.dims[0] if t.shape.ndims == 1 else None
    return TensorShape(None if rank is None else [None] * rank)


def known_sizes(sizes):
    """``sizes`` (an int, a list of ints and scalar tensors, or an int tensor) with each tensor
    whose value ``static_value`` knows replaced by that value as Python ints: what an API that
    needs its sizes at build time (tf.tile's multiples, a random op's shape, one_hot's depth)
    takes where TF would read them from the graph (``[tf.shape(x)[1] * 2, 3]``). Tensors of
    unknown value are left as they are."""
    if isinstance(sizes, Tensor):
        value = static_value(sizes)
        return sizes if value is None or value.dtype.kind not in "iu" else value.tolist()
    if isinstance(sizes, list | tuple):
        return type(sizes)(known_sizes(s) for s in sizes)
    return sizes
