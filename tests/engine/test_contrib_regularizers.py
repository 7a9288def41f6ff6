"""tf.contrib.layers' regularizers and variance_scaling_initializer: TF 1.x's penalties (worked
by hand), names, scale checks, the REGULARIZATION_LOSSES they feed, and the initializer's
distributions."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")

W = np.array([[1.0, -2.0], [3.0, -4.0]], np.float32)  # sum |w| = 10, sum w^2 = 30


def _run(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def test_penalties_and_their_names_are_tf1s():
    w = tf.constant(W)
    layers = tf.contrib.layers
    l1, l2 = layers.l1_regularizer(0.5)(w), layers.l2_regularizer(0.1)(w)
    both = layers.l1_l2_regularizer(0.5, 0.1)(w)
    summed = layers.sum_regularizer([layers.l1_regularizer(0.5), None,
                                     layers.l2_regularizer(0.1)])(w)
    assert [t.op.name for t in (l1, l2, both, summed)] == [
        "l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer"]
    # 0.5 * 10; 0.1 * 30 / 2 (nn.l2_loss halves); their sum
    np.testing.assert_allclose(_run([l1, l2, both, summed]), [5.0, 1.5, 6.5, 6.5], rtol=1e-6)


def test_scales_checked_as_tf_and_zero_disables():
    layers = tf.contrib.layers
    with pytest.raises(ValueError, match="scale cannot be an integer: 1"):
        layers.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        layers.l1_regularizer(-0.1)
    with pytest.raises(ValueError, match="scale_l2 cannot be an integer"):
        layers.l1_l2_regularizer(0.1, 2)
    assert layers.l2_regularizer(0.0)(tf.constant(W)) is None
    assert layers.l1_l2_regularizer(0.0, 0.0)(tf.constant(W)) is None
    assert layers.l1_l2_regularizer(0.0, 0.1)(tf.constant(W)).op.name == "l1_l2_regularizer"
    assert layers.sum_regularizer([None]) is None
    scale = tf.placeholder(tf.float32, [])  # a tensor scale
    with tf.Session() as sess:
        assert sess.run(layers.l1_regularizer(scale)(tf.constant(W)), {scale: 2.0}) == 20.0


def test_variables_and_layers_add_their_penalties_to_regularization_losses():
    reg = tf.contrib.layers.l2_regularizer(0.1)
    tf.get_variable("w", initializer=W, regularizer=reg)
    x = tf.constant(np.ones((1, 2), np.float32))
    tf.layers.dense(x, 3, kernel_regularizer=tf.contrib.layers.l1_regularizer(0.01))
    tf.get_variable("off", initializer=W, regularizer=tf.contrib.layers.l1_regularizer(0.0))
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert len(losses) == 2
    kernel = [v for v in tf.global_variables() if v.name == "dense/kernel:0"][0]
    values, k = _run([losses, kernel])
    np.testing.assert_allclose(values, [1.5, 0.01 * np.abs(k).sum()], rtol=1e-6)


def test_apply_regularization_sums_over_the_weights_collection():
    for value in (W, 2 * W):
        tf.add_to_collection(tf.GraphKeys.WEIGHTS, tf.constant(value))
    total = tf.contrib.layers.apply_regularization(tf.contrib.layers.l1_regularizer(0.5))
    assert total.op.name == "get_regularization_penalty"
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == [total]
    np.testing.assert_allclose(_run(total), 0.5 * 10 + 0.5 * 20, rtol=1e-6)
    with pytest.raises(ValueError, match="No weights to regularize"):
        with tf.Graph().as_default():
            tf.contrib.layers.apply_regularization(tf.contrib.layers.l1_regularizer(0.5))


@pytest.mark.parametrize("mode, n", [("FAN_IN", 400), ("FAN_OUT", 600), ("FAN_AVG", 500)])
def test_variance_scaling_initializer_draws_contribs_distributions(mode, n):
    tf.set_random_seed(0)
    init = tf.contrib.layers.variance_scaling_initializer
    normal = tf.get_variable("n", [400, 600], initializer=init(mode=mode))
    uniform = tf.get_variable("u", [400, 600], initializer=init(3.0, mode, uniform=True))
    a, b = _run([normal, uniform])
    stddev = np.sqrt(1.3 * 2.0 / n)  # contrib's truncated normal, cut at 2 sigma
    assert np.abs(a).max() <= 2 * stddev
    assert abs(a.std() - 0.87962566 * stddev) < 0.02 * stddev
    limit = np.sqrt(3 * 3.0 / n)
    assert np.abs(b).max() <= limit and np.abs(b).max() > 0.99 * limit
    assert abs(b.std() - limit / np.sqrt(3)) < 0.02 * limit
    with pytest.raises(TypeError, match="Unknown mode"):
        init(mode="fan_in")
    with pytest.raises(TypeError, match="non-floating"):
        init(dtype=tf.int32)
