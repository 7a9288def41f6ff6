"""``tf.train.Coordinator``: the stop flag that the threads of a TF1 input pipeline share.

Queue runners here run no threads (queues are filled on demand, see
``engine/ops/queue_ops.py``), so a coordinator holds only the flag and the first exception
reported to it; ``join`` re-raises that exception, as TF's does, and returns at once.
"""

from __future__ import annotations

import contextlib
import sys

from ..framework.errors import OutOfRangeError


class Coordinator:
    """``tf.train.Coordinator(clean_stop_exception_types=None)``: ``should_stop``,
    ``request_stop(ex)``, ``stop_on_exception()``, ``join(threads)`` and the rest of TF's API."""

    def __init__(self, clean_stop_exception_types=None):
        self._clean = tuple(clean_stop_exception_types or (OutOfRangeError,))
        self._stop = False
        self._exc_info = None
        self._joined = False
        self._threads: list = []

    def request_stop(self, ex=None):
        """Ask everything to stop; an exception (or exc_info triple) not of the clean-stop
        types is kept, to be re-raised by ``join``."""
        if ex is not None and self._exc_info is None:
            if isinstance(ex, tuple):
                exc_info = ex
            else:
                exc_info = (type(ex), ex, ex.__traceback__)
            if not issubclass(exc_info[0], self._clean):
                self._exc_info = exc_info
        self._stop = True

    def should_stop(self):
        return self._stop

    def clear_stop(self):
        self._stop = False
        self._exc_info = None
        self._joined = False

    def wait_for_stop(self, timeout=None):
        """Whether a stop was requested (nothing runs in the background to request one)."""
        return self._stop

    @contextlib.contextmanager
    def stop_on_exception(self):
        """``with coord.stop_on_exception():``: an exception inside requests a stop with it."""
        try:
            yield
        except:  # noqa: E722 (TF's: every exception, SystemExit included, stops the others)
            self.request_stop(sys.exc_info())

    def register_thread(self, thread):
        self._threads.append(thread)

    def join(self, threads=None, stop_grace_period_secs=120, ignore_live_threads=False):
        """Wait for the threads (none run here) and re-raise a reported exception."""
        self._joined = True
        self.raise_requested_exception()

    def raise_requested_exception(self):
        if self._exc_info is not None:
            _, ex, tb = self._exc_info
            raise ex.with_traceback(tb)

    @property
    def joined(self):
        return self._joined
