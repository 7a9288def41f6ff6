"""tf.contrib.tensor_forest: a tree grown by hand-worked steps (TF's V4 rules: proposers not
counted, a split after split_after_samples counted examples, the smoothed weighted Gini; for
regression the sum of the sides' variances and the leaves' means), bagging (the examples whose
seeded uniform draw is below the fraction) and feature bagging (a tree sees its columns only),
the hyperparameters' fill(), determinism by seed, TF's errors, the accuracy on real digits."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.contrib.tensor_forest.python import tensor_forest
from engine.contrib.tensor_forest.tree import Tree, _GrowStats, _weighted_gini
from engine.python.ops import resources


def _forest(num_features, num_classes=2, **kw):
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, num_features])
    y = tf.placeholder(tf.int32, [None])
    params = tensor_forest.ForestHParams(num_classes=num_classes, num_features=num_features,
                                         **kw).fill()
    graph = tensor_forest.RandomForestGraphs(params)
    sess = tf.Session()
    sess.run(tf.group(tf.global_variables_initializer(),
                      resources.initialize_resources(resources.shared_resources())))
    return x, y, graph, sess


def test_one_split_by_hand():
    x, y, graph, sess = _forest(1, num_trees=1, num_splits_to_consider=1,
                                split_after_samples=4)
    train, loss = graph.training_graph(x, y), graph.training_loss(x, y)
    probs = graph.inference_graph(x)[0]
    assert sess.run(loss) == -1.0  # a root leaf
    # the first example proposes the test x <= 0.5 and is not counted in its statistics; the
    # other four make the leaf split (4 >= split_after_samples, two classes)
    sess.run(train, {x: [[0.5], [0.1], [0.2], [0.8], [0.9]], y: [0, 0, 0, 1, 1]})
    assert sess.run(loss) == -3.0
    np.testing.assert_array_equal(sess.run(probs, {x: [[0.3], [0.5], [0.7]]}),
                                  [[1, 0], [1, 0], [0, 1]])
    # the children start from the split's sides, [2, 0] and [0, 2], and count on: [3, 0], [1, 2]
    sess.run(train, {x: [[0.4], [0.6]], y: [0, 0]})
    np.testing.assert_allclose(sess.run(probs, {x: [[0.3], [0.7]]}), [[1, 0], [1 / 3, 2 / 3]])


def test_split_choice_is_the_lowest_smoothed_weighted_gini():
    # TF's WeightedSmoothedGini(n, square, K) = n (1 - (square + 2n + K) / (n + K)^2)
    assert _weighted_gini(np.array([[4.0, 0.0]]))[0] == pytest.approx(4 * (1 - 26 / 36))
    assert _weighted_gini(np.array([[2.0, 2.0]]))[0] == pytest.approx(4 * (1 - 18 / 36))
    tree = Tree(2, 2, 10, 3, 4, np.random.default_rng(0))
    stats = _GrowStats(2)
    stats.features, stats.thresholds = [0, 1, 1], [0.5, 0.25, 0.75]
    # totals [4, 4]: candidate 0 halves both classes, 1 separates them, 2 sends all left
    stats.left, stats.totals, stats.weight = np.array([[2.0, 2], [4, 0], [4, 4]]), \
        np.array([4.0, 4]), 8
    tree.stats[0] = stats
    tree._split(0)
    assert (tree.feature[0], tree.threshold[0], tree.size) == (1, 0.25, 3)
    np.testing.assert_array_equal(tree.counts[1:3], [[4, 0], [0, 4]])


def test_a_pure_leaf_and_a_full_tree_stop_growing():
    x, y, graph, sess = _forest(1, num_trees=1, num_splits_to_consider=1,
                                split_after_samples=2, max_nodes=3)
    train, loss = graph.training_graph(x, y), graph.training_loss(x, y)
    sess.run(train, {x: [[0.5], [0.1], [0.2], [0.3]], y: [1, 1, 1, 1]})
    assert sess.run(loss) == -1.0  # one class only: no split
    sess.run(train, {x: [[0.9], [0.95]], y: [0, 0]})
    assert sess.run(loss) == -3.0
    for _ in range(3):  # max_nodes=3: no room for two more nodes
        sess.run(train, {x: [[0.0], [0.1], [0.2], [0.9], [0.99]], y: [0, 1, 0, 1, 0]})
    assert sess.run(loss) == -3.0


def test_fill_sets_tf_defaults():
    h = tensor_forest.ForestHParams(num_classes=10, num_features=784, num_trees=10,
                                    max_nodes=1000).fill()
    assert (h.num_splits_to_consider, h.split_after_samples, h.base_random_seed) == (28, 250, 0)
    assert tensor_forest.ForestHParams(num_classes=2, num_features=4).fill() \
        .num_splits_to_consider == 10
    assert tensor_forest.ForestHParams(num_classes=2, num_features=4_000_000).fill() \
        .num_splits_to_consider == 1000
    with pytest.raises(AttributeError, match="num_classes"):
        tensor_forest.ForestHParams(num_features=4).fill()


def _digits():
    datasets = pytest.importorskip("sklearn.datasets")
    d = datasets.load_digits()
    order = np.random.RandomState(0).permutation(len(d.data))
    return (d.data[order] / 16).astype(np.float32), d.target[order]


def test_digits_accuracy_and_seeded_determinism():
    data, labels = _digits()
    results = []
    for _ in range(2):
        x, y, graph, sess = _forest(64, num_classes=10, num_trees=5, max_nodes=500,
                                    split_after_samples=50, base_random_seed=7)
        train = graph.training_graph(x, y)
        probs = graph.inference_graph(x)[0]
        for step in range(80):
            rows = np.arange(step * 128, step * 128 + 128) % 1400
            sess.run(train, {x: data[rows], y: labels[rows]})
        results.append(sess.run(probs, {x: data[1400:]}))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_allclose(results[0].sum(1), 1, rtol=1e-6)
    # scikit-learn's ExtraTreesClassifier(n_estimators=5, max_features=10) scored 0.93 on this
    # split (the mean of 10 seeds; batch-grown, unbounded trees); this online forest 0.894
    assert (results[0].argmax(1) == labels[1400:]).mean() > 0.87


def test_errors_name_what_is_wrong():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, None])
    y = tf.placeholder(tf.int32, [None])
    graph = tensor_forest.RandomForestGraphs(
        tensor_forest.ForestHParams(num_classes=2, num_features=3, num_trees=1).fill())
    train = graph.training_graph(x, y)
    sess = tf.Session()
    with pytest.raises(tf.errors.FailedPreconditionError, match="initialize_resources"):
        sess.run(train, {x: np.zeros((2, 3)), y: [0, 1]})
    sess.run(resources.initialize_resources(resources.shared_resources()))
    with pytest.raises(tf.errors.InvalidArgumentError, match="class ids in \\[0, 2\\)"):
        sess.run(train, {x: np.zeros((2, 3)), y: [0, 2]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_features=3"):
        sess.run(train, {x: np.zeros((2, 4)), y: [0, 1]})
    with pytest.raises(NotImplementedError, match="split_pruning_name='half'"):
        tensor_forest.RandomForestGraphs(tensor_forest.ForestHParams(
            num_classes=2, num_features=3, split_pruning_name="half").fill())


def test_regression_split_and_leaf_means_by_hand():
    tf.reset_default_graph()
    x = tf.placeholder(tf.float32, [None, 1])
    y = tf.placeholder(tf.float32, [None, 1])
    params = tensor_forest.ForestHParams(num_classes=1, num_features=1, regression=True,
                                         num_trees=1, num_splits_to_consider=2,
                                         split_after_samples=4).fill()
    graph = tensor_forest.RandomForestGraphs(params)
    train = graph.training_graph(x, y)
    mean, _, variance = graph.inference_graph(x)
    sess = tf.Session()
    sess.run(resources.initialize_resources(resources.shared_resources()))
    # the first two examples propose x <= 0.5 and x <= 0.2; the other four are counted: at 0.5
    # the sides {1, 1} and {3, 5} have variances 0 + 1, at 0.2 {1} and {1, 3, 5} 0 + 8/3
    sess.run(train, {x: [[0.5], [0.2], [0.1], [0.3], [0.8], [0.9]],
                     y: [[1.], [5.], [1.], [1.], [3.], [5.]]})
    np.testing.assert_allclose(sess.run(mean, {x: [[0.4], [0.7]]}), [[1.0], [4.0]])
    assert sess.run(graph.average_size()) == 3.0
    # the children start from the candidate's sides (two targets each) and average on
    sess.run(train, {x: [[0.4], [0.6]], y: [[3.], [6.]]})
    np.testing.assert_allclose(sess.run(mean, {x: [[0.4], [0.7]]}), [[5 / 3], [14 / 3]],
                               rtol=1e-6)
    np.testing.assert_array_equal(sess.run(variance, {x: [[0.4]]}), [[0.0]])  # one tree
    with pytest.raises(tf.errors.InvalidArgumentError, match="regression labels"):
        sess.run(train, {x: [[0.4]], y: [[np.nan]]})


def test_bagging_trains_each_tree_on_the_examples_drawn_below_the_fraction():
    n = 200
    x, y, graph, sess = _forest(1, num_trees=2, bagging_fraction=0.3, base_random_seed=7,
                                split_after_samples=10 ** 6)
    sess.run(graph.training_graph(x, y), {x: np.zeros((n, 1)), y: np.ones(n, np.int32)})
    trees = [sess._state.resources[v.tree] for v in graph.variables.variables]
    # TF's draw: a uniform per example from the tree's seed (base + tree number)
    kept = []
    for i in range(2):
        with tf.Session() as other:
            kept.append(int((other.run(tf.random_uniform([n], seed=7 + i)) < 0.3).sum()))
    assert [int(t.counts[0].sum()) for t in trees] == kept
    assert 30 < kept[0] < 90 and kept[0] != kept[1]


def test_feature_bagging_gives_each_tree_its_columns():
    x, y, graph, sess = _forest(2, num_trees=3, feature_bagging_fraction=0.5,
                                base_random_seed=3, num_splits_to_consider=4,
                                split_after_samples=8)
    bagged = graph.params.bagged_features
    assert [len(b) for b in bagged] == [1, 1, 1] and graph.params.bagged_num_features == 1
    rng = np.random.RandomState(0)
    data = rng.rand(60, 2).astype(np.float32)
    labels = ((data[:, 0] > 0.5) ^ (data[:, 1] > 0.5)).astype(np.int32)
    sess.run(graph.training_graph(x, y), {x: data, y: labels})
    probabilities = graph.trees[0].inference_graph(graph._bag_features(0, x))[0]
    moved = data.copy()
    other = 1 - bagged[0][0]
    moved[:, other] = rng.rand(60)  # the column tree 0 does not see
    np.testing.assert_array_equal(sess.run(probabilities, {x: data}),
                                  sess.run(probabilities, {x: moved}))
    assert sess.run(graph.trees[0].size()) > 1
