"""Gradient-boosted decision trees grown layer by layer on batches: the numpy side of
``contrib.boosted_trees`` (TF 1.15's ``gbdt_batch`` with ``LAYER_BY_LAYER`` growth and the
``DIAGONAL_HESSIAN`` multi-class strategy, simplified as written here).

The ensemble is a table of nodes, one row each: ``[tree, feature, threshold, left child, depth,
value_0 .. value_{L-1}]`` (``feature`` -1 at a leaf; the right child is ``left + 1``; rows in
the order made, a tree's root first), so that it lives in one variable and is saved with the
checkpoints. An example's logits are ``learning_rate *`` the sum over trees of the value of the
leaf it reaches; with ``center_bias`` tree 0 is TF's bias: a single leaf of weight 1 (not
shrunk by the learning rate). L is 1 (a sigmoid) for two classes, else the number of classes (a
softmax over the logits).

Bias centering (``center_bias``, TF's ``center_tree_ensemble_bias``): before any tree grows, the
batches' summed g and h per logit are accumulated over ``examples_per_layer`` examples, and the
bias leaf moves by the Newton step ``-G/H`` (0 where H is 0, no regularization) until a step's
summed ``|delta|`` is at most ``centering_epsilon`` (TF's 0.01); then the bias tree is finished
(it counts among ``num_trees``, as TF's) and the first tree starts. The fixed point is the prior:
``log(p / (1 - p))`` for two classes, a softmax equal to the class frequencies for more.

Training, one batch at a time: the loss's gradient g and diagonal hessian h with respect to
each logit at the current predictions are summed per leaf of the last layer of the tree being
grown, per feature and per quantile bucket of that feature (up to ``num_quantiles - 1``
boundaries, the feature's quantiles in the first batch). After ``examples_per_layer`` examples
the layer grows: each of those leaves splits on the (feature, boundary) of the largest gain, ``x <=
boundary`` going left, where a node's score is ``sum_k max(|G_k| - l1, 0)^2 / (H_k + l2)`` and
the gain is the children's scores minus the parent's (minus ``tree_complexity``); a child's value
is its parent's plus the Newton step ``-sign(G_k) max(|G_k| - l1, 0) / (H_k + l2)``. With
``PRE_PRUNE`` a leaf whose best gain is negative stays a leaf; with ``POST_PRUNE`` (TF's default)
it splits anyway, and when the tree is finished at ``max_tree_depth`` its splits of negative gain
whose children are leaves are undone, bottom up (``ops/boosted_trees.post_prune``; a tree pruned
to its root is removed and grown again, as TF). A layer that splits nothing is tried again on the
next examples (TF's no-op). Then the next tree starts, until ``num_trees``.
"""

from __future__ import annotations

import numpy as np

from ...framework import jit
from ...ops import boosted_trees as bt

# the node table, its trees and their traversal are the core kernels' (``ops/boosted_trees``)
TREE, FEATURE, THRESHOLD, LEFT, DEPTH, GAIN = bt.TREE, bt.FEATURE, bt.THRESHOLD, bt.LEFT, \
    bt.DEPTH, bt.GAIN
VALUES = bt.VALUES
empty_table, new_tree, leaves, roots = bt.empty_table, bt.new_tree, bt.leaves, bt.roots
#: the learner's pruning modes (``LearnerConfig.PRE_PRUNE`` / ``POST_PRUNE``)
PRE_PRUNE, POST_PRUNE = 1, 2


def logits(table, x, learning_rate, center_bias=False):
    """The sum over trees of the leaves' values times the trees' weights: the learning rate, 1
    for the bias (tree 0 when ``center_bias``)."""
    out = np.zeros((x.shape[0], table.shape[1] - VALUES), np.float64)
    bias = np.zeros_like(out)
    for root in roots(table):
        target = bias if center_bias and table[root, TREE] == 0 else out
        target += table[leaves(table, root, x), VALUES:]
    return (learning_rate * out + bias).astype(np.float32)


def gradients(logit, labels, logits_dimension, regression=False):
    """(g, h): the loss's gradient and diagonal hessian per logit, softmax cross-entropy (or
    the sigmoid's for one logit), or for ``regression`` the squared error's, ``2 (f - y)`` and
    2."""
    z = logit.astype(np.float64)
    if regression:
        y = labels.reshape(z.shape).astype(np.float64)
        return 2.0 * (z - y), np.full_like(z, 2.0)
    if logits_dimension == 1:
        p = 1.0 / (1.0 + np.exp(-z))
        y = labels.reshape(-1, 1).astype(np.float64)
    else:
        e = np.exp(z - z.max(axis=1, keepdims=True))
        p = e / e.sum(axis=1, keepdims=True)
        y = np.eye(logits_dimension)[labels]
    return p - y, p * (1.0 - p)


def quantile_boundaries(x, num_quantiles):
    """Per feature, its distinct inner quantiles (up to ``num_quantiles - 1``): the
    thresholds its splits may use."""
    qs = np.linspace(0, 1, num_quantiles + 1)[1:-1]
    table = np.quantile(x, qs, axis=0).astype(np.float32).T
    return [np.unique(row) for row in table]


def _bucketize_loop(x, padded, lengths, out):
    """out[i, f] = how many of boundaries[f] (padded[f, :lengths[f]]) are below x[i, f]."""
    for i in range(x.shape[0]):
        for f in range(x.shape[1]):
            lo, hi, v = 0, lengths[f], x[i, f]
            while lo < hi:
                mid = (lo + hi) // 2
                if padded[f, mid] < v:
                    lo = mid + 1
                else:
                    hi = mid
            out[i, f] = lo


_BUCKETIZE = jit.WarmKernel(_bucketize_loop, 0)


def bucketize(x, boundaries):
    """Each value's bucket: how many of its feature's boundaries are below it, so that ``x <=
    boundaries[j]`` exactly when its bucket is at most j (numpy's searchsorted, or the same
    binary search compiled)."""
    out = np.empty(x.shape, np.int32)
    lengths = np.array([len(b) for b in boundaries], np.int64)
    padded = np.zeros((len(boundaries), max(1, int(lengths.max(initial=0)))), np.float32)
    for f, b in enumerate(boundaries):
        padded[f, :len(b)] = b
    if _BUCKETIZE(np.ascontiguousarray(x, np.float32), padded, lengths, out):
        return out
    columns = np.ascontiguousarray(x.T)
    for f, (b, col) in enumerate(zip(boundaries, columns)):
        out[:, f] = np.searchsorted(b, col, side="left")
    return out


class LayerStats:
    """What the layer being grown has seen: the buckets, gradients and hessians of the rows
    that reached its leaves (the ensemble does not change within a layer, so these are the
    sums TF accumulates, kept as rows until the layer grows)."""

    def __init__(self, boundaries):
        self.boundaries = boundaries  # [features] arrays of increasing thresholds
        self.width = max((len(b) for b in boundaries), default=0) + 1
        self.parts: list[tuple] = []
        self.examples = 0
        self.bias_sums = 0.0, 0.0  # (G, H) per logit while centering the bias

    def add(self, leaf_of, x, g, h):
        self.parts.append((leaf_of, bucketize(x, self.boundaries), g, h))

    def by_leaf(self):
        """{leaf: (buckets [n, d], g [n, L], h [n, L])} of the rows seen."""
        if not self.parts:
            return {}
        leaf_of, buckets, g, h = (np.concatenate(p) for p in zip(*self.parts))
        order = np.argsort(leaf_of, kind="stable")
        bounds = np.flatnonzero(np.diff(leaf_of[order])) + 1
        return {int(leaf_of[rows[0]]): (buckets[rows], g[rows], h[rows])
                for rows in np.split(order, bounds) if rows.size}


def _score(g, h, l1, l2):
    shrunk = np.maximum(np.abs(g) - l1, 0.0)
    return (shrunk * shrunk / (h + l2)).sum(axis=-1)


def _step(g, h, l1, l2):
    return -np.sign(g) * np.maximum(np.abs(g) - l1, 0.0) / (h + l2)


def _bucket_sums_loop(columns, g, h, out_g, out_h, out_n):
    """The sums of g, h and the rows per (feature, bucket), ``columns`` the buckets [d, n]: a
    feature at a time (its sums stay in cache), rows added in order (as np.bincount adds
    them)."""
    for f in range(columns.shape[0]):
        for i in range(columns.shape[1]):
            b = columns[f, i]
            out_n[f, b] += 1
            for j in range(g.shape[1]):
                out_g[f, b, j] += g[i, j]
                out_h[f, b, j] += h[i, j]


_BUCKET_SUMS = jit.WarmKernel(_bucket_sums_loop, 0)


def _left_sums_by_bucket(buckets, g, h, width):
    """(G, H, n) left of each (feature, bucket j) threshold: the sums over rows of bucket <= j,
    [d, width - 1, L] (and [d, width - 1] counts): one bincount per output, or the loop."""
    n, d = buckets.shape
    sums = [np.zeros((d, width, g.shape[1])), np.zeros((d, width, g.shape[1])),
            np.zeros((d, width), np.int64)]
    if not _BUCKET_SUMS(np.ascontiguousarray(buckets.T), np.ascontiguousarray(g, np.float64),
                        np.ascontiguousarray(h, np.float64), *sums):
        index = (np.arange(d) * width + buckets).ravel()
        for out, w in ((sums[0], g), (sums[1], h)):
            for j in range(w.shape[1]):
                out[..., j] = np.bincount(index, np.repeat(w[:, j], d), d * width).reshape(
                    d, width)
        sums[2] = np.bincount(index, minlength=d * width).reshape(d, width)
    left = [np.cumsum(a, axis=1)[:, :-1] for a in sums]
    return left, np.arange(width - 1)[None, :].repeat(d, 0)


def _left_sums_by_row(buckets, g, h):
    """The same sums at each distinct bucket of each feature among few rows: the rows sorted
    per feature, cumulative sums, and the thresholds where the next row's bucket differs
    (others are marked with bucket -1)."""
    order = np.argsort(buckets, axis=0, kind="stable")
    sorted_buckets = np.take_along_axis(buckets, order, axis=0)
    left_g = np.cumsum(g[order], axis=0)[:-1].transpose(1, 0, 2)
    left_h = np.cumsum(h[order], axis=0)[:-1].transpose(1, 0, 2)
    counts = np.broadcast_to(np.arange(1, buckets.shape[0])[None, :],
                             (buckets.shape[1], buckets.shape[0] - 1))
    changes = (sorted_buckets[1:] != sorted_buckets[:-1]).T
    thresholds = np.where(changes, sorted_buckets[:-1].T, -1)
    return [left_g, left_h, counts], thresholds


def best_split(buckets, g, h, width, l1, l2, tree_complexity, min_node_weight,
               pruning_mode=PRE_PRUNE):
    """(gain, feature, bucket, left (G, H), right (G, H)) of a leaf's best split, or None:
    the first of the largest gains in (feature, threshold) order; with ``PRE_PRUNE`` only a gain
    of at least 0 (TF's ``UpdateBestSplit``), with ``POST_PRUNE`` any split of two non-empty
    children."""
    n = buckets.shape[0]
    if n < 2:
        return None
    if n > width:
        (left_g, left_h, left_n), threshold = _left_sums_by_bucket(buckets, g, h, width)
    else:
        (left_g, left_h, left_n), threshold = _left_sums_by_row(buckets, g, h)
    total_g, total_h = g.sum(axis=0), h.sum(axis=0)
    right_g, right_h = total_g - left_g, total_h - left_h
    gain = (_score(left_g, left_h, l1, l2) + _score(right_g, right_h, l1, l2)
            - _score(total_g, total_h, l1, l2) - tree_complexity)
    valid = (threshold >= 0) & (left_n > 0) & (left_n < n) & (
        left_h.sum(-1) >= min_node_weight) & (right_h.sum(-1) >= min_node_weight)
    gain = np.where(valid, gain, -np.inf)
    if gain.size == 0:
        return None
    f, p = np.unravel_index(int(np.argmax(gain)), gain.shape)
    if not (gain[f, p] >= 0 if pruning_mode == PRE_PRUNE else gain[f, p] > -np.inf):
        return None
    return (float(gain[f, p]), int(f), int(threshold[f, p]), (left_g[f, p], left_h[f, p]),
            (right_g[f, p], right_h[f, p]))


def grow_layer(table, stats, l1, l2, tree_complexity, min_node_weight, pruning_mode=PRE_PRUNE):
    """(the table with the layer's splits, how many leaves split)."""
    split = 0
    for leaf, (buckets, g, h) in sorted(stats.by_leaf().items()):
        best = best_split(buckets, g, h, stats.width, l1, l2, tree_complexity,
                          min_node_weight, pruning_mode)
        if best is None:
            continue
        gain, feature, bucket, (lg, lh), (rg, rh) = best
        value = table[leaf, VALUES:]
        table = bt.add_split(table, leaf, feature, stats.boundaries[feature][bucket], gain,
                             value + _step(lg, lh, l1, l2), value + _step(rg, rh, l1, l2))
        split += 1
    return table, split


class GrowerConfig:
    """What the growth reads from the learner's configuration (see the module's doc)."""

    def __init__(self, logits_dimension, num_trees, max_depth, learning_rate, l1, l2,
                 tree_complexity, min_node_weight, examples_per_layer, num_quantiles,
                 center_bias=False, centering_epsilon=0.01, pruning_mode=PRE_PRUNE,
                 regression=False):
        self.logits_dimension, self.num_trees = logits_dimension, num_trees
        self.max_depth, self.learning_rate = max_depth, learning_rate
        self.l1, self.l2, self.tree_complexity = l1, l2, tree_complexity
        self.min_node_weight = min_node_weight
        self.examples_per_layer, self.num_quantiles = examples_per_layer, num_quantiles
        self.center_bias, self.centering_epsilon = center_bias, centering_epsilon
        self.pruning_mode, self.regression = pruning_mode, regression


def center_bias_step(table, stats, cfg):
    """(table, whether to continue centering): the bias leaf (row 0) moved by ``-G/H``."""
    g, h = (np.asarray(a, np.float32) for a in stats.bias_sums)
    with np.errstate(divide="ignore", invalid="ignore"):
        delta = np.where(h > 0, -g / h, np.float32(0)).astype(np.float32)
    table[0, VALUES:] += delta
    return table, float(np.abs(delta).sum()) > cfg.centering_epsilon


def initial_progress(cfg):
    """[finished trees, layer, centering]: centering first when ``cfg.center_bias``."""
    return np.array([0, 0, int(cfg.center_bias)], np.int64)


def train_step(table, progress, stats, boundaries, x, labels, cfg):
    """One batch: (table, progress [finished trees, layer, centering], the layer's stats or
    None, the features' bucket boundaries: taken from the first batch and kept)."""
    finished, layer, centering = (int(v) for v in progress)
    if finished >= cfg.num_trees:
        return table, progress, None, boundaries
    if table.shape[0] == 0:
        table = new_tree(empty_table(cfg.logits_dimension), 0)
    if boundaries is None:
        boundaries = quantile_boundaries(x, cfg.num_quantiles)
    g, h = gradients(logits(table, x, cfg.learning_rate, cfg.center_bias), labels,
                     cfg.logits_dimension, cfg.regression)
    stats = stats or LayerStats(boundaries)
    stats.examples += x.shape[0]
    if centering:
        stats.bias_sums = stats.bias_sums[0] + g.sum(0), stats.bias_sums[1] + h.sum(0)
        if stats.examples < cfg.examples_per_layer:
            return table, progress, stats, boundaries
        table, centering = center_bias_step(table.copy(), stats, cfg)
        if not centering:
            finished += 1
            if finished < cfg.num_trees:
                table = new_tree(table, finished)
        return table, np.array([finished, 0, int(centering)], np.int64), None, boundaries
    leaf_of = leaves(table, roots(table)[finished], x)
    active = table[leaf_of, DEPTH] == layer
    stats.add(leaf_of[active], x[active], g[active], h[active])
    if stats.examples < cfg.examples_per_layer:
        return table, progress, stats, boundaries
    table, split = grow_layer(table.copy(), stats, cfg.l1, cfg.l2, cfg.tree_complexity,
                              cfg.min_node_weight, cfg.pruning_mode)
    if split == 0:  # TF: nothing grows; the layer is tried again on the next examples
        return table, np.array([finished, layer, 0], np.int64), None, boundaries
    layer += 1
    if layer >= cfg.max_depth:
        root = roots(table)[finished]
        if cfg.pruning_mode == POST_PRUNE:
            table = bt.post_prune(table, root)
        if cfg.pruning_mode == POST_PRUNE and table.shape[0] == root + 1:
            # pruned to its root: TF removes the tree, and the next one takes its place
            table = new_tree(table[:root], finished)
        else:
            finished += 1
            if finished < cfg.num_trees:
                table = new_tree(table, finished)
        layer = 0
    return table, np.array([finished, layer, 0], np.int64), None, boundaries
