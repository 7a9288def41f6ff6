"""What a ``model_fn`` returns: ``EstimatorSpec``, for one of the ``ModeKeys``."""

from __future__ import annotations

import collections

from ..framework.graph import Operation, Tensor


class ModeKeys:
    """The three modes an Estimator calls its ``model_fn`` in (TF's spellings)."""

    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


def _is_graph_value(x):
    return isinstance(x, Tensor | Operation) or hasattr(x, "_as_graph_element")


_SPEC_FIELDS = ["mode", "predictions", "loss", "train_op", "eval_metric_ops", "export_outputs",
                "training_chief_hooks", "training_hooks", "scaffold", "evaluation_hooks",
                "prediction_hooks"]


class EstimatorSpec(collections.namedtuple("EstimatorSpec", _SPEC_FIELDS)):
    """The ops of a model for one mode, checked as TF checks them: TRAIN needs ``loss`` and
    ``train_op``, EVAL needs ``loss``, PREDICT needs ``predictions`` (a tensor or a dict of
    them); ``eval_metric_ops`` maps names to ``(value, update_op)`` pairs (``tf.metrics``)."""

    def __new__(cls, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                export_outputs=None, training_chief_hooks=None, training_hooks=None,
                scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode not in (ModeKeys.TRAIN, ModeKeys.EVAL, ModeKeys.PREDICT):
            raise ValueError(f"mode must be one of ModeKeys, got {mode!r}")
        if loss is None and mode in (ModeKeys.TRAIN, ModeKeys.EVAL):
            raise ValueError("Missing loss.")
        if loss is not None:
            loss = loss._as_graph_element() if hasattr(loss, "_as_graph_element") else loss
            if not isinstance(loss, Tensor):
                raise TypeError(f"loss must be Tensor, given: {loss!r}")
            if loss.shape.ndims not in (None, 0) and loss.shape.num_elements() != 1:
                raise ValueError(f"Loss must be scalar, given: {loss.shape}")
        if train_op is None and mode == ModeKeys.TRAIN:
            raise ValueError("Missing train_op.")
        if train_op is not None and not _is_graph_value(train_op):
            raise TypeError(f"train_op must be Operation or Tensor, given: {train_op!r}")
        if predictions is None and mode == ModeKeys.PREDICT:
            raise ValueError("Missing predictions.")
        if predictions is not None:
            leaves = predictions.values() if isinstance(predictions, dict) else [predictions]
            for value in leaves:
                if not _is_graph_value(value):
                    raise TypeError(f"predictions[...] must be Tensor, given: {value!r}")
        metrics = dict(eval_metric_ops or {})
        for name, pair in metrics.items():
            if not (isinstance(pair, tuple) and len(pair) == 2):
                raise TypeError(f"Values of eval_metric_ops must be (metric_value, update_op) "
                                f"tuples, given: {pair!r} for key: {name}")
        return super().__new__(cls, mode, predictions, loss, train_op, metrics,
                               export_outputs, tuple(training_chief_hooks or ()),
                               tuple(training_hooks or ()), scaffold,
                               tuple(evaluation_hooks or ()), tuple(prediction_hooks or ()))
