"""``tf.nn.rnn_cell`` (also ``tf.contrib.rnn``): TF1's RNN cells.

A cell is called for one step, ``cell(inputs [batch, depth], state) -> (output, new_state)``,
and makes its variables on its first call under the current variable scope, with TF's names
and initializers (``<scope>/basic_lstm_cell/kernel`` ``[depth + units, 4 * units]`` from the
scope's initializer or glorot_uniform, ``.../bias`` zeros); a built cell keeps them wherever it
is used next. ``engine/recurrent.py`` runs cells over sequences.

``BasicRNNCell``, ``BasicLSTMCell`` and ``LSTMCell`` are the two cells of the ``rnn`` op
(engine/ops/rnn.py): over a whole sequence they ``unroll`` as one op (with tanh; another
activation, or LSTMCell's peepholes, clipping and projection, run step by step). ``GRUCell`` is built from
graph ops step by step. ``MultiRNNCell`` stacks cells (layer after layer, each over the whole
sequence, when they all unroll) and ``DropoutWrapper`` drops out a cell's inputs, outputs or
state with ``tf.nn.dropout``.
"""

from __future__ import annotations

import hashlib
from collections import namedtuple

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.graph import Tensor
from ..ops.array import concat, expand_dims, shape, split, stack
from ..ops.clip_ops import clip_by_value
from ..ops.comparisons import equal, less
from ..ops.core import convert_to_tensor, fill, zeros
from ..ops.dropout import nn_dropout
from ..ops.initializers import constant_initializer, random_uniform, zeros_initializer
from ..ops.math import cast, floor, matmul, range_, sigmoid, tanh
from ..ops.reduce import reduce_sum
from ..ops.rnn import rnn_states
from ..ops.variables import get_variable, variable_scope

LSTMStateTuple = namedtuple("LSTMStateTuple", ("c", "h"))


def map_state(fn, *states):
    """``fn`` applied to the tensors of matching state structures (a tensor, an
    ``LSTMStateTuple`` or a tuple of states), keeping the structure."""
    first = states[0]
    if isinstance(first, tuple | list):
        parts = [map_state(fn, *group) for group in zip(*states)]
        return type(first)(*parts) if hasattr(first, "_fields") else type(first)(parts)
    return fn(*states)


def _zeros(batch_size, units, dtype):
    if isinstance(batch_size, int | np.integer):
        return zeros([int(batch_size), units], dtype)
    return fill(stack([convert_to_tensor(batch_size, _dtypes.int32), units]),
                convert_to_tensor(np.zeros((), _dtypes.as_dtype(dtype).np)))


class RNNCell:
    """The cell protocol: ``state_size``, ``output_size``, ``zero_state`` and ``__call__``."""

    @property
    def state_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    def zero_state(self, batch_size, dtype):
        """Zeros in the structure of ``state_size``; ``batch_size`` may be a scalar tensor."""
        def make(size):
            if isinstance(size, tuple | list):
                parts = [make(s) for s in size]
                return type(size)(*parts) if hasattr(size, "_fields") else type(size)(parts)
            return _zeros(batch_size, size, dtype)

        return make(self.state_size)

    def __call__(self, inputs, state, scope=None):
        raise NotImplementedError


class RNNCellWrapper(RNNCell):
    """A cell around another (``self._cell``): its state size, output size and variables are
    the wrapped cell's unless the wrapper adds its own (TF's ``_RNNCellWrapperV1``);
    ``variables`` is ``trainable_variables``, as for TF's cells."""

    @property
    def state_size(self):
        return self._cell.state_size

    @property
    def output_size(self):
        return self._cell.output_size

    @property
    def trainable_variables(self):
        return self._cell.trainable_variables

    @property
    def variables(self):
        return self.trainable_variables


class _FusedCell(RNNCell):
    """A cell whose step is the ``rnn`` op's ``cell`` (``_cell``: 'tanh' or 'lstm'); with
    another ``activation`` (or, for ``LSTMCell``, peepholes, clipping or a projection) it is
    called step by step through graph ops (``_step``, TF's arithmetic) and does not unroll."""

    _cell = ""
    _scope_name = ""
    _forget_bias = 0.0

    def __init__(self, num_units, activation=None, reuse=None, name=None, dtype=None):
        self._num_units = int(num_units)
        self._activation = activation
        self._name = name or self._scope_name
        self._initializer = None
        self.kernel = self.bias = None

    def can_unroll(self):
        return self._activation in (None, tanh)

    def _act(self, x):
        return (self._activation or tanh)(x)

    def _extra_variables(self, dtype):
        """Variables beside kernel and bias, made in the cell's scope (LSTMCell's)."""

    @property
    def _h_depth(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    @property
    def trainable_variables(self):
        return [] if self.kernel is None else [self.kernel, self.bias, *self._extra]

    variables = trainable_variables
    _extra = ()

    def build(self, input_depth, dtype):
        """Make kernel and bias (and the extra variables) under the current variable scope,
        once."""
        if self.kernel is not None:
            return
        width = self._num_units * (4 if self._cell == "lstm" else 1)
        with variable_scope(self._name):
            self.kernel = get_variable("kernel", [input_depth + self._h_depth, width],
                                       dtype=dtype, initializer=self._initializer)
            self.bias = get_variable("bias", [width], dtype=dtype,
                                     initializer=zeros_initializer())
            self._extra = tuple(self._extra_variables(dtype) or ())

    def unroll(self, x, state=None, sequence_length=None):
        """Run over time-major ``x`` [time, batch, depth] as one ``rnn`` op: (every step's
        output, final state). With ``sequence_length``, the final state of each batch entry is
        its state after its last step (its initial state for length 0); outputs past the
        length are left for the caller to mask."""
        x = convert_to_tensor(x)
        self.build(_input_depth(x), x.dtype)
        c0, h0 = (None, None) if state is None else \
            ((None, state) if self._cell == "tanh" else tuple(state))
        h_all, c_all = rnn_states(x, self.kernel, self.bias, self._cell,
                                  forget_bias=self._forget_bias, h0=h0, c0=c0)
        if sequence_length is None:
            h, c = h_all[-1], None if c_all is None else c_all[-1]
        else:
            h = last_step(h_all, sequence_length, h0)
            c = None if c_all is None else last_step(c_all, sequence_length, c0)
        return h_all, (h if self._cell == "tanh" else LSTMStateTuple(c, h))

    def __call__(self, inputs, state, scope=None):
        """One step: ``inputs`` [batch, depth] -> (output, new_state), as a TF cell call."""
        if not self.can_unroll():
            inputs = convert_to_tensor(inputs)
            self.build(_input_depth(inputs), inputs.dtype)
            return self._step(inputs, state)
        h_all, final = self.unroll(expand_dims(inputs, 0), state)
        return h_all[0], final


def _input_depth(x):
    depth = x.shape.dims[-1] if x.shape.ndims else None
    if depth is None:
        raise ValueError(f"The last dimension of the inputs to an RNN cell must be known, got "
                         f"shape {x.shape}")
    return depth


def last_step(all_steps, sequence_length, initial=None):
    """Per batch entry, the entry of time-major ``all_steps`` [time, batch, n] at its step
    ``sequence_length - 1``; ``initial`` (zeros if None) where the length is 0. A sum of one
    value and zeros, so exact."""
    lengths = cast(sequence_length, _dtypes.int32)
    steps = expand_dims(range_(shape(all_steps)[0]), 1)
    picked = cast(equal(steps, expand_dims(lengths - 1, 0)), all_steps.dtype)  # [time, batch]
    out = reduce_sum(all_steps * expand_dims(picked, -1), axis=0)
    if initial is None:
        return out
    return out + initial * expand_dims(cast(equal(lengths, 0), all_steps.dtype), -1)


def step_mask(time, sequence_length):
    """[batch, 1] bool: which batch entries still run at step ``time``."""
    return expand_dims(less(time, cast(sequence_length, _dtypes.int32)), -1)


def valid_steps(time_steps, sequence_length, dtype):
    """[time, batch, 1] of 1.0 where a step lies within its entry's length, else 0.0."""
    lengths = cast(sequence_length, _dtypes.int32)
    inside = less(expand_dims(range_(time_steps), 1), expand_dims(lengths, 0))
    return expand_dims(cast(inside, dtype), -1)


class BasicRNNCell(_FusedCell):
    """h_t = tanh(concat([x_t, h_{t-1}]) @ kernel + bias); the state is h."""

    _cell = "tanh"
    _scope_name = "basic_rnn_cell"

    @property
    def state_size(self):
        return self._num_units

    def _step(self, inputs, state):
        output = self._act(matmul(concat([inputs, state], 1), self.kernel) + self.bias)
        return output, output


class BasicLSTMCell(_FusedCell):
    """TF's BasicLSTMCell (gates i, j, f, o; ``forget_bias`` added to f); the state is
    ``LSTMStateTuple(c, h)``."""

    _cell = "lstm"
    _scope_name = "basic_lstm_cell"

    def __init__(self, num_units, forget_bias=1.0, state_is_tuple=True, activation=None,
                 reuse=None, name=None, dtype=None):
        if not state_is_tuple:
            raise NotImplementedError(f"{type(self).__name__}: only state_is_tuple=True is "
                                      "supported")
        super().__init__(num_units, activation, reuse, name, dtype)
        self._forget_bias = float(forget_bias)

    @property
    def state_size(self):
        return LSTMStateTuple(self._num_units, self._h_depth)

    @property
    def output_size(self):
        return self._h_depth

    def _step(self, inputs, state):
        """TF 1.x's LSTMCell.call: gates i, j, f, o of one matmul; peepholes (w_*_diag * c)
        into i, f and o; c clipped to +-cell_clip; h = o * act(c), projected and clipped."""
        c_prev, m_prev = state
        i, j, f, o = split(matmul(concat([inputs, m_prev], 1), self.kernel) + self.bias, 4,
                           axis=1)
        peep = getattr(self, "_peepholes", None)
        if peep:
            w_f, w_i, w_o = peep
            c = (sigmoid(f + self._forget_bias + w_f * c_prev) * c_prev
                 + sigmoid(i + w_i * c_prev) * self._act(j))
        else:
            c = sigmoid(f + self._forget_bias) * c_prev + sigmoid(i) * self._act(j)
        if getattr(self, "_cell_clip", None) is not None:
            c = clip_by_value(c, -self._cell_clip, self._cell_clip)
        m = sigmoid(o + w_o * c if peep else o) * self._act(c)
        proj = getattr(self, "_proj_kernel", None)
        if proj is not None:
            m = matmul(m, proj)
            if self._proj_clip is not None:
                m = clip_by_value(m, -self._proj_clip, self._proj_clip)
        return m, LSTMStateTuple(c, m)


class LSTMCell(BasicLSTMCell):
    """TF's LSTMCell: BasicLSTMCell's arithmetic in scope ``lstm_cell`` with an optional kernel
    ``initializer``, and TF's options (these run step by step): ``use_peepholes`` (variables
    ``w_f_diag``, ``w_i_diag``, ``w_o_diag``), ``cell_clip``, ``num_proj`` (``projection/kernel``
    [units, num_proj]: the output and h have num_proj units) with ``proj_clip``."""

    _scope_name = "lstm_cell"

    def __init__(self, num_units, use_peepholes=False, cell_clip=None, initializer=None,
                 num_proj=None, proj_clip=None, num_unit_shards=None, num_proj_shards=None,
                 forget_bias=1.0, state_is_tuple=True, activation=None, reuse=None, name=None,
                 dtype=None):
        if num_unit_shards is not None or num_proj_shards is not None:
            raise NotImplementedError("LSTMCell: num_unit_shards and num_proj_shards (deprecated "
                                      "in TF 1.x) are not supported")
        super().__init__(num_units, forget_bias, state_is_tuple, activation, reuse, name, dtype)
        self._initializer = initializer
        self._use_peepholes, self._cell_clip = bool(use_peepholes), cell_clip
        self._num_proj, self._proj_clip = num_proj, proj_clip
        self._peepholes = self._proj_kernel = None

    def can_unroll(self):
        return super().can_unroll() and not self._use_peepholes and self._cell_clip is None \
            and self._num_proj is None

    @property
    def _h_depth(self):
        return self._num_units if self._num_proj is None else int(self._num_proj)

    def _extra_variables(self, dtype):
        n = self._num_units
        if self._use_peepholes:
            self._peepholes = tuple(get_variable(name, [n], dtype=dtype,
                                                 initializer=self._initializer)
                                    for name in ("w_f_diag", "w_i_diag", "w_o_diag"))
        if self._num_proj is not None:
            with variable_scope("projection"):
                self._proj_kernel = get_variable("kernel", [n, self._h_depth], dtype=dtype,
                                                 initializer=self._initializer)
        return [*(self._peepholes or ()), *([self._proj_kernel] if self._num_proj else [])]


class GRUCell(RNNCell):
    """TF's GRUCell::

        r, u = split(sigmoid(concat([x, h]) @ gates/kernel + gates/bias), 2)
        c = tanh(concat([x, r * h]) @ candidate/kernel + candidate/bias)
        h' = u * h + (1 - u) * c

    ``gates/bias`` starts at 1.0 (TF's default), ``candidate/bias`` at 0; the state is h."""

    def __init__(self, num_units, activation=None, reuse=None, kernel_initializer=None,
                 bias_initializer=None, name=None, dtype=None):
        self._num_units = int(num_units)
        self._activation = activation or tanh
        self._kernel_initializer = kernel_initializer
        self._bias_initializer = bias_initializer
        self._name = name or "gru_cell"
        self._vars = None

    @property
    def state_size(self):
        return self._num_units

    @property
    def output_size(self):
        return self._num_units

    @property
    def trainable_variables(self):
        return [] if self._vars is None else list(self._vars)

    variables = trainable_variables

    def build(self, input_depth, dtype):
        if self._vars is not None:
            return
        n, rows = self._num_units, input_depth + self._num_units
        with variable_scope(self._name):
            with variable_scope("gates"):
                gate_kernel = get_variable("kernel", [rows, 2 * n], dtype=dtype,
                                           initializer=self._kernel_initializer)
                gate_bias = get_variable("bias", [2 * n], dtype=dtype, initializer=(
                    self._bias_initializer or constant_initializer(1.0)))
            with variable_scope("candidate"):
                kernel = get_variable("kernel", [rows, n], dtype=dtype,
                                      initializer=self._kernel_initializer)
                bias = get_variable("bias", [n], dtype=dtype,
                                    initializer=self._bias_initializer or zeros_initializer())
        self._vars = (gate_kernel, gate_bias, kernel, bias)

    def __call__(self, inputs, state, scope=None):
        inputs = convert_to_tensor(inputs)
        self.build(_input_depth(inputs), inputs.dtype)
        gate_kernel, gate_bias, kernel, bias = self._vars
        value = sigmoid(matmul(concat([inputs, state], 1), gate_kernel) + gate_bias)
        r, u = split(value, 2, axis=1)
        c = self._activation(matmul(concat([inputs, r * state], 1), kernel) + bias)
        new_h = u * state + (1 - u) * c
        return new_h, new_h


class MultiRNNCell(RNNCell):
    """Cells stacked: layer ``i`` (scope ``multi_rnn_cell/cell_i``) reads the output of layer
    ``i - 1``; the state is the tuple of the layers' states."""

    def __init__(self, cells, state_is_tuple=True):
        if not cells:
            raise ValueError("Must specify at least one cell for MultiRNNCell.")
        if not state_is_tuple:
            raise NotImplementedError("MultiRNNCell: only state_is_tuple=True is supported")
        # As TF: the same cell object given twice is one set of variables used by both layers.
        self._cells = list(cells)

    @property
    def state_size(self):
        return tuple(c.state_size for c in self._cells)

    @property
    def output_size(self):
        return self._cells[-1].output_size

    @property
    def trainable_variables(self):
        return [v for c in self._cells for v in c.trainable_variables]

    variables = trainable_variables

    def _layers(self, state):
        with variable_scope("multi_rnn_cell"):
            for i, cell in enumerate(self._cells):
                with variable_scope(f"cell_{i}"):
                    yield cell, None if state is None else state[i]

    def __call__(self, inputs, state, scope=None):
        new_states = []
        for cell, s in self._layers(state):
            inputs, s = cell(inputs, s)
            new_states.append(s)
        return inputs, tuple(new_states)

    def can_unroll(self):
        return all(can_unroll(c) for c in self._cells)

    def unroll(self, x, state=None, sequence_length=None):
        finals = []
        for cell, s in self._layers(state):
            x, s = cell.unroll(x, s, sequence_length)
            finals.append(s)
        return x, tuple(finals)


def can_unroll(cell) -> bool:
    """Whether ``cell`` runs over a whole sequence at once (``cell.unroll``)."""
    check = getattr(cell, "can_unroll", None)
    return check() if check is not None else hasattr(cell, "unroll")


def _is_one(keep_prob):
    return not isinstance(keep_prob, Tensor) and float(keep_prob) == 1.0


def _default_dropout_state_filter_visitor(substate):
    """TF's default: an LSTM's memory ``c`` is never dropped, its output ``h`` and any other
    state are."""
    if isinstance(substate, LSTMStateTuple):
        return LSTMStateTuple(c=False, h=True)
    return True


def _state_filter(visitor, state):
    """The structure of bools (True: drop out) ``visitor`` gives ``state``, leaf by leaf; a
    visitor's single bool for a tuple holds for all its parts."""
    if isinstance(state, tuple | list) and not isinstance(state, LSTMStateTuple):
        parts = [_state_filter(visitor, s) for s in state]
        return type(state)(*parts) if hasattr(state, "_fields") else type(state)(parts)
    keep = visitor(state)
    if isinstance(state, LSTMStateTuple) and isinstance(keep, bool):
        return LSTMStateTuple(keep, keep)
    return keep


def _enumerated_map(fn, structure):
    """``fn(i, leaf)`` over the leaves of a structure of sizes (ints, tuples, LSTMStateTuples),
    numbered in order, keeping the structure (TF's _enumerated_map_structure_up_to)."""
    counter = iter(range(1 << 30))

    def build(s):
        if isinstance(s, tuple | list):
            parts = [build(p) for p in s]
            return type(s)(*parts) if hasattr(s, "_fields") else type(s)(parts)
        return fn(next(counter), s)

    return build(structure)


class DropoutWrapper(RNNCellWrapper):
    """``cell`` with dropout on its inputs, outputs and (each step) its state, applied only
    where a keep probability is not the constant 1.0 (so ``keep_prob`` may be a placeholder
    fed 1.0 for evaluation). The state filter (``dropout_state_filter_visitor``) by default
    keeps an LSTM's memory ``c`` undropped, as TF's.

    ``variational_recurrent=False``: a fresh ``tf.nn.dropout`` mask every step.
    ``variational_recurrent=True`` (Gal & Ghahramani; TF's): one uniform noise tensor [1, size]
    per input, state and output part, drawn once per ``session.run`` and used at every step and
    for every batch entry: ``value / keep_prob * floor(keep_prob + noise)``. It needs ``dtype``,
    and ``input_size`` when the inputs are dropped."""

    def __init__(self, cell, input_keep_prob=1.0, output_keep_prob=1.0, state_keep_prob=1.0,
                 variational_recurrent=False, input_size=None, dtype=None, seed=None,
                 dropout_state_filter_visitor=None):
        for name, p in (("input", input_keep_prob), ("output", output_keep_prob),
                        ("state", state_keep_prob)):
            if not isinstance(p, Tensor) and not 0.0 < float(p) <= 1.0:
                raise ValueError(f"Parameter {name}_keep_prob must be between 0 and 1: {p}")
        self._cell = cell
        self._keep = (input_keep_prob, output_keep_prob, state_keep_prob)
        self._seed = seed
        self._state_filter = dropout_state_filter_visitor or _default_dropout_state_filter_visitor
        self._variational = bool(variational_recurrent)
        self._noise = [None, None, None]
        if self._variational:
            if dtype is None:
                raise ValueError("When variational_recurrent=True, dtype must be provided")
            if not _is_one(input_keep_prob) and input_size is None:
                raise ValueError("When variational_recurrent=True and input_keep_prob < 1.0 or "
                                 "is unknown, input_size must be provided")
            sizes = (input_size, cell.output_size, cell.state_size)
            for which, salt in enumerate(("input", "output", "state")):
                if sizes[which] is not None:
                    self._noise[which] = _enumerated_map(
                        lambda i, n, salt=salt: random_uniform(
                            [1, int(n)], seed=self._gen_seed(salt, i), dtype=dtype),
                        sizes[which])

    def _gen_seed(self, salt_prefix, index):
        """TF's per-part seed: an md5 of the wrapper's seed, the part's kind and number."""
        if self._seed is None:
            return None
        text = f"{self._seed}{salt_prefix}_{index}"
        return int(hashlib.md5(text.encode()).hexdigest()[:8], 16) & 0x7FFFFFFF

    def _drop(self, values, which, drop=None):
        """Dropout of the structure ``values`` (``which``: 0 inputs, 1 outputs, 2 state) where
        ``drop`` (a structure of bools) says so."""
        keep = self._keep[which]
        if _is_one(keep):
            return values
        salt = ("input", "output", "state")[which]
        drop = _state_filter(lambda _: True, values) if drop is None else drop
        if not self._variational:
            count = iter(range(1 << 30))
            return map_state(lambda v, d: nn_dropout(v, keep_prob=keep, seed=self._gen_seed(
                salt, next(count))) if d else v, values, drop)
        return map_state(lambda v, d, n: v / keep * floor(keep + n) if d else v,
                         values, drop, self._noise[which])

    def __call__(self, inputs, state, scope=None):
        output, new_state = self._cell(self._drop(inputs, 0), state)
        if not _is_one(self._keep[2]):
            new_state = self._drop(new_state, 2, _state_filter(self._state_filter, new_state))
        return self._drop(output, 1), new_state

    def can_unroll(self):
        return _is_one(self._keep[2]) and can_unroll(self._cell)

    def unroll(self, x, state=None, sequence_length=None):
        outputs, final = self._cell.unroll(self._drop(x, 0), state, sequence_length)
        return self._drop(outputs, 1), final


__all__ = ["BasicLSTMCell", "BasicRNNCell", "DropoutWrapper", "GRUCell", "LSTMCell",
           "LSTMStateTuple", "MultiRNNCell", "RNNCell"]
