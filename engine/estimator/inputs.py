"""``tf.estimator.inputs.numpy_input_fn``: an input_fn over numpy arrays, built on ``tf.data``.

TF's version feeds a queue; this one is a dataset pipeline with the same stream of batches: the
rows (of every feature and the target together) for ``num_epochs`` epochs, each epoch in a new
random order when ``shuffle`` (a whole-data permutation, seeded by the graph seed: the
Estimator's ``tf_random_seed``), cut into batches of ``batch_size`` that run across epoch
boundaries; the last batch is smaller when ``num_epochs`` is finite. Arrays keep their dtypes.
"""

from __future__ import annotations

import numpy as np

from ..data import Dataset

_TARGET_KEY = "__target_key__"


def _as_arrays(value, what):
    if isinstance(value, dict):
        if not value:
            raise ValueError(f"{what} cannot be an empty dict")
        return {k: np.asarray(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value
    raise TypeError(f"{what} must be a dict of numpy arrays or a numpy array; got "
                    f"{type(value).__name__}")


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None, queue_capacity=1000,
                   num_threads=1):
    """An input_fn returning ``(features, target)`` batches (``features`` alone without ``y``):
    ``features`` is a dict with the keys of ``x`` (the tensor itself when ``x`` is an array),
    ``target`` likewise for ``y``."""
    if not isinstance(shuffle, bool):
        raise ValueError(f"shuffle must be provided and explicitly set as boolean (it is "
                         f"recommended to set it as True for training); got {shuffle}")
    if not isinstance(batch_size, int) or batch_size <= 0:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if num_epochs is not None and (not isinstance(num_epochs, int) or num_epochs <= 0):
        raise ValueError(f"num_epochs must be None or a positive integer, got {num_epochs!r}")
    features = _as_arrays(x, "x")
    target = None if y is None else _as_arrays(y, "y")
    if isinstance(features, dict) and isinstance(target, dict):
        shared = sorted(set(features) & set(target))
        if shared:
            raise ValueError(f"{shared} duplicate keys are found in both x and y: keys in x "
                             "and y must be unique")
    lengths = {k: len(v) for k, v in (features.items() if isinstance(features, dict)
                                      else [("x", features)])}
    if target is not None:
        lengths.update({f"y[{k!r}]": len(v) for k, v in target.items()} if isinstance(
            target, dict) else {"y": len(target)})
    if len(set(lengths.values())) != 1:
        raise ValueError("Length of tensors in x and y is mismatched. All elements in x and y "
                         f"must have the same length: {lengths}")
    rows = next(iter(lengths.values()))

    def input_fn():
        element = features if target is None else (features, target)
        ds = Dataset.from_tensor_slices(element)
        if shuffle:
            ds = ds.shuffle(rows)
        return ds.repeat(num_epochs).batch(batch_size).make_one_shot_iterator().get_next()

    return input_fn
