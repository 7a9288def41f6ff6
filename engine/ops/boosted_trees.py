"""Gradient-boosted trees grown layer by layer, on numpy: TF's core kernels
(``tensorflow/core/kernels/boosted_trees``: ``tree_helper.h``, ``stats_ops.cc``,
``training_ops.cc``, ``resources.cc``), shared by ``tf.estimator.BoostedTrees*`` (through
``boosted_trees_ops``) and ``tf.contrib.boosted_trees``.

An ensemble is a table of nodes, one row each: ``[tree, feature, threshold, left child, depth,
gain, value_0 .. value_{L-1}]`` (``feature`` -1 at a leaf; the right child is ``left + 1``; rows
in the order made, a tree's root first, so a node's id in its tree is its row minus the root's),
so that it lives in one variable and is saved with the checkpoints. An example goes left at a
split when its feature is ``<= threshold`` (a bucket id for the estimators). A split node keeps
the value it had as a leaf (TF's ``original_leaf``) and the gain it was split with (for
post-pruning). Every tree weighs 1: the learning rate is in the leaves' values (a child's value
is its parent's plus ``learning_rate`` times its Newton step), as TF's layer-by-layer boosting.

Arithmetic is float32 in TF's order (sums over examples and buckets in sequence). TF breaks
ties by the first bucket and the lowest feature, a gain winning only when larger by 1e-15; here
gains within float32 rounding of each other (a relative ``TIE``) are ties too: gains equal in
exact arithmetic (a split of symmetric examples) differ in their last bit by the exp() of the
logistic loss, whose float32 rounding differs between numpy and TF's Eigen, and TF's choice is
then the first (TF's own tests pin such a case).
"""

from __future__ import annotations

import numpy as np

TREE, FEATURE, THRESHOLD, LEFT, DEPTH, GAIN = range(6)
VALUES = 6

#: TF's tolerance for a larger gain (``GainIsLarger``) and equal gains (``GainsAreEqual``)
GAIN_TOLERANCE = np.float32(1e-15)
#: gains within this relative distance are ties (float32 rounding; see the module's doc)
TIE = np.float32(8 * np.finfo(np.float32).eps)
_F32 = np.float32


def empty_table(logits_dimension):
    return np.zeros((0, VALUES + logits_dimension), np.float32)


def new_tree(table, tree, value=0.0):
    """The table with a new tree's root: a leaf of ``value``."""
    root = np.zeros((1, table.shape[1]), np.float32)
    root[0, TREE], root[0, FEATURE], root[0, LEFT] = tree, -1, -1
    root[0, VALUES:] = value
    return np.concatenate([table, root])


def roots(table):
    """The row of each tree's root, in tree order."""
    trees = table[:, TREE].astype(np.int64)
    return np.flatnonzero(np.r_[True, trees[1:] != trees[:-1]]) if len(trees) else trees


def leaves(table, root, x):
    """The row of the leaf each row of ``x`` reaches in the tree whose root is row ``root``."""
    node = np.full(x.shape[0], root, np.int64)
    rows = np.arange(x.shape[0])
    while True:
        feature = table[node, FEATURE].astype(np.int64)
        inner = feature >= 0
        if not inner.any():
            return node
        r, n = rows[inner], node[inner]
        right = x[r, feature[inner]] > table[n, THRESHOLD]
        node[r] = root + table[n, LEFT].astype(np.int64) + right


def predict(table, x, weights=None):
    """The logits: over trees in order, ``weight *`` the value of the leaf reached, summed in
    float32 (TF's ``BoostedTreesPredict``; every weight 1 unless given)."""
    out = np.zeros((x.shape[0], table.shape[1] - VALUES), np.float32)
    for i, root in enumerate(roots(table)):
        value = table[leaves(table, root, x), VALUES:]
        out += value if weights is None else _F32(weights[i]) * value
    return out


def weights_and_gains(g, h, l1, l2):
    """(weight, gain) of a node of summed gradient ``g`` and hessian ``h`` (TF's
    ``CalculateWeightsAndGains`` for one logit, elementwise): the weight minimizes
    ``1/2 (h + l2) w^2 + g w + l1 |w|``, ``-(g -+ l1) / (h + l2)``, and the gain is ``(g -+ l1)^2
    / (h + l2)``; both 0 where ``|g| <= l1`` or ``h + l2 <= 1e-15``."""
    g, h = np.asarray(g, np.float32), np.asarray(h, np.float32)
    l1, l2 = _F32(l1), _F32(l2)
    shrunk = g - np.sign(g) * l1 if l1 > 0 else g
    denominator = h + l2
    zero = (denominator <= GAIN_TOLERANCE) | ((np.abs(g) <= l1) if l1 > 0 else False)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.where(zero, _F32(0), -shrunk / np.where(zero, _F32(1), denominator))
    gain = np.where(zero, _F32(0), -shrunk * weight)
    return weight.astype(np.float32), gain.astype(np.float32)


def stats_summary(node_index, buckets, g, h, num_nodes, num_buckets):
    """[features, nodes, buckets, 2]: per feature, node and bucket the float32 sums of the
    examples' gradients and hessians, in example order (TF's ``MakeStatsSummary``); an example
    of node index -1 (outside the layer being grown) counts nowhere."""
    features = buckets.shape[1]
    out = np.zeros((features, num_nodes, num_buckets, 2), np.float32)
    keep = node_index >= 0
    if not keep.any():
        return out
    rows, b = node_index[keep], buckets[keep]
    gh = np.stack([np.asarray(g, np.float32).reshape(-1)[keep],
                   np.asarray(h, np.float32).reshape(-1)[keep]], axis=1)
    for f in range(features):
        np.add.at(out[f], (rows, b[:, f]), gh)
    return out


def is_larger(gain, best):
    """Whether ``gain`` beats ``best``: larger by TF's 1e-15 and by more than float32 rounding."""
    gain, best = np.asarray(gain, np.float32), np.asarray(best, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        scale = np.maximum(np.abs(gain), np.abs(np.where(best > np.finfo(np.float32).min, best,
                                                          0)))
        return (gain - best >= GAIN_TOLERANCE) & (gain - best > TIE * scale)


def best_gains_per_feature(stats, l1, l2, tree_complexity, min_node_weight):
    """Per feature and node of the summary: (valid, gain, threshold bucket, left weight, right
    weight), TF's ``BoostedTreesCalculateBestGainsPerFeature``: the left child takes the buckets
    ``<= b``, the first bucket of the largest children's gain wins, the gain is that minus the
    node's own minus ``tree_complexity``; a node whose summed hessian is below
    ``min_node_weight`` has no candidate (valid False)."""
    cum = np.cumsum(stats, axis=2, dtype=np.float32)  # sequential, as TF's running sums
    total = cum[:, :, -1:, :]
    _, parent_gain = weights_and_gains(total[..., 0], total[..., 1], l1, l2)
    left_w, left_gain = weights_and_gains(cum[..., 0], cum[..., 1], l1, l2)
    right_w, right_gain = weights_and_gains(total[..., 0] - cum[..., 0],
                                            total[..., 1] - cum[..., 1], l1, l2)
    children = left_gain + right_gain
    best = np.full(children.shape[:2], np.finfo(np.float32).min, np.float32)
    bucket = np.zeros(children.shape[:2], np.int64)
    for b in range(children.shape[2]):
        larger = is_larger(children[:, :, b], best)
        best = np.where(larger, children[:, :, b], best)
        bucket = np.where(larger, b, bucket)
    gain = (best - parent_gain[..., 0]) - _F32(tree_complexity)
    valid = ~(total[..., 0, 1] < _F32(min_node_weight))
    pick = bucket[..., None]
    return (valid, gain.astype(np.float32), bucket,
            np.take_along_axis(left_w, pick, 2)[..., 0],
            np.take_along_axis(right_w, pick, 2)[..., 0])


def best_splits_per_node(valid, gain, threshold, left, right):
    """{node index: (gain, feature, threshold, left weight, right weight)}: per node the
    candidate of the largest gain over the features, ties to the lowest feature (TF's
    ``FindBestSplitsPerNode``)."""
    out = {}
    for f in range(valid.shape[0]):
        for n in np.flatnonzero(valid[f]):
            candidate = (gain[f, n], f, int(threshold[f, n]), left[f, n], right[f, n])
            best = out.get(int(n))
            if best is None or is_larger(gain[f, n], best[0]):
                out[int(n)] = candidate
    return out


def add_split(table, row, feature, threshold, gain, left_values, right_values):
    """The table with leaf ``row`` split: two leaves appended (left, then right) with the
    given values, at the depth below it."""
    root = roots_of(table)[row]
    table[row, FEATURE], table[row, THRESHOLD], table[row, GAIN] = feature, threshold, gain
    table[row, LEFT] = table.shape[0] - root
    children = np.zeros((2, table.shape[1]), np.float32)
    children[:, TREE], children[:, FEATURE], children[:, LEFT] = table[row, TREE], -1, -1
    children[:, DEPTH] = table[row, DEPTH] + 1
    children[0, VALUES:], children[1, VALUES:] = left_values, right_values
    return np.concatenate([table, children])


def roots_of(table):
    """Each row's tree root row."""
    starts = roots(table)
    return starts[np.searchsorted(starts, np.arange(table.shape[0]), side="right") - 1]


def post_prune(table, root):
    """The table with the tree at ``root`` post-pruned (TF's ``PostPruneTree``): children
    first, a split of negative gain whose children are both leaves becomes a leaf again (of the
    value it had before the split), its two children removed; nodes renumbered in order."""
    end = root + 1
    while end < table.shape[0] and table[end, TREE] == table[root, TREE]:
        end += 1
    tree = table[root:end].copy()
    deleted = []

    def prune(node):
        if tree[node, FEATURE] < 0:
            return
        left = int(tree[node, LEFT])
        prune(left)
        prune(left + 1)
        if tree[node, GAIN] < 0 and tree[left, FEATURE] < 0 and tree[left + 1, FEATURE] < 0:
            deleted.extend((left, left + 1))
            tree[node, FEATURE], tree[node, LEFT], tree[node, GAIN] = -1, -1, 0
            tree[node, THRESHOLD] = 0

    prune(0)
    if not deleted:
        return table
    keep = np.setdiff1d(np.arange(tree.shape[0]), deleted)
    new_id = np.cumsum(np.isin(np.arange(tree.shape[0]), keep)) - 1
    tree = tree[keep]
    inner = tree[:, FEATURE] >= 0
    tree[inner, LEFT] = new_id[tree[inner, LEFT].astype(np.int64)]
    return np.concatenate([table[:root], tree, table[end:]])
