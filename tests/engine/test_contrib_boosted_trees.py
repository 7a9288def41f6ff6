"""tf.contrib.boosted_trees: the first split and leaf values worked by hand (Newton steps on the
logistic loss, l2), the bias centering reaching the priors' logits (binary and three classes),
the softmax gradient and diagonal hessian against finite differences, the two ways of summing a
leaf's statistics agreeing, the estimator end to end (fit, evaluate, predict, the stop at
num_trees, checkpoints, the default bias centering), the learner config's proto behaviour, and
the refusals."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.contrib.boosted_trees import ensemble
from engine.contrib.boosted_trees.estimator_batch.estimator import (
    GradientBoostedDecisionTreeClassifier,
)
from engine.contrib.boosted_trees.proto import learner_pb2


def _config(logits_dimension=1, **kw):
    args = dict(num_trees=1, max_depth=1, learning_rate=0.1, l1=0.0, l2=0.0,
                tree_complexity=0.0, min_node_weight=0.0, examples_per_layer=1,
                num_quantiles=4)
    args.update(kw)
    return ensemble.GrowerConfig(logits_dimension, **args)


def _grow(x, labels, cfg, steps=1):
    table, progress, stats, boundaries = ensemble.empty_table(cfg.logits_dimension), \
        ensemble.initial_progress(cfg), None, None
    for _ in range(steps):
        table, progress, stats, boundaries = ensemble.train_step(
            table, progress, stats, boundaries, x, labels, cfg)
    return table, progress, boundaries


def test_first_split_and_leaf_values_by_hand():
    x = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    labels = np.array([0, 0, 1, 1])
    # logits 0: p = 1/2, g = p - y = [.5, .5, -.5, -.5], h = p (1 - p) = 1/4; the boundaries
    # are the quartiles 0.75, 1.5, 2.25; at 1.5 the gain is 1/.5 + 1/.5 - 0 = 4 (at 0.75:
    # .25/.25 + .25/.75 = 1.33); the leaves' Newton steps -G/(H + l2): -1/(.5 + 1), 1/1.5
    table, progress, boundaries = _grow(x, labels, _config(l2=1.0))
    np.testing.assert_allclose(boundaries[0], [0.75, 1.5, 2.25])
    assert progress.tolist() == [1, 0, 0]  # max_depth 1: the tree is finished
    assert table[0, ensemble.FEATURE] == 0 and table[0, ensemble.THRESHOLD] == 1.5
    np.testing.assert_allclose(table[1:, ensemble.VALUES], [-2 / 3, 2 / 3], rtol=1e-6)
    np.testing.assert_allclose(ensemble.logits(table, np.array([[1.5], [1.6]], np.float32), 0.1),
                               [[-2 / 30], [2 / 30]], rtol=1e-6)


def test_the_second_tree_fits_what_the_first_left():
    x = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    labels = np.array([0, 0, 1, 1])
    table, progress, _ = _grow(x, labels, _config(num_trees=2, learning_rate=0.5), steps=2)
    assert progress.tolist() == [2, 0, 0]
    # the first tree's steps -G/H = -1/0.5 = -2 and 2, shrunk by 0.5: logits -1 and 1; then at
    # the left rows (label 0) g = sigmoid(-1) = 1 - p with p = sigmoid(1), h = p (1 - p)
    p = 1 / (1 + np.exp(-1.0))
    step = 2 * (1 - p) / (2 * p * (1 - p))
    np.testing.assert_allclose(table[4:, ensemble.VALUES], [-step, step], rtol=1e-5)


def test_center_bias_binary_newton_steps_reach_the_priors_logit():
    # 3 of 4 labels 1: from 0, g = 1/2 - y sums to 4 (1/2 - 3/4) = -1, h = 1/4 sums to 1, so
    # the first step is exactly 1; Newton's steps on the constant converge to log(3/1)
    x = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    labels = np.array([0, 1, 1, 1])
    cfg = _config(num_trees=3, learning_rate=0.5, center_bias=True)
    table, progress, _ = _grow(x, labels, cfg, steps=1)
    assert progress.tolist() == [0, 0, 1] and table.shape[0] == 1
    np.testing.assert_allclose(table[0, ensemble.VALUES], 1.0, rtol=1e-6)
    bias, steps = 1.0, 1
    while True:  # the same steps replayed in float64, until a step of at most 0.01
        p = 1 / (1 + np.exp(-bias))
        delta = -(4 * p - 3) / (4 * p * (1 - p))
        bias, steps = bias + delta, steps + 1
        if abs(delta) <= 0.01:
            break
    table, progress, _ = _grow(x, labels, cfg, steps=steps)
    # the bias tree is finished (one of num_trees, as TF's) and tree 1 started at its root
    assert progress.tolist() == [1, 0, 0] and table.shape[0] == 2
    np.testing.assert_allclose(table[0, ensemble.VALUES], bias, rtol=1e-6)
    np.testing.assert_allclose(bias, np.log(3.0), atol=1e-5)
    # its weight is 1, not the learning rate's 0.5
    np.testing.assert_allclose(ensemble.logits(table, x, 0.5, True), bias, rtol=1e-6)
    # the next step grows tree 1 on the centered logits: G = sum(sigmoid(bias) - y) = 0 at
    # the root, the split at 0.75 (the first quartile) isolates the 0; with p = 3/4, h = 3/16
    # the steps -G/H are -(3/4)/(3/16) = -4 left and -(3 (-1/4))/(3 (3/16)) = 4/3 right
    table, progress, _ = _grow(x, labels, cfg, steps=steps + 1)
    assert progress.tolist() == [2, 0, 0] and table[1, ensemble.THRESHOLD] == 0.75
    np.testing.assert_allclose(table[2:4, ensemble.VALUES], [-4, 4 / 3], rtol=1e-4)


def test_center_bias_three_classes_reaches_the_class_priors():
    # diagonal Newton steps per logit: at the fixed point sum(p_k - y_k) = 0, so the softmax of
    # the bias is the class frequencies (1/6, 2/6, 3/6) and its differences their log ratios
    labels = np.array([0, 1, 1, 2, 2, 2])
    x = np.arange(6, dtype=np.float32)[:, None]
    cfg = _config(3, num_trees=2, examples_per_layer=6, center_bias=True)
    # the first step from 0: p = 1/3, G_k = 6/3 - n_k, H_k = 6 (1/3)(2/3) = 4/3
    table, progress, _ = _grow(x, labels, cfg, steps=1)
    np.testing.assert_allclose(table[0, ensemble.VALUES:], [-0.75, 0, 0.75], rtol=1e-6, atol=1e-7)
    table, progress, _ = _grow(x, labels, cfg, steps=30)
    assert progress[0] >= 1 and progress[2] == 0
    bias = table[0, ensemble.VALUES:].astype(np.float64)
    softmax = np.exp(bias - bias.max()) / np.exp(bias - bias.max()).sum()
    np.testing.assert_allclose(softmax, [1 / 6, 2 / 6, 3 / 6], atol=2e-3)
    np.testing.assert_allclose(bias[1:] - bias[0], [np.log(2), np.log(3)], atol=1e-2)


def test_softmax_gradient_and_diagonal_hessian_match_finite_differences():
    rng = np.random.RandomState(0)
    z = rng.randn(3, 4)
    labels = np.array([0, 3, 1])

    def loss(z):
        z = z - z.max(1, keepdims=True)
        return -(z[np.arange(3), labels] - np.log(np.exp(z).sum(1)))

    g, h = ensemble.gradients(z, labels, 4)
    eps = 1e-4
    for k in range(4):
        dz = np.zeros_like(z)
        dz[:, k] = eps
        np.testing.assert_allclose(g[:, k], (loss(z + dz) - loss(z - dz)) / (2 * eps),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(h[:, k], (loss(z + dz) - 2 * loss(z) + loss(z - dz)) / eps**2,
                                   rtol=1e-4, atol=1e-6)


def test_sums_by_bucket_and_by_sorted_rows_pick_the_same_split():
    rng = np.random.RandomState(1)
    x = rng.rand(40, 5).astype(np.float32)
    g, h = rng.randn(40, 3), rng.rand(40, 3) + 0.1
    boundaries = ensemble.quantile_boundaries(x, 8)
    buckets = ensemble.bucketize(x, boundaries)
    width = max(len(b) for b in boundaries) + 1
    dense = ensemble.best_split(buckets, g, h, width, 0.1, 1.0, 0.0, 0.0)  # 40 rows > width
    rows = ensemble.best_split(buckets, g, h, 41, 0.1, 1.0, 0.0, 0.0)  # as if few rows
    assert dense[1:3] == rows[1:3]
    np.testing.assert_allclose(dense[0], rows[0], rtol=1e-9)
    # by brute force over every (feature, threshold) pair
    best = max(((f, j) for f in range(5) for j in range(len(boundaries[f]))),
               key=lambda fj: _gain(x[:, fj[0]] <= boundaries[fj[0]][fj[1]], g, h))
    assert (dense[1], boundaries[dense[1]][dense[2]]) == (best[0], boundaries[best[0]][best[1]])


def _gain(left, g, h, l1=0.1, l2=1.0):
    def score(gs, hs):
        return (np.maximum(np.abs(gs) - l1, 0) ** 2 / (hs + l2)).sum()
    if left.all() or not left.any():
        return -np.inf
    return score(g[left].sum(0), h[left].sum(0)) + score(g[~left].sum(0), h[~left].sum(0)) \
        - score(g.sum(0), h.sum(0))


def _learner(depth=3):
    config = learner_pb2.LearnerConfig()
    config.learning_rate_tuner.fixed.learning_rate = 0.3
    config.regularization.l2 = 1.0
    config.constraints.max_tree_depth = depth
    config.growing_mode = learner_pb2.LearnerConfig.LAYER_BY_LAYER
    config.multi_class_strategy = learner_pb2.LearnerConfig.DIAGONAL_HESSIAN
    return config


def test_classifier_fits_evaluates_predicts_and_stops_at_num_trees(tmp_path):
    rng = np.random.RandomState(0)
    x = rng.rand(300, 2).astype(np.float32)
    y = (x[:, 0] > 0.5).astype(np.int64) + (x[:, 1] > 0.5)  # three classes
    model = GradientBoostedDecisionTreeClassifier(
        learner_config=_learner(), examples_per_layer=100, n_classes=3, num_trees=4,
        center_bias=False, model_dir=str(tmp_path))
    model.fit(input_fn=tf.estimator.inputs.numpy_input_fn(
        {"x": x}, y, batch_size=150, num_epochs=None, shuffle=True), max_steps=100)
    # 4 trees of at most 3 layers, one layer a step: training stopped before max_steps
    assert tf.train.load_variable(str(tmp_path), "global_step") <= 12
    assert tf.train.load_variable(str(tmp_path), "ensemble/progress").tolist()[0] == 4
    metrics = model.evaluate(input_fn=tf.estimator.inputs.numpy_input_fn(
        {"x": x}, y, batch_size=300, shuffle=False))
    assert metrics["accuracy"] > 0.95 and metrics["loss"] < 1.0
    out = list(model.predict(input_fn=tf.estimator.inputs.numpy_input_fn(
        {"x": x[:5]}, shuffle=False)))
    assert [int(p["class_ids"][0]) for p in out] == y[:5].tolist()
    np.testing.assert_allclose([p["probabilities"].sum() for p in out], 1, rtol=1e-6)


def test_classifier_centers_the_bias_by_default(tmp_path):
    # num_trees=1 with center_bias (TF's default): the one tree is the bias, so training stops
    # once centered, and every prediction is the prior, 30 of 40 labels 1
    x = np.arange(40, dtype=np.float32)[:, None]
    y = (np.arange(40) % 4 != 0).astype(np.int64)
    model = GradientBoostedDecisionTreeClassifier(
        learner_config=_learner(), examples_per_layer=40, num_trees=1, model_dir=str(tmp_path))
    model.fit(input_fn=tf.estimator.inputs.numpy_input_fn(
        {"x": x}, y, batch_size=40, num_epochs=None, shuffle=False), max_steps=50)
    assert tf.train.load_variable(str(tmp_path), "global_step") < 10
    nodes = tf.train.load_variable(str(tmp_path), "ensemble/nodes")
    assert nodes.shape[0] == 1
    np.testing.assert_allclose(nodes[0, ensemble.VALUES], np.log(30 / 10), atol=1e-5)
    out = model.predict(input_fn=tf.estimator.inputs.numpy_input_fn({"x": x[:3]}, shuffle=False),
                        as_iterable=False)
    np.testing.assert_allclose(out["probabilities"][:, 1], 0.75, atol=1e-5)


def test_learner_config_behaves_as_the_proto():
    config = learner_pb2.LearnerConfig()
    assert config.regularization.l2 == 0.0 and config.constraints.max_tree_depth == 0
    config.constraints.max_tree_depth = 16
    assert config.constraints.max_tree_depth == 16
    with pytest.raises(AttributeError, match="no field \"max_depth\""):
        config.constraints.max_depth = 3


def test_what_is_not_implemented_is_refused_by_name():
    config = _learner()
    config.multi_class_strategy = learner_pb2.LearnerConfig.TREE_PER_CLASS
    with pytest.raises(NotImplementedError, match="TREE_PER_CLASS"):
        GradientBoostedDecisionTreeClassifier(config, 100, n_classes=3, center_bias=False)


def test_compiled_loops_give_numpys_bits(monkeypatch):
    rng = np.random.RandomState(3)
    x = rng.rand(300, 7).astype(np.float32)
    g, h = rng.randn(300, 3), rng.rand(300, 3)
    boundaries = ensemble.quantile_boundaries(x, 16)
    width = max(len(b) for b in boundaries) + 1
    compiled = ensemble.bucketize(x, boundaries), ensemble._left_sums_by_bucket(
        ensemble.bucketize(x, boundaries), g, h, width)
    for kernel in ("_BUCKETIZE", "_BUCKET_SUMS"):
        monkeypatch.setattr(getattr(ensemble, kernel), "compiled", False)
    buckets = ensemble.bucketize(x, boundaries)
    np.testing.assert_array_equal(compiled[0], buckets)
    for a, b in zip(compiled[1][0], ensemble._left_sums_by_bucket(buckets, g, h, width)[0]):
        np.testing.assert_array_equal(a, b)


def test_post_prune_splits_at_a_negative_gain_and_undoes_it_when_the_tree_is_finished():
    # four points, labels 0 0 1 1: the first split (at 1.5) gains 4 - tree_complexity; below
    # it every split of two same-label points gains 0 - tree_complexity < 0
    x = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    labels = np.array([0, 0, 1, 1])
    post = _config(max_depth=2, tree_complexity=0.5, pruning_mode=ensemble.POST_PRUNE)
    table, progress, _ = _grow(x, labels, post, steps=1)
    assert progress.tolist() == [0, 1, 0]
    np.testing.assert_allclose(table[0, ensemble.GAIN], 4 - 0.5, rtol=1e-6)
    table, progress, _ = _grow(x, labels, post, steps=2)
    # the second layer split both leaves at a gain of -0.5, then post-pruning undid both
    assert progress.tolist() == [1, 0, 0] and (table[:, ensemble.TREE] == 0).sum() == 3
    pre = _config(max_depth=2, tree_complexity=0.5, pruning_mode=ensemble.PRE_PRUNE)
    pre_table, _, _ = _grow(x, labels, pre, steps=2)
    # pre-pruning never made those splits: the first layer's tree, as post-pruning left it;
    # the second layer split nothing and is tried again (TF's no-op): one tree, not finished
    np.testing.assert_allclose(pre_table, table[:3], rtol=1e-6)
    assert _grow(x, labels, pre, steps=2)[1].tolist() == [0, 1, 0]


def test_a_tree_pruned_to_its_root_is_removed_and_grown_again():
    x = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    labels = np.array([0, 0, 1, 1])
    cfg = _config(max_depth=1, tree_complexity=10.0, pruning_mode=ensemble.POST_PRUNE)
    table, progress, _ = _grow(x, labels, cfg, steps=3)
    assert progress.tolist() == [0, 0, 0] and table.shape[0] == 1
    assert table[0, ensemble.FEATURE] == -1 and table[0, ensemble.VALUES] == 0


def test_the_learner_configs_default_pruning_is_post_prune():
    config = learner_pb2.LearnerConfig()
    est = GradientBoostedDecisionTreeClassifier(config, examples_per_layer=4)
    assert est.params["grower"].pruning_mode == ensemble.POST_PRUNE
    config.pruning_mode = learner_pb2.LearnerConfig.PRE_PRUNE
    est = GradientBoostedDecisionTreeClassifier(config, examples_per_layer=4)
    assert est.params["grower"].pruning_mode == ensemble.PRE_PRUNE


def test_regression_centers_on_the_mean_and_splits_the_residuals():
    # squared error: g = 2 (f - y), h = 2, so a Newton step is the mean residual: the bias
    # reaches mean(y) = 2.5 in one step (the second moves it by 0: centering ends); the tree
    # then splits {1, 1} from {3, 5}, leaves -1.5 and +1.5 (the residuals' means)
    x = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    y = np.array([1.0, 1.0, 3.0, 5.0])
    cfg = _config(num_trees=2, learning_rate=0.5, center_bias=True, regression=True)
    table, progress, _ = _grow(x, y, cfg, steps=1)
    np.testing.assert_allclose(table[0, ensemble.VALUES], 2.5, rtol=1e-6)
    table, progress, _ = _grow(x, y, cfg, steps=3)
    assert progress.tolist() == [2, 0, 0] and table[1, ensemble.THRESHOLD] == 1.5
    np.testing.assert_allclose(table[2:4, ensemble.VALUES], [-1.5, 1.5], rtol=1e-6)
    np.testing.assert_allclose(ensemble.logits(table, x, 0.5, True)[:, 0],
                               [1.75, 1.75, 3.25, 3.25], rtol=1e-6)


def test_the_regressor_estimator_predicts_the_grown_ensemble(tmp_path):
    from engine.contrib.boosted_trees.estimator_batch.estimator import (
        GradientBoostedDecisionTreeRegressor,
    )
    config = learner_pb2.LearnerConfig()
    config.learning_rate_tuner.fixed.learning_rate = 0.5
    config.constraints.max_tree_depth = 1
    x = np.array([[0.0], [1.0], [2.0], [3.0]], np.float32)
    y = np.array([[1.0], [1.0], [3.0], [5.0]], np.float32)
    est = GradientBoostedDecisionTreeRegressor(config, examples_per_layer=4, num_trees=2,
                                               model_dir=str(tmp_path), num_quantiles=4)
    input_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, y, batch_size=4, num_epochs=None,
                                                  shuffle=False)
    est.fit(input_fn=input_fn, steps=10)
    predict_fn = tf.estimator.inputs.numpy_input_fn({"x": x}, batch_size=4, shuffle=False)
    predictions = [p["predictions"][0] for p in est.predict(input_fn=predict_fn)]
    np.testing.assert_allclose(predictions, [1.75, 1.75, 3.25, 3.25], rtol=1e-6)
