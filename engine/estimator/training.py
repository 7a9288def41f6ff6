"""``tf.estimator.train_and_evaluate`` with ``TrainSpec`` and ``EvalSpec``, as TF runs it in one
process: train to ``max_steps``, evaluating after each new checkpoint (at most once per
``throttle_secs``; not the checkpoint training started from) and once more on the last
checkpoint if it was not evaluated yet."""

from __future__ import annotations

import collections
import time

from .estimator import Estimator

_TrainSpec = collections.namedtuple("TrainSpec", ["input_fn", "max_steps", "hooks"])
_EvalSpec = collections.namedtuple("EvalSpec", ["input_fn", "steps", "name", "hooks", "exporters",
                                                "start_delay_secs", "throttle_secs"])


class TrainSpec(_TrainSpec):
    """What ``train_and_evaluate`` trains: ``input_fn`` up to ``max_steps`` with ``hooks``."""

    def __new__(cls, input_fn, max_steps=None, hooks=None):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        return super().__new__(cls, input_fn, max_steps, tuple(hooks or ()))


class EvalSpec(_EvalSpec):
    """What ``train_and_evaluate`` evaluates: ``steps`` batches of ``input_fn`` (None: all)."""

    def __new__(cls, input_fn, steps=100, name=None, hooks=None, exporters=None,
                start_delay_secs=120, throttle_secs=600):
        if not callable(input_fn):
            raise TypeError(f"`input_fn` must be callable, given: {input_fn}")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if throttle_secs < 0:
            raise ValueError(f"Must specify throttle_secs >= 0, given: {throttle_secs}")
        return super().__new__(cls, input_fn, steps, name, tuple(hooks or ()),
                               tuple(exporters or ()), start_delay_secs, throttle_secs)


class _EvaluateAfterSave:
    """A saving listener: evaluate each new checkpoint, throttled (TF's
    _NewCheckpointListenerForEvaluate)."""

    def __init__(self, estimator, eval_spec, start_step):
        self.estimator, self.eval_spec = estimator, eval_spec
        self.start_step = start_step
        self.last_time = None
        self.last_step = None
        self.result = None

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        if global_step_value == self.start_step:
            return
        if self.last_time is not None and \
                time.time() - self.last_time < self.eval_spec.throttle_secs:
            return
        self.evaluate(global_step_value)

    def evaluate(self, step):
        spec = self.eval_spec
        self.result = self.estimator.evaluate(spec.input_fn, steps=spec.steps, name=spec.name,
                                              hooks=spec.hooks)
        self.last_time, self.last_step = time.time(), step


def train_and_evaluate(estimator, train_spec, eval_spec):
    """Train and evaluate (see module doc); returns ``(last evaluation's result, [])`` (no
    exporters run here)."""
    if not isinstance(estimator, Estimator):
        raise TypeError(f"`estimator` must have type `tf.estimator.Estimator`, given "
                        f"{type(estimator)}")
    if not isinstance(train_spec, TrainSpec):
        raise TypeError(f"`train_spec` must have type `tf.estimator.TrainSpec`, given "
                        f"{type(train_spec)}")
    if not isinstance(eval_spec, EvalSpec):
        raise TypeError(f"`eval_spec` must have type `tf.estimator.EvalSpec`, given "
                        f"{type(eval_spec)}")
    start = estimator._checkpoint_step() or 0
    listener = _EvaluateAfterSave(estimator, eval_spec, start)
    estimator.train(train_spec.input_fn, hooks=train_spec.hooks, max_steps=train_spec.max_steps,
                    saving_listeners=[listener])
    final = estimator._checkpoint_step()
    if listener.last_step != final:
        listener.evaluate(final)
    return listener.result, []
