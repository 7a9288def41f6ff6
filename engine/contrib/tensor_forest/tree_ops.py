"""The ops of a tensor forest's trees, each tree a resource of the session (``tree.Tree``):
created (or reset) by ``TensorForestTreeCreate``, trained on a batch by ``TensorForestTrainTree``
(TF's ``traverse_tree_v4``, ``update_model_v4``, ``process_input_v4`` and ``grow_tree_v4`` in
order, as one op), read by ``TreePredictionsV4`` and ``TreeSize``. A tree's draws come from
numpy's generator seeded by its seed when non-zero, else by the graph seed and the op (without
a graph seed they differ from run to run, as TF's time-seeded trees)."""

from __future__ import annotations

import numpy as np

from ...framework import dtypes as _dtypes
from ...framework.errors import FailedPreconditionError, InvalidArgumentError
from ...framework.registry import apply, register
from ...framework.tensor_shape import TensorShape
from .tree import Tree


class TreeResource:
    """The handle of one tree: its name and parameters (a session holds its ``Tree``)."""

    def __init__(self, name, params, seed):
        self.name = name
        self.params = params
        self.seed = seed

    def __repr__(self):
        return f"<tree resource {self.name}>"


def _tree(state, op):
    resource = op.attrs["tree"]
    tree = state.resources.get(resource)
    if tree is None:
        raise FailedPreconditionError(
            f"{op.name}: the tree {resource.name} is not initialized; run "
            "resources.initialize_resources(resources.shared_resources()) first", op=op)
    return tree


def _dense_features(op, tree, data):
    x = np.asarray(data, np.float32)
    if x.ndim != 2 or x.shape[1] != tree.num_features:
        raise InvalidArgumentError(f"{op.name}: the input data must be [batch, num_features="
                                   f"{tree.num_features}], got shape {list(x.shape)}", op=op)
    return x


def _create_forward(state, op):
    resource = op.attrs["tree"]
    p = resource.params
    rng = np.random.default_rng(resource.seed) if resource.seed else state.rng_for(op)
    num_features = p.bagged_num_features if getattr(p, "bagged_features", None) else \
        p.num_features
    state.resources[resource] = Tree(p.num_classes, num_features, p.max_nodes,
                                     p.num_splits_to_consider, p.split_after_samples, rng,
                                     regression=bool(getattr(p, "regression", False)))


def _is_initialized_forward(state, op):
    return np.bool_(op.attrs["tree"] in state.resources)


def _train_forward(state, op, data, labels):
    tree = _tree(state, op)
    x = _dense_features(op, tree, data)
    if tree.regression:
        targets = np.asarray(labels, np.float64).reshape(x.shape[0], -1) if np.size(
            labels) == x.shape[0] * tree.num_classes else None
        if targets is None or not np.isfinite(targets).all():
            raise InvalidArgumentError(f"{op.name}: regression labels must be [batch, "
                                       f"{tree.num_classes}] finite values for {x.shape[0]} "
                                       f"examples, got shape {list(np.shape(labels))}", op=op)
        tree.train(x, targets)
        return
    labels = np.asarray(labels).reshape(-1)
    if labels.shape[0] != x.shape[0]:
        raise InvalidArgumentError(f"{op.name}: {labels.shape[0]} labels for {x.shape[0]} "
                                   "examples", op=op)
    classes = labels.astype(np.int64)
    if np.any(classes != labels) or np.any((classes < 0) | (classes >= tree.num_classes)):
        raise InvalidArgumentError(f"{op.name}: labels must be class ids in [0, "
                                   f"{tree.num_classes}), got {np.unique(labels)[:10]}", op=op)
    tree.train(x, classes)


def _predict_forward(state, op, data):
    tree = _tree(state, op)
    x = _dense_features(op, tree, data)
    return tree.predictions(x), np.full(x.shape[0], b"", dtype=object)


def _size_forward(state, op):
    return np.int32(_tree(state, op).size)


def _predict_infer(inputs, tree):
    n = inputs[0].shape.dims[0] if inputs[0].shape.ndims == 2 else None
    return [(_dtypes.float32, TensorShape([n, tree.params.num_classes])),
            (_dtypes.string, TensorShape([n]))]


register("TensorForestTreeCreate", _create_forward, lambda inputs, tree: [],
         stateful=True, foldable=False)
register("TensorForestTreeIsInitialized", _is_initialized_forward,
         lambda inputs, tree: [(_dtypes.bool_, TensorShape([]))], stateful=True, foldable=False)
register("TensorForestTrainTree", _train_forward, lambda inputs, tree: [],
         stateful=True, foldable=False)
register("TreePredictionsV4", _predict_forward, _predict_infer, stateful=True, foldable=False)
register("TreeSize", _size_forward, lambda inputs, tree: [(_dtypes.int32, TensorShape([]))],
         stateful=True, foldable=False)


def create_tree(tree, name="TreeCreate"):
    return apply("TensorForestTreeCreate", [], name=name, tree=tree)


def tree_is_initialized(tree, name="TreeIsInitialized"):
    return apply("TensorForestTreeIsInitialized", [], name=name, tree=tree)


def train_tree(tree, data, labels, name="TrainTree"):
    return apply("TensorForestTrainTree", [data, labels], name=name, tree=tree)


def tree_predictions(tree, data, name="TreePredictionsV4"):
    return apply("TreePredictionsV4", [data], name=name, tree=tree)


def tree_size(tree, name="TreeSize"):
    return apply("TreeSize", [], name=name, tree=tree)
