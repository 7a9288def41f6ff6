"""``tf.contrib.data``: TF 1.x's home of ``tf.data.experimental``'s transformations (and the
file datasets, under their old names here too)."""

from ..data.experimental import (  # noqa: F401
    AUTOTUNE,
    batch_and_drop_remainder,
    map_and_batch,
    parallel_interleave,
    shuffle_and_repeat,
)
from ..data.readers import FixedLengthRecordDataset, TextLineDataset, TFRecordDataset  # noqa: F401
