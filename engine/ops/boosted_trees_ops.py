"""The ops of ``tf.estimator.BoostedTrees*`` on the kernels of ``boosted_trees``:
``BoostedTreesPredict`` (the logits of bucketized features) and ``BoostedTreesTrainStep`` (one
batch of TF 1.15's ``_bt_model_fn`` training graph with its accumulators, on a single machine).

One training step, as TF's graph runs it: the logits under the ensemble before the step; the
loss's gradient and hessian per example (the head's mean loss: ``(p - y) / n`` and ``p (1 - p) /
n`` for the logistic loss, ``2 (f - y) / n`` and ``2 / n`` for the squared error, times the
example's weight); then either

- while centering the bias: the batch's mean gradient and hessian accumulated, and after
  ``n_batches_per_layer`` batches their averages move the first tree's root by its weight
  (``CenterBias``: the first step makes the root; centering goes on while the step is more than
  1% of the bias), or
- the per feature, node and bucket sums of the examples in the layer being grown accumulated,
  and after ``n_batches_per_layer`` batches their averages grow the layer: each node's best split
  over the features (a node splits also at a negative gain unless pruning is ``pre``); a layer
  that splits nothing is tried again with new batches (it still counts as an attempted layer); a
  tree of ``max_depth`` layers is finished (post-pruned with ``post``) and the next one started.

The ensemble's table and ``progress`` (finished trees, layers of the growing tree, layers
attempted, whether the bias is being centered) are variables (saved with the checkpoints); the
accumulators are the session's, as TF's ConditionalAccumulators are (a new session starts them
empty).
"""

from __future__ import annotations

import numpy as np

from ..framework import dtypes as _dtypes
from ..framework.errors import InvalidArgumentError
from ..framework.registry import apply, register
from ..framework.tensor_shape import TensorShape
from . import boosted_trees as bt

NO_PRUNING, PRE_PRUNING, POST_PRUNING = 0, 1, 2
FINISHED, LAYERS, ATTEMPTED, CENTERING = range(4)
#: TF's kMinDeltaForCenterBias: centering stops when a step is at most 1% of the bias
MIN_DELTA_FOR_CENTER_BIAS = 0.01


class TreeHParams:
    """TF's ``_TreeHParams`` and what the graph needs beside them."""

    def __init__(self, n_trees, max_depth, learning_rate, l1, l2, tree_complexity,
                 min_node_weight, center_bias, pruning_mode, n_batches_per_layer, num_buckets,
                 loss):
        self.n_trees, self.max_depth, self.learning_rate = n_trees, max_depth, learning_rate
        self.l1, self.l2, self.tree_complexity = l1, l2, tree_complexity
        self.min_node_weight, self.center_bias = min_node_weight, center_bias
        self.pruning_mode, self.n_batches_per_layer = pruning_mode, n_batches_per_layer
        self.num_buckets, self.loss = num_buckets, loss


def initial_progress(hparams):
    return np.array([0, 0, 0, int(bool(hparams.center_bias))], np.int64)


def gradients_and_hessians(logits, labels, weights, loss):
    """Per example, the gradient and hessian of the head's mean loss (SUM_OVER_BATCH_SIZE)."""
    z = np.asarray(logits, np.float32)
    y = np.asarray(labels, np.float32).reshape(z.shape)
    normalizer = np.float32(1) / np.float32(z.size)
    if loss == "binary":
        p = np.float32(1) / (np.exp(-z) + np.float32(1))
        g, h = (p - y) * normalizer, p * (np.float32(1) - p) * normalizer
    else:
        g = np.float32(2) * (z - y) * normalizer
        h = np.full_like(z, np.float32(2) * normalizer)
    if weights is not None:
        w = np.asarray(weights, np.float32).reshape(-1, 1)
        g, h = g * w, h * w
    return g, h


class Accumulator:
    """A ConditionalAccumulator on one process: sums, and their average when taken."""

    def __init__(self):
        self.total, self.count = None, 0

    def add(self, value):
        self.total = value.copy() if self.total is None else self.total + value
        self.count += 1

    def take(self):
        average = (self.total / np.float32(self.count)).astype(np.float32)
        self.total, self.count = None, 0
        return average


def _center_bias(table, progress, mean_g, mean_h, hp):
    weight, _ = bt.weights_and_gains(mean_g, mean_h, hp.l1, hp.l2)
    if table.shape[0] == 0:
        return bt.new_tree(table, 0, weight), progress
    table = table.copy()
    current = table[0, bt.VALUES]
    progress[CENTERING] = int(abs(weight / current) > MIN_DELTA_FOR_CENTER_BIAS)
    table[0, bt.VALUES] = current + weight
    return table, progress


def grow_layer(table, progress, stats, layer_nodes, hp):
    """TF's ``CalculateBestGainsPerFeature`` + ``UpdateEnsemble`` on the averaged summaries of
    the layer's nodes (tree ids ``layer_nodes``) of the last tree."""
    progress[ATTEMPTED] += 1
    root = bt.roots(table)[-1]
    splits = bt.best_splits_per_node(*bt.best_gains_per_feature(
        stats, hp.l1, hp.l2, hp.tree_complexity, hp.min_node_weight))
    lr = np.float32(hp.learning_rate)
    split = False
    for index in sorted(splits):
        gain, feature, threshold, left, right = splits[index]
        if hp.pruning_mode == PRE_PRUNING and gain < 0:
            continue
        row = root + layer_nodes[index]
        value = table[row, bt.VALUES]
        table = bt.add_split(table, row, feature, threshold, gain, value + lr * left,
                             value + lr * right)
        split = True
    if not split:
        return table, progress
    progress[LAYERS] += 1
    if progress[LAYERS] >= hp.max_depth:
        if hp.pruning_mode == POST_PRUNING:
            table = bt.post_prune(table, root)
        progress[FINISHED] += 1
        progress[LAYERS] = 0
        table = bt.new_tree(table, table[root, bt.TREE] + 1)
    return table, progress


def train_step(table, progress, accumulators, buckets, labels, weights, hp):
    """One batch (see the module's doc): (table, progress)."""
    progress = np.array(progress, np.int64)
    g, h = gradients_and_hessians(bt.predict(table, buckets), labels, weights, hp.loss)
    if progress[CENTERING]:
        bias = accumulators.setdefault("bias", Accumulator())
        bias.add(np.stack([g.mean(axis=0, dtype=np.float32), h.mean(axis=0, dtype=np.float32)]))
        if bias.count < hp.n_batches_per_layer:
            return table, progress
        mean_g, mean_h = bias.take()
        return _center_bias(table, progress, mean_g[0], mean_h[0], hp)
    if table.shape[0] == 0:
        table = bt.new_tree(table, 0)
    root = bt.roots(table)[-1]
    tree = table[root:]
    layer_nodes = np.flatnonzero((tree[:, bt.FEATURE] < 0)
                                 & (tree[:, bt.DEPTH] == progress[LAYERS]))
    index_of = np.full(tree.shape[0], -1, np.int64)
    index_of[layer_nodes] = np.arange(layer_nodes.size)
    node_index = index_of[bt.leaves(table, root, buckets) - root]
    layer = accumulators.setdefault("layer", Accumulator())
    layer.add(bt.stats_summary(node_index, buckets, g, h, layer_nodes.size, hp.num_buckets))
    if layer.count < hp.n_batches_per_layer:
        return table, progress
    return grow_layer(table.copy(), progress, layer.take(), layer_nodes, hp)


def _buckets(name, buckets, num_buckets=None, op=None):
    b = np.asarray(buckets)
    if b.ndim != 2:
        raise InvalidArgumentError(f"{name}: the bucketized features must be [batch, "
                                   f"features], got shape {list(b.shape)}", op=op)
    if num_buckets is not None and b.size and (b.min() < 0 or b.max() >= num_buckets):
        raise InvalidArgumentError(f"{name}: bucket ids must be in [0, {num_buckets}), got "
                                   f"{b.min()} .. {b.max()}", op=op)
    return b.astype(np.int32)


def _predict_forward(table, buckets):
    return bt.predict(np.asarray(table), _buckets("BoostedTreesPredict", buckets))


def _predict_infer(inputs, **attrs):
    table, buckets = inputs
    n = buckets.shape.dims[0] if buckets.shape.ndims == 2 else None
    width = table.shape.dims[1] if table.shape.ndims == 2 else None
    return [(_dtypes.float32, TensorShape([n, None if width is None else width - bt.VALUES]))]


def _train_forward(state, op, buckets, labels, *weights):
    a = op.attrs
    hp = a["hparams"]
    buckets = _buckets(op.name, buckets, hp.num_buckets, op)
    labels = np.asarray(labels, np.float32).reshape(-1)
    if labels.shape[0] != buckets.shape[0]:
        raise InvalidArgumentError(f"{op.name}: {labels.shape[0]} labels for "
                                   f"{buckets.shape[0]} examples", op=op)
    if not np.isfinite(labels).all():
        raise InvalidArgumentError(f"{op.name}: the labels hold NaN or inf", op=op)
    if hp.loss == "binary" and ((labels < 0) | (labels > 1)).any():
        raise InvalidArgumentError(f"{op.name}: binary labels must be in [0, 1] (a "
                                   f"label_vocabulary's ids 0 and 1), got "
                                   f"{np.unique(labels)[:10]}", op=op)
    table_op, progress_op = a["ref"].op, a["progress"].op
    table, progress = train_step(state.storage(table_op), state.storage(progress_op),
                                 state.resources.setdefault(op, {}), buckets, labels,
                                 weights[0] if weights else None, hp)
    state.variables[table_op] = table
    state.variables[progress_op] = progress


register("BoostedTreesPredict", _predict_forward, _predict_infer)
register("BoostedTreesTrainStep", _train_forward, lambda inputs, **attrs: [],
         stateful=True, mutates=True, foldable=False)


def predict(table, buckets, name="BoostedTreesPredict"):
    """The ensemble's logits [batch, logits] for bucket ids [batch, features]."""
    return apply("BoostedTreesPredict", [table, buckets], name=name)


def train_step_op(table, progress, buckets, labels, hparams, weights=None,
                  name="BoostedTreesTrainStep"):
    """One training batch (see the module's doc), writing ``table`` and ``progress``."""
    inputs = [buckets, labels] + ([] if weights is None else [weights])
    return apply("BoostedTreesTrainStep", inputs, name=name, ref=table, progress=progress,
                 hparams=hparams)
