"""``GradientTape``: reverse-mode autodiff over recorded ops, with the registry's gradient rules.

Eagerly (TF2), while a tape is active (inside its ``with`` block) the eager context shows it
every op it runs (see framework/eager.py). The tape keeps an op, as (type, name, attrs, inputs, outputs),
when one of the op's inputs is *watched*: a tensor given to ``watch``, a trainable variable the
block reads (unless ``watch_accessed_variables=False``), or an output of an op the tape kept. A
variable read is kept as an Identity from the variable to a snapshot of its value, so the rules
see the values the forward pass used even if the variable changes before ``gradient`` is called.

In graph mode (TF 1.15's tape inside a graph) the tape keeps, by the same rule, the graph ops
made in its block; ``gradient`` then adds the gradient ops to that graph and returns tensors to
run in a session.

``gradient`` replays the kept ops backwards through ``gradients.backprop``, the loop
``tf.gradients`` uses: each op's registered gradient rule runs unchanged (eagerly, or adding
graph ops), since rules are written with public functions. A source that was never watched, or
that no target depends on, gets None (or zeros with ``unconnected_gradients="zero"``). Gradient
ops made while other tapes record are recorded by them, which gives higher-order derivatives
with nested tapes.
"""

from __future__ import annotations

import contextlib

import numpy as np

from ..framework.eager import EAGER, eager_mode, executing_eagerly, recording_tapes
from ..framework.graph import Tensor, get_default_graph
from ..framework.registry import get_op
from ..ops.array import reshape, stack, transpose
from ..ops.core import constant, convert_to_tensor, ones_like, zeros_like
from .gradients import UnconnectedGradients, aggregate, backprop, check_grad_y, differentiable


class _Recorded:
    """An op the tape kept, with the interface gradient rules use (type, attrs, inputs...)."""

    __slots__ = ("type", "name", "attrs", "inputs", "outputs", "_gradient_function")
    graph = EAGER
    control_inputs = ()

    def __init__(self, op_type, name, attrs, inputs, outputs, gradient_function=None):
        self.type, self.name, self.attrs = op_type, name, attrs
        self.inputs, self.outputs = list(inputs), list(outputs)
        self._gradient_function = gradient_function  # custom_gradient's rule for this op

    def get_attr(self, name):
        return self.attrs[name]

    @property
    def op_def(self):
        return get_op(self.type)

    def __repr__(self):
        return f"<recorded op '{self.name}' type={self.type}>"


class GradientTape:
    """Record ops in a ``with`` block, then ``gradient(target, sources)``.

    Under eager execution the tape keeps the eager ops the eager context shows it (see the
    module doc). In graph mode (TF 1.15's tape in a graph) it records the ops made in its graph
    during the block that read something watched, and ``gradient`` adds gradient ops to that
    graph: it returns tensors to run in a session, made with the rules ``tf.gradients`` uses.

    ``persistent=True`` allows several ``gradient`` calls (a plain tape is used up by its first
    and stops recording then; entering it again starts a new recording);
    ``watch_accessed_variables=False`` watches only what ``watch`` is given.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._records: list = []
        self._watched: set = set()
        self._variables: list = []  # watched variables, in the order first watched
        self._recording = False
        self._used = False
        self._graph = None  # graph mode: the graph whose ops are recorded (None: eager)
        self._scanned = 0  # graph mode: how many of its ops were looked at

    # -- context -----------------------------------------------------------------------------
    def __enter__(self):
        self._graph = None if executing_eagerly() else get_default_graph()
        self._start()
        return self

    def __exit__(self, *exc):
        if self._recording:
            self._stop()
        return False

    def _start(self):
        if self._recording:
            raise ValueError("Tape is still recording, This can happen if you try to re-enter "
                             "an already-active tape.")
        if self._used:  # a used-up tape entered again records anew, as TF's
            self._used = False
            self.reset()
        if self._graph is None:
            recording_tapes().append(self)
        else:
            self._scanned = len(self._graph._ops)
        self._recording = True

    def _stop(self):
        if self._graph is None:
            tapes = recording_tapes()
            for i in range(len(tapes) - 1, -1, -1):
                if tapes[i] is self:
                    del tapes[i]
                    break
        else:
            self._sync()
        self._recording = False

    def _sync(self):
        """Graph mode: record the graph's ops made since the last look (while recording)."""
        if self._graph is None or not self._recording:
            return
        ops = self._graph._ops
        for op in ops[self._scanned:]:
            if self._should_record(op.inputs):
                self._records.append(op)
                self._watched.update(op.outputs)
        self._scanned = len(ops)

    @contextlib.contextmanager
    def stop_recording(self):
        """Ops in this block are not recorded by this tape."""
        if not self._recording:
            raise ValueError("Tape is not recording.")
        self._stop()
        try:
            yield
        finally:
            self._start()

    def reset(self):
        """Forget everything recorded and watched (the tape keeps recording if it was)."""
        self._records, self._watched, self._variables = [], set(), []
        if self._graph is not None:
            self._scanned = len(self._graph._ops)

    # -- watching and recording (called by the eager context) --------------------------------
    def watch(self, tensor):
        """Watch a tensor or variable (or a nested list/tuple/dict of them)."""
        self._sync()
        for t in flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not "
                                 "tf.Tensor or tf.Variable.")
            if t.op.type == "VariableV2":
                self._watch_variable(t)
            else:
                self._watched.add(t)

    def watched_variables(self):
        """The variables watched so far, in the order they were first watched (after a
        non-persistent tape's ``gradient``: those it had watched)."""
        self._sync()
        return tuple(self._variables)

    def _watch_variable(self, var):
        if var not in self._watched:
            self._watched.add(var)
            self._variables.append(var)

    def _watches(self, t) -> bool:
        if t in self._watched:
            return True
        if self._watch_accessed_variables and t.op.type == "VariableV2" and t.trainable:
            self._watch_variable(t)
            return True
        return False

    def _should_record(self, inputs) -> bool:
        return any([self._watches(t) for t in inputs])  # each: reading a variable watches it

    def _record(self, op_type, name, attrs, inputs, outputs, gradient_function=None):
        self._records.append(_Recorded(op_type, name, attrs, inputs, outputs, gradient_function))
        self._watched.update(outputs)

    # -- differentiation ---------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of targets weighted by output_gradients)/d(source), in the structure of sources.

        ``target`` and ``sources`` are tensors/variables or nested lists, tuples and dicts of
        them; ``output_gradients`` gives one weight (or None: ones) per target.
        """
        unconnected = self._begin_differentiation(unconnected_gradients)
        targets, flat_sources = flatten(target), flatten(sources)
        for what, items in (("target", targets), ("sources", flat_sources)):
            for t in items:
                if not isinstance(t, Tensor):
                    raise TypeError(f"{what} must be tensors or variables (or nested lists of "
                                    f"them), got {t!r}")
        weights = [None] * len(targets) if output_gradients is None else flatten(output_gradients)
        if len(weights) != len(targets):
            raise ValueError(f"Length mismatch: {len(weights)} output_gradients for "
                             f"{len(targets)} targets")
        with self._building():
            grads = self._backward(targets, weights, flat_sources, unconnected)
        self._end_differentiation()
        return pack(sources, iter(grads))

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...] for each source (nested as ``sources``), of shape
        ``target.shape + source.shape``: one backward pass per element of ``target``, each
        seeded with that element's one-hot (TF vectorizes them with pfor; the values agree)."""
        if not isinstance(target, Tensor):
            raise TypeError(f"target must be a tensor or variable, got {target!r}")
        self._check_loop_allowed(experimental_use_pfor)
        unconnected = self._begin_differentiation(unconnected_gradients)
        flat_sources = flatten(sources)
        target_shape = _static_shape(target, "jacobian")
        with self._building():
            columns = self._one_hot_passes(target, target_shape, (), flat_sources, unconnected)
            out = []
            for s, column in zip(flat_sources, columns):
                shape = target_shape + _static_shape(s, "jacobian")
                out.append(column if column is None else reshape(column, shape))
        self._end_differentiation()
        return pack(sources, iter(out))

    def batch_jacobian(self, target, source, unconnected_gradients=UnconnectedGradients.NONE,
                       parallel_iterations=None, experimental_use_pfor=True):
        """d target[b, i...] / d source[b, j...] of shape ``[B] + target.shape[1:] +
        source.shape[1:]``, for a target whose row b depends on row b of ``source`` only (as
        TF assumes): one backward pass per element of a row, seeded in every row at once."""
        t_dims, s_dims = target.shape.dims, source.shape.dims
        if (t_dims is None or s_dims is None or len(t_dims) < 2 or len(s_dims) < 2
                or not target.shape[:1].is_compatible_with(source.shape[:1])):
            raise ValueError(f"Need first dimension of target shape ({target.shape}) and source "
                             f"shape ({source.shape}) to match (both of rank 2 or more).")
        self._check_loop_allowed(experimental_use_pfor)
        unconnected = self._begin_differentiation(unconnected_gradients)
        t_shape, s_shape = _static_shape(target, "batch_jacobian"), _static_shape(
            source, "batch_jacobian")
        with self._building():
            (column,) = self._one_hot_passes(target, t_shape[1:], t_shape[:1], [source],
                                             unconnected)
            if column is not None:  # [row elements, B, source row...] -> [B, row..., source...]
                rank = len(s_shape)
                column = transpose(column, [1, 0] + list(range(2, rank + 1)))
                column = reshape(column, t_shape + s_shape[1:])
        self._end_differentiation()
        return column

    def _one_hot_passes(self, target, inner, batch, sources, unconnected):
        """For each source, the backward passes seeded by each one-hot of ``inner`` (repeated
        over the leading ``batch`` dims of target) stacked on a new first axis; None where no
        source depends on target."""
        n = int(np.prod(inner, dtype=np.int64))
        rows = []
        for i in range(n):
            seed = np.zeros((int(np.prod(batch, dtype=np.int64)), n), target.dtype.np)
            seed[:, i] = 1
            rows.append(self._backward([target], [constant(seed.reshape(batch + inner))],
                                       sources, unconnected))
        columns = []
        for k, s in enumerate(sources):
            if rows and rows[0][k] is None:
                columns.append(None)
            elif rows:
                columns.append(stack([r[k] for r in rows]))
            else:  # an empty target: an empty jacobian
                columns.append(constant(np.zeros((0,) + _static_shape(s, "jacobian"), s.dtype.np)))
        return columns

    def _check_loop_allowed(self, experimental_use_pfor):
        if not experimental_use_pfor and self._graph is None and not self._persistent:
            raise RuntimeError("GradientTape must be created with persistent=True to compute "
                               "the jacobian with eager execution enabled and with "
                               "experimental_use_pfor set to False.")

    def _begin_differentiation(self, unconnected_gradients):
        """TF's checks before a gradient or jacobian; a plain tape stops recording here."""
        if self._used:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
        if unconnected not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
            raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
        if self._recording and not self._persistent:
            self._stop()
        self._sync()
        return unconnected

    def _end_differentiation(self):
        """A plain tape is used up: it forgets its records (but still tells which variables it
        watched, as TF's)."""
        if not self._persistent:
            self._used = True
            self._records, self._watched = [], set()

    def _building(self):
        """Where gradient ops go: the eager context, or the recorded graph."""
        return eager_mode() if self._graph is None else self._graph.as_default()

    def _backward(self, targets, weights, sources, unconnected):
        accumulated: dict = {}
        for i, (y, w) in enumerate(zip(targets, weights)):
            if w is None:
                g = ones_like(y)
            else:
                g = convert_to_tensor(w, preferred_dtype=y.dtype)
                check_grad_y(y, g, i)
            accumulated.setdefault(y, []).append(g)
        reached = {s for s in sources if s in self._watched}
        for rec in self._records:
            if any(t in reached for t in rec.inputs):
                reached.update(rec.outputs)
        ops = [rec for rec in reversed(self._records) if any(t in reached for t in rec.inputs)]
        backprop(ops, accumulated, reached.__contains__)
        grads = []
        for s in sources:
            g = aggregate(accumulated, s) if s in reached and differentiable(s) else None
            if g is None and unconnected == UnconnectedGradients.ZERO:
                g = zeros_like(s)
            grads.append(g)
        return grads


def _static_shape(t, what):
    """The static shape of ``t`` as a tuple; a jacobian in a graph needs it known."""
    if not t.shape.is_fully_defined():
        raise ValueError(f"{what} needs the static shape of {t.name}, which is {t.shape}")
    return tuple(int(d) for d in t.shape.dims)


# -- nested structures ---------------------------------------------------------------------


def flatten(x):
    """Leaves of nested lists, tuples and dicts (dicts in sorted key order, as tf.nest)."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in flatten(x[k])]
    if isinstance(x, list | tuple):
        return [leaf for item in x for leaf in flatten(item)]
    return [x]


def pack(structure, leaves):
    """``structure`` with its leaves replaced, in order, from the iterator ``leaves``."""
    if isinstance(structure, dict):
        packed = {k: pack(structure[k], leaves) for k in sorted(structure)}
        return type(structure)((k, packed[k]) for k in structure)
    if isinstance(structure, list | tuple):
        items = [pack(item, leaves) for item in structure]
        if hasattr(structure, "_fields"):
            return type(structure)(*items)
        return type(structure)(items)
    return next(leaves)
