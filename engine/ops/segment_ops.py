"""Segment reductions: ``tf.segment_sum / mean / max / min / prod`` over sorted ids and
``tf.unsorted_segment_max / min / prod`` (and the composed ``unsorted_segment_mean`` and
``unsorted_segment_sqrt_n``) over ids in any order (``unsorted_segment_sum`` is in ``sparse``).

``segment_ids`` has the shape of a prefix of ``data``'s (1-D for the sorted ops) and names the
output row each data row goes to. The sorted ops have ``segment_ids[-1] + 1`` rows and reject
ids that decrease or are negative; an empty segment gives 0 (1 for prod), as TF's kernels. The
unsorted ops have ``num_segments`` rows, drop negative ids, and an empty segment gives the
reduction's identity: the dtype's lowest value for max, its largest for min, 1 for prod.

The forward sorts the rows by id once (stably) and reduces each run with numpy's ``reduceat``.
The gradients are TF's (``math_grad.py``), composed of ops so that they differentiate again:
sum and mean send each segment's gradient to its rows (mean divided by the count); max and min
share it between the rows equal to the segment's result; prod gives each row the product of
the others (the rows of a segment with two zeros get 0, one zero: its row the product of the
rest).
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError, ShapeError
from ..framework.indexed_slices import static_value
from ..framework.registry import apply, export, register
from ..framework.tensor_shape import TensorShape
from .array import expand_dims, shape
from .comparisons import equal, greater, greater_equal, logical_and
from .core import constant, convert_to_tensor, ones_like, zeros_like
from .math import cast, maximum, sqrt
from .sparse import gather, stable_order, unsorted_segment_infer, unsorted_segment_sum
from .strided_slice import strided_slice
from .where import where_v2

KINDS = ("sum", "mean", "max", "min", "prod")
_UFUNCS = {"sum": np.add, "mean": np.add, "max": np.maximum, "min": np.minimum,
           "prod": np.multiply}


def _empty_value(kind, dtype, sorted_ids):
    """What a segment without rows holds: TF's sorted kernels give 0 (1 for prod), the
    unsorted ones the reduction's identity."""
    if kind == "prod":
        return 1
    if sorted_ids or kind in ("sum", "mean"):
        return 0
    info = np.finfo(dtype) if np.issubdtype(dtype, np.floating) else np.iinfo(dtype)
    return info.min if kind == "max" else info.max


def _reduce_rows(rows, ids_sorted, n, kind, sorted_ids):
    """out[k] = the ``kind`` reduction of the rows whose (ascending) id is k."""
    out = np.full((n,) + rows.shape[1:], _empty_value(kind, rows.dtype, sorted_ids),
                  dtype=rows.dtype)
    if not ids_sorted.size:
        return out
    starts = np.flatnonzero(np.r_[True, ids_sorted[1:] != ids_sorted[:-1]])
    reduced = _UFUNCS[kind].reduceat(rows, starts, axis=0)
    if kind == "mean":
        counts = np.diff(np.r_[starts, ids_sorted.size]).astype(rows.dtype)
        reduced = reduced / counts.reshape((-1,) + (1,) * (rows.ndim - 1))
    out[ids_sorted[starts]] = reduced
    return out


def _segment_forward(data, segment_ids, kind):
    ids = segment_ids.reshape(-1)
    if ids.size and ids[0] < 0:
        raise InvalidArgumentError(f"segment ids must be >= 0, got segment_ids[0] = {ids[0]}")
    drops = np.flatnonzero(ids[1:] < ids[:-1])
    if drops.size:
        i = int(drops[0]) + 1
        raise InvalidArgumentError(f"segment ids are not increasing: segment_ids[{i}] = "
                                   f"{ids[i]} after {ids[i - 1]}")
    n = int(ids[-1]) + 1 if ids.size else 0
    return _reduce_rows(data, ids, n, kind, sorted_ids=True)


def _unsorted_forward(data, segment_ids, num_segments, kind):
    n = int(num_segments)
    ids = segment_ids.reshape(-1)
    rows = data.reshape((ids.size,) + data.shape[segment_ids.ndim:])
    keep = ids >= 0  # TF drops negative ids
    if ids.size and ids.max() >= n:
        pos = int(np.flatnonzero(ids >= n)[0])
        raise InvalidArgumentError(f"segment_ids[{pos}] = {ids[pos]} is out of range [0, {n})")
    if not keep.all():
        ids, rows = ids[keep], rows[keep]
    order, ids_sorted = stable_order(ids)
    return _reduce_rows(np.take(rows, order, axis=0), ids_sorted, n, kind, sorted_ids=False)


def _int_ids(ids, op_type, what="segment_ids"):
    if not ids.dtype.is_integer:
        raise TypeError(f"{op_type}: {what} must be integers, got {ids.dtype.name} ({ids.name})")


def _segment_infer(op_type):
    def infer(inputs, kind):
        data, ids = inputs
        _int_ids(ids, op_type)
        if ids.shape.ndims not in (None, 1):
            raise ShapeError(f"segment_ids must be a vector, got shape {ids.shape} ({ids.name})")
        if data.shape.ndims == 0:
            raise ShapeError(f"data must be at least 1-D, got a scalar ({data.name})")
        if data.shape.dims is None:
            return [(data.dtype, TensorShape(None))]
        if not TensorShape(data.shape.dims[:1]).is_compatible_with(ids.shape):
            raise ShapeError(f"segment_ids of shape {ids.shape} must have one id per row of "
                             f"data {data.shape}")
        known = static_value(ids)
        rows = None if known is None else (int(known[-1]) + 1 if known.size else 0)
        return [(data.dtype, TensorShape((rows,) + tuple(data.shape.dims[1:])))]
    return infer


# -- gradients (TF's math_grad.py) ---------------------------------------------------------


def _like_rows(mask, data):
    """A mask over the ids' shape with data's remaining axes appended (size 1), to broadcast."""
    for _ in range((data.shape.ndims or 0) - (mask.shape.ndims or 0)):
        mask = expand_dims(mask, -1)
    return mask


def _rows(t):
    """The number of rows of ``t`` (an int32 scalar; a constant when static)."""
    if t.shape.ndims and t.shape.dims[0] is not None:
        return constant(np.int32(t.shape.dims[0]), name="num_segments")
    return strided_slice(shape(t), 0)


def _gather_rows(values, ids, sorted_ids):
    """values[ids] (zeros for the negative ids of the unsorted ops)."""
    if sorted_ids:
        return gather(values, ids)
    return apply("GatherDropNegatives", [values, ids], name="GatherDropNegatives")


def _extremum_grad(op, g, sorted_ids):
    """TF's _SegmentMinOrMaxGrad / _UnsortedSegmentMinOrMaxGrad: the gradient shared equally
    between the rows that equal their segment's result."""
    data, ids = op.inputs[0], op.inputs[1]
    out = op.outputs[0]
    selected = equal(data, _gather_rows(out, ids, sorted_ids))
    if not sorted_ids:
        selected = logical_and(selected, _like_rows(greater_equal(ids, 0), data))
    count = unsorted_segment_sum(cast(selected, g.dtype), ids, _rows(out))
    share = _gather_rows(g / count, ids, sorted_ids)
    return where_v2(selected, share, zeros_like(share))


def _prod_grad(op, g, sorted_ids):
    """TF's _SegmentProdGrad / _UnsortedSegmentProdGrad: each row gets the product of the other
    rows of its segment, computed without dividing by zero."""
    data, ids = op.inputs[0], op.inputs[1]
    out = op.outputs[0]
    rows = _rows(out)
    is_zero = equal(data, zeros_like(data))
    zeros_count = unsorted_segment_sum(cast(is_zero, _dtypes.int32), ids, rows)
    g = where_v2(greater(zeros_count, 1), zeros_like(g), g)
    non_zero = where_v2(is_zero, ones_like(data), data)
    non_zero_prod = prod_of(non_zero, ids, rows, sorted_ids)
    others = where_v2(is_zero, _gather_rows(non_zero_prod, ids, sorted_ids),
                      _gather_rows(out, ids, sorted_ids) / non_zero)
    return _gather_rows(g, ids, sorted_ids) * others


def prod_of(data, ids, rows, sorted_ids):
    if sorted_ids:
        return apply("SegmentReduction", [data, ids], name="SegmentProd", kind="prod")
    return apply("UnsortedSegmentReduction", [data, ids, rows], name="UnsortedSegmentProd",
                 kind="prod")


def _segment_grad(op, g):
    data, ids = op.inputs
    kind = op.attrs["kind"]
    if kind == "sum":
        return [gather(g, ids), None]
    if kind == "mean":
        counts = unsorted_segment_sum(ones_like(ids, dtype=g.dtype), ids, _rows(g))
        return [gather(g / _like_rows(counts, g), ids), None]
    if kind == "prod":
        return [_prod_grad(op, g, True), None]
    return [_extremum_grad(op, g, True), None]


def _unsorted_grad(op, g):
    if op.attrs["kind"] == "prod":
        return [_prod_grad(op, g, False), None, None]
    return [_extremum_grad(op, g, False), None, None]


register("SegmentReduction", _segment_forward, _segment_infer("SegmentReduction"),
         grad=_segment_grad, attrs_doc={"kind": "sum | mean | max | min | prod"})
register("UnsortedSegmentReduction", _unsorted_forward,
         lambda inputs, kind: unsorted_segment_infer(inputs, "UnsortedSegmentReduction"),
         grad=_unsorted_grad,
         attrs_doc={"kind": "max | min | prod"})


# -- the API -------------------------------------------------------------------------------


def _reduction(op_type, kind, name, data, segment_ids, *num_segments):
    ints = [convert_to_tensor(t, preferred_dtype=_dtypes.int32)
            for t in (segment_ids, *num_segments)]
    return apply(op_type, [convert_to_tensor(data), *ints], name=name, kind=kind)


def _segment(kind, tf_name):
    def reduce(data, segment_ids, name=None):
        return _reduction("SegmentReduction", kind, name or tf_name, data, segment_ids)
    reduce.__name__ = f"segment_{kind}"
    reduce.__doc__ = (f"``tf.segment_{kind}``: out[k] = the {kind} of the rows of ``data`` whose "
                      f"sorted id is k (``segment_ids[-1] + 1`` rows; an empty segment gives "
                      f"{1 if kind == 'prod' else 0}).")
    return export(f"segment_{kind}")(reduce)


segment_sum = _segment("sum", "SegmentSum")
segment_mean = _segment("mean", "SegmentMean")
segment_max = _segment("max", "SegmentMax")
segment_min = _segment("min", "SegmentMin")
segment_prod = _segment("prod", "SegmentProd")


def _unsorted(kind, tf_name, empty):
    def reduce(data, segment_ids, num_segments, name=None):
        return _reduction("UnsortedSegmentReduction", kind, name or tf_name, data, segment_ids,
                          num_segments)
    reduce.__name__ = f"unsorted_segment_{kind}"
    reduce.__doc__ = (f"``tf.unsorted_segment_{kind}``: out[k] = the {kind} of the rows of "
                      f"``data`` with segment id k, ids in any order (negative ones dropped); "
                      f"an empty segment gives {empty}.")
    return export(f"unsorted_segment_{kind}")(reduce)


unsorted_segment_max = _unsorted("max", "UnsortedSegmentMax", "the dtype's lowest value")
unsorted_segment_min = _unsorted("min", "UnsortedSegmentMin", "the dtype's largest value")
unsorted_segment_prod = _unsorted("prod", "UnsortedSegmentProd", "1")


def _counts(data, segment_ids, num_segments):
    """Rows per segment, at least 1, shaped to broadcast against the segments' rows (TF's
    _unsorted_segment_N)."""
    ones = ones_like(segment_ids, dtype=data.dtype)
    counts = maximum(unsorted_segment_sum(ones, segment_ids, num_segments), 1)
    for _ in range((data.shape.ndims or 0) - (segment_ids.shape.ndims or 0)):
        counts = expand_dims(counts, -1)
    return counts


@export("unsorted_segment_mean")
def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """``tf.unsorted_segment_mean``: the sum of each segment's rows over their count (an empty
    segment gives 0)."""
    data = convert_to_tensor(data)
    segment_ids = convert_to_tensor(segment_ids, preferred_dtype=_dtypes.int32)
    return unsorted_segment_sum(data, segment_ids, num_segments) / \
        _counts(data, segment_ids, num_segments)


@export("unsorted_segment_sqrt_n")
def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """``tf.unsorted_segment_sqrt_n``: the sum of each segment's rows over the square root of
    their count (an empty segment gives 0)."""
    data = convert_to_tensor(data)
    segment_ids = convert_to_tensor(segment_ids, preferred_dtype=_dtypes.int32)
    return unsorted_segment_sum(data, segment_ids, num_segments) / \
        sqrt(_counts(data, segment_ids, num_segments))
