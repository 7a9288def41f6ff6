"""``tf.contrib.legacy_seq2seq`` (TF 1.x ``legacy_seq2seq/python/ops/seq2seq.py``), the list-of-
steps sequence models older tutorials build on: ``rnn_decoder`` (a cell unrolled over a list of
inputs, optionally feeding back its own output through ``loop_function``), ``basic_rnn_seq2seq``
and ``tied_rnn_seq2seq`` (an encoder's final state starting the decoder), and the per-step
losses ``sequence_loss_by_example`` and ``sequence_loss``."""

from __future__ import annotations

import copy

from ..framework import dtypes as _dtypes
from ..framework.graph import name_scope
from ..nn.recurrent import static_rnn
from ..ops.array import reshape, shape
from ..ops.math import add_n, cast
from ..ops.nn import sparse_softmax_cross_entropy_with_logits
from ..ops.reduce import reduce_sum
from ..ops.variables import get_variable_scope, variable_scope


def rnn_decoder(decoder_inputs, initial_state, cell, loop_function=None, scope=None):
    """``cell`` over the list ``decoder_inputs`` from ``initial_state``, its variables shared
    across steps (scope ``rnn_decoder``). With ``loop_function(prev, i)``, step i > 0 reads
    that function of step i - 1's output instead of ``decoder_inputs[i]``. Returns the list of
    outputs and the final state."""
    with variable_scope(scope or "rnn_decoder"):
        state, outputs, prev = initial_state, [], None
        for i, inp in enumerate(decoder_inputs):
            if loop_function is not None and prev is not None:
                with variable_scope("loop_function", reuse=True):
                    inp = loop_function(prev, i)
            if i > 0:
                get_variable_scope().reuse_variables()
            output, state = cell(inp, state)
            outputs.append(output)
            if loop_function is not None:
                prev = output
    return outputs, state


def basic_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, dtype=_dtypes.float32, scope=None):
    """A copy of ``cell`` encodes ``encoder_inputs``; its final state starts ``rnn_decoder``
    over ``decoder_inputs`` (scope ``basic_rnn_seq2seq``)."""
    with variable_scope(scope or "basic_rnn_seq2seq"):
        enc_cell = copy.deepcopy(cell)
        _, enc_state = static_rnn(enc_cell, encoder_inputs, dtype=dtype)
        return rnn_decoder(decoder_inputs, enc_state, cell)


def tied_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, loop_function=None,
                     dtype=_dtypes.float32, scope=None):
    """The same cell (the same variables) encodes and decodes."""
    with variable_scope("combined_tied_rnn_seq2seq"):
        scope = scope or "tied_rnn_seq2seq"
        _, enc_state = static_rnn(cell, encoder_inputs, dtype=dtype, scope=scope)
        get_variable_scope().reuse_variables()
        return rnn_decoder(decoder_inputs, enc_state, cell, loop_function=loop_function,
                           scope=scope)


def sequence_loss_by_example(logits, targets, weights, average_across_timesteps=True,
                             softmax_loss_function=None, name=None):
    """Per example, the weighted sum over steps of the sparse softmax cross-entropy of
    ``logits[t]`` against ``targets[t]`` (or ``softmax_loss_function(labels=, logits=)``),
    divided by the summed weights (+ 1e-12) when ``average_across_timesteps``."""
    if len(targets) != len(logits) or len(weights) != len(logits):
        raise ValueError("Lengths of logits, weights, and targets must be the same "
                         f"{len(logits)}, {len(weights)}, {len(targets)}.")
    with name_scope(name, "sequence_loss_by_example", logits + targets + weights):
        log_perp_list = []
        for logit, target, weight in zip(logits, targets, weights):
            if softmax_loss_function is None:
                crossent = sparse_softmax_cross_entropy_with_logits(
                    labels=reshape(target, [-1]), logits=logit)
            else:
                crossent = softmax_loss_function(labels=target, logits=logit)
            log_perp_list.append(crossent * weight)
        log_perps = add_n(log_perp_list)
        if average_across_timesteps:
            total_size = add_n(weights) + 1e-12  # no division by 0 for all-0 weights
            log_perps /= total_size
    return log_perps


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, softmax_loss_function=None, name=None):
    """The sum over the batch of ``sequence_loss_by_example``, divided by the batch size when
    ``average_across_batch``."""
    with name_scope(name, "sequence_loss", logits + targets + weights):
        cost = reduce_sum(sequence_loss_by_example(
            logits, targets, weights, average_across_timesteps=average_across_timesteps,
            softmax_loss_function=softmax_loss_function))
        if average_across_batch:
            return cost / cast(shape(targets[0])[0], cost.dtype)
        return cost
