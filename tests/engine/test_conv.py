"""Convolution and pooling values against TF's documented examples and hand-worked windows.

The gradients (first and second order) are checked against finite differences with every other
op in test_op_gradients.py; here: values, shapes and the errors a user sees. The pinned numbers
came from TF 2.21's CPU kernels (float32), exact small integers or one rounding away.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

# tf.nn.conv2d's docstring example (TF 2.x): a 5x5 image and a 2x2 kernel with two outputs.
X_DOC = np.array([[2, 1, 2, 0, 1], [1, 3, 2, 2, 3], [1, 1, 3, 3, 0], [2, 2, 0, 1, 1],
                  [0, 0, 3, 1, 2]], np.float32).reshape(1, 5, 5, 1)
K_DOC = np.array([[[[2, 0.1]], [[3, 0.2]]], [[[0, 0.3]], [[1, 0.4]]]], np.float32)


def _run(t, feed=None):
    with tf.Session() as sess:
        return sess.run(t, feed)


def test_conv2d_docstring_example_valid():
    with tf.Graph().as_default():
        y = tf.nn.conv2d(X_DOC, K_DOC, strides=[1, 1, 1, 1], padding="VALID")
        assert y.shape.as_list() == [1, 4, 4, 2]
        out = _run(y)
    np.testing.assert_array_equal(out[0, ..., 0], [[10, 10, 6, 6], [12, 15, 13, 13],
                                                   [7, 11, 16, 7], [10, 7, 4, 7]])
    np.testing.assert_allclose(out[0, ..., 1], [[1.9, 2.2, 1.6, 2.0], [1.4, 2.2, 2.7, 1.7],
                                                [1.7, 1.3, 1.3, 1.0], [0.6, 1.4, 1.5, 1.4]],
                               rtol=1e-6)


def test_conv2d_same_stride_two_pads_after():
    """SAME with stride 2 on 5 pixels: 3 outputs, the one padded pixel goes after (TF)."""
    with tf.Graph().as_default():
        out = _run(tf.nn.conv2d(X_DOC, K_DOC, strides=2, padding="SAME"))
    np.testing.assert_array_equal(out[0, ..., 0], [[10, 6, 2], [7, 16, 0], [0, 9, 4]])
    np.testing.assert_allclose(out[0, ..., 1], [[1.9, 1.6, 1.0], [1.7, 1.3, 0.3],
                                                [0.0, 0.5, 0.2]], rtol=1e-6)


def test_explicit_padding_equals_padding_the_image():
    rng = np.random.default_rng(0)
    x, k = rng.standard_normal((2, 5, 4, 3)), rng.standard_normal((3, 2, 3, 2))
    pads = [[0, 0], [2, 1], [0, 3], [0, 0]]
    with tf.Graph().as_default():
        got = _run(tf.nn.conv2d(x, k, 1, pads))
        want = _run(tf.nn.conv2d(np.pad(x, pads), k, 1, "VALID"))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_dilated_conv_equals_conv_with_a_spread_kernel():
    """A dilation of 2 is a kernel with zeros between its taps."""
    rng = np.random.default_rng(1)
    x, k = rng.standard_normal((1, 7, 6, 2)), rng.standard_normal((2, 3, 2, 2))
    spread = np.zeros((3, 5, 2, 2))
    spread[::2, ::2] = k
    with tf.Graph().as_default():
        got = _run(tf.nn.conv2d(x, k, 1, "SAME", dilations=2))
        want = _run(tf.nn.conv2d(x, spread, 1, "SAME"))
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_conv2d_transpose_spreads_each_input_over_its_window():
    """Stride 2, a 3x3 kernel of ones on a 2x2 input to 4x4 (SAME pads 1 after): TF's values."""
    with tf.Graph().as_default():
        y = tf.constant(np.arange(4.0, dtype=np.float32).reshape(1, 2, 2, 1))
        out = tf.nn.conv2d_transpose(y, tf.ones([3, 3, 1, 1]), [1, 4, 4, 1], 2, "SAME")
        assert out.shape.as_list() == [1, 4, 4, 1]
        np.testing.assert_array_equal(_run(out)[0, ..., 0], [[0, 0, 1, 1], [0, 0, 1, 1],
                                                              [2, 2, 6, 4], [2, 2, 5, 3]])


def test_depthwise_conv_is_one_conv_per_channel():
    rng = np.random.default_rng(2)
    x, k = rng.standard_normal((2, 5, 5, 3)), rng.standard_normal((3, 3, 3, 2))
    with tf.Graph().as_default():
        got = _run(tf.nn.depthwise_conv2d(x, k, [1, 2, 2, 1], "SAME"))
        per_channel = [_run(tf.nn.conv2d(x[..., c:c + 1], k[:, :, c:c + 1, :], 2, "SAME"))
                       for c in range(3)]
    assert got.shape == (2, 3, 3, 6)
    np.testing.assert_allclose(got, np.concatenate(per_channel, axis=-1), rtol=1e-12)


def test_conv1d_is_conv2d_over_one_row():
    rng = np.random.default_rng(3)
    x, k = rng.standard_normal((2, 9, 3)), rng.standard_normal((3, 3, 4))
    with tf.Graph().as_default():
        y = tf.nn.conv1d(x, k, stride=2, padding="SAME")
        assert y.shape.as_list() == [2, 5, 4]
        got = _run(y)
    for t in range(5):  # SAME: 9 -> 5, pad 1 before and 1 after
        window = np.pad(x, [[0, 0], [1, 1], [0, 0]])[:, 2 * t:2 * t + 3]
        np.testing.assert_allclose(got[:, t], np.einsum("bwi,wio->bo", window, k), rtol=1e-12)


def test_pooling_same_and_valid_on_a_hand_worked_image():
    """[[9, 8, 1], [4, 5, 7]], 2x2 windows, stride 2: VALID keeps one window, SAME pads a column
    that max ignores and avg does not count."""
    x = np.array([[9, 8, 1], [4, 5, 7]], np.float32).reshape(1, 2, 3, 1)
    with tf.Graph().as_default():
        assert _run(tf.nn.max_pool(x, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")).ravel().tolist() == [9]
        assert _run(tf.nn.max_pool(x, 2, 2, "SAME")).ravel().tolist() == [9, 7]
        assert _run(tf.nn.avg_pool(x, 2, 2, "VALID")).ravel().tolist() == [6.5]
        assert _run(tf.nn.avg_pool(x, 2, 2, "SAME")).ravel().tolist() == [6.5, 4.0]


def test_max_pool_gradient_goes_to_the_first_maximum_only():
    """Ties: TF routes each window's gradient to its first maximum in row-major order."""
    x = np.array([[1, 3], [3, 2]], np.float64).reshape(1, 2, 2, 1)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        (g,) = tf.gradients(tf.nn.max_pool(xt, 2, 2, "VALID"), [xt])
        np.testing.assert_array_equal(_run(g)[0, ..., 0], [[0, 1], [0, 0]])


def test_avg_pool_gradient_divides_by_the_counted_elements():
    x = np.zeros((1, 2, 3, 1))
    with tf.Graph().as_default():
        xt = tf.constant(x)
        (g,) = tf.gradients(tf.reduce_sum(tf.nn.avg_pool(xt, 2, 2, "SAME")), [xt])
        np.testing.assert_array_equal(_run(g)[0, ..., 0], [[0.25, 0.25, 0.5], [0.25, 0.25, 0.5]])


def test_unknown_batch_and_size_run_and_infer_what_is_known():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, None, None, 3])
        y = tf.nn.max_pool(tf.nn.conv2d(x, tf.ones([3, 3, 3, 8]), 1, "SAME"), 2, 2, "SAME")
        assert y.shape.as_list() == [None, None, None, 8]
        assert _run(y, {x: np.ones((2, 5, 7, 3))}).shape == (2, 3, 4, 8)
        z = tf.placeholder(tf.float32, [None, 28, 28, 1])
        assert tf.nn.conv2d(z, tf.ones([5, 5, 1, 6]), 1, "VALID").shape.as_list() == \
            [None, 24, 24, 6]


def test_mismatched_channels_name_both_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 8, 8, 3])
        with pytest.raises(tf.ShapeError, match=r"3 channels but filter shape \(3, 3, 4, 8\)"):
            tf.nn.conv2d(x, tf.ones([3, 3, 4, 8]), 1, "SAME")


def test_window_larger_than_valid_input_is_a_shape_error():
    with tf.Graph().as_default():
        with pytest.raises(tf.ShapeError, match="output size would be negative"):
            tf.nn.conv2d(tf.ones([1, 2, 2, 1]), tf.ones([3, 3, 1, 1]), 1, "VALID")


@pytest.mark.parametrize(("kw", "message"), [
    ({"padding": "FULL"}, "padding must be 'SAME', 'VALID'"),
    ({"strides": [2, 2, 2, 2]}, "batch and channel entries must be 1"),
    ({"data_format": "NHCW"}, "'NHWC' .channels last. or 'NCHW'"),
])
def test_bad_arguments_say_what_is_wrong(kw, message):
    args = {"strides": 1, "padding": "SAME", **kw}
    with tf.Graph().as_default(), pytest.raises(ValueError, match=message):
        tf.nn.conv2d(tf.ones([1, 4, 4, 1]), tf.ones([2, 2, 1, 1]), **args)


@pytest.mark.parametrize("k", [1, 3])
def test_filter_gradient_reads_the_forward_windows(k):
    """The filter gradient takes the windows the forward pass copied (Conv2D's reserve output);
    a 1x1 filter's windows are x itself, not kept: either way sum_n,y,x x[window] * dy."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 5, 4, 2)).astype(np.float32)
    w = rng.standard_normal((k, k, 2, 3)).astype(np.float32)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        y = tf.nn.conv2d(xt, tf.constant(w), strides=1, padding="VALID")
        dy = rng.standard_normal(y.shape.as_list()).astype(np.float32)
        (dw,) = tf.gradients(tf.reduce_sum(y * dy), [y.op.inputs[1]])
        assert dw.op.type == "Conv2DBackpropFilter" and dw.op.inputs[3] is y.op.outputs[1]
        got = _run(dw)
    oh, ow = dy.shape[1:3]
    expected = np.zeros(w.shape)
    for i in range(k):
        for j in range(k):
            expected[i, j] = np.einsum("nhwc,nhwo->co", x[:, i:i + oh, j:j + ow].astype(float), dy)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


def _nchw(a):
    return np.ascontiguousarray(a.transpose(0, 3, 1, 2))


def test_nchw_conv2d_is_the_nhwc_conv_transposed_with_its_gradients():
    """data_format='NCHW' (TF1 takes it): strides, dilations and explicit padding in NCHW order;
    values and both gradients are the NHWC convolution's, transposed."""
    rng = np.random.default_rng(2)
    x, k = rng.standard_normal((2, 7, 6, 3)), rng.standard_normal((3, 2, 3, 4))
    with tf.Graph().as_default():
        xt, kt = tf.constant(x), tf.constant(k)
        want = tf.nn.conv2d(xt, kt, [1, 2, 1, 1], [[0, 0], [1, 0], [2, 1], [0, 0]],
                            dilations=[1, 1, 2, 1])
        xc = tf.constant(_nchw(x))
        got = tf.nn.conv2d(xc, kt, [1, 1, 2, 1], [[0, 0], [0, 0], [1, 0], [2, 1]],
                           data_format="NCHW", dilations=[1, 1, 1, 2])
        assert got.shape.as_list() == [2, 4, 3, 7]
        g = rng.standard_normal((2, 3, 7, 4))
        grads_want = tf.gradients(tf.reduce_sum(want * tf.constant(g)), [xt, kt])
        grads_got = tf.gradients(tf.reduce_sum(got * tf.constant(_nchw(g))), [xc, kt])
        (w, gw), (o, go) = _run((want, grads_want)), _run((got, grads_got))
    np.testing.assert_array_equal(o, _nchw(w))
    np.testing.assert_array_equal(go[0], _nchw(gw[0]))
    np.testing.assert_array_equal(go[1], gw[1])


def test_nchw_pools_bias_add_transpose_depthwise_and_conv1d():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 6, 5, 3))
    k = rng.standard_normal((3, 3, 3, 2))
    b = rng.standard_normal(3)
    with tf.Graph().as_default():
        xt, xc = tf.constant(x), tf.constant(_nchw(x))
        pairs = [
            (tf.nn.max_pool(xt, [1, 3, 2, 1], [1, 2, 1, 1], "SAME"),
             tf.nn.max_pool(xc, [1, 1, 3, 2], [1, 1, 2, 1], "SAME", data_format="NCHW")),
            (tf.nn.avg_pool(xt, 2, 2, "VALID"),
             tf.nn.avg_pool(xc, 2, 2, "VALID", data_format="NCHW")),
            (tf.nn.depthwise_conv2d(xt, k, [1, 1, 1, 1], "SAME"),
             tf.nn.depthwise_conv2d(xc, k, [1, 1, 1, 1], "SAME", data_format="NCHW")),
        ]
        kt = tf.constant(rng.standard_normal((2, 2, 4, 3)))  # [h, w, out, in]
        transposed = (tf.nn.conv2d_transpose(xt, kt, [2, 12, 10, 4], [1, 2, 2, 1], "SAME"),
                      tf.nn.conv2d_transpose(xc, kt, tf.constant([2, 4, 12, 10]), [1, 1, 2, 2],
                                             "SAME", data_format="NCHW"))
        bias = (x + b, tf.nn.bias_add(xc, b, data_format="NCHW"))
        x1 = rng.standard_normal((2, 9, 3))
        k1 = rng.standard_normal((3, 3, 2))
        conv1 = (tf.nn.conv1d(x1, k1, 2, "SAME"),
                 tf.nn.conv1d(x1.transpose(0, 2, 1), k1, [1, 1, 2], "SAME", data_format="NCW"))
        out = _run([pairs, transposed, bias[1], conv1])
    for want, got in out[0] + [out[1]]:
        np.testing.assert_array_equal(got, _nchw(want))
    np.testing.assert_array_equal(out[2], _nchw(bias[0]))
    np.testing.assert_array_equal(out[3][1], out[3][0].transpose(0, 2, 1))
