"""tf.estimator.BoostedTreesClassifier / BoostedTreesRegressor against the numbers TF's own tests
pin (tensorflow_estimator's canned/boosted_trees_test.py for TF 1.x: its five examples of three
bucketized features, the ensembles after each round with and without bias centering, the
regressor's predictions and losses, the indicator-column split), post- and pre-pruning against
the unpruned tree they come from, and TF's errors."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.ops import boosted_trees as bt
from engine.ops import boosted_trees_ops as ops

fc = tf.feature_column
BOUNDARIES = [-2., .5, 12.]
FEATURES = np.array([[12.5, 1.0, -2.001, -2.0001, -1.999],   # buckets [3, 2, 0, 0, 1]
                     [2.0, -3.0, 0.5, 0.0, 0.4995],          # [2, 0, 2, 1, 1]
                     [3.0, 20.0, 50.0, -100.0, 102.75]],     # [2, 3, 3, 0, 3]
                    np.float32)
BUCKETS = np.array([[3, 2, 2], [2, 0, 3], [0, 2, 3], [0, 1, 0], [1, 1, 3]], np.int32)
CLASSES = np.array([0, 1, 1, 0, 0], np.float32)
TARGETS = np.array([1.5, 0.3, 0.2, 2., 5.], np.float32)
FEATURES_DICT = {f"f_{i}": FEATURES[i] for i in range(3)}
#: TF's testInferRegressor: one tree of depth 5 on the five examples
ONE_TREE_PREDICTIONS = [0.571619, 0.262821, 0.124549, 0.956801, 1.769801]


def _columns():
    return [fc.bucketized_column(fc.numeric_column(f"f_{i}"), BOUNDARIES) for i in range(3)]


def _input_fn(labels):
    def input_fn():
        return ({k: tf.constant(v) for k, v in FEATURES_DICT.items()},
                tf.constant(labels.reshape(-1, 1)))
    return input_fn


def _predict_fn():
    return tf.estimator.inputs.numpy_input_fn(x=FEATURES_DICT, y=None, batch_size=1,
                                              num_epochs=1, shuffle=False)


def test_regressor_predictions_and_losses_are_tfs(tmp_path):
    est = tf.estimator.BoostedTreesRegressor(_columns(), n_batches_per_layer=1, n_trees=1,
                                             max_depth=5, model_dir=str(tmp_path / "one"))
    est.train(_input_fn(TARGETS), steps=100)  # stops after 5 steps: 1 tree of 5 layers
    assert est.get_variable_value("global_step") == 5
    finished, _, attempted, _ = est.get_variable_value("boosted_trees/progress")
    assert (finished, attempted) == (1, 5)
    predictions = [p["predictions"][0] for p in est.predict(_predict_fn())]
    np.testing.assert_allclose(predictions, ONE_TREE_PREDICTIONS, atol=1e-6)
    loss = est.evaluate(_input_fn(TARGETS), steps=1)["average_loss"]
    np.testing.assert_allclose(loss, 2.478283, rtol=1e-6)
    two = tf.estimator.BoostedTreesRegressor(_columns(), n_batches_per_layer=1, n_trees=2,
                                             max_depth=5, model_dir=str(tmp_path / "two"))
    two.train(_input_fn(TARGETS), steps=100)
    assert two.get_variable_value("global_step") == 10
    np.testing.assert_allclose(two.evaluate(_input_fn(TARGETS), steps=1)["average_loss"],
                               1.008551, rtol=1e-6)


def test_smaller_batches_accumulated_per_layer_grow_the_same_tree(tmp_path):
    # TF's testTrainRegressorWithDatasetSmallerBatch: 5 batches of 1 per layer average to the
    # statistics of the whole batch (the mean loss's gradients are 5 times larger each)
    def input_fn():
        data = tf.data.Dataset.from_tensor_slices(
            (dict(FEATURES_DICT), TARGETS.reshape(-1, 1)))
        return data.batch(1).repeat()

    est = tf.estimator.BoostedTreesRegressor(_columns(), n_batches_per_layer=5, n_trees=1,
                                             max_depth=5, model_dir=str(tmp_path))
    est.train(input_fn, steps=100)
    assert est.get_variable_value("global_step") == 25
    predictions = [p["predictions"][0] for p in est.predict(_predict_fn())]
    np.testing.assert_allclose(predictions, ONE_TREE_PREDICTIONS, atol=1e-6)


def test_classifier_learns_the_five_examples(tmp_path):
    est = tf.estimator.BoostedTreesClassifier(_columns(), n_batches_per_layer=1, n_trees=1,
                                              max_depth=5, model_dir=str(tmp_path))
    est.train(_input_fn(CLASSES), steps=100)
    assert est.get_variable_value("global_step") == 5
    assert est.evaluate(_input_fn(CLASSES), steps=1)["accuracy"] == 1.0
    assert [int(p["class_ids"][0]) for p in est.predict(_predict_fn())] == [0, 1, 1, 0, 0]


def _hparams(center_bias=False, pruning=ops.NO_PRUNING, tree_complexity=0.0, loss="binary",
             max_depth=2, l2=0.01):
    # TF's ModelFnTests: 2 trees of depth 2, learning rate 0.1, l2 0.01
    return ops.TreeHParams(2, max_depth, 0.1, 0.0, l2, tree_complexity, 0.0, center_bias,
                           pruning, 1, 4, loss)


def _rounds(hp, n, labels=CLASSES):
    table, progress, accumulators, out = bt.empty_table(1), ops.initial_progress(hp), {}, []
    for _ in range(n):
        table, progress = ops.train_step(table, progress, accumulators, BUCKETS, labels, None,
                                         hp)
        out.append((table, progress))
    return out


def _nodes(table, tree):
    """[(feature, threshold, left, gain, value)] of a tree's nodes, in node order."""
    rows = table[table[:, bt.TREE] == tree]
    return [(int(r[bt.FEATURE]), int(r[bt.THRESHOLD]), int(r[bt.LEFT]), float(r[bt.GAIN]),
             float(r[bt.VALUES])) for r in rows]


def _check(nodes, expected):
    assert [n[:3] for n in nodes] == [e[:3] for e in expected]
    np.testing.assert_allclose([n[3:] for n in nodes], [e[3:] for e in expected], atol=2e-6)


def test_classification_rounds_are_tfs_ensembles():
    (t1, p1), (t2, p2), (t3, p3) = _rounds(_hparams(), 3)
    _check(_nodes(t1, 0), [(2, 2, 1, 0.387675, 0), (-1, 0, -1, 0, -0.181818),
                           (-1, 0, -1, 0, 0.0625)])
    assert p1.tolist() == [0, 1, 1, 0]
    second = [(2, 2, 1, 0.387675, 0), (0, 3, 3, 0.0, -0.181818), (0, 0, 5, 0.105518, 0.0625),
              (-1, 0, -1, 0, -0.348397), (-1, 0, -1, 0, -0.181818), (-1, 0, -1, 0, 0.224091),
              (-1, 0, -1, 0, 0.056815)]
    _check(_nodes(t2, 0), second)
    _check(_nodes(t2, 1), [(-1, 0, -1, 0, 0.0)])  # the next tree's empty root
    assert p2.tolist() == [1, 0, 2, 0]
    _check(_nodes(t3, 0), second)
    _check(_nodes(t3, 1), [(1, 0, 1, 0.287131, 0), (-1, 0, -1, 0, 0.162042),
                           (-1, 0, -1, 0, -0.086986)])
    assert p3.tolist() == [1, 1, 3, 0]


def test_classification_with_bias_centering_rounds_are_tfs_ensembles():
    rounds = _rounds(_hparams(center_bias=True), 6)
    # four steps center the bias (the fourth step is within 1% of it)
    assert [p[ops.CENTERING] for _, p in rounds[:4]] == [1, 1, 1, 0]
    _check(_nodes(rounds[3][0], 0), [(-1, 0, -1, 0, -0.405086)])
    _check(_nodes(rounds[4][0], 0), [(2, 2, 1, 0.407711, -0.405086),
                                     (-1, 0, -1, 0, -0.556054), (-1, 0, -1, 0, -0.301233)])
    _check(_nodes(rounds[5][0], 0), [
        (2, 2, 1, 0.407711, -0.405086), (0, 3, 3, 0.0, -0.556054),
        (0, 0, 5, 0.09876, -0.301233), (-1, 0, -1, 0, -0.698072), (-1, 0, -1, 0, -0.556054),
        (-1, 0, -1, 0, -0.106016), (-1, 0, -1, 0, -0.27349)])


def test_post_pruning_collapses_the_negative_gain_splits_of_the_unpruned_tree():
    complexity = 0.1
    unpruned = _rounds(_hparams(tree_complexity=complexity, loss="regression"), 2)[1][0]
    pruned = _rounds(_hparams(pruning=ops.POST_PRUNING, tree_complexity=complexity,
                              loss="regression"), 2)[1][0]
    nodes = _nodes(unpruned, 0)
    negative = [i for i, n in enumerate(nodes) if n[0] >= 0 and n[3] < 0
                and nodes[n[2]][0] < 0 and nodes[n[2] + 1][0] < 0]
    assert negative  # the case prunes something
    # the pruned tree predicts each example the value its unpruned leaf's parent had, where
    # that parent's split was of negative gain
    leaf = bt.leaves(unpruned, 0, BUCKETS)
    parent = {n[2] + k: i for i, n in enumerate(nodes) if n[0] >= 0 for k in (0, 1)}
    expected = [nodes[parent[j]][4] if parent.get(j) in negative else nodes[j][4] for j in leaf]
    tree = pruned[pruned[:, bt.TREE] == 0]
    assert tree.shape[0] == len(nodes) - 2 * len(negative)
    np.testing.assert_allclose(bt.predict(tree, BUCKETS)[:, 0], expected, rtol=1e-6)


def test_pre_pruning_never_splits_at_a_negative_gain():
    table = _rounds(_hparams(pruning=ops.PRE_PRUNING, tree_complexity=0.1, loss="regression"),
                    3)[2][0]
    gains = table[table[:, bt.FEATURE] >= 0, bt.GAIN]
    assert gains.size and (gains >= 0).all()


def test_indicator_column_split_is_tfs(tmp_path):
    # TF's testTrainEvaluateAndPredictWithIndicatorColumn: the categorical feature decides the
    # labels; features sorted by name: the bucketized one, then 'bad', 'good', 'ok'
    categorical = fc.categorical_column_with_vocabulary_list("categorical", ("bad", "good", "ok"))
    labels = np.array([[0.], [5.7], [5.7], [0.], [0.]], np.float32)
    input_fn = tf.estimator.inputs.numpy_input_fn(
        x={"an_uninformative_feature": np.array([1., 1., 1., 1., 1.], np.float32),
           "categorical": np.array(["bad", "good", "good", "ok", "bad"])},
        y=labels, batch_size=5, shuffle=False)
    est = tf.estimator.BoostedTreesRegressor(
        [fc.bucketized_column(fc.numeric_column("an_uninformative_feature"), BOUNDARIES),
         fc.indicator_column(categorical)], n_batches_per_layer=1, n_trees=1,
        learning_rate=1.0, max_depth=1, model_dir=str(tmp_path))
    est.train(input_fn, steps=1)
    table = est.get_variable_value("boosted_trees/tree_ensemble")
    assert table[0, bt.FEATURE] == 2 and table[0, bt.THRESHOLD] == 0
    assert (table[:, bt.TREE] == 0).sum() == 3
    np.testing.assert_allclose([p["predictions"] for p in est.predict(input_fn)], labels,
                               atol=1e-6)


def test_tfs_errors():
    columns = _columns()
    with pytest.raises(ValueError, match="Tree complexity have no effect"):
        tf.estimator.BoostedTreesRegressor(columns, 1, tree_complexity=0.1)
    with pytest.raises(ValueError, match="tree_complexity must be positive"):
        tf.estimator.BoostedTreesRegressor(columns, 1, pruning_mode="post")
    with pytest.raises(ValueError, match="only binary classification"):
        tf.estimator.BoostedTreesClassifier(columns, 1, n_classes=3)
    with pytest.raises(NotImplementedError, match="wrap it in a bucketized_column"):
        tf.estimator.BoostedTreesRegressor([fc.numeric_column("x")], 1)


def test_label_vocabulary_as_tfs_test(tmp_path):
    # TF's testTrainClassifierWithLabelVocabulary: the same tree as labels 0 and 1
    labels = np.array([["apple"], ["banana"], ["banana"], ["apple"], ["apple"]])

    def input_fn():
        return {k: tf.constant(v) for k, v in FEATURES_DICT.items()}, tf.constant(labels)

    est = tf.estimator.BoostedTreesClassifier(_columns(), n_batches_per_layer=1, n_trees=1,
                                              max_depth=5, label_vocabulary=["apple", "banana"],
                                              model_dir=str(tmp_path / "vocabulary"))
    est.train(input_fn, steps=5)
    assert est.evaluate(input_fn, steps=1)["accuracy"] == 1.0
    assert [int(p["class_ids"][0]) for p in est.predict(_predict_fn())] == [0, 1, 1, 0, 0]
    unknown = tf.estimator.BoostedTreesClassifier(
        _columns(), n_batches_per_layer=1, n_trees=1, label_vocabulary=["apple", "pear"],
        model_dir=str(tmp_path / "unknown"))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"labels must be in \[0, 1\]"):
        unknown.train(input_fn, steps=1)
