"""The two ops of a gradient-boosted ensemble (``ensemble.py``): ``GradientTreesPrediction``
(the logits of a batch under the ensemble's node table) and ``GradientTreesTrain`` (one batch
of layer-by-layer growth, writing the table and progress variables; the layer's statistics and
the features' bucket boundaries are a resource of the session, made again after a restore)."""

from __future__ import annotations

import numpy as np

from ...framework import dtypes as _dtypes
from ...framework.errors import InvalidArgumentError
from ...framework.registry import apply, register
from ...framework.tensor_shape import TensorShape
from . import ensemble


def _features(op, x):
    x = np.asarray(x, np.float32)
    if x.ndim != 2:
        raise InvalidArgumentError(f"{op.name}: the features must be [batch, features], got "
                                   f"shape {list(x.shape)}", op=op)
    if not np.isfinite(x).all():
        raise InvalidArgumentError(f"{op.name}: the features hold NaN or inf", op=op)
    return x


def _predict_forward(table, x, learning_rate, center_bias=False):
    return ensemble.logits(np.asarray(table), np.asarray(x, np.float32), learning_rate,
                           center_bias)


def _predict_infer(inputs, learning_rate, center_bias=False):
    table, x = inputs
    n = x.shape.dims[0] if x.shape.ndims == 2 else None
    width = table.shape.dims[1] if table.shape.ndims == 2 else None
    return [(_dtypes.float32, TensorShape([n, None if width is None
                                           else width - ensemble.VALUES]))]


def _train_forward(state, op, x, labels):
    a = op.attrs
    cfg = a["config"]
    x = _features(op, x)
    labels = np.asarray(labels).reshape(-1)
    classes = labels.astype(np.int64)
    n_classes = 2 if cfg.logits_dimension == 1 else cfg.logits_dimension
    if cfg.regression:
        n_labels = labels.shape[0] // cfg.logits_dimension
        if n_labels != x.shape[0] or labels.shape[0] % cfg.logits_dimension:
            raise InvalidArgumentError(f"{op.name}: {labels.shape[0]} targets for "
                                       f"{x.shape[0]} examples of {cfg.logits_dimension}", op=op)
        if not np.isfinite(labels).all():
            raise InvalidArgumentError(f"{op.name}: the targets hold NaN or inf", op=op)
        classes = labels.astype(np.float64)
    elif labels.shape[0] != x.shape[0]:
        raise InvalidArgumentError(f"{op.name}: {labels.shape[0]} labels for {x.shape[0]} "
                                   "examples", op=op)
    elif np.any(classes != labels) or np.any((classes < 0) | (classes >= n_classes)):
        raise InvalidArgumentError(f"{op.name}: labels must be class ids in [0, {n_classes}), "
                                   f"got {np.unique(labels)[:10]}", op=op)
    table_op, progress_op = a["ref"].op, a["progress"].op
    stats, boundaries = state.resources.get(op, (None, None))
    table, progress, stats, boundaries = ensemble.train_step(
        state.storage(table_op), state.storage(progress_op), stats, boundaries, x, classes,
        cfg)
    state.variables[table_op] = table
    state.variables[progress_op] = np.asarray(progress, np.int64)
    state.resources[op] = (stats, boundaries)


register("GradientTreesPrediction", _predict_forward, _predict_infer)
register("GradientTreesTrain", _train_forward, lambda inputs, **attrs: [],
         stateful=True, mutates=True, foldable=False)


def predict(table, x, learning_rate, center_bias=False, name="GradientTreesPrediction"):
    return apply("GradientTreesPrediction", [table, x], name=name,
                 learning_rate=float(learning_rate), center_bias=bool(center_bias))


def train(table, progress, x, labels, config, name="GradientTreesTrain"):
    return apply("GradientTreesTrain", [x, labels], name=name, ref=table, progress=progress,
                 config=config)
