"""``tf.train.QueueRunner``, ``add_queue_runner`` and ``start_queue_runners``.

TF runs each enqueue op of a queue runner in a loop in its own thread. Here a queue runner is
what fills its queue on demand (``engine/ops/queue_ops.py``): once started in a session, each
time a dequeue finds its queue short, the runner's enqueue ops run there, one at a time, in
turn. An enqueue that raises ``OutOfRangeError`` (its input is exhausted: a closed queue
upstream, ``num_epochs`` reached) stops, as its TF thread does, and the runner closes its queue
when the last of its enqueue ops has stopped;
any other error surfaces from the ``sess.run`` that needed the element. The "threads"
``start_queue_runners`` returns are stand-ins for ``coord.join(threads)``: none runs.
"""

from __future__ import annotations

from ..framework.default_session import get_default_session
from ..framework.errors import OutOfRangeError
from ..framework.graph import GraphKeys, add_to_collection, get_default_graph
from ..runtime.plan import compile_plan


def _state_of(sess):
    """The session state a session object (or a wrapper of one) runs on."""
    seen = 0
    while sess is not None and not hasattr(sess, "_state") and seen < 8:
        sess = getattr(sess, "_sess", None) or getattr(sess, "_session", None) \
            or getattr(sess, "session", None)
        seen += 1
    if sess is None or not hasattr(sess, "_state"):
        raise TypeError(f"cannot start queue runners in {sess!r}: not a tf.Session")
    return sess._state


class _OnDemandThread:
    """What ``create_threads`` returns in place of a thread: nothing runs in it."""

    daemon = True

    def __init__(self, name):
        self.name = name

    def start(self):
        pass

    def join(self, timeout=None):
        pass

    def is_alive(self):
        return False

    isAlive = is_alive  # noqa: N815 (Python 2's name, which TF1 code calls)


class QueueRunner:
    """``tf.train.QueueRunner(queue, enqueue_ops)``: fills ``queue`` by running
    ``enqueue_ops`` (see module doc)."""

    def __init__(self, queue=None, enqueue_ops=None, close_op=None, cancel_op=None,
                 queue_closed_exception_types=None, queue_runner_def=None, import_scope=None):
        if queue is None or not enqueue_ops:
            raise ValueError("QueueRunner needs a queue and a non-empty list of enqueue_ops")
        self._queue = queue
        self._enqueue_ops = list(enqueue_ops)
        self._close_op = close_op if close_op is not None else queue.close()
        self._cancel_op = cancel_op if cancel_op is not None else self._close_op
        self._ended_by = tuple(queue_closed_exception_types or (OutOfRangeError,))
        queue.add_filler(self._fill)

    queue = property(lambda self: self._queue)
    enqueue_ops = property(lambda self: list(self._enqueue_ops))
    close_op = property(lambda self: self._close_op)
    cancel_op = property(lambda self: self._cancel_op)
    queue_closed_exception_types = property(lambda self: self._ended_by)

    @property
    def name(self):
        return self._queue.name

    def _run(self, state, op):
        key = (self, "plan", op)
        plan = state.resources.get(key)
        if plan is None:
            plan = state.resources[key] = compile_plan(state, [op], [])
        plan.run([])

    def _fill(self, state):
        """Run the next enqueue op still running in ``state`` if this runner was started there;
        False when it added nothing (not started, or ended). As TF's threads: an enqueue op
        that raises ``OutOfRangeError`` stops (its thread ends); the queue is closed when the
        last one has stopped (five readers of one file queue: one reads the file, four stop)."""
        progress = state.resources.get((self, "next"))
        if progress is None or progress < 0:
            return False
        stopped = state.resources.setdefault((self, "stopped"), set())
        n = len(self._enqueue_ops)
        while len(stopped) < n:
            i, progress = progress % n, progress + 1
            if i in stopped:
                continue
            try:
                self._run(state, self._enqueue_ops[i])
            except self._ended_by:
                stopped.add(i)
                continue
            state.resources[(self, "next")] = progress
            return True
        state.resources[(self, "next")] = -1
        self._run(state, self._close_op)
        return False

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        """Start this runner in ``sess``: its queue is filled on demand from now on."""
        state = _state_of(sess)
        state.resources.setdefault((self, "next"), 0)  # an ended runner stays ended
        threads = [_OnDemandThread(f"QueueRunnerThread-{self.name}-{op.name}")
                   for op in self._enqueue_ops]
        if coord is not None:
            for thread in threads:
                coord.register_thread(thread)
        return threads


def add_queue_runner(qr, collection=GraphKeys.QUEUE_RUNNERS):
    """``tf.train.add_queue_runner``: put ``qr`` in the graph's queue runners."""
    add_to_collection(collection, qr)


def start_queue_runners(sess=None, coord=None, daemon=True, start=True,
                        collection=GraphKeys.QUEUE_RUNNERS):
    """``tf.train.start_queue_runners``: start every queue runner of the graph's collection in
    ``sess`` (the default session if None); returns the stand-in threads."""
    if sess is None:
        sess = get_default_session()
        if sess is None:
            raise ValueError("Cannot start queue runners: No default session is registered. Use "
                             "`with sess.as_default()` or pass an explicit session to "
                             "tf.start_queue_runners(sess=sess)")
    graph = getattr(sess, "graph", None) or get_default_graph()
    threads = []
    for qr in graph.get_collection(collection):
        threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads
