"""``tf.data.experimental`` (also ``tf.contrib.data``): transformations for ``Dataset.apply``
made of the dataset's own (TF's fused versions give the same elements), and ``AUTOTUNE``."""

from __future__ import annotations

from .dataset_ops import AUTOTUNE  # noqa: F401


def batch_and_drop_remainder(batch_size):
    """``dataset.apply(batch_and_drop_remainder(n))``: ``batch(n, drop_remainder=True)``."""
    return lambda dataset: dataset.batch(batch_size, drop_remainder=True)


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """``shuffle(buffer_size, seed)`` then ``repeat(count)``: each epoch in a new order."""
    return lambda dataset: dataset.shuffle(buffer_size, seed=seed).repeat(count)


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """``map(map_func)`` then ``batch(batch_size, drop_remainder)``."""
    return lambda dataset: dataset.map(map_func).batch(batch_size, drop_remainder=drop_remainder)


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """``interleave(map_func, cycle_length, block_length)``: one thread here, so ``sloppy``
    changes nothing (the order is the deterministic one)."""
    return lambda dataset: dataset.interleave(map_func, cycle_length, block_length)
