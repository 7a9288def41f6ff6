"""``tf.estimator.export``: what ``Estimator.export_savedmodel`` serves.

- ``ServingInputReceiver(features, receiver_tensors)``: the features the model_fn gets at
  serving time and the tensors a client feeds (a tensor or a dict of them);
- ``build_raw_serving_input_receiver_fn(features, default_batch_size=None)``: a receiver fn of
  placeholders shaped like ``features`` (tensors or placeholders), each fed directly;
- ``PredictOutput(outputs)``: a predict signature of a tensor or a dict of them (the default
  export output: the spec's predictions).
"""

from __future__ import annotations

from ..framework.graph import Tensor
from ..ops.core import placeholder


def _as_dict(value, what, default_key):
    if isinstance(value, Tensor):
        return {default_key: value}
    if not isinstance(value, dict) or not value:
        raise ValueError(f"{what} must be a Tensor or a non-empty dict of them, given: "
                         f"{value!r}")
    for key, tensor in value.items():
        if not isinstance(tensor, Tensor):
            raise ValueError(f"{what} [{key!r}] must be a Tensor, given: {tensor!r}")
    return dict(value)


class ServingInputReceiver:
    def __init__(self, features, receiver_tensors, receiver_tensors_alternatives=None):
        self.features = _as_dict(features, "features", "feature")
        self.receiver_tensors = _as_dict(receiver_tensors, "receiver_tensors", "input")
        self.receiver_tensors_alternatives = receiver_tensors_alternatives


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A serving_input_receiver_fn feeding placeholders of the features' dtypes and shapes (the
    batch dimension ``default_batch_size``)."""
    features = _as_dict(features, "features", "feature")

    def serving_input_receiver_fn():
        receivers = {}
        for name, tensor in features.items():
            dims = tensor.shape.dims
            shape = None if dims is None else [default_batch_size, *dims[1:]]
            receivers[name] = placeholder(tensor.dtype, shape, name=name)
        return ServingInputReceiver(receivers, receivers)

    return serving_input_receiver_fn


class PredictOutput:
    """A predict signature's outputs."""

    def __init__(self, outputs):
        self.outputs = _as_dict(outputs, "PredictOutput outputs", "output")
