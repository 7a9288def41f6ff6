"""``tf.train.SessionRunHook``: the protocol of the hooks a training loop runs.

A hook sees a training loop's life: ``begin`` (the graph may still change),
``after_create_session``, then around each step ``before_run`` (returns ``SessionRunArgs``: more
fetches and feeds for that step's run) and ``after_run`` (sees their values and may
``request_stop``), and ``end``. ``run_with_hooks`` is one such step; ``MonitoredSession``
(monitored_session.py) and ``Estimator`` run their loops through it. The hooks TF ships are in
basic_session_run_hooks.py.
"""

from __future__ import annotations

import collections


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


def run_with_hooks(session, hooks, fetches, feed_dict=None, options=None, run_metadata=None):
    """One step: ``session.run(fetches, feed_dict)`` with each hook's ``before_run`` fetches and
    feeds added and its ``after_run`` called with their values; returns ``(results, whether a
    hook asked to stop)``. A tensor fed twice (by two hooks, or by a hook and the caller) is an
    error, as in TF."""
    context = SessionRunContext(SessionRunArgs(fetches, feed_dict, options), session)
    extra, feeds = [], dict(feed_dict or {})
    user_keys = set(feeds)
    for hook in hooks:
        args = hook.before_run(context)
        extra.append([] if args is None or args.fetches is None else args.fetches)
        for key, value in ({} if args is None else args.feed_dict or {}).items():
            if key in feeds:
                who = "user" if key in user_keys else "another hook"
                raise RuntimeError(f"Same tensor is fed by a SessionRunHook and {who}: {key}")
            feeds[key] = value
    results, hook_results = session.run([fetches, extra], feed_dict=feeds or None,
                                        options=options, run_metadata=run_metadata)
    for hook, result in zip(hooks, hook_results):
        hook.after_run(context, SessionRunValues(result, options, run_metadata))
    return results, context.stop_requested
