"""The hooks TF ships in ``tf.train`` (TF's basic_session_run_hooks.py), for
``MonitoredSession``, ``MonitoredTrainingSession`` and ``Estimator``:

- ``LoggingTensorHook``: logs tensors every N steps or seconds;
- ``StopAtStepHook``: asks to stop at a global step;
- ``CheckpointSaverHook``: saves a checkpoint when the session is made (the state at its global
  step), every N steps or seconds and at the end, through a ``Saver`` (with
  ``CheckpointSaverListener`` s around each save and a ``SessionLog.CHECKPOINT`` event);
- ``SummarySaverHook``: writes the summary op's value at the first step and every N steps or
  seconds, at the global step after the step, with a ``SessionLog.START`` event first;
- ``StepCounterHook``: writes ``global_step/sec`` (and logs it) every N steps or seconds;
- ``NanTensorHook``: stops (``NanLossDuringTrainingError``, or a request to stop) when the loss
  is NaN;
- ``FeedFnHook``: feeds ``feed_fn()`` each step; ``FinalOpsHook``: runs ops at the end.

"Every N steps or seconds" is TF's ``SecondOrStepTimer``: it triggers at the first step it is
asked about, then once N steps (or seconds) have passed since it last triggered.
"""

from __future__ import annotations

import logging
import os
import time

import numpy as np

from ..framework.graph import GraphKeys, Tensor, get_default_graph
from ..summary import FileWriterCache, SessionLog, Summary
from .global_step import get_global_step
from .session_run_hook import NanLossDuringTrainingError, SessionRunArgs, SessionRunHook

logger = logging.getLogger("engine.train")


class SecondOrStepTimer:
    """Triggers every ``every_secs`` seconds or every ``every_steps`` steps (exactly one)."""

    def __init__(self, every_secs=None, every_steps=None):
        if (every_secs is None) == (every_steps is None):
            raise ValueError("Either every_secs or every_steps should be provided.")
        self._every_secs, self._every_steps = every_secs, every_steps
        self.reset()

    def reset(self):
        self._last_time = self._last_step = None

    def should_trigger_for_step(self, step):
        if self._last_step is None:
            return True
        if self._last_step == step:
            return False
        if self._every_secs is not None and time.time() >= self._last_time + self._every_secs:
            return True
        return self._every_steps is not None and step >= self._last_step + self._every_steps

    def update_last_triggered_step(self, step):
        """Remember ``step`` as triggered now; the (seconds, steps) since the last trigger
        (``(None, None)`` the first time)."""
        now = time.time()
        elapsed = (None, None) if self._last_time is None else (
            now - self._last_time, step - self._last_step)
        self._last_time, self._last_step = now, step
        return elapsed

    def last_triggered_step(self):
        return self._last_step


def _require_global_step(hook):
    step = get_global_step()
    if step is None:
        raise RuntimeError(f"Global step should be created to use {hook}.")
    return step


class _EveryNStepsHook(SessionRunHook):
    """A hook that acts when its timer triggers at the global step after a run: it fetches the
    step with each run, reads it again only when the stale value + 1 may trigger (TF's way),
    and calls ``_trigger(run_context, step, (seconds, steps) since the last trigger)``."""

    def before_run(self, run_context):
        return SessionRunArgs(self._global_step)

    def after_run(self, run_context, run_values):
        if self._timer.should_trigger_for_step(int(run_values.results) + 1):
            step = int(run_context.session.run(self._global_step))
            if self._timer.should_trigger_for_step(step):
                self._trigger(run_context, step, self._timer.update_last_triggered_step(step))


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


class CheckpointSaverListener:
    """Called around each save of a ``CheckpointSaverHook``: ``begin``, ``before_save``,
    ``after_save`` (returning True asks training to stop) and ``end``."""

    def begin(self):
        pass

    def before_save(self, session, global_step_value):
        pass

    def after_save(self, session, global_step_value):
        pass

    def end(self, session, global_step_value):
        pass


class CheckpointSaverHook(_EveryNStepsHook):
    """Saves ``checkpoint_dir/checkpoint_basename-STEP`` (see module doc). The saver is
    ``saver``, else ``scaffold.saver``, else the one Saver of the SAVERS collection."""

    def __init__(self, checkpoint_dir, save_secs=None, save_steps=None, saver=None,
                 checkpoint_basename="model.ckpt", scaffold=None, listeners=None):
        if saver is not None and scaffold is not None:
            raise ValueError("You cannot provide both saver and scaffold.")
        self._saver, self._scaffold = saver, scaffold
        self._checkpoint_dir = os.fspath(checkpoint_dir)
        self._save_path = os.path.join(self._checkpoint_dir, checkpoint_basename)
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)
        self._listeners = list(listeners or ())

    def begin(self):
        os.makedirs(self._checkpoint_dir, exist_ok=True)
        self._summary_writer = FileWriterCache.get(self._checkpoint_dir)
        self._global_step = _require_global_step("CheckpointSaverHook")
        for listener in self._listeners:
            listener.begin()

    def after_create_session(self, session, coord):
        step = int(session.run(self._global_step))
        self._summary_writer.add_graph(session.graph)
        self._save(session, step)  # the state at this global step
        self._timer.update_last_triggered_step(step)

    def _trigger(self, run_context, step, elapsed):
        if self._save(run_context.session, step):
            run_context.request_stop()

    def end(self, session):
        step = int(session.run(self._global_step))
        if step != self._timer.last_triggered_step():
            self._save(session, step)
        for listener in self._listeners:
            listener.end(session, step)

    def _save(self, session, step):
        """Save at ``step``; whether a listener asked to stop."""
        logger.info("Saving checkpoints for %d into %s.", step, self._save_path)
        for listener in self._listeners:
            listener.before_save(session, step)
        self._get_saver().save(session, self._save_path, global_step=step)
        self._summary_writer.add_session_log(
            SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path), step)
        stop = False
        for listener in self._listeners:
            stop = bool(listener.after_save(session, step)) or stop
        return stop

    def _get_saver(self):
        if self._saver is not None:
            return self._saver
        if self._scaffold is not None:
            return self._scaffold.saver
        savers = get_default_graph().get_collection(GraphKeys.SAVERS)
        if len(savers) != 1:
            raise RuntimeError(f"CheckpointSaverHook: {'no' if not savers else 'more than one'} "
                               f"item in collection {GraphKeys.SAVERS}: pass saver= or "
                               "scaffold=, or add exactly one Saver to that collection.")
        return savers[0]


class StepCounterHook(_EveryNStepsHook):
    """Writes the steps per second as the summary ``global_step/sec`` (and logs it) every
    ``every_n_steps`` steps or ``every_n_secs`` seconds."""

    def __init__(self, every_n_steps=100, every_n_secs=None, output_dir=None,
                 summary_writer=None):
        if (every_n_steps is None) == (every_n_secs is None):
            raise ValueError("exactly one of every_n_steps and every_n_secs should be provided.")
        self._timer = SecondOrStepTimer(every_steps=every_n_steps, every_secs=every_n_secs)
        self._output_dir, self._summary_writer = output_dir, summary_writer

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._global_step = _require_global_step("StepCounterHook")

    def _trigger(self, run_context, step, elapsed):
        seconds, steps = elapsed
        if seconds is not None and seconds > 0:
            rate = steps / seconds
            if self._summary_writer is not None:
                self._summary_writer.add_summary(Summary(value=[Summary.Value(
                    tag="global_step/sec", simple_value=rate)]), step)
            logger.info("global_step/sec: %g", rate)


class NanTensorHook(SessionRunHook):
    """Checks ``loss_tensor`` after each step: on NaN raises ``NanLossDuringTrainingError``
    (``fail_on_nan_loss``) or logs and asks to stop."""

    def __init__(self, loss_tensor, fail_on_nan_loss=True):
        self._loss_tensor, self._fail_on_nan_loss = loss_tensor, fail_on_nan_loss

    def before_run(self, run_context):
        return SessionRunArgs(self._loss_tensor)

    def after_run(self, run_context, run_values):
        if np.isnan(run_values.results):
            if self._fail_on_nan_loss:
                logger.error("Model diverged with loss = NaN.")
                raise NanLossDuringTrainingError
            logger.warning("Model diverged with loss = NaN. Requesting stop.")
            run_context.request_stop()


class SummarySaverHook(SessionRunHook):
    """Writes ``summary_op`` (or ``scaffold.summary_op``) every ``save_steps`` steps or
    ``save_secs`` seconds to ``output_dir`` (or ``summary_writer``); see module doc."""

    def __init__(self, save_steps=None, save_secs=None, output_dir=None, summary_writer=None,
                 scaffold=None, summary_op=None):
        if (scaffold is None) == (summary_op is None):
            raise ValueError("Exactly one of scaffold or summary_op must be provided.")
        self._summary_op, self._scaffold = summary_op, scaffold
        self._output_dir, self._summary_writer = output_dir, summary_writer
        self._timer = SecondOrStepTimer(every_secs=save_secs, every_steps=save_steps)

    def begin(self):
        if self._summary_writer is None and self._output_dir:
            self._summary_writer = FileWriterCache.get(self._output_dir)
        self._next_step = None
        self._global_step = _require_global_step("SummarySaverHook")

    def _summaries(self):
        op = self._summary_op if self._summary_op is not None else self._scaffold.summary_op
        if op is None:
            return []
        return list(op) if isinstance(op, list | tuple) else [op]

    def before_run(self, run_context):
        self._request_summary = (self._next_step is None or
                                 self._timer.should_trigger_for_step(self._next_step))
        requests = {"global_step": self._global_step}
        if self._request_summary and self._summaries():
            requests["summary"] = self._summaries()
        return SessionRunArgs(requests)

    def after_run(self, run_context, run_values):
        if self._summary_writer is None:
            return
        results = run_values.results
        step = int(results["global_step"]) + 1
        if self._next_step is None or self._request_summary:
            step = int(run_context.session.run(self._global_step))
        if self._next_step is None:
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START), step)
        if self._request_summary:
            self._timer.update_last_triggered_step(step)
            for summary in results.get("summary", ()):
                self._summary_writer.add_summary(summary, step)
        self._next_step = step + 1

    def end(self, session=None):
        if self._summary_writer is not None:
            self._summary_writer.flush()


class FeedFnHook(SessionRunHook):
    """Feeds ``feed_fn()`` (a feed dict) to each step."""

    def __init__(self, feed_fn):
        self.feed_fn = feed_fn

    def before_run(self, run_context):
        return SessionRunArgs(fetches=None, feed_dict=self.feed_fn())


class FinalOpsHook(SessionRunHook):
    """Runs ``final_ops`` (with ``final_ops_feed_dict``) at the end; ``final_ops_values``."""

    def __init__(self, final_ops, final_ops_feed_dict=None):
        self._final_ops, self._feed_dict = final_ops, final_ops_feed_dict
        self._values = None

    @property
    def final_ops_values(self):
        return self._values

    def end(self, session):
        if self._final_ops is not None:
            self._values = session.run(self._final_ops, feed_dict=self._feed_dict)
