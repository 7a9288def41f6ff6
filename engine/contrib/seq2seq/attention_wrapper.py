"""``tf.contrib.seq2seq.AttentionWrapper`` with ``BahdanauAttention`` and ``LuongAttention``, as
TF 1.15's contrib (``attention_wrapper.py``).

An attention mechanism holds the encoder's outputs (the *memory* [batch, max_time, depth], rows
past ``memory_sequence_length`` zeroed) and their *keys* (the memory through ``memory_layer``,
a Dense of ``num_units`` without bias). Given a query (the decoder cell's output) it scores every
memory row, Luong's ``query . key`` (times a learned scalar ``attention_g`` when ``scale``),
Bahdanau's ``v . tanh(key + query_layer(query))`` (weight-normalized with ``attention_g`` and
``attention_b`` when ``normalize``), masks the rows past the sequence's length with
``score_mask_value`` (-inf) and turns the scores into alignments (softmax).

The wrapper runs its cell on the inputs concatenated with the previous attention
(``cell_input_fn``), queries each mechanism with the cell's output, and makes the attention of
the context (the alignments' weighted sum of the memory) and the cell's output:
``attention_layer`` ([cell_output, context] through a Dense of ``attention_layer_size`` without
bias), or the context itself. Its state is an ``AttentionWrapperState``; the output is the
attention (``output_attention``) or the cell's output. ``alignment_history`` keeps every step's
alignments in a TensorArray.
"""

from __future__ import annotations

import collections
import math

import numpy as np

from ...framework import dtypes as _dtypes
from ...framework.graph import Tensor, name_scope
from ...framework.tensor_shape import TensorShape
from ...layers.core import Dense
from ...ops.array import concat, expand_dims, shape, squeeze
from ...ops.core import convert_to_tensor, ones_like, zeros
from ...ops.initializers import constant_initializer, ones_initializer, zeros_initializer
from ...ops.masking import sequence_mask
from ...ops.math import matmul, rsqrt, square, tanh
from ...ops.nn import softmax
from ...ops.reduce import reduce_sum
from ...ops.tensor_array_ops import TensorArray
from ...ops.variables import get_variable, variable_scope
from ...ops.where import where
from .decoder import map_structure

__all__ = ["AttentionMechanism", "AttentionWrapper", "AttentionWrapperState",
           "BahdanauAttention", "LuongAttention"]


class AttentionMechanism:
    """What an AttentionWrapper queries (see the module's doc)."""


def _prepare_memory(memory, memory_sequence_length):
    """The memory with its rows past each sequence's length zeroed."""
    memory = convert_to_tensor(memory, name="memory")
    if memory.shape.ndims is not None and memory.shape.ndims != 3:
        raise ValueError(f"memory must be [batch_size, max_time, depth], got shape "
                         f"{memory.shape} ({memory.name})")
    if memory.shape.ndims and memory.shape.dims[-1] is None:
        raise ValueError(f"Expected memory {memory.name} to have a fully defined inner "
                         f"dimension, but saw shape: {memory.shape}")
    if memory_sequence_length is None:
        return memory
    mask = sequence_mask(memory_sequence_length, maxlen=shape(memory)[1], dtype=memory.dtype)
    return memory * expand_dims(mask, 2)


def _mask_score(score, memory_sequence_length, score_mask_value):
    if memory_sequence_length is None:
        return score
    keep = sequence_mask(memory_sequence_length, maxlen=shape(score)[1])
    return where(keep, score, score_mask_value * ones_like(score))


def _of_score(probability_fn):
    """A probability function of (score, previous alignments): ``probability_fn(score)``, or
    ``probability_fn`` itself when it is marked ``of_previous`` (the monotonic mechanisms')."""
    if getattr(probability_fn, "of_previous", False):
        return probability_fn
    return lambda score, _: probability_fn(score)


class _BaseAttentionMechanism(AttentionMechanism):
    def __init__(self, query_layer, memory, probability_fn, memory_sequence_length=None,
                 memory_layer=None, score_mask_value=None, name=None):
        self._query_layer, self._memory_layer = query_layer, memory_layer
        if not callable(probability_fn):
            raise TypeError(f"probability_fn must be callable, saw type: "
                            f"{type(probability_fn).__name__}")
        with name_scope(name, "BaseAttentionMechanismInit"):
            self._values = _prepare_memory(memory, memory_sequence_length)
            self.dtype = self._values.dtype
            if score_mask_value is None:
                score_mask_value = np.array(-np.inf, self.dtype.np)
            self._probability_fn = lambda score, prev: probability_fn(
                _mask_score(score, memory_sequence_length, score_mask_value), prev)
            self._keys = memory_layer(self._values) if memory_layer is not None else \
                self._values
        dims = self._keys.shape.dims or [None, None, None]
        self._batch_size = dims[0] if dims[0] is not None else shape(self._keys)[0]
        self._alignments_size = dims[1] if dims[1] is not None else shape(self._keys)[1]

    def __call__(self, query, state):
        """The alignments for ``query`` given the previous ones (``state``), twice (the next
        state is the alignments). The score is made under a variable scope named as TF's
        classes name theirs (``bahdanau_attention/``...), where the first call makes the query
        layer's kernel and the mechanism's variables (checkpoints of TF1 programs match)."""
        with variable_scope(None, self._scope_name):
            score = self._score(query)
        alignments = self._probability_fn(score, state)
        return alignments, alignments

    @property
    def memory_layer(self):
        return self._memory_layer

    @property
    def query_layer(self):
        return self._query_layer

    @property
    def values(self):
        return self._values

    @property
    def keys(self):
        return self._keys

    @property
    def batch_size(self):
        return self._batch_size

    @property
    def alignments_size(self):
        return self._alignments_size

    @property
    def state_size(self):
        return self._alignments_size

    def initial_alignments(self, batch_size, dtype):
        """Zeros [batch_size, max_time]."""
        return zeros([batch_size, self._alignments_size], dtype)

    def initial_state(self, batch_size, dtype):
        return self.initial_alignments(batch_size, dtype)


class LuongAttention(_BaseAttentionMechanism):
    """Luong's multiplicative attention: score = query . key (keys: the memory through a Dense
    of ``num_units``; the query's depth must be ``num_units``), times ``attention_g`` (a
    learned scalar from 1) when ``scale``."""

    _scope_name = "luong_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, scale=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="LuongAttention"):
        probability_fn = probability_fn or softmax
        super().__init__(
            query_layer=None, memory=memory,
            memory_layer=Dense(num_units, name="memory_layer", use_bias=False),
            probability_fn=_of_score(probability_fn),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units, self._scale, self._name = num_units, scale, name
        self._g = None

    def _score(self, query):
        depth, units = query.shape.dims[-1], self._keys.shape.dims[-1]
        if depth != units:
            raise ValueError(f"Incompatible or unknown inner dimensions between query and "
                             f"keys. Query ({query.name}) has units: {depth}. Keys "
                             f"({self._keys.name}) have units: {units}. Perhaps you need "
                             "to set num_units to the keys' dimension?")
        score = squeeze(matmul(expand_dims(query, 1), self._keys, transpose_b=True), [1])
        if self._scale:
            if self._g is None:  # made at the first call, shared by the later ones
                self._g = get_variable("attention_g", shape=(), dtype=query.dtype,
                                       initializer=ones_initializer())
            score = self._g * score
        return score


class BahdanauAttention(_BaseAttentionMechanism):
    """Bahdanau's additive attention: score = v . tanh(key + query_layer(query)), both layers
    Dense of ``num_units`` without bias; with ``normalize``, v is weight-normalized
    (g * v / |v|, g from sqrt(1 / num_units)) and a bias ``attention_b`` added in the tanh."""

    _scope_name = "bahdanau_attention"

    def __init__(self, num_units, memory, memory_sequence_length=None, normalize=False,
                 probability_fn=None, score_mask_value=None, dtype=None,
                 custom_key_value_fn=None, name="BahdanauAttention"):
        probability_fn = probability_fn or softmax
        super().__init__(
            query_layer=Dense(num_units, name="query_layer", use_bias=False),
            memory=memory, memory_layer=Dense(num_units, name="memory_layer", use_bias=False),
            probability_fn=_of_score(probability_fn),
            memory_sequence_length=memory_sequence_length, score_mask_value=score_mask_value,
            name=name)
        self._num_units, self._normalize, self._name = num_units, normalize, name
        self._v = None

    def _make_variables(self, dtype):
        units = self._keys.shape.dims[2]
        made = [get_variable("attention_v", [units], dtype=dtype)]
        if self._normalize:
            made.append(get_variable("attention_g", shape=(), dtype=dtype, initializer=(
                constant_initializer(math.sqrt(1.0 / units)))))
            made.append(get_variable("attention_b", [units], dtype=dtype,
                                     initializer=zeros_initializer()))
        self._v = made

    def _score(self, query):
        processed = expand_dims(self._query_layer(query), 1)
        if self._v is None:  # made at the first call, shared by the later ones
            self._make_variables(processed.dtype)
        if self._normalize:
            v, g, b = self._v
            normed_v = g * v * rsqrt(reduce_sum(square(v)))
            score = reduce_sum(normed_v * tanh(self._keys + processed + b), [2])
        else:
            score = reduce_sum(self._v[0] * tanh(self._keys + processed), [2])
        return score


class AttentionWrapperState(collections.namedtuple(
        "AttentionWrapperState", ("cell_state", "attention", "time", "alignments",
                                  "alignment_history", "attention_state"))):
    """An AttentionWrapper's state: the cell's, the last attention, the step, the last
    alignments, their history (a TensorArray, or () without alignment_history) and the
    mechanisms' states."""

    def clone(self, **kwargs):
        """A copy with ``kwargs`` replaced, the replaced tensors keeping the old static
        shapes (``cell_state=`` an encoder's final state, usually)."""

        def same_shape(old, new):
            if isinstance(old, Tensor) and isinstance(new, Tensor):
                new.set_shape(old.shape)
            return new

        return map_structure(same_shape, self, self._replace(**kwargs))


def _compute_attention(mechanism, cell_output, attention_state, attention_layer):
    alignments, next_attention_state = mechanism(cell_output, state=attention_state)
    context = squeeze(matmul(expand_dims(alignments, 1), mechanism.values), [1])
    attention = attention_layer(concat([cell_output, context], 1)) \
        if attention_layer is not None else context
    return attention, alignments, next_attention_state


class AttentionWrapper:
    """A cell with attention over one mechanism or a list of them (see the module's doc)."""

    def __init__(self, cell, attention_mechanism, attention_layer_size=None,
                 alignment_history=False, cell_input_fn=None, output_attention=True,
                 initial_cell_state=None, name=None, attention_layer=None):
        self._is_multi = isinstance(attention_mechanism, list | tuple)
        mechanisms = tuple(attention_mechanism) if self._is_multi else (attention_mechanism,)
        for m in mechanisms:
            if not isinstance(m, AttentionMechanism):
                raise TypeError(f"attention_mechanism must be an AttentionMechanism or list of "
                                f"multiple AttentionMechanism instances, saw type: "
                                f"{type(m).__name__}")
        if cell_input_fn is None:
            cell_input_fn = lambda inputs, attention: concat([inputs, attention], -1)  # noqa: E731
        elif not callable(cell_input_fn):
            raise TypeError(f"cell_input_fn must be callable, saw type: "
                            f"{type(cell_input_fn).__name__}")
        if attention_layer_size is not None and attention_layer is not None:
            raise ValueError("Only one of attention_layer_size and attention_layer should be set")
        if attention_layer_size is not None:
            sizes = tuple(attention_layer_size) if isinstance(attention_layer_size, list | tuple) \
                else (attention_layer_size,)
            if len(sizes) != len(mechanisms):
                raise ValueError(f"If provided, attention_layer_size must contain exactly one "
                                 f"integer per attention_mechanism, saw: {len(sizes)} vs "
                                 f"{len(mechanisms)}")
            self._attention_layers = tuple(Dense(s, name="attention_layer", use_bias=False)
                                           for s in sizes)
            self._attention_layer_size = sum(sizes)
        elif attention_layer is not None:
            layers = tuple(attention_layer) if isinstance(attention_layer, list | tuple) \
                else (attention_layer,)
            self._attention_layers = layers
            self._attention_layer_size = sum(int(layer.units) for layer in layers)
        else:
            self._attention_layers = None
            self._attention_layer_size = sum(int(m.values.shape.dims[-1]) for m in mechanisms)
        self._cell, self._mechanisms = cell, mechanisms
        self._cell_input_fn, self._output_attention = cell_input_fn, output_attention
        self._alignment_history = alignment_history
        self._initial_cell_state = initial_cell_state
        self._name = name or "attention_wrapper"

    def _item_or_tuple(self, seq):
        seq = tuple(seq)
        return seq if self._is_multi else seq[0]

    @property
    def output_size(self):
        return self._attention_layer_size if self._output_attention else self._cell.output_size

    @property
    def state_size(self):
        return AttentionWrapperState(
            cell_state=self._cell.state_size, time=TensorShape([]),
            attention=self._attention_layer_size,
            alignments=self._item_or_tuple(m.alignments_size for m in self._mechanisms),
            attention_state=self._item_or_tuple(m.state_size for m in self._mechanisms),
            alignment_history=self._item_or_tuple(
                m.alignments_size if self._alignment_history else () for m in self._mechanisms))

    def zero_state(self, batch_size, dtype):
        """The initial state: the cell's zero state (or ``initial_cell_state``), zero
        attention and alignments, step 0, empty alignment histories."""
        with name_scope(None, "AttentionWrapperZeroState"):
            cell_state = self._initial_cell_state if self._initial_cell_state is not None else \
                self._cell.zero_state(batch_size, dtype)
            alignments = [m.initial_alignments(batch_size, dtype) for m in self._mechanisms]
            return AttentionWrapperState(
                cell_state=cell_state, time=zeros([], _dtypes.int32),
                attention=zeros([batch_size, self._attention_layer_size], dtype),
                alignments=self._item_or_tuple(alignments),
                attention_state=self._item_or_tuple(
                    m.initial_state(batch_size, dtype) for m in self._mechanisms),
                alignment_history=self._item_or_tuple(
                    TensorArray(dtype, size=0, dynamic_size=True, element_shape=a.shape)
                    if self._alignment_history else () for a in alignments))

    def __call__(self, inputs, state, scope=None):
        if not isinstance(state, AttentionWrapperState):
            raise TypeError(f"Expected state to be instance of AttentionWrapperState. Received "
                            f"type {type(state)} instead.")
        with variable_scope(scope or self._name):
            cell_inputs = self._cell_input_fn(inputs, state.attention)
            cell_output, next_cell_state = self._cell(cell_inputs, state.cell_state)
            previous = state.attention_state if self._is_multi else [state.attention_state]
            histories = state.alignment_history if self._is_multi else \
                [state.alignment_history]
            attentions, alignments, attention_states, new_histories = [], [], [], []
            for i, mechanism in enumerate(self._mechanisms):
                attention, aligned, next_attention_state = _compute_attention(
                    mechanism, cell_output, previous[i],
                    self._attention_layers[i] if self._attention_layers else None)
                attentions.append(attention)
                alignments.append(aligned)
                attention_states.append(next_attention_state)
                new_histories.append(histories[i].write(state.time, aligned)
                                     if self._alignment_history else ())
            attention = concat(attentions, 1)
        next_state = AttentionWrapperState(
            time=state.time + 1, cell_state=next_cell_state, attention=attention,
            attention_state=self._item_or_tuple(attention_states),
            alignments=self._item_or_tuple(alignments),
            alignment_history=self._item_or_tuple(new_histories))
        return (attention if self._output_attention else cell_output), next_state
