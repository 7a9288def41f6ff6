"""One tree of a tensor forest, grown online as TF 1.15's V4 kernels grow it
(``contrib/tensor_forest/kernels/v4``: ``traverse_tree_v4``, ``update_model_v4``,
``process_input_v4``, ``grow_tree_v4``, ``tree_predictions_v4``), for dense features and
classification with the default parameters (dense Gini statistics, the basic finish, no
pruning, ``less_or_equal`` tests):

- each node is a leaf or a test ``x[feature] <= threshold`` (left child) else the right child;
  a leaf keeps the class counts of the examples that reached it (its prediction: the counts
  normalized to sum 1, zeros while empty);
- every leaf gathers split candidates: each of its first ``num_splits_to_consider`` examples
  proposes one (and is otherwise not counted, as TF's), a feature drawn uniformly and the
  example's own value of it as the threshold (extremely randomized trees); from then on each
  example adds its class to the leaf's totals and to the left counts of the candidates it passes;
- once ``split_after_samples`` counted examples of more than one class reached a leaf, it
  splits on the candidate of the lowest Laplace-smoothed weighted Gini summed over its sides,
  ``n (1 - sum_c (n_c + 1)^2 / (n + K)^2)`` (the right side's counts: the totals minus the
  left's), among those sending examples both ways, while the tree has room for two more nodes
  (``max_nodes``); its children start with the candidate's two sides' counts.

Regression (``regression``: ``num_outputs`` continuous targets, TF's
``LeastSquaresRegressionGrowStats``): a leaf keeps the sum of the targets that reached it and
their count (its prediction: their mean); the candidates keep the sums, squares and counts of
their left sides; a leaf splits once ``split_after_samples`` examples were counted (any targets),
on the candidate of the lowest sum over outputs of the two sides' variances (unweighted by their
sizes, as TF's ``SplitVariance``).
"""

from __future__ import annotations

import numpy as np


class _GrowStats:
    """A leaf's split candidates and counts since it became a leaf."""

    __slots__ = ("features", "thresholds", "left", "totals", "weight")

    def __init__(self, num_classes):
        self.features: list[int] = []
        self.thresholds: list[float] = []
        self.left = np.zeros((0, num_classes))
        self.totals = np.zeros(num_classes)
        self.weight = 0


class Tree:
    """The nodes of one tree (arrays of ``max_nodes`` rows) and its leaves' statistics."""

    def __init__(self, num_classes, num_features, max_nodes, num_splits_to_consider,
                 split_after_samples, rng, regression=False):
        self.num_classes, self.num_features = num_classes, num_features
        self.regression = regression
        # a leaf's statistics: class counts, or the targets' sums and the count
        self.width = num_classes + 1 if regression else num_classes
        self.max_nodes = max_nodes
        self.num_splits = num_splits_to_consider
        self.split_after = split_after_samples
        self.rng = rng
        self.feature = np.full(max_nodes, -1, np.int64)  # -1: a leaf
        self.threshold = np.zeros(max_nodes, np.float32)
        self.left_child = np.full(max_nodes, -1, np.int64)  # the right child is left + 1
        self.counts = np.zeros((max_nodes, self.width))
        self.size = 1
        self.stats: dict[int, _GrowStats] = {}

    def leaves(self, x):
        """The leaf each row of ``x`` reaches."""
        node = np.zeros(x.shape[0], np.int64)
        rows = np.arange(x.shape[0])
        while True:
            inner = self.feature[node] >= 0
            if not inner.any():
                return node
            r, n = rows[inner], node[inner]
            go_right = x[r, self.feature[n]] > self.threshold[n]
            node[r] = self.left_child[n] + go_right

    def predictions(self, x):
        """Each row's leaf counts normalized to sum 1, or its targets' mean (zeros at an empty
        leaf)."""
        counts = self.counts[self.leaves(x)]
        if self.regression:
            counts, sums = counts[:, :-1], counts[:, -1:]
        else:
            sums = counts.sum(axis=1, keepdims=True)
        return (counts / np.where(sums > 0, sums, 1)).astype(np.float32)

    def _values(self, labels):
        """Per example what the leaves sum: a one-hot class, or the targets and 1."""
        if self.regression:
            return np.concatenate([labels, np.ones((labels.shape[0], 1))], axis=1)
        return np.eye(self.num_classes)[labels]

    def train(self, x, labels):
        """One batch: the leaves' counts, their candidates' statistics, then the splits of the
        leaves that have seen ``split_after_samples`` examples."""
        leaf_of = self.leaves(x)
        np.add.at(self.counts, leaf_of, self._values(labels))
        finished = []
        order = np.argsort(leaf_of, kind="stable")
        bounds = np.flatnonzero(np.diff(leaf_of[order])) + 1
        for rows in np.split(order, bounds):
            if rows.size == 0:
                continue
            leaf = int(leaf_of[rows[0]])
            stats = self.stats.setdefault(leaf, _GrowStats(
                2 * self.num_classes + 1 if self.regression else self.num_classes))
            self._add(stats, x[rows], labels[rows])
            if self._finished(stats):
                finished.append(leaf)
        for leaf in finished:
            if self.size + 2 > self.max_nodes:
                break
            self._split(leaf)

    def _add(self, stats, x, labels):
        """A leaf's examples in order: while it has fewer than ``num_splits_to_consider``
        candidates each example only proposes one (a feature drawn uniformly, the example's
        value of it); the later ones are counted, in the totals and on the side of each
        candidate they pass."""
        new = min(self.num_splits - len(stats.features), x.shape[0])
        if new > 0:
            features = self.rng.integers(0, self.num_features, size=new)
            stats.features += features.tolist()
            stats.thresholds += x[np.arange(new), features].tolist()
            stats.left = np.concatenate([stats.left, np.zeros((new, stats.left.shape[1]))])
            x, labels = x[new:], labels[new:]
        if x.shape[0] == 0:
            return
        onehot = self._values(labels)
        if self.regression:  # the targets, their squares, 1
            onehot = np.concatenate([labels, labels * labels, onehot[:, -1:]], axis=1)
        goes_left = x[:, stats.features] <= np.asarray(stats.thresholds, np.float32)
        stats.left += goes_left.T.astype(np.float64) @ onehot
        stats.totals += onehot.sum(axis=0)
        stats.weight += x.shape[0]

    def _finished(self, stats):
        """TF's basic finish: enough examples, and (classification) not all of one class."""
        if self.regression:
            return stats.weight >= self.split_after
        return stats.weight >= self.split_after and np.count_nonzero(stats.totals) > 1

    def _split(self, leaf):
        stats = self.stats.pop(leaf)  # a leaf no candidate splits starts gathering again
        left, right = stats.left, stats.totals[None, :] - stats.left
        if self.regression:
            k = self.num_classes
            n_left, n_right = left[:, -1], right[:, -1]
            valid = (n_left > 0) & (n_right > 0)
            score = _variances(left, n_left, k) + _variances(right, n_right, k)
            left = np.concatenate([left[:, :k], left[:, -1:]], axis=1)  # sums, count
            right = np.concatenate([right[:, :k], right[:, -1:]], axis=1)
        else:
            score = _weighted_gini(left) + _weighted_gini(right)
            valid = (left.sum(axis=1) > 0) & (right.sum(axis=1) > 0)
        if not valid.any():
            return
        best = int(np.argmin(np.where(valid, score, np.inf)))
        child = self.size
        self.feature[leaf] = stats.features[best]
        self.threshold[leaf] = stats.thresholds[best]
        self.left_child[leaf] = child
        self.counts[child] = left[best]
        self.counts[child + 1] = right[best]
        self.size += 2


def _variances(side, count, k):
    """Per candidate the sum over the k outputs of one side's variance ``E[y^2] - E[y]^2``."""
    n = np.where(count > 0, count, 1)[:, None]
    mean = side[:, :k] / n
    return (side[:, k:2 * k] / n - mean * mean).sum(axis=1)


def _weighted_gini(counts):
    """TF's WeightedSmoothedGini per row of class counts: ``n (1 - sum_c (n_c + 1)^2 /
    (n + K)^2)``, the Laplace-smoothed Gini impurity times the row's count n."""
    n = counts.sum(axis=1)
    smoothed = n + counts.shape[1]
    return n * (1.0 - ((counts + 1.0) ** 2).sum(axis=1) / (smoothed * smoothed))
