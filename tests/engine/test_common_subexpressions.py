"""A plan computes a pure op once when the graph holds it twice over the same inputs
(``plan._merge_duplicates``): two groups differentiating one loss, a norm reported and clipped."""

import numpy as np

import engine as tf


def _types(sess, fetches, feeds=()):
    return [step[3].type for step in sess.plan(fetches, list(feeds)).steps]


def test_the_same_gradient_of_one_loss_asked_twice_is_computed_once():
    x = tf.placeholder(tf.float32, [None, 3])
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))
    b = tf.Variable(np.ones(2, np.float32))
    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
    (gw,) = tf.gradients(loss, [w])  # as one group
    (gb,) = tf.gradients(loss, [b])  # as another: the loss's gradient chain built again
    (gw_alone,) = tf.gradients(loss, [w])
    feed = {x: np.random.default_rng(0).standard_normal((4, 3)).astype(np.float32)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got_w, got_b, alone = sess.run([gw, gb, gw_alone], feed)
        both = _types(sess, [gw, gb, gw_alone], [x])
        once = _types(sess, [gw], [x])
    # x @ w and x.T @ dz once each, the loss's gradient chain once; gb adds only its sum
    assert both.count("MatMul") == 2
    assert both == once + ["SumToShapeOf"]
    np.testing.assert_array_equal(got_w, alone)
    xv = feed[x]
    dz = 2 * (xv @ np.arange(6, dtype=np.float32).reshape(3, 2) + 1) / 8
    np.testing.assert_allclose(got_w, xv.T @ dz, rtol=1e-6)
    np.testing.assert_allclose(got_b, dz.sum(axis=0), rtol=1e-6)


def test_random_and_stateful_ops_are_never_merged():
    x = tf.ones([1000])
    a = tf.nn.dropout(x, rate=0.5)
    b = tf.nn.dropout(x, rate=0.5)
    with tf.Session() as sess:
        got_a, got_b = sess.run([a, b])
        types = _types(sess, [a, b])
    assert types.count("DropoutMask") == 2
    assert not np.array_equal(got_a, got_b)


def test_reads_of_a_variable_around_its_update_are_not_merged():
    v = tf.Variable(1.0)
    before = v * 3.0
    with tf.control_dependencies([tf.assign_add(v, 1.0)]):
        after = tf.identity(v) * 3.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([before, after])
    assert got == [3.0, 6.0]


def test_one_value_fetched_under_two_names_comes_back_as_two_arrays():
    x = tf.placeholder(tf.float32, [3])
    a, b = tf.square(x) + 1.0, tf.square(x) + 1.0
    with tf.Session() as sess:
        got_a, got_b = sess.run([a, b], {x: np.arange(3, dtype=np.float32)})
        assert _types(sess, [a, b], [x]).count("Square") == 1
    np.testing.assert_array_equal(got_a, [1, 2, 5])
    got_a += 1
    np.testing.assert_array_equal(got_b, [1, 2, 5])
