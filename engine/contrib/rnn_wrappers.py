"""TF 1.x's cell wrappers of ``contrib/rnn/python/ops/core_rnn_cell.py``:

- ``OutputProjectionWrapper``: every output goes through a dense layer: variables ``kernel``
  [units, output_size] and ``bias`` (zeros) in the wrapper's scope
  ``output_projection_wrapper``, the wrapped cell's variables inside it
  (``rnn/output_projection_wrapper/basic_rnn_cell/kernel``). Over a whole sequence it unrolls
  when its cell does, projecting every step at once.
- ``EmbeddingWrapper``: the inputs are ids, looked up in ``embedding_wrapper/embedding``
  [classes, size] (uniform in +-sqrt(3) unless the scope or ``initializer`` says otherwise)
  before the cell reads them."""

from __future__ import annotations

import math

from ..nn.rnn_cell import RNNCellWrapper, can_unroll
from ..ops.array import reshape
from ..ops.embedding_ops import embedding_lookup
from ..ops.initializers import random_uniform_initializer, zeros_initializer
from ..ops.linalg import tensordot
from ..ops.math import matmul
from ..ops.variables import get_variable, get_variable_scope, variable_scope


class OutputProjectionWrapper(RNNCellWrapper):
    """``cell``'s outputs projected to ``output_size`` units (then ``activation`` if given); the
    state is the cell's."""

    def __init__(self, cell, output_size, activation=None, reuse=None):
        if output_size < 1:
            raise ValueError(f"Parameter output_size must be > 0: {output_size}.")
        self._cell, self._output_size, self._activation = cell, int(output_size), activation
        self._kernel = self._bias = None

    @property
    def output_size(self):
        return self._output_size

    @property
    def trainable_variables(self):
        mine = [] if self._kernel is None else [self._kernel, self._bias]
        return list(self._cell.trainable_variables) + mine

    def _build(self, output):
        if self._kernel is None:
            units = output.shape.dims[-1]
            self._kernel = get_variable("kernel", [units, self._output_size], dtype=output.dtype)
            self._bias = get_variable("bias", [self._output_size], dtype=output.dtype,
                                      initializer=zeros_initializer())

    def _finish(self, projected):
        return self._activation(projected) if self._activation else projected

    def __call__(self, inputs, state, scope=None):
        with variable_scope(scope or "output_projection_wrapper"):
            output, new_state = self._cell(inputs, state)
            self._build(output)
            return self._finish(matmul(output, self._kernel) + self._bias), new_state

    def can_unroll(self):
        return can_unroll(self._cell)

    def unroll(self, x, state=None, sequence_length=None):
        """Every step's output (time-major [time, batch, units]) projected at once."""
        with variable_scope("output_projection_wrapper"):
            outputs, final = self._cell.unroll(x, state, sequence_length)
            self._build(outputs)
            return self._finish(tensordot(outputs, self._kernel, [[2], [0]]) + self._bias), final


class EmbeddingWrapper(RNNCellWrapper):
    """``cell`` reading ids: each step's ids [batch] (or [batch, 1]) embedded first."""

    def __init__(self, cell, embedding_classes, embedding_size, initializer=None, reuse=None):
        if embedding_classes <= 0 or embedding_size <= 0:
            raise ValueError("Both embedding_classes and embedding_size must be > 0: "
                             f"{embedding_classes}, {embedding_size}.")
        self._cell, self._initializer = cell, initializer
        self._classes, self._size = int(embedding_classes), int(embedding_size)
        self._embedding = None

    @property
    def trainable_variables(self):
        mine = [] if self._embedding is None else [self._embedding]
        return mine + list(self._cell.trainable_variables)

    def __call__(self, inputs, state, scope=None):
        with variable_scope(scope or "embedding_wrapper"):
            if self._embedding is None:
                initializer = self._initializer or get_variable_scope().initializer or \
                    random_uniform_initializer(-math.sqrt(3), math.sqrt(3))
                first = state
                while isinstance(first, tuple | list):
                    first = first[0]
                self._embedding = get_variable("embedding", [self._classes, self._size],
                                               initializer=initializer, dtype=first.dtype)
            embedded = embedding_lookup(self._embedding, reshape(inputs, [-1]))
            return self._cell(embedded, state)
