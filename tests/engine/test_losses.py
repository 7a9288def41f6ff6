"""tf.losses against the cases of TF's own losses_test (its expected values, derived by hand
there), the reductions, and the LOSSES collection."""

import numpy as np
import pytest

import engine as tf

PREDICTIONS = np.array([4, 8, 12, 8, 1, 3]).reshape(2, 3)
LABELS = np.array([1, 9, 2, -5, -2, 6]).reshape(2, 3)
LOGITS = [[10.0, 0.0, 0.0], [0.0, 10.0, 0.0], [0.0, 0.0, 10.0]]
WRONG = [[0, 0, 1], [1, 0, 0], [0, 1, 0]]


def value(make):
    with tf.Graph().as_default(), tf.Session() as sess:
        return float(sess.run(make()))


@pytest.mark.parametrize("weights, expected", [
    (1.0, 5.5), (2.3, 5.5 * 2.3), (np.array([[1.2], [0.0]]), 5.6),
    (np.array([[3, 6, 5], [0, 4, 2]]), 16.6), (np.array([[0, 0, 0], [0, 0, 2]]), 6.0),
    (np.zeros((2, 3)), 0.0)])
def test_absolute_difference(weights, expected):
    assert value(lambda: tf.losses.absolute_difference(
        tf.constant(LABELS), tf.constant(PREDICTIONS), weights)) == pytest.approx(expected, 1e-6)


@pytest.mark.parametrize("weights, expected", [
    (1.0, 49.5), (2.3, 49.5 * 2.3), (np.array([[1.2], [3.4]]), 767.8 / 6.0),
    (np.array([[3, 6, 5], [0, 4, 2]]), 587 / 5.0)])
def test_mean_squared_error(weights, expected):
    assert value(lambda: tf.losses.mean_squared_error(
        tf.constant(LABELS), tf.constant(PREDICTIONS), weights)) == pytest.approx(expected, 1e-6)


def test_softmax_and_sparse_softmax_cross_entropy():
    def softmax_loss(labels, weights=1.0, **kw):
        loss = tf.losses.softmax_cross_entropy(tf.constant(labels), tf.constant(LOGITS),
                                               weights, **kw)
        assert loss.op.name == "softmax_cross_entropy_loss/value"
        return loss

    assert value(lambda: softmax_loss(np.eye(3, dtype=int))) == pytest.approx(0.0, abs=1e-3)
    assert value(lambda: softmax_loss(WRONG)) == pytest.approx(10.0, 1e-4)
    assert value(lambda: softmax_loss(WRONG, 2.3)) == pytest.approx(23.0, 1e-4)
    assert value(lambda: softmax_loss(WRONG, tf.constant([1.2, 3.4, 5.6]))) == pytest.approx(
        (1.2 + 3.4 + 5.6) * 10.0 / 3.0, 1e-4)
    assert value(lambda: softmax_loss(WRONG, tf.constant([1.2, 0.0, 0.0]))) == pytest.approx(
        12.0, 1e-4)
    assert value(lambda: softmax_loss(WRONG, tf.constant([0.0, 0.0, 0.0]))) == 0.0
    smoothed = lambda: tf.losses.softmax_cross_entropy(  # noqa: E731
        tf.constant([[1, 0, 0]]), tf.constant([[100.0, -100.0, -100.0]]), label_smoothing=0.1)
    assert value(smoothed) == pytest.approx(400.0 * 0.1 / 3.0, 1e-4)
    with tf.Graph().as_default(), pytest.raises(ValueError, match="broadcast"):
        tf.losses.softmax_cross_entropy(tf.constant(WRONG), tf.constant(LOGITS),
                                        weights=tf.constant([[3, 4, 5], [2, 6, 0], [8, 0, 1]]))

    def sparse(labels, weights=1.0):
        loss = tf.losses.sparse_softmax_cross_entropy(tf.constant(labels), tf.constant(LOGITS),
                                                      weights)
        assert loss.op.name == "sparse_softmax_cross_entropy_loss/value"
        return loss

    assert value(lambda: sparse([[0], [1], [2]])) == pytest.approx(0.0, abs=1e-3)
    assert value(lambda: sparse([2, 0, 1])) == pytest.approx(10.0, 1e-4)
    assert value(lambda: sparse(np.array([[2], [0], [1]], np.int64), 2.3)) == pytest.approx(
        23.0, 1e-4)
    assert value(lambda: sparse([[2], [0], [1]], tf.constant([[1.2], [3.4], [5.6]]))) == \
        pytest.approx((1.2 + 3.4 + 5.6) * 10.0 / 3.0, 1e-4)
    assert value(lambda: sparse([[2], [0], [1]], tf.constant([2.3]))) == pytest.approx(23.0, 1e-4)


def test_sigmoid_cross_entropy():
    logits = [[100.0, -100.0, -100.0], [-100.0, 100.0, -100.0], [-100.0, -100.0, 100.0]]

    def loss(labels, weights=1.0, **kw):
        return tf.losses.sigmoid_cross_entropy(tf.constant(labels), tf.constant(logits),
                                               weights, **kw)

    assert value(lambda: loss(np.eye(3, dtype=int))) == pytest.approx(0.0, abs=1e-3)
    assert value(lambda: loss(WRONG)) == pytest.approx(600.0 / 9.0, 1e-4)
    assert value(lambda: loss(WRONG, tf.constant([[3, 4, 5], [2, 6, 0], [8, 0, 1]]))) == \
        pytest.approx(1700.0 / 7.0, 1e-4)
    smoothed = lambda: tf.losses.sigmoid_cross_entropy(  # noqa: E731
        tf.constant([[1, 0, 1]]), tf.constant([[100.0, -100.0, -100.0]]), label_smoothing=0.1)
    assert value(smoothed) == pytest.approx((100.0 + 50.0 * 0.1) / 3.0, 1e-4)
    ones = lambda: tf.losses.sigmoid_cross_entropy(  # noqa: E731
        tf.ones([32, 1]), tf.ones([32, 1]))
    assert value(ones) == pytest.approx(np.log1p(np.exp(-1.0)), 1e-6)  # 0.313


def test_log_huber_hinge_losses():
    predictions = np.array([0.9, 0.2, 0.2, 0.8, 0.4, 0.6]).reshape(2, 3)
    labels = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0]).reshape(2, 3)
    expected = labels * np.log(predictions + 1e-7) + (1 - labels) * np.log(
        1 - predictions + 1e-7)
    weights = np.array([3, 6, 5, 0, 4, 2]).reshape(2, 3)
    assert value(lambda: tf.losses.log_loss(tf.constant(labels), tf.constant(predictions))) == \
        pytest.approx(-expected.sum() / 6.0, 1e-5)
    assert value(lambda: tf.losses.log_loss(tf.constant(labels), tf.constant(predictions),
                                            tf.constant(weights))) == pytest.approx(
        -np.sum(expected * weights) / 5.0, 1e-5)
    with tf.Graph().as_default(), pytest.raises(ValueError):
        tf.losses.log_loss(tf.constant(labels), tf.constant(predictions), np.ones((2, 4)))
    assert value(lambda: tf.losses.hinge_loss(
        tf.constant([[0.0], [0.0], [1.0], [1.0]]),
        tf.constant([[-0.7], [-1.4], [1.4], [0.6]]))) == pytest.approx(0.175, abs=1e-6)
    assert value(lambda: tf.losses.hinge_loss(
        tf.constant([[[1.0], [0.0], [0.0], [1.0]]]),
        tf.constant([[[1.2], [0.4], [-1.0], [-1.1]]]))) == pytest.approx(0.875, abs=1e-6)
    errors = np.array([0.5, -2.0, 1.0, 3.0])
    huber = np.where(np.abs(errors) <= 1.0, 0.5 * errors ** 2, np.abs(errors) - 0.5)
    assert value(lambda: tf.losses.huber_loss(tf.zeros([4]), tf.constant(errors))) == \
        pytest.approx(huber.mean(), 1e-6)


def test_reductions_collection_and_total_loss():
    losses = np.array([[1.0, 2.0], [3.0, 4.0]])
    weights = np.array([[0.0, 1.0], [2.0, 0.5]])
    R = tf.losses.Reduction
    for reduction, expected in [
            (R.SUM, 10.0), (R.MEAN, 10.0 / 3.5), (R.SUM_OVER_BATCH_SIZE, 10.0 / 4),
            (R.SUM_BY_NONZERO_WEIGHTS, 10.0 / 3)]:
        assert value(lambda r=reduction: tf.losses.compute_weighted_loss(
            tf.constant(losses), weights, reduction=r)) == pytest.approx(expected, 1e-6)
    with tf.Graph().as_default(), tf.Session() as sess:
        none = tf.losses.compute_weighted_loss(tf.constant(losses, tf.float32), weights,
                                               reduction=R.NONE, loss_collection=None)
        np.testing.assert_allclose(sess.run(none), losses * weights)
        mse = tf.losses.mean_squared_error(tf.zeros([2]), tf.constant([1.0, 3.0]))
        w = tf.get_variable("w", [], initializer=tf.constant_initializer(2.0),
                            regularizer=lambda v: 0.5 * v * v)
        assert tf.losses.get_losses() == [mse]
        total = tf.losses.get_total_loss()
        sess.run(tf.global_variables_initializer())
        assert sess.run(tf.losses.get_regularization_loss()) == 2.0
        assert sess.run(total) == pytest.approx(5.0 + 2.0)
        assert w.dtype == tf.float32
        with pytest.raises(ValueError):
            tf.losses.mean_squared_error(tf.zeros([2]), tf.zeros([2]), weights=None)
