"""``tf.contrib.seq2seq.BeamSearchDecoder`` and ``tile_batch``, as TF 1.15's contrib
(``beam_search_decoder.py``).

The decoder keeps ``beam_width`` hypotheses per batch entry. At each step the cell runs on all
of them ([batch * beam] rows); every hypothesis's log-probability plus each next id's
log-softmax gives batch x (beam * vocab) candidates, scored by the log-probability divided by
the length penalty ((5 + length) / 6) ** ``length_penalty_weight`` (GNMT's, arXiv:1609.08144;
the candidate ``end_token`` does not lengthen), and the best ``beam_width`` become the next
beams, each with its parent beam's cell state. A finished beam can only continue with
``end_token`` at no cost. At the start only the first beam is live (the others have
log-probability -inf), so the first step's beams are distinct ids. With
``coverage_penalty_weight`` and an attention cell, GNMT's coverage penalty scores the finished
beams by how much of the memory their alignments covered. The decoder tracks its own
finished beams and lengths; ``finalize`` reads each beam's ids back through its parents
(``gather_tree``) into ``FinalBeamSearchDecoderOutput.predicted_ids`` [batch, time, beam].

The initial cell state must have batch_size * beam_width rows, each entry repeated
``beam_width`` times (``tile_batch`` of the encoder's state).
"""

from __future__ import annotations

import collections

import numpy as np

from ...autodiff.tape import flatten
from ...control_flow.cond import cond
from ...framework import dtypes as _dtypes
from ...framework.graph import Tensor, name_scope
from ...framework.tensor_shape import TensorShape
from ...ops.array import (
    concat,
    expand_dims,
    one_hot,
    reshape,
    shape,
    size,
    stack,
    transpose,
)
from ...ops.beam_search_ops import gather_tree
from ...ops.broadcast_ops import tile
from ...ops.comparisons import equal, logical_not, logical_or
from ...ops.core import convert_to_tensor, fill, ones_like, zeros, zeros_like
from ...ops.indexing_nd import gather_nd
from ...ops.masking import sequence_mask
from ...ops.math import cast, floordiv, floormod, log, minimum, range_
from ...ops.nn import log_softmax
from ...ops.reduce import reduce_all, reduce_max, reduce_mean, reduce_sum
from ...ops.tensor_array_ops import TensorArray
from ...ops.top_k import top_k
from ...ops.where import where, where_v2
from .attention_wrapper import AttentionWrapperState
from .decoder import Decoder, map_structure
from .helper import embedding_fn

__all__ = ["BeamSearchDecoderState", "BeamSearchDecoderOutput", "FinalBeamSearchDecoderOutput",
           "BeamSearchDecoder", "tile_batch"]


class BeamSearchDecoderState(collections.namedtuple(
        "BeamSearchDecoderState",
        ("cell_state", "log_probs", "finished", "lengths", "accumulated_attention_probs"))):
    """The search's state; ``accumulated_attention_probs``: the coverage penalty's summed
    alignments [batch, beam, memory], () without it."""


BeamSearchDecoderState.__new__.__defaults__ = ((),)


class BeamSearchDecoderOutput(collections.namedtuple(
        "BeamSearchDecoderOutput", ("scores", "predicted_ids", "parent_ids"))):
    pass


class FinalBeamSearchDecoderOutput(collections.namedtuple(
        "FinalBeamDecoderOutput", ["predicted_ids", "beam_search_decoder_output"])):
    """The beams' ids ([batch, time, beam], or time-major) and the search's step outputs."""


def _static(dims):
    return None if dims is None or any(d is None for d in dims) else [int(d) for d in dims]


def _reshaped(t, n_old, leading, static_leading):
    """``t`` with its first ``n_old`` axes replaced by ``leading`` (ints or -1; their static
    sizes ``static_leading``), keeping the static shape of the rest."""
    rest = t.shape.dims[n_old:]
    known = _static(rest)
    out = reshape(t, [*leading, *known]) if known is not None else reshape(
        t, concat([convert_to_tensor(leading, _dtypes.int32), shape(t)[n_old:]], 0))
    out.set_shape(TensorShape([*static_leading, *rest]))
    return out


def tile_batch(t, multiplier, name=None):
    """``t`` [batch, ...] (or a structure of such tensors, a cell's state) with each entry
    repeated ``multiplier`` times in a row: [batch * multiplier, ...] (the layout
    BeamSearchDecoder expects of its initial state and an attention's memory)."""
    with name_scope(name, "tile_batch"):
        return map_structure(lambda x: _tile_one(x, int(multiplier)), t)


def _tile_one(t, multiplier):
    t = convert_to_tensor(t, name="t")
    if t.shape.ndims is None or t.shape.ndims < 1:
        raise ValueError("t must have statically known rank")
    tiled = tile(expand_dims(t, 1), [1, multiplier] + [1] * (t.shape.ndims - 1))
    batch = t.shape.dims[0]
    return _reshaped(tiled, 2, [-1], [None if batch is None else batch * multiplier])


class BeamSearchDecoder(Decoder):
    """Beam search over ``cell`` (see the module's doc): ``embedding`` (params or a callable)
    embeds the ids, ``start_tokens`` [batch] and ``end_token`` (a scalar) bound the
    sequences, ``initial_state`` has batch * ``beam_width`` rows (``tile_batch``),
    ``output_layer`` maps the cell's outputs to the vocabulary's logits."""

    def __init__(self, cell, embedding, start_tokens, end_token, initial_state, beam_width,
                 output_layer=None, length_penalty_weight=0.0, coverage_penalty_weight=0.0,
                 reorder_tensor_arrays=True):
        if not callable(cell) or not hasattr(cell, "output_size"):
            raise TypeError(f"cell must be an RNNCell, received: {type(cell)}")
        if output_layer is not None and not callable(output_layer):
            raise TypeError(f"output_layer must be a Layer, received: {type(output_layer)}")
        self._cell, self._output_layer = cell, output_layer
        self._embedding_fn = embedding_fn(embedding)
        self._start_tokens = convert_to_tensor(start_tokens, dtype=_dtypes.int32,
                                               name="start_tokens")
        if self._start_tokens.shape.ndims != 1:
            raise ValueError("start_tokens must be a vector")
        self._end_token = convert_to_tensor(end_token, dtype=_dtypes.int32, name="end_token")
        if self._end_token.shape.ndims != 0:
            raise ValueError("end_token must be a scalar")
        self._beam_width = int(beam_width)
        self._reorder_tensor_arrays = bool(reorder_tensor_arrays)
        self._length_penalty_weight = length_penalty_weight
        self._coverage_penalty_weight = float(coverage_penalty_weight)
        self._batch_size = size(self._start_tokens)
        self._static_batch = self._start_tokens.shape.dims[0]
        self._initial_cell_state = map_structure(self._maybe_split_batch_beams, initial_state)
        self._start_tokens = tile(expand_dims(self._start_tokens, 1), [1, self._beam_width])
        self._start_inputs = self._embedding_fn(self._start_tokens)
        # only the first beam is live at the start
        self._finished = one_hot(zeros([self._batch_size], _dtypes.int32), self._beam_width,
                                 on_value=False, off_value=True, dtype=_dtypes.bool_)

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def tracks_own_finished(self):
        return True

    @property
    def output_size(self):
        beams = TensorShape([self._beam_width])
        return BeamSearchDecoderOutput(scores=beams, predicted_ids=beams, parent_ids=beams)

    @property
    def output_dtype(self):
        dtype = flatten(self._initial_cell_state)[0].dtype
        return BeamSearchDecoderOutput(scores=dtype, predicted_ids=_dtypes.int32,
                                       parent_ids=_dtypes.int32)

    def _merge_batch_beams(self, t):
        """[batch, beam, ...] -> [batch * beam, ...]."""
        static = None if self._static_batch is None else self._static_batch * self._beam_width
        return _reshaped(t, 2, [-1], [static])

    def _split_batch_beams(self, t):
        """[batch * beam, ...] -> [batch, beam, ...]."""
        if t.shape.dims is not None and self._static_batch is not None and \
                t.shape.dims[0] not in (None, self._static_batch * self._beam_width):
            raise ValueError(f"Unexpected behavior when reshaping between beam width and batch "
                             f"size. The tensor {t.name} has shape: {t.shape}. We expected it "
                             f"to have {self._static_batch * self._beam_width} rows (batch_size "
                             f"* beam_width). Perhaps you forgot to create a zero_state with "
                             f"batch_size=encoder_batch_size * beam_width?")
        return _reshaped(t, 1, [-1, self._beam_width], [self._static_batch, self._beam_width])

    def _maybe_split_batch_beams(self, t):
        if isinstance(t, TensorArray):  # an alignment history: reordered by finalize
            return t
        t = convert_to_tensor(t)
        if t.shape.ndims is None:
            raise ValueError(f"Expected tensor ({t}) to have known rank, but ndims == None.")
        return self._split_batch_beams(t) if t.shape.ndims >= 1 else t

    def _maybe_merge_batch_beams(self, t):
        if isinstance(t, TensorArray):
            return t
        if t.shape.ndims is None:
            raise ValueError(f"Expected tensor ({t}) to have known rank, but ndims == None.")
        return self._merge_batch_beams(t) if t.shape.ndims >= 2 else t

    def initialize(self, name=None):
        dtype = flatten(self._initial_cell_state)[0].dtype
        log_probs = one_hot(zeros([self._batch_size], _dtypes.int32), self._beam_width,
                            on_value=np.zeros((), dtype.np), off_value=np.array(-np.inf, dtype.np),
                            dtype=dtype)
        state = BeamSearchDecoderState(
            cell_state=self._initial_cell_state, log_probs=log_probs, finished=self._finished,
            lengths=zeros([self._batch_size, self._beam_width], _dtypes.int32),
            accumulated_attention_probs=attention_probs(self._initial_cell_state,
                                                        self._coverage_penalty_weight))
        return self._finished, self._start_inputs, state

    def finalize(self, outputs, final_state, sequence_lengths):
        """The beams' ids read back through their parents (gather_tree) up to each entry's
        longest beam."""
        lengths = cast(reduce_max(final_state.lengths, axis=1), _dtypes.int32)
        ids = gather_tree(outputs.predicted_ids, outputs.parent_ids, lengths, self._end_token)
        if self._reorder_tensor_arrays:
            final_state = final_state._replace(cell_state=map_structure(
                lambda t: self._sort_array_beams(t, outputs.parent_ids, final_state.lengths),
                final_state.cell_state))
        return FinalBeamSearchDecoderOutput(predicted_ids=ids,
                                            beam_search_decoder_output=outputs), final_state

    def _sort_array_beams(self, t, parent_ids, lengths):
        """A TensorArray of the cell's state (an attention's alignment history, an element
        [batch * beam, ...] per step) with each final beam's elements read along its path."""
        if not isinstance(t, TensorArray) or t.element_shape.ndims in (None, 0):
            return t
        stacked = t.stack()
        steps = shape(stacked)[0]
        split = _reshaped(stacked, 2, [steps, -1, self._beam_width],
                          [None, self._static_batch, self._beam_width])
        ordered = gather_tree_from_array(split, parent_ids, lengths)
        merged = _reshaped(ordered, 3, [steps, -1], [None, t.element_shape.dims[0]])
        return TensorArray(t.dtype, size=shape(merged)[0], element_shape=merged.shape[1:],
                           clear_after_read=False).unstack(merged)

    def step(self, time, inputs, state, name=None):
        with name_scope(name, "BeamSearchDecoderStep"):
            inputs = map_structure(self._merge_batch_beams, inputs)
            cell_state = map_structure(self._maybe_merge_batch_beams, state.cell_state)
            cell_outputs, next_cell_state = self._cell(inputs, cell_state)
            cell_outputs = map_structure(self._split_batch_beams, cell_outputs)
            next_cell_state = map_structure(self._maybe_split_batch_beams, next_cell_state)
            if self._output_layer is not None:
                cell_outputs = self._output_layer(cell_outputs)
            output, next_state = _beam_search_step(
                time, cell_outputs, next_cell_state, state, self._batch_size, self._beam_width,
                self._end_token, self._length_penalty_weight, self._coverage_penalty_weight)
            finished = next_state.finished
            next_inputs = cond(reduce_all(finished), lambda: self._start_inputs,
                               lambda: self._embedding_fn(output.predicted_ids))
        return output, next_state, next_inputs, finished


def gather_tree_from_array(t, parent_ids, sequence_length):
    """``t`` [max_time, batch, beam, ...], a value per step and beam, with each final beam's
    values read along its path through ``parent_ids`` (gather_tree of the beam indices); steps
    past a beam's ``sequence_length`` keep their own beam."""
    zeros = zeros_like(parent_ids)
    beam_ids = zeros + range_(parent_ids.shape.dims[2])
    longest = cast(reduce_max(sequence_length, axis=1), _dtypes.int32)
    sorted_ids = gather_tree(beam_ids, parent_ids, longest, parent_ids.shape.dims[2] + 1)
    inside = transpose(sequence_mask(sequence_length, maxlen=shape(parent_ids)[0]), [2, 0, 1])
    sorted_ids = where(inside, sorted_ids, beam_ids)
    steps = zeros + reshape(range_(shape(parent_ids)[0]), [-1, 1, 1])
    entries = zeros + reshape(range_(shape(parent_ids)[1]), [1, -1, 1])
    return gather_nd(t, stack([steps, entries, sorted_ids], -1))


def _gather_beams(t, indices, batch_size, beam_width):
    """Per batch entry, ``t``'s rows [batch, n, ...] at ``indices`` [batch, beam]."""
    rows = tile(expand_dims(range_(batch_size), 1), [1, beam_width])
    out = gather_nd(t, stack([rows, indices], axis=2))
    out.set_shape(TensorShape([t.shape.dims[0], beam_width, *t.shape.dims[2:]]))
    return out


def attention_probs(cell_state, coverage_penalty_weight):
    """The alignments [batch, beam, memory] of the attention states in ``cell_state`` (their
    mean over several mechanisms or wrappers), what the coverage penalty accumulates; ()
    without a coverage penalty."""
    if coverage_penalty_weight == 0.0:
        return ()
    states = [cell_state] if isinstance(cell_state, AttentionWrapperState) else \
        [s for s in cell_state if isinstance(s, AttentionWrapperState)] \
        if isinstance(cell_state, tuple) else []
    if not states:
        raise ValueError("coverage_penalty_weight must be 0.0 if no cell is attentional.")

    def mean(probs):
        return probs[0] if len(probs) == 1 else reduce_mean(stack(probs, -1), -1)

    return mean([mean(list(s.alignments)) if isinstance(s.alignments, tuple) else s.alignments
                 for s in states])


def _beam_search_step(time, logits, next_cell_state, beam_state, batch_size, beam_width,
                      end_token, length_penalty_weight, coverage_penalty_weight=0.0):
    """One step of the search (see the module's doc), TF's ``_beam_search_step``: from the
    step's ``logits`` [batch, beam, vocab], the beams' cell states after it and the search's
    state, the step's outputs and the next state. With ``coverage_penalty_weight`` (GNMT's
    coverage penalty), the beams' alignments are summed over the steps (unfinished beams'),
    and a finished beam's candidates score the weight times the sum over the memory of
    log(min(coverage, 1)) (coverage 0, a masked step, counted as 1) more."""
    vocab = logits.shape.dims[-1]
    if vocab is None:
        raise ValueError(f"BeamSearchDecoder: the logits' last dimension (the vocabulary) "
                         f"must be known, got shape {logits.shape}")
    end_token = convert_to_tensor(end_token, dtype=_dtypes.int32)
    finished, lengths = beam_state.finished, cast(beam_state.lengths, _dtypes.int32)
    step_log_probs = _mask_probs(log_softmax(logits), end_token, finished, vocab)
    total = expand_dims(beam_state.log_probs, 2) + step_log_probs
    # a candidate lengthens its beam unless the beam finished or it is end_token
    grows = one_hot(fill([batch_size, beam_width], end_token), vocab, on_value=0, off_value=1,
                    dtype=_dtypes.int32)
    grows = grows * expand_dims(cast(logical_not(finished), _dtypes.int32), 2)
    scores = total / _length_penalty(grows + expand_dims(lengths, 2), length_penalty_weight,
                                     total.dtype)
    accumulated = ()
    if coverage_penalty_weight:
        probs = attention_probs(next_cell_state, coverage_penalty_weight)
        accumulated = beam_state.accumulated_attention_probs + probs * expand_dims(
            cast(logical_not(finished), probs.dtype), 2)
        coverage = where(equal(accumulated, 0.0), ones_like(accumulated), accumulated)
        penalty = reduce_sum(log(minimum(coverage, 1.0)), 2) * cast(finished, coverage.dtype)
        scores = scores + expand_dims(cast(penalty * coverage_penalty_weight, scores.dtype), 2)
    next_scores, word_indices = top_k(reshape(scores, [-1, beam_width * vocab]), k=beam_width)
    for t in (next_scores, word_indices):
        t.set_shape([logits.shape.dims[0], beam_width])
    next_probs = reshape(_gather_beams(expand_dims(reshape(total, [-1, beam_width * vocab]), 2),
                                       word_indices, batch_size, beam_width), [-1, beam_width])
    next_word_ids = floormod(word_indices, vocab)
    next_beam_ids = floordiv(word_indices, vocab)

    def gather_vector(t):
        return reshape(_gather_beams(expand_dims(t, 2), next_beam_ids, batch_size, beam_width),
                       [-1, beam_width])

    was_finished = gather_vector(finished)
    next_finished = logical_or(was_finished, equal(next_word_ids, end_token))
    next_lengths = gather_vector(lengths) + cast(logical_not(was_finished), _dtypes.int32)
    next_cell_state = map_structure(
        lambda t: _gather_beams(t, next_beam_ids, batch_size, beam_width)
        if isinstance(t, Tensor) and t.shape.ndims is not None and t.shape.ndims >= 2 else t,
        next_cell_state)
    next_state = BeamSearchDecoderState(
        cell_state=next_cell_state, log_probs=next_probs, finished=next_finished,
        lengths=next_lengths,
        accumulated_attention_probs=() if not coverage_penalty_weight else
        _gather_beams(accumulated, next_beam_ids, batch_size, beam_width))
    return BeamSearchDecoderOutput(scores=next_scores, predicted_ids=next_word_ids,
                                   parent_ids=next_beam_ids), next_state


def _length_penalty(lengths, weight, dtype):
    """GNMT's length penalty ((5 + length) / 6) ** weight; 1 when the weight is 0."""
    if not isinstance(weight, Tensor) and float(weight) == 0.0:
        return np.ones((), dtype.np)
    weight = cast(convert_to_tensor(weight), _dtypes.float32)
    penalty = (5.0 + cast(lengths, _dtypes.float32)) ** weight / (6.0 ** weight)
    return cast(penalty, dtype)


def _mask_probs(probs, end_token, finished, vocab):
    """The log-probabilities of a finished beam's candidates: 0 for end_token, the dtype's
    lowest value for the others (it can only end again, at no cost)."""
    finished_row = one_hot(end_token, vocab, dtype=probs.dtype,
                           on_value=np.zeros((), probs.dtype.np),
                           off_value=np.array(np.finfo(probs.dtype.np).min, probs.dtype.np))
    return where_v2(expand_dims(finished, 2), finished_row, probs)
