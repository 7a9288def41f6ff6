"""``tf.summary``: summary ops and the FileWriter that writes them for TensorBoard.

``scalar``, ``histogram``, ``image``, ``audio`` and ``text`` add an op returning a serialized
``Summary`` (a string tensor) to the SUMMARIES collection; its tag is the op's name, scopes
included, as TF1 names it (``train/loss``; a second ``loss`` is ``loss_1``). ``merge_all()``
merges every collected summary; ``FileWriter(logdir, sess.graph)`` writes them with
``add_summary(value, step)``. The event files are TensorBoard's own format, written by the
engine (no TensorFlow or TensorBoard needed to write them).
"""

from __future__ import annotations

import re

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework import protos
from ..framework.example_protos import fields
from ..framework.graph import GraphKeys, get_default_graph
from ..framework.registry import apply
from ..ops.core import convert_to_tensor
from ..ops.summary_ops import scalar_summary
from .writer import FileWriter, SessionLog
from .writer_cache import FileWriterCache

__all__ = ["FileWriter", "FileWriterCache", "HistogramProto", "SessionLog", "Summary", "audio",
           "histogram", "image", "merge", "merge_all", "scalar", "text"]


def _tag(name):
    """The tag (and op name) TF1 gives a summary: ``name`` cleaned of characters a node name
    cannot hold, under the current name scope, made unique."""
    clean = re.sub(r"[^-/\w.]", "_", name).lstrip("/") or "summary"
    return get_default_graph().unique_name(clean, mark_as_used=False), clean


def _collect(summary, collections):
    for key in [GraphKeys.SUMMARIES] if collections is None else collections:
        get_default_graph().add_to_collection(key, summary)
    return summary


def scalar(name, tensor, collections=None, family=None):
    """A summary of one number (a scalar tensor)."""
    tag, clean = _tag(name)
    return _collect(scalar_summary(tag, convert_to_tensor(tensor), clean), collections)


def histogram(name, values, collections=None, family=None):
    """A summary of the distribution of ``values`` (TF's default buckets)."""
    tag, clean = _tag(name)
    return _collect(apply("HistogramSummary", [convert_to_tensor(values)], name=clean, tag=tag),
                    collections)


def image(name, tensor, max_outputs=3, collections=None, family=None):
    """PNG images of the first ``max_outputs`` entries of ``tensor`` [batch, height, width,
    1|3|4] (uint8, or floats scaled as TF scales them); tags ``name/image/i``."""
    tag, clean = _tag(name)
    return _collect(apply("ImageSummary", [convert_to_tensor(tensor)], name=clean, tag=tag,
                          max_outputs=int(max_outputs)), collections)


def text(name, tensor, collections=None):
    """A summary of a string tensor, shown by TensorBoard's text plugin (markdown)."""
    tag, clean = _tag(name)
    return _collect(apply("TextSummary", [convert_to_tensor(tensor)], name=clean, tag=tag),
                    collections)


def audio(name, tensor, sample_rate, max_outputs=3, collections=None, family=None):
    """16-bit WAV clips of the first ``max_outputs`` entries of ``tensor`` ([batch, frames] or
    [batch, frames, channels], floats in [-1, 1]) at ``sample_rate`` Hz; tags
    ``name/audio/i`` (``name/audio`` for one)."""
    tag, clean = _tag(name)
    rate = convert_to_tensor(sample_rate, dtype=_dtypes.float32)
    return _collect(apply("AudioSummaryV2", [convert_to_tensor(tensor), rate], name=clean,
                          tag=tag, max_outputs=int(max_outputs)), collections)


def merge(inputs, collections=None, name=None):
    """One summary holding all of ``inputs``."""
    summary = apply("MergeSummary", [convert_to_tensor(t) for t in inputs],
                    name=name or "Merge/MergeSummary")
    if collections:
        for key in collections:
            get_default_graph().add_to_collection(key, summary)
    return summary


def merge_all(key=GraphKeys.SUMMARIES, scope=None, name=None):
    """The merge of every summary in collection ``key``, or None when there is none (as TF)."""
    summaries = get_default_graph().get_collection(key, scope)
    return merge(summaries, name=name) if summaries else None


class HistogramProto:
    """``tf.HistogramProto``, a histogram built in Python for ``Summary.Value(histo=...)``:
    min, max, num, sum, sum_squares, and the buckets, ``bucket[i]`` values up to
    ``bucket_limit[i]`` (above the limit before it)."""

    def __init__(self, min=0.0, max=0.0, num=0.0, sum=0.0, sum_squares=0.0,  # noqa: A002
                 bucket_limit=(), bucket=()):
        self.min, self.max, self.num, self.sum = float(min), float(max), float(num), float(sum)
        self.sum_squares = float(sum_squares)
        self.bucket_limit, self.bucket = list(bucket_limit), list(bucket)

    def SerializeToString(self):  # noqa: N802 (protobuf's name)
        return protos.histogram(self.min, self.max, self.num, self.sum, self.sum_squares,
                                self.bucket_limit, self.bucket)


class _Values(list):
    """``Summary.value``: a list with protobuf's ``add(**fields)``."""

    def add(self, **fields):
        value = Summary.Value(**fields)
        self.append(value)
        return value


class Summary:
    """``tf.Summary``, for summaries built in Python: ``Summary(value=[Summary.Value(tag="acc",
    simple_value=0.9)])`` (or ``histo=HistogramProto(...)``), passed to
    ``FileWriter.add_summary``; ``ParseFromString`` reads a summary op's serialized value (TF's
    cifar10_eval adds its own value to it: ``summary.value.add(tag=..., simple_value=...)``).
    A parsed value's tag and simple_value are read; any other content (images, histograms,
    tensors) is kept as it came and written back unchanged."""

    class Value:
        def __init__(self, tag="", simple_value=None, node_name=None, histo=None):
            self.tag, self.simple_value, self.histo = tag, simple_value, histo
            self._wire = None  # the value as parsed, while tag and simple_value are unchanged

        def SerializeToString(self):  # noqa: N802 (protobuf's name)
            if self._wire is not None and self._wire[0] == (self.tag, self.simple_value):
                return self._wire[1]
            histo = self.histo.SerializeToString() if self.histo is not None else None
            return protos.summary_value(self.tag, self.simple_value, histo=histo)

        @classmethod
        def FromString(cls, data):  # noqa: N802
            value = cls()
            for number, wire, payload in fields(data):
                if number == 1 and wire == 2:
                    value.tag = bytes(payload).decode()
                elif number == 2 and wire == 5:
                    value.simple_value = float(np.frombuffer(payload, "<f4")[0])
            value._wire = ((value.tag, value.simple_value), bytes(data))
            return value

    def __init__(self, value=()):
        self.value = _Values(value)

    def SerializeToString(self):  # noqa: N802
        return protos.summary(v.SerializeToString() for v in self.value)

    def ParseFromString(self, data):  # noqa: N802
        """Replace this summary's values by those of the serialized ``Summary`` ``data``."""
        if not isinstance(data, bytes | bytearray | np.bytes_):
            raise TypeError(f"ParseFromString expects bytes, got {type(data).__name__}")
        self.value = _Values(Summary.Value.FromString(payload)
                             for number, wire, payload in fields(bytes(data))
                             if number == 1 and wire == 2)
        return len(data)

    @classmethod
    def FromString(cls, data):  # noqa: N802
        summary = cls()
        summary.ParseFromString(data)
        return summary
