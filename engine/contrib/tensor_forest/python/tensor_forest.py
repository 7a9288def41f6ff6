"""``tf.contrib.tensor_forest.python.tensor_forest``: random forests of extremely randomized
trees grown online, as TF 1.15's V4 tensor forest for classification over dense features
(``ForestHParams(...).fill()``, ``RandomForestGraphs`` with ``training_graph``,
``training_loss``, ``inference_graph``, ``average_size``) and for regression
(``regression=True``: ``num_classes`` targets per example; the inference's first output is the
trees' mean prediction, the third their variance). How a tree grows: ``tree.py``.

As TF: with ``bagging_fraction < 1`` each tree trains on the examples of a batch whose uniform
draw (seeded by ``base_random_seed + tree``, when non-zero) is below it, sampling without
replacement; with ``feature_bagging_fraction < 1`` each tree sees its own sample of
``bagged_num_features`` columns (drawn by ``fill()``), in training and inference.

Each tree is a resource: ``resources.initialize_resources(resources.shared_resources())``
creates the trees (as TF, the global variables initializer does not). Sparse or dict features and
the early-finish and pruning strategies are TF's options this implementation refuses with
NotImplementedError.
"""

from __future__ import annotations

import math
import random

from ....framework import dtypes as _dtypes
from ....framework.graph import name_scope
from ....ops.array import concat, shape, squeeze, stack
from ....ops.comparisons import less
from ....ops.core import convert_to_tensor, group, ones_like
from ....ops.initializers import random_uniform
from ....ops.math import cast, maximum, negative
from ....ops.reduce import reduce_mean, reduce_sum
from ....ops.resources import register_resource
from ....ops.sparse import gather
from ....ops.where import where
from .. import tree_ops

CLASSIFICATION_LEAF_MODEL_TYPES = ("all_dense",)
FINISH_TYPES = ("basic",)
PRUNING_TYPES = ("none",)
SPLIT_TYPES = ("less_or_equal",)


class ForestHParams:
    """The forest's hyperparameters with TF 1.15's defaults; ``fill()`` (after the
    constructor, with ``num_classes`` and ``num_features`` given) works out the rest:
    ``num_splits_to_consider = min(max(10, floor(sqrt(num_features))), 1000)``."""

    def __init__(self, num_trees=100, max_nodes=10000, bagging_fraction=1.0,
                 num_splits_to_consider=0, feature_bagging_fraction=1.0, max_fertile_nodes=0,
                 split_after_samples=250, valid_leaf_threshold=1, dominate_method="bootstrap",
                 dominate_fraction=0.99, model_name="all_dense", split_finish_name="basic",
                 split_pruning_name="none", prune_every_samples=0,
                 early_finish_check_every_samples=0, collate_examples=False,
                 checkpoint_stats=False, use_running_stats_method=False,
                 initialize_average_splits=False, inference_tree_paths=False, param_file=None,
                 split_name="less_or_equal", **kwargs):
        self.num_trees = num_trees
        self.max_nodes = max_nodes
        self.bagging_fraction = bagging_fraction
        self.feature_bagging_fraction = feature_bagging_fraction
        self.num_splits_to_consider = num_splits_to_consider
        self.max_fertile_nodes = max_fertile_nodes
        self.split_after_samples = split_after_samples
        self.valid_leaf_threshold = valid_leaf_threshold
        self.dominate_method = dominate_method
        self.dominate_fraction = dominate_fraction
        self.model_name = model_name
        self.split_finish_name = split_finish_name
        self.split_pruning_name = split_pruning_name
        self.prune_every_samples = prune_every_samples
        self.early_finish_check_every_samples = early_finish_check_every_samples
        self.collate_examples = collate_examples
        self.checkpoint_stats = checkpoint_stats
        self.use_running_stats_method = use_running_stats_method
        self.initialize_average_splits = initialize_average_splits
        self.inference_tree_paths = inference_tree_paths
        self.param_file = param_file
        self.split_name = split_name
        for name, value in kwargs.items():
            setattr(self, name, value)

    def values(self):
        return self.__dict__

    def fill(self):
        """Sets the parameters left to their defaults (TF's ``fill``)."""
        for needed in ("num_classes", "num_features"):
            if not hasattr(self, needed):
                raise AttributeError(f"ForestHParams: {needed} must be given")
        self.regression = getattr(self, "regression", False)
        self.num_outputs = self.num_classes if self.regression else 1
        self.num_output_columns = self.num_classes + 1
        self.bagged_num_features = int(self.feature_bagging_fraction * self.num_features)
        self.bagged_features = None
        if self.feature_bagging_fraction < 1.0:
            draw = random.Random(getattr(self, "base_random_seed", 0) or None)
            self.bagged_features = [draw.sample(range(self.num_features),
                                                self.bagged_num_features)
                                    for _ in range(self.num_trees)]
        self.num_splits_to_consider = self.num_splits_to_consider or min(
            max(10, math.floor(math.sqrt(self.num_features))), 1000)
        self.base_random_seed = getattr(self, "base_random_seed", 0)
        if self.split_pruning_name == "none":
            self.prune_every_samples = 0
        if self.split_finish_name == "basic":
            self.early_finish_check_every_samples = 0
        return self


def _check_supported(params):
    """NotImplementedError naming each of TF's options this forest does not have."""
    unsupported = []
    for name, allowed in (("model_name", CLASSIFICATION_LEAF_MODEL_TYPES),
                          ("split_finish_name", FINISH_TYPES),
                          ("split_pruning_name", PRUNING_TYPES), ("split_name", SPLIT_TYPES)):
        if getattr(params, name) not in allowed:
            unsupported.append(f"{name}={getattr(params, name)!r}")
    for name in ("initialize_average_splits", "use_running_stats_method", "param_file"):
        if getattr(params, name):
            unsupported.append(f"{name}={getattr(params, name)!r}")
    if unsupported:
        raise NotImplementedError("tensor_forest: not implemented here: " + ", ".join(
            unsupported) + " (the engine's forest: dense features, TF's default statistics)")
    if not hasattr(params, "base_random_seed"):
        raise ValueError("tensor_forest: call ForestHParams(...).fill() before building a forest")


class TreeVariables:
    """One tree's resource (TF keeps the tree and its statistics in two)."""

    def __init__(self, params, tree_num, training=True):
        seed = params.base_random_seed + tree_num if params.base_random_seed else 0
        self.tree = tree_ops.TreeResource(f"tree-{tree_num}", params, seed)
        self.stats = self.tree
        with name_scope(f"tree-{tree_num}"):
            register_resource(self.tree, tree_ops.create_tree(self.tree),
                              tree_ops.tree_is_initialized(self.tree))


class ForestVariables:
    """The trees' resources, indexable by tree number."""

    def __init__(self, params, device_assigner=None, training=True, **_unused):
        self.variables = [TreeVariables(params, i, training) for i in range(params.num_trees)]

    def __getitem__(self, t):
        return self.variables[t]

    def __setitem__(self, t, value):
        self.variables[t] = value


class RandomTreeGraphs:
    """The graph of one tree: training on a batch, predictions, size."""

    def __init__(self, variables, params, tree_num):
        self.variables, self.params, self.tree_num = variables, params, tree_num

    def training_graph(self, input_data, input_labels, random_seed=None, data_spec=None,
                       sparse_features=None, input_weights=None):
        if input_weights is not None:
            raise NotImplementedError("tensor_forest: input_weights are not implemented here")
        return tree_ops.train_tree(self.variables.tree, input_data, input_labels)

    def inference_graph(self, input_data, data_spec=None, sparse_features=None):
        return tree_ops.tree_predictions(self.variables.tree, input_data)

    def size(self):
        return tree_ops.tree_size(self.variables.tree)


def _dense(input_data, what):
    if isinstance(input_data, dict):
        raise NotImplementedError(f"tensor_forest: {what} as a dict of features is not "
                                  "implemented here; pass one [batch, num_features] tensor")
    x = convert_to_tensor(input_data)
    return x if x.dtype == _dtypes.float32 else cast(x, _dtypes.float32)


class RandomForestGraphs:
    """TF's builder of a forest's graphs (see the module's doc)."""

    def __init__(self, params, tree_configs=None, tree_stats=None, device_assigner=None,
                 variables=None, tree_variables_class=TreeVariables, tree_graphs=None,
                 training=True):
        _check_supported(params)
        self.params = params
        self.variables = variables or ForestVariables(params, training=training)
        tree_graph_class = tree_graphs or RandomTreeGraphs
        self.trees = [tree_graph_class(self.variables[i], params, i)
                      for i in range(params.num_trees)]

    def get_all_resource_handles(self):
        return [v.tree for v in self.variables.variables]

    def training_graph(self, input_data, input_labels, num_trainers=1, trainer_id=0,
                       **tree_kwargs):
        """One op training every tree on the batch (labels: class ids)."""
        x = _dense(input_data, "input_data")
        labels = convert_to_tensor(input_labels)
        per = self.params.num_trees / num_trainers
        graphs = []
        for i in range(int(trainer_id * per), int((trainer_id + 1) * per)):
            tree_data, tree_labels = x, labels
            if self.params.bagging_fraction < 1.0:  # TF: a uniform draw per example and tree
                seed = self.params.base_random_seed + i if self.params.base_random_seed else None
                r = random_uniform(shape(x)[:1], seed=seed)
                keep = squeeze(where(less(r, ones_like(r) * self.params.bagging_fraction)), [1])
                tree_data, tree_labels = gather(x, keep), gather(labels, keep)
            graphs.append(self.trees[i].training_graph(self._bag_features(i, tree_data),
                                                       tree_labels, **tree_kwargs))
        return group(*graphs, name="train")

    def _bag_features(self, tree_num, data):
        """The columns of tree ``tree_num``'s feature sample (all without feature bagging)."""
        if not self.params.bagged_features:
            return data
        return concat([data[:, f:f + 1] for f in self.params.bagged_features[tree_num]], 1)

    def inference_graph(self, input_data, **inference_args):
        """(probabilities [batch, num_classes]: the trees' leaf distributions averaged,
        tree_paths [batch, num_trees]: empty strings, regression_variance)."""
        x = _dense(input_data, "input_data")
        probabilities, paths = zip(*[t.inference_graph(self._bag_features(i, x),
                                                       **inference_args)
                                     for i, t in enumerate(self.trees)])
        all_predict = stack(probabilities, axis=1)
        average = reduce_sum(all_predict, 1) / float(self.params.num_trees)
        squares = reduce_sum(all_predict * all_predict, 1) / float(self.params.num_trees)
        return average, stack(paths, axis=1), maximum(0.0, squares - average * average)

    def average_size(self):
        """The mean number of nodes over the trees."""
        return reduce_mean(cast(stack([t.size() for t in self.trees]), _dtypes.float32))

    def training_loss(self, features, labels, name="training_loss"):
        """TF's: minus the average size (a forest has no loss to minimize)."""
        return negative(self.average_size(), name=name)

    def validation_loss(self, features, labels):
        return -self.average_size()
