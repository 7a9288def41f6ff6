"""``tf.estimator.BoostedTreesClassifier`` / ``BoostedTreesRegressor``: TF 1.15's canned
gradient-boosted trees (``canned/boosted_trees.py``) on the engine's ``Estimator``, their trees
grown by ``ops/boosted_trees_ops`` (TF's kernels, see there).

The features are the feature columns sorted by name: a ``bucketized_column`` is one feature of
its buckets, an ``indicator_column`` one feature of two buckets per category; each example's
bucket ids are what the trees split on (``bucket <= threshold`` goes left). The heads are TF's
(binary logistic for the classifier, squared error for the regressor, both averaged over the
batch). Training stops once ``n_trees`` trees are finished or more than ``2 * n_trees *
max_depth`` layers were attempted (TF's ``_StopAtAttemptsHook``).

As TF: ``pruning_mode`` is 'none', 'pre' or 'post'; pruning needs ``tree_complexity > 0`` and
``tree_complexity`` needs pruning; the classifier is binary. Not implemented here, refused by
name: ``numeric_column`` features (TF buckets them by a quantile sketch over the first
``n_batches_per_layer`` batches: wrap them in a ``bucketized_column``), ``train_in_memory``, the
``experimental_*`` explanations.
"""

from __future__ import annotations

import inspect

from ..feature_column.feature_column import BucketizedColumn, IndicatorColumn, NumericColumn
from ..framework import dtypes as _dtypes
from ..framework.graph import control_dependencies
from ..losses import Reduction
from ..ops import boosted_trees as _bt
from ..ops import boosted_trees_ops as _ops
from ..ops.array import concat, reshape
from ..ops.core import group
from ..ops.lookup_ops import vocabulary_lookup
from ..ops.math import cast
from ..ops.variables import Variable, assign_add
from ..train.global_step import get_or_create_global_step
from ..train.session_run_hook import SessionRunHook
from .estimator import Estimator
from .head import Head
from .model_fn import EstimatorSpec, ModeKeys

_PRUNING_MODES = {"none": _ops.NO_PRUNING, "pre": _ops.PRE_PRUNING, "post": _ops.POST_PRUNING}
_SUPPORTED_COLUMNS = "bucketized_column, indicator_column"


def _pruning_mode(pruning_mode, tree_complexity):
    if pruning_mode not in _PRUNING_MODES:
        raise ValueError(f"Unknown pruning mode: {pruning_mode!r}; one of "
                         f"{sorted(_PRUNING_MODES)}")
    mode = _PRUNING_MODES[pruning_mode]
    if tree_complexity > 0 and mode == _ops.NO_PRUNING:
        raise ValueError("Tree complexity have no effect unless pruning mode is chosen.")
    if tree_complexity <= 0 and mode != _ops.NO_PRUNING:
        raise ValueError("For pruning, tree_complexity must be positive.")
    return mode


def _sorted_columns(feature_columns):
    columns = sorted(feature_columns or (), key=lambda c: c.name)
    if not columns:
        raise ValueError(f"feature_columns must be a non-empty list, given: {feature_columns!r}")
    for column in columns:
        if isinstance(column, NumericColumn):
            raise NotImplementedError(
                f"BoostedTrees: the numeric_column {column.name!r} is not implemented here (TF "
                "buckets it by a quantile sketch): wrap it in a bucketized_column")
        if not isinstance(column, BucketizedColumn | IndicatorColumn):
            raise ValueError(f"For now, only {_SUPPORTED_COLUMNS} is supported but got: "
                             f"{column}")
        if isinstance(column, BucketizedColumn) and column.source_column.dimension != 1:
            raise ValueError("For now, only supports features equivalent to rank 1 but column "
                             f"`{column.source_column.name}` has shape "
                             f"{column.source_column.shape}")
    return columns


def _num_buckets(columns):
    """The buckets of the stats summaries: TF's largest group (at least 2)."""
    return max([2] + [len(c.boundaries) + 1 for c in columns
                      if isinstance(c, BucketizedColumn)])


def _bucketized_features(features, columns):
    """[batch, features] int32 bucket ids, in TF's feature order."""
    if not isinstance(features, dict):
        raise ValueError(f"features should be a dictionary of `Tensor`s. Given type: "
                         f"{type(features)}")
    parts = []
    for column in columns:
        if isinstance(column, BucketizedColumn):
            parts.append(cast(reshape(column.ids(features), [-1, 1]), _dtypes.int32))
        else:
            parts.append(cast(column.dense(features), _dtypes.int32))
    return parts[0] if len(parts) == 1 else concat(parts, 1)


class _StopAtAttemptsHook(SessionRunHook):
    """Stops training once ``max_trees`` trees are finished or more than ``2 * max_trees *
    max_depth`` layers were attempted."""

    def __init__(self, progress, max_trees, max_depth):
        self._progress, self._max_trees, self._max_depth = progress, max_trees, max_depth

    def after_run(self, run_context, run_values):
        progress = run_context.session.run(self._progress)
        if (progress[_ops.FINISHED] >= self._max_trees
                or progress[_ops.ATTEMPTED] > 2 * self._max_trees * self._max_depth):
            run_context.request_stop()


def _bt_model_fn(features, labels, mode, head, columns, hparams, weight_column):
    buckets = _bucketized_features(features, columns)
    with control_dependencies(None):
        table = Variable(_bt.empty_table(head.logits_dimension), trainable=False,
                         validate_shape=False, name="boosted_trees/tree_ensemble")
        progress = Variable(_ops.initial_progress(hparams), trainable=False,
                            name="boosted_trees/progress")
    logits = _ops.predict(table, buckets)

    def train_op_fn(loss):
        weights = None
        if weight_column is not None:
            key = getattr(weight_column, "key", weight_column)
            weights = reshape(cast(features[key], _dtypes.float32), [-1])
        if head.label_vocabulary is not None:  # TF: the labels' ids in the vocabulary
            labels_ids = vocabulary_lookup(labels, head.label_vocabulary)
        else:
            labels_ids = labels
        y = reshape(cast(labels_ids, _dtypes.float32), [-1])
        with control_dependencies([loss]):  # the loss is the ensemble's before this batch
            grow = _ops.train_step_op(table, progress, buckets, y, hparams, weights)
        with control_dependencies([grow]):
            return group(grow, assign_add(get_or_create_global_step(), 1))

    spec = head.create_estimator_spec(features, mode, logits, labels, train_op_fn)
    if mode != ModeKeys.TRAIN:
        return spec
    hook = _StopAtAttemptsHook(progress, hparams.n_trees, hparams.max_depth)
    return EstimatorSpec(spec.mode, predictions=spec.predictions, loss=spec.loss,
                         train_op=spec.train_op,
                         training_hooks=list(spec.training_hooks or ()) + [hook])


class _BoostedTreesBase(Estimator):
    """What both canned estimators do past making their head (their signatures are TF's)."""

    def __init__(self, head, feature_columns, n_batches_per_layer, model_dir, weight_column,
                 n_trees, max_depth, learning_rate, l1_regularization, l2_regularization,
                 tree_complexity, min_node_weight, config, center_bias, pruning_mode,
                 quantile_sketch_epsilon, train_in_memory):
        if train_in_memory:
            raise NotImplementedError("BoostedTrees: train_in_memory=True is not implemented "
                                      "here (n_batches_per_layer=1 over the whole data set "
                                      "grows the same trees)")
        columns = _sorted_columns(feature_columns)
        hparams = _ops.TreeHParams(
            int(n_trees), int(max_depth), float(learning_rate), float(l1_regularization),
            float(l2_regularization), float(tree_complexity), float(min_node_weight),
            bool(center_bias), _pruning_mode(pruning_mode, tree_complexity),
            int(n_batches_per_layer), _num_buckets(columns),
            "regression" if head.kind == "regression" else "binary")

        def model_fn(features, labels, mode, config):
            return _bt_model_fn(features, labels, mode, head, columns, hparams, weight_column)

        super().__init__(model_fn, model_dir=model_dir, config=config)
        self._sorted_feature_columns = columns


def _base_arguments(given):
    """The arguments of ``_BoostedTreesBase`` picked by name from a subclass's ``locals()`` (its
    head and TF's arguments): the list is written once, in the base's signature."""
    names = tuple(inspect.signature(_BoostedTreesBase.__init__).parameters)[1:]
    return {name: given[name] for name in names}


class BoostedTreesClassifier(_BoostedTreesBase):
    """``tf.estimator.BoostedTreesClassifier`` (binary; see the module's doc)."""

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None, n_classes=2,
                 weight_column=None, label_vocabulary=None, n_trees=100, max_depth=6,
                 learning_rate=0.1, l1_regularization=0., l2_regularization=0.,
                 tree_complexity=0., min_node_weight=0., config=None, center_bias=False,
                 pruning_mode="none", quantile_sketch_epsilon=0.01, train_in_memory=False):
        if n_classes != 2:
            raise ValueError("For now only binary classification is supported.n_classes given "
                             f"as {n_classes}")
        head = Head("binary", n_classes=2, weight_column=weight_column,
                    label_vocabulary=label_vocabulary,
                    loss_reduction=Reduction.SUM_OVER_BATCH_SIZE)
        super().__init__(**_base_arguments(locals()))


class BoostedTreesRegressor(_BoostedTreesBase):
    """``tf.estimator.BoostedTreesRegressor`` (one target; see the module's doc)."""

    def __init__(self, feature_columns, n_batches_per_layer, model_dir=None, label_dimension=1,
                 weight_column=None, n_trees=100, max_depth=6, learning_rate=0.1,
                 l1_regularization=0., l2_regularization=0., tree_complexity=0.,
                 min_node_weight=0., config=None, center_bias=False, pruning_mode="none",
                 quantile_sketch_epsilon=0.01, train_in_memory=False):
        if label_dimension != 1:
            raise ValueError("For now only 1 dimension regression is supported.label_dimension "
                             f"given as {label_dimension}")
        head = Head("regression", label_dimension=1, weight_column=weight_column,
                    loss_reduction=Reduction.SUM_OVER_BATCH_SIZE)
        super().__init__(**_base_arguments(locals()))
