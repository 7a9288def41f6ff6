"""The engine's worker threads: one small pool shared by every kernel that splits its work.

numpy's loops (and numba's nogil ones) release the GIL, so a kernel that cuts a large array into
ranges runs one range on the calling thread and the others on these workers (``run_parts``). The
pool is made on first use and forgotten in a forked child (which inherits no threads). Worker
threads do not inherit numpy's error state: the caller's is carried into the worker.
It sits in framework/ (below ops/) so that op kernels as well as the runtime's update and
region kernels split across it; the session sets how many threads an op may use
(``threads.intra_op_threads``).

``run_parts`` hands its parts to a crew of persistent threads, each asleep on a lock of its own
that the caller releases (a few microseconds a hand-off: a LeNet step at two threads hands work
over nine times; through ThreadPoolExecutor's futures and events it cost 10 us idle and 65-75 us
under load for parts that do nothing). ``submit`` (a Future, for the update and region kernels)
goes through a ThreadPoolExecutor.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

#: threads in the pool (callers use at most this many besides their own)
SIZE = 2
#: threads an optimizer update may use, the caller's included (GRADPIPE_UPDATE_THREADS; at most 2)
UPDATE_THREADS = max(1, min(2, int(os.environ.get("GRADPIPE_UPDATE_THREADS",
                                                  os.cpu_count() or 1))))

_pool = None


def executor() -> ThreadPoolExecutor:
    global _pool
    if _pool is None:
        _pool = ThreadPoolExecutor(SIZE, thread_name_prefix="gradpipe-worker")
    return _pool


def _forget_pool():
    global _pool
    _pool = None
    _crew.clear()


if hasattr(os, "register_at_fork"):  # a forked child has no pool threads
    os.register_at_fork(after_in_child=_forget_pool)


def _with_errstate(err, fn, args):
    with np.errstate(**err):
        return fn(*args)


def submit(fn, *args):
    """Run ``fn(*args)`` on a worker under the caller's numpy error state; a Future."""
    return executor().submit(_with_errstate, np.geterr(), fn, args)


def ranges(n: int, parts: int, quantum: int = 1) -> list[tuple[int, int]]:
    """``[0, n)`` cut into at most ``parts`` ranges of nearly equal length, every cut at a
    multiple of ``quantum``; empty ranges are left out."""
    cuts = [0] + [min(n, round(n * i / parts / quantum) * quantum) for i in range(1, parts)] + [n]
    return [(lo, hi) for lo, hi in zip(cuts, cuts[1:]) if hi > lo]


class _Shared:
    """Argument tuples handed out one at a time to whichever thread asks next, the count of
    those not finished yet, and the caller's numpy error state."""

    def __init__(self, fn, parts):
        self.fn, self.parts = fn, iter(parts)
        self.left, self.errors = len(parts), []
        self.err = np.geterr()
        self.lock, self.done = threading.Lock(), threading.Lock()
        self.done.acquire()  # released when the last part has finished

    def work(self):
        for args in self.parts:  # ``next`` on a list iterator holds the GIL: each tuple once
            try:
                self.fn(*args)
            except Exception as exc:  # noqa: BLE001 - raised again by the caller
                self.errors.append(exc)
            with self.lock:
                self.left -= 1
                if not self.left:
                    self.done.release()


class _Member:
    """A crew thread: asleep on ``go`` until a caller releases it, then it takes parts of the
    newest job (one that is exhausted already leaves it nothing to do) and sleeps again."""

    def __init__(self):
        self.go = threading.Lock()
        self.go.acquire()
        self.job = None
        threading.Thread(target=self._loop, daemon=True, name="gradpipe-crew").start()

    def _loop(self):
        while True:
            self.go.acquire()
            job = self.job
            if job is not None:
                with np.errstate(**job.err):
                    job.work()

    def call(self, job):
        self.job = job
        if self.go.locked():  # else a release is pending: the member reads ``job`` when it wakes
            try:
                self.go.release()
            except RuntimeError:  # another caller released it just now
                pass


_crew: list[_Member] = []


def _members(count: int) -> list[_Member]:
    while len(_crew) < min(count, SIZE):
        _crew.append(_Member())
    return _crew[:count]


def run_parts(fn, parts, threads: int = 2) -> None:
    """``fn(*args)`` for each ``args`` of ``parts``, taken in turn by the calling thread and
    ``threads - 1`` workers; returns when all have finished (so no worker writes into an array
    after it), the first exception raised again.

    The parts are shared out as the threads ask, not dealt in advance: a worker that the
    machine starts late (a shared core, tens of microseconds to wake), or one still busy with
    another caller's parts, leaves its parts to the caller, which then waits for no one; a
    worker that starts after the last part was taken finds none and sleeps again."""
    if threads < 2 or len(parts) < 2:
        for args in parts:
            fn(*args)
        return
    shared = _Shared(fn, parts)
    members = _members(min(threads, len(parts)) - 1)
    for member in members:
        member.call(shared)
    shared.work()
    shared.done.acquire()
    for member in members:
        if member.job is shared:
            member.job = None  # the parts' arrays are not kept alive by a sleeping member
    if shared.errors:
        raise shared.errors[0]
