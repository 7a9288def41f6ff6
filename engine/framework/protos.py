"""The protobuf messages TensorBoard reads, encoded by hand in protobuf's wire format:
``Event``, ``Summary`` (with ``simple_value``, ``HistogramProto``, ``Image``, ``Audio`` and
string ``TensorProto`` values) and a ``GraphDef`` of a graph's ops. Field numbers are those of
TF's event.proto, summary.proto, graph.proto and node_def.proto. Only encoding: the engine
writes these, it never reads them.
"""

from __future__ import annotations

import struct


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative int64s are ten-byte varints, as protobuf encodes them
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field, wire_type):
    return varint(field << 3 | wire_type)


def varint_field(field, value: int) -> bytes:
    return _key(field, 0) + varint(int(value)) if value else b""


def double_field(field, value: float) -> bytes:
    return _key(field, 1) + struct.pack("<d", value) if value else b""


def float_field(field, value: float) -> bytes:
    return _key(field, 5) + struct.pack("<f", value)


def bytes_field(field, value) -> bytes:
    value = value.encode() if isinstance(value, str) else bytes(value)
    return _key(field, 2) + varint(len(value)) + value


def packed_doubles(field, values) -> bytes:
    return bytes_field(field, struct.pack(f"<{len(values)}d", *values)) if len(values) else b""


def _present(*fields) -> bytes:
    """The encoding of the (field, value, encoder) triples whose value is set: a message's
    optional fields, in field order."""
    return b"".join(encode(field, value) for field, value, encode in fields if value is not None)


def summary_value(tag, simple_value=None, histo=None, image=None, audio=None, tensor=None,
                  metadata=None) -> bytes:
    """One ``Summary.Value``: tag (1), one of simple_value (2), image (4), histo (5), audio (6),
    tensor (8), and its metadata (9)."""
    return bytes_field(1, tag) + _present((2, simple_value, float_field), (4, image, bytes_field),
                                          (5, histo, bytes_field), (6, audio, bytes_field),
                                          (8, tensor, bytes_field), (9, metadata, bytes_field))


def summary(values) -> bytes:
    """A ``Summary`` of encoded values. Concatenated summaries are their merge (repeated field
    1), which is how ``merge`` combines them."""
    return b"".join(bytes_field(1, v) for v in values)


def histogram(lo, hi, num, total, sum_squares, bucket_limit, bucket) -> bytes:
    return (double_field(1, lo) + double_field(2, hi) + double_field(3, num)
            + double_field(4, total) + double_field(5, sum_squares)
            + packed_doubles(6, bucket_limit) + packed_doubles(7, bucket))


def image(height, width, colorspace, png: bytes) -> bytes:
    return (varint_field(1, height) + varint_field(2, width) + varint_field(3, colorspace)
            + bytes_field(4, png))


def audio(sample_rate, num_channels, length_frames, wav: bytes) -> bytes:
    """A ``Summary.Audio``: sample_rate (1, float), num_channels (2), length_frames (3),
    encoded_audio_string (4), content_type (5)."""
    return (float_field(1, sample_rate) + varint_field(2, num_channels)
            + varint_field(3, length_frames) + bytes_field(4, wav) + bytes_field(5, "audio/wav"))


#: TensorProto's DataType code of a string tensor (types.proto's DT_STRING)
DT_STRING = 7


def string_tensor(values, shape) -> bytes:
    """A ``TensorProto`` of strings: dtype (1), tensor_shape (2: a ``TensorShapeProto`` of
    dims (2) with size (1)), string_val (8, repeated)."""
    dims = b"".join(bytes_field(2, varint_field(1, d) if d else b"") for d in shape)
    return (varint_field(1, DT_STRING) + bytes_field(2, dims)
            + b"".join(bytes_field(8, v) for v in values))


def plugin_metadata(plugin_name) -> bytes:
    """A ``SummaryMetadata`` naming the TensorBoard plugin that shows the value: plugin_data
    (1: a ``PluginData`` with plugin_name (1))."""
    return bytes_field(1, bytes_field(1, plugin_name))


def event(wall_time, step=0, file_version=None, graph_def=None, summary_bytes=None,
          session_log=None, tagged_run_metadata=None, meta_graph_def=None) -> bytes:
    """An ``Event``: wall_time (1), step (2), and one of file_version (3), graph_def (4),
    summary (5), session_log (7), tagged_run_metadata (8), meta_graph_def (9)."""
    return double_field(1, wall_time) + varint_field(2, step) + _present(
        (3, file_version, bytes_field), (4, graph_def, bytes_field), (5, summary_bytes, bytes_field),
        (7, session_log, bytes_field), (8, tagged_run_metadata, bytes_field),
        (9, meta_graph_def, bytes_field))


def session_log(status, checkpoint_path="", msg="") -> bytes:
    """A ``SessionLog``: status (1, the enum), checkpoint_path (2), msg (3)."""
    return (varint_field(1, status) + (bytes_field(2, checkpoint_path) if checkpoint_path else b"")
            + (bytes_field(3, msg) if msg else b""))


def tagged_run_metadata(tag, run_metadata: bytes) -> bytes:
    """A ``TaggedRunMetadata``: tag (1) and the serialized ``RunMetadata`` (2)."""
    return bytes_field(1, tag) + bytes_field(2, run_metadata)


def graph_def(ops) -> bytes:
    """A ``GraphDef`` (node 1, versions 4) of the ops: each NodeDef has name (1), op (2) and its
    inputs (3) as TF spells them (``name``, ``name:1``, ``^control``)."""
    nodes = []
    for op in ops:
        node = bytes_field(1, op.name) + bytes_field(2, op.type)
        for t in op.inputs:
            node += bytes_field(3, t.op.name if t.value_index == 0 else t.name)
        for c in op.control_inputs:
            node += bytes_field(3, "^" + c.name)
        nodes.append(bytes_field(1, node))
    return b"".join(nodes) + bytes_field(4, varint_field(1, 27))  # VersionDef.producer
