"""Reductions (sum, mean, max, min, prod, logsumexp, argmax) with TF's gradient rules."""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import jit
from ..framework.registry import apply, export, normalize_axis, register, register_chain
from ..framework.tensor_shape import TensorShape
from .array import reshape_like
from .comparisons import equal
from .core import convert_to_tensor, stop_gradient, zeros_like
from .math import cast, exp, is_finite, log
from .where import where_v2


def _reduced_shape(shape: TensorShape, axes, keepdims):
    """Static result shape; ``axes`` is None (all) or, for an unknown rank, possibly negative."""
    if shape.dims is None:
        return TensorShape([] if axes is None and not keepdims else None)
    if keepdims:
        return TensorShape(1 if i in axes else d for i, d in enumerate(shape.dims))
    return TensorShape(d for i, d in enumerate(shape.dims) if i not in axes)


def _reduce_infer(inputs, axes, keepdims):
    return [(inputs[0].dtype, _reduced_shape(inputs[0].shape, axes, keepdims))]


def _count(x_shape, axes):
    n = 1
    for a in range(len(x_shape)) if axes is None else axes:
        n *= x_shape[a]
    return n


#: elements up to which a spread sum gradient is a new array rather than a broadcast view
#: (np.broadcast_to's Python costs more than copying a small array)
_SMALL_SPREAD = 4096


def _broadcast_reduced(g, x, axes, keepdims, mean):
    """Spread the gradient of a reduction back over the reduced axes of x (divided for a mean).

    The fast path (float gradients; what every loss's mean takes) reshapes g to keep the
    reduced axes, divides it (a mean) and copies it into an array of x's shape (np.repeat over
    one reduced axis): the same values as broadcast_to and division (element by element the
    same operation), without expand_dims' and broadcast_to's Python."""
    shape = np.shape(x)
    if getattr(g, "dtype", None) is None or g.dtype.kind != "f" or (
            not mean and np.size(x) > _SMALL_SPREAD):
        return _broadcast_reduced_general(g, shape, axes, keepdims, mean)
    if not keepdims and axes is not None and g.ndim:  # (a 0-d g broadcasts as it is)
        rank = len(shape)
        reduced = {a % rank for a in axes} if rank else set()
        g = g.reshape(tuple(1 if i in reduced else d for i, d in enumerate(shape)))
    if mean:  # divided before it is spread: the same division of each element
        g = np.divide(g, g.dtype.type(max(_count(shape, axes), 1)))
    if axes is not None and len(axes) == 1 and len(shape) > 1:
        axis = axes[0] % len(shape)  # one axis: np.repeat copies rows, 2-3x faster than a ufunc
        return np.repeat(g, shape[axis], axis=axis)
    out = np.empty(shape, g.dtype)
    out[...] = g
    return out


def _broadcast_reduced_general(g, shape, axes, keepdims, mean):
    if not keepdims and axes is not None:
        g = np.expand_dims(g, axes)  # negative axes count from x's end, as they should
    out = np.broadcast_to(g, shape)
    if mean:
        out = out / np.asarray(max(_count(shape, axes), 1), dtype=out.dtype)
    return out


def _broadcast_reduced_grad(op, dy):
    fn = reduce_mean if op.attrs["mean"] else reduce_sum
    a = op.attrs
    return [reduce_keep(fn, dy, a["axes"], a["keepdims"]), None]


register("BroadcastReduced", _broadcast_reduced,
         lambda inputs, axes, keepdims, mean: [(inputs[0].dtype, inputs[1].shape)],
         grad=_broadcast_reduced_grad)


def _spread_scale_maker(ops, positions, exported):
    """The chain ``BroadcastReduced -> ExpandDims -> Mul`` (a loss's mean spread over its
    examples, given a class axis and multiplied into per-class values: every cross-entropy's
    gradient) as one multiply, where the reduction's gradient is a scalar: each element of the
    spread is that scalar (divided by the count for a mean, as ``_broadcast_reduced`` divides
    it), so the product is ``multiply(scalar, other)``, element by element the same operation,
    when the expanded spread broadcasts to ``other``'s shape. Three plan steps -> one."""
    spread, expand, mul = ops
    if exported[0] or exported[1] or positions[1] != [None] or positions[2][0] is not None \
            or positions[2][1] is None:
        return None
    ig, ix = positions[0]
    iother = positions[2][1]
    axes, mean, axis = spread.attrs["axes"], spread.attrs["mean"], expand.attrs["axis"]

    def fast(*args):
        g, x, other = args[ig], args[ix], args[iother]
        if np.ndim(g) or getattr(g, "dtype", None) != other.dtype or g.dtype.kind != "f":
            return None
        shape = np.shape(x)
        rank = len(shape) + 1
        if not -rank <= axis < rank:
            return None
        expanded = list(shape)
        expanded.insert(axis % rank, 1)
        if len(expanded) > other.ndim or any(
                e not in (1, o) for e, o in zip(expanded[::-1], other.shape[::-1])):
            return None
        value = np.divide(g, g.dtype.type(max(_count(shape, axes), 1))) if mean else g
        return (np.multiply(value, other),)

    return fast


register_chain(("BroadcastReduced", "ExpandDims", "Mul"), _spread_scale_maker)


def reduce_keep(fn, x, axes, keepdims):
    return fn(x, axis=None if axes is None else list(axes), keepdims=keepdims)


def broadcast_reduced(g, x, axes, keepdims, mean=False):
    return apply("BroadcastReduced", [g, x], name="BroadcastReduced",
                 axes=None if axes is None else tuple(axes), keepdims=keepdims, mean=mean)


def _sum_grad(op, g):
    a = op.attrs
    return [broadcast_reduced(g, op.inputs[0], a["axes"], a["keepdims"])]


def _mean_grad(op, g):
    a = op.attrs
    return [broadcast_reduced(g, op.inputs[0], a["axes"], a["keepdims"], mean=True)]


def _extremum_grad(op, g):
    """TF: the gradient is shared equally among all elements that attain the extremum."""
    x, y = op.inputs[0], op.outputs[0]
    axes, keepdims = op.attrs["axes"], op.attrs["keepdims"]
    y_full = broadcast_reduced(y, x, axes, keepdims)
    indicators = cast(equal(y_full, x), g.dtype)
    num_selected = reduce_keep(reduce_sum, indicators, axes, keepdims=True)
    return [indicators / num_selected * broadcast_reduced(g, x, axes, keepdims)]


def _grouped(x, axes):
    """x with its reduction group flattened into axis 0: (array of shape (n, rest), undo)."""
    axes = tuple(range(x.ndim)) if axes is None else tuple(sorted(a % x.ndim for a in axes))
    perm = list(axes) + [i for i in range(x.ndim) if i not in axes]
    permuted_shape = [x.shape[i] for i in perm]
    n = int(np.prod([x.shape[a] for a in axes]))

    def undo(flat):
        return np.transpose(flat.reshape(permuted_shape), np.argsort(perm))

    return np.transpose(x, perm).reshape(n, -1), undo


def _prod_others(x, axes):
    """Each element's product of the other elements of its reduction group (zeros allowed).

    TF's rule: exclusive cumulative products from both ends of the flattened group.
    """
    if x.size == 0:
        return np.ones_like(x)
    flat, undo = _grouped(x, axes)
    ones = np.ones((1, flat.shape[1]), x.dtype)
    left = np.cumprod(np.concatenate([ones, flat[:-1]]), axis=0)
    right = np.cumprod(np.concatenate([ones, flat[::-1][:-1]]), axis=0)[::-1]
    return undo(left * right)


def _prod_others_vjp(x, dz, axes):
    """v_j = sum_{i != j} dz_i * prod_{k != i, j} x_k, exact with zeros in x.

    Only products that avoid every zero survive, so the result depends on the zero count of
    the group: none (the division formula), one, two, or more (all zero).
    """
    if x.size == 0:
        return np.zeros_like(x)
    xf, undo = _grouped(x, axes)
    dzf, _ = _grouped(np.broadcast_to(dz, x.shape), axes)
    zero = xf == 0
    count = zero.sum(axis=0, keepdims=True)
    safe = np.where(zero, np.ones((), x.dtype), xf)
    p = np.prod(safe, axis=0, keepdims=True)  # product of the nonzero elements
    r = dzf / safe
    s = r.sum(axis=0, keepdims=True)
    dz_zero = np.where(zero, dzf, 0).sum(axis=0, keepdims=True)  # dz summed over the zeros
    none = p / safe * (s - r)
    one = np.where(zero, p * (s - r), dz_zero * p / safe)
    two = np.where(zero, (dz_zero - dzf) * p, 0)
    out = np.where(count == 0, none, np.where(count == 1, one, np.where(count == 2, two, 0)))
    return undo(out.astype(x.dtype, copy=False))


def _no_third_order(op, *_):
    raise LookupError(f"No gradient defined for operation '{op.name}' (op type: ProdOthersGrad): "
                      "third-order derivatives through reduce_prod are not supported")


register("ProdOthersGrad", _prod_others_vjp,
         lambda inputs, axes: [(inputs[0].dtype, inputs[0].shape)], grad=_no_third_order)
register("ProdOthers", _prod_others, lambda inputs, axes: [(inputs[0].dtype, inputs[0].shape)],
         grad=lambda op, dz: [apply("ProdOthersGrad", [op.inputs[0], dz], name="ProdOthersGrad",
                                    axes=op.attrs["axes"])])


def _prod_grad(op, g):
    x = op.inputs[0]
    axes, keepdims = op.attrs["axes"], op.attrs["keepdims"]
    others = apply("ProdOthers", [x], name="ProdOthers", axes=axes)
    return [broadcast_reduced(g, x, axes, keepdims) * others]


def _np_reduce(fn):
    """A numpy reduction that keeps the input dtype, as TF's do.

    numpy widens integer sums and products to int64 and means to float64; TF keeps int32 (an
    integer mean truncates toward zero, which is what casting numpy's float mean does).
    """

    def forward(x, axes, keepdims):
        out = fn(x, axis=axes, keepdims=keepdims)
        return np.asarray(out).astype(x.dtype, copy=False)

    return forward


_numpy_mean = _np_reduce(np.mean)

#: the most elements after a reduced middle axis for which ``add_reduce`` moves the axis first
_SHORT_INNER = 64
#: the fewest elements for which it does
_MOVE_MIN = 4096


def _sum_middle_loop(x, out):
    """``out[o, j]`` = x[o, 0, j] + x[o, 1, j] + ..., added one after the other (numpy's order)."""
    for o in range(x.shape[0]):
        for j in range(x.shape[2]):
            out[o, j] = x[o, 0, j]
        for k in range(1, x.shape[1]):
            for j in range(x.shape[2]):
                out[o, j] += x[o, k, j]


#: with numba, the middle-axis sums run compiled once a process has made 50 of them
_SUM_MIDDLE = jit.WarmKernel(_sum_middle_loop, 50)


def add_reduce(x, axes, keepdims):
    """``np.add.reduce(x, axis=axes, keepdims=keepdims)``, the same bits, faster where numpy's
    loop is slow: one middle axis with a few elements after it (mean-pooling [batch, words,
    16]). numpy adds along such an axis one element after the other, calling its inner loop
    once per 16 elements; moved to the front as a contiguous copy, the axis is summed in the
    same order over whole rows ([128, 20, 16]: 43 -> 15 us), or with numba (``jit.WarmKernel``)
    in one compiled pass in the same order (about 3 us)."""
    if axes is not None and len(axes) == 1 and x.ndim > 2 and x.size >= _MOVE_MIN \
            and x.flags.c_contiguous and x.dtype in _COMPILED_DTYPES:
        axis = axes[0] % x.ndim
        inner = 1
        for d in x.shape[axis + 1:]:
            inner *= d
        if 0 < axis and 2 <= inner <= _SHORT_INNER and x.shape[axis] > 1:
            kept = x.shape[:axis] + x.shape[axis + 1:]
            total = np.empty(kept, x.dtype)
            if not _SUM_MIDDLE(x.reshape(-1, x.shape[axis], inner), total.reshape(-1, inner)):
                np.add.reduce(np.moveaxis(x, axis, 0).copy(), axis=0, out=total)
            return np.expand_dims(total, axis) if keepdims else total
    return np.add.reduce(x, axis=axes, keepdims=keepdims)


_COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _mean(x, axes, keepdims):
    """np.mean's float32/float64 arithmetic without its Python layers: the sum in the input's
    dtype, then numpy's division by the count (an intp: computed in float64 and cast back, as
    np.mean does), so the bits are np.mean's."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind != "f" or dtype.itemsize < 4:
        return _numpy_mean(x, axes, keepdims)
    count = _count(x.shape, axes)
    if not count:
        return _numpy_mean(x, axes, keepdims)  # numpy's empty-mean warning and NaN
    total = add_reduce(x, axes, keepdims)
    if isinstance(total, np.ndarray):
        return np.true_divide(total, np.intp(count), out=total, casting="unsafe")
    if dtype.itemsize <= 8:  # numpy's float64 division, in Python (1 us less): the same bits
        return np.array(float(total) / count, dtype)  # 0-d, as the other reductions
    return np.asarray(dtype.type(total / np.intp(count)))


_numpy_sum = _np_reduce(np.sum)


def _sum(x, axes, keepdims):
    """np.sum of a float array without its Python layers (``np.add.reduce``, which np.sum
    calls with the same arguments: the same bits), about 1.5 us less a call."""
    if (type(x) is np.ndarray or isinstance(x, np.generic)) and x.dtype.kind == "f":
        return np.asarray(add_reduce(x, axes, keepdims))  # (a numpy scalar: a product of 0-d)
    return _numpy_sum(x, axes, keepdims)


register("Sum", _sum, _reduce_infer, grad=_sum_grad)
register("Mean", _mean, _reduce_infer, grad=_mean_grad)
def _extremum(fn, float_start, int_start):
    """max/min that give TF's identity on empty groups (-inf / +inf, or the integer bound)."""

    def reduce(x, axis, keepdims):
        if x.dtype.kind == "f":
            start = float_start
        elif x.dtype.kind in "iu":
            start = int_start(np.iinfo(x.dtype))
        else:
            return fn(x, axis=axis, keepdims=keepdims)
        return fn(x, axis=axis, keepdims=keepdims, initial=start)

    return reduce


register("Max", _np_reduce(_extremum(np.max, -np.inf, lambda i: i.min)), _reduce_infer,
         grad=_extremum_grad)
register("Min", _np_reduce(_extremum(np.min, np.inf, lambda i: i.max)), _reduce_infer,
         grad=_extremum_grad)
register("Prod", _np_reduce(np.prod), _reduce_infer, grad=_prod_grad)
register("All", _np_reduce(np.all), _reduce_infer)
register("Any", _np_reduce(np.any), _reduce_infer)


def _reduction(op_type, default_name):
    def fn(input_tensor, axis=None, keepdims=None, name=None, reduction_indices=None,
           keep_dims=None):
        x = convert_to_tensor(input_tensor)
        if axis is None:
            axis = reduction_indices
        keep = bool(keepdims if keepdims is not None else keep_dims)
        axes = normalize_axis(axis, x.shape.ndims)  # None: all axes of an unknown rank
        return apply(op_type, [x], name=name or default_name, axes=axes, keepdims=keep)

    return fn


reduce_sum = export("reduce_sum", "sum")(_reduction("Sum", "Sum"))
reduce_mean = export("reduce_mean", "mean")(_reduction("Mean", "Mean"))
reduce_max = export("reduce_max", "max")(_reduction("Max", "Max"))
reduce_min = export("reduce_min", "min")(_reduction("Min", "Min"))
reduce_prod = export("reduce_prod", "prod")(_reduction("Prod", "Prod"))
reduce_all = export("reduce_all")(_reduction("All", "All"))
reduce_any = export("reduce_any")(_reduction("Any", "Any"))


@export("reduce_logsumexp", "logsumexp")
def reduce_logsumexp(input_tensor, axis=None, keepdims=None, name="ReduceLogSumExp",
                     reduction_indices=None, keep_dims=None):
    """TF's composition: shift by the (finite) max, held constant, for stability."""
    x = convert_to_tensor(input_tensor)
    if axis is None:
        axis = reduction_indices
    keepdims = bool(keepdims if keepdims is not None else keep_dims)
    raw_max = reduce_max(x, axis=axis, keepdims=True)
    my_max = stop_gradient(where_v2(is_finite(raw_max), raw_max, zeros_like(raw_max)))
    result = log(reduce_sum(exp(x - my_max), axis=axis, keepdims=keepdims))
    if not keepdims:
        my_max = reshape_like(my_max, result)
    return result + my_max


def _arg_infer(inputs, axis, output_type):
    shape = inputs[0].shape
    dims = None if shape.dims is None else tuple(d for i, d in enumerate(shape.dims) if i != axis)
    return [(output_type, TensorShape(dims))]


register("ArgMax", lambda x, axis, output_type: np.argmax(x, axis).astype(output_type.np),
         _arg_infer)
register("ArgMin", lambda x, axis, output_type: np.argmin(x, axis).astype(output_type.np),
         _arg_infer)


def _arg(op_type):
    def fn(input, axis=None, name=None, dimension=None, output_type=_dtypes.int64):  # noqa: A002
        x = convert_to_tensor(input)
        if axis is None:
            axis = dimension
        axis = normalize_axis(0 if axis is None else axis, x.shape.ndims)[0]
        return apply(op_type, [x], name=name or op_type, axis=axis,
                     output_type=_dtypes.as_dtype(output_type))

    return fn


argmax = export("argmax")(_arg("ArgMax"))
argmin = export("argmin")(_arg("ArgMin"))
