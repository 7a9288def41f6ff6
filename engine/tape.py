"""``GradientTape``: TF2's reverse-mode autodiff over eager ops, with the registry's gradient rules.

While a tape is active (inside its ``with`` block) the eager context shows it every op it runs
(see eager.py). The tape keeps an op, as (type, name, attrs, inputs, outputs), when one of the
op's inputs is *watched*: a tensor given to ``watch``, a trainable variable the block reads
(unless ``watch_accessed_variables=False``), or an output of an op the tape kept. A variable
read is kept as an Identity from the variable to a snapshot of its value, so the rules see the
values the forward pass used even if the variable changes before ``gradient`` is called.

``gradient`` replays the kept ops backwards through ``gradients.backprop``, the loop
``tf.gradients`` uses: each op's registered gradient rule runs unchanged, eagerly, since rules
are written with public functions. A source that was never watched, or that no target depends
on, gets None (or zeros with ``unconnected_gradients="zero"``). Gradient ops run while other
tapes are active are recorded by them, which gives higher-order derivatives with nested tapes.
"""

from __future__ import annotations

import contextlib

import numpy as np

from .eager import EAGER, eager_mode, executing_eagerly, recording_tapes
from .gradients import UnconnectedGradients, _aggregate, _check_grad_y, _differentiable, backprop
from .graph import Tensor
from .ops.core import convert_to_tensor, ones_like, zeros_like
from .ops.registry import get_op


class _Recorded:
    """An op the tape kept, with the interface gradient rules use (type, attrs, inputs...)."""

    __slots__ = ("type", "name", "attrs", "inputs", "outputs")
    graph = EAGER
    control_inputs = ()

    def __init__(self, op_type, name, attrs, inputs, outputs):
        self.type, self.name, self.attrs = op_type, name, attrs
        self.inputs, self.outputs = list(inputs), list(outputs)

    def get_attr(self, name):
        return self.attrs[name]

    @property
    def op_def(self):
        return get_op(self.type)

    def __repr__(self):
        return f"<recorded op '{self.name}' type={self.type}>"


class GradientTape:
    """Record eager ops in a ``with`` block, then ``gradient(target, sources)``.

    ``persistent=True`` allows several ``gradient`` calls (a plain tape is used up by its first
    and stops recording then); ``watch_accessed_variables=False`` watches only what ``watch`` is
    given. Needs eager execution (``tf.enable_eager_execution()`` or ``with tf.eager_mode():``);
    graphs are differentiated with ``tf.gradients``.
    """

    def __init__(self, persistent=False, watch_accessed_variables=True):
        self._persistent = bool(persistent)
        self._watch_accessed_variables = bool(watch_accessed_variables)
        self._records: list[_Recorded] = []
        self._watched: set = set()
        self._variables: list = []  # watched variables, in the order first watched
        self._recording = False
        self._used = False

    # -- context -----------------------------------------------------------------------------
    def __enter__(self):
        if not executing_eagerly():
            raise RuntimeError(
                "GradientTape records eager ops: enable eager execution first "
                "(tf.enable_eager_execution() or `with tf.eager_mode():`); a graph is "
                "differentiated with tf.gradients.")
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
        recording_tapes().append(self)
        self._recording = True

    def _stop(self):
        tapes = recording_tapes()
        for i in range(len(tapes) - 1, -1, -1):
            if tapes[i] is self:
                del tapes[i]
                break
        self._recording = False

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

    # -- watching and recording (called by the eager context) --------------------------------
    def watch(self, tensor):
        """Watch a tensor or variable (or a nested list/tuple/dict of them)."""
        for t in _flatten(tensor):
            if not isinstance(t, Tensor):
                raise ValueError(f"Passed in object {t!r} of type {type(t).__name__!r}, not "
                                 "tf.Tensor or tf.Variable.")
            if t.op.type == "VariableV2":
                self._watch_variable(t)
            else:
                self._watched.add(t)

    def watched_variables(self):
        """The variables watched so far, in the order they were first watched."""
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
        return any(self._watches(t) for t in inputs)

    def _record(self, op_type, name, attrs, inputs, outputs):
        self._records.append(_Recorded(op_type, name, attrs, inputs, outputs))
        self._watched.update(outputs)

    # -- differentiation ---------------------------------------------------------------------
    def gradient(self, target, sources, output_gradients=None,
                 unconnected_gradients=UnconnectedGradients.NONE):
        """d(sum of targets weighted by output_gradients)/d(source), in the structure of sources.

        ``target`` and ``sources`` are tensors/variables or nested lists, tuples and dicts of
        them; ``output_gradients`` gives one weight (or None: ones) per target.
        """
        if self._used:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
        if unconnected not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
            raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
        if self._recording and not self._persistent:
            self._stop()
        targets, flat_sources = _flatten(target), _flatten(sources)
        for what, items in (("target", targets), ("sources", flat_sources)):
            for t in items:
                if not isinstance(t, Tensor):
                    raise TypeError(f"{what} must be tensors or variables (or nested lists of "
                                    f"them), got {t!r}")
        weights = [None] * len(targets) if output_gradients is None else _flatten(output_gradients)
        if len(weights) != len(targets):
            raise ValueError(f"Length mismatch: {len(weights)} output_gradients for "
                             f"{len(targets)} targets")
        with eager_mode():
            grads = self._backward(targets, weights, flat_sources, unconnected)
        if not self._persistent:
            self._used = True
            self.reset()
        return _pack(sources, iter(grads))

    def jacobian(self, target, sources, unconnected_gradients=UnconnectedGradients.NONE,
                 parallel_iterations=None, experimental_use_pfor=True):
        """d target[i...] / d source[j...] for each source (nested as ``sources``), of shape
        ``target.shape + source.shape``: one backward pass per element of ``target``, each
        seeded with that element's one-hot (TF vectorizes them with pfor; the values agree)."""
        if self._used:
            raise RuntimeError("A non-persistent GradientTape can only be used to compute one "
                               "set of gradients (or jacobians)")
        if self._recording and not self._persistent:
            self._stop()
        unconnected = getattr(unconnected_gradients, "value", unconnected_gradients)
        if unconnected not in (UnconnectedGradients.NONE, UnconnectedGradients.ZERO):
            raise ValueError(f"Unknown value for unconnected_gradients: {unconnected_gradients!r}")
        if not isinstance(target, Tensor):
            raise TypeError(f"target must be a tensor or variable, got {target!r}")
        flat_sources = _flatten(sources)
        with eager_mode():
            y = np.asarray(target.numpy())
            rows = []
            for i in range(y.size):
                seed = np.zeros(y.size, y.dtype)
                seed[i] = 1
                rows.append(self._backward([target], [seed.reshape(y.shape)], flat_sources,
                                           unconnected))
            out = []
            for k, s in enumerate(flat_sources):
                if rows and rows[0][k] is None:
                    out.append(None)
                    continue
                shape = tuple(y.shape) + tuple(np.shape(s.numpy()))
                values = [np.asarray(r[k].numpy()) for r in rows]
                dtype = values[0].dtype if values else s.dtype.np
                out.append(convert_to_tensor(np.array(values, dtype).reshape(shape)))
        if not self._persistent:
            self._used = True
            self.reset()
        return _pack(sources, iter(out))

    def _backward(self, targets, weights, sources, unconnected):
        accumulated: dict = {}
        for i, (y, w) in enumerate(zip(targets, weights)):
            if w is None:
                g = ones_like(y)
            else:
                g = convert_to_tensor(w, preferred_dtype=y.dtype)
                _check_grad_y(y, g, i)
            accumulated.setdefault(y, []).append(g)
        reached = {s for s in sources if s in self._watched}
        for rec in self._records:
            if any(t in reached for t in rec.inputs):
                reached.update(rec.outputs)
        ops = [rec for rec in reversed(self._records) if any(t in reached for t in rec.inputs)]
        backprop(ops, accumulated, reached.__contains__)
        grads = []
        for s in sources:
            g = _aggregate(accumulated, s) if s in reached and _differentiable(s) else None
            if g is None and unconnected == UnconnectedGradients.ZERO:
                g = zeros_like(s)
            grads.append(g)
        return grads


# -- nested structures ---------------------------------------------------------------------


def _flatten(x):
    """Leaves of nested lists, tuples and dicts (dicts in sorted key order, as tf.nest)."""
    if isinstance(x, dict):
        return [leaf for k in sorted(x) for leaf in _flatten(x[k])]
    if isinstance(x, list | tuple):
        return [leaf for item in x for leaf in _flatten(item)]
    return [x]


def _pack(structure, leaves):
    """``structure`` with its leaves replaced, in order, from the iterator ``leaves``."""
    if isinstance(structure, dict):
        packed = {k: _pack(structure[k], leaves) for k in sorted(structure)}
        return type(structure)((k, packed[k]) for k in structure)
    if isinstance(structure, list | tuple):
        items = [_pack(item, leaves) for item in structure]
        if hasattr(structure, "_fields"):
            return type(structure)(*items)
        return type(structure)(items)
    return next(leaves)
