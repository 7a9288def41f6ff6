"""``tf.train.MonitoredSession``, ``SingularMonitoredSession`` and ``MonitoredTrainingSession``:
a session that initializes or restores the model, runs hooks around each step and at the end,
and saves checkpoints and summaries on its own (TF's monitored_session.py).

A ``Scaffold`` says how to make the model ready: ``finalize()`` fills in what is not given
(``init_op``: the global variables' initializer; ``local_init_op``: the local ones';
``summary_op``: ``tf.summary.merge_all()``; ``saver``: the SAVERS collection's one Saver or a new
one of every global variable, added there) and finalizes the graph. A ``ChiefSessionCreator``
makes the session: it restores ``checkpoint_filename_with_path``, else the latest checkpoint of
``checkpoint_dir``, else runs ``init_op`` (with ``init_feed_dict``) and ``init_fn(scaffold,
session)``; then ``local_init_op`` in either case.

``MonitoredSession(session_creator, hooks)`` calls every hook's ``begin``, creates the session,
then ``after_create_session``; ``run`` wraps each step in the hooks' ``before_run`` /
``after_run`` (``run_with_hooks``); ``should_stop()`` turns true once a hook asks to stop;
``close()`` (or leaving the ``with`` block) calls the hooks' ``end`` and closes the session, not
calling ``end`` when the block raised an error. ``OutOfRangeError`` and ``StopIteration`` end the
``with`` block quietly, as the end of the input ends training in TF.

``MonitoredTrainingSession`` is the usual front: for the chief it adds to ``hooks`` the
``chief_only_hooks``, a ``StepCounterHook`` and a ``SummarySaverHook`` writing to
``summary_dir`` (default ``checkpoint_dir``) every ``log_step_count_steps`` /
``save_summaries_steps`` steps (100; or ``save_summaries_secs``), and a ``CheckpointSaverHook``
saving to ``checkpoint_dir`` every ``save_checkpoint_secs`` (600 by default) or
``save_checkpoint_steps``; a second ``MonitoredTrainingSession`` on the same ``checkpoint_dir``
continues from its latest checkpoint.

Differences from TF: one process, so no master, no workers waiting on a chief (``is_chief=False``
only leaves out the chief's hooks) and no recovery from a lost worker. As TF's, the session
starts the graph's queue runners with a ``Coordinator`` (handed to the hooks'
``after_create_session``; its stop ends ``should_stop``): queue-based input fills on demand
(``queue_runner.py``), and its end (``OutOfRangeError``) ends the ``with`` block.
"""

from __future__ import annotations

import os

from ..framework.errors import OutOfRangeError
from ..framework.graph import GraphKeys, get_default_graph
from ..ops.core import group
from ..ops.variables import global_variables_initializer, local_variables_initializer
from ..runtime.session import Session
from ..summary import merge_all
from .basic_session_run_hooks import CheckpointSaverHook, StepCounterHook, SummarySaverHook
from .checkpoint_management import latest_checkpoint
from .coordinator import Coordinator
from .queue_runner import start_queue_runners
from .saver import Saver
from .session_run_hook import run_with_hooks

USE_DEFAULT = object()
SUMMARY_OP = "summary_op"  # TF's GraphKeys.SUMMARY_OP


class Scaffold:
    """What makes a model ready and saves it (see module doc)."""

    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            init_op = init_op if init_op is not None else copy_from_scaffold.init_op
            init_feed_dict = init_feed_dict or copy_from_scaffold.init_feed_dict
            init_fn = init_fn or copy_from_scaffold._user_init_fn
            local_init_op = local_init_op if local_init_op is not None \
                else copy_from_scaffold.local_init_op
            summary_op = summary_op if summary_op is not None else copy_from_scaffold.summary_op
            saver = saver if saver is not None else copy_from_scaffold.saver
        self._init_op, self._init_feed_dict = init_op, init_feed_dict
        self._user_init_fn = init_fn
        self._ready_op, self._ready_for_local_init_op = ready_op, ready_for_local_init_op
        self._local_init_op, self._summary_op, self._saver = local_init_op, summary_op, saver

    def finalize(self):
        """Fill in the defaults (each the one item of its collection, else made and added there,
        as TF's ``get_or_default``) and finalize the default graph; returns self."""
        graph = get_default_graph()
        if self._init_op is None:
            self._init_op = Scaffold.get_or_default("init_op", GraphKeys.INIT_OP,
                                                    global_variables_initializer)
        if self._local_init_op is None:
            self._local_init_op = Scaffold.get_or_default(
                "local_init_op", GraphKeys.LOCAL_INIT_OP, default_local_init_op)
        if self._summary_op is None:
            self._summary_op = Scaffold.get_or_default("summary_op", SUMMARY_OP, merge_all)
        if self._saver is None:
            self._saver = Scaffold.get_or_default(
                "saver", GraphKeys.SAVERS, lambda: Saver(allow_empty=True, sharded=True))
        graph.finalize()
        return self

    init_op = property(lambda self: self._init_op)
    init_feed_dict = property(lambda self: self._init_feed_dict)
    ready_op = property(lambda self: self._ready_op)
    local_init_op = property(lambda self: self._local_init_op)
    summary_op = property(lambda self: self._summary_op)
    saver = property(lambda self: self._saver)

    @property
    def init_fn(self):
        if self._user_init_fn is None:
            return None
        return lambda session: self._user_init_fn(self, session)

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The one item of ``collection_key``, else ``default_constructor()`` (added there
        unless None)."""
        items = get_default_graph().get_collection(collection_key)
        if len(items) > 1:
            raise RuntimeError(f"More than one item in collection {collection_key}. Please "
                               f"indicate which one to use by passing it to the constructor "
                               f"({arg_name}).")
        if items:
            return items[0]
        found = default_constructor()
        if found is not None:
            get_default_graph().add_to_collection(collection_key, found)
        return found


def default_local_init_op():
    """TF's default local init op: the local variables' and the tables' initializers."""
    return group(local_variables_initializer(),
                 *get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS))


class ChiefSessionCreator:
    """Makes a session whose model is restored or initialized (see module doc)."""

    def __init__(self, scaffold=None, master="", config=None, checkpoint_dir=None,
                 checkpoint_filename_with_path=None):
        self._scaffold = scaffold or Scaffold()
        self._master, self._config = master, config
        self._checkpoint_dir = checkpoint_dir
        self._checkpoint_filename_with_path = checkpoint_filename_with_path

    def create_session(self):
        scaffold = self._scaffold.finalize()
        session = Session(self._master, graph=get_default_graph(), config=self._config)
        checkpoint = self._checkpoint_filename_with_path
        if checkpoint is None and self._checkpoint_dir:
            checkpoint = latest_checkpoint(self._checkpoint_dir)
        if checkpoint is not None:
            scaffold.saver.restore(session, checkpoint)
        else:
            session.run(scaffold.init_op, feed_dict=scaffold.init_feed_dict)
            if scaffold.init_fn is not None:
                scaffold.init_fn(session)
        if scaffold.local_init_op is not None:
            session.run(scaffold.local_init_op)
        return session


WorkerSessionCreator = ChiefSessionCreator  # one process: no chief to wait for


class _StepContext:
    """What ``run_step_fn``'s function gets: the raw session, ``run_with_hooks`` and
    ``request_stop``."""

    def __init__(self, monitored):
        self._monitored = monitored

    @property
    def session(self):
        return self._monitored._session

    def run_with_hooks(self, *args, **kwargs):
        return self._monitored.run(*args, **kwargs)

    def request_stop(self):
        self._monitored._stop_requested = True


class MonitoredSession:
    """A session with hooks (see module doc)."""

    def __init__(self, session_creator=None, hooks=None, stop_grace_period_secs=120):
        self._hooks = list(hooks or ())
        for hook in self._hooks:
            hook.begin()
        self._session = (session_creator or ChiefSessionCreator()).create_session()
        self._stop_requested = False
        self._graph_ctx = self._session.graph.as_default()
        self._coord = Coordinator()
        start_queue_runners(self._session, coord=self._coord)
        for hook in self._hooks:
            hook.after_create_session(self._session, self._coord)

    @property
    def graph(self):
        return self._session.graph

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        """One step with the hooks; its ``fetches``' values."""
        if self._session is None:
            raise RuntimeError("Session is already closed.")
        if self._stop_requested:
            raise RuntimeError("Run called even after should_stop requested.")
        results, stop = run_with_hooks(self._session, self._hooks, fetches, feed_dict, options,
                                       run_metadata)
        self._stop_requested = self._stop_requested or stop
        return results

    def run_step_fn(self, step_fn):
        """``step_fn(step_context)``: the function runs the step itself (``step_context.
        run_with_hooks(...)``, or ``step_context.session.run`` without hooks) and may
        ``step_context.request_stop()``; returns what it returns."""
        return step_fn(_StepContext(self))

    def should_stop(self):
        return self._session is None or self._stop_requested or self._coord.should_stop()

    def close(self):
        self._close(None)

    def _close(self, exception_type):
        if self._session is None:
            return
        try:
            if exception_type is None:
                for hook in self._hooks:
                    hook.end(self._session)
        finally:
            self._session.close()
            self._session = None

    def __enter__(self):
        self._graph_ctx.__enter__()
        return self

    def __exit__(self, exception_type, exception_value, traceback):
        if exception_type in (OutOfRangeError, StopIteration) or (
                exception_type is not None and issubclass(exception_type, OutOfRangeError)):
            exception_type = None
        try:
            self._close(exception_type)
        finally:
            self._graph_ctx.__exit__(None, None, None)
        return exception_type is None


class SingularMonitoredSession(MonitoredSession):
    """A MonitoredSession made by a ``ChiefSessionCreator`` from these arguments; its
    ``raw_session()`` is the underlying session."""

    def __init__(self, hooks=None, scaffold=None, master="", config=None, checkpoint_dir=None,
                 stop_grace_period_secs=120, checkpoint_filename_with_path=None):
        super().__init__(ChiefSessionCreator(scaffold, master, config, checkpoint_dir,
                                             checkpoint_filename_with_path), hooks,
                         stop_grace_period_secs)

    def raw_session(self):
        return self._session


def MonitoredTrainingSession(master="", is_chief=True, checkpoint_dir=None,  # noqa: N802 (TF's name)
                             scaffold=None, hooks=None, chief_only_hooks=None,
                             save_checkpoint_secs=USE_DEFAULT, save_summaries_steps=USE_DEFAULT,
                             save_summaries_secs=USE_DEFAULT, config=None,
                             stop_grace_period_secs=120, log_step_count_steps=100,
                             max_wait_secs=7200, save_checkpoint_steps=USE_DEFAULT,
                             summary_dir=None):
    """A ``MonitoredSession`` for training with TF's standard hooks (see module doc)."""
    if save_summaries_steps is USE_DEFAULT and save_summaries_secs is USE_DEFAULT:
        save_summaries_steps, save_summaries_secs = 100, None
    save_summaries_steps = None if save_summaries_steps is USE_DEFAULT else save_summaries_steps
    save_summaries_secs = None if save_summaries_secs is USE_DEFAULT else save_summaries_secs
    if save_checkpoint_secs is USE_DEFAULT and save_checkpoint_steps is USE_DEFAULT:
        save_checkpoint_secs, save_checkpoint_steps = 600, None
    save_checkpoint_secs = None if save_checkpoint_secs is USE_DEFAULT else save_checkpoint_secs
    save_checkpoint_steps = None if save_checkpoint_steps is USE_DEFAULT \
        else save_checkpoint_steps
    scaffold = scaffold or Scaffold()
    all_hooks = list(hooks or ())
    if not is_chief:
        return MonitoredSession(ChiefSessionCreator(scaffold, master, config, checkpoint_dir),
                                all_hooks, stop_grace_period_secs)
    all_hooks = [*(chief_only_hooks or ()), *all_hooks]
    summary_dir = summary_dir or checkpoint_dir
    if summary_dir:
        if log_step_count_steps and log_step_count_steps > 0:
            all_hooks.append(StepCounterHook(output_dir=summary_dir,
                                             every_n_steps=log_step_count_steps))
        if (save_summaries_steps and save_summaries_steps > 0) or (
                save_summaries_secs and save_summaries_secs > 0):
            all_hooks.append(SummarySaverHook(scaffold=scaffold, save_steps=save_summaries_steps,
                                              save_secs=save_summaries_secs,
                                              output_dir=summary_dir))
    if checkpoint_dir and ((save_checkpoint_secs and save_checkpoint_secs > 0) or
                           (save_checkpoint_steps and save_checkpoint_steps > 0)):
        all_hooks.append(CheckpointSaverHook(os.fspath(checkpoint_dir),
                                             save_steps=save_checkpoint_steps,
                                             save_secs=save_checkpoint_secs, scaffold=scaffold))
    return MonitoredSession(ChiefSessionCreator(scaffold, master, config, checkpoint_dir),
                            all_hooks, stop_grace_period_secs)


__all__ = ["ChiefSessionCreator", "MonitoredSession", "MonitoredTrainingSession", "Scaffold",
           "SingularMonitoredSession", "USE_DEFAULT", "WorkerSessionCreator"]
