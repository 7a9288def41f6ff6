"""``contrib.boosted_trees.estimator_batch.estimator``: ``GradientBoostedDecisionTreeClassifier``,
an estimator of gradient-boosted trees grown layer by layer (``..ensemble``), with the
``contrib.learn`` methods tutorials call (``fit``, ``evaluate``, ``predict``) on the engine's
``Estimator``.

The features are every dense feature of the input's dict (keys sorted, each flattened to
columns) unless ``feature_columns`` names the keys; the head is the canned estimators' (the
mean loss over the batch, as ``contrib.learn``'s heads). The ensemble's node table and progress
are variables, so checkpoints hold the trees; training stops once ``num_trees`` trees are
finished (TF's "Requesting stop since we have reached N trees"; with ``center_bias``, TF's
default, the bias is the first of them). ``pruning_mode``: ``PRE_PRUNE``, or ``POST_PRUNE`` (TF's
default when unspecified). Not implemented, refused by name: the ``TREE_PER_CLASS``
and ``FULL_HESSIAN`` strategies (``DIAGONAL_HESSIAN`` is used for several classes),
``WHOLE_TREE`` growth, feature fractions, weights, string features.
"""

from __future__ import annotations

import numpy as np

from ....estimator.estimator import Estimator
from ....estimator.head import Head
from ....estimator.model_fn import EstimatorSpec, ModeKeys
from ....framework import dtypes as _dtypes
from ....framework.graph import control_dependencies
from ....losses import Reduction
from ....ops.array import concat, reshape
from ....ops.core import convert_to_tensor, group
from ....ops.math import cast
from ....ops.variables import Variable, assign_add
from ....platform import tf_logging as logging
from ....train.global_step import get_or_create_global_step
from ....train.session_run_hook import SessionRunHook
from .. import ensemble, gbdt_ops
from ..proto.learner_pb2 import LearnerConfig


def _grower_config(learner_config, logits_dimension, num_trees, examples_per_layer,
                   num_quantiles, center_bias, regression=False):
    c = learner_config
    unsupported = []
    if c.growing_mode == LearnerConfig.WHOLE_TREE:
        unsupported.append("growing_mode=WHOLE_TREE")
    if logits_dimension > 1 and c.multi_class_strategy == LearnerConfig.TREE_PER_CLASS:
        unsupported.append("multi_class_strategy=TREE_PER_CLASS")
    if logits_dimension > 1 and c.multi_class_strategy == LearnerConfig.FULL_HESSIAN:
        unsupported.append("multi_class_strategy=FULL_HESSIAN")
    if c.feature_fraction_per_tree or c.feature_fraction_per_level:
        unsupported.append("feature fractions")
    if unsupported:
        raise NotImplementedError("boosted_trees: not implemented here: " + ", ".join(
            unsupported) + " (the engine grows LAYER_BY_LAYER with a diagonal hessian)")
    return ensemble.GrowerConfig(
        logits_dimension, num_trees=num_trees if num_trees is not None else 2**31 - 1,
        max_depth=c.constraints.max_tree_depth or 6,
        learning_rate=c.learning_rate_tuner.fixed.learning_rate or 0.1,
        l1=c.regularization.l1, l2=c.regularization.l2,
        tree_complexity=c.regularization.tree_complexity,
        min_node_weight=c.constraints.min_node_weight,
        examples_per_layer=examples_per_layer, num_quantiles=num_quantiles,
        center_bias=bool(center_bias),
        pruning_mode=ensemble.PRE_PRUNE if c.pruning_mode == LearnerConfig.PRE_PRUNE
        else ensemble.POST_PRUNE,  # unspecified: TF's default, POST_PRUNE
        regression=regression)


def _dense_features(features, keys):
    """One [batch, columns] float32 matrix of the features named by ``keys`` (all: sorted)."""
    if not isinstance(features, dict):
        features = {"": features}
    keys = sorted(features) if keys is None else list(keys)
    missing = [k for k in keys if k not in features]
    if missing:
        raise ValueError(f"boosted_trees: features {missing} are not in the input's "
                         f"{sorted(features)}")
    columns = []
    for key in keys:
        value = convert_to_tensor(features[key])
        if value.dtype.is_string:
            raise NotImplementedError(f"boosted_trees: the string feature {key!r} is not "
                                      "implemented here (dense numeric features only)")
        dims = value.shape.dims or []
        width = int(np.prod(dims[1:])) if len(dims) > 1 and None not in dims[1:] else -1
        columns.append(reshape(cast(value, _dtypes.float32), [-1, 1 if len(dims) <= 1 else width]))
    return columns[0] if len(columns) == 1 else concat(columns, 1)


class _StopAtNumTrees(SessionRunHook):
    """Asks training to stop once the ensemble has ``num_trees`` finished trees."""

    def __init__(self, progress, num_trees):
        self._progress, self._num_trees = progress, num_trees

    def after_run(self, run_context, run_values):
        if int(run_context.session.run(self._progress)[0]) >= self._num_trees:
            logging.info("Requesting stop since we have reached %d trees.", self._num_trees)
            run_context.request_stop()


def _model_fn(features, labels, mode, params):
    head, cfg = params["head"], params["grower"]
    x = _dense_features(features, params["feature_keys"])
    with control_dependencies(None):
        table = Variable(ensemble.empty_table(cfg.logits_dimension), name="ensemble/nodes",
                         validate_shape=False, trainable=False)
        progress = Variable(ensemble.initial_progress(cfg), name="ensemble/progress",
                            trainable=False)
    logits = reshape(gbdt_ops.predict(table, x, cfg.learning_rate, cfg.center_bias),
                     [-1, cfg.logits_dimension])

    def train_op_fn(loss):
        with control_dependencies([loss]):  # the loss is the ensemble's before this batch
            grow = gbdt_ops.train(table, progress, x, labels, cfg)
        return group(grow, assign_add(get_or_create_global_step(), 1))

    spec = head.create_estimator_spec(features, mode, logits, labels, train_op_fn)
    if mode != ModeKeys.TRAIN or params["num_trees"] is None:
        return spec
    return EstimatorSpec(spec.mode, predictions=spec.predictions, loss=spec.loss,
                         train_op=spec.train_op,
                         training_hooks=[_StopAtNumTrees(progress, params["num_trees"])])


class _GradientBoostedDecisionTreeEstimator(Estimator):
    """What the classifier and the regressor share: the model and contrib.learn's methods."""

    def __init__(self, head, learner_config, examples_per_layer, num_trees, feature_columns,
                 model_dir, config, center_bias, num_quantiles, refused):
        for name, value in refused:
            if value is not None:
                raise NotImplementedError(f"boosted_trees: {name} is not implemented here")
        keys = None if feature_columns is None else [
            getattr(c, "key", getattr(c, "name", c)) for c in feature_columns]
        grower = _grower_config(learner_config, head.logits_dimension, num_trees,
                                examples_per_layer, num_quantiles, center_bias,
                                regression=head.kind == "regression")
        super().__init__(_model_fn, model_dir=model_dir, config=config,
                         params={"head": head, "grower": grower, "feature_keys": keys,
                                 "num_trees": num_trees})

    def fit(self, x=None, y=None, input_fn=None, steps=None, batch_size=None, monitors=None,
            max_steps=None):
        """``contrib.learn``'s train: ``input_fn`` for ``steps`` more or ``max_steps`` in all."""
        if x is not None or y is not None:
            raise NotImplementedError("fit(x=, y=): pass an input_fn")
        self.train(input_fn, hooks=monitors, steps=steps, max_steps=max_steps)
        return self

    def evaluate(self, x=None, y=None, input_fn=None, feed_fn=None, batch_size=None, steps=None,
                 metrics=None, name=None, checkpoint_path=None, hooks=None):
        """``contrib.learn``'s evaluate: the head's metrics (``accuracy``, ``loss`` ...)."""
        if x is not None or y is not None or metrics is not None:
            raise NotImplementedError("evaluate(x=, y=, metrics=): pass an input_fn")
        return super().evaluate(input_fn, steps=steps, hooks=hooks,
                                checkpoint_path=checkpoint_path, name=name)

    def predict(self, x=None, input_fn=None, batch_size=None, outputs=None, as_iterable=True,
                **kwargs):
        """The predictions, a generator of dicts (``as_iterable``) or one dict of arrays."""
        if x is not None:
            raise NotImplementedError("predict(x=): pass an input_fn")
        out = super().predict(input_fn, predict_keys=outputs, **kwargs)
        if as_iterable:
            return out
        rows = list(out)
        return {k: np.stack([r[k] for r in rows]) for k in rows[0]} if rows else {}


class GradientBoostedDecisionTreeClassifier(_GradientBoostedDecisionTreeEstimator):
    """TF's classifier (arguments as TF's); above 2 classes, one logit per class."""

    def __init__(self, learner_config, examples_per_layer, n_classes=2, num_trees=None,
                 feature_columns=None, weight_column_name=None, model_dir=None, config=None,
                 label_keys=None, feature_engineering_fn=None, logits_modifier_function=None,
                 center_bias=True, use_core_libs=False, output_leaf_index=False,
                 override_global_step_value=None, num_quantiles=100):
        head = Head("binary" if n_classes == 2 else "multi_class", n_classes=n_classes,
                    loss_reduction=Reduction.SUM_OVER_BATCH_SIZE)
        super().__init__(head, learner_config, examples_per_layer, num_trees, feature_columns,
                         model_dir, config, center_bias, num_quantiles,
                         (("weight_column_name", weight_column_name), ("label_keys", label_keys),
                          ("feature_engineering_fn", feature_engineering_fn),
                          ("logits_modifier_function", logits_modifier_function)))


class GradientBoostedDecisionTreeRegressor(_GradientBoostedDecisionTreeEstimator):
    """TF's regressor (arguments as TF's): ``label_dimension`` targets, the squared error (its
    gradient ``2 (f - y)`` and hessian 2 per example); with ``center_bias`` the bias is the
    targets' mean."""

    def __init__(self, learner_config, examples_per_layer, label_dimension=1, num_trees=None,
                 feature_columns=None, label_name=None, weight_column_name=None,
                 model_dir=None, config=None, feature_engineering_fn=None,
                 logits_modifier_function=None, center_bias=True, use_core_libs=False,
                 output_leaf_index=False, override_global_step_value=None,
                 num_quantiles=100):
        head = Head("regression", label_dimension=label_dimension,
                    loss_reduction=Reduction.SUM_OVER_BATCH_SIZE)
        super().__init__(head, learner_config, examples_per_layer, num_trees, feature_columns,
                         model_dir, config, center_bias, num_quantiles,
                         (("label_name", label_name), ("weight_column_name", weight_column_name),
                          ("feature_engineering_fn", feature_engineering_fn),
                          ("logits_modifier_function", logits_modifier_function)))
