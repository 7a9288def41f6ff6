"""The op modules; importing this package registers every op."""

from ..framework.registry import FUNCTIONS, OPS, get_op  # noqa: F401
from . import (  # noqa: F401
    activation_chains,
    array,
    broadcast_ops,
    conv,
    core,
    cumulative,
    data_flow,
    dropout,
    grids,
    image_ops,
    indexing_nd,
    linalg,
    masking,
    math,
    nn,
    normalization,
    pooling,
    reduce,
    rnn,
    sampling,
    sparse,
    sparse_ops,
    strided_slice,
    trig,
)
