"""Every registered op's gradient rule against central finite differences (float64).

The test is driven from the registry (``engine.framework.registry.OPS``): each op type must either have
sample constructions in ``CASES`` (scalar, vector, matrix and broadcast shapes, inputs kept away
from kinks and poles) or be listed in ``NON_DIFFERENTIABLE`` with a construction through which
``gradients`` must return None. An op registered later without an entry fails
``test_every_registered_op_has_a_gradient_check``.

A case's scalar objective is sum_k <w_k, output_k> with fixed random weights w_k, so one check
covers every output element. Each case also runs with placeholders of unknown dims (known rank)
unless marked static, which exercises the run-time-shape helper ops of the gradient rules.
Gradients of gradients are checked the same way for a selection of ops (``SECOND_ORDER``): the
gradient nodes are ordinary graph nodes, so their own gradients must match differences of them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest

import engine as tf
from engine.contrib.boosted_trees import ensemble, gbdt_ops
from engine.contrib.factorization.clustering_kernels import nearest_neighbors
from engine.contrib.tensor_forest.python import tensor_forest
from engine.framework.registry import OPS, apply
from engine.ops import boosted_trees_ops
from engine.ops.lookup_ops import categorical_identity, index_to_string, vocabulary_lookup
from engine.ops.rnn import rnn_states

# -- sample values -------------------------------------------------------------------------

_rng = np.random.default_rng(20240601)


def anything(*shape):
    return _rng.uniform(-2.0, 2.0, shape)


def away_from_zero(*shape):
    """Values with |v| in [0.3, 2]: clear of the kinks of abs, relu, sign and the pole of 1/x."""
    return _rng.uniform(0.3, 2.0, shape) * _rng.choice([-1.0, 1.0], shape)


def positive(*shape):
    return _rng.uniform(0.5, 2.0, shape)


def distinct(*shape):
    """Values at least 0.1 apart, so a max/min reduction has a single, stable winner."""
    n = int(np.prod(shape, dtype=int))
    return (_rng.permutation(n) * 0.25 - n * 0.1 + _rng.uniform(0, 0.05, n)).reshape(shape)


def separated_pair(sx, sy):
    """x and y whose broadcast elements differ by at least 0.2 (clear of maximum's tie)."""
    while True:
        x, y = anything(*sx), anything(*sy)
        if np.all(np.abs(np.subtract(x, y)) > 0.2):
            return x, y


def mod_pair(sx, sy):
    """x and y with x / y at least 0.1 from an integer (clear of floormod's jumps)."""
    while True:
        x, y = anything(*sx) * 3, away_from_zero(*sy) + np.sign(away_from_zero(*sy))
        frac = np.mod(np.divide(x, y), 1.0)
        if np.all((frac > 0.1) & (frac < 0.9)):
            return x, y


def normalized_rows(*shape):
    z = np.exp(anything(*shape))
    return z / z.sum(axis=-1, keepdims=True)


# -- the case table ------------------------------------------------------------------------


@dataclass
class Case:
    build: Callable  # (*float64 tensors) -> a tensor or a tuple of tensors
    args: tuple  # float64 arrays fed to the tensors
    label: str
    wrt: tuple | None = None  # indices of args to differentiate (default: all)
    eps: float = 1e-6
    tol: float = 1e-6
    dynamic: bool = True  # also run with placeholders of unknown dims


CASES: dict[str, list[Case]] = {}


def case(op_type, label, build, *args, **kw):
    CASES.setdefault(op_type, []).append(Case(build, tuple(np.asarray(a, np.float64) for a in args),
                                              label, **kw))


UNARY_SHAPES = [(), (3,), (2, 3)]
BINARY_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (2, 3)),
                 ((2, 1), (1, 3)), ((), (2, 3)), ((2, 3), ()), ((2, 1, 3), (4, 1))]


def _label(*shapes):
    return "x".join(str(list(s)).replace(" ", "") for s in shapes)


for _op, _fn, _x, _y in [
    ("AddV2", lambda x, y: x + y, anything, anything),
    ("Sub", lambda x, y: x - y, anything, anything),
    ("Mul", lambda x, y: x * y, anything, anything),
    ("RealDiv", lambda x, y: x / y, anything, away_from_zero),
    ("Pow", lambda x, y: x ** y, positive, anything),
]:
    for _sx, _sy in BINARY_SHAPES:
        case(_op, _label(_sx, _sy), _fn, _x(*_sx), _y(*_sy))

for _sx, _sy in BINARY_SHAPES:
    case("Maximum", _label(_sx, _sy), tf.maximum, *separated_pair(_sx, _sy))
    case("Minimum", _label(_sx, _sy), tf.minimum, *separated_pair(_sx, _sy))
    case("FloorMod", _label(_sx, _sy), tf.floormod, *mod_pair(_sx, _sy))

# Python scalars on either side adopt the tensor's dtype (float64 here).
case("AddV2", "scalar+x", lambda x: 1.5 + x, anything(2, 3))
case("Sub", "scalar-x", lambda x: 2.0 - x, anything(2, 3))
case("Mul", "x*int-scalar", lambda x: x * 3, anything(2, 3))
case("RealDiv", "scalar/x", lambda x: 3.0 / x, away_from_zero(2, 3))
case("Pow", "x**3", lambda x: x ** 3, anything(2, 3))
case("Pow", "x**-0.5", lambda x: x ** -0.5, positive(3))
case("Pow", "2**x", lambda x: 2.0 ** x, anything(3))
case("Pow", "negative-base-integer-exponent", lambda x: x ** 2.0, -positive(3))

for _op, _fn, _domain in [
    ("Neg", lambda x: -x, anything),
    ("Abs", tf.abs, away_from_zero),
    ("Sign", tf.sign, away_from_zero),
    ("Exp", tf.exp, anything),
    ("Log", tf.log, positive),
    ("Log1p", tf.log1p, positive),
    ("Expm1", tf.expm1, anything),
    ("Sqrt", tf.sqrt, positive),
    ("Rsqrt", tf.rsqrt, positive),
    ("Square", tf.square, anything),
    ("Reciprocal", tf.reciprocal, away_from_zero),
    ("Sin", tf.sin, anything),
    ("Cos", tf.cos, anything),
    ("Tanh", tf.tanh, anything),
    ("Sigmoid", tf.sigmoid, anything),
    ("Relu", tf.nn.relu, away_from_zero),
    ("Softplus", tf.nn.softplus, anything),
    ("Identity", tf.identity, anything),
]:
    for _s in UNARY_SHAPES:
        case(_op, _label(_s), _fn, _domain(*_s))

# relu's gradient op: linear in g; zero (as a tensor) in y away from y = 0.
for _s in UNARY_SHAPES:
    case("ReluGrad", _label(_s), lambda g, y: apply("ReluGrad", [g, y]), anything(*_s),
         away_from_zero(*_s))
# TF's fused gradient kernels of sqrt, rsqrt and 1/x, as functions of (y, dy).
for _op in ("SqrtGrad", "RsqrtGrad", "ReciprocalGrad"):
    for _s in UNARY_SHAPES:
        case(_op, _label(_s), lambda y, dy, o=_op: apply(o, [y, dy]), positive(*_s), anything(*_s))
case("Log1p", "near-minus-one", tf.log1p, -0.5 * positive(3) + 0.2)
case("PlaceholderWithDefault", "matrix", lambda x: tf.placeholder_with_default(x, [2, 3]),
     anything(2, 3), dynamic=False)
case("PlaceholderWithDefault", "unknown-batch",
     lambda x: tf.placeholder_with_default(x, [None, 3]), anything(2, 3))
# float64 -> float32 -> float64 loses precision: a linear objective with a large step is exact.
case("Cast", "f64-f32-f64", lambda x: tf.cast(tf.cast(x, tf.float32), tf.float64),
     anything(2, 3), eps=1e-2, tol=1e-5)
case("AddN", "three", lambda a, b, c: tf.add_n([a, b, c]), anything(2, 3), anything(2, 3),
     anything(2, 3))
case("AddN", "same-input-twice", lambda a: tf.add_n([a, a * a]), anything(3))
case("CheckNumerics", "matrix", lambda x: tf.check_numerics(x, "finite"), anything(2, 3))
case("IdentityN", "two", lambda a, b: tf.identity_n([a, b]), anything(2, 3), anything(3))
case("IdentityN", "first-of-two", lambda a, b: tf.identity_n([a * b, b], n=1)[0], anything(3),
     anything(3))

_COND = np.array([[True, False, True], [False, False, True]])
for _sx, _sy in [((2, 3), (2, 3)), ((3,), (2, 3)), ((), (2, 3)), ((2, 1), ())]:
    case("SelectV2", _label(_sx, _sy), lambda x, y: tf.where_v2(_COND, x, y),
         anything(*_sx), anything(*_sy))
case("Select", "tf1-row-select", lambda x, y: tf.where([True, False], x, y),
     anything(2, 3), anything(2, 3))
case("Select", "same-shape", lambda x, y: apply("Select", [tf.constant(_COND), x, y]),
     anything(2, 3), anything(2, 3))
case("Select", "vector",
     lambda x, y: apply("Select", [tf.constant([True, False, True]), x, y]), anything(3),
     anything(3))
case("Select", "broadcast-scalar", lambda x, y: apply("Select", [tf.constant(_COND), x, y]),
     anything(2, 3), anything())
# tf.where with ranks that rule out row selection builds the (fusable) SelectV2.
case("SelectV2", "tf1-where-same-shape", lambda x, y: tf.where(_COND, x, y), anything(2, 3),
     anything(2, 3))

for _ta in (False, True):
    for _tb in (False, True):
        _a = anything(*((3, 2) if _ta else (2, 3)))
        _b = anything(*((4, 3) if _tb else (3, 4)))
        case("MatMul", f"ta={_ta},tb={_tb}",
             lambda a, b, ta=_ta, tb=_tb: tf.matmul(a, b, transpose_a=ta, transpose_b=tb), _a, _b)
case("MatMul", "operator", lambda a, b: a @ b, anything(2, 3), anything(3, 1))
case("MatMul", "batched", tf.matmul, anything(2, 2, 3), anything(2, 3, 4))
case("MatMul", "broadcast-batch", tf.matmul, anything(2, 2, 3), anything(3, 4))
case("MatMul", "broadcast-batch-ta", lambda a, b: tf.matmul(a, b, transpose_a=True),
     anything(3, 2), anything(2, 3, 4))

# -- reductions ----------------------------------------------------------------------------

_REDUCTIONS = [("Sum", tf.reduce_sum, anything), ("Mean", tf.reduce_mean, anything),
               ("Max", tf.reduce_max, distinct), ("Min", tf.reduce_min, distinct),
               ("Prod", tf.reduce_prod, away_from_zero)]
for _op, _fn, _domain in _REDUCTIONS:
    case(_op, "scalar", _fn, _domain(1)[0] + np.zeros(()))
    case(_op, "vector", _fn, _domain(4))
    for _axis in (None, 0, 1, -1, [0, 1], []):
        for _keep in (False, True):
            case(_op, f"matrix-axis={_axis}-keep={_keep}",
                 lambda x, f=_fn, a=_axis, k=_keep: f(x, axis=a, keepdims=k), _domain(2, 3))
    case(_op, "3d-axis=(0,2)", lambda x, f=_fn: f(x, axis=[0, 2]), _domain(2, 3, 2))
# A product is linear in each input, so differences are exact at zeros too (TF's cumprod rule).
case("Prod", "one-zero", lambda x: tf.reduce_prod(x, axis=1), [[0.0, 2.0, 3.0], [1.5, 0.0, 0.0]])
case("Prod", "zeros-all-axes", tf.reduce_prod, [[0.0, 2.0], [-1.5, 0.5]])
case("ProdOthers", "axis1", lambda x: apply("ProdOthers", [x], axes=(1,)), away_from_zero(2, 3))
case("ProdOthers", "all-axes", lambda x: apply("ProdOthers", [x], axes=None), away_from_zero(2, 2))
# ProdOthers is linear in each input it depends on: differences are exact at zeros too.
case("ProdOthers", "zeros-0-1-2-3-per-row", lambda x: apply("ProdOthers", [x], axes=(1,)),
     [[1.5, -2.0, 0.5, 3.0], [0.0, -2.0, 0.5, 3.0], [0.0, -2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 3.0]])

# -- shapes, slicing, joining --------------------------------------------------------------

case("Reshape", "matrix-to-vector", lambda x: tf.reshape(x, [-1]), anything(2, 3), dynamic=False)
case("Reshape", "to-3d", lambda x: tf.reshape(x, [3, 1, 2]), anything(2, 3))
case("Reshape", "scalar-to-1x1", lambda x: tf.reshape(x, [1, 1]), anything())
case("DynamicReshape", "to-shape-of-a-tensor",
     lambda x: tf.reshape(x, tf.shape(tf.zeros([3, 2]))), anything(2, 3))
case("DynamicReshape", "stacked-with-minus-1", lambda x: tf.reshape(x, [tf.size(x), -1]),
     anything(2, 3))
case("Transpose", "matrix", tf.transpose, anything(2, 3))
case("Transpose", "3d-perm", lambda x: tf.transpose(x, [1, 2, 0]), anything(2, 3, 4))
case("ExpandDims", "axis0", lambda x: tf.expand_dims(x, 0), anything(3))
case("ExpandDims", "axis-1", lambda x: tf.expand_dims(x, -1), anything(2, 3))
case("ExpandDims", "scalar", lambda x: tf.expand_dims(x, 0), anything())
case("Squeeze", "all", tf.squeeze, anything(1, 3, 1), dynamic=False)
case("Squeeze", "axis", lambda x: tf.squeeze(x, axis=[-1]), anything(2, 1))
case("Squeeze", "to-scalar", lambda x: tf.squeeze(x, [0, 1]), anything(1, 1))
case("ConcatV2", "axis0", lambda a, b: tf.concat([a, b], 0), anything(2, 3), anything(1, 3))
case("ConcatV2", "axis-1", lambda a, b, c: tf.concat([a, b, c], -1), anything(2, 1),
     anything(2, 3), anything(2, 2))
case("ConcatV2", "vectors", lambda a, b: tf.concat([a, b], 0), anything(2), anything(3))
case("ConcatV2", "python-scalar-list", lambda a: tf.concat([a, [1.0, 2.0]], 0), anything(2))
case("Pack", "scalars", lambda a, b: tf.stack([a, b]), anything(), anything())
case("Pack", "axis0", lambda a, b: tf.stack([a, b]), anything(2, 3), anything(2, 3))
case("Pack", "axis-1", lambda a, b, c: tf.stack([a, b, c], axis=-1), anything(3), anything(3),
     anything(3))
case("Unpack", "axis0", lambda x: tuple(tf.unstack(x)), anything(3, 2), dynamic=False)
case("Unpack", "axis1", lambda x: tuple(tf.unstack(x, num=3, axis=1)), anything(2, 3))
case("Unpack", "one-used", lambda x: tf.unstack(x, num=3, axis=1)[1], anything(2, 3))
case("Split", "equal", lambda x: tuple(tf.split(x, 2, 0)), anything(4, 3))
case("Split", "sizes-rest", lambda x: tuple(tf.split(x, [1, -1], axis=1)), anything(2, 3))
case("Split", "one-used", lambda x: tf.split(x, 3, axis=-1)[2], anything(2, 3))
case("ReverseV2", "axis1", lambda x: tf.reverse(x, [1]), anything(2, 3))
case("ReverseV2", "both", lambda x: tf.reverse(x, [0, -1]), anything(2, 3))
case("ReverseSequence", "batch0", lambda x: tf.reverse_sequence(x, [2, 0, 3], seq_axis=1,
                                                                 batch_axis=0), anything(3, 3, 2))
case("ReverseSequence", "time-major", lambda x: tf.reverse_sequence(x, [1, 3], seq_axis=0,
                                                                     batch_axis=1), anything(3, 2))
for _index, _label_ in [(1, "int"), (-1, "negative-int"), ((slice(None), slice(1, None)), "[:,1:]"),
                        (slice(None, None, -1), "[::-1]"), ((Ellipsis, None, 0), "[...,None,0]"),
                        ((0, slice(None, None, 2)), "[0,::2]"), ((1, -2), "[1,-2]")]:
    case("StridedSlice", _label_, lambda x, i=_index: x[i], anything(2, 3))
case("StridedSlice", "vector[1:]", lambda x: x[1:], anything(4))
case("Tile", "matrix", lambda x: tf.tile(x, [2, 3]), anything(2, 3))
case("Tile", "vector", lambda x: tf.tile(x, [3]), anything(2))


def _runtime_ints(*values):
    """An int32 vector whose value the graph does not know when it is built."""
    return tf.placeholder_with_default(np.asarray(values, np.int32), [len(values)])


case("DynamicStridedSlice", "x[i]", lambda x: x[_runtime_ints(1)[0]], anything(2, 3))
case("DynamicStridedSlice", "x[:,i:]", lambda x: x[:, _runtime_ints(1)[0]:], anything(2, 3))
case("DynamicStridedSlice", "reversed-strided",
     lambda x: tf.strided_slice(x, _runtime_ints(1, 2), _runtime_ints(-3, -5),
                                _runtime_ints(-1, -2), end_mask=1), anything(2, 4))
case("DynamicStridedSlice", "[...,None,i]", lambda x: x[..., None, _runtime_ints(-1)[0]],
     anything(2, 3))
case("TileDynamic", "matrix", lambda x: tf.tile(x, _runtime_ints(2, 3)), anything(2, 3))
case("TileDynamic", "vector", lambda x: tf.tile(x, _runtime_ints(3)), anything(2))
case("BroadcastTo", "row", lambda x: tf.broadcast_to(x, [2, 3]), anything(3))
case("BroadcastTo", "column-runtime", lambda x: tf.broadcast_to(x, _runtime_ints(2, 2, 3)),
     anything(2, 1))
case("BroadcastTo", "scalar", lambda x: tf.broadcast_to(x, [2, 2]), anything())
case("GatherNd", "elements-repeated", lambda x: tf.gather_nd(x, [[0, 1], [2, 0], [0, 1]]),
     anything(3, 2))
case("GatherNd", "rows", lambda x: tf.gather_nd(x, [[[1], [0]]]), anything(3, 2, 2))
case("ScatterNd", "repeated", lambda u: tf.scatter_nd([[1, 0], [0, 2], [1, 0]], u, [2, 3]),
     anything(3))
case("ScatterNd", "rows", lambda u: tf.scatter_nd([[3], [1]], u, [4, 2]), anything(2, 2))
for _exclusive in (False, True):
    for _reverse in (False, True):
        _flags = f"exclusive={_exclusive},reverse={_reverse}"
        case("Cumsum", _flags, lambda x, e=_exclusive, r=_reverse: tf.cumsum(x, 1, e, r),
             anything(2, 3))
        case("Cumprod", _flags, lambda x, e=_exclusive, r=_reverse: tf.cumprod(x, 0, e, r),
             away_from_zero(3, 2))
case("Cumsum", "vector", lambda x: tf.cumsum(x), anything(4))
case("Einsum", "matmul", lambda a, b: tf.einsum("ij,jk->ik", a, b), anything(2, 3), anything(3, 2))
case("Einsum", "batch-outer", lambda a, b: tf.einsum("bi,bj->bij", a, b), anything(2, 3),
     anything(2, 2))
case("Einsum", "summed-alone", lambda a, b: tf.einsum("ij,k->ik", a, b), anything(2, 3),
     anything(2))
case("Einsum", "transpose-sum", lambda a: tf.einsum("ijk->kj", a), anything(2, 3, 2))
case("Einsum", "three", lambda a, b, c: tf.einsum("ij,jk,k", a, b, c), anything(2, 3),
     anything(3, 2), anything(2))
case("ChannelWindowSum", "radius1",
     lambda x: apply("ChannelWindowSum", [x], radius=1), anything(1, 2, 1, 4))
case("ChannelWindowSum", "wide", lambda x: tf.nn.lrn(x, 5, 1.0, 0.3, 0.75), anything(2, 1, 2, 3))
case("SliceAt", "tensor-begin",
     lambda x: tf.slice(x, tf.placeholder_with_default([1, 0], [2]), [1, -1]), anything(3, 2))
case("Resize", "bilinear-up", lambda x: tf.image.resize_bilinear(x, [5, 3]), anything(2, 3, 2, 2))
case("Resize", "bilinear-down-corners",
     lambda x: tf.image.resize_bilinear(x, [2, 2], align_corners=True), anything(1, 3, 4, 1))
case("Resize", "bicubic", lambda x: tf.image.resize_bicubic(x, [4, 5]), anything(1, 3, 4, 1))
case("Resize", "area-down", lambda x: tf.image.resize_area(x, [2, 3]), anything(1, 3, 4, 2))
case("Resize", "nearest", lambda x: tf.image.resize_nearest_neighbor(x, [4, 3]),
     anything(1, 3, 2, 2))
case("ResizeGrad", "bilinear",
     lambda g: apply("ResizeGrad", [g, tf.zeros([1, 3, 2, 1], tf.float64)], size=(5, 3),
                     method="bilinear", align_corners=False, dtype=tf.float64),
     anything(1, 5, 3, 1))
for _op, _fn, _x in [("Tan", tf.tan, lambda *s: anything(*s) / 2),
                     ("Asin", tf.asin, lambda *s: anything(*s) / 3),
                     ("Acos", tf.acos, lambda *s: anything(*s) / 3), ("Atan", tf.atan, anything),
                     ("Sinh", tf.sinh, anything), ("Cosh", tf.cosh, anything)]:
    for _s in UNARY_SHAPES:
        case(_op, _label(_s), _fn, _x(*_s))
for _sx, _sy in BINARY_SHAPES:
    case("Atan2", _label(_sx, _sy), tf.atan2, anything(*_sx), away_from_zero(*_sy))
case("MatrixInverse", "3x3", tf.matrix_inverse, np.eye(3) * 2 + anything(3, 3) / 4)
case("MatrixDeterminant", "3x3", tf.matrix_determinant, np.eye(3) * 2 + anything(3, 3) / 4)
# the decompositions read the lower triangle: symmetric inputs, the entries below the diagonal
# differentiated (the gradient of the whole matrix folds onto them as TF's does)
case("Cholesky", "3x3", lambda a: tf.cholesky(tf.matrix_transpose(a) + a),
     np.eye(3) * 2 + anything(3, 3) / 4, dynamic=False)
case("SelfAdjointEigV2", "3x3", lambda a: tf.self_adjoint_eig(tf.matrix_transpose(a) + a)[0],
     np.eye(3) * 2 + anything(3, 3) / 4, dynamic=False)
case("MatrixSolve", "3x3-3x2", tf.matrix_solve, np.eye(3) * 2 + anything(3, 3) / 4,
     anything(3, 2), dynamic=False)
case("MatrixSolve", "adjoint", lambda a, b: tf.matrix_solve(a, b, adjoint=True),
     np.eye(3) * 2 + anything(3, 3) / 4, anything(3, 2), dynamic=False)
case("Cross", "2x3", tf.cross, anything(2, 3), anything(2, 3))
case("GatherV2", "repeated-rows", lambda x: tf.gather(x, [0, 2, 0]), anything(3, 2))
case("GatherV2", "vector", lambda x: tf.gather(x, [[1, 1], [0, 2]]), anything(3))
case("GatherV2", "matrix-ids", lambda x: tf.gather(x, [[1, 1], [0, 2]]), anything(3, 2))
case("MergeLeadingDims", "3d", lambda x: apply("MergeLeadingDims", [x], n=2), anything(2, 3, 2))
case("UnsortedSegmentSum", "repeated-and-dropped",
     lambda x: tf.unsorted_segment_sum(x, [2, 0, -1, 2], 4), anything(4, 2))
case("UnsortedSegmentSum", "matrix-ids", lambda x: tf.unsorted_segment_sum(x, [[1, 0], [1, 1]], 3),
     anything(2, 2, 3))
case("Slice", "rest-and-middle", lambda x: tf.slice(x, [1, 0], [-1, 2]), anything(3, 4))
# boxes whose sampling positions stay clear of pixel centres (bilinear's kinks) and of the
# image's edge, except the third box's samples outside it (extrapolated)
_BOXES = [[0.1, 0.2, 0.7, 0.95], [0.8, 0.15, 0.3, 0.6], [0.55, -0.4, 1.3, 0.35]]
for _method in ("bilinear", "nearest"):
    case("CropAndResize", _method,
         lambda im, bx, m=_method: tf.image.crop_and_resize(im, bx, [1, 0, 1], [2, 3], method=m,
                                                             extrapolation_value=0.5),
         anything(2, 3, 4, 2), _BOXES, wrt=(0, 1) if _method == "bilinear" else (0,))
case("CropAndResize", "one-pixel-crop",
     lambda im, bx: tf.image.crop_and_resize(im, bx, [0, 1, 1], [1, 1]), anything(2, 3, 4, 1),
     _BOXES)
case("CropAndResizeGradImage", "bilinear",
     lambda g: apply("CropAndResizeGradImage", [g, tf.constant(_BOXES, tf.float64),
                                                tf.constant([1, 0, 1]),
                                                tf.zeros([2, 3, 4, 2], tf.float64)],
                     method="bilinear"), anything(3, 2, 3, 2))
for _flags in ({}, {"ctc_merge_repeated": False}):
    case("CTCLoss", "no-merge" if _flags else "merge",
         lambda x, f=_flags: tf.nn.ctc_loss(
             tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 1, 0]), [2, 2]), x,
             [4, 3], **f), anything(4, 2, 3))
case("CheckChannels", "rgb-of-unknown-rank",
     lambda x: tf.image.rgb_to_hsv(tf.placeholder_with_default(x, None)), positive(2, 3) / 2)
case("SliceSized", "size-a-tensor",
     lambda x: tf.slice(x, [1, 0], tf.constant([2, 3]) + tf.cast(tf.reduce_sum(x) * 0, tf.int32)),
     anything(3, 4))
case("SlicePlaced", "placed-back",
     lambda g, x: apply("SlicePlaced", [g, x, tf.constant([1, 0])]), anything(2, 2),
     anything(3, 4), wrt=(0,))
case("SliceRegionGrad", "placed-back",
     lambda g, x: apply("SliceRegionGrad", [g, x], begin=(1, 0), size=(2, 2)),
     anything(2, 2), anything(3, 4), wrt=(0,))
for _mode in ("CONSTANT", "REFLECT", "SYMMETRIC"):
    case("Pad", _mode.lower(), lambda x, m=_mode: tf.pad(x, [[1, 2], [2, 1]], m),
         anything(3, 4))
    case("PadGrad", _mode.lower(),
         lambda g, x, m=_mode: apply("PadGrad", [g, x], paddings=((1, 2), (2, 1)), mode=m,
                                     constant_values=0), anything(6, 7), anything(3, 4),
         wrt=(0,))
case("TopKV2", "rows", lambda x: tf.nn.top_k(x, 2)[0], anything(3, 4))
case("Print", "passes-its-input", lambda x, d: tf.Print(x, [d], "x"), anything(2, 3), anything(2),
     wrt=(0,))
case("SparseToDense", "values-and-default",
     lambda v, d: tf.sparse_to_dense([[0, 1], [2, 0]], [3, 2], v, tf.reshape(d, [])),
     anything(2), anything(1))
case("SparseToDense", "scalar-value-1d",
     lambda v, d: tf.sparse_to_dense([1, 3], [4], tf.reshape(v, []), tf.reshape(d, [])),
     anything(1), anything(1))
_SP_A = [[0, 2], [1, 0], [1, 1]]  # row-major
_SP_C = [[1, 1], [0, 2], [0, 0]]  # not: sparse_add walks it as it is (TF's merge)
case("SparseReorder", "unordered", lambda v: tf.sparse_reorder(tf.SparseTensor(_SP_C, v, [2, 3])).values,
     anything(3))
case("SparseReorderGrad", "unordered",
     lambda g: apply("SparseReorderGrad", [g, tf.constant(_SP_C, tf.int64)]), anything(3))
case("SparseAdd", "merge-walk-thresh",
     lambda a, c: tf.sparse_add(tf.SparseTensor(_SP_A, a, [2, 3]), tf.SparseTensor(_SP_C, c, [2, 3]),
                                0.1).values, away_from_zero(3), away_from_zero(3))
case("SparseReduceSum", "axis0",
     lambda v: tf.sparse_reduce_sum(tf.SparseTensor(_SP_C, v, [2, 3]), 0), anything(3))
case("SparseReduceSum", "all-keepdims",
     lambda v: tf.sparse_reduce_sum(tf.SparseTensor(_SP_A, v, [2, 3]), keepdims=True), anything(3))
case("SparseReduceSumGrad", "axis1",
     lambda g: apply("SparseReduceSumGrad", [g, tf.constant(_SP_C, tf.int64),
                                             tf.constant([2, 3], tf.int64)], axes=(1,),
                     keepdims=False), anything(2))
case("GatherDropNegatives", "dropped",
     lambda x: apply("GatherDropNegatives", [x, tf.constant([1, -1, 1, 0])]), anything(3, 2))
case("DynamicPartition", "three-parts",
     lambda x: tuple(tf.dynamic_partition(x, [2, 0, 2, 1], 3)), anything(4, 2))
case("DynamicPartitionGrad", "three-parts",
     lambda a, b: apply("DynamicPartitionGrad", [tf.constant(np.zeros((3, 2))),
                                                 tf.constant([1, 0, 1]), a, b]),
     anything(1, 2), anything(2, 2))
case("DynamicStitch", "two-parts",
     lambda a, b: tf.dynamic_stitch([tf.constant([0, 2]), tf.constant([[1], [3]])], [a, b]),
     anything(2, 3), anything(2, 1, 3))
for _combiner in ("sum", "mean", "sqrtn"):
    case("SparseSegmentReduction", _combiner,
         lambda x, c=_combiner: tf.sparse_segment_sum(x, [0, 2, 2, 1], [0, 0, 2, 2])
         if c == "sum" else (tf.sparse_segment_mean if c == "mean" else tf.sparse_segment_sqrt_n)(
             x, [0, 2, 2, 1], [0, 0, 2, 2]), anything(3, 2))
    case("SparseSegmentReductionGrad", _combiner,
         lambda g, c=_combiner: apply("SparseSegmentReductionGrad",
                                      [g, tf.constant(np.zeros((3, 2))), tf.constant([0, 2, 2, 1]),
                                       tf.constant([0, 0, 2, 2])], combiner=c), anything(3, 2))

for _kind in ("sum", "mean", "max", "min"):
    case("SegmentReduction", _kind,
         lambda x, k=_kind: getattr(tf, f"segment_{k}")(x, [0, 0, 2, 2, 2]), distinct(5, 2))
for _kind in ("max", "min"):
    case("UnsortedSegmentReduction", _kind,
         lambda x, k=_kind: getattr(tf, f"unsorted_segment_{k}")(x, [2, -1, 2, 0, 1, 2], 3),
         distinct(6, 2))
case("UnsortedSegmentReduction", "max-matrix-ids",
     lambda x: tf.unsorted_segment_max(x, [[1, 0], [1, 1]], 2), distinct(2, 2, 3))
# prod: a segment with one zero (its row gets the product of the others) and one with two
_PROD = [[1.5, 0.0], [-0.7, 2.0], [0.0, 0.0], [1.2, -0.5], [0.0, 0.8]]
case("SegmentReduction", "prod-with-zeros", lambda x: tf.segment_prod(x, [0, 0, 1, 1, 1]), _PROD)
case("UnsortedSegmentReduction", "prod-with-zeros",
     lambda x: tf.unsorted_segment_prod(x, [1, 0, 1, -1, 1], 3), _PROD)

# Operands of unknown rank (placeholder_with_default(x, None)): rules decided when the op runs.


def _unknown_rank(x):
    return tf.placeholder_with_default(x, None)


case("Transpose", "unknown-rank", lambda x: tf.transpose(_unknown_rank(x)), anything(2, 3))
case("Squeeze", "unknown-rank", lambda x: tf.squeeze(_unknown_rank(x)), anything(1, 3))
case("Select", "row-select-unknown-rank",
     lambda x, y: tf.where([False, True], _unknown_rank(x), y), anything(2, 3), anything(2, 3))
case("Sum", "unknown-rank", lambda x: tf.reduce_sum(_unknown_rank(x)), anything(2, 3))
case("Mean", "unknown-rank-axis-1",
     lambda x: tf.reduce_mean(_unknown_rank(x), axis=-1, keepdims=True), anything(2, 3))
case("Max", "unknown-rank", lambda x: tf.reduce_max(_unknown_rank(x)), distinct(2, 3))
case("Prod", "unknown-rank-axis-1", lambda x: tf.reduce_prod(_unknown_rank(x), axis=-1),
     away_from_zero(2, 3))
case("ConcatV2", "unknown-rank", lambda a, b: tf.concat([_unknown_rank(a), b], -1),
     anything(2, 1), anything(2, 2))
case("SoftmaxCrossEntropyWithLogits", "labels-unknown-rank",
     lambda lo, la: _xent(labels=_unknown_rank(la), logits=lo), anything(2, 3),
     normalized_rows(2, 3))

# The helper ops that gradient rules emit, built directly (their second input fixes a shape).
_like23 = np.zeros((2, 3))
case("SumToShapeOf", "to-row", lambda g: apply("SumToShapeOf", [g, tf.constant(np.zeros((1, 3)))]),
     anything(2, 3))
case("SumToShapeOf", "to-scalar", lambda g: apply("SumToShapeOf", [g, tf.constant(0.0, tf.float64)]),
     anything(2, 3))
case("BroadcastLike", "row", lambda g: apply("BroadcastLike", [g, tf.constant(_like23)]),
     anything(1, 3))
case("BroadcastLike", "scalar", lambda g: apply("BroadcastLike", [g, tf.constant(_like23)]),
     anything())
case("ReshapeLike", "matrix", lambda g: apply("ReshapeLike", [g, tf.constant(_like23)]),
     anything(6))
case("BroadcastReduced", "axis1",
     lambda g: apply("BroadcastReduced", [g, tf.constant(_like23)], axes=(1,), keepdims=False,
                     mean=False), anything(2))
case("BroadcastReduced", "mean-keep",
     lambda g: apply("BroadcastReduced", [g, tf.constant(_like23)], axes=(0,), keepdims=True,
                     mean=True), anything(1, 3))
case("ConcatGradPart", "middle",
     lambda g: apply("ConcatGradPart", [g, tf.constant(np.zeros((2, 1))), tf.constant(_like23),
                                        tf.constant(np.zeros((2, 2)))], index=1, axis=1),
     anything(2, 6))
case("SliceGrad", "[:,1:]",
     lambda g: apply("SliceGrad", [g, tf.constant(_like23)], index=(slice(None), slice(1, None))),
     anything(2, 2))
case("SliceAtGrad", "matrix", lambda g: apply("SliceAtGrad", [g, tf.constant(_like23),
                                                               tf.constant([1, 1])], size=(1, 2)),
     anything(1, 2))
case("TileGrad", "matrix",
     lambda g: apply("TileGrad", [g, tf.constant(_like23)], multiples=(2, 1)), anything(4, 3))
case("TileDynamicGrad", "matrix",
     lambda g: apply("TileDynamicGrad", [g, tf.constant(_like23), _runtime_ints(2, 1)]),
     anything(4, 3))
case("DynamicStridedSliceGrad", "[:,1:]",
     lambda g: apply("DynamicStridedSliceGrad",
                     [g, tf.constant(_like23), _runtime_ints(0, 1), _runtime_ints(0, 0),
                      _runtime_ints(1, 1)], begin_mask=1, end_mask=3, ellipsis_mask=0,
                     new_axis_mask=0, shrink_axis_mask=0), anything(2, 2))

# -- softmax family and losses -------------------------------------------------------------

for _op, _fn in [("Softmax", tf.nn.softmax), ("LogSoftmax", tf.nn.log_softmax)]:
    case(_op, "vector", _fn, anything(4))
    case(_op, "matrix", _fn, anything(2, 3))
    case(_op, "axis0", lambda x, f=_fn: f(x, axis=0), anything(2, 3))
    case(_op, "3d-axis1", lambda x, f=_fn: f(x, axis=1), anything(2, 3, 2))

case("Fill", "matrix", lambda v: tf.fill([2, 3], v), anything())
case("Fill", "dims-tensor", lambda v: tf.fill(tf.shape(tf.zeros([3, 2])), v) * v, anything())
for _shape in [(), (4,), (2, 3)]:
    case("L2Loss", f"shape{_shape}", tf.nn.l2_loss, anything(*_shape))
case("L2Loss", "transposed", lambda x: tf.nn.l2_loss(tf.transpose(x)), anything(2, 3))
case("GlobalNorm", "three", lambda x, y, z: tf.global_norm([x, y, z]), anything(2, 3),
     anything(4), anything())

_xent = tf.nn.softmax_cross_entropy_with_logits_v2
case("SoftmaxCrossEntropyWithLogits", "loss", lambda lo, la: _xent(labels=la, logits=lo),
     anything(2, 3), normalized_rows(2, 3))
case("SoftmaxCrossEntropyWithLogits", "loss-3d-axis1",
     lambda lo, la: _xent(labels=la, logits=lo, axis=1),
     anything(2, 3, 2), np.moveaxis(normalized_rows(2, 2, 3), -1, 1))
case("SoftmaxCrossEntropyWithLogits", "labels-broadcast",
     lambda lo, la: _xent(labels=la, logits=lo), anything(2, 3), normalized_rows(3))
case("SoftmaxCrossEntropyWithLogits", "v1-logits-only",
     lambda lo: tf.nn.softmax_cross_entropy_with_logits(labels=normalized_rows(2, 3), logits=lo),
     anything(2, 3))
# backprop (output 1) is differentiated w.r.t. logits only: TF's rule ignores its labels path.
case("SoftmaxCrossEntropyWithLogits", "backprop-output",
     lambda lo: apply("SoftmaxCrossEntropyWithLogits",
                      [lo, tf.constant(normalized_rows(2, 3))])[1], anything(2, 3))
_sparse = tf.nn.sparse_softmax_cross_entropy_with_logits
case("SparseSoftmaxCrossEntropyWithLogits", "loss", lambda lo: _sparse(labels=[2, 0], logits=lo),
     anything(2, 3))
case("SparseSoftmaxCrossEntropyWithLogits", "vector", lambda lo: _sparse(labels=1, logits=lo),
     anything(4))
case("SparseSoftmaxCrossEntropyWithLogits", "both-outputs",
     lambda lo: apply("SparseSoftmaxCrossEntropyWithLogits", [lo, tf.constant([1, 1])]),
     anything(2, 3))

# -- rnn (tanh and LSTM cells, with and without an initial state) --------------------------
# static shapes only: the rnn op needs a kernel of known shape.

_T, _B, _F, _H = 3, 2, 2, 2
_static = {"dynamic": False}
case("Rnn", "tanh", lambda x, k, b: rnn_states(x, k, b, "tanh")[0],
     anything(_T, _B, _F) / 2, anything(_F + _H, _H) / 2, anything(_H) / 2, **_static)
case("Rnn", "tanh-h0", lambda x, k, b, h0: rnn_states(x, k, b, "tanh", h0=h0)[0],
     anything(_T, _B, _F) / 2, anything(_F + _H, _H) / 2, anything(_H) / 2,
     anything(_B, _H) / 2, **_static)
case("Rnn", "lstm", lambda x, k, b: rnn_states(x, k, b, "lstm", forget_bias=1.0),
     anything(_T, _B, _F) / 2, anything(_F + _H, 4 * _H) / 2, anything(4 * _H) / 2, **_static)
case("Rnn", "lstm-h0-c0",
     lambda x, k, b, h0, c0: rnn_states(x, k, b, "lstm", forget_bias=0.5, h0=h0, c0=c0),
     anything(_T, _B, _F) / 2, anything(_F + _H, 4 * _H) / 2, anything(4 * _H) / 2,
     anything(_B, _H) / 2, anything(_B, _H) / 2, **_static)


# -- convolution and pooling (NHWC) --------------------------------------------------------
# Small images: every element is a finite difference. Explicit padding and a dilation as well.

_conv = tf.nn.conv2d
for _pad, _st, _dl in [("SAME", 2, 1), ("VALID", 1, 1), ("SAME", 1, 2),
                       ([[0, 0], [1, 0], [0, 2], [0, 0]], [1, 2, 1, 1], 1)]:
    case("Conv2D", f"{_pad}-s{_st}-d{_dl}",
         lambda x, k, p=_pad, s=_st, d=_dl: _conv(x, k, strides=s, padding=p, dilations=d),
         anything(2, 4, 3, 2), anything(2, 2, 2, 3))
case("Conv2D", "conv1d", lambda x, k: tf.nn.conv1d(x, k, 2, "SAME"), anything(2, 5, 2),
     anything(3, 2, 2))
case("Conv2DBackpropInput", "transpose-SAME-s2",
     lambda y, k: tf.nn.conv2d_transpose(y, k, [2, 4, 3, 2], strides=2, padding="SAME"),
     anything(2, 2, 2, 3), anything(2, 2, 2, 3), dynamic=False)
case("Conv2DBackpropInput", "transpose-VALID-d2",
     lambda y, k: tf.nn.conv2d_transpose(y, k, [1, 4, 4, 2], strides=1, padding="VALID",
                                          dilations=2), anything(1, 2, 2, 3), anything(2, 2, 2, 3),
     dynamic=False)
case("Conv2DBackpropFilter", "SAME-s2",
     lambda x, dy: apply("Conv2DBackpropFilter", [x, tf.constant([2, 2, 2, 3]), dy],
                         kind="Conv2D", strides=(2, 2), padding="SAME", dilations=(1, 1)),
     anything(2, 4, 3, 2), anything(2, 2, 2, 3))
def _switched_bn(training, axes=(0,), unbiased=False):
    """Every output of the fused batch norm (y, mean, variance, x_hat, r) from x, scale,
    offset, the moving mean and variance."""
    return lambda x, s, o, m, v: tuple(apply(
        "SwitchedBatchNorm", [x, s, o, m, v, tf.constant(training)], axes=axes, epsilon=1e-3,
        unbiased=unbiased))


for _train in (True, False):
    case("SwitchedBatchNorm", f"2d-training-{_train}", _switched_bn(_train), anything(5, 3),
         anything(3), anything(3), anything(3), positive(3))
case("SwitchedBatchNorm", "nhwc-unbiased", _switched_bn(True, (0, 1, 2), True),
     anything(2, 2, 3, 2), anything(2), anything(2), anything(2), positive(2))
case("SwitchedBatchNorm", "nchw-inference", _switched_bn(False, (0, 2, 3)),
     anything(2, 2, 3, 2), anything(2), anything(2), anything(2), positive(2))
case("SwitchedBatchNorm", "nchw-training", _switched_bn(True, (0, 2, 3)),
     anything(2, 2, 3, 2), anything(2), anything(2), anything(2), positive(2))
for _train in (True, False):
    case("SwitchedBatchNormGrad", f"nchw-training-{_train}", lambda g, xh, r, s, t=_train: tuple(
        apply("SwitchedBatchNormGrad", [g, xh, r, s, tf.constant(t)], axes=(0, 2, 3))),
        anything(2, 2, 3, 2), anything(2, 2, 3, 2), positive(2), anything(2))
case("SwitchedBatchNorm", "y-only", lambda x, s, o, m, v: _switched_bn(True)(x, s, o, m, v)[0],
     anything(4, 3), anything(3), anything(3), anything(3), positive(3))
for _pad, _st, _dl in [("SAME", 2, 1), ("VALID", 1, 2)]:
    case("DepthwiseConv2dNative", f"{_pad}-s{_st}-d{_dl}",
         lambda x, k, p=_pad, s=_st, d=_dl: tf.nn.depthwise_conv2d(x, k, [1, s, s, 1], p,
                                                                   rate=[d, d]),
         anything(2, 4, 3, 2), anything(2, 2, 2, 2))
case("DepthwiseConv2dNativeBackpropInput", "SAME-s2",
     lambda dy, k: apply("DepthwiseConv2dNativeBackpropInput", [tf.constant([2, 4, 3, 2]), k, dy],
                         kind="DepthwiseConv2dNative", strides=(2, 2), padding="SAME",
                         dilations=(1, 1)),
     anything(2, 2, 2, 4), anything(2, 2, 2, 2))
case("DepthwiseConv2dNativeBackpropFilter", "VALID",
     lambda x, dy: apply("DepthwiseConv2dNativeBackpropFilter", [x, tf.constant([2, 2, 2, 2]), dy],
                         kind="DepthwiseConv2dNative", strides=(1, 1), padding="VALID",
                         dilations=(1, 1)),
     anything(2, 4, 3, 2), anything(2, 3, 2, 4))
for _op, _fn, _domain in [("MaxPool", tf.nn.max_pool, distinct), ("AvgPool", tf.nn.avg_pool,
                                                                   anything)]:
    for _k, _st, _pad in [(2, 2, "VALID"), (3, 2, "SAME"), ([1, 2, 3, 1], 1, "SAME")]:
        case(_op, f"k{_k}-s{_st}-{_pad}", lambda x, f=_fn, k=_k, s=_st, p=_pad: f(x, k, s, p),
             _domain(2, 4, 5, 2))


def _max_pool_grad(op_type):
    """MaxPoolGrad(x, max_pool(x), g) or MaxPoolGradGrad: the pool's output computed from x, so
    a perturbed x keeps a consistent maximum (the routing is locally constant)."""
    def build(x, g):
        y = tf.nn.max_pool(x, 3, 2, "SAME")
        return apply(op_type, [x, y, g], ksize=(3, 3), strides=(2, 2), padding="SAME")
    return build


case("MaxPoolGrad", "k3-s2-SAME", _max_pool_grad("MaxPoolGrad"), distinct(2, 4, 5, 2),
     anything(2, 2, 3, 2))
case("MaxPoolGradGrad", "k3-s2-SAME", _max_pool_grad("MaxPoolGradGrad"), distinct(2, 4, 5, 2),
     anything(2, 4, 5, 2))
case("AvgPoolGrad", "k3-s2-SAME",
     lambda g: apply("AvgPoolGrad", [tf.constant([2, 4, 5, 2]), g], ksize=(3, 3), strides=(2, 2),
                     padding="SAME"), anything(2, 2, 3, 2))


# Control flow: the taken branch's gradient (both ways), nested results, a loop's BPTT.
case("If", "true-branch", lambda x, y: tf.cond(tf.reduce_sum(x) > 0, lambda: x * y,
                                               lambda: tf.sin(x) + y), positive(2, 3),
     anything(2, 3))
case("If", "false-branch", lambda x, y: tf.cond(tf.reduce_sum(x) > 0, lambda: x * y,
                                                lambda: tf.sin(x) * y), -positive(2, 3),
     anything(3))
case("If", "nested-results", lambda x: (lambda r: (r[0], r[1]["a"]))(tf.cond(
    tf.reduce_sum(x) < 0, lambda: (x * x, {"a": tf.exp(x)}), lambda: (tf.tanh(x), {"a": x}))),
     anything(2, 3))
case("While", "tanh-recurrence", lambda x, y: tf.while_loop(
    lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(h * x + y)), (0, x))[1],
     anything(2, 3), anything(3))
case("While", "map_fn", lambda x: tf.map_fn(lambda r: tf.sin(r) * r, x), anything(3, 2))
case("While", "scan-reverse", lambda x: tf.scan(lambda a, r: a * r + 1.0, x, reverse=True),
     anything(3, 2))
case("While", "foldl-initializer", lambda x, y: tf.foldl(lambda a, r: tf.tanh(a + r), x, y),
     anything(3, 2), anything(2))


def _rows(x):
    return tf.TensorArray(tf.float64, size=3).unstack(x)


case("TensorArrayStack", "unstack-stack", lambda x: _rows(x).stack(), anything(3, 2))
case("TensorArrayUnstack", "rows-read", lambda x: _rows(x).read(1) * _rows(x).read(2),
     anything(3, 2))
case("TensorArrayWrite", "two-rows",
     lambda x, v: tf.TensorArray(tf.float64, size=2).write(0, x).write(1, v * x).stack(),
     anything(2), anything(2))
case("TensorArrayRead", "two-rows", lambda x: _rows(x).read(2) * _rows(x).read(0),
     anything(3, 2))
case("TensorArrayScatter", "two-and-two",
     lambda x, v: tf.TensorArray(tf.float64, size=4).scatter([2, 0], v).scatter([1, 3], x).stack(),
     anything(2, 2), anything(2, 2))
case("TensorArraySplit", "pairs-of-rows",
     lambda x: tf.TensorArray(tf.float64, size=2).split(x, [2, 2]).stack(), anything(4, 2))
case("TensorArrayConcat", "rows", lambda x: _rows(x).concat(), anything(3, 2))
case("TensorArrayWriteGrad", "row-1",
     lambda g: apply("TensorArrayWriteGrad", [g, tf.constant(1)]), anything(3, 2))
case("TensorArrayReadGrad", "row-1",
     lambda g: apply("TensorArrayReadGrad", [tf.constant([3, 2], tf.int64), tf.constant(1), g]),
     anything(2))

# -- ops without gradients -----------------------------------------------------------------
# Each builds the op from a float64 (2, 3) tensor x; gradients() through it must be None.


def _variable_from(x):
    return tf.Variable(np.zeros((2, 3)), dtype=tf.float64)


def _size_after(x, op):
    """A tensor (x's size, which carries no gradient) made after ``op``."""
    return tf.size(tf.tuple([x], control_inputs=[op])[0])


def _tree_op(build):
    """``build(x, tree graph, tree resource)`` on a one-tree forest over 3 features."""
    def make(x):
        forest = tensor_forest.RandomForestGraphs(tensor_forest.ForestHParams(
            num_classes=2, num_features=3, num_trees=1).fill())
        return build(x, forest.trees[0], tf.get_collection(tf.GraphKeys.RESOURCES)[0])
    return make


NON_DIFFERENTIABLE: dict[str, Callable] = {
    "Const": lambda x: tf.constant(np.ones(2)),
    "Placeholder": lambda x: tf.placeholder(tf.float64, [2]),
    "NoOp": lambda x: (tf.no_op(), tf.constant(0.0))[1],
    "VariableV2": _variable_from,
    "RandomInit": lambda x: tf.random_normal([2], dtype=tf.float64),
    "DropoutMask": lambda x: tf.nn.dropout(x, rate=0.5).op.inputs[1],
    "IsVariableInitialized": lambda x: apply("IsVariableInitialized", [], ref=_variable_from(x)),
    "VariableInitializedOr": lambda x: apply("VariableInitializedOr", [x], ref=_variable_from(x)),
    "StopGradient": tf.stop_gradient,
    "ZerosLike": tf.zeros_like,
    "OnesLike": tf.ones_like,
    "Floor": tf.floor,
    "Ceil": tf.ceil,
    "Round": tf.round,
    "FloorDiv": lambda x: x // 0.7,
    "TruncateDiv": lambda x: tf.truncatediv(x, 0.7),
    "TruncateMod": lambda x: tf.truncatemod(x, 0.7),
    "IsFinite": tf.is_finite,
    "IsNan": tf.is_nan,
    "IsInf": tf.is_inf,
    "AllFinite": lambda x: apply("AllFinite", [x, x * 2]),
    "LogicalNot": lambda x: tf.logical_not(x > 0),
    "Less": lambda x: x < 0.5,
    "LessEqual": lambda x: x <= 0.5,
    "Greater": lambda x: x > 0.5,
    "GreaterEqual": lambda x: x >= 0.5,
    "Equal": lambda x: tf.equal(x, 0.5),
    "NotEqual": lambda x: tf.not_equal(x, 0.5),
    "LogicalAnd": lambda x: (x > 0) & (x < 1),
    "LogicalOr": lambda x: (x > 0) | (x < -1),
    "All": lambda x: tf.reduce_all(x > 0),
    "Any": lambda x: tf.reduce_any(x > 0, axis=1),
    "ArgMax": lambda x: tf.argmax(x, 1),
    "ArgMin": lambda x: tf.argmin(x, 0),
    "OneHot": lambda x: tf.one_hot(tf.argmax(x, 1), 3, dtype=tf.float64),
    "Shape": tf.shape,
    "BroadcastArgs": lambda x: tf.broadcast_dynamic_shape(tf.shape(x), [2, 1]),
    "SparseConcat": lambda x: tf.sparse_concat(0, [tf.SparseTensor([[0, 1]], x[0, :1], [1, 3]),
                                                   tf.SparseTensor([[0, 2]], x[1, :1], [1, 3])]).values,
    "SparseReshape": lambda x: tf.sparse_reshape(
        tf.SparseTensor([[0, 1]], x[0, :1], tf.placeholder_with_default(
            np.array([1, 3], np.int64), [2])), [3, -1]).indices,
    "SparseAddGrad": lambda x: apply("SparseAddGrad", [x[0], tf.constant([2, -1], tf.int64)]),
    "Size": tf.size,
    "Rank": lambda x: apply("Rank", [x]),
    "Assert": lambda x: (tf.Assert(tf.reduce_all(tf.is_finite(x)), [x]), tf.constant(0.0))[1],
    "Range": lambda x: tf.range(0.0, tf.reduce_sum(x * x) + 3.0, 1.0),
    "ScalarSummary": lambda x: tf.size(tf.summary.scalar("s", tf.reduce_sum(x))),
    "HistogramSummary": lambda x: tf.size(tf.summary.histogram("h", x)),
    "ImageSummary": lambda x: tf.size(tf.summary.image("i", tf.reshape(x, [1, 1, -1, 1]))),
    "TextSummary": lambda x: tf.size(tf.summary.text("t", tf.constant(["x"]))),
    "AudioSummaryV2": lambda x: tf.size(tf.summary.audio("a", x, 100)),
    "MergeSummary": lambda x: tf.size(tf.summary.merge([tf.summary.scalar("m", tf.reduce_sum(x))])),
    "Where": lambda x: tf.where(x > 0),
    "RandomShuffle": tf.random_shuffle,
    "Multinomial": lambda x: tf.multinomial(x, 4),
    "Unique": lambda x: tf.unique(tf.reshape(x, [-1]))[0],
    "IteratorGetNext": lambda x: tf.data.Dataset.from_tensor_slices(x).batch(2)
    .make_initializable_iterator().get_next(),
    "IteratorToStringHandle": lambda x: tf.size(
        tf.data.Dataset.from_tensors(x).make_initializable_iterator().string_handle()),
    "IteratorFromStringHandleGetNext": lambda x: tf.data.Iterator.from_string_handle(
        tf.placeholder(tf.string, []), tf.float64, [2, 3]).get_next(),
    "MakeIterator": lambda x: tf.size(tf.tuple([x], control_inputs=[
        tf.data.Dataset.from_tensors(x).make_initializable_iterator().initializer])[0]),
    "ReduceDataset": lambda x: tf.data.Dataset.from_tensor_slices(x).reduce(
        tf.zeros([3], tf.float64), lambda total, row: total + row),
    # queues, readers and the input producers' ops (engine/ops/queue_ops.py, io_ops.py)
    "QueueHandle": lambda x: tf.size(tf.FIFOQueue(3, tf.float64).queue_ref),
    "QueueEnqueueV2": lambda x: _size_after(x, tf.FIFOQueue(3, tf.float64).enqueue(x)),
    "QueueEnqueueManyV2": lambda x: _size_after(x, tf.FIFOQueue(3, tf.float64).enqueue_many(x)),
    "QueueDequeueV2": lambda x: tf.FIFOQueue(3, tf.float64, [2, 3]).dequeue(),
    "QueueDequeueManyV2": lambda x: tf.FIFOQueue(3, tf.float64, [2, 3]).dequeue_many(2),
    "QueueSizeV2": lambda x: tf.FIFOQueue(3, tf.float64).size(),
    "QueueCloseV2": lambda x: _size_after(x, tf.FIFOQueue(3, tf.float64).close()),
    "QueueIsClosedV2": lambda x: tf.FIFOQueue(3, tf.float64).is_closed(),
    "BranchNotTaken": lambda x: apply("BranchNotTaken", [], dtype=tf.float64, shape=x.shape,
                                      message="never run"),
    "LimitEpochs": lambda x: tf.train.limit_epochs(x, 2),
    "ReaderHandle": lambda x: tf.size(tf.WholeFileReader().reader_ref),
    "ReaderReadV2": lambda x: tf.size(tf.WholeFileReader().read(tf.FIFOQueue(1, tf.string))[1]),
    "ReaderReadUpToV2": lambda x: tf.size(
        tf.TextLineReader().read_up_to(tf.FIFOQueue(1, tf.string), 2)[1]),
    "ReaderCounterV2": lambda x: tf.WholeFileReader().num_records_produced(),
    "ReaderResetV2": lambda x: _size_after(x, tf.WholeFileReader().reset()),
    "ReadFile": lambda x: tf.size(tf.read_file("no_such_file")),
    "WriteFile": lambda x: _size_after(x, tf.write_file("no_such_dir/f", "data")),
    # image codecs: pixels from a file's bytes (the ops are built, not run)
    "DecodeJpeg": lambda x: tf.image.decode_jpeg(tf.read_file("f.jpg")),
    "DecodePng": lambda x: tf.image.decode_png(tf.read_file("f.png")),
    "DecodeGif": lambda x: tf.image.decode_gif(tf.read_file("f.gif")),
    "DecodeBmp": lambda x: tf.image.decode_bmp(tf.read_file("f.bmp")),
    "DecodeImage": lambda x: tf.image.decode_image(tf.read_file("f.png")),
    "EncodePng": lambda x: tf.size(tf.image.encode_png(tf.cast(x[..., None], tf.uint8))),
    # parsing ops: functions of byte strings
    "DecodeCSV": lambda x: tf.decode_csv(tf.constant(["1,2"]), [[0.0], [0.0]])[0],
    "DecodeRaw": lambda x: tf.decode_raw(tf.constant([b"\0\0\0\0"]), tf.float32),
    "ParseExample": lambda x: tf.parse_example(tf.constant([b""]), {
        "v": tf.FixedLenFeature([], tf.float32, default_value=0.0)})["v"],
    "ParseSingleSequenceExample": lambda x: tf.parse_single_sequence_example(
        tf.constant(b""), sequence_features={
            "v": tf.FixedLenSequenceFeature([], tf.float32, allow_missing=True)})[1]["v"],
    "StringSplit": lambda x: tf.size(tf.string_split(tf.constant(["a b"])).values),
    # the optimizers' deduplication of a gradient, made after differentiation
    "CropAndResizeGradBoxes": lambda x: apply("CropAndResizeGradBoxes", [
        tf.reshape(x, [1, 1, 3, 2]), tf.zeros([1, 2, 2, 2], tf.float64),
        tf.constant([[0.0, 0.0, 1.0, 1.0]], tf.float64), tf.constant([0])]),
    "CropSizeOf": lambda x: apply("CropSizeOf", [tf.reshape(x, [1, 2, 3, 1])]),
    "CTCGreedyDecoder": lambda x: tf.nn.ctc_greedy_decoder(tf.reshape(x, [2, 1, 3]), [2])[1],
    "CTCBeamSearchDecoder": lambda x: tf.nn.ctc_beam_search_decoder(
        tf.reshape(x, [2, 1, 3]), [2], beam_width=2)[1],
    "GatherTree": lambda x: tf.contrib.seq2seq.gather_tree(
        tf.reshape(tf.argmax(x, 1, output_type=tf.int32), [2, 1, 1]), tf.zeros([2, 1, 1],
                                                                              tf.int32), [2], 0),
    "EditDistance": lambda x: tf.edit_distance(
        tf.SparseTensor([[0, 0]], tf.argmax(tf.reshape(x, [1, 6]), 1), [1, 1]),
        tf.SparseTensor([[0, 0]], tf.constant([2], tf.int64), [1, 1])),
    "UniqueRowSum": lambda x: apply("UniqueRowSum", [x, tf.constant([1, 1])])[0],
    "InTopK": lambda x: tf.nn.in_top_k(x, tf.constant([0, 2]), 2),
    "TopKGrad": lambda x: apply("TopKGrad", [x[:, :2], tf.nn.top_k(x, 2)[1], x]),
    "CandidateSampler": lambda x: tf.nn.uniform_candidate_sampler([[1]], 1, 2, True, 5)[2],
    "ComputeAccidentalHits": lambda x: tf.nn.compute_accidental_hits([[1]], [1, 2], 1)[2],
    "GatherPoints": lambda x: apply("GatherPoints", [x, tf.constant([[0, 1]]),
                                                     tf.constant([1.0], tf.float64)]),
    "PyFunc": lambda x: tf.py_func(np.sin, [x], tf.float64),
    "TensorArraySize": lambda x: tf.TensorArray(tf.float64, 0, dynamic_size=True).write(
        2, x[0]).size(),
    "TensorArrayNew": lambda x: tf.TensorArray(tf.float64, 2, element_shape=[3]).stack(),
    "EagerPyFunc": lambda x: tf.py_function(tf.sin, [x], tf.float64),
    # feature columns' lookups (ops/lookup_ops.py)
    "StringToHashBucketFast": lambda x: tf.string_to_hash_bucket_fast(tf.constant(["a"]), 2),
    "VocabularyLookup": lambda x: vocabulary_lookup(tf.argmax(x, 1), [0, 2]),
    "CategoricalIdentity": lambda x: categorical_identity(tf.argmax(x, 1), 3),
    "IndexToString": lambda x: tf.size(index_to_string(tf.argmax(x, 1), ["a", "b", "c"])),
    # contrib: k-means' nearest centers, a tensor forest's trees (the session's resources)
    "NearestNeighbors": lambda x: nearest_neighbors(x, x, 1)[1],
    "TensorForestTreeCreate": _tree_op(lambda x, t, r: _size_after(x, r.create)),
    "TensorForestTreeIsInitialized": _tree_op(lambda x, t, r: r.is_initialized),
    "TensorForestTrainTree": _tree_op(lambda x, t, r: _size_after(
        x, t.training_graph(x, tf.constant([0, 1])))),
    "TreePredictionsV4": _tree_op(lambda x, t, r: t.inference_graph(x)[0]),
    "TreeSize": _tree_op(lambda x, t, r: t.size()),
    "GradientTreesPrediction": lambda x: gbdt_ops.predict(
        tf.zeros([0, ensemble.VALUES + 1]), x, 0.1),
    # the canned boosted trees' logits of bucket ids (ops/boosted_trees_ops.py)
    "BoostedTreesPredict": lambda x: boosted_trees_ops.predict(
        tf.zeros([0, ensemble.VALUES + 1]), tf.cast(tf.abs(x), tf.int32)),
}

# Differentiating these raises: the rnn op has no second-order derivatives (engine/ops/rnn.py),
# reduce_prod no third-order ones, a while loop, cholesky and self_adjoint_eig no second-order ones.
RAISES = {"RnnGrad", "ProdOthersGrad", "WhileGrad", "CholeskyGrad", "SelfAdjointEigV2Grad"}

# Ops that write variables (assign, the optimizers' updates) have no data gradient by design;
# they are recognised by their ``mutates`` flag, so new optimizer ops need no entry here.
MUTATING = {name for name, op in OPS.items() if op.mutates}


# -- the checks ----------------------------------------------------------------------------


def _objective(outs, values):
    """sum_k <w_k, out_k> with fixed weights shaped like each output's run-time value."""
    rng = np.random.default_rng(7)
    terms = [tf.reduce_sum(o * tf.constant(rng.uniform(0.5, 1.5, np.shape(v))))
             for o, v in zip(outs, values)]
    return terms[0] if len(terms) == 1 else tf.add_n(terms)


def _as_list(out):
    return list(out) if isinstance(out, list | tuple) else [out]


def check_gradients(op_type, c: Case, dynamic=False):
    """Assert that gradients() of the case's objective equals central differences of it."""
    graph = tf.Graph()
    with graph.as_default():
        xs = [tf.placeholder(tf.float64, [None] * a.ndim if dynamic else a.shape) for a in c.args]
        outs = _as_list(c.build(*xs))
        assert op_type in {op.type for op in graph.get_operations()}, \
            f"case {c.label!r} does not build a {op_type} op"
        feed = dict(zip(xs, c.args))
        with tf.Session() as sess:
            values = sess.run(outs, feed)
            loss = _objective(outs, values)
            wrt = range(len(xs)) if c.wrt is None else c.wrt
            grads = tf.gradients(loss, [xs[i] for i in wrt])
            with warnings.catch_warnings():  # IndexedSlices of unknown dense shape: densified
                warnings.simplefilter("ignore")
                fetch = [tf.convert_to_tensor(g) for g in grads if g is not None]
            got = iter(sess.run(fetch, feed))
            for i, g in zip(wrt, grads):
                analytic = next(got) if g is not None else np.zeros_like(c.args[i])
                assert np.shape(analytic) == c.args[i].shape, \
                    f"gradient of input {i} has shape {np.shape(analytic)}, not {c.args[i].shape}"
                numeric = np.zeros_like(c.args[i])
                for j in np.ndindex(c.args[i].shape):
                    args = [a.copy() for a in c.args]
                    args[i][j] += c.eps
                    up = sess.run(loss, dict(zip(xs, args)))
                    args[i][j] -= 2 * c.eps
                    down = sess.run(loss, dict(zip(xs, args)))
                    numeric[j] = (up - down) / (2 * c.eps)
                np.testing.assert_allclose(analytic, numeric, rtol=c.tol, atol=c.tol,
                                           err_msg=f"{op_type} [{c.label}] input {i}")


_PARAMS = [pytest.param(op, c, id=f"{op}-{c.label}") for op, cs in CASES.items() for c in cs]


@pytest.mark.parametrize(("op_type", "c"), _PARAMS)
def test_gradient_matches_finite_differences(op_type, c):
    check_gradients(op_type, c)


@pytest.mark.parametrize(("op_type", "c"), [p for p in _PARAMS if p.values[1].dynamic])
def test_gradient_matches_finite_differences_with_unknown_dims(op_type, c):
    check_gradients(op_type, c, dynamic=True)


def test_every_registered_op_has_a_gradient_check():
    """A differentiable op must have cases; one without a gradient rule must be listed."""
    differentiable = {name for name, op in OPS.items() if op.grad is not None} - RAISES
    no_grad = {name for name, op in OPS.items() if op.grad is None} - MUTATING
    assert differentiable <= set(CASES), \
        f"differentiable ops without finite-difference cases: {sorted(differentiable - set(CASES))}"
    assert no_grad <= set(NON_DIFFERENTIABLE), \
        f"ops without a gradient rule not listed: {sorted(no_grad - set(NON_DIFFERENTIABLE))}"
    assert not set(CASES) & set(NON_DIFFERENTIABLE)
    assert set(CASES) | set(NON_DIFFERENTIABLE) | RAISES <= set(OPS), "table names unknown ops"


@pytest.mark.parametrize("op_type", sorted(MUTATING))
def test_variable_writing_ops_have_no_gradient(op_type):
    assert OPS[op_type].grad is None


def test_gradients_return_none_through_assignments():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [2, 3])
        for write in (tf.assign, tf.assign_add, tf.assign_sub):
            out = write(_variable_from(x), x * 2)
            assert tf.gradients(tf.reduce_sum(out), x) == [None]


@pytest.mark.parametrize("op_type", sorted(NON_DIFFERENTIABLE))
def test_gradients_return_none_through_non_differentiable_op(op_type):
    assert OPS[op_type].grad is None
    graph = tf.Graph()
    with graph.as_default():
        x = tf.placeholder(tf.float64, [2, 3])
        out = NON_DIFFERENTIABLE[op_type](x)
        assert op_type in {op.type for op in graph.get_operations()}
        y = out if out.dtype == tf.float64 else tf.cast(out, tf.float64)
        assert tf.gradients(tf.reduce_sum(y), x) == [None]


def test_gradients_return_none_for_integer_inputs():
    """Integer tensors carry no gradient, even through float ops (TF1)."""
    with tf.Graph().as_default():
        i = tf.constant([1, 2, 3])
        y = tf.reduce_sum(tf.cast(i, tf.float64) * 2.0 + tf.cast(i * i, tf.float64))
        assert tf.gradients(y, i) == [None]


def test_second_derivative_through_relu_is_a_zero_tensor():
    """TF's ReluGrad gradient gives zeros (not None) for relu's input: fetchable, as in TF."""
    with tf.Graph().as_default():
        x = tf.constant([-1.0, 0.0, 2.0])
        (g,) = tf.gradients(tf.reduce_sum(tf.nn.relu(x)), [x])
        (gg,) = tf.gradients(tf.reduce_sum(g), [x])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(g), [0.0, 0.0, 1.0])
            np.testing.assert_array_equal(sess.run(gg), [0.0, 0.0, 0.0])


def test_third_derivative_through_reduce_prod_raises():
    with tf.Graph().as_default():
        x = tf.constant([1.0, 2.0, 3.0])
        (g,) = tf.gradients(tf.reduce_prod(x), [x])
        (gg,) = tf.gradients(tf.reduce_sum(g), [x])
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(gg), [5, 4, 3])  # sums of pairwise products
        with pytest.raises(LookupError):
            tf.gradients(tf.reduce_sum(gg), [x])


def test_second_derivative_through_rnn_raises():
    with tf.Graph().as_default():
        x = tf.constant(np.ones((2, 1, 1)))
        k, b = tf.constant(np.ones((2, 1)) * 0.5), tf.constant(np.zeros(1))
        h = tf.rnn(x, k, b, cell="tanh")
        (gk,) = tf.gradients(tf.reduce_sum(h), [k])
        assert "RnnGrad" in {op.type for op in gk.graph.get_operations()}
        with pytest.raises(LookupError):
            tf.gradients(tf.reduce_sum(gk), [k])


# -- gradients of gradients ----------------------------------------------------------------


def _grad_of(build):
    """A build whose outputs are the gradients of ``build``'s objective w.r.t. its inputs."""

    def grads(*xs):
        outs = _as_list(build(*xs))
        rng = np.random.default_rng(11)
        loss = tf.add_n([tf.reduce_sum(o * rng.uniform(0.5, 1.5, o.shape.as_list())) for o in outs])
        return tuple(g for g in tf.gradients(loss, list(xs)) if g is not None)

    return grads


SECOND_ORDER = [
    ("Tanh", tf.tanh, anything(3)),
    ("Sigmoid", tf.sigmoid, anything(2, 3)),
    ("Sqrt", tf.sqrt, positive(3)),
    ("Rsqrt", lambda x: tf.rsqrt(x) * x, positive(2, 2)),
    ("Reciprocal", lambda x: tf.reciprocal(x) ** 2, away_from_zero(3)),
    ("Log", tf.log, positive(3)),
    ("Exp", tf.exp, anything(3)),
    ("Softplus", tf.nn.softplus, anything(3)),
    ("Mul", lambda x, y: x * y * x, anything(2, 3), anything(3)),
    ("RealDiv", lambda x, y: x / y, anything(2, 3), away_from_zero(2, 1)),
    ("Pow", lambda x, y: x ** y, positive(3), anything(3)),
    ("MatMul", lambda a, b: tf.matmul(a, b) * tf.matmul(a, b), anything(2, 3), anything(3, 2)),
    ("Softmax", lambda x: tf.nn.softmax(x) * x, anything(2, 3)),
    ("L2Loss", lambda x: tf.nn.l2_loss(x) ** 2, anything(2, 3)),
    ("LogSoftmax", lambda x: tf.nn.log_softmax(x, axis=0) ** 2, anything(2, 3)),
    ("SoftmaxCrossEntropyWithLogits",
     lambda lo: _xent(labels=normalized_rows(2, 3), logits=lo) ** 2, anything(2, 3)),
    ("SparseSoftmaxCrossEntropyWithLogits",
     lambda lo: _sparse(labels=[0, 2], logits=lo) ** 2, anything(2, 3)),
    ("Max", lambda x: tf.reduce_max(x * x, axis=1), distinct(2, 3)),
    ("Mean", lambda x: tf.reduce_mean(x, axis=0) ** 3, anything(2, 3)),
    ("Prod", lambda x: tf.reduce_prod(x, axis=1) ** 2, away_from_zero(2, 3)),
    ("Prod", lambda x: tf.reduce_prod(x, axis=1) * tf.reduce_sum(x),
     np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [0.0, 0.0, 0.0]])),
    ("ConcatV2", lambda a, b: tf.concat([a * a, b], 1) ** 2, anything(2, 1), anything(2, 2)),
    ("GatherV2", lambda x: tf.gather(x * x, [1, 1, 0]) ** 2, anything(3, 2)),
    ("UnsortedSegmentSum", lambda x: tf.unsorted_segment_sum(x * x, [1, 0, 1], 2) ** 2,
     anything(3, 2)),
    ("SegmentReduction", lambda x: tf.segment_prod(x * x, [0, 0, 1]) ** 2, anything(3, 2)),
    ("UnsortedSegmentReduction", lambda x: tf.unsorted_segment_max(x * x, [1, 0, 1], 2) ** 2,
     distinct(3, 2) + 3),
    ("SparseSegmentReduction",
     lambda x: tf.sparse_segment_sqrt_n(x * x, [0, 2, 2], [0, 0, 1]) ** 2, anything(3, 2)),
    ("StridedSlice", lambda x: x[:, 1:] ** 3, anything(2, 3)),
    ("Tile", lambda x: tf.tile(x * x, [2, 1]) ** 2, anything(1, 3)),
    ("TileDynamic", lambda x: tf.reshape(tf.tile(x * x, _runtime_ints(2, 1)), [2, 3]) ** 2,
     anything(1, 3)),
    ("DynamicStridedSlice", lambda x: tf.reshape(x[:, _runtime_ints(1)[0]:], [2, 2]) ** 3,
     anything(2, 3)),
    ("BroadcastTo", lambda x: tf.broadcast_to(x * x, [2, 3]) ** 2, anything(3)),
    ("GatherNd", lambda x: tf.gather_nd(x * x, [[1, 0], [1, 0]]) ** 2, anything(2, 2)),
    ("ScatterNd", lambda u: tf.scatter_nd([[1], [1]], u * u, [3]) ** 2, anything(2)),
    ("ChannelWindowSum", lambda x: tf.nn.lrn(x, 1, 2.0, 0.5, 0.75) ** 2, anything(1, 1, 2, 3)),
    ("Resize", lambda x: tf.image.resize_bilinear(x * x, [3, 3]) ** 2, anything(1, 2, 2, 1)),
    ("Atan2", lambda y, x: tf.atan2(y * y, x) ** 2, anything(3), away_from_zero(3)),
    ("MatrixInverse", lambda a: tf.matrix_inverse(a) ** 2, np.eye(2) * 2 + anything(2, 2) / 4),
    ("MatrixDeterminant", lambda a: tf.matrix_determinant(a) ** 2,
     np.eye(2) * 2 + anything(2, 2) / 4),
    ("Cumsum", lambda x: tf.cumsum(x * x, exclusive=True) ** 2, anything(3)),
    ("Cumprod", lambda x: tf.cumprod(x, reverse=True) ** 2, away_from_zero(3)),
    ("Einsum", lambda a, b: tf.einsum("ij,j->i", a * a, b) ** 2, anything(2, 3), anything(3)),
    ("Maximum", lambda x, y: tf.maximum(x, y) ** 3, *separated_pair((2, 3), (3,))),
    ("SelectV2", lambda x, y: tf.where_v2(_COND, x * x, y) ** 2, anything(2, 3), anything(3)),
    ("Select", lambda x, y: tf.where([False, True], x * x, y) ** 2, anything(2, 3), anything(2, 3)),
    ("Relu", lambda x: tf.nn.relu(x) * x, away_from_zero(2, 3)),
    ("Transpose", lambda x: tf.transpose(x * x) ** 2, anything(2, 3)),
    ("Unpack", lambda x: tf.unstack(x)[0] ** 3, anything(2, 3)),
    ("Squeeze", lambda x: tf.squeeze(x, [0]) ** 3, anything(1, 3)),
    ("Conv2D", lambda x, k: _conv(x, k, strides=2, padding="SAME") ** 2, anything(1, 4, 3, 2),
     anything(2, 2, 2, 2)),
    ("Conv2DBackpropInput",
     lambda y, k: tf.nn.conv2d_transpose(y, k, [1, 3, 3, 2], 2, "SAME") ** 2,
     anything(1, 2, 2, 2), anything(2, 2, 2, 2)),
    ("DepthwiseConv2dNative",
     lambda x, k: tf.nn.depthwise_conv2d(x, k, [1, 1, 1, 1], "VALID") ** 2, anything(1, 3, 3, 2),
     anything(2, 2, 2, 2)),
    ("SwitchedBatchNorm", lambda x, s: _switched_bn(True)(x, s, s, s, s * s + 1)[0] ** 2,
     anything(4, 3), anything(3)),
    ("SwitchedBatchNorm", lambda x, s: tf.add_n([tf.reduce_sum(t * t) for t in _switched_bn(
        True, (0, 2, 3), True)(x * s[0], s, s, s, s * s + 1)]),
     anything(2, 2, 3, 2), anything(2)),
    ("SwitchedBatchNorm", lambda x, s: _switched_bn(False)(x, s, s, s, s * s + 1)[0] ** 2,
     anything(4, 3), anything(3)),
    ("SwitchedBatchNormGrad", lambda g, xh: tf.add_n([tf.reduce_sum(t * t) for t in apply(
        "SwitchedBatchNormGrad", [g, xh, xh[0] * xh[0] + 1, xh[1], tf.constant(True)],
        axes=(0,))]), anything(4, 3), anything(4, 3)),
    ("MaxPool", lambda x: tf.nn.max_pool(x * x, 2, 1, "SAME") ** 2, distinct(1, 3, 3, 2) / 10),
    ("AvgPool", lambda x: tf.nn.avg_pool(x, 2, 2, "SAME") ** 3, anything(1, 3, 3, 2)),
    ("If", lambda x, y: tf.cond(tf.reduce_sum(x) > 0, lambda: x * y * x, lambda: tf.sin(x)),
     positive(2, 3), anything(3)),
    ("If", lambda x, y: tf.cond(tf.reduce_sum(x) > 0, lambda: x * y * x, lambda: tf.sin(x) * y),
     -positive(2, 3), anything(3)),
]


@pytest.mark.parametrize(("op_type", "build", "args"),
                         [pytest.param(s[0], s[1], s[2:], id=s[0]) for s in SECOND_ORDER])
def test_gradient_of_gradient_matches_finite_differences(op_type, build, args):
    check_gradients(op_type, Case(_grad_of(build), tuple(args), "second-order", tol=1e-5))
