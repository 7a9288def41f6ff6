"""``tf.nn``: activations, losses, convolution and pooling, and the RNN cells with
``dynamic_rnn``."""

from ..ops.candidate_sampling import (  # noqa: F401
    all_candidate_sampler,
    compute_accidental_hits,
    fixed_unigram_candidate_sampler,
    learned_unigram_candidate_sampler,
    log_uniform_candidate_sampler,
    uniform_candidate_sampler,
)
from ..ops.comparisons import equal  # for xw_plus_b and zero_fraction  # noqa: F401
from ..ops.conv import (  # noqa: F401
    conv1d,
    conv2d,
    conv2d_backprop_filter,
    conv2d_backprop_input,
    conv2d_transpose,
    depthwise_conv2d,
    depthwise_conv2d_native,
    depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input,
)
from ..ops.core import constant, convert_to_tensor
from ..ops.ctc_beam_search import ctc_beam_search_decoder  # noqa: F401
from ..ops.ctc_ops import ctc_greedy_decoder, ctc_loss  # noqa: F401
from ..ops.dropout import nn_dropout as dropout  # noqa: F401
from ..ops.embedding_ops import embedding_lookup, embedding_lookup_sparse  # noqa: F401
from ..ops.math import cast, matmul, relu, sigmoid, softplus, tanh  # for xw_plus_b and zero_fraction  # noqa: F401
from ..ops.nn import (  # noqa: F401
    bias_add,
    elu,
    l2_loss,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    relu6,
    selu,
    sigmoid_cross_entropy_with_logits,
    softmax,
    softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2,
    softsign,
    sparse_softmax_cross_entropy_with_logits,
    weighted_cross_entropy_with_logits,
)
from ..ops.normalization import (  # noqa: F401
    batch_norm_with_global_normalization,
    batch_normalization,
    fused_batch_norm,
    l2_normalize,
    local_response_normalization,
    lrn,
    moments,
)
from ..ops.pooling import avg_pool, max_pool  # noqa: F401
from ..ops.reduce import reduce_mean
from ..ops.top_k import in_top_k, top_k  # noqa: F401
from . import rnn_cell  # noqa: F401
from .convolution import (  # noqa: F401
    atrous_conv2d,
    avg_pool3d,
    conv3d,
    conv3d_backprop_filter_v2,
    conv3d_backprop_input,
    conv3d_backprop_input_v2,
    conv3d_transpose,
    max_pool3d,
    separable_conv2d,
)
from .recurrent import (  # noqa: F401
    bidirectional_dynamic_rnn,
    dynamic_rnn,
    static_bidirectional_rnn,
    static_rnn,
)
from .sampled_losses import nce_loss, sampled_softmax_loss  # noqa: F401

max_pool2d, avg_pool2d = max_pool, avg_pool
depthwise_conv2d_backprop_input = depthwise_conv2d_native_backprop_input
depthwise_conv2d_backprop_filter = depthwise_conv2d_native_backprop_filter
conv3d_backprop_filter = conv3d_backprop_filter_v2


def xw_plus_b(x, weights, biases, name="xw_plus_b"):
    """``matmul(x, weights) + biases`` (TF's nn.xw_plus_b, a bias_add)."""
    return bias_add(matmul(x, weights), biases)


def zero_fraction(value, name="zero_fraction"):
    """The fraction of the entries of ``value`` that are 0 (TF's summary of sparsity); an
    IndexedSlices gradient counts as its dense tensor, and 0 takes the value's dtype."""
    value = convert_to_tensor(value)
    return reduce_mean(cast(equal(value, constant(0, dtype=value.dtype)), "float32"))
