"""Shape ops: reshape, transpose, expand/squeeze, concat, stack, split, reverse, one_hot, shape, size.

Gradients that must follow a run-time shape (unknown batch dims) use ``*Like`` ops that read the
shape of a reference tensor when the plan runs.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, ShapeError
from ..framework.graph import Tensor
from ..framework.registry import apply, export, normalize_axis, register, same_dtype
from ..framework.tensor_shape import TensorShape, dimension_value
from ..framework.tensor_util import known_sizes
from .core import as_tensors, convert_to_tensor, runtime_shape, shape_tensor_dims, zeros_like

# -- reshape family ------------------------------------------------------------------------

register("ReshapeLike", lambda g, like: np.reshape(g, like.shape),
         lambda inputs: [(inputs[0].dtype, inputs[1].shape)],
         grad=lambda op, dy: [reshape_like(dy, op.inputs[0]), None], aliases_input=True)


def reshape_like(g, x):
    if g.shape.is_fully_defined() and g.shape == x.shape:
        return g
    return apply("ReshapeLike", [g, x], name="Reshape")


def _reshaped(x, dims):
    """The static shape of ``x`` reshaped to ``dims`` (None where unknown or -1), as TF's
    reshape shape function infers it: one unknown size follows from x's known element count."""
    if dims.dims is None:
        return TensorShape(None)
    dims = list(dims.dims)
    known = x.shape.num_elements()
    unknown = [i for i, d in enumerate(dims) if d is None]
    rest = int(np.prod([d for d in dims if d is not None]))
    if known is None:
        return TensorShape(dims)
    if (known != rest if not unknown else (known % rest if rest else known)):
        raise ShapeError(f"cannot reshape a tensor of shape {x.shape} ({known} elements) into "
                         f"shape {TensorShape(dims)} ({rest} elements"
                         f"{' times the unknown sizes' if unknown else ''})")
    if len(unknown) == 1 and rest:
        dims[unknown[0]] = known // rest
    return TensorShape(dims)


def _reshape_infer(inputs, shape):
    if list(shape).count(-1) > 1:
        raise ShapeError(f"at most one -1 is allowed in the new shape {list(shape)}")
    x = inputs[0]
    return [(x.dtype, _reshaped(x, TensorShape([None if d == -1 else d for d in shape])))]


register("Reshape", lambda x, shape: np.reshape(x, shape), _reshape_infer,
         grad=lambda op, g: [reshape_like(g, op.inputs[0])], aliases_input=True)


def _dynamic_reshape_forward(x, shape):
    """``x`` reshaped to the sizes of the int vector ``shape`` (one may be -1), with TF's
    errors when they do not fit."""
    dims = [int(d) for d in shape]
    missing = [i for i, d in enumerate(dims) if d == -1]
    if len(missing) > 1:
        raise InvalidArgumentError(f"Only one input size may be -1, not both {missing[0]} and "
                                   f"{missing[1]}")
    for i, d in enumerate(dims):
        if d < -1:
            raise InvalidArgumentError(f"Size {i} must be non-negative, not {d}")
    rest = int(np.prod([d for d in dims if d != -1]))
    if missing and (rest == 0 or x.size % rest):
        raise InvalidArgumentError(f"Input to reshape is a tensor with {x.size} values, but the "
                                   f"requested shape requires a multiple of {rest}")
    if not missing and x.size != rest:
        raise InvalidArgumentError(f"Input to reshape is a tensor with {x.size} values, but the "
                                   f"requested shape has {rest}")
    return np.reshape(x, dims)


def _dynamic_reshape_infer(inputs):
    x, shape = inputs
    if shape.shape.ndims not in (None, 1) or not shape.dtype.is_integer:
        raise ShapeError(f"Reshape: shape must be a vector of integers, got {shape.dtype.name} "
                         f"of shape {shape.shape} ({shape.name})")
    return [(x.dtype, _reshaped(x, shape_tensor_dims(shape)))]


# TF's Reshape with its shape an input: the sizes are known when the graph runs
register("DynamicReshape", _dynamic_reshape_forward, _dynamic_reshape_infer,
         grad=lambda op, g: [reshape_like(g, op.inputs[0]), None], aliases_input=True)


@export("reshape")
def reshape(tensor, shape, name="Reshape"):
    """``tf.reshape``: ``shape`` a list of sizes (one may be -1), or known only when the graph
    runs: an int vector tensor (``tf.shape(y)``) or a list mixing ints and scalar tensors."""
    dims = runtime_shape(shape)
    if dims is not None:
        return apply("DynamicReshape", [convert_to_tensor(tensor), dims], name=name)
    if isinstance(shape, Tensor):
        shape = np.asarray(shape.op.attrs["value"]).reshape(-1)
    return apply("Reshape", [convert_to_tensor(tensor)], name=name,
                 shape=tuple(-1 if dimension_value(d) is None else int(d) for d in shape))


def _transpose_infer(inputs, perm):
    """``perm`` None reverses the axes of an input whose rank is known only when the op runs."""
    x = inputs[0]
    if x.shape.dims is None:
        return [(x.dtype, TensorShape(None))]
    if perm is None:
        perm = tuple(range(x.shape.ndims))[::-1]
    if sorted(perm) != list(range(x.shape.ndims)):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the axes of shape {x.shape}")
    return [(x.dtype, TensorShape(x.shape.dims[p] for p in perm))]


def _transpose_grad(op, g):
    perm = op.attrs["perm"]
    return [apply("Transpose", [g], name="transpose",
                  perm=None if perm is None else tuple(int(p) for p in np.argsort(perm)))]


register("Transpose", lambda x, perm: np.transpose(x, perm), _transpose_infer,
         grad=_transpose_grad, aliases_input=True)


@export("transpose")
def transpose(a, perm=None, name="transpose"):
    a = convert_to_tensor(a)
    if perm is None and a.shape.ndims is not None:
        perm = list(range(a.shape.ndims))[::-1]
    return apply("Transpose", [a], name=name,
                 perm=None if perm is None else tuple(int(p) for p in perm))


def _expand_infer(inputs, axis):
    x = inputs[0]
    if x.shape.dims is None:
        return [(x.dtype, TensorShape(None))]
    dims = list(x.shape.dims)
    n = len(dims) + 1
    if not -n <= axis < n:
        raise ShapeError(f"axis {axis} is out of range for expand_dims of shape {x.shape}")
    dims.insert(axis % n, 1)
    return [(x.dtype, TensorShape(dims))]


register("ExpandDims", lambda x, axis: np.expand_dims(x, axis), _expand_infer,
         grad=lambda op, g: [reshape_like(g, op.inputs[0])], aliases_input=True)


@export("expand_dims")
def expand_dims(input, axis, name="ExpandDims"):  # noqa: A002
    return apply("ExpandDims", [convert_to_tensor(input)], name=name, axis=int(axis))


def _squeeze_infer(inputs, axes):
    """``axes`` None: every size-1 axis, known only when the op runs (unknown static rank)."""
    x = inputs[0]
    if x.shape.dims is None or axes is None:
        return [(x.dtype, TensorShape(None))]
    for a in axes:
        if x.shape.dims[a] not in (1, None):
            raise ShapeError(f"cannot squeeze axis {a} of size {x.shape.dims[a]} (shape {x.shape})")
    return [(x.dtype, TensorShape(d for i, d in enumerate(x.shape.dims) if i not in axes))]


register("Squeeze", lambda x, axes: np.squeeze(x, axes), _squeeze_infer,
         grad=lambda op, g: [reshape_like(g, op.inputs[0])], aliases_input=True)


@export("squeeze")
def squeeze(input, axis=None, name="Squeeze", squeeze_dims=None):  # noqa: A002
    x = convert_to_tensor(input)
    axis = axis if axis is not None else squeeze_dims
    if axis is None:
        axes = None if not x.shape.is_fully_defined() else \
            tuple(i for i, d in enumerate(x.shape.dims) if d == 1)
    else:
        axes = normalize_axis(axis, x.shape.ndims)
    return apply("Squeeze", [x], name=name, axes=axes)


# -- concat, stack, unstack, split ---------------------------------------------------------


def _concat_infer(inputs, axis):
    dtype = same_dtype(inputs, "ConcatV2")
    shapes = [t.shape for t in inputs if t.shape.dims is not None]
    if not shapes:
        return [(dtype, TensorShape(None))]
    rank = shapes[0].ndims
    out = list(shapes[0].dims)
    if len(shapes) < len(inputs):  # an input of unknown shape: the concatenated size is unknown
        out[axis] = None
    for s in shapes[1:]:
        if s.ndims != rank:
            raise ShapeError(f"all inputs must have the same rank, got {shapes[0]} and {s}")
        for i, d in enumerate(s.dims):
            if i == axis:
                out[i] = None if out[i] is None or d is None else out[i] + d
            elif out[i] is not None and d is not None and out[i] != d:
                raise ShapeError(f"dimension {i} differs: {shapes[0]} vs {s} (concat axis {axis})")
            elif out[i] is None:
                out[i] = d
    return [(dtype, TensorShape(out))]


def _concat_part(g, *inputs, index, axis):
    start = sum(x.shape[axis] for x in inputs[:index])
    sl = [slice(None)] * g.ndim
    sl[axis] = slice(start, start + inputs[index].shape[axis])
    return g[tuple(sl)]


def _concat_part_grad(op, dy):
    """The slice's gradient is dy padded with zeros to the concatenated shape: a concat again."""
    index, axis = op.attrs["index"], op.attrs["axis"]
    parts = op.inputs[1:]
    pieces = [dy if i == index else zeros_like(x, dtype=dy.dtype) for i, x in enumerate(parts)]
    return [concat(pieces, axis=axis)] + [None] * len(parts)


register("ConcatGradPart", _concat_part,
         lambda inputs, index, axis: [(inputs[0].dtype, inputs[1 + index].shape)],
         grad=_concat_part_grad, aliases_input=True)


def _concat_grad(op, g):
    axis = op.attrs["axis"]
    return [apply("ConcatGradPart", [g, *op.inputs], name="Slice", index=i, axis=axis)
            for i in range(len(op.inputs))]


register("ConcatV2", lambda *xs, axis: np.concatenate(xs, axis=axis), _concat_infer,
         grad=_concat_grad)


@export("concat")
def concat(values, axis, name="concat"):
    values = as_tensors(*values)
    if len(values) == 1:
        return values[0]
    rank = next((v.shape.ndims for v in values if v.shape.ndims is not None), None)
    axis = normalize_axis(axis, rank)[0]
    return apply("ConcatV2", values, name=name, axis=axis)


def _stack_infer(inputs, axis):
    dtype = same_dtype(inputs, "Pack")
    shape = inputs[0].shape
    for t in inputs[1:]:
        if not shape.is_compatible_with(t.shape):
            raise ShapeError(f"shapes of all inputs must match: {shape} vs {t.shape}")
        shape = TensorShape(t.shape) if shape.dims is None else TensorShape(
            shape if t.shape.dims is None else
            (a if a is not None else b for a, b in zip(shape.dims, t.shape.dims)))
    if shape.dims is None:
        return [(dtype, TensorShape(None))]
    dims = list(shape.dims)
    dims.insert(axis, len(inputs))
    return [(dtype, TensorShape(dims))]


register("Pack", lambda *xs, axis: np.stack(xs, axis=axis), _stack_infer,
         grad=lambda op, g: list(unstack(g, num=len(op.inputs), axis=op.attrs["axis"])))


@export("stack")
def stack(values, axis=0, name="stack"):
    values = as_tensors(*values)
    rank = values[0].shape.ndims
    if rank is not None:
        if not -(rank + 1) <= int(axis) < rank + 1:
            raise ValueError(f"stack: axis {axis} is out of range for inputs of rank {rank} "
                             f"(expected [{-(rank + 1)}, {rank + 1}))")
        axis = int(axis) % (rank + 1)
    return apply("Pack", values, name=name, axis=int(axis))


def _unstack_infer(inputs, num, axis):
    x = inputs[0]
    if x.shape.dims is None:
        return [(x.dtype, TensorShape(None))] * num
    dims = list(x.shape.dims)
    if dims[axis] is not None and dims[axis] != num:
        raise ShapeError(f"cannot unstack {num} values from axis {axis} of shape {x.shape}")
    del dims[axis]
    return [(x.dtype, TensorShape(dims))] * num


def _unstack_grad(op, *grads):
    grads = [zeros_like(o) if g is None else g for g, o in zip(grads, op.outputs)]
    return [stack(grads, axis=op.attrs["axis"])]


def _unstack_forward(x, num, axis):
    parts = np.moveaxis(x, axis, 0)
    if parts.shape[0] != num:  # an axis unknown when the graph was built
        raise InvalidArgumentError(f"unstack: axis {axis} of the input of shape {list(x.shape)} "
                                   f"must have num = {num} entries")
    return tuple(parts) if num != 1 else parts[0]  # a single output is a bare array


register("Unpack", _unstack_forward, _unstack_infer, grad=_unstack_grad, aliases_input=True)


@export("unstack")
def unstack(value, num=None, axis=0, name="unstack"):
    x = convert_to_tensor(value)
    axis = normalize_axis(axis, x.shape.ndims)[0]
    if num is None and x.shape.dims is not None:
        num = x.shape.dims[axis]
    if num is None:
        raise ValueError(f"Cannot infer num from shape {x.shape}")
    out = apply("Unpack", [x], name=name, num=int(num), axis=axis)
    return list(out) if isinstance(out, tuple) else [out]


def _split_sizes(size, num, sizes, axis):
    """The part sizes of a split of a dimension of ``size``: ``num`` equal parts, or ``sizes``
    with at most one -1 standing for the rest. Raises TF's messages when they cannot fit."""
    if sizes is None:
        if size % num:
            raise InvalidArgumentError(
                f"Number of ways to split should evenly divide the split dimension, but got "
                f"split_dim {axis} (size = {size}) and num_split {num}")
        return [size // num] * num
    sizes = list(sizes)
    if sizes.count(-1) > 1:
        raise ValueError(f"split: at most one of the sizes may be -1, got {sizes}")
    if -1 in sizes:
        rest = size - (sum(sizes) + 1)
        if rest < 0:
            raise InvalidArgumentError(f"split: sizes {sizes} add up to more than the size "
                                       f"{size} of dimension {axis}")
        sizes[sizes.index(-1)] = rest
    if sum(sizes) != size:
        raise InvalidArgumentError(
            f"Determined shape must either match input shape along split_dim exactly if fully "
            f"specified, or be less than the size of the input along split_dim if not fully "
            f"specified.  Got: {sum(sizes)} (sizes {sizes}, dimension {axis} of size {size})")
    return sizes


def _split_forward(x, num, sizes, axis):
    bounds = np.cumsum(_split_sizes(x.shape[axis], num, sizes, axis))[:-1]
    parts = np.split(x, bounds, axis=axis)
    return tuple(parts) if len(parts) != 1 else parts[0]


def _split_infer(inputs, num, sizes, axis):
    x = inputs[0]
    n = num if sizes is None else len(sizes)
    dims = list(x.shape.dims)
    part_dims = [None] * n
    if sizes is not None and -1 not in sizes:
        part_dims = list(sizes)
    elif dims[axis] is not None:
        try:
            part_dims = _split_sizes(dims[axis], num, sizes, axis)
        except InvalidArgumentError as exc:
            raise ShapeError(str(exc)) from None
    return [(x.dtype, TensorShape(dims[:axis] + [d] + dims[axis + 1:])) for d in part_dims]


def _split_grad(op, *grads):
    grads = [zeros_like(o) if g is None else g for g, o in zip(grads, op.outputs)]
    return [concat(grads, axis=op.attrs["axis"])]


register("Split", _split_forward, _split_infer, grad=_split_grad, aliases_input=True)


@export("split")
def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """``tf.split``: ``num_or_size_splits`` equal parts along ``axis``, or parts of the given
    sizes (one of them may be -1: the rest). The dimension may be unknown until the graph
    runs; then a size that does not fit is TF's InvalidArgumentError."""
    x = convert_to_tensor(value)
    if x.shape.ndims is None:
        raise ValueError(f"split: the rank of {x.name} must be known")
    axis = normalize_axis(axis, x.shape.ndims)[0]
    num_or_size_splits = known_sizes(num_or_size_splits)
    if isinstance(num_or_size_splits, int | np.integer):
        count, sizes = int(num_or_size_splits), None
        if count < 1:
            raise ValueError(f"split: the number of parts must be positive, got {count}")
    else:
        sizes = tuple(int(s) for s in num_or_size_splits)
        count = len(sizes)
    out = apply("Split", [x], name=name, num=count, sizes=sizes, axis=axis)
    return list(out) if isinstance(out, tuple) else [out]


# -- reversing -----------------------------------------------------------------------------

register("ReverseV2", lambda x, axes: np.flip(x, axes),
         lambda inputs, axes: [(inputs[0].dtype, inputs[0].shape)],
         grad=lambda op, g: [reverse(g, op.attrs["axes"])], aliases_input=True)


@export("reverse")
def reverse(tensor, axis, name="ReverseV2"):
    """``tf.reverse``: the elements of ``tensor`` in reverse order along each of ``axis``."""
    x = convert_to_tensor(tensor)
    axes = normalize_axis(list(np.atleast_1d(axis)), x.shape.ndims)
    return apply("ReverseV2", [x], name=name, axes=axes)


def _reverse_sequence_forward(x, lengths, seq_axis, batch_axis):
    if np.any(lengths > x.shape[seq_axis]) or np.any(lengths < 0):
        raise InvalidArgumentError(f"seq_lengths must lie in [0, {x.shape[seq_axis]}] (the size "
                                   f"of dimension {seq_axis}), got {lengths.tolist()}")
    moved = np.moveaxis(x, (batch_axis, seq_axis), (0, 1))
    out = moved.copy()
    for b, n in enumerate(lengths.tolist()):
        out[b, :n] = moved[b, n - 1::-1] if n else moved[b, :0]
    return np.moveaxis(out, (0, 1), (batch_axis, seq_axis))


def _reverse_sequence_infer(inputs, seq_axis, batch_axis):
    x, lengths = inputs
    if not lengths.dtype.is_integer or lengths.shape.ndims not in (None, 1):
        raise ShapeError(f"seq_lengths must be an integer vector, got {lengths.dtype.name} of "
                         f"shape {lengths.shape}")
    if x.shape.dims is not None and not lengths.shape.is_compatible_with([x.shape[batch_axis]]):
        raise ShapeError(f"seq_lengths of shape {lengths.shape} does not fit dimension "
                         f"{batch_axis} of {x.shape}")
    return [(x.dtype, x.shape)]


register("ReverseSequence", _reverse_sequence_forward, _reverse_sequence_infer,
         grad=lambda op, g: [reverse_sequence(g, op.inputs[1], **op.attrs), None])


@export("reverse_sequence")
def reverse_sequence(input, seq_lengths, seq_axis=None, batch_axis=None, name="ReverseSequence",  # noqa: A002
                     seq_dim=None, batch_dim=None):
    """``tf.reverse_sequence``: for each batch entry ``b``, its first ``seq_lengths[b]`` elements
    along ``seq_axis`` in reverse order; the rest stay where they are."""
    x = convert_to_tensor(input)
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = batch_dim if batch_axis is None else batch_axis
    if seq_axis is None:
        raise ValueError("reverse_sequence: seq_axis is required")
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"reverse_sequence: the rank of {x.name} must be known")
    seq_axis, batch_axis = (normalize_axis(int(a), rank)[0] for a in (seq_axis, batch_axis or 0))
    if seq_axis == batch_axis:
        raise ValueError(f"reverse_sequence: seq_axis and batch_axis are both {seq_axis}")
    lengths = convert_to_tensor(seq_lengths, preferred_dtype=_dtypes.int64)
    return apply("ReverseSequence", [x, lengths], name=name, seq_axis=seq_axis,
                 batch_axis=batch_axis)


# -- one_hot, shape, size ------------------------------------------------------------------


def _one_hot_forward(indices, depth, on_value, off_value, axis, dtype):
    eye = np.arange(depth) == indices[..., None]
    out = np.where(eye, on_value, off_value).astype(dtype.np)
    return np.moveaxis(out, -1, axis) if axis != -1 else out


def _one_hot_infer(inputs, depth, on_value, off_value, axis, dtype):
    idx = inputs[0]
    if not idx.dtype.is_integer:
        raise TypeError(f"one_hot indices must be integers, got {idx.dtype.name}")
    if idx.shape.dims is None:
        return [(dtype, TensorShape(None))]
    dims = list(idx.shape.dims)
    dims.insert(axis if axis != -1 else len(dims), depth)
    return [(dtype, TensorShape(dims))]


register("OneHot", _one_hot_forward, _one_hot_infer)


@export("one_hot")
def one_hot(indices, depth, on_value=None, off_value=None, axis=None, dtype=None, name="one_hot"):
    """TF's dtype rule: ``dtype``, else the type of on_value/off_value, else float32."""
    if dtype is None:
        given = on_value if on_value is not None else off_value
        dtype = _dtypes.float32 if given is None else _dtypes.default_for(given)
    dtype = _dtypes.as_dtype(dtype)
    return apply("OneHot", [convert_to_tensor(indices)], name=name, depth=int(known_sizes(depth)),
                 on_value=1 if on_value is None else on_value,
                 off_value=0 if off_value is None else off_value,
                 axis=-1 if axis is None else int(axis), dtype=dtype)


register("Shape", lambda x, out_type: np.array(x.shape, dtype=out_type.np),
         lambda inputs, out_type: [(out_type, TensorShape([inputs[0].shape.ndims]))])
register("Size", lambda x, out_type: np.array(x.size, dtype=out_type.np),
         lambda inputs, out_type: [(out_type, TensorShape([]))])
register("Rank", lambda x: np.array(np.ndim(x), dtype=np.int32),
         lambda inputs: [(_dtypes.int32, TensorShape([]))])


@export("shape")
def shape(input, name="Shape", out_type=_dtypes.int32):  # noqa: A002
    return apply("Shape", [convert_to_tensor(input)], name=name, out_type=_dtypes.as_dtype(out_type))


@export("size")
def size(input, name="Size", out_type=_dtypes.int32):  # noqa: A002
    return apply("Size", [convert_to_tensor(input)], name=name, out_type=_dtypes.as_dtype(out_type))


def rank(input, name=None):  # noqa: A002
    """The number of dimensions of ``input`` as an int32 scalar: a constant where its static
    rank is known (TF's ``rank_internal(optimize=True)``), else a Rank op."""
    x = convert_to_tensor(input)
    if x.shape.ndims is not None:
        return convert_to_tensor(np.int32(x.shape.ndims), name=name or "Rank")
    return apply("Rank", [x], name=name or "Rank")
