"""Random ops and initializers: seeding, TF's formulas, shapes known only at run time."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


def test_seeded_graphs_repeat_in_every_session_and_ops_differ():
    tf.set_random_seed(42)
    a = tf.random_normal([5])
    b = tf.random_normal([5])
    with tf.Session() as s1:
        a1, b1, a1_again = s1.run(a), s1.run(b), s1.run(a)
    with tf.Session() as s2:
        a2 = s2.run(a)
    np.testing.assert_array_equal(a1, a2)  # a new session restarts the sequence
    assert not np.array_equal(a1, b1) and not np.array_equal(a1, a1_again)


def test_op_seed_alone_is_deterministic():
    a = tf.random_uniform([4], seed=7)
    with tf.Session() as s1, tf.Session() as s2:
        np.testing.assert_array_equal(s1.run(a), s2.run(a))


def test_distributions_and_ranges():
    n = 20000
    normal = tf.random_normal([n], mean=1.0, stddev=2.0, seed=1)
    trunc = tf.truncated_normal([n], stddev=2.0, seed=2)
    uni = tf.random_uniform([n], minval=-3.0, maxval=-1.0, seed=3)
    ints = tf.random_uniform([n], 0, 5, dtype=tf.int32, seed=4)
    with tf.Session() as s:
        vn, vt, vu, vi = s.run([normal, trunc, uni, ints])
    assert abs(vn.mean() - 1.0) < 0.1 and abs(vn.std() - 2.0) < 0.1
    assert np.all(np.abs(vt) <= 4.0)  # redrawn beyond two standard deviations
    assert vu.min() >= -3.0 and vu.max() < -1.0
    assert vi.dtype == np.int32 and set(np.unique(vi)) == {0, 1, 2, 3, 4}
    with pytest.raises(ValueError, match="maxval"):
        tf.random_uniform([2], dtype=tf.int32)


def test_random_shape_from_a_tensor_is_read_at_run_time():
    x = tf.placeholder(tf.float32, [None, 3])
    eps = tf.random_normal(tf.shape(x), seed=0)
    assert eps.shape.as_list() == [None, 3]
    with tf.Session() as s:
        assert s.run(eps, {x: np.zeros((4, 3))}).shape == (4, 3)
        assert s.run(eps, {x: np.zeros((1, 3))}).shape == (1, 3)


def test_glorot_uniform_and_variance_scaling_limits():
    # glorot_uniform: U(-l, l) with l = sqrt(6 / (fan_in + fan_out)); he_normal-style truncated
    # normal: std sqrt(2 / fan_in) / 0.8796 (the std of a unit normal cut at two std devs).
    w = tf.get_variable("w", [200, 300], initializer=tf.glorot_uniform_initializer(seed=1))
    h = tf.get_variable("h", [400, 100],
                        initializer=tf.variance_scaling_initializer(2.0, "fan_in", seed=2))
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        vw, vh = s.run([w, h])
    limit = np.sqrt(6.0 / 500)
    assert np.abs(vw).max() <= limit and np.abs(vw).max() > 0.95 * limit
    assert abs(vw.std() - limit / np.sqrt(3)) < 0.01 * limit
    assert abs(vh.std() - np.sqrt(2.0 / 400)) < 0.05 * np.sqrt(2.0 / 400)


def test_constant_ones_zeros_and_orthogonal_initializers():
    c = tf.get_variable("c", [2, 2], initializer=tf.constant_initializer([1.0, 2.0, 3.0, 4.0]))
    o = tf.get_variable("o", [4, 3], initializer=tf.orthogonal_initializer(gain=2.0, seed=0))
    one = tf.get_variable("one", [3], initializer=tf.ones_initializer())
    with tf.Session() as s:
        s.run(tf.global_variables_initializer())
        vc, vo, vone = s.run([c, o, one])
    np.testing.assert_array_equal(vc, [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(vo.T @ vo, 4.0 * np.eye(3), atol=1e-5)
    np.testing.assert_array_equal(vone, [1.0, 1.0, 1.0])
