"""Ctrl-C and SIGTERM during training: the loop stops at the next step boundary (it writes a
checkpoint and ends with status ``interrupted``); a second signal stops at once."""

from __future__ import annotations

import logging
import signal

log = logging.getLogger("runner")


class StopRequest:
    """SIGINT/SIGTERM handlers that ask the loop to stop at the next step boundary; a second
    signal raises KeyboardInterrupt at once."""

    def __init__(self):
        self.signal: int | None = None
        self._previous = {}

    def _handle(self, signum, frame):
        if self.signal is not None:
            raise KeyboardInterrupt
        self.signal = signum
        log.warning("%s: stopping after this step (again to stop at once)",
                    signal.Signals(signum).name)

    def __enter__(self):
        for signum in (signal.SIGINT, signal.SIGTERM):
            try:
                self._previous[signum] = signal.signal(signum, self._handle)
            except ValueError:  # not the main thread (a launcher's worker): no handler
                pass
        return self

    def __exit__(self, *exc):
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)
        return False
