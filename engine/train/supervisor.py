"""``tf.train.Supervisor``: TF 1.x's older training helper, as tutorials use it::

    sv = tf.train.Supervisor(logdir="/tmp/run", save_model_secs=60)
    with sv.managed_session() as sess:
        while not sv.should_stop():
            sess.run(train_op)
        sv.saver.save(sess, sv.save_path, global_step=sv.global_step)

The constructor fills in what is not given (``init_op``, ``local_init_op``, ``summary_op``,
``saver``, ``global_step``: the collections' items or TF's defaults, as ``Scaffold`` does; the
``summary_writer`` of ``logdir`` for the chief) and finalizes the graph. A session is prepared
by restoring the latest checkpoint of ``logdir``, else running ``init_op`` (with
``init_feed_dict``) and ``init_fn(sess)``; then ``local_init_op``. The standard services (the
chief with a ``logdir``) write the graph and a ``SessionLog.START``, then save a checkpoint
every ``save_model_secs`` and the summary op's value and ``global_step/sec`` every
``save_summaries_secs``, each first when the session starts.

``managed_session()`` closes the session and stops the services at the end of the block; an
``OutOfRangeError`` there is a clean stop, other errors are raised again.

Difference from TF: the services run when the program asks ``should_stop()`` (and at the
start), not in background threads, so their reads never interleave with a training step; a
loop that never asks gets the first checkpoint and summary only. ``sv.coord`` is a
``tf.train.Coordinator``; the graph's queue runners start with the session (they fill their
queues on demand, see ``queue_runner.py``); ``sv.loop(secs, target)`` calls ``target`` at once
and then, like the services, every ``secs`` seconds when ``should_stop()`` is asked (TF's
``LooperThread`` calls it from a thread), an exception in it stopping the supervisor with it.
"""

from __future__ import annotations

import contextlib
import os
import time

from ..framework.graph import GraphKeys, get_default_graph
from ..ops.variables import global_variables_initializer
from ..runtime.session import Session
from ..summary import FileWriter, SessionLog, Summary, merge_all
from .checkpoint_management import latest_checkpoint
from .coordinator import Coordinator
from .global_step import get_global_step
from .monitored_session import SUMMARY_OP, USE_DEFAULT, Scaffold, default_local_init_op
from .queue_runner import start_queue_runners
from .saver import Saver


class _Every:
    """Due at the first check, then every ``secs`` seconds."""

    def __init__(self, secs):
        self.secs, self.last = secs, None

    def due(self):
        now = time.time()
        if self.last is None or now - self.last >= self.secs:
            self.last = now
            return True
        return False


class _Looper:
    """What ``Supervisor.loop`` returns: TF's ``LooperThread`` API (``join``, ``is_alive``)
    over a target the supervisor calls as a service; an exception in the target requests a
    stop with it, as TF's thread does."""

    def __init__(self, coord, timer_interval_secs, target, args, kwargs):
        self._coord, self.timer_interval_secs = coord, timer_interval_secs
        self._target, self._args, self._kwargs = target, tuple(args or ()), dict(kwargs or {})
        self.name = f"LooperThread-{getattr(target, '__name__', 'target')}"

    def run_loop(self, _sess):
        if not self._coord.should_stop():
            with self._coord.stop_on_exception():
                self._target(*self._args, **self._kwargs)

    def is_alive(self):
        return not self._coord.should_stop()

    def join(self, timeout=None):
        """Returns at once: no thread runs the target."""


class Supervisor:
    """``tf.train.Supervisor`` (see module doc)."""

    USE_DEFAULT = USE_DEFAULT

    def __init__(self, graph=None, ready_op=USE_DEFAULT, ready_for_local_init_op=USE_DEFAULT,
                 is_chief=True, init_op=USE_DEFAULT, init_feed_dict=None,
                 local_init_op=USE_DEFAULT, logdir=None, summary_op=USE_DEFAULT,
                 saver=USE_DEFAULT, global_step=USE_DEFAULT, save_summaries_secs=120,
                 save_model_secs=600, recovery_wait_secs=30, stop_grace_secs=120,
                 checkpoint_basename="model.ckpt", session_manager=None,
                 summary_writer=USE_DEFAULT, init_fn=None, local_init_run_options=None):
        self._graph = graph or get_default_graph()
        with self._graph.as_default():
            self._init_op = Scaffold.get_or_default(
                "init_op", GraphKeys.INIT_OP, global_variables_initializer) \
                if init_op is USE_DEFAULT else init_op
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, default_local_init_op) \
                if local_init_op is USE_DEFAULT else local_init_op
            self._summary_op = Scaffold.get_or_default("summary_op", SUMMARY_OP, merge_all) \
                if summary_op is USE_DEFAULT else summary_op
            self._saver = Scaffold.get_or_default("saver", GraphKeys.SAVERS, Saver) \
                if saver is USE_DEFAULT else saver
            self._global_step = get_global_step() if global_step is USE_DEFAULT \
                else global_step
        self._is_chief, self._logdir = is_chief, logdir
        self._init_feed_dict, self._init_fn = init_feed_dict, init_fn
        self._save_summaries_secs, self._save_model_secs = save_summaries_secs, save_model_secs
        self._save_path = os.path.join(logdir, checkpoint_basename) if logdir else None
        if summary_writer is USE_DEFAULT:
            summary_writer = FileWriter(logdir) if logdir and is_chief else None
        self._summary_writer = summary_writer
        self._coord = Coordinator()
        self._services = []
        self._graph.finalize()

    is_chief = property(lambda self: self._is_chief)
    coord = property(lambda self: self._coord)
    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    summary_writer = property(lambda self: self._summary_writer)
    saver = property(lambda self: self._saver)
    global_step = property(lambda self: self._global_step)
    save_path = property(lambda self: self._save_path)
    save_model_secs = property(lambda self: self._save_model_secs)
    save_summaries_secs = property(lambda self: self._save_summaries_secs)

    # -- the session -----------------------------------------------------------------------
    def prepare_or_wait_for_session(self, master="", config=None, wait_for_checkpoint=False,
                                    max_wait_secs=7200, start_standard_services=True):
        """A session with the model restored from ``logdir`` or initialized."""
        self._coord.clear_stop()
        sess = Session(master, graph=self._graph, config=config)
        checkpoint = latest_checkpoint(self._logdir) if self._logdir else None
        if checkpoint is not None and self._saver is not None:
            self._saver.restore(sess, checkpoint)
        else:
            if self._init_op is not None:
                sess.run(self._init_op, feed_dict=self._init_feed_dict)
            if self._init_fn is not None:
                self._init_fn(sess)
        if self._local_init_op is not None:
            sess.run(self._local_init_op)
        if start_standard_services:
            self.start_queue_runners(sess)
            if self._is_chief:
                self.start_standard_services(sess)
        return sess

    def start_queue_runners(self, sess, queue_runners=None):
        """Start the graph's queue runners (or those given) with the supervisor's coordinator,
        as TF's ``prepare_or_wait_for_session`` does; here they fill their queues on demand."""
        if queue_runners is not None:
            return [t for qr in queue_runners
                    for t in qr.create_threads(sess, coord=self._coord, start=True)]
        return start_queue_runners(sess, coord=self._coord)

    def start_standard_services(self, sess):
        """Write the graph and a START event; run the services once now, then as due."""
        self._services = []
        if self._summary_writer is not None:
            self._summary_writer.add_graph(self._graph)
            self._summary_writer.add_session_log(SessionLog(status=SessionLog.START),
                                                 self._step(sess))
            if self._save_summaries_secs:
                self._services.append((_Every(self._save_summaries_secs), self._summaries))
        if self._saver is not None and self._save_model_secs and self._save_path:
            self._services.append((_Every(self._save_model_secs), self._checkpoint))
        self._session = sess
        self._run_services()
        return []

    def loop(self, timer_interval_secs, target, args=None, kwargs=None):
        """Call ``target(*args, **kwargs)`` now and then every ``timer_interval_secs``
        seconds (at each ``should_stop()`` when None) until the supervisor stops; returns the
        looper, whose ``join()`` returns once a stop is requested (see module doc)."""
        looper = _Looper(self._coord, timer_interval_secs, target, args, kwargs)
        timer = _Every(timer_interval_secs or 0)
        timer.due()  # the first call is now
        self._services.append((timer, looper.run_loop))
        looper.run_loop(None)
        return looper

    def _step(self, sess):
        return int(sess.run(self._global_step)) if self._global_step is not None else 0

    def _run_services(self):
        for timer, service in self._services:
            if timer.due():
                service(self._session)

    def _summaries(self, sess):
        step = self._step(sess)
        if self._summary_op is not None:
            self._summary_writer.add_summary(sess.run(self._summary_op), step)
        last = getattr(self, "_last_count", None)
        now = time.time()
        if last is not None and now > last[1] and self._global_step is not None:
            self._summary_writer.add_summary(Summary(value=[Summary.Value(
                tag="global_step/sec", simple_value=(step - last[0]) / (now - last[1]))]), step)
        self._last_count = (step, now)

    def _checkpoint(self, sess):
        self._saver.save(sess, self._save_path, global_step=self._global_step)
        if self._summary_writer is not None:
            self._summary_writer.add_session_log(
                SessionLog(status=SessionLog.CHECKPOINT, checkpoint_path=self._save_path),
                self._step(sess))

    @contextlib.contextmanager
    def managed_session(self, master="", config=None, start_standard_services=True,
                        close_summary_writer=True):
        """The prepared session for a ``with`` block (see module doc)."""
        sess = self.prepare_or_wait_for_session(
            master, config, start_standard_services=start_standard_services)
        try:
            with sess.as_default():
                yield sess
        except Exception as exc:  # noqa: BLE001 (TF's rule: recorded, raised again by stop)
            self.request_stop(exc)
        finally:
            try:
                self.stop(close_summary_writer=close_summary_writer)
            finally:
                sess.close()

    # -- stopping ----------------------------------------------------------------------------
    def should_stop(self):
        """Whether a stop was requested; runs the services that are due first."""
        if not self._coord.should_stop() and self._services:
            self._run_services()
        return self._coord.should_stop()

    def request_stop(self, ex=None):
        self._coord.request_stop(ex)

    def stop(self, threads=None, close_summary_writer=True, ignore_live_threads=False):
        """Stop the services; write a STOP event and close the writer; raise the error a
        ``request_stop(ex)`` recorded (an OutOfRangeError is a clean stop)."""
        self._coord.request_stop()
        self._services = []
        try:
            self._coord.raise_requested_exception()
        finally:
            if close_summary_writer and self._summary_writer is not None:
                self._summary_writer.add_session_log(SessionLog(status=SessionLog.STOP))
                self._summary_writer.close()

    def wait_for_stop(self):
        return self._coord.wait_for_stop()

    def summary_computed(self, sess, summary, global_step=None):
        """Write a summary the program computed, at ``global_step`` (default: the current)."""
        if self._summary_writer is None:
            raise RuntimeError("Writing a summary requires a summary writer.")
        step = self._step(sess) if global_step is None else int(global_step)
        self._summary_writer.add_summary(summary, step)
