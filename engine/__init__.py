"""gradpipe's engine: TensorFlow 1.x graph semantics on numpy (``import engine as tf``).

Layered like TF's tree; a package imports only the ones before it in this list (docs/layout.md):

- ``framework``: graphs, tensors, shapes, dtypes, errors, the op registry, the default session
  stack, the eager context, the BLAS threads and the worker pool;
- ``ops``: the op definitions (forward, shape rule and gradient side by side), initializers,
  variables, clip_ops and the other TF modules built of ops;
- ``autodiff``: ``gradients``, ``hessians``, ``GradientTape`` and ``custom_gradient``;
- ``runtime``: the session, the plan and its passes, the update kernels and allocator;
- the API packages, mirroring tf's namespaces: ``nn``, ``app``, ``control_flow`` (cond,
  while_loop, map_fn ...), ``layers``, then ``train``, then
  ``keras`` and ``contrib``; this module is the ``tf`` namespace itself.
"""

import sys as _sys
import types as _types

from . import (  # noqa: F401
    app,
    compat,
    contrib,
    data,
    debugging,
    estimator,
    feature_column,
    image,
    keras,
    linalg,
    losses,
    math,
    metrics,
    nn,
    ops,
    saved_model,
    summary,
    test,
    train,
)
from .autodiff.custom_gradient import custom_gradient  # noqa: F401
from .autodiff.gradients import AggregationMethod, UnconnectedGradients, gradients  # noqa: F401
from .autodiff.hessians import hessians  # noqa: F401
from .autodiff.tape import GradientTape  # noqa: F401
from .control_flow import case, cond, foldl, foldr, map_fn, scan, while_loop  # noqa: F401
from .data.structure import TensorSpec  # noqa: F401
from .framework import dtypes, errors  # noqa: F401  (tf.dtypes, tf.errors)
from .framework import tf_record as _tf_record
from .framework.dtypes import (  # noqa: F401
    DType,
    as_dtype,
    double,
    float16,
    float32,
    float64,
    half,
    int8,
    int16,
    int32,
    int64,
    string,
    uint8,
)
from .framework.dtypes import (
    bool_ as bool,  # noqa: A001
)
from .framework.eager import (  # noqa: F401
    disable_eager_execution,
    eager_mode,
    enable_eager_execution,
    executing_eagerly,
)
from .framework.errors import (  # noqa: F401
    FailedPreconditionError,
    InvalidArgumentError,
    OpError,
    OutOfRangeError,
    ShapeError,
)
from .framework.graph import (  # noqa: F401
    Graph,
    GraphKeys,
    Operation,
    Tensor,
    add_to_collection,
    add_to_collections,
    control_dependencies,
    device,
    get_collection,
    get_collection_ref,
    get_default_graph,
    name_scope,
    reset_default_graph,
)
from .framework.indexed_slices import IndexedSlices, IndexedSlicesValue  # noqa: F401
from .framework.registry import RegisterGradient  # noqa: F401
from .framework.tensor_shape import Dimension, TensorShape, dimension_value  # noqa: F401
from .image.adjustments import random_crop  # noqa: F401  (tf.random_crop, TF 1.x's name)
from .ops import initializers  # noqa: F401
from .ops import scatter_ops as _scatter_ops  # noqa: F401  (Variable.scatter_* methods)
from .ops.array import (  # noqa: F401
    concat,
    expand_dims,
    one_hot,
    rank,  # noqa: F401
    reshape,
    reverse,
    reverse_sequence,
    shape,
    size,
    split,
    squeeze,
    stack,
    transpose,
    unstack,
)
from .ops.assertions import (  # noqa: F401
    Assert,
    assert_equal,
    assert_greater,
    assert_greater_equal,
    assert_less,
    assert_less_equal,
    assert_negative,
    assert_non_negative,
    assert_non_positive,
    assert_none_equal,
    assert_positive,
    assert_rank,
    assert_scalar,
    assert_type,
)
from .ops.broadcast_ops import (  # noqa: F401
    broadcast_dynamic_shape,
    broadcast_static_shape,
    broadcast_to,
    tile,
)
from .ops.clip_ops import (  # noqa: F401
    clip_by_average_norm,
    clip_by_global_norm,
    clip_by_norm,
    clip_by_value,
    global_norm,
)
from .ops.comparisons import (
    equal,
    greater,
    greater_equal,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    not_equal,
)
from .ops.core import (  # noqa: F401
    constant,
    convert_to_tensor,
    fill,
    group,
    identity,
    identity_n,
    no_op,
    ones,
    ones_like,
    placeholder,
    placeholder_with_default,
    stop_gradient,
    zeros,
    zeros_like,
)
from .ops.core import tuple_ as tuple  # noqa: F401, A001
from .ops.cumulative import cumprod, cumsum  # noqa: F401
from .ops.data_flow import dynamic_partition, dynamic_stitch  # noqa: F401
from .ops.edit_distance import edit_distance  # noqa: F401
from .ops.embedding_ops import (  # noqa: F401
    SparseTensor,
    SparseTensorValue,
    sparse_placeholder,
    sparse_tensor_to_dense,
)
from .ops.grids import eye, lin_space, linspace, meshgrid  # noqa: F401
from .ops.indexing_nd import (  # noqa: F401
    gather_nd,
    scatter_nd,
    tensor_scatter_add,
    tensor_scatter_nd_add,
    tensor_scatter_nd_sub,
    tensor_scatter_nd_update,
    tensor_scatter_sub,
    tensor_scatter_update,
)
from .ops.initializers import (  # noqa: F401
    constant_initializer,
    glorot_normal_initializer,
    glorot_uniform_initializer,
    ones_initializer,
    orthogonal_initializer,
    random_normal,
    random_normal_initializer,
    random_uniform,
    random_uniform_initializer,
    set_random_seed,
    truncated_normal,
    truncated_normal_initializer,
    variance_scaling_initializer,
    zeros_initializer,
)
from .ops.io_ops import (  # noqa: F401
    FixedLengthRecordReader,
    ReaderBase,
    TextLineReader,
    TFRecordReader,
    WholeFileReader,
    read_file,
    write_file,
)
from .ops.linalg import (  # noqa: F401
    diag,
    diag_part,
    einsum,
    matrix_determinant,
    matrix_inverse,
    matrix_transpose,
    norm,
    tensordot,
    trace,
)
from .ops.logging_ops import Print  # noqa: F401
from .ops.lookup_ops import string_to_hash_bucket_fast  # noqa: F401
from .ops.masking import boolean_mask, count_nonzero, logical_xor, sequence_mask  # noqa: F401
from .ops.math import (  # noqa: F401
    abs_ as abs,  # noqa: A001
)
from .ops.math import (
    add,
    add_n,
    cast,
    ceil,
    cos,
    div,
    divide,
    exp,
    expm1,
    floor,
    floordiv,
    floormod,
    is_finite,
    is_inf,
    is_nan,
    log,
    log1p,
    matmul,
    maximum,
    minimum,
    multiply,
    negative,
    realdiv,
    reciprocal,
    rsqrt,
    sigmoid,
    sign,
    sin,
    softplus,
    sqrt,
    square,
    subtract,
    tanh,
    truediv,
    truncatediv,
    truncatemod,
)
from .ops.math import floormod as mod  # noqa: F401
from .ops.math import (
    pow_ as pow,  # noqa: A001
)
from .ops.math import range_ as range  # noqa: F401, A001
from .ops.math import (
    round_ as round,  # noqa: A001
)
from .ops.matrix_solvers import (  # noqa: F401
    cholesky,
    cross,
    matrix_solve,
    self_adjoint_eig,
    self_adjoint_eigvals,
)
from .ops.nn import squared_difference  # noqa: F401
from .ops.numerics import (  # noqa: F401
    add_check_numerics_ops,
    check_numerics,
    verify_tensor_all_finite,
)
from .ops.parsing_ops import (  # noqa: F401
    FixedLenFeature,
    FixedLenSequenceFeature,
    VarLenFeature,
    decode_csv,
    decode_raw,
    parse_example,
    parse_single_example,
    parse_single_sequence_example,
    string_split,
)
from .ops.queue_ops import (  # noqa: F401
    FIFOQueue,
    PaddingFIFOQueue,
    QueueBase,
    RandomShuffleQueue,
)
from .ops.reduce import (  # noqa: F401
    argmax,
    argmin,
    reduce_all,
    reduce_any,
    reduce_logsumexp,
    reduce_max,
    reduce_mean,
    reduce_min,
    reduce_prod,
    reduce_sum,
)
from .ops.rnn import rnn  # noqa: F401
from .ops.sampling import multinomial, random_shuffle  # noqa: F401
from .ops.scatter_ops import (  # noqa: F401
    scatter_add,
    scatter_div,
    scatter_max,
    scatter_min,
    scatter_mul,
    scatter_nd_add,
    scatter_nd_sub,
    scatter_nd_update,
    scatter_sub,
    scatter_update,
)
from .ops.script_ops import numpy_function, py_func, py_function  # noqa: F401
from .ops.segment_ops import (  # noqa: F401
    segment_max,
    segment_mean,
    segment_min,
    segment_prod,
    segment_sum,
    unsorted_segment_max,
    unsorted_segment_mean,
    unsorted_segment_min,
    unsorted_segment_prod,
    unsorted_segment_sqrt_n,
)
from .ops.slicing import pad  # noqa: F401
from .ops.slicing import slice_ as slice  # noqa: F401, A001
from .ops.sparse import (  # noqa: F401
    gather,
    sparse_segment_mean,
    sparse_segment_sqrt_n,
    sparse_segment_sum,
    sparse_to_dense,
    unique,
    unsorted_segment_sum,
)
from .ops.sparse_ops import (  # noqa: F401
    sparse_add,
    sparse_concat,
    sparse_reduce_sum,
    sparse_reorder,
    sparse_reshape,
    sparse_retain,
    sparse_transpose,
)
from .ops.strided_slice import strided_slice  # noqa: F401
from .ops.tensor_array_ops import TensorArray  # noqa: F401
from .ops.trig import acos, asin, atan, atan2, cosh, sinh, tan  # noqa: F401
from .ops.variables import (  # noqa: F401
    AUTO_REUSE,
    Variable,
    VariableScope,
    assign,
    assign_add,
    assign_sub,
    get_variable,
    get_variable_scope,
    global_variables,
    global_variables_initializer,
    initialize_all_variables,
    is_variable_initialized,
    local_variables,
    local_variables_initializer,
    trainable_variables,
    variable_scope,
    variables_initializer,
)
from .ops.where import where, where_v2
from .platform import gfile  # noqa: F401
from .platform import tf_logging as logging  # noqa: F401
from .runtime.session import InteractiveSession, Session, get_default_session  # noqa: F401
from .runtime.session_options import (  # noqa: F401
    ConfigProto,
    GPUOptions,
    GraphOptions,
    OptimizerOptions,
    RunMetadata,
    RunOptions,
)
from .summary import HistogramProto, SessionLog, Summary  # noqa: F401

#: ``tf.python_io``: TFRecord files
python_io = _types.SimpleNamespace(
    TFRecordWriter=_tf_record.TFRecordWriter, tf_record_iterator=_tf_record.tf_record_iterator,
    TFRecordOptions=_tf_record.TFRecordOptions,
    TFRecordCompressionType=_tf_record.TFRecordCompressionType)
#: ``tf.io`` (TF 1.13+): TFRecord files and the parsing ops under their newer names
io = _types.SimpleNamespace(
    **vars(python_io), decode_csv=decode_csv, decode_raw=decode_raw, parse_example=parse_example,
    parse_single_example=parse_single_example, FixedLenFeature=FixedLenFeature,
    VarLenFeature=VarLenFeature, parse_single_sequence_example=parse_single_sequence_example,
    FixedLenSequenceFeature=FixedLenSequenceFeature, gfile=gfile, read_file=read_file, write_file=write_file,
    decode_jpeg=image.decode_jpeg, decode_png=image.decode_png, decode_gif=image.decode_gif,
    decode_bmp=image.decode_bmp, decode_image=image.decode_image, encode_png=image.encode_png)

#: ``tf.sparse`` (TF 1.13+): the SparseTensor functions under their newer names
sparse = _types.SimpleNamespace(
    SparseTensor=SparseTensor, SparseTensorValue=SparseTensorValue, add=sparse_add,
    concat=sparse_concat, reduce_sum=sparse_reduce_sum, reorder=sparse_reorder,
    reshape=sparse_reshape, retain=sparse_retain, transpose=sparse_transpose,
    to_dense=sparse_tensor_to_dense, placeholder=sparse_placeholder)

newaxis = None  # tf.newaxis: a new axis of size 1 in a slice (x[:, tf.newaxis])
to_float = cast


def to_int32(x, name="ToInt32"):
    return cast(x, int32)


def to_int64(x, name="ToInt64"):
    return cast(x, int64)


def to_double(x, name="ToDouble"):
    return cast(x, float64)


flags = app.flags  # tf.flags (TF 1.5+), the same module as tf.app.flags
compat.v1 = _sys.modules[__name__]  # tf.compat.v1: this namespace
arg_max, arg_min = argmax, argmin  # TF 1.x's deprecated names (``dimension`` as the axis)

#: The TF API level the engine follows (what a program checking ``tf.__version__`` learns): the
#: 1.x graph API of TF 1.15. It is not gradpipe's own version (see the package's metadata).
__version__ = "1.15.0"
