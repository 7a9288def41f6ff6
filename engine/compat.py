"""``tf.compat``: TF's text and bytes conversions (``as_bytes``, ``as_text``, ``as_str``,
``as_str_any``, ``path_to_str``), the numeric type tuples, ``dimension_value``, and ``v1`` (the
engine's TF1 namespace itself, set by ``engine/__init__``), so that programs written for TF 1.13+
(``tf.compat.v1.Session``, ``tf.compat.as_str(f.read(...))``) run."""

from __future__ import annotations

import numbers
import os

import numpy as np

from .framework.tensor_shape import dimension_value  # noqa: F401

integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)
bytes_or_text_types = (bytes, str)


def as_bytes(bytes_or_text, encoding="utf-8"):
    """``bytes_or_text`` as bytes (text encoded); anything else is TF's TypeError."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text, encoding="utf-8"):
    """``bytes_or_text`` as str (bytes decoded); anything else is TF's TypeError."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text
as_bytes_or_text = as_text


def as_str_any(value):
    """A str of anything: bytes decoded, else ``str(value)``."""
    return as_str(value) if isinstance(value, bytes) else str(value)


def path_to_str(path):
    """A path-like object's str (``os.fspath``); other values unchanged."""
    return os.fspath(path) if isinstance(path, os.PathLike) else path
