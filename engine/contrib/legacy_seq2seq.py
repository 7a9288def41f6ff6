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
from ..ops.core import stop_gradient
from ..ops.embedding_ops import embedding_lookup
from ..ops.math import add_n, cast, matmul
from ..ops.nn import bias_add, sparse_softmax_cross_entropy_with_logits
from ..ops.reduce import argmax, reduce_sum
from ..ops.variables import get_variable, get_variable_scope, variable_scope
from .rnn_wrappers import EmbeddingWrapper, OutputProjectionWrapper


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


def _extract_argmax_and_embed(embedding, output_projection=None, update_embedding=True):
    """The loop function feeding a decoder its previous output's most likely symbol, embedded
    (projected first by ``output_projection`` = (W, b) if given)."""
    def loop_function(prev, _):
        if output_projection is not None:
            prev = bias_add(matmul(prev, output_projection[0]), output_projection[1])
        emb_prev = embedding_lookup(embedding, argmax(prev, 1))
        return emb_prev if update_embedding else stop_gradient(emb_prev)
    return loop_function


def embedding_rnn_decoder(decoder_inputs, initial_state, cell, num_symbols, embedding_size,
                          output_projection=None, feed_previous=False,
                          update_embedding_for_previous=True, scope=None):
    """``rnn_decoder`` over the decoder ids embedded in ``embedding_rnn_decoder/embedding``
    [num_symbols, embedding_size]; with ``feed_previous`` each step after the first reads the
    previous step's argmax symbol instead (greedy decoding)."""
    with variable_scope(scope or "embedding_rnn_decoder"):
        embedding = get_variable("embedding", [num_symbols, embedding_size])
        loop_function = _extract_argmax_and_embed(
            embedding, output_projection, update_embedding_for_previous) if feed_previous else None
        emb_inp = [embedding_lookup(embedding, i) for i in decoder_inputs]
        return rnn_decoder(emb_inp, initial_state, cell, loop_function=loop_function)


def embedding_rnn_seq2seq(encoder_inputs, decoder_inputs, cell, num_encoder_symbols,
                          num_decoder_symbols, embedding_size, output_projection=None,
                          feed_previous=False, dtype=None, scope=None):
    """A copy of ``cell`` in an ``EmbeddingWrapper`` encodes the encoder ids; its final state
    starts ``embedding_rnn_decoder`` of ``cell`` with an ``OutputProjectionWrapper`` to
    ``num_decoder_symbols`` logits (unless ``output_projection`` is given); scope
    ``embedding_rnn_seq2seq``. ``feed_previous`` must be a Python bool here."""
    if not isinstance(feed_previous, bool):
        raise NotImplementedError("embedding_rnn_seq2seq: a tensor feed_previous (TF's cond "
                                  "between the two decoders) is not supported")
    with variable_scope(scope or "embedding_rnn_seq2seq"):
        dtype = dtype or _dtypes.float32
        encoder_cell = EmbeddingWrapper(copy.deepcopy(cell), embedding_classes=num_encoder_symbols,
                                        embedding_size=embedding_size)
        _, encoder_state = static_rnn(encoder_cell, encoder_inputs, dtype=dtype)
        if output_projection is None:
            cell = OutputProjectionWrapper(cell, num_decoder_symbols)
        return embedding_rnn_decoder(decoder_inputs, encoder_state, cell, num_decoder_symbols,
                                     embedding_size, output_projection=output_projection,
                                     feed_previous=feed_previous)


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
