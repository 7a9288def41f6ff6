"""``tf.train.SessionRunHook`` and the hooks TF1 programs pass to ``Estimator.train``:
``LoggingTensorHook`` and ``StopAtStepHook``.

A hook sees a training loop's life: ``begin`` (the graph may still change),
``after_create_session``, then around each step ``before_run`` (returns ``SessionRunArgs``: more
fetches and feeds for that step's run) and ``after_run`` (sees their values and may
``request_stop``), and ``end``. ``Estimator`` runs them (engine/estimator/estimator.py).
"""

from __future__ import annotations

import collections
import logging
import time

from ..framework.graph import Tensor, get_default_graph
from .global_step import get_global_step

logger = logging.getLogger("engine.train")


class NanLossDuringTrainingError(RuntimeError):
    """``tf.train.NanLossDuringTrainingError``: the training loss became NaN."""

    def __str__(self):
        return "NaN loss during training."


class SessionRunHook:
    """The protocol: every method does nothing unless overridden."""

    def begin(self):
        pass

    def after_create_session(self, session, coord):
        pass

    def before_run(self, run_context):
        return None

    def after_run(self, run_context, run_values):
        pass

    def end(self, session):
        pass


class SessionRunArgs(collections.namedtuple("SessionRunArgs", ["fetches", "feed_dict",
                                                               "options"])):
    """What a hook adds to a step's ``session.run``."""

    def __new__(cls, fetches, feed_dict=None, options=None):
        return super().__new__(cls, fetches, feed_dict, options)


SessionRunValues = collections.namedtuple("SessionRunValues",
                                          ["results", "options", "run_metadata"])


class SessionRunContext:
    """A step as hooks see it: the session, and a way to ask the loop to stop."""

    def __init__(self, original_args, session):
        self.original_args = original_args
        self.session = session
        self._stop_requested = False

    @property
    def stop_requested(self):
        return self._stop_requested

    def request_stop(self):
        self._stop_requested = True


def _graph_element(t):
    if isinstance(t, str):
        return get_default_graph().as_graph_element(t if ":" in t else t + ":0")
    return t._as_graph_element() if hasattr(t, "_as_graph_element") else t


class LoggingTensorHook(SessionRunHook):
    """Logs the values of ``tensors`` (a dict tag -> tensor or name, or a list of them) every
    ``every_n_iter`` steps or ``every_n_secs`` seconds (and at the end with ``at_end``)."""

    def __init__(self, tensors, every_n_iter=None, every_n_secs=None, at_end=False,
                 formatter=None):
        only_end = at_end and every_n_iter is None and every_n_secs is None
        if not only_end and (every_n_iter is None) == (every_n_secs is None):
            raise ValueError("either at_end and/or exactly one of every_n_iter and every_n_secs "
                             "must be provided.")
        if every_n_iter is not None and every_n_iter <= 0:
            raise ValueError(f"invalid every_n_iter={every_n_iter}.")
        if not isinstance(tensors, dict):
            tensors = {t.name if isinstance(t, Tensor) else t: t for t in tensors}
        self._tags = list(tensors)
        self._given = tensors
        self._every_n_iter, self._every_n_secs = every_n_iter, every_n_secs
        self._at_end, self._formatter = at_end, formatter

    def begin(self):
        self._tensors = {tag: _graph_element(t) for tag, t in self._given.items()}
        self._iter = 0
        self._last_time = None

    def _due(self):
        if self._every_n_iter is not None:
            return self._iter % self._every_n_iter == 0
        if self._every_n_secs is not None:
            return self._last_time is None or time.time() - self._last_time >= self._every_n_secs
        return False

    def before_run(self, run_context):
        self._logging = self._due()
        return SessionRunArgs(self._tensors) if self._logging else None

    def after_run(self, run_context, run_values):
        if self._logging:
            self._log(run_values.results)
            self._last_time = time.time()
        self._iter += 1

    def end(self, session):
        if self._at_end:
            self._log(session.run(self._tensors))

    def _log(self, values):
        if self._formatter is not None:
            logger.info(self._formatter(values))
        else:
            logger.info(", ".join(f"{tag} = {values[tag]}" for tag in self._tags))


class StopAtStepHook(SessionRunHook):
    """Asks to stop after ``num_steps`` more steps or at global step ``last_step``."""

    def __init__(self, num_steps=None, last_step=None):
        if (num_steps is None) == (last_step is None):
            raise ValueError("One of num_steps or last_step must be specified.")
        if num_steps is not None and num_steps < 0:
            raise ValueError("num_steps must be non-negative.")
        self._num_steps, self._last_step = num_steps, last_step

    def begin(self):
        self._global_step = get_global_step()
        if self._global_step is None:
            raise RuntimeError("Global step should be created to use StopAtStepHook.")

    def after_create_session(self, session, coord):
        step = int(session.run(self._global_step))
        if self._last_step is None:
            self._last_step = step + self._num_steps
        elif step >= self._last_step:
            logger.info("global_step %d is already at or past last_step %d", step,
                        self._last_step)

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if int(run_values.results) + 1 >= self._last_step:
            if int(run_context.session.run(self._global_step)) >= self._last_step:
                run_context.request_stop()
