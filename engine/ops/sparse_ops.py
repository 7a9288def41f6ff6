"""TF 1.x's functions of SparseTensors (TF's sparse_ops.py): ``sparse_concat``,
``sparse_reorder``, ``sparse_reshape``, ``sparse_add`` (sparse + sparse, sparse + dense),
``sparse_transpose``, ``sparse_retain`` and ``sparse_reduce_sum``, with TF's orderings, static
shapes and errors.

Orderings follow TF's kernels: ``sparse_reorder``, ``sparse_concat`` and ``sparse_transpose``
sort the entries row-major (ties kept in their order); ``sparse_reshape`` keeps the entries'
order; ``sparse_add`` of two SparseTensors walks both in their order as TF's merge does (both
assumed row-major: an entry of one index in both is one sum, kept only when ``thresh <= |sum|``;
entries in one of them are copied; two row-major inputs merge in one sort, the same walk).
Gradients reach ``values`` as TF's do: through the reorder's
permutation, the sum's matched positions and the reduction's entries; SparseConcat has none
(as TF: its values get None).
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.graph import Tensor
from ..framework.registry import apply, broadcast_shapes, register
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import static_value
from .array import reshape, transpose
from .core import constant, convert_to_tensor, identity
from .embedding_ops import SparseTensor, SparseTensorValue
from .indexing_nd import tensor_scatter_nd_add
from .sparse import gather
from .where import where

_INT64 = _dtypes.int64


def _as_sparse(x, what="sp_input"):
    """A SparseTensor, or a SparseTensorValue made one (TF's _convert_to_sparse_tensor)."""
    if isinstance(x, SparseTensorValue):
        return SparseTensor(x.indices, x.values, x.dense_shape)
    if not isinstance(x, SparseTensor):
        raise TypeError(f"{what} must be a SparseTensor, got {type(x).__name__}")
    return x


def _static_or(shape, tensor):
    """``shape`` (a TensorShape) as a constant dense shape when fully known, else ``tensor``."""
    if shape.is_fully_defined():
        return constant(np.asarray(shape.as_list(), np.int64), dtype=_INT64)
    return tensor


def _row_major(indices):
    """The stable permutation that sorts ``indices`` ([n, rank]) row-major."""
    if indices.shape[1] == 0:
        return np.arange(len(indices))
    return np.lexsort(indices.T[::-1])


# -- reorder -------------------------------------------------------------------------------


def _reorder_forward(indices, values, shape):
    perm = _row_major(indices)
    return indices[perm], values[perm]


def _reorder_grad_forward(g, indices):
    out = np.empty_like(g)
    out[_row_major(indices)] = g
    return out


register("SparseReorder", _reorder_forward,
         lambda inputs: [(_INT64, inputs[0].shape), (inputs[1].dtype, inputs[1].shape)],
         grad=lambda op, _, g: [None, apply("SparseReorderGrad", [g, op.inputs[0]],
                                            name="SparseReorder_grad"), None])
register("SparseReorderGrad", _reorder_grad_forward,
         lambda inputs: [(inputs[0].dtype, inputs[0].shape)],
         grad=lambda op, gg: [apply("SparseReorder", [op.inputs[1], gg, op.inputs[1]],
                                    name="SparseReorder")[1], None])


def sparse_reorder(sp_input, name=None):
    """The SparseTensor with its entries in row-major order (as TF's canonical order)."""
    sp = _as_sparse(sp_input)
    indices, values = apply("SparseReorder", [sp.indices, sp.values, sp.dense_shape],
                            name=name or "SparseReorder")
    shape = identity(sp.dense_shape) if not sp.shape.is_fully_defined() else \
        _static_or(sp.shape, None)
    return SparseTensor(indices, values, shape)


# -- concat --------------------------------------------------------------------------------


def _concat_forward(*args, n, axis, expand):
    indices, values, shapes = args[:n], args[n:2 * n], args[2 * n:]
    rank = len(shapes[0])
    at = axis % rank if rank else 0
    if expand and len({len(s) for s in shapes}) == 1:  # TF: each the largest of the inputs'
        largest = np.max(np.stack(shapes), axis=0)
        shapes = [np.where(np.arange(rank) == at, s, largest) for s in shapes]
    for k, s in enumerate(shapes[1:], 1):
        if len(s) != rank:
            raise InvalidArgumentError(f"Ranks of all input tensors must match: expected {rank} "
                                       f"but got {len(s)} at position {k}")
        for d in range(rank):
            if d != at and s[d] != shapes[0][d]:
                raise InvalidArgumentError(f"Input shapes must match: expected {shapes[0][d]} "
                                           f"for dimension {d} but got {s[d]} at position {k}")
    offsets = np.cumsum([0] + [int(s[at]) for s in shapes[:-1]])
    moved = []
    for ind, off in zip(indices, offsets):
        ind = ind.copy()
        ind[:, at] += off
        moved.append(ind)
    out_indices = np.concatenate(moved).reshape(-1, rank)
    perm = _row_major(out_indices)
    out_shape = np.array(shapes[0], np.int64)
    out_shape[at] = sum(int(s[at]) for s in shapes)
    return out_indices[perm], np.concatenate(values)[perm], out_shape


def _concat_infer(inputs, n, axis, expand):
    dtype = inputs[n].dtype
    for v in inputs[n:2 * n]:
        if v.dtype != dtype:
            raise TypeError(f"sparse_concat: values of one dtype, got {dtype.name} and "
                            f"{v.dtype.name} ({v.name})")
    return [(_INT64, TensorShape([None, None])), (dtype, TensorShape([None])),
            (_INT64, inputs[2 * n].shape)]


register("SparseConcat", _concat_forward, _concat_infer)  # TF: no gradient


def sparse_concat(axis, sp_inputs, name=None, expand_nonconcat_dim=False, concat_dim=None,
                  expand_nonconcat_dims=None):
    """The SparseTensors joined along ``axis`` (each one's indices offset by the sizes before
    it), entries in row-major order; the other dimensions must match unless
    ``expand_nonconcat_dim``, which makes each the largest of the inputs'."""
    axis = concat_dim if concat_dim is not None else axis
    expand = expand_nonconcat_dims if expand_nonconcat_dims is not None else expand_nonconcat_dim
    sps = [_as_sparse(sp, "sp_inputs") for sp in sp_inputs]
    if not sps:
        raise ValueError("sparse_concat needs at least one SparseTensor")
    axis = int(axis)
    shapes = [sp.dense_shape for sp in sps]
    known = [static_value(s) for s in shapes]
    if expand and all(k is not None for k in known) and len({len(k) for k in known}) == 1:
        largest = np.max(np.stack(known), axis=0)
        known = [np.where(np.arange(len(k)) == axis % len(k), k, largest) for k in known]
    indices, values, shape = apply(
        "SparseConcat", [*(sp.indices for sp in sps), *(sp.values for sp in sps), *shapes],
        name=name or "SparseConcat", n=len(sps), axis=axis, expand=bool(expand))
    if all(k is not None for k in known):  # TF: the output's dense shape from the inputs'
        total = np.array(known[0], np.int64)
        total[axis % len(total)] = sum(int(k[axis % len(k)]) for k in known)
        shape = constant(total, dtype=_INT64)
    return SparseTensor(indices, values, shape)


# -- reshape -------------------------------------------------------------------------------


def _dims(values):
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _reshape_forward(indices, input_shape, new_shape):
    size = int(np.prod(input_shape))
    target = new_shape.astype(np.int64).copy()
    missing = np.flatnonzero(target == -1)
    if len(missing) > 1:
        raise InvalidArgumentError(f"only one output dimension may be -1, not both "
                                   f"{missing[0]} and {missing[1]}")
    known = int(np.prod(target[target != -1]))
    if len(missing):
        target[missing[0]] = size // known if known else 0
        if known == 0 or size % known:
            raise InvalidArgumentError(
                f"Input to reshape is a SparseTensor with {size} dense values, but the requested "
                f"shape requires a multiple of {known}. input_shape={_dims(input_shape)} "
                f"output_shape={_dims(target)}")
    if int(np.prod(target)) != size:
        raise InvalidArgumentError(
            f"Input to reshape is a tensor with {size} dense values, but the requested shape has "
            f"{int(np.prod(target))}. input_shape={_dims(input_shape)} "
            f"output_shape={_dims(target)}")
    flat = np.ravel_multi_index(indices.T, input_shape) if len(input_shape) else \
        np.zeros(len(indices), np.int64)
    out = np.stack(np.unravel_index(flat, target), axis=1) if len(target) else \
        np.zeros((len(indices), 0), np.int64)
    return out.astype(np.int64).reshape(len(indices), len(target)), target


register("SparseReshape", _reshape_forward,
         lambda inputs: [(_INT64, TensorShape([inputs[0].shape.dims[0] if inputs[0].shape.dims
                                               else None, inputs[2].shape.num_elements()])),
                         (_INT64, inputs[2].shape)])  # TF: indices only, no gradient


def sparse_reshape(sp_input, shape, name=None):
    """The SparseTensor of dense shape ``shape`` (one -1 inferred) holding the same values in
    the same row-major positions; its entries keep their order."""
    sp = _as_sparse(sp_input)
    shape = convert_to_tensor(shape, dtype=_INT64) if not isinstance(shape, Tensor) else shape
    given = static_value(shape)
    if given is not None and sp.shape.is_fully_defined():  # TF checks what it knows now
        given = given.astype(np.int64)
        if (given == -1).sum() > 1:
            raise ValueError(f"At most one dimension can be inferred (-1). Found: {given}")
        size = int(np.prod(sp.shape.as_list()))
        dims = given.copy()
        if (dims == -1).any():
            rest = int(np.prod(dims[dims != -1]))
            dims[dims == -1] = size // rest if rest else 0
        if int(np.prod(dims)) != size:
            shown = [None if d == -1 else int(d) for d in given]
            raise ValueError(f"Cannot reshape a tensor with {size} elements to shape {shown} "
                             f"({int(np.prod(dims))} elements).")
        new_indices, _ = apply("SparseReshape", [sp.indices, sp.dense_shape, shape],
                               name=name or "SparseReshape")
        return SparseTensor(new_indices, sp.values, constant(dims, dtype=_INT64))
    new_indices, new_shape = apply("SparseReshape", [sp.indices, sp.dense_shape, shape],
                                   name=name or "SparseReshape")
    return SparseTensor(new_indices, sp.values, new_shape)


# -- add -----------------------------------------------------------------------------------


def _add_forward(a_ind, a_val, a_shape, b_ind, b_val, b_shape, thresh):
    """TF's SparseAdd: a merge walk over both entry lists (row-major comparisons)."""
    if a_shape.shape != b_shape.shape or (a_shape != b_shape).any():
        raise InvalidArgumentError(f"Operands do not have the same ranks or shapes: got "
                                   f"{a_shape.tolist()} and {b_shape.tolist()}")
    if _strictly_row_major(a_ind) and _strictly_row_major(b_ind):
        return _add_sorted(a_ind, a_val, a_shape, b_ind, b_val, thresh)
    rows_a, rows_b = a_ind.tolist(), b_ind.tolist()
    i = j = 0
    out_ind, out_val = [], []
    a_pos, b_pos = np.full(len(rows_a), -1, np.int64), np.full(len(rows_b), -1, np.int64)
    while i < len(rows_a) and j < len(rows_b):
        if rows_a[i] < rows_b[j]:
            a_pos[i] = len(out_val)
            out_ind.append(rows_a[i]), out_val.append(a_val[i])
            i += 1
        elif rows_a[i] > rows_b[j]:
            b_pos[j] = len(out_val)
            out_ind.append(rows_b[j]), out_val.append(b_val[j])
            j += 1
        else:
            s = a_val[i] + b_val[j]
            if thresh <= abs(s):
                a_pos[i] = b_pos[j] = len(out_val)
                out_ind.append(rows_a[i]), out_val.append(s)
            i += 1
            j += 1
    for k in range(i, len(rows_a)):
        a_pos[k] = len(out_val)
        out_ind.append(rows_a[k]), out_val.append(a_val[k])
    for k in range(j, len(rows_b)):
        b_pos[k] = len(out_val)
        out_ind.append(rows_b[k]), out_val.append(b_val[k])
    indices = np.asarray(out_ind, np.int64).reshape(len(out_ind), len(a_shape))
    return (indices, np.asarray(out_val, a_val.dtype).reshape(-1), a_shape.copy(), a_pos,
            b_pos)


def _strictly_row_major(indices):
    """Whether the entries are in row-major order, each index once (TF's canonical order)."""
    if len(indices) < 2 or indices.shape[1] == 0:
        return len(indices) < 2
    step = indices[1:] - indices[:-1]
    moved = step != 0
    first = np.argmax(moved, axis=1)
    return bool(moved.any(axis=1).all() and (step[np.arange(len(step)), first] > 0).all())


def _add_sorted(a_ind, a_val, a_shape, b_ind, b_val, thresh):
    """The merge walk of two row-major inputs in one sort: a's entry before b's of the same
    index, whose pair is one sum (kept when thresh <= |sum|); the walk's order and values."""
    na, rank = len(a_ind), a_ind.shape[1]
    indices = np.concatenate([a_ind, b_ind]).reshape(-1, rank)
    values = np.concatenate([a_val, b_val])
    order = np.lexsort((np.arange(len(indices)), *indices.T[::-1]))
    indices, values = indices[order], values[order]
    n = len(order)
    pair = np.zeros(n, bool)  # entries k and k + 1 have one index (a's, then b's)
    if n > 1:
        pair[:-1] = (indices[1:] == indices[:-1]).all(axis=1)
    first = np.flatnonzero(pair)
    summed = values[first] + values[first + 1]
    values[first] = summed
    keep = np.ones(n, bool)
    keep[first + 1] = False
    keep[first[np.abs(summed) < thresh]] = False
    at = np.where(keep, np.cumsum(keep) - 1, -1)
    at[first + 1] = at[first]  # b's entry of a pair: its sum's position (-1: dropped)
    where_from = np.empty(len(order), np.int64)
    where_from[order] = at
    return (indices[keep], values[keep].astype(a_val.dtype), a_shape.copy(),
            where_from[:na], where_from[na:])


def _add_infer(inputs):
    a_ind, a_val, a_shape, b_ind, b_val, _, _ = inputs
    if a_val.dtype != b_val.dtype:
        raise TypeError(f"Input 'b_values' of 'SparseAdd' Op has type {b_val.dtype.name} that "
                        f"does not match type {a_val.dtype.name} of argument 'a_values'.")
    return [(_INT64, TensorShape([None, a_ind.shape.dims[1] if a_ind.shape.dims else None])),
            (a_val.dtype, TensorShape([None])), (_INT64, a_shape.shape),
            (_INT64, TensorShape([a_ind.shape.dims[0] if a_ind.shape.dims else None])),
            (_INT64, TensorShape([b_ind.shape.dims[0] if b_ind.shape.dims else None]))]


def _placed(g, pos):
    """Each input entry's gradient: the sum's gradient at its output position (0 if dropped)."""
    return np.where(pos >= 0, g[np.maximum(pos, 0)] if len(g) else 0, 0).astype(g.dtype)


register("SparseAdd", _add_forward, _add_infer,
         grad=lambda op, _, g, *__: [None, apply("SparseAddGrad", [g, op.outputs[3]],
                                                 name="SparseAdd_grad_a"), None, None,
                                     apply("SparseAddGrad", [g, op.outputs[4]],
                                           name="SparseAdd_grad_b"), None, None])
register("SparseAddGrad", _placed, lambda inputs: [(inputs[0].dtype, inputs[1].shape)])  # TF: none


def sparse_add(a, b, thresh=0, threshold=None, name=None):
    """``a + b``: two SparseTensors give a SparseTensor (TF's merge walk; a sum below
    ``thresh`` in magnitude dropped); a SparseTensor and a dense tensor give the dense sum."""
    sparse_classes = (SparseTensor, SparseTensorValue)
    thresh = threshold if threshold is not None else thresh
    if not any(isinstance(t, sparse_classes) for t in (a, b)):
        raise TypeError("At least one input should be SparseTensor; do you mean to use tf.add()?")
    if all(isinstance(t, sparse_classes) for t in (a, b)):
        a, b = _as_sparse(a), _as_sparse(b)
        if not a.shape.is_compatible_with(b.shape):
            raise ValueError(f"Shapes {a.shape} and {b.shape} are incompatible")
        thresh = convert_to_tensor(thresh, dtype=a.dtype)
        indices, values, shape, _, _ = apply(
            "SparseAdd", [a.indices, a.values, a.dense_shape, b.indices, b.values, b.dense_shape,
                          thresh], name=name or "SparseAdd")
        return SparseTensor(indices, values,
                            _static_or(broadcast_shapes(a.shape, b.shape), shape))
    if isinstance(b, sparse_classes):
        a, b = b, a
    a = _as_sparse(a)
    return tensor_scatter_nd_add(convert_to_tensor(b, dtype=a.dtype), a.indices, a.values,
                                 name=name or "SparseTensorDenseAdd")


# -- transpose, retain ---------------------------------------------------------------------


def sparse_transpose(sp_input, perm=None, name=None):
    """The SparseTensor with its axes permuted by ``perm`` (reversed by default), entries in
    row-major order."""
    sp = _as_sparse(sp_input)
    rank = sp.shape.ndims
    if perm is None:
        if rank is None:
            raise ValueError("sparse_transpose without perm needs a SparseTensor of known rank")
        perm = list(range(rank - 1, -1, -1))
    perm = [int(p) for p in (static_value(perm) if isinstance(perm, Tensor) else perm)]
    indices = transpose(gather(transpose(sp.indices), perm))
    if sp.shape.is_fully_defined():
        old = sp.shape.as_list()
        shape = constant(np.asarray([old[p] for p in perm], np.int64), dtype=_INT64)
    else:
        shape = gather(sp.dense_shape, perm)
    return sparse_reorder(SparseTensor(indices, sp.values, shape), name=name)


def sparse_retain(sp_input, to_retain):
    """The SparseTensor's entries where the bool vector ``to_retain`` is true."""
    sp = _as_sparse(sp_input)
    to_retain = convert_to_tensor(to_retain)
    if to_retain.shape.ndims != 1:
        raise ValueError(f"Shape {to_retain.shape} must have rank 1")
    n, m = sp.values.shape.dims[0] if sp.values.shape.dims else None, to_retain.shape.dims[0]
    if n is not None and m is not None and n != m:
        raise ValueError(f"Dimensions {n} and {m} are not compatible")
    kept = reshape(where(to_retain), [-1])
    return SparseTensor(gather(sp.indices, kept), gather(sp.values, kept),
                        identity(sp.dense_shape))


# -- reduce_sum ----------------------------------------------------------------------------


def _reduced_axes(shape, axes):
    rank = len(shape)
    if axes is None:
        return tuple(range(rank))
    for a in axes:
        if not -rank <= a < rank:
            raise InvalidArgumentError(f"Invalid reduction dimension {a}, for input with {rank} "
                                       f"dimensions.")
    return tuple(sorted({a % rank for a in axes}))


def _reduce_sum_forward(indices, values, shape, axes, keepdims):
    axes = _reduced_axes(shape, axes)
    kept = np.array(shape, np.int64)
    kept[list(axes)] = 1
    out = np.zeros(kept, values.dtype)
    at = indices.copy()
    at[:, list(axes)] = 0
    np.add.at(out, tuple(at.T), values)
    return out if keepdims else out.reshape([d for i, d in enumerate(shape) if i not in axes])


def _reduce_sum_infer(inputs, axes, keepdims):
    _, values, shape = inputs
    known = static_value(shape)
    rank = None if known is None else len(known)
    if known is None or any(not -rank <= a < rank for a in axes or ()):
        return [(values.dtype, TensorShape(None))]  # TF: a bad axis fails when the op runs
    reduced = _reduced_axes(known, axes)
    return [(values.dtype, TensorShape([1 if i in reduced else int(d) for i, d in
                                        enumerate(known) if keepdims or i not in reduced]))]


def _reduce_sum_grad_forward(g, indices, shape, axes, keepdims):
    axes = _reduced_axes(shape, axes)
    kept = np.array(shape, np.int64)
    kept[list(axes)] = 1
    at = indices.copy()
    at[:, list(axes)] = 0
    return g.reshape(kept)[tuple(at.T)]


register("SparseReduceSum", _reduce_sum_forward, _reduce_sum_infer,
         grad=lambda op, g: [None, apply("SparseReduceSumGrad", [g, op.inputs[0], op.inputs[2]],
                                         name="SparseReduceSum_grad", **op.attrs), None])
register("SparseReduceSumGrad", _reduce_sum_grad_forward,
         lambda inputs, **_: [(inputs[0].dtype, TensorShape([inputs[1].shape.dims[0]
                                                             if inputs[1].shape.dims else None]))],
         grad=lambda op, gg: [apply("SparseReduceSum", [op.inputs[1], gg, op.inputs[2]],
                                    name="SparseReduceSum", **op.attrs), None, None])


def sparse_reduce_sum(sp_input, axis=None, keepdims=None, reduction_axes=None, keep_dims=None):
    """The sum of the SparseTensor's values over ``axis`` (all axes by default) as a dense
    tensor (TF's SparseReduceSum; duplicate indices add up)."""
    sp = _as_sparse(sp_input)
    axis = reduction_axes if axis is None else axis
    keepdims = bool(keep_dims if keepdims is None else keepdims)
    axes = None if axis is None else tuple(int(a) for a in np.atleast_1d(axis))
    return apply("SparseReduceSum", [sp.indices, sp.values, sp.dense_shape],
                 name="SparseReduceSum", axes=axes, keepdims=keepdims)
