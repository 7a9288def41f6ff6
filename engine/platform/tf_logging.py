"""``tf.logging``: TF 1.x's logging functions, on the ``engine`` logger of Python's logging
(whose children the Estimator and the training hooks log to: ``engine.estimator``,
``engine.train``).

As TF's, the logger shows WARN and above until ``set_verbosity(tf.logging.INFO)`` (the first
line of the Estimator tutorials); its records go to stderr as ``INFO:engine:message`` through
its own handler, added on first use and not propagated to the root logger (so a program that
also calls ``logging.basicConfig`` sees each line once).
"""

from __future__ import annotations

import logging as _logging
import sys

DEBUG = _logging.DEBUG
INFO = _logging.INFO
WARN = _logging.WARNING
WARNING = _logging.WARNING
ERROR = _logging.ERROR
FATAL = _logging.FATAL

_counts: dict = {}


def get_logger():
    """The ``engine`` logger, with its stderr handler."""
    logger = _logging.getLogger("engine")
    if not any(getattr(h, "_tf_logging", False) for h in logger.handlers):
        handler = _logging.StreamHandler(sys.stderr)
        handler.setFormatter(_logging.Formatter("%(levelname)s:engine:%(message)s"))
        handler._tf_logging = True
        logger.addHandler(handler)
        logger.propagate = False
        if logger.level == _logging.NOTSET:
            logger.setLevel(WARN)
    return logger


def set_verbosity(v):
    """Show messages of level ``v`` and above (DEBUG, INFO, WARN, ERROR, FATAL)."""
    get_logger().setLevel(v)


def get_verbosity():
    return get_logger().getEffectiveLevel()


def log(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def debug(msg, *args, **kwargs):
    get_logger().debug(msg, *args, **kwargs)


def info(msg, *args, **kwargs):
    get_logger().info(msg, *args, **kwargs)


def warning(msg, *args, **kwargs):
    get_logger().warning(msg, *args, **kwargs)


warn = warning


def error(msg, *args, **kwargs):
    get_logger().error(msg, *args, **kwargs)


def fatal(msg, *args, **kwargs):
    get_logger().critical(msg, *args, **kwargs)


def vlog(level, msg, *args, **kwargs):
    get_logger().log(level, msg, *args, **kwargs)


def log_every_n(level, msg, n, *args):
    """Log on the 1st, (n+1)th, (2n+1)th ... call from the same place."""
    caller = sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno)
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    if count % n == 0:
        log(level, msg, *args)


def log_first_n(level, msg, n, *args):
    """Log only on the first ``n`` calls from the same place."""
    caller = sys._getframe(1)
    key = (caller.f_code.co_filename, caller.f_lineno)
    count = _counts.get(key, 0)
    _counts[key] = count + 1
    if count < n:
        log(level, msg, *args)


def log_if(level, msg, condition, *args):
    if condition:
        log(level, msg, *args)
