"""Slicing, tile and broadcast_to with bounds known only when the graph runs (TF's StridedSlice,
Tile and BroadcastTo with run-time operands): static shapes as TF 2.21 compat.v1 printed them,
values and gradients against numpy's indexing of the same array (TF gave the same numbers), the
errors TF raises."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

XV = np.arange(24, dtype=np.float64).reshape(2, 3, 4) * 0.5 - 3


def _graph():
    x = tf.placeholder(tf.float64, [4, None, 6])
    y = tf.placeholder(tf.float32, [None, None])
    z = tf.placeholder(tf.float32, [3, 5])
    i = tf.placeholder(tf.int32, [])
    n = tf.placeholder(tf.int32, [3])
    return x, y, z, i, n


# (expression, the static shape TF 2.21 compat.v1 printed for it)
STATIC_SHAPES = [
    (lambda x, y, z, i, n: x[:, :tf.shape(y)[1]], [4, None, 6]),
    (lambda x, y, z, i, n: x[i], [None, 6]),
    (lambda x, y, z, i, n: x[:, i], [4, 6]),
    (lambda x, y, z, i, n: x[i:], [None, None, 6]),
    (lambda x, y, z, i, n: x[..., i], [4, None]),
    (lambda x, y, z, i, n: x[i, ::2], [None, 6]),
    (lambda x, y, z, i, n: x[:, None, i], [4, 1, 6]),
    (lambda x, y, z, i, n: x[i:i + 2, 1], [None, 6]),
    (lambda x, y, z, i, n: x[::-1, i:], [4, None, 6]),
    (lambda x, y, z, i, n: tf.strided_slice(x, n, n, [1, 1, 1]), [None, None, None]),
    (lambda x, y, z, i, n: tf.strided_slice(x, n, n, [1, 1, 1], begin_mask=1, end_mask=1),
     [4, None, None]),
    (lambda x, y, z, i, n: tf.strided_slice(x, n, n, n), None),
    (lambda x, y, z, i, n: tf.strided_slice(x, [0, 0, 0], n, [1, 1, 1], shrink_axis_mask=2),
     [None, None]),
    (lambda x, y, z, i, n: tf.tile(z, n[:2]), [None, None]),
    (lambda x, y, z, i, n: tf.tile(z, [2, i]), [6, None]),
    (lambda x, y, z, i, n: tf.tile(x, tf.stack([1, i, 2])), [4, None, 12]),
    (lambda x, y, z, i, n: tf.tile(z, tf.shape(y)), [None, None]),
    (lambda x, y, z, i, n: tf.broadcast_to(z, [2, 3, 5]), [2, 3, 5]),
    (lambda x, y, z, i, n: tf.broadcast_to(z, tf.stack([i, 3, 5])), [None, 3, 5]),
    (lambda x, y, z, i, n: tf.broadcast_to(z, n), [None, 3, 5]),
    (lambda x, y, z, i, n: tf.broadcast_to(y, [2, 3, 5]), [2, 3, 5]),
]


@pytest.mark.parametrize("k", range(len(STATIC_SHAPES)))
def test_static_shapes_are_tfs(k):
    build, expected = STATIC_SHAPES[k]
    with tf.Graph().as_default():
        shape = build(*_graph()).shape
        assert (None if shape.dims is None else shape.as_list()) == expected


def _slice_grad(index, shape, w):
    g = np.zeros(shape)
    g[index] = w
    return g


# (tensor expression over x [?, ?, 4], i = 1, n = [1, 0, 1], y of shape [5, 2]; numpy's value)
CASES = [
    (lambda x, y, i, n: x[:, :tf.shape(y)[1]], (slice(None), slice(None, 2))),
    (lambda x, y, i, n: x[i], 1),
    (lambda x, y, i, n: x[-i], -1),
    (lambda x, y, i, n: x[i - 1:i + 1, 1], (slice(0, 2), 1)),
    (lambda x, y, i, n: x[::-1, i:, ::2], (slice(None, None, -1), slice(1, None), slice(None, None, 2))),
    (lambda x, y, i, n: x[..., i], (Ellipsis, 1)),
    (lambda x, y, i, n: x[:, None, i], (slice(None), None, 1)),
    (lambda x, y, i, n: tf.strided_slice(x, n, n + 2, [1, 1, -1]),
     (slice(1, 3), slice(0, 2), slice(1, 3, -1))),
    (lambda x, y, i, n: tf.strided_slice(x, [0, 0, 3], n, [1, 1, -1], begin_mask=1,
                                         shrink_axis_mask=2), (slice(None, 1), 0, slice(3, 1, -1))),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_values_and_gradients_are_numpys_indexing(k):
    build, index = CASES[k]
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, None, 4])
        y = tf.placeholder(tf.float64, [None, None])
        i = tf.placeholder(tf.int32, [])
        n = tf.placeholder(tf.int32, [None])
        t = build(x, y, i, n)
        assert t.op.type == "DynamicStridedSlice"
        expected = XV[index]
        w = np.arange(1.0, 1.0 + expected.size).reshape(expected.shape)
        grad = tf.gradients(tf.reduce_sum(t * w), x)[0]
        with tf.Session() as sess:
            value, g = sess.run([t, grad], {x: XV, y: np.zeros((5, 2)), i: 1, n: [1, 0, 1]})
    np.testing.assert_array_equal(value, expected)
    np.testing.assert_array_equal(g, _slice_grad(index, XV.shape, w))


def test_tile_and_broadcast_to_with_runtime_sizes():
    """Values as numpy's tile / broadcast_to; the gradients (weights 1, 2, ... over the output)
    as TF 2.21 printed them."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, None, 4])
        i = tf.placeholder(tf.int32, [])
        tiled = tf.tile(x, tf.stack([1, i, 2]))
        spread = tf.broadcast_to(x[:, :1], tf.stack([i + 1, 2, 3, 4]))
        assert (tiled.op.type, spread.op.type) == ("TileDynamic", "BroadcastTo")
        grads = [tf.gradients(tf.reduce_sum(t * tf.reshape(tf.cast(tf.range(tf.size(t)) + 1,
                                                                   tf.float64), tf.shape(t))),
                              x)[0] for t in (tiled, spread)]
        with tf.Session() as sess:
            values = sess.run([tiled, spread, *grads], {x: XV, i: 1})
    np.testing.assert_array_equal(values[0], np.tile(XV, [1, 1, 2]))
    np.testing.assert_array_equal(values[1], np.broadcast_to(XV[:, :1], (2, 2, 3, 4)))
    tf_tile_grad = [6, 8, 10, 12, 22, 24, 26, 28, 38, 40, 42, 44, 54, 56, 58, 60, 70, 72, 74, 76,
                    86, 88, 90, 92]
    tf_broadcast_grad = [102, 108, 114, 120] + [0] * 8 + [174, 180, 186, 192] + [0] * 8
    np.testing.assert_array_equal(values[2].ravel(), tf_tile_grad)
    np.testing.assert_array_equal(values[3].ravel(), tf_broadcast_grad)


def test_runtime_errors_are_tfs():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, 3, 4])
        i = tf.placeholder(tf.int32, [])
        n = tf.placeholder(tf.int32, [None])
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
                sess.run(x[i], {x: XV, i: 5})
            with pytest.raises(tf.errors.InvalidArgumentError, match="strides\\[0\\] must be"):
                sess.run(tf.strided_slice(x, n, n + 2, n * 0), {x: XV, n: [0, 0, 0]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="non-negative"):
                sess.run(tf.tile(x, n), {x: XV, n: [-1, 1, 1]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="length 3 but got length 2"):
                sess.run(tf.tile(x, n), {x: XV, n: [1, 1]})
            with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
                sess.run(tf.broadcast_to(x, n), {x: XV, n: [2, 4, 4]})
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 4"):
            tf.broadcast_to(tf.zeros([3, 5]), [2, 4, 5])
        with pytest.raises(TypeError, match="valid indices"):
            tf.zeros([3])[tf.constant(1.0)]


def test_broadcast_shapes():
    """TF's broadcast_static_shape and broadcast_dynamic_shape (BroadcastArgs)."""
    assert tf.broadcast_static_shape(tf.TensorShape([None, 1, 3]),
                                     tf.TensorShape([4, 1])).as_list() == [None, 4, 3]
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        tf.broadcast_static_shape(tf.TensorShape([2, 3]), tf.TensorShape([4]))
    with tf.Graph().as_default():
        y = tf.placeholder(tf.float32, [None, None])
        d = tf.broadcast_dynamic_shape(tf.shape(y), tf.constant([3, 1]))
        assert d.shape.as_list() == [2] and d.dtype == tf.int32
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(d, {y: np.zeros((1, 7))}), [3, 7])
            with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
                sess.run(d, {y: np.zeros((2, 7))})


def test_known_bounds_stay_static():
    """A bound whose value the graph knows is the static StridedSlice / Tile (one op, its
    bounds an attribute); x[i] keeps working for Python ints."""
    with tf.Graph().as_default():
        x = tf.zeros([4, 5])
        assert x[:, :tf.shape(x)[1] - 1].op.type == "StridedSlice"
        assert x[:, :tf.shape(x)[1] - 1].shape.as_list() == [4, 4]
        assert tf.tile(x, [tf.shape(x)[0], 1]).op.type == "Tile"
        assert x[np.int64(2)].shape.as_list() == [5]


def test_eager_tensors_as_bounds_and_sizes():
    """Eagerly a tensor's value is known: slices, tile and broadcast_to take it as a number."""
    with tf.eager_mode():
        x = tf.constant(np.arange(12.0).reshape(3, 4))
        i = tf.constant(1)
        np.testing.assert_array_equal(x[i].numpy(), [4, 5, 6, 7])
        np.testing.assert_array_equal(x[:, :i + 1].numpy(), np.arange(12.0).reshape(3, 4)[:, :2])
        assert tf.tile(x, tf.stack([1, i + 1])).shape.as_list() == [3, 8]
        np.testing.assert_array_equal(tf.broadcast_to(tf.constant([1.0, 2.0]), [2, 2]).numpy(),
                                      [[1, 2], [1, 2]])


def test_strided_slice_of_bounds_mixing_ints_and_tensors_without_strides():
    """PTB's reader: tf.strided_slice(data, [0, i * n], [b, (i + 1) * n]) with strides left out
    (TF: ones like begin) reads the window at the run-time step i."""
    with tf.Graph().as_default():
        data = tf.constant(np.arange(20).reshape(2, 10))
        i = tf.placeholder(tf.int32, [])
        x = tf.strided_slice(data, [0, i * 3], [2, (i + 1) * 3])
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(x, {i: 2}), [[6, 7, 8], [16, 17, 18]])
