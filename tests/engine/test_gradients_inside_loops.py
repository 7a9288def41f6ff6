"""Gradients TF1 programs take inside control flow: through a TensorArray read before later
writes grow it, through reads of an unequal split, tf.gradients called inside a cond branch or
a while body; and dynamic_decode that takes no step. Expected numbers are what TF 2.21
compat.v1 printed for the same programs (pinned), checked here against finite differences or
a hand derivation too."""

from __future__ import annotations

import numpy as np

import engine as tf


def _central_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in range(x.size):
        step = np.zeros_like(x)
        step.flat[i] = eps
        grad.flat[i] = (f(x + step) - f(x - step)) / (2 * eps)
    return grad


def test_tensor_array_read_before_it_grows_in_a_while_loop():
    """Each step reads the element the step before wrote (the array then one element
    shorter than at the end): the read's gradient takes the array's final size."""
    def build(dtype):
        x = tf.placeholder(dtype, [2])
        ta = tf.TensorArray(dtype, size=0, dynamic_size=True, clear_after_read=False)
        ta = ta.write(0, x)

        def body(t, ta):
            prev = ta.read(t - 1)
            return t + 1, ta.write(t, prev * prev * 0.5 + 1.0)

        _, ta = tf.while_loop(lambda t, ta: t < 4, body, [tf.constant(1), ta])
        loss = tf.reduce_sum(ta.stack() * tf.reshape(tf.range(1.0, 9.0, dtype=dtype), [4, 2]))
        return x, loss, tf.gradients(loss, x)[0]

    with tf.Graph().as_default():
        x, _, grad = build(tf.float32)
        with tf.Session() as sess:
            got = sess.run(grad, {x: [0.5, -1.0]})
    np.testing.assert_allclose(got, [11.741699, -36.5], rtol=1e-6)  # TF 2.21
    with tf.Graph().as_default():
        x, loss, grad = build(tf.float64)
        with tf.Session() as sess:
            got = sess.run(grad, {x: [0.5, -1.0]})
            numeric = _central_difference(lambda v: sess.run(loss, {x: v}), np.array([0.5, -1.0]))
    np.testing.assert_allclose(got, numeric, rtol=1e-7)


def test_tensor_array_read_before_later_writes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3, 2])
        ta = tf.TensorArray(tf.float32, size=0, dynamic_size=True, clear_after_read=False)
        ta = ta.write(0, x[0] * 2.0)
        first = ta.read(0)
        ta = ta.write(1, x[1] * 3.0).write(2, x[2] * first)
        loss = tf.reduce_sum(ta.stack() * [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]) + \
            tf.reduce_sum(first)
        with tf.Session() as sess:
            got = sess.run(tf.gradients(loss, x)[0], {x: np.arange(6.0).reshape(3, 2)})
    np.testing.assert_array_equal(got, [[44, 66], [9, 12], [0, 12]])  # TF 2.21


def test_gradients_through_reads_of_an_unequal_split():
    """Pieces of 1, 2 and 3 rows: each read's gradient lands on its own rows (d/dv of
    sum(p0) + 2 sum(p1) + [3, 4, 5] . p2 with the pieces of v * v: 2 v times those weights)."""
    with tf.Graph().as_default():
        v = tf.placeholder(tf.float32, [6])
        split = tf.TensorArray(tf.float32, size=3, infer_shape=False).split(v * v, [1, 2, 3])
        parts = [split.read(i) for i in range(3)]
        loss = tf.reduce_sum(parts[0]) + tf.reduce_sum(parts[1] * 2.0) + \
            tf.reduce_sum(parts[2] * [3.0, 4.0, 5.0])
        with tf.Session() as sess:
            got = sess.run(tf.gradients(loss, v)[0], {v: np.arange(6.0)})
    np.testing.assert_array_equal(got, [0, 4, 8, 18, 32, 50])  # TF 2.21 printed the same


def test_tf_gradients_called_inside_a_cond_branch_and_a_while_body():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        pred = tf.placeholder(tf.bool, [])
        w = tf.Variable([1.0, 2.0, 3.0])

        def branch():
            h = x * 2.0
            gh, gw = tf.gradients(tf.reduce_sum(h * h * w), [h, w])
            return gh + gw

        def body(i, acc):
            h = acc * 3.0
            g = tf.gradients(tf.reduce_sum(h * h * w), [h, w, acc])
            return i + 1, g[0] + g[1] + g[2]

        in_branch = tf.cond(pred, branch, lambda: x)
        in_loop = tf.while_loop(lambda i, a: i < 2, body, [tf.constant(0), x])[1]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            taken, skipped, looped = sess.run(
                [in_branch, tf.cond(pred, lambda: x, branch), in_loop],
                {x: [1.0, 2.0, 3.0], pred: True})
    np.testing.assert_array_equal(taken, [8, 32, 72])  # 4 h w + h^2 with h = 2x: TF 2.21's
    np.testing.assert_array_equal(skipped, [1, 2, 3])
    np.testing.assert_array_equal(looped, [10593, 163152, 815265])  # TF 2.21


def test_dynamic_decode_of_no_steps_keeps_the_batch():
    """maximum_iterations=0: outputs [batch, 0, ...] (TF's TensorArrays of [batch, ...]
    elements stacked empty), lengths 0; the batch is static where TF's constant_value knows
    it."""
    batch = 3
    with tf.Graph().as_default():
        emb = tf.constant(np.random.RandomState(0).randn(5, 4).astype(np.float32))
        cell = tf.nn.rnn_cell.GRUCell(6)
        helper = tf.contrib.seq2seq.GreedyEmbeddingHelper(emb, tf.fill([batch], 1), 2)
        decoder = tf.contrib.seq2seq.BasicDecoder(cell, helper, cell.zero_state(batch, tf.float32),
                                                  output_layer=tf.layers.Dense(5))
        outs, _, lengths = tf.contrib.seq2seq.dynamic_decode(decoder, maximum_iterations=0)
        assert outs.rnn_output.shape.as_list() == [batch, None, 5]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got = sess.run([outs.rnn_output, outs.sample_id, lengths])
    assert got[0].shape == (batch, 0, 5) and got[1].shape == (batch, 0)
    np.testing.assert_array_equal(got[2], [0, 0, 0])
