"""tf.gradients: reverse accumulation with TF1 semantics.

Values are derived by hand in the comments (or by finite differences); names, None results and
error types were checked with tensorflow.compat.v1 (TF 2.21, /work/tfref) on the same programs.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


def test_contributions_of_several_paths_are_summed():
    x = tf.constant(3.0)
    y = x * x + 2.0 * x  # dy/dx = 2x + 2 = 8
    (g,) = tf.gradients(y, x)
    assert run(g) == 8.0
    assert g.op.type == "AddN"


def test_an_x_without_a_path_gets_none_or_zeros_on_request():
    x, z = tf.constant(3.0), tf.constant([1.0, 2.0])
    y = x * 2.0
    assert tf.gradients(y, [x, z])[1] is None
    gz = tf.gradients(y, [x, z], unconnected_gradients="zero")[1]
    np.testing.assert_array_equal(run(gz), [0.0, 0.0])
    gz = tf.gradients(y, [z], unconnected_gradients=tf.UnconnectedGradients.ZERO)[0]
    assert gz.shape.as_list() == [2]
    assert tf.gradients([], [x]) == [None]
    assert tf.gradients(y, [3.0]) == [None]  # a value becomes an unconnected constant


def test_gradient_names_follow_tf():
    with tf.name_scope("enc"):
        x = tf.constant(2.0)
        m = x * x
    g1 = tf.gradients(m, x)[0]
    g2 = tf.gradients(m * 3.0, x)[0]
    # TF: gradients/enc/mul_grad/..., then gradients_1/...; one AddN per summed tensor.
    assert g1.name.startswith("gradients/") and g2.name.startswith("gradients_1/")
    ops = tf.get_default_graph().get_operations()
    assert any(op.name.startswith("gradients/enc/mul_grad/") for op in ops)
    assert [op.name for op in ops if op.type == "AddN" and op.name.startswith("gradients/")] \
        == ["gradients/AddN"]


def test_stop_gradient_blocks_paths_through_it():
    w1, w2, w3 = (tf.Variable([1.0, 2.0]) for _ in range(3))
    y = tf.stop_gradient(w1 + w2) + w3
    g = tf.gradients(y, [w1, w2, w3])
    assert g[:2] == [None, None]
    np.testing.assert_array_equal(run(g[2]), [1.0, 1.0])
    assert tf.gradients(tf.stop_gradient(w3 * 2.0), w3) == [None]
    # Another path around the stop still counts: d(w1 + stop(w1))/dw1 = 1.
    np.testing.assert_array_equal(run(tf.gradients(w1 + tf.stop_gradient(w1), w1)[0]),
                                  [1.0, 1.0])


def test_stop_gradients_treat_tensors_as_constants():
    x = tf.constant(3.0)
    a = x * 2.0
    b = a * 3.0
    ga, gx = tf.gradients(b, [a, x], stop_gradients=[a])
    assert gx is None and run(ga) == 3.0
    # TF's doc example: the listed tensors still get their own gradient (here 1 each).
    a2 = tf.constant(0.0)
    b2 = 2.0 * a2
    assert run(tf.gradients(a2 + b2, [a2, b2], stop_gradients=[a2, b2])) == [1.0, 1.0]


def test_grad_ys_weight_each_y():
    x = tf.constant([1.0, 2.0])
    y1, y2 = x * 3.0, x * x
    # d(<g1, 3x> + <g2, x^2>)/dx = 3 g1 + 2 x g2 = [3*1 + 2*1*0.5, 3*2 + 2*2*0.5] = [4, 8]
    (g,) = tf.gradients([y1, y2], x, grad_ys=[[1.0, 2.0], [0.5, 0.5]])
    np.testing.assert_allclose(run(g), [4.0, 8.0])
    (g,) = tf.gradients([y1, y2], x, grad_ys=[None, tf.constant([1.0, 0.0])])
    np.testing.assert_allclose(run(g), [3.0 + 2.0, 3.0])  # None means ones


def test_grad_ys_shape_dtype_and_count_are_checked():
    x = tf.constant(3.0)
    y = x * 2.0
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        tf.gradients(y, x, grad_ys=tf.constant([1.0, 2.0]))
    with pytest.raises(TypeError, match="float64"):
        tf.gradients(y, x, grad_ys=tf.constant(1.0, tf.float64))
    with pytest.raises(ValueError, match="Passed 1 grad_ys for 2 ys"):
        tf.gradients([y, y], x, grad_ys=[1.0])
    assert run(tf.gradients(y, x, grad_ys=2.0)) == [4.0]  # a Python number takes y's dtype


def test_integer_tensors_get_no_gradient():
    i = tf.constant(2)
    x = tf.constant(3.0)
    y = tf.cast(i, tf.float32) * x
    gi, gx = tf.gradients(y, [i, x])
    assert gi is None and run(gx) == 2.0
    assert tf.gradients(i * 2, [i]) == [None]


def test_gradients_of_gradients():
    x = tf.constant(3.0)
    y = x * x * x  # y' = 3x^2 = 27, y'' = 6x = 18, y''' = 6
    (g,) = tf.gradients(y, x)
    (gg,) = tf.gradients(g, x)
    (ggg,) = tf.gradients(gg, x)
    assert run([g, gg, ggg]) == [27.0, 18.0, 6.0]


def test_y_equal_to_x_and_repeated_xs():
    x = tf.constant(3.0)
    assert run(tf.gradients(x, x)) == [1.0]
    y = x * x
    assert run(tf.gradients(y, [x, x])) == [6.0, 6.0]
    assert run(tf.gradients([y, y], x)) == [12.0]  # two ys: their gradients add


def test_gradient_with_respect_to_an_intermediate_tensor():
    x = tf.constant(2.0)
    h = x * 3.0
    y = h * h  # dy/dh = 2h = 12, dy/dx = 12 * 3 = 36
    assert run(tf.gradients(y, [h, x])) == [12.0, 36.0]


def test_variables_and_reads_of_them():
    v = tf.Variable(2.0)
    assert run(tf.gradients(v.read_value() * 3.0, v)) == [3.0]
    assert run(tf.gradients(tf.identity(v) * v, v)) == [4.0]
    assert tf.gradients(tf.assign(v, v * 2.0), v) == [None]  # no gradient through a write


def test_unknown_batch_dimensions():
    p = tf.placeholder(tf.float32, [None, 3])
    w = tf.constant(np.ones((3, 2), np.float32))
    out = tf.reduce_sum(tf.matmul(p, w) * 2.0)
    gp, gw = tf.gradients(out, [p, w])
    assert gp.shape.as_list() == [None, 3] and gw.shape.as_list() == [3, 2]
    xs = np.arange(6, dtype=np.float32).reshape(2, 3)
    vp, vw = run([gp, gw], {p: xs})
    # d(2 * sum(p @ w))/dp = 2 * ones @ w^T = 4 everywhere; d/dw = 2 * p^T @ ones.
    np.testing.assert_array_equal(vp, np.full((2, 3), 4.0))
    np.testing.assert_array_equal(vw, 2 * xs.T @ np.ones((2, 2)))


def test_broadcast_gradients_reduce_to_the_input_shape():
    x = tf.constant(np.ones((4, 3), np.float32))
    b = tf.constant([1.0, 2.0, 3.0])
    gb, gx = tf.gradients(tf.reduce_sum(x * b), [b, x])
    np.testing.assert_array_equal(run(gb), [4.0, 4.0, 4.0])  # summed over the 4 rows
    np.testing.assert_array_equal(run(gx), np.tile([1.0, 2.0, 3.0], (4, 1)))


def test_float64_gradients_match_finite_differences():
    x0 = np.array([0.3, -1.2, 2.0])
    x = tf.placeholder(tf.float64, [3])
    y = tf.reduce_sum(tf.tanh(x) * tf.exp(x / 3.0) + x ** 3)
    (g,) = tf.gradients(y, x)
    assert g.dtype == tf.float64
    with tf.Session() as sess:
        analytic = sess.run(g, {x: x0})
        eps = 1e-6
        numeric = [(sess.run(y, {x: x0 + eps * e}) - sess.run(y, {x: x0 - eps * e})) / (2 * eps)
                   for e in np.eye(3)]
    np.testing.assert_allclose(analytic, numeric, rtol=1e-7)


def test_shape_mismatch_at_graph_build_names_the_op_and_both_shapes():
    a, b = tf.constant([1.0, 2.0]), tf.constant([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"add.*\(2,\).*\(3,\)"):
        tf.add(a, b, name="add")
    with pytest.raises(ValueError, match=r"MatMul.*\(1, 2\).*\(1, 2\)"):
        tf.matmul(tf.constant([[1.0, 2.0]]), tf.constant([[1.0, 2.0]]))


def test_ys_and_xs_must_be_graph_elements():
    with pytest.raises(TypeError, match="None"):
        tf.gradients(tf.constant(1.0), [None])
