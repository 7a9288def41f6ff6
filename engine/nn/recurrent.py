"""Running RNN cells (engine/rnn_cell.py) over sequences, as TF1's ``tf.nn`` does:
``dynamic_rnn``, ``static_rnn``, ``bidirectional_dynamic_rnn`` and ``static_bidirectional_rnn``.

A cell that unrolls (the ``rnn`` op's cells, and stacks or dropout wrappers of them) runs over
the whole sequence at once; any other cell is called step by step: unrolled when the number of
steps is known at graph-build time, else in a ``tf.while_loop`` over TensorArrays. With
``sequence_length``, TF's semantics: past its length a batch
entry's outputs are zeros and its state stays the one after its last step (the initial state
for length 0).

Variable names are TF's: ``rnn/<cell>/...`` (``scope`` replaces ``rnn``), and
``bidirectional_rnn/fw/<cell>/...`` and ``.../bw/...`` for the two directions.
"""

from __future__ import annotations

from ..control_flow.while_loop import while_loop
from ..ops.array import concat, reverse, reverse_sequence, shape, stack, transpose, unstack
from ..ops.core import convert_to_tensor
from ..ops.tensor_array_ops import TensorArray
from ..ops.variables import variable_scope
from ..ops.where import where_v2
from .rnn_cell import can_unroll, map_state, step_mask, valid_steps


def _run(cell, x, initial_state, sequence_length, dtype):
    """Time-major ``x`` [time, batch, depth] through ``cell`` in the current variable scope:
    (outputs [time, batch, out] masked past the lengths, final state)."""
    if not (callable(cell) and all(hasattr(cell, a) for a in
                                   ("state_size", "output_size", "zero_state"))):
        raise TypeError(f"cell must be an instance of RNNCell (state_size, output_size, "
                        f"zero_state and a call), got {type(cell).__name__}")
    if initial_state is None and dtype is None:
        raise ValueError("If there is no initial_state, you must give a dtype.")
    # As TF: steps of rank 1 (ids for an EmbeddingWrapper) for a cell called step by step
    if x.shape.ndims not in (None, 3) and not (x.shape.ndims == 2 and not can_unroll(cell)):
        raise ValueError(f"RNN inputs must be rank 3 ([batch, time, depth] or time-major), got "
                         f"shape {x.shape}")
    if can_unroll(cell):
        outputs, final = cell.unroll(x, initial_state, sequence_length)
    else:
        steps = x.shape.dims[0] if x.shape.ndims else None
        state = initial_state
        if state is None:
            batch = x.shape.dims[1] if x.shape.dims[1] is not None else shape(x)[1]
            state = cell.zero_state(batch, dtype)

        def step(t, x_t, state):
            out, new_state = cell(x_t, state)
            if sequence_length is not None:
                mask = step_mask(t, sequence_length)
                new_state = map_state(lambda n, o, m=mask: where_v2(m, n, o), new_state, state)
            return out, new_state

        if steps is None:
            outputs, final = _loop(step, x, state)
        else:
            outs = []
            for t, x_t in enumerate(unstack(x, num=steps)):
                out, state = step(t, x_t, state)
                outs.append(out)
            outputs, final = stack(outs), state
    if sequence_length is not None:
        outputs = outputs * valid_steps(shape(outputs)[0], sequence_length, outputs.dtype)
    return outputs, final


def _loop(step, x, state):
    """``step`` over the rows of time-major ``x`` whose number of steps is known only when the
    graph runs: a while loop reading the steps from a TensorArray and writing the outputs into
    another (TF's dynamic_rnn)."""
    steps = shape(x)[0]
    inputs = TensorArray(x.dtype, size=steps, element_shape=x.shape[1:]).unstack(x)

    def body(t, state, outputs):
        out, new_state = step(t, inputs.read(t), state)
        return t + 1, new_state, outputs.write(t, out)

    _, final, outputs = while_loop(lambda t, state, outputs: t < steps, body,
                                   (0, state, TensorArray(x.dtype, size=steps)))
    return outputs.stack(), final


def _time_major(inputs, dtype, time_major):
    x = convert_to_tensor(inputs, preferred_dtype=dtype)
    return x if time_major else transpose(x, [1, 0, 2])


def dynamic_rnn(cell, inputs, sequence_length=None, initial_state=None, dtype=None,
                parallel_iterations=None, swap_memory=False, time_major=False, scope=None):
    """Run ``cell`` over ``inputs`` ([batch, time, depth], or [time, batch, depth] with
    ``time_major``); returns (outputs in the inputs' layout, final state)."""
    with variable_scope(scope or "rnn"):
        outputs, final = _run(cell, _time_major(inputs, dtype, time_major), initial_state,
                              sequence_length, dtype)
    return (outputs if time_major else transpose(outputs, [1, 0, 2])), final


def _static(cell, inputs, initial_state, dtype, sequence_length):
    if not isinstance(inputs, list | tuple) or not inputs:
        raise TypeError("inputs must be a non-empty list of [batch, depth] tensors, one per "
                        "time step")
    outputs, final = _run(cell, stack([convert_to_tensor(i, preferred_dtype=dtype)
                                       for i in inputs]), initial_state, sequence_length, dtype)
    return unstack(outputs, num=len(inputs)), final


def static_rnn(cell, inputs, initial_state=None, dtype=None, sequence_length=None, scope=None):
    """Run ``cell`` over ``inputs``, a list of [batch, depth] tensors (one per step); returns
    (a list of outputs, final state)."""
    with variable_scope(scope or "rnn"):
        return _static(cell, inputs, initial_state, dtype, sequence_length)


def _reverse_time(x, sequence_length, seq_axis, batch_axis):
    if sequence_length is None:
        return reverse(x, [seq_axis])
    return reverse_sequence(x, sequence_length, seq_axis=seq_axis, batch_axis=batch_axis)


def bidirectional_dynamic_rnn(cell_fw, cell_bw, inputs, sequence_length=None,
                              initial_state_fw=None, initial_state_bw=None, dtype=None,
                              parallel_iterations=None, swap_memory=False, time_major=False,
                              scope=None):
    """A forward and a backward ``dynamic_rnn``: the backward one reads each entry's first
    ``sequence_length`` steps in reverse. Returns ((output_fw, output_bw), (state_fw,
    state_bw)), both outputs in the inputs' order of time."""
    with variable_scope(scope or "bidirectional_rnn"):
        x = _time_major(inputs, dtype, time_major)
        with variable_scope("fw"):
            out_fw, state_fw = _run(cell_fw, x, initial_state_fw, sequence_length, dtype)
        with variable_scope("bw"):
            x_bw = _reverse_time(x, sequence_length, 0, 1)
            out_bw, state_bw = _run(cell_bw, x_bw, initial_state_bw, sequence_length, dtype)
        out_bw = _reverse_time(out_bw, sequence_length, 0, 1)
    if not time_major:
        out_fw, out_bw = transpose(out_fw, [1, 0, 2]), transpose(out_bw, [1, 0, 2])
    return (out_fw, out_bw), (state_fw, state_bw)


def static_bidirectional_rnn(cell_fw, cell_bw, inputs, initial_state_fw=None,
                             initial_state_bw=None, dtype=None, sequence_length=None,
                             scope=None):
    """``static_rnn`` forward and backward; returns (a list of ``concat([fw, bw], 1)`` per
    step, state_fw, state_bw)."""
    with variable_scope(scope or "bidirectional_rnn"):
        with variable_scope("fw"):
            out_fw, state_fw = _static(cell_fw, inputs, initial_state_fw, dtype,
                                       sequence_length)
        with variable_scope("bw"):
            reversed_inputs = unstack(_reverse_time(stack(list(inputs)), sequence_length, 0, 1),
                                      num=len(inputs))
            tmp, state_bw = _static(cell_bw, reversed_inputs, initial_state_bw, dtype,
                                    sequence_length)
    out_bw = unstack(_reverse_time(stack(tmp), sequence_length, 0, 1), num=len(inputs))
    return [concat([f, b], 1) for f, b in zip(out_fw, out_bw)], state_fw, state_bw
