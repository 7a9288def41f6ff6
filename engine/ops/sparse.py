"""Row ops of sparse gradients: gather, unique, segment sums, and IndexedSlices <-> dense.

``gather(params, indices)`` takes rows of ``params``; its gradient with respect to ``params`` is
an ``IndexedSlices`` (the incoming gradient's rows at ``indices``), as in TF, never a dense
params-sized tensor. ``unsorted_segment_sum`` adds rows into segments (the dense form of an
IndexedSlices is one: ``unsorted_segment_sum(values, indices, dense_shape[0])``), ``unique``
numbers distinct ids (optimizers sum repeated rows with both, TF's
``_deduplicate_indexed_slices``) and ``sparse_segment_reduction`` is the pooling of
``embedding_lookup_sparse`` (sum, mean, sqrtn of looked-up rows per example).

Row sums sort the ids once (``stable_order``) and add only the repeated rows with ``np.add.at``;
``unique_row_sum``, the optimizers' deduplication of a sparse gradient, is one op on one sort
rather than TF's ``unique`` followed by ``unsorted_segment_sum`` (three sorts).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import indexed_slices as _slices
from ..framework import jit
from ..framework.errors import InvalidArgumentError, ShapeError
from ..framework.indexed_slices import IndexedSlices, static_value
from ..framework.registry import apply, export, register
from ..framework.tensor_shape import TensorShape
from ..framework.tensor_util import shape_tensor_dims
from .array import concat, reshape, reshape_like
from .core import constant, convert_to_tensor
from .math import cast, range_
from .reduce import reduce_sum
from .strided_slice import strided_slice

# -- helpers -------------------------------------------------------------------------------


def _check_ids(ids, n, what):
    """TF's error for an id outside [0, n) (the plan makes it an InvalidArgumentError naming
    the op): gather and the segment ops never wrap around as numpy's negative indices do."""
    if ids.size and (ids.min() < 0 or ids.max() >= n):
        flat = ids.reshape(-1)
        pos = int(np.flatnonzero((flat < 0) | (flat >= n))[0])
        raise IndexError(f"{what}[{pos}] = {int(flat[pos])} is not in [0, {n})")


def stable_order(ids):
    """(order, ids[order]): the stable sorting permutation of 1-D integer ``ids`` and the sorted
    ids; one sort, shared by the row sums, ``unique`` and the optimizers' deduplication.

    numpy's stable argsort (a merge sort) took 2-4 ms for 20,480 ids here; sorting the keys
    ``id * n + position`` with its vectorized (unstable) sort gives the same permutation in
    about a quarter of that. Ids too large for such keys take the merge sort.
    """
    n = ids.size
    if n and n < 2**31 and max(-int(ids.min()), int(ids.max())) < (2**62) // max(n, 1):
        keys = ids.astype(np.int64) * n + np.arange(n, dtype=np.int64)
        keys.sort()
        ids_sorted = keys // n
        return keys - ids_sorted * n, ids_sorted.astype(ids.dtype, copy=False)
    order = np.argsort(ids, kind="stable")
    return order, ids[order]


def segments(ids_sorted):
    """Whether each sorted id is the first of its run (a boolean mask)."""
    first = np.empty(ids_sorted.size, dtype=bool)
    if ids_sorted.size:
        first[0] = True
        np.not_equal(ids_sorted[1:], ids_sorted[:-1], out=first[1:])
    return first


def sum_runs(data, order, first, out, at):
    """Add the rows ``data[order]`` of each run of equal sorted ids into ``out[at[run]]``, in
    their order in ``data``: the first row is assigned, the repeated ones added one after the
    other (TF's segment sums add in order), so each element of a run's sum is
    ``((r0 + r1) + r2) + ...`` in float arithmetic of the rows' dtype.

    numpy: ``np.add.at`` over the flattened elements (its one-dimensional loop: about 4x faster
    than over rows, whose per-row dispatch took 8 ms for 20,480 rows of 64 floats; the same
    additions in the same order). With numba (the ``fast`` extra), once a process has summed
    ``COMPILED_AFTER`` large gradients, one compiled pass does the same additions in the same
    order (bit for bit): embedding_adagrad_decay's 2,560 rows of 16 into 1,050, 210 us by rows,
    about 50 flat, about 5 compiled."""
    rows = data.reshape(data.shape[0], -1)
    if _compiled_row_sums(rows, order, first, out, at):
        return out
    out[at] = np.take(data, order[first], axis=0)
    repeated = ~first
    if repeated.any():
        run = np.cumsum(first) - 1
        targets = at[run[repeated]]
        added = np.take(data, order[repeated], axis=0)
        width = rows.shape[1]
        if width > 1 and out.flags.c_contiguous:
            flat = (targets.astype(np.intp)[:, None] * width + np.arange(width)).reshape(-1)
            np.add.at(out.reshape(-1), flat, added.reshape(-1))
        else:
            np.add.at(out, targets, added)
    return out


#: elements of the rows summed from which the compiled pass may run, once a process has summed
#: COMPILED_AFTER such gradients (see ``jit.WarmKernel``)
COMPILED_MIN_ELEMENTS = 8192
COMPILED_AFTER = 50


def _sum_runs_loop(rows, order, first, out, at):
    """sum_runs' additions, row by row in the sorted order."""
    run = -1
    dst = 0
    for k in range(order.size):
        src = order[k]
        if first[k]:
            run += 1
            dst = at[run]
            for j in range(rows.shape[1]):
                out[dst, j] = rows[src, j]
        else:
            for j in range(rows.shape[1]):
                out[dst, j] += rows[src, j]


_SUM_RUNS = jit.WarmKernel(_sum_runs_loop, COMPILED_AFTER)


def _compiled_row_sums(rows, order, first, out, at) -> bool:
    """Run the compiled pass where it applies (see ``sum_runs``); whether it ran."""
    if rows.size < COMPILED_MIN_ELEMENTS or not out.flags.c_contiguous \
            or rows.dtype != out.dtype or rows.dtype not in (np.float32, np.float64):
        return False
    return _SUM_RUNS(rows, order, first, out.reshape(out.shape[0], -1), at)


def row_sum(data, ids, n):
    """out[k] = sum of data[i] over i with ids[i] == k (k in [0, n)), rows added in order."""
    out = np.zeros((n,) + data.shape[1:], dtype=data.dtype)
    if not ids.size:
        return out
    order, ids_sorted = stable_order(ids)
    first = segments(ids_sorted)
    return sum_runs(data, order, first, out, ids_sorted[first])


def _int_input(t, what, op_type):
    if not t.dtype.is_integer:
        raise TypeError(f"{op_type}: {what} must be integers, got {t.dtype.name} ({t.name})")


# -- gather --------------------------------------------------------------------------------


def _gather_forward(params, indices):
    _check_ids(indices, params.shape[0], "indices")
    return np.take(params, indices, axis=0)  # 3x faster than params[indices] on a large table


def _gather_infer(inputs):
    params, indices = inputs
    _int_input(indices, "indices", "GatherV2")
    if params.shape.ndims == 0:
        raise ShapeError(f"params {params.name} must be at least 1-D, got a scalar")
    if params.shape.dims is None or indices.shape.dims is None:
        return [(params.dtype, TensorShape(None))]
    return [(params.dtype, TensorShape(indices.shape.dims + params.shape.dims[1:]))]


def dense_shape_of(x):
    """A 1-D int64 tensor of x's shape: a constant when static (TF folds ``shape(params)``)."""
    if x.shape.is_fully_defined():
        return constant(np.array(x.shape.dims, np.int64), name="dense_shape")
    return apply("Shape", [x], name="Shape", out_type=_dtypes.int64)


def _gather_grad(op, g):
    """TF's _GatherV2Grad: IndexedSlices(grad as rows, indices flattened, shape(params))."""
    params, indices = op.inputs
    rank = indices.shape.ndims
    if rank is None:
        raise ValueError(f"the gradient of {op.name} needs indices of known rank")
    if rank != 1:
        g = apply("MergeLeadingDims", [g], name="Reshape", n=rank)
        indices = reshape(indices, [-1])
    return [IndexedSlices(g, indices, dense_shape_of(params)), None]


register("GatherV2", _gather_forward, _gather_infer, grad=_gather_grad)


@export("gather")
def gather(params, indices, validate_indices=None, name="GatherV2", axis=None):
    """Rows of ``params`` (axis 0) at ``indices``; the gradient is an IndexedSlices."""
    if axis not in (None, 0):
        raise NotImplementedError(f"gather: only axis=0 is supported, got axis={axis}")
    params = convert_to_tensor(params)
    return apply("GatherV2", [params, convert_to_tensor(indices, preferred_dtype=_dtypes.int32)],
                 name=name)


def _merge_infer(inputs, n):
    x = inputs[0]
    if x.shape.dims is None:
        return [(x.dtype, TensorShape(None))]
    lead = x.shape.dims[:n]
    rows = None if None in lead else int(np.prod(lead, dtype=np.int64))
    return [(x.dtype, TensorShape((rows,) + x.shape.dims[n:]))]


register("MergeLeadingDims", lambda x, n: x.reshape((-1,) + x.shape[n:]), _merge_infer,
         grad=lambda op, g: [reshape_like(g, op.inputs[0])], aliases_input=True)


# -- unique --------------------------------------------------------------------------------


def _unique_forward(x, out_idx):
    """TF's Unique: y in order of first occurrence, x == y[idx]."""
    order, x_sorted = stable_order(x)
    first = segments(x_sorted)
    first_position = order[first]  # where each distinct value first occurs (the sort is stable)
    rank = np.empty(first_position.size, dtype=np.int64)
    rank[np.argsort(first_position)] = np.arange(first_position.size)
    idx = np.empty(x.size, dtype=out_idx.np)
    idx[order] = rank[np.cumsum(first) - 1]
    return x_sorted[first][np.argsort(first_position)], idx


def _unique_infer(inputs, out_idx):
    x = inputs[0]
    if x.shape.ndims not in (None, 1):
        raise ShapeError(f"unique expects a 1-D tensor, got shape {x.shape} ({x.name})")
    return [(x.dtype, TensorShape([None])), (out_idx, x.shape)]


register("Unique", _unique_forward, _unique_infer)


@export("unique")
def unique(x, out_idx=_dtypes.int32, name="Unique"):
    """(y, idx): the distinct values of 1-D ``x`` in order of first occurrence, x = y[idx]."""
    return apply("Unique", [convert_to_tensor(x)], name=name, out_idx=_dtypes.as_dtype(out_idx))


# -- the optimizers' deduplication ---------------------------------------------------------


def _unique_row_sum_forward(values, indices):
    if indices.ndim != 1 or values.shape[:1] != indices.shape:
        raise ShapeError(f"unique_row_sum: values of shape {list(values.shape)} need one row per "
                         f"index, got indices of shape {list(indices.shape)}")
    order, ids_sorted = stable_order(indices)
    first = segments(ids_sorted)
    unique_ids = ids_sorted[first]
    summed = np.empty((unique_ids.size,) + values.shape[1:], dtype=values.dtype)
    return sum_runs(values, order, first, summed, np.arange(unique_ids.size)), unique_ids


def _unique_row_sum_infer(inputs):
    values, indices = inputs
    _int_input(indices, "indices", "UniqueRowSum")
    if indices.shape.ndims not in (None, 1):
        raise ShapeError(f"unique_row_sum expects 1-D indices, got shape {indices.shape}")
    rows = TensorShape(None) if values.shape.dims is None else \
        TensorShape((None,) + values.shape.dims[1:])
    return [(values.dtype, rows), (indices.dtype, TensorShape([None]))]


register("UniqueRowSum", _unique_row_sum_forward, _unique_row_sum_infer)


def unique_row_sum(values, indices, name="UniqueRowSum"):
    """(summed, unique_indices): the rows of ``values`` summed per distinct index (in their
    order), the distinct indices ascending. What TF's ``_deduplicate_indexed_slices`` computes
    with ``unique`` and ``unsorted_segment_sum`` (its rows in order of first occurrence: the
    order does not change a sparse update, whose rows are distinct), on one sort; ascending
    rows also read a large table in address order. It has no gradient rule: optimizers apply
    it to gradients, after differentiation."""
    return apply("UniqueRowSum", [convert_to_tensor(values),
                                  convert_to_tensor(indices, preferred_dtype=_dtypes.int32)],
                 name=name)


# -- unsorted_segment_sum ------------------------------------------------------------------


def _segment_sum_forward(data, segment_ids, num_segments):
    n = int(num_segments)
    ids = segment_ids.reshape(-1)
    rows = data.reshape((ids.size,) + data.shape[segment_ids.ndim:])
    if ids.size and ids.max() >= n:
        _check_ids(ids[ids >= 0], n, "segment_ids")
    if ids.size and ids.min() < 0:  # TF drops negative ids
        keep = ids >= 0
        ids, rows = ids[keep], rows[keep]
    return row_sum(rows, ids, n)


def unsorted_segment_infer(inputs, op_type="UnsortedSegmentSum"):
    """The shape rule of the unsorted segment ops: ``num_segments`` rows (when known), then
    the data's axes after the ids'."""
    data, ids, num = inputs
    _int_input(ids, "segment_ids", op_type)
    _int_input(num, "num_segments", op_type)
    if num.shape.ndims not in (None, 0):
        raise ShapeError(f"num_segments must be a scalar, got shape {num.shape}")
    known = static_value(num)
    rows = None if known is None else int(known)
    if data.shape.dims is None or ids.shape.dims is None:
        return [(data.dtype, TensorShape(None))]
    k = ids.shape.ndims
    if k > data.shape.ndims or not TensorShape(data.shape.dims[:k]).is_compatible_with(ids.shape):
        raise ShapeError(f"segment_ids of shape {ids.shape} must be a prefix of the data's shape "
                         f"{data.shape}")
    return [(data.dtype, TensorShape((rows,) + data.shape.dims[k:]))]


def _segment_sum_grad(op, g):
    """TF's _UnsortedSegmentSumGrad: the gradient's rows at the ids, zeros for negative ids."""
    return [apply("GatherDropNegatives", [g, op.inputs[1]], name="GatherDropNegatives"),
            None, None]


def _gather_drop_negatives(params, ids):
    _check_ids(ids[ids >= 0], params.shape[0], "segment_ids")
    out = params[np.maximum(ids, 0)]
    if ids.size and ids.min() < 0:
        out[ids < 0] = 0
    return out


def _gather_drop_negatives_grad(op, g):
    params, ids = op.inputs
    return [unsorted_segment_sum(g, ids, _rows_of(params)), None]


register("UnsortedSegmentSum", _segment_sum_forward, unsorted_segment_infer,
         grad=_segment_sum_grad)
register("GatherDropNegatives", _gather_drop_negatives, _gather_infer,
         grad=_gather_drop_negatives_grad)


def _rows_of(x):
    """The size of x's first dimension as an int64 scalar tensor (a constant when static)."""
    if x.shape.dims is not None and x.shape.dims and x.shape.dims[0] is not None:
        return constant(np.int64(x.shape.dims[0]), name="num_segments")
    return strided_slice(apply("Shape", [x], name="Shape", out_type=_dtypes.int64), 0)


@export("unsorted_segment_sum")
def unsorted_segment_sum(data, segment_ids, num_segments, name="UnsortedSegmentSum"):
    """out[k] = sum of data[i...] over the i... with segment_ids[i...] == k; negative ids are
    dropped and segments without an id are zeros (TF's UnsortedSegmentSum)."""
    data = convert_to_tensor(data)
    segment_ids = convert_to_tensor(segment_ids, preferred_dtype=_dtypes.int32)
    num_segments = convert_to_tensor(num_segments, preferred_dtype=_dtypes.int32)
    return apply("UnsortedSegmentSum", [data, segment_ids, num_segments], name=name)


# -- sparse segment reductions (embedding_lookup_sparse) -----------------------------------

COMBINERS = ("sum", "mean", "sqrtn")


def _segment_weights(segment_ids, rows, combiner, dtype):
    """Per-segment factor of the combiner: 1, 1/count or 1/sqrt(count) (empty segments: 1)."""
    if combiner == "sum":
        return None
    counts = np.bincount(segment_ids, minlength=rows).astype(dtype)
    counts = np.maximum(counts, 1)
    return (1 / counts if combiner == "mean" else 1 / np.sqrt(counts)).astype(dtype)


def _check_sorted(segment_ids):
    if segment_ids.size and (segment_ids[0] < 0 or np.any(segment_ids[1:] < segment_ids[:-1])):
        raise ValueError("segment_ids must be sorted and non-negative")


def _sparse_segment_forward(data, indices, segment_ids, combiner):
    """TF's SparseSegmentSum/Mean/SqrtN: rows data[indices] pooled per segment; the output has
    segment_ids[-1] + 1 rows."""
    _check_ids(indices, data.shape[0], "indices")
    _check_sorted(segment_ids)
    rows = int(segment_ids[-1]) + 1 if segment_ids.size else 0
    out = row_sum(data[indices], segment_ids, rows)
    weights = _segment_weights(segment_ids, rows, combiner, data.dtype)
    if weights is not None:
        out *= weights.reshape((-1,) + (1,) * (out.ndim - 1))
    return out


def _sparse_segment_infer(inputs, combiner):
    data, indices, segment_ids = inputs
    _int_input(indices, "indices", "SparseSegmentReduction")
    _int_input(segment_ids, "segment_ids", "SparseSegmentReduction")
    if data.shape.dims is None:
        return [(data.dtype, TensorShape(None))]
    known = static_value(segment_ids)
    rows = None if known is None else (int(known[-1]) + 1 if known.size else 0)
    return [(data.dtype, TensorShape((rows,) + data.shape.dims[1:]))]


def _sparse_segment_grad(op, g):
    data, indices, segment_ids = op.inputs
    return [apply("SparseSegmentReductionGrad", [g, data, indices, segment_ids],
                  name="SparseSegmentReductionGrad", combiner=op.attrs["combiner"]), None, None]


def _sparse_segment_grad_forward(g, data, indices, segment_ids, combiner):
    """d/d data: each output row's gradient (times its combiner factor) added to the data rows
    it pooled (TF's SparseSegmentSumGrad / MeanGrad / SqrtNGrad)."""
    weights = _segment_weights(segment_ids, g.shape[0], combiner, g.dtype)
    rows = g[segment_ids]
    if weights is not None:
        rows = rows * weights[segment_ids].reshape((-1,) + (1,) * (g.ndim - 1))
    return row_sum(rows, indices, data.shape[0])


def _sparse_segment_grad_grad(op, dy):
    _, _, indices, segment_ids = op.inputs
    return [sparse_segment_reduction(dy, indices, segment_ids, op.attrs["combiner"]),
            None, None, None]


register("SparseSegmentReduction", _sparse_segment_forward, _sparse_segment_infer,
         grad=_sparse_segment_grad)
register("SparseSegmentReductionGrad", _sparse_segment_grad_forward,
         lambda inputs, combiner: [(inputs[0].dtype, inputs[1].shape)],
         grad=_sparse_segment_grad_grad)


def sparse_segment_reduction(data, indices, segment_ids, combiner="sum",
                             name="SparseSegmentReduction"):
    """Rows ``data[indices]`` pooled per (sorted) segment id with ``combiner``."""
    if combiner not in COMBINERS:
        raise ValueError(f"combiner must be one of {COMBINERS}, got {combiner!r}")
    return apply("SparseSegmentReduction",
                 [convert_to_tensor(data), convert_to_tensor(indices, preferred_dtype=_dtypes.int32),
                  convert_to_tensor(segment_ids, preferred_dtype=_dtypes.int32)],
                 name=name, combiner=combiner)


@export("sparse_segment_sum")
def sparse_segment_sum(data, indices, segment_ids, name="SparseSegmentSum"):
    return sparse_segment_reduction(data, indices, segment_ids, "sum", name)


@export("sparse_segment_mean")
def sparse_segment_mean(data, indices, segment_ids, name="SparseSegmentMean"):
    return sparse_segment_reduction(data, indices, segment_ids, "mean", name)


@export("sparse_segment_sqrt_n")
def sparse_segment_sqrt_n(data, indices, segment_ids, name="SparseSegmentSqrtN"):
    return sparse_segment_reduction(data, indices, segment_ids, "sqrtn", name)


# -- IndexedSlices <-> dense ---------------------------------------------------------------


def _first_dim(dense_shape):
    known = static_value(dense_shape)
    if known is not None:
        return constant(np.int64(known[0]), name="num_segments")
    return strided_slice(dense_shape, 0)


def indexed_slices_to_tensor(slices, dtype=None, name=None):
    """TF's _IndexedSlicesToTensor: the dense sum of the slices, warning when it has 100M+
    elements or an unknown shape (a densified embedding gradient is usually a mistake)."""
    if dtype is not None and _dtypes.as_dtype(dtype) != slices.dtype:
        raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for "
                         f"IndexedSlices with dtype {slices.dtype.name}")
    if slices.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: "
                         f"{slices}")
    known = static_value(slices.dense_shape)
    if known is None:
        warnings.warn("Converting sparse IndexedSlices to a dense Tensor of unknown shape. "
                      "This may consume a large amount of memory.", stacklevel=3)
    elif int(np.prod(known, dtype=np.int64)) >= _slices.LARGE_SPARSE_NUM_ELEMENTS:
        warnings.warn(f"Converting sparse IndexedSlices to a dense Tensor with "
                      f"{int(np.prod(known, dtype=np.int64))} elements. This may consume a "
                      "large amount of memory.", stacklevel=3)
    return unsorted_segment_sum(slices.values, slices.indices, _first_dim(slices.dense_shape),
                                name=name or "UnsortedSegmentSum")


_slices.set_dense_converter(indexed_slices_to_tensor)


def as_indexed_slices(x, index_dtype=None):
    """A dense tensor as IndexedSlices over all its rows (TF's math_ops._as_indexed_slices)."""
    if isinstance(x, IndexedSlices):
        return x
    x = convert_to_tensor(x)
    rows = _rows_of(x)
    index_dtype = _dtypes.as_dtype(index_dtype or _dtypes.int64)
    return IndexedSlices(x, range_(rows, dtype=index_dtype), dense_shape_of(x))


def _index_dtype(slices_list):
    """int64 if the indices' dtypes differ (TF casts them all), else their common dtype."""
    dtypes = {s.indices.dtype for s in slices_list}
    return dtypes.pop() if len(dtypes) == 1 else _dtypes.int64


def aggregate_indexed_slices(grads):
    """TF's _AggregateIndexedSlicesGradients: contributions of which at least one is an
    IndexedSlices (dense ones become slices over all their rows) concatenated into one."""
    grads = [g for g in grads if g is not None]
    if len(grads) == 1:
        return grads[0]
    sparse = [g for g in grads if isinstance(g, IndexedSlices)]
    dtype = _index_dtype(sparse) if len(sparse) == len(grads) else _dtypes.int64
    grads = [as_indexed_slices(g, dtype) for g in grads]
    indices = [g.indices if g.indices.dtype == dtype else cast(g.indices, dtype) for g in grads]
    return IndexedSlices(concat([g.values for g in grads], axis=0), concat(indices, axis=0),
                         grads[0].dense_shape)


def densify(x):
    """``x`` if a Tensor (or None), else its dense tensor (IndexedSlices)."""
    if isinstance(x, IndexedSlices):
        return indexed_slices_to_tensor(x)
    return x


# -- sparse_to_dense -----------------------------------------------------------------------


def _point_index(indices, rank):
    """TF's sparse_indices (a scalar, [N] for a 1-D output, or [N, rank]) as numpy's index."""
    indices = np.asarray(indices, dtype=np.int64)
    if indices.ndim < 2:
        indices = indices.reshape(-1, 1)
    if indices.shape[1] != rank:
        raise InvalidArgumentError(f"sparse_indices of {indices.shape[1]} columns for an output "
                                   f"of rank {rank}")
    return tuple(indices.T)


def _sparse_to_dense_forward(indices, output_shape, values, default_value, validate_indices):
    shape = tuple(int(d) for d in np.ravel(output_shape))
    point = _point_index(indices, len(shape))
    for axis, (ids, n) in enumerate(zip(point, shape)):
        _check_ids(ids, n, f"sparse_indices[:, {axis}]")
    if validate_indices and point[0].size > 1:
        flat = np.ravel_multi_index(point, shape)
        if np.any(flat[1:] <= flat[:-1]):
            raise InvalidArgumentError("sparse_indices are not in lexicographic order or repeat "
                                       "an index (validate_indices=False accepts them)")
    out = np.full(shape, default_value, dtype=values.dtype)
    out[point] = values
    return out


def _sparse_to_dense_infer(inputs, validate_indices):
    indices, output_shape, values, default = inputs
    _int_input(indices, "sparse_indices", "SparseToDense")
    if values.dtype != default.dtype:
        raise TypeError(f"SparseToDense: sparse_values ({values.dtype.name}) and default_value "
                        f"({default.dtype.name}) must have one dtype")
    return [(values.dtype, shape_tensor_dims(output_shape))]


def _sparse_to_dense_grad(op, g):
    """TF's _SparseToDenseGrad: the values get the gradient at their indices, the default value
    the rest of it."""
    indices, _, values, _ = op.inputs
    values_grad = apply("GatherPoints", [g, indices, values], name="GatherPoints")
    return [None, None, values_grad, reduce_sum(g) - reduce_sum(values_grad)]


register("SparseToDense", _sparse_to_dense_forward, _sparse_to_dense_infer,
         grad=_sparse_to_dense_grad)


def _gather_points_forward(g, indices, values):
    picked = g[_point_index(indices, g.ndim)]
    return picked if values.ndim else picked.sum(dtype=g.dtype)


register("GatherPoints", _gather_points_forward,
         lambda inputs: [(inputs[0].dtype, inputs[2].shape)])


@export("sparse_to_dense")
def sparse_to_dense(sparse_indices, output_shape, sparse_values, default_value=0,
                    validate_indices=True, name="SparseToDense"):
    """A dense tensor of ``output_shape`` holding ``sparse_values`` (one per index, or a scalar
    for all) at ``sparse_indices`` and ``default_value`` elsewhere."""
    values = convert_to_tensor(sparse_values)
    return apply("SparseToDense", [
        convert_to_tensor(sparse_indices, preferred_dtype=_dtypes.int32),
        convert_to_tensor(output_shape, preferred_dtype=_dtypes.int32), values,
        convert_to_tensor(default_value, dtype=values.dtype)], name=name,
        validate_indices=bool(validate_indices))
