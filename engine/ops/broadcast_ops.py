"""A tensor repeated along its axes: ``tf.tile`` and ``tf.broadcast_to``, with
``tf.broadcast_dynamic_shape`` and ``tf.broadcast_static_shape``.

``tile(x, multiples)`` repeats x ``multiples[i]`` times along axis i; its gradient sums the
copies. Multiples known when the graph is built (ints, constants, sizes TF's shape functions
know) are the ``Tile`` op's attribute; multiples known only when it runs are ``TileDynamic``'s
second input, its static shape TF's (``x.shape[i] * multiples[i]`` where both are known).
``broadcast_to(x, shape)`` broadcasts x to ``shape`` as numpy does (an axis of 1 repeated, axes
added in front; never a size other than 1 changed); its gradient sums over the broadcast axes
to x's shape (``unbroadcast``).
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, ShapeError
from ..framework.graph import Tensor
from ..framework.registry import apply, broadcast_shapes, export, register
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import known_sizes, shape_tensor_dims
from .core import convert_to_tensor, unbroadcast

# -- tile ----------------------------------------------------------------------------------


def _check_multiples(x, multiples):
    if len(multiples) != x.ndim:
        raise InvalidArgumentError(f"Expected multiples argument to be a vector of length "
                                   f"{x.ndim} but got length {len(multiples)}")
    if any(m < 0 for m in multiples):
        raise InvalidArgumentError(f"Expected multiples argument to be non-negative, but got "
                                   f"{list(multiples)}")
    return tuple(int(m) for m in multiples)


def _tile_sum(g, x, multiples):
    """The gradient of a tile: g [m0 d0, m1 d1, ...] summed over the copies onto x's shape."""
    split = []
    for m, d in zip(multiples, x.shape):
        split.extend([m, d])
    axes = tuple(range(0, 2 * len(multiples), 2))
    return g.reshape(split).sum(axis=axes)


def _tiled_shape(x, dims):
    """x's static shape tiled by multiples whose static values are ``dims`` (None: unknown)."""
    if dims.dims is None:
        return TensorShape(None if x.shape.ndims is None else [None] * x.shape.ndims)
    if x.shape.dims is None:
        return TensorShape([None] * len(dims.dims))
    if len(dims.dims) != x.shape.ndims:
        raise ShapeError(f"multiples {dims} must have one entry per axis of {x.shape}")
    return TensorShape(None if d is None or m is None else d * m
                       for d, m in zip(x.shape.dims, dims.dims))


register("Tile", lambda x, multiples: np.tile(x, _check_multiples(x, multiples)),
         lambda inputs, multiples: [(inputs[0].dtype,
                                     _tiled_shape(inputs[0], TensorShape(multiples)))],
         grad=lambda op, g: [apply("TileGrad", [g, op.inputs[0]], name="TileGrad",
                                   multiples=op.attrs["multiples"])])
register("TileGrad", _tile_sum,
         lambda inputs, multiples: [(inputs[0].dtype, inputs[1].shape)],
         grad=lambda op, dy: [tile(dy, op.attrs["multiples"]), None])


def _tile_dynamic_infer(inputs):
    x, multiples = inputs
    if not multiples.dtype.is_integer or multiples.shape.ndims not in (None, 1):
        raise ShapeError(f"tile: multiples must be an integer vector, got "
                         f"{multiples.dtype.name} of shape {multiples.shape} ({multiples.name})")
    return [(x.dtype, _tiled_shape(x, shape_tensor_dims(multiples)))]


register("TileDynamic",
         lambda x, multiples: np.tile(x, _check_multiples(x, multiples.tolist())),
         _tile_dynamic_infer,
         grad=lambda op, g: [apply("TileDynamicGrad", [g, *op.inputs], name="TileGrad"), None])
register("TileDynamicGrad",
         lambda g, x, multiples: _tile_sum(g, x, multiples.tolist()),
         lambda inputs: [(inputs[0].dtype, inputs[1].shape)],
         grad=lambda op, dy: [apply("TileDynamic", [dy, op.inputs[2]], name="Tile"), None,
                              None])


@export("tile")
def tile(input, multiples, name="Tile"):  # noqa: A002
    """``input`` repeated ``multiples[i]`` times along axis i; ``multiples`` a list of ints and
    scalar tensors or an int vector tensor."""
    x = convert_to_tensor(input)
    multiples = known_sizes(multiples)
    if isinstance(multiples, Tensor) or any(isinstance(m, Tensor) for m in multiples):
        return apply("TileDynamic", [x, convert_to_tensor(multiples)], name=name)
    return apply("Tile", [x], name=name, multiples=tuple(int(m) for m in multiples))


# -- broadcast_to --------------------------------------------------------------------------


def _broadcast_to_forward(x, shape):
    try:
        return np.broadcast_to(x, tuple(shape.tolist()))
    except ValueError:
        raise InvalidArgumentError(f"Incompatible shapes: {list(x.shape)} vs. "
                                   f"{shape.tolist()}") from None


def _broadcast_to_infer(inputs):
    x, shape = inputs
    if not shape.dtype.is_integer or shape.shape.ndims not in (None, 1):
        raise ShapeError(f"broadcast_to: shape must be an integer vector, got "
                         f"{shape.dtype.name} of shape {shape.shape} ({shape.name})")
    target = shape_tensor_dims(shape)
    if target.dims is None or x.shape.dims is None:
        return [(x.dtype, target)]
    if x.shape.ndims > target.ndims:
        raise ShapeError(f"broadcast_to: the input of shape {x.shape} has more axes than the "
                         f"shape {target}")
    dims = [1] * (target.ndims - x.shape.ndims) + list(x.shape.dims)
    out = []
    for d, t in zip(dims, target.dims):
        if d is None or d == 1:
            out.append(t)
        elif t is not None and t != d:  # TF's shape function: only a 1 broadcasts
            raise ShapeError(f"Dimensions must be equal, but are {d} and {t}: {x.name} of "
                             f"shape {x.shape} broadcast to {target}")
        else:
            out.append(d)
    return [(x.dtype, TensorShape(out))]


register("BroadcastTo", _broadcast_to_forward, _broadcast_to_infer,
         grad=lambda op, g: [unbroadcast(g, op.inputs[0]), None], aliases_input=True)


@export("broadcast_to")
def broadcast_to(input, shape, name="BroadcastTo"):  # noqa: A002
    """``input`` broadcast to ``shape`` (a list of ints and scalar tensors, or an int vector
    tensor) as numpy broadcasts: axes of size 1 repeated, axes added in front."""
    if not isinstance(shape, Tensor):
        shape = convert_to_tensor(known_sizes(list(shape)), preferred_dtype=_dtypes.int32)
    return apply("BroadcastTo", [convert_to_tensor(input), shape], name=name)


def _broadcast_args(s0, s1):
    try:
        return np.asarray(np.broadcast_shapes(tuple(s0.tolist()), tuple(s1.tolist())),
                          dtype=s0.dtype).reshape(-1)
    except ValueError:
        raise InvalidArgumentError(f"Incompatible shapes: {s0.tolist()} vs. {s1.tolist()}"
                                   ) from None


def _broadcast_args_infer(inputs):
    s0, s1 = inputs
    if s0.dtype != s1.dtype or not s0.dtype.is_integer:
        raise TypeError(f"broadcast_dynamic_shape: both shapes must be int32 or int64 vectors "
                        f"of one dtype, got {s0.dtype.name} and {s1.dtype.name}")
    n0, n1 = (s.shape.dims[0] if s.shape.ndims == 1 else None for s in (s0, s1))
    return [(s0.dtype, TensorShape([None if n0 is None or n1 is None else max(n0, n1)]))]


register("BroadcastArgs", _broadcast_args, _broadcast_args_infer)


def broadcast_dynamic_shape(shape_x, shape_y):
    """The shape (an int vector tensor) that ``shape_x`` and ``shape_y`` broadcast to, computed
    when the graph runs (TF's BroadcastArgs; incompatible shapes are an InvalidArgumentError)."""
    shape_x = convert_to_tensor(shape_x, preferred_dtype=_dtypes.int32)
    shape_y = convert_to_tensor(shape_y, dtype=shape_x.dtype)
    return apply("BroadcastArgs", [shape_x, shape_y], name="BroadcastArgs")


def broadcast_static_shape(shape_x, shape_y):
    """The TensorShape ``shape_x`` and ``shape_y`` broadcast to (unknown sizes where they are
    unknown); incompatible shapes are TF's ValueError."""
    shape_x, shape_y = TensorShape(shape_x), TensorShape(shape_y)
    try:
        return broadcast_shapes(shape_x, shape_y)
    except ShapeError:
        raise ValueError(f"Incompatible shapes for broadcasting. Two shapes are compatible if "
                         f"for each dimension pair they are either equal or one of them is 1. "
                         f"Received: {shape_x} and {shape_y}.") from None
