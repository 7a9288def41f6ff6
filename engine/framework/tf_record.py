"""TFRecord files (TF's ``lib/io/tf_record.py``): the container of ``tf.data.TFRecordDataset``,
``TFRecordReader``, ``tf.python_io`` and TensorBoard's event files. Each record is

    uint64 length (little-endian) | uint32 masked_crc32c(length bytes) | data |
    uint32 masked_crc32c(data)

with CRC-32C (Castagnoli) masked as TF masks it: ``((crc >> 15) | (crc << 17)) + 0xa282ead8``.
A file may be compressed whole (``GZIP`` or ``ZLIB``, TF's ``TFRecordCompressionType``); the
offsets in errors are those of the uncompressed stream, as TF's reader reports them.

Reading checks both checksums: a record whose bytes changed raises ``DataLossError`` naming the
file and the offset of the record, a file cut inside a record too ("truncated record"); a
missing file raises ``NotFoundError`` naming it.
"""

from __future__ import annotations

import gzip
import io
import os
import struct
import zlib

import numpy as np

from .errors import DataLossError, InvalidArgumentError, NotFoundError
from .jit import njit


def _table():
    table = []
    for n in range(256):
        crc = n
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
        table.append(crc)
    return table


_TABLE = _table()
_TABLE_ARRAY = np.array(_TABLE, dtype=np.int64)
_COMPILED_FROM = 1024  # bytes: longer data goes through the compiled loop, where numba is
_compiled: list = []  # the compiled loop once tried (None: numba unavailable)


def _crc_loop(data, table, crc):
    for i in range(data.shape[0]):
        crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8)
    return crc


def _compiled_loop():
    if not _compiled:
        _compiled.append(njit(_crc_loop))
    return _compiled[0]


def crc32c(data: bytes) -> int:
    """CRC-32C of ``data``: a table-driven loop, compiled by numba (the ``fast`` extra) for
    long data (a record of an Example of images: Python's loop reads ~2 MB/s)."""
    crc = 0xFFFFFFFF
    if len(data) >= _COMPILED_FROM and (loop := _compiled_loop()) is not None:
        return int(loop(np.frombuffer(data, dtype=np.uint8), _TABLE_ARRAY,
                        np.int64(crc))) ^ 0xFFFFFFFF
    table = _TABLE
    for byte in data:
        crc = table[(crc ^ byte) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked_crc32c(data: bytes) -> int:
    crc = crc32c(data)
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def frame(data: bytes) -> bytes:
    """One record holding ``data``."""
    length = struct.pack("<Q", len(data))
    return (length + struct.pack("<I", masked_crc32c(length)) + data
            + struct.pack("<I", masked_crc32c(data)))


class TFRecordCompressionType:
    """``tf.python_io.TFRecordCompressionType``."""

    NONE, ZLIB, GZIP = 0, 1, 2


_NAMES = {None: "", "": "", "NONE": "", "ZLIB": "ZLIB", "GZIP": "GZIP",
          TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
          TFRecordCompressionType.GZIP: "GZIP"}


class TFRecordOptions:
    """``tf.python_io.TFRecordOptions``: the compression of a file (a type or its name)."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None):
        self.compression_type = compression_name(compression_type)

    @classmethod
    def get_compression_type_string(cls, options):
        return compression_name(options.compression_type if isinstance(options, TFRecordOptions)
                                else options)


def compression_name(compression) -> str:
    """``""``, ``"ZLIB"`` or ``"GZIP"`` for any of TF's spellings (None, a type, options)."""
    if isinstance(compression, TFRecordOptions):
        return compression.compression_type
    if isinstance(compression, bytes):
        compression = compression.decode()
    try:
        return _NAMES[compression]
    except (KeyError, TypeError):
        raise InvalidArgumentError(f"Unsupported compression_type: {compression!r} (use None, "
                                   "'', 'ZLIB' or 'GZIP')") from None


def open_file(path, compression=None):
    """A binary stream of the file's (uncompressed) bytes; NotFoundError names a missing file."""
    path = os.fspath(path.decode() if isinstance(path, bytes) else path)
    kind = compression_name(compression)
    try:
        raw = open(path, "rb")  # noqa: SIM115 (returned open)
    except FileNotFoundError:
        raise NotFoundError(f"{path}; No such file or directory") from None
    except IsADirectoryError:
        raise InvalidArgumentError(f"{path} is a directory, not a file") from None
    if kind == "GZIP":
        return gzip.GzipFile(fileobj=raw, mode="rb")
    if kind == "ZLIB":
        with raw:
            try:
                return io.BytesIO(zlib.decompress(raw.read()))
            except zlib.error as e:
                raise DataLossError(f"{path}: not a ZLIB stream ({e})") from None
    return raw


def _read(stream, n, path, offset):
    try:
        data = stream.read(n)
    except (OSError, EOFError, zlib.error) as e:  # a broken gzip stream
        raise DataLossError(f"{path}: the compressed stream is corrupted near offset {offset} "
                            f"({e})") from None
    return data


def read_records(path, compression=None):
    """The records of a TFRecord file, in order (see the module doc for the checks)."""
    name = os.fspath(path.decode() if isinstance(path, bytes) else path)
    with open_file(name, compression) as stream:
        offset = 0
        while True:
            header = _read(stream, 12, name, offset)
            if not header:
                return
            if len(header) < 12:
                raise DataLossError(f"{name}: truncated record at offset {offset} (the file "
                                    "ends inside a record's header)")
            length_bytes, length_crc = header[:8], struct.unpack("<I", header[8:])[0]
            if masked_crc32c(length_bytes) != length_crc:
                raise DataLossError(f"{name}: corrupted record at offset {offset} (the "
                                    "checksum of its length does not match)")
            (length,) = struct.unpack("<Q", length_bytes)
            body = _read(stream, length + 4, name, offset)
            if len(body) < length + 4:
                raise DataLossError(f"{name}: truncated record at offset {offset} (the file "
                                    f"ends inside a record of {length} bytes)")
            data = body[:length]
            if masked_crc32c(data) != struct.unpack("<I", body[length:])[0]:
                raise DataLossError(f"{name}: corrupted record at offset {offset} (the "
                                    "checksum of its data does not match)")
            yield data
            offset += length + 16


def tf_record_iterator(path, options=None):
    """``tf.python_io.tf_record_iterator``: the records of the file, as bytes."""
    return read_records(path, options)


class TFRecordWriter:
    """``tf.python_io.TFRecordWriter``: ``write(record)`` appends a record; a context manager
    closing the file (compressed whole as ``options`` says) on exit."""

    def __init__(self, path, options=None):
        self._path = os.fspath(path)
        self._kind = compression_name(options)
        try:
            raw = open(self._path, "wb")  # noqa: SIM115 (closed by close())
        except FileNotFoundError:
            raise NotFoundError(f"{self._path}: its directory does not exist") from None
        if self._kind == "GZIP":
            self._file = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0)
            self._raw = raw
        elif self._kind == "ZLIB":
            self._file, self._raw = raw, raw
            self._zlib = zlib.compressobj()
        else:
            self._file, self._raw = raw, raw

    def write(self, record):
        if isinstance(record, str):
            record = record.encode()
        data = frame(bytes(record))
        if self._kind == "ZLIB":
            data = self._zlib.compress(data)
        self._file.write(data)

    def flush(self):
        if self._kind != "ZLIB":
            self._file.flush()

    def close(self):
        if self._file is None:
            return
        if self._kind == "ZLIB":
            self._raw.write(self._zlib.flush())
        self._file.close()
        if self._raw is not self._file:
            self._raw.close()
        self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
