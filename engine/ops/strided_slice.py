"""``tf.strided_slice`` and a tensor's ``[]``: Python's basic slicing as TF's StridedSlice.

Bounds known when the graph is built (ints, constants, sizes TF's shape functions know) make
``StridedSlice``, whose ``index`` attribute is what numpy's ``x[index]`` takes. Bounds known
only when the graph runs (``x[:, :tf.shape(y)[1]]`` with y's size unknown, ``x[i]`` of a scalar
tensor ``i``, tf.strided_slice of computed begin/end/strides) make ``DynamicStridedSlice``,
TF's StridedSlice with its begin, end and strides as inputs and its five masks as attributes;
its static shape is what TF's shape function infers when begin or end is unknown: a shrunk axis
dropped, a new axis of 1, an axis with both masks set sliced by its (known) stride, every other
axis unknown; unknown strides leave the shape unknown. Either gradient puts the incoming
gradient back at its place in zeros of the input's (run-time) shape.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, ShapeError
from ..framework.graph import Tensor
from ..framework.registry import apply, register
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import known_sizes, static_value
from .core import convert_to_tensor, ones_like
from .math import cast
from .slicing import static_ints

# -- bounds known when the graph is built --------------------------------------------------


def _normalize_index(item):
    if not isinstance(item, tuple):
        item = (item,)
    out = []
    for it in item:
        if isinstance(it, slice):
            for v in (it.start, it.stop, it.step):
                if v is not None and not isinstance(v, int | np.integer):
                    raise TypeError("only static integer slice bounds are supported")
            out.append(slice(it.start, it.stop, it.step))
        elif isinstance(it, int | np.integer) and not isinstance(it, bool):
            out.append(int(it))
        elif it is None or it is Ellipsis:
            out.append(it)
        else:
            raise TypeError(f"unsupported index {it!r}: only ints, slices, None and ... are allowed")
    return tuple(out)


def _slice_infer(inputs, index):
    x = inputs[0]
    if x.shape.dims is None:
        return [(x.dtype, TensorShape(None))]
    dims = list(x.shape.dims)
    consumed = sum(1 for it in index if it is not None and it is not Ellipsis)
    if consumed > len(dims):
        raise ShapeError(f"too many indices ({consumed}) for a tensor of shape {x.shape}")
    expanded = []
    for it in index:
        if it is Ellipsis:
            expanded.extend([slice(None)] * (len(dims) - consumed))
        else:
            expanded.append(it)
    expanded.extend([slice(None)] * (len(dims) - sum(1 for it in expanded if it is not None)))
    out, axis = [], 0
    for it in expanded:
        if it is None:
            out.append(1)
            continue
        d = dims[axis]
        if isinstance(it, int):
            if d is not None and not -d <= it < d:
                raise ShapeError(f"index {it} is out of bounds for axis {axis} of size {d}")
        elif d is None:
            out.append(None)
        else:
            out.append(len(range(*it.indices(d))))
        axis += 1
    return [(x.dtype, TensorShape(out))]


def _slice_grad_forward(g, x, index):
    out = np.zeros(x.shape, dtype=g.dtype)
    out[index] = g
    return out


register("SliceGrad", _slice_grad_forward, lambda inputs, index: [(inputs[0].dtype, inputs[1].shape)],
         grad=lambda op, dy: [strided_slice(dy, op.attrs["index"]), None])
register("StridedSlice", lambda x, index: x[index], _slice_infer,
         grad=lambda op, g: [apply("SliceGrad", [g, op.inputs[0]], name="SliceGrad",
                                   index=op.attrs["index"])],
         aliases_input=True)

# -- bounds known when the graph runs ------------------------------------------------------

_MASKS = ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask", "shrink_axis_mask")


def _spec_index(begin, end, strides, begin_mask, end_mask, ellipsis_mask, new_axis_mask,
                shrink_axis_mask):
    """TF's sparse slice spec (lists of ints and the masks) as the index numpy's ``x[index]``
    takes: bit i of begin_mask / end_mask ignores begin[i] / end[i], ellipsis_mask puts
    ``...``, new_axis_mask a new axis, shrink_axis_mask the single index begin[i]."""
    index = []
    for i, (b, e, k) in enumerate(zip(begin, end, strides)):
        bit = 1 << i
        if ellipsis_mask & bit:
            index.append(Ellipsis)
        elif new_axis_mask & bit:
            index.append(None)
        elif shrink_axis_mask & bit:
            index.append(int(b))
        else:
            if k == 0:
                raise InvalidArgumentError(f"strided_slice: strides[{i}] must be non-zero")
            index.append(slice(None if begin_mask & bit else int(b),
                               None if end_mask & bit else int(e), int(k)))
    return tuple(index)


def _dynamic_index(x, begin, end, strides, masks):
    """The numpy index of a DynamicStridedSlice's run-time bounds, checked against ``x``."""
    if not len(begin) == len(end) == len(strides):
        raise InvalidArgumentError(f"Expected begin, end, and strides to be 1D equal size "
                                   f"tensors, but got shapes [{len(begin)}], [{len(end)}], and "
                                   f"[{len(strides)}] instead.")
    return _spec_index(begin.tolist(), end.tolist(), strides.tolist(), **masks)


def _dynamic_forward(x, begin, end, strides, **masks):
    try:
        return x[_dynamic_index(x, begin, end, strides, masks)]
    except IndexError as exc:  # a shrunk axis's index out of range, too many indices
        raise InvalidArgumentError(f"strided_slice of a tensor of shape {list(x.shape)} with "
                                   f"begin {begin.tolist()}, end {end.tolist()}: {exc}") from None


def _dynamic_infer(inputs, **masks):
    x, begin, end, strides = inputs
    for t, what in ((begin, "begin"), (end, "end"), (strides, "strides")):
        if not t.dtype.is_integer or t.shape.ndims not in (None, 1):
            raise ShapeError(f"strided_slice: {what} must be an integer vector, got "
                             f"{t.dtype.name} of shape {t.shape} ({t.name})")
    steps = static_value(strides)  # TF: unknown strides, an unknown shape
    if x.shape.ndims is None or steps is None:
        return [(x.dtype, TensorShape(None))]
    dims, bits = x.shape.dims, [1 << i for i in range(len(steps))]
    first_ellipsis = next((i for i, b in enumerate(bits) if masks["ellipsis_mask"] & b), None)
    consumed = sum(1 for b in bits if not (masks["ellipsis_mask"] | masks["new_axis_mask"]) & b)
    if consumed > len(dims):
        raise ShapeError(f"strided_slice: {consumed} indices for a tensor of shape {x.shape}")
    out, axis = [], 0
    for i, bit in enumerate(bits):
        if i == first_ellipsis:
            out.extend(dims[axis:axis + len(dims) - consumed])
            axis += len(dims) - consumed
        elif masks["ellipsis_mask"] & bit:
            raise ShapeError("strided_slice: multiple ellipses in a slice spec are not allowed")
        elif masks["new_axis_mask"] & bit:
            out.append(1)
        elif masks["shrink_axis_mask"] & bit:
            axis += 1
        else:  # TF: an axis with both masks is the whole axis, strided; the rest unknown
            whole = masks["begin_mask"] & masks["end_mask"] & bit and dims[axis] is not None
            out.append(len(range(*slice(None, None, int(steps[i]) or 1).indices(dims[axis])))
                       if whole else None)
            axis += 1
    if first_ellipsis is None:
        out.extend(dims[axis:])
    return [(x.dtype, TensorShape(out))]


def _dynamic_grad_forward(g, x, begin, end, strides, **masks):
    out = np.zeros(x.shape, dtype=g.dtype)
    out[_dynamic_index(x, begin, end, strides, masks)] = g
    return out


register("DynamicStridedSlice", _dynamic_forward, _dynamic_infer,
         grad=lambda op, g: [apply("DynamicStridedSliceGrad", [g, *op.inputs],
                                   name="StridedSliceGrad", **op.attrs), None, None, None],
         aliases_input=True)
register("DynamicStridedSliceGrad", _dynamic_grad_forward,
         lambda inputs, **_: [(inputs[0].dtype, inputs[1].shape)],
         grad=lambda op, gg: [apply("DynamicStridedSlice", [gg, *op.inputs[2:]],
                                    name="StridedSlice", **op.attrs), None, None, None, None])


def _packed(values, what):
    """A bound list mixing ints and scalar int tensors as one int vector tensor (TF's stack of
    them; int32 unless a tensor is int64, as TF's _slice_helper casts)."""
    if isinstance(values, Tensor):
        if not values.dtype.is_integer:
            raise TypeError(f"strided_slice's {what} must be integers, got {values.dtype.name}")
        return values
    tensors = [v for v in values if isinstance(v, Tensor)]
    for t in tensors:
        if not t.dtype.is_integer or t.shape.ndims not in (None, 0):
            raise TypeError(f"strided_slice's {what} must be ints or scalar int tensors, got "
                            f"{t.name} ({t.dtype.name}, shape {t.shape})")
    wide = any(t.dtype == _dtypes.int64 for t in tensors)
    dtype = _dtypes.int64 if wide else _dtypes.int32
    return convert_to_tensor([cast(v, dtype) if isinstance(v, Tensor) else int(v) for v in values],
                             dtype=None if tensors else dtype)


def strided_slice(input_, begin, end=None, strides=None, begin_mask=0, end_mask=0,
                  ellipsis_mask=0, new_axis_mask=0, shrink_axis_mask=0, var=None,
                  name="strided_slice"):
    """``tf.strided_slice(input_, begin, end, strides, *_mask)`` (TF's masks: see
    ``_spec_index``); begin, end and strides may be lists of ints and scalar tensors or int
    vector tensors. The engine's own form ``strided_slice(x, index)`` takes what ``x[index]``
    takes."""
    x = convert_to_tensor(input_)
    if end is None:
        return apply("StridedSlice", [x], name=name, index=_normalize_index(begin))
    masks = dict(begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                 new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)
    begin = known_sizes(begin)
    if strides is None:  # TF: ones_like(begin)
        strides = ones_like(begin) if isinstance(begin, Tensor) else [1] * len(
            begin if isinstance(begin, list | tuple) else np.ravel(begin))  # ints and tensors
    spec = [begin, known_sizes(end), known_sizes(strides)]
    if any(isinstance(v, Tensor) or any(isinstance(e, Tensor) for e in v) for v in spec):
        return apply("DynamicStridedSlice",
                     [x, *(_packed(v, w) for v, w in zip(spec, ("begin", "end", "strides")))],
                     name=name, **{k: int(v) for k, v in masks.items()})
    spec = [static_ints(v, f"strided_slice's {w}").ravel().tolist()
            for v, w in zip(spec, ("begin", "end", "strides"))]
    if not len(spec[0]) == len(spec[1]) == len(spec[2]):
        raise ValueError(f"strided_slice: begin, end and strides must have one entry per sliced "
                         f"axis, got {spec[0]}, {spec[1]} and {spec[2]}")
    return apply("StridedSlice", [x], name=name,
                 index=_normalize_index(_spec_index(*spec, **masks)))


def _is_bound(v):
    return isinstance(v, Tensor) or hasattr(v, "_as_graph_element")


def getitem(tensor, item):
    """``tensor[item]``: ints, slices, ``None`` and ``...`` make a StridedSlice; a scalar int
    tensor as an index or a slice bound makes TF's sparse spec (TF's ``_slice_helper``: a
    tensor index i is begin i, end i + 1 with its shrink bit) for ``strided_slice``."""
    items = item if isinstance(item, tuple) else (item,)
    if not any(_is_bound(it) or (isinstance(it, slice) and any(
            _is_bound(v) for v in (it.start, it.stop, it.step))) for it in items):
        return strided_slice(tensor, item)
    begin, end, strides, masks = [], [], [], dict.fromkeys(_MASKS, 0)
    for i, it in enumerate(items):
        bit = 1 << i
        if isinstance(it, slice):
            begin.append(0 if it.start is None else _bound(it.start))
            end.append(0 if it.stop is None else _bound(it.stop))
            strides.append(1 if it.step is None else _bound(it.step))
            masks["begin_mask"] |= bit if it.start is None else 0
            masks["end_mask"] |= bit if it.stop is None else 0
        elif it is Ellipsis or it is None:
            begin.append(0), end.append(0), strides.append(1)
            masks["ellipsis_mask" if it is Ellipsis else "new_axis_mask"] |= bit
        else:
            it = _bound(it)
            begin.append(it), end.append(it + 1), strides.append(1)
            masks["shrink_axis_mask"] |= bit
    return strided_slice(tensor, begin, end, strides, **masks)


def _bound(v):
    """An index or slice bound: an int or a scalar int tensor (TF's _check_index)."""
    if _is_bound(v):
        v = convert_to_tensor(v)
        if v.dtype in (_dtypes.int32, _dtypes.int64) and v.shape.ndims in (None, 0):
            return v
    elif isinstance(v, int | np.integer) and not isinstance(v, bool):
        return int(v)
    raise TypeError(f"Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and "
                    f"scalar tf.int32/tf.int64 tensors are valid indices, got {v!r}")


Tensor.__getitem__ = getitem
