"""``tf.summary.FileWriterCache``: one ``FileWriter`` per log directory in a process, so that the
hooks of a monitored session (summaries, step counts, checkpoint events) share one event file."""

from __future__ import annotations

import os
import threading

from ..framework.graph import get_default_graph
from .writer import FileWriter


class FileWriterCache:
    """The writers by directory (TF's: ``get(logdir)`` makes one with the default graph the
    first time, ``clear()`` closes and forgets them all)."""

    _cache: dict = {}
    _lock = threading.RLock()

    @staticmethod
    def get(logdir):
        key = os.path.abspath(os.fspath(logdir))
        with FileWriterCache._lock:
            writer = FileWriterCache._cache.get(key)
            if writer is None:
                writer = FileWriterCache._cache[key] = FileWriter(logdir, get_default_graph())
            writer.reopen()
            return writer

    @staticmethod
    def clear():
        with FileWriterCache._lock:
            for writer in FileWriterCache._cache.values():
                writer.close()
            FileWriterCache._cache.clear()
