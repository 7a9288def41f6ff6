"""``tf.contrib.seq2seq.Decoder`` and ``dynamic_decode``, as TF 1.15's contrib
(``contrib/seq2seq/python/ops/decoder.py``), on ``tf.while_loop`` and ``tf.TensorArray``.

A decoder says how to start (``initialize``: which batch entries are finished, the first inputs,
the first state) and how to take one step (``step``: outputs, next state, next inputs, finished).
``dynamic_decode`` runs the steps in a while loop until every entry is finished (or
``maximum_iterations``), writing each step's outputs into TensorArrays, and records each entry's
length: the step at which it finished (a decoder that tracks its own finished entries, as the
beam search, gives them in its state's ``lengths``). With ``impute_finished`` the outputs of a
finished entry are zeros and its state is carried through unchanged, so that nothing past its
end reaches the final state or the gradients.
"""

from __future__ import annotations

from ...autodiff.tape import flatten, pack
from ...control_flow.while_loop import while_loop
from ...framework import dtypes as _dtypes
from ...framework.graph import Tensor
from ...framework.tensor_shape import TensorShape
from ...framework.tensor_util import dim_value
from ...ops.array import shape, transpose
from ...ops.comparisons import greater_equal, logical_not, logical_or
from ...ops.core import convert_to_tensor, fill, zeros_like
from ...ops.math import cast
from ...ops.reduce import reduce_all
from ...ops.tensor_array_ops import TensorArray
from ...ops.variables import variable_scope
from ...ops.where import where


class Decoder:
    """A decoder's interface (see the module's doc): ``batch_size``, ``output_size`` and
    ``output_dtype`` (structures matching the step's outputs), ``initialize``, ``step`` and
    optionally ``finalize`` (after the loop: the stacked outputs and final state)."""

    @property
    def batch_size(self):
        raise NotImplementedError

    @property
    def output_size(self):
        raise NotImplementedError

    @property
    def output_dtype(self):
        raise NotImplementedError

    def initialize(self, name=None):
        """(finished, initial_inputs, initial_state)."""
        raise NotImplementedError

    def step(self, time, inputs, state, name=None):
        """(outputs, next_state, next_inputs, finished)."""
        raise NotImplementedError

    def finalize(self, outputs, final_state, sequence_lengths):
        raise NotImplementedError

    @property
    def tracks_own_finished(self):
        """Whether ``step``'s finished flags already include the entries finished before
        (the beam search's beams can move between entries): then dynamic_decode does not or
        them with its own."""
        return False


def transpose_batch_time(x):
    """``x`` with its first two axes swapped (batch-major <-> time-major)."""
    x = convert_to_tensor(x)
    rank = x.shape.ndims
    if rank is None:
        raise ValueError(f"Expected a tensor of known rank to transpose its batch and time "
                         f"axes, got {x.name} of unknown rank")
    if rank < 2:
        return x
    return transpose(x, [1, 0, *range(2, rank)])


def _element_shape(size, batch=None):
    """A TensorArray element's static shape for an output of ``size``: [batch, *size], the
    batch as far as it is known when the graph is built (TF's ``_shape(batch_size, size)``:
    stacking no steps, maximum_iterations=0, then gives [0, batch, *size])."""
    if isinstance(size, TensorShape):
        return TensorShape(None) if size.dims is None else TensorShape([batch, *size.dims])
    if isinstance(size, int):
        return TensorShape([batch, size])
    return TensorShape(None)


def _static_batch(decoder):
    """The decoder's batch size if the graph knows it now (TF: constant_value), else None."""
    size = decoder.batch_size
    return dim_value(size) if isinstance(size, Tensor) else size


def map_structure(fn, *structures):
    """``fn`` over the leaves of structures of one shape (tf.nest.map_structure)."""
    leaves = [flatten(s) for s in structures]
    if any(len(x) != len(leaves[0]) for x in leaves):
        raise ValueError(f"The structures {structures!r} do not match")
    return pack(structures[0], iter([fn(*args) for args in zip(*leaves)]))


def _is_size(x):
    return isinstance(x, int | TensorShape) or x is None


def _map_sizes(fn, sizes, *structures):
    """``fn`` over an output_size structure (whose leaves are ints or TensorShapes, which
    flatten would take apart) and the matching structures."""
    if _is_size(sizes):
        return fn(sizes, *structures)
    if isinstance(sizes, dict):
        return {k: _map_sizes(fn, sizes[k], *(s[k] for s in structures)) for k in sizes}
    items = [_map_sizes(fn, s, *(x[k] for x in structures)) for k, s in enumerate(sizes)]
    return type(sizes)(*items) if hasattr(sizes, "_fields") else type(sizes)(items)


def dynamic_decode(decoder, output_time_major=False, impute_finished=False,
                   maximum_iterations=None, parallel_iterations=32, swap_memory=False,
                   scope=None):
    """Run ``decoder`` to its end (see the module's doc): ``(final_outputs, final_state,
    final_sequence_lengths)``, the outputs batch-major [batch, time, ...] unless
    ``output_time_major``."""
    if not isinstance(decoder, Decoder):
        raise TypeError(f"Expected decoder to be type Decoder, but saw: {type(decoder)}")
    with variable_scope(scope, "decoder"):
        if maximum_iterations is not None:
            maximum_iterations = convert_to_tensor(maximum_iterations, dtype=_dtypes.int32,
                                                   name="maximum_iterations")
            if maximum_iterations.shape.ndims != 0:
                raise ValueError("maximum_iterations must be a scalar")
        initial_finished, initial_inputs, initial_state = decoder.initialize()
        if maximum_iterations is not None:
            initial_finished = logical_or(initial_finished,
                                          greater_equal(0, maximum_iterations))
        initial_lengths = zeros_like(initial_finished, dtype=_dtypes.int32)
        initial_time = convert_to_tensor(0, dtype=_dtypes.int32)
        batch = _static_batch(decoder)
        initial_tas = _map_sizes(
            lambda size, dtype: TensorArray(dtype, size=0, dynamic_size=True,
                                            element_shape=_element_shape(size, batch)),
            decoder.output_size, decoder.output_dtype)

        def condition(time, outputs_ta, state, inputs, finished, lengths):
            return logical_not(reduce_all(finished))

        def body(time, outputs_ta, state, inputs, finished, lengths):
            outputs, decoder_state, next_inputs, decoder_finished = decoder.step(
                time, inputs, state)
            own_lengths = None
            if decoder.tracks_own_finished:
                next_finished = decoder_finished
                own = getattr(decoder_state, "lengths", None)
                if own is not None:
                    own_lengths = cast(own, _dtypes.int32)
            else:
                next_finished = logical_or(decoder_finished, finished)
            if maximum_iterations is not None:
                next_finished = logical_or(next_finished,
                                           greater_equal(time + 1, maximum_iterations))
            if own_lengths is not None:
                next_lengths = own_lengths
            else:
                next_lengths = where(logical_not(finished),
                                     fill(shape(lengths), time + 1), lengths)
            if impute_finished:
                emit = map_structure(lambda out: where(finished, zeros_like(out), out), outputs)
                next_state = map_structure(_copy_through(finished), decoder_state, state)
            else:
                emit, next_state = outputs, decoder_state
            outputs_ta = map_structure(lambda ta, out: ta.write(time, out), outputs_ta, emit)
            return time + 1, outputs_ta, next_state, next_inputs, next_finished, next_lengths

        res = while_loop(condition, body,
                         (initial_time, initial_tas, initial_state, initial_inputs,
                          initial_finished, initial_lengths),
                         parallel_iterations=parallel_iterations,
                         maximum_iterations=maximum_iterations, swap_memory=swap_memory)
        final_state, final_lengths = res[2], res[5]
        final_outputs = map_structure(lambda ta: ta.stack(), res[1])
        try:
            final_outputs, final_state = decoder.finalize(final_outputs, final_state,
                                                          final_lengths)
        except NotImplementedError:
            pass
        if not output_time_major:
            final_outputs = map_structure(transpose_batch_time, final_outputs)
    return final_outputs, final_state, final_lengths


def _copy_through(finished):
    """A finished entry keeps its state (TensorArrays and scalars pass through)."""

    def copy(new, cur):
        if isinstance(cur, TensorArray) or not isinstance(new, Tensor) or new.shape.ndims == 0:
            return new
        return where(finished, cur, new)

    return copy
