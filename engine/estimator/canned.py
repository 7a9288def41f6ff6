"""TF's canned estimators on feature columns: ``DNNClassifier``, ``DNNRegressor``,
``LinearClassifier``, ``LinearRegressor`` (TF 1.x's classes, on the engine's ``Estimator``).

- DNN: ``input_layer`` of the feature columns (under ``dnn/input_from_feature_columns``), then
  per entry of ``hidden_units`` a dense layer ``dnn/hiddenlayer_i`` (``activation_fn``, ReLU by
  default; Glorot-uniform kernels, zero biases; ``dropout`` as a rate while training), then
  ``dnn/logits``; optimizer ``Adagrad`` at 0.05 by default;
- Linear: ``linear_model`` under ``linear`` (zero-initialized weights); optimizer ``Ftrl`` at
  ``min(0.2, 1 / sqrt(number of feature columns))`` by default.

``optimizer`` is an Optimizer, a function returning one, or one of TF's names ("Adagrad",
"Adam", "Ftrl", "RMSProp", "SGD") at the default learning rate. The loss, predictions and
metrics are the head's (head.py): binary for ``n_classes=2``, multi-class above, regression
for the regressors.
"""

from __future__ import annotations

import math

from ..feature_column.feature_column import input_layer, linear_model
from ..layers import dense
from ..layers import dropout as _dropout
from ..losses import Reduction
from ..nn import relu
from ..ops.initializers import glorot_uniform_initializer
from ..ops.variables import variable_scope
from ..train.adagrad import AdagradOptimizer
from ..train.adam import AdamOptimizer
from ..train.ftrl import FtrlOptimizer
from ..train.global_step import get_global_step
from ..train.gradient_descent import GradientDescentOptimizer
from ..train.optimizer import Optimizer
from ..train.rmsprop import RMSPropOptimizer
from .estimator import Estimator
from .head import Head
from .model_fn import ModeKeys

_OPTIMIZERS = {"Adagrad": AdagradOptimizer, "Adam": AdamOptimizer, "Ftrl": FtrlOptimizer,
               "RMSProp": RMSPropOptimizer, "SGD": GradientDescentOptimizer}


def _optimizer(optimizer, learning_rate):
    """TF's ``get_optimizer_instance``."""
    if isinstance(optimizer, str):
        if optimizer not in _OPTIMIZERS:
            raise ValueError(f"Unsupported optimizer name: {optimizer}. Supported names are: "
                             f"{tuple(sorted(_OPTIMIZERS))}")
        return _OPTIMIZERS[optimizer](learning_rate=learning_rate)
    if callable(optimizer) and not isinstance(optimizer, Optimizer):
        optimizer = optimizer()
    if not isinstance(optimizer, Optimizer):
        raise ValueError(f"The given object is not an Optimizer instance. Given: {optimizer}")
    return optimizer


def _classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction):
    if n_classes is None or n_classes < 2:
        raise ValueError(f"n_classes must be > 1: {n_classes}")
    return Head("binary" if n_classes == 2 else "multi_class", n_classes=n_classes,
                weight_column=weight_column, label_vocabulary=label_vocabulary,
                loss_reduction=loss_reduction)


def _regression_head(label_dimension, weight_column, loss_reduction):
    if label_dimension < 1:
        raise ValueError(f"Invalid label_dimension {label_dimension}.")
    return Head("regression", label_dimension=label_dimension, weight_column=weight_column,
                loss_reduction=loss_reduction)


def _check_columns(feature_columns):
    columns = list(feature_columns or ())
    if not columns:
        raise ValueError("feature_columns must be a non-empty list of feature columns, "
                         f"given: {feature_columns!r}")
    return columns


class _CannedEstimator(Estimator):
    """An Estimator whose model_fn is ``head(logit_fn(features, mode))``."""

    def __init__(self, head, logit_fn, optimizer, learning_rate, model_dir, config,
                 warm_start_from):
        def model_fn(features, labels, mode, config):
            if not isinstance(features, dict):
                raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                                 f"{type(features)}")
            logits = logit_fn(features, mode, head.logits_dimension)

            def train_op_fn(loss):
                return _optimizer(optimizer, learning_rate).minimize(
                    loss, global_step=get_global_step())

            return head.create_estimator_spec(features, mode, logits, labels, train_op_fn)

        super().__init__(model_fn, model_dir=model_dir, config=config,
                         warm_start_from=warm_start_from)


def _dnn_logit_fn(hidden_units, feature_columns, activation_fn, dropout):
    def logit_fn(features, mode, units):
        with variable_scope("dnn"):
            with variable_scope("input_from_feature_columns"):
                net = input_layer(features, feature_columns)
            for i, width in enumerate(hidden_units):
                with variable_scope(f"hiddenlayer_{i}") as scope:
                    net = dense(net, width, activation=activation_fn, name=scope,
                                kernel_initializer=glorot_uniform_initializer())
                    if dropout is not None and mode == ModeKeys.TRAIN:
                        net = _dropout(net, rate=dropout, training=True)
            with variable_scope("logits") as scope:
                return dense(net, units, name=scope,
                             kernel_initializer=glorot_uniform_initializer())

    return logit_fn


def _linear_logit_fn(feature_columns, sparse_combiner):
    def logit_fn(features, mode, units):
        with variable_scope("linear"):
            return linear_model(features, feature_columns, units,
                                sparse_combiner=sparse_combiner)

    return logit_fn


def _check_hidden_units(hidden_units):
    units = list(hidden_units or ())
    if not units or any(int(u) < 1 for u in units):
        raise ValueError(f"hidden_units must be a non-empty list of positive sizes, given: "
                         f"{hidden_units!r}")
    return units


class DNNClassifier(_CannedEstimator):
    """``tf.estimator.DNNClassifier`` (see module doc)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, optimizer="Adagrad",
                 activation_fn=relu, dropout=None, input_layer_partitioner=None, config=None,
                 warm_start_from=None, loss_reduction=Reduction.SUM, batch_norm=False):
        if batch_norm:
            raise ValueError("DNNClassifier: batch_norm=True is not supported here.")
        head = _classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, _dnn_logit_fn(_check_hidden_units(hidden_units),
                                             _check_columns(feature_columns), activation_fn,
                                             dropout),
                         optimizer, 0.05, model_dir, config, warm_start_from)


class DNNRegressor(_CannedEstimator):
    """``tf.estimator.DNNRegressor`` (see module doc)."""

    def __init__(self, hidden_units, feature_columns, model_dir=None, label_dimension=1,
                 weight_column=None, optimizer="Adagrad", activation_fn=relu, dropout=None,
                 input_layer_partitioner=None, config=None, warm_start_from=None,
                 loss_reduction=Reduction.SUM, batch_norm=False):
        if batch_norm:
            raise ValueError("DNNRegressor: batch_norm=True is not supported here.")
        head = _regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, _dnn_logit_fn(_check_hidden_units(hidden_units),
                                             _check_columns(feature_columns), activation_fn,
                                             dropout),
                         optimizer, 0.05, model_dir, config, warm_start_from)


def _linear_learning_rate(columns):
    return min(0.2, 1.0 / math.sqrt(len(columns)))


class LinearClassifier(_CannedEstimator):
    """``tf.estimator.LinearClassifier`` (see module doc)."""

    def __init__(self, feature_columns, model_dir=None, n_classes=2, weight_column=None,
                 label_vocabulary=None, optimizer="Ftrl", config=None, partitioner=None,
                 warm_start_from=None, loss_reduction=Reduction.SUM, sparse_combiner="sum"):
        columns = _check_columns(feature_columns)
        head = _classifier_head(n_classes, weight_column, label_vocabulary, loss_reduction)
        super().__init__(head, _linear_logit_fn(columns, sparse_combiner), optimizer,
                         _linear_learning_rate(columns), model_dir, config, warm_start_from)


class LinearRegressor(_CannedEstimator):
    """``tf.estimator.LinearRegressor`` (see module doc)."""

    def __init__(self, feature_columns, model_dir=None, label_dimension=1, weight_column=None,
                 optimizer="Ftrl", config=None, partitioner=None, warm_start_from=None,
                 loss_reduction=Reduction.SUM, sparse_combiner="sum"):
        columns = _check_columns(feature_columns)
        head = _regression_head(label_dimension, weight_column, loss_reduction)
        super().__init__(head, _linear_logit_fn(columns, sparse_combiner), optimizer,
                         _linear_learning_rate(columns), model_dir, config, warm_start_from)
