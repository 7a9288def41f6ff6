"""``tf.data`` sources that read files (TF's ``data/ops/readers.py``): ``TextLineDataset`` (the
lines of text files), ``TFRecordDataset`` (the records of TFRecord files, checksums checked)
and ``FixedLengthRecordDataset`` (records of a fixed size after a header).

``filenames`` is a string or a vector of strings: a Python value, a placeholder fed to an
initializable iterator, or the element a ``flat_map``/``interleave`` function receives (the
tutorials' ``Dataset.list_files(pattern).interleave(TFRecordDataset, cycle_length=4)``). Files
are opened when a pass reaches them, one after the other; a missing file raises
``NotFoundError`` naming it, a corrupt record ``DataLossError`` naming the file and offset.
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.tf_record import compression_name, read_records
from ..ops.io_ops import fixed_length_records, text_lines
from .dataset_ops import Dataset
from .functions import as_tensor
from .structure import TensorSpec


def _string(value):
    out = np.empty((), dtype=object)
    out[()] = value
    return out


class _FileDataset(Dataset):
    """A source of one string per record of each file in ``filenames``; TF's ``buffer_size``,
    ``num_parallel_reads`` and ``name`` are accepted and change nothing here (files are read one
    after the other)."""

    def __init__(self, filenames, compression_type=None, buffer_size=None, num_parallel_reads=None,
                 name=None):
        names = as_tensor(filenames)
        if not names.dtype.is_string or names.shape.ndims not in (None, 0, 1):
            raise TypeError(f"{type(self).__name__}: filenames must be a string or a vector of "
                            f"strings, got {names.dtype.name} of shape {names.shape}")
        self._compression = compression_name(compression_type)
        super().__init__(TensorSpec([], _dtypes.string))
        self._own_captures = (names,)

    def _iterate(self, ctx):
        for name in np.asarray(ctx.value(self._own_captures[0])).reshape(-1):
            name = name.decode() if isinstance(name, bytes) else str(name)
            for record in self._records(name):
                yield [_string(record)]

    def _records(self, name):
        raise NotImplementedError


class TextLineDataset(_FileDataset):
    """``tf.data.TextLineDataset(filenames, compression_type=None, buffer_size=None)``: each
    line of the files without its line ending (``\\n`` or ``\\r\\n``); skip a header with
    ``.skip(1)`` (per file: ``list_files(...).flat_map(lambda f: TextLineDataset(f).skip(1))``)."""

    def _records(self, name):
        return text_lines(name, self._compression)


class TFRecordDataset(_FileDataset):
    """``tf.data.TFRecordDataset(filenames, compression_type=None, ...)``: the records of
    TFRecord files (``compression_type`` None, ``"ZLIB"`` or ``"GZIP"``)."""

    def _records(self, name):
        return read_records(name, self._compression)


class FixedLengthRecordDataset(_FileDataset):
    """``tf.data.FixedLengthRecordDataset``: records of ``record_bytes`` bytes after
    ``header_bytes`` and before ``footer_bytes`` in each file (CIFAR-10's binary files)."""

    def __init__(self, filenames, record_bytes, header_bytes=None, footer_bytes=None,
                 buffer_size=None, compression_type=None, num_parallel_reads=None, name=None):
        super().__init__(filenames, compression_type)
        self._sizes = (int(record_bytes), int(header_bytes or 0), int(footer_bytes or 0))
        if self._sizes[0] <= 0:
            raise ValueError(f"record_bytes must be positive, got {record_bytes}")

    def _records(self, name):
        return fixed_length_records(name, *self._sizes, compression=self._compression)
