"""Results pinned from real TensorFlow 1.x, where TF's choice is not the only sensible one.

Derivation: every literal below was printed by TensorFlow 2.21's ``tf.compat.v1`` in graph mode
(``tf.disable_v2_behavior()``, ``TF_ENABLE_ONEDNN_OPTS=0``) running the same program, in a
one-off script outside the repository (TensorFlow is never a dependency of the project). The
programs are the ones where a cross-check on random TF1 programs found the engine differing
from TF. Where a value can also be derived by hand, the comment says how.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf


def run(*fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(list(fetches), feed)


@pytest.fixture(autouse=True)
def fresh_graph():
    with tf.Graph().as_default() as g:
        yield g


# -- gradients at ties and kinks -----------------------------------------------------------


def test_maximum_and_minimum_send_the_gradient_to_x_on_ties():
    x, y = tf.constant([1.0, 2.0, 3.0]), tf.constant([1.0, 0.0, 3.0])
    gx, gy = run(*tf.gradients(tf.reduce_sum(tf.maximum(x, y)), [x, y]))
    np.testing.assert_array_equal(gx, [1, 1, 1])  # TF: x >= y selects x
    np.testing.assert_array_equal(gy, [0, 0, 0])
    gx, gy = run(*tf.gradients(tf.reduce_sum(tf.minimum(x, y)), [x, y]))
    np.testing.assert_array_equal(gx, [1, 0, 1])  # TF: x <= y selects x
    np.testing.assert_array_equal(gy, [0, 1, 0])


def test_reduce_max_and_min_share_the_gradient_among_ties():
    m = tf.constant([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]])
    (g,) = run(tf.gradients(tf.reduce_sum(tf.reduce_max(m, axis=1)), m)[0])
    np.testing.assert_allclose(g, [[0, 0.5, 0.5], [1 / 3, 1 / 3, 1 / 3]], rtol=1e-7)
    (g,) = run(tf.gradients(tf.reduce_min(m), m)[0])
    np.testing.assert_array_equal(g, [[1, 0, 0], [0, 0, 0]])


def test_abs_relu_sqrt_and_sign_gradients_at_kinks():
    k = tf.constant([-1.0, 0.0, 4.0])
    g_abs, g_relu, g_sqrt, g_sign = run(
        tf.gradients(tf.reduce_sum(tf.abs(k)), k)[0],
        tf.gradients(tf.reduce_sum(tf.nn.relu(k)), k)[0],
        tf.gradients(tf.reduce_sum(tf.sqrt(tf.abs(k))), k)[0],
        tf.gradients(tf.reduce_sum(tf.sign(k)), k)[0])
    np.testing.assert_array_equal(g_abs, [-1, 0, 1])  # sign(x): 0 at 0
    np.testing.assert_array_equal(g_relu, [0, 0, 1])  # 0 at 0
    # sqrt's 0.5 / y is inf at 0, times abs's 0 gives nan, exactly as TF
    np.testing.assert_array_equal(g_sqrt, [-0.5, np.nan, 0.25])
    np.testing.assert_array_equal(g_sign, [0, 0, 0])  # zeros, not None


def test_relu_second_derivative_is_zeros():
    r = tf.constant([-1.0, 0.0, 2.0])
    g = tf.gradients(tf.reduce_sum(tf.nn.relu(r)), r)[0]
    g1, g2 = run(g, tf.gradients(tf.reduce_sum(g), r)[0])
    np.testing.assert_array_equal(g1, [0, 0, 1])
    np.testing.assert_array_equal(g2, [0, 0, 0])


def test_pow_gradients_at_zero_and_negative_base():
    z, w = tf.constant([0.0, -2.0, 2.0]), tf.constant([2.0, 2.0, 0.5])
    value, gz, gw = run(z ** w, *tf.gradients(tf.reduce_sum(tf.pow(z, w)), [z, w]))
    np.testing.assert_allclose(value, [0, 4, 1.4142135], rtol=1e-6)
    np.testing.assert_allclose(gz, [0, -4, 0.35355338], rtol=1e-6)  # y * x ** (y - 1)
    # d/dy = x ** y * log(x) where x > 0, else 0 (TF masks the log)
    np.testing.assert_allclose(gw, [0, 0, 0.9802581], rtol=1e-6)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_gradient_of_a_square_by_pow_is_two_x_without_a_pow(dtype):
    """x ** 2's gradient is g * 2 * x: the bits of g * 2 * pow(x, 1) (pow(x, 1) is x), over
    zeros of both signs, infinities, subnormals and large values, with no Pow op in it."""
    values = np.array([0.0, -0.0, 1.5, -3.25, np.inf, -np.inf, 1e-45, 3e38, -1e30],
                      dtype=dtype)
    x = tf.constant(values)
    g = tf.constant(np.linspace(-2, 2, values.size).astype(dtype))
    gx = tf.gradients(x ** 2.0, x, grad_ys=g)[0]
    assert "Pow" not in [op.type for op in gx.graph.get_operations()
                         if op.name.startswith("gradients")]
    with np.errstate(all="ignore"):
        want = np.linspace(-2, 2, values.size).astype(dtype) * dtype(2) * np.power(values,
                                                                                  dtype(1))
    with tf.Session() as sess:
        assert sess.run(gx).tobytes() == want.tobytes()


def test_reduce_prod_gradient_with_zeros():
    p = tf.constant([[0.0, 2.0, 3.0], [0.0, 0.0, 3.0], [1.0, 2.0, 3.0]])
    value, g = run(tf.reduce_prod(p, 1), tf.gradients(tf.reduce_prod(p, 1), p)[0])
    np.testing.assert_array_equal(value, [0, 0, 6])
    # the product of the other elements of the row, also where a zero sits
    np.testing.assert_array_equal(g, [[6, 0, 0], [0, 0, 0], [6, 3, 2]])


def test_floormod_gradient():
    a, b = tf.constant([3.0, -3.5]), tf.constant([2.0, 2.0])
    value, ga, gb = run(tf.floormod(a, b), *tf.gradients(tf.floormod(a, b), [a, b]))
    np.testing.assert_array_equal(value, [1, 0.5])
    np.testing.assert_array_equal(ga, [1, 1])
    np.testing.assert_array_equal(gb, [-1, 2])  # -floor(a / b)


# -- the losses ----------------------------------------------------------------------------


LOGITS = [[1.0, 2.0, 0.5], [0.1, -1.0, 2.0]]


def test_softmax_cross_entropy_uses_tf_backprop_for_unnormalized_labels():
    """TF's kernel returns softmax - labels as the logits' gradient, even when a row of labels
    does not sum to one (row 0 sums to 1.7): not the derivative sum(labels) * softmax - labels."""
    logits = tf.constant(LOGITS, tf.float64)
    labels = tf.constant([[0.5, 0.9, 0.3], [0.0, 1.0, 0.0]], tf.float64)
    ce = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    gl, glab = tf.gradients(ce, [logits, labels])
    value, g_logits, g_labels, g2 = run(ce, gl, glab,
                                        tf.gradients(tf.reduce_sum(gl * gl), logits)[0])
    np.testing.assert_allclose(value, [1.7394269329835064, 3.1817844855891133], rtol=1e-12)
    np.testing.assert_allclose(g_logits, [[-0.268776102377851, -0.2714682807882376,
                                           -0.1597556168339115],
                                          [0.12470747483018808, -0.9584884877080243,
                                           0.8337810128778363]], rtol=1e-12)
    np.testing.assert_allclose(g_labels, [[1.464368784107945, 0.4643687841079449,
                                           1.964368784107945],
                                          [2.081784485589113, 3.1817844855891133,
                                           0.18178448558911336]], rtol=1e-12)
    np.testing.assert_allclose(g2, [[-0.00628808359209141, -0.02047702241362372,
                                     0.02676510600571513],
                                    [-0.13624215559741978, -0.13528127900612236,
                                     0.27152343460354217]], rtol=1e-10)


def test_sparse_softmax_cross_entropy():
    logits = tf.constant(LOGITS, tf.float64)
    sp = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[2, 0], logits=logits)
    value, g = run(sp, tf.gradients(sp, logits)[0])
    np.testing.assert_allclose(value, [1.964368784107945, 2.081784485589113], rtol=1e-12)
    np.testing.assert_allclose(g, [[0.23122389762214904, 0.6285317192117624, -0.8597556168339116],
                                   [-0.8752925251698119, 0.04151151229197569, 0.8337810128778363]],
                               rtol=1e-12)


def test_sigmoid_cross_entropy_at_extreme_logits():
    lg = tf.constant([-100.0, -1.0, 0.0, 3.0, 100.0])
    lb = tf.constant([0.0, 0.5, 1.0, 0.25, 1.0])
    sce = tf.nn.sigmoid_cross_entropy_with_logits(labels=lb, logits=lg)
    value, g_lg, g_lb = run(sce, *tf.gradients(sce, [lg, lb]))
    np.testing.assert_allclose(value, [0, 0.8132617, 0.6931472, 2.2985873, 0], atol=1e-7)
    np.testing.assert_allclose(g_lg, [0, -0.23105857, -0.5, 0.70257413, 0], atol=1e-7)
    np.testing.assert_allclose(g_lb, [100, 1, 0, -3, -100])  # -logits


def test_logsumexp_with_minus_infinity_and_its_gradient():
    x = tf.constant([[1.0, 2.0, 3.0], [-np.inf, 0.0, 0.0]], tf.float64)
    lse = tf.reduce_logsumexp(x, axis=1)
    value, g = run(lse, tf.gradients(lse, x)[0])
    np.testing.assert_allclose(value, [3.40760596444438, np.log(2)], rtol=1e-14)
    np.testing.assert_allclose(g, [[0.09003057317038046, 0.2447284710547976, 0.6652409557748219],
                                   [0, 0.5, 0.5]], rtol=1e-14)  # the softmax of each row


def test_softmax_and_log_softmax_over_a_non_last_axis():
    x = tf.constant([[1.0, 2.0], [3.0, 5.0]], tf.float64)
    sm, g, lsm = run(tf.nn.softmax(x, axis=0), tf.gradients(tf.nn.softmax(x, axis=0)[0, 1], x)[0],
                     tf.nn.log_softmax(x, dim=0))
    np.testing.assert_allclose(sm, [[0.11920292202211755, 0.04742587317756679],
                                    [0.8807970779778823, 0.9525741268224334]], rtol=1e-14)
    np.testing.assert_allclose(g, [[0, 0.04517665973091214], [0, -0.04517665973091214]],
                               rtol=1e-12, atol=1e-17)
    np.testing.assert_allclose(lsm, [[-2.1269280110429727, -3.048587351573742],
                                     [-0.1269280110429726, -0.04858735157374196]], rtol=1e-14)


# -- dtypes and integer arithmetic ---------------------------------------------------------


def test_dtype_rules_of_python_scalars_and_division():
    i = tf.constant([[1, -2], [4, -5]])
    assert (i / 2).dtype == tf.float64  # int32 truediv -> float64
    assert (tf.constant([1, 2], tf.int8) / 2).dtype == tf.float32  # small ints -> float32
    assert (tf.constant([1, 2], tf.int16) / tf.constant([3, 4], tf.int16)).dtype == tf.float32
    assert (2 * i).dtype == tf.int32  # the Python scalar adopts the tensor's dtype
    assert (tf.constant(1.5) * 2).dtype == tf.float32
    assert (tf.constant(1.5, tf.float64) + 0.5).dtype == tf.float64
    with pytest.raises(TypeError):
        i * 2.5  # a float scalar cannot become int32


def test_integer_division_modulo_and_mean():
    i = tf.constant([[1, -2], [4, -5]])
    half, mean0, mean_all, fdiv, fmod = run(i / 2, tf.reduce_mean(i, 0), tf.reduce_mean(i),
                                            i // -3, i % -3)
    np.testing.assert_array_equal(half, [[0.5, -1.0], [2.0, -2.5]])
    np.testing.assert_array_equal(mean0, [2, -3])  # 2.5 and -3.5 truncated toward zero
    assert mean_all == 0 and mean0.dtype == np.int32
    np.testing.assert_array_equal(fdiv, [[-1, 0], [-2, 1]])  # floor division
    np.testing.assert_array_equal(fmod, [[-2, -2], [-2, -2]])  # sign of the divisor



def test_tf1_div_is_python2_division():
    # TF 2.21's tf.compat.v1.div on the same operands: integers floor-divided in their dtype,
    # floats divided; tf.divide is true division (a cookbook program prints div(3, 4) as 0).
    got = run(tf.div(3, 4), tf.div(-7, 2), tf.div(7.0, 2.0), tf.div(np.int64(-9), np.int64(4)),
              tf.div([7, -7], [-2, 3]), tf.divide(3, 4), tf.div(-7.5, 2.0))
    want = [np.int32(0), np.int32(-4), np.float32(3.5), np.int64(-3),
            np.array([-4, -3], np.int32), np.float64(0.75), np.float32(-3.75)]
    for g, w in zip(got, want):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_array_equal(g, w)

def test_one_hot_takes_its_dtype_from_on_value():
    assert tf.one_hot([0, 2], 3, on_value=5, off_value=0).dtype == tf.int32
    assert tf.one_hot([0, 2], 3).dtype == tf.float32


# -- selection and empty reductions --------------------------------------------------------


def test_tf1_where_with_a_vector_condition_selects_rows():
    a, b = tf.constant([[1.0, 2.0], [3.0, 4.0]]), tf.constant([[10.0, 20.0], [30.0, 40.0]])
    w = tf.constant([[1.0, 2.0], [3.0, 4.0]])
    out = tf.where([True, False], a, b)
    value, ga, gb = run(out, *tf.gradients(tf.reduce_sum(out * w), [a, b]))
    np.testing.assert_array_equal(value, [[1, 2], [30, 40]])
    np.testing.assert_array_equal(ga, [[1, 2], [0, 0]])
    np.testing.assert_array_equal(gb, [[0, 0], [3, 4]])
    # where_v2 broadcasts the vector along the last axis instead
    (v2,) = run(tf.where_v2([True, False], a, b))
    np.testing.assert_array_equal(v2, [[1, 20], [3, 40]])


def test_reductions_of_empty_groups():
    e = tf.placeholder(tf.float32, [1, None])
    mx, mn, s = run(tf.reduce_max(e, 1), tf.reduce_min(e, 1), tf.reduce_sum(e, 1),
                    feed={e: np.zeros((1, 0))})
    np.testing.assert_array_equal(mx, [-np.inf])
    np.testing.assert_array_equal(mn, [np.inf])
    np.testing.assert_array_equal(s, [0])


def test_relu_gradient_is_a_product_so_inf_upstream_gives_nan():
    """TF's ReluGrad multiplies by (y > 0): an inf gradient where relu is off becomes nan."""
    x = tf.constant([-1.0, 0.0, 2.0])
    w = tf.constant([np.inf, 1.0, np.inf])
    (g,) = run(tf.gradients(tf.reduce_sum(tf.nn.relu(x) * w), x)[0])
    np.testing.assert_array_equal(g, [np.nan, 0, np.inf])


def test_cross_entropy_of_one_class_is_plus_zero_and_of_no_class_zero():
    lo = tf.constant([[0.3], [-2.0]])
    sp = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[0, 0], logits=lo)
    ce = tf.nn.softmax_cross_entropy_with_logits_v2(labels=[[1.0], [1.0]], logits=lo)
    e = tf.placeholder(tf.float32, [2, None])
    empty = tf.nn.softmax_cross_entropy_with_logits_v2(labels=e, logits=e)
    inv_sp, inv_ce, value = run(1 / sp, 1 / ce, empty, feed={e: np.zeros((2, 0))})
    np.testing.assert_array_equal(inv_sp, [np.inf, np.inf])  # +0.0: log_sum - picked logit
    np.testing.assert_array_equal(inv_ce, [np.inf, np.inf])
    np.testing.assert_array_equal(value, [0, 0])


def test_cross_entropy_loss_has_the_logits_shape_without_the_class_axis():
    """With shapes unknown when the graph is built, labels of shape (1, 1) broadcast against
    logits of shape (1,): TF reshapes the loss to logits.shape[:-1], a scalar."""
    logits, labels = tf.placeholder(tf.float32, None), tf.placeholder(tf.float32, None)
    ce = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    (value,) = run(ce, feed={logits: [1.35], labels: [[1.35]]})
    assert np.shape(value) == () and value == 0


def test_activations_and_their_gradients_at_the_kinks():
    """Each row: the activation of x = [-2, 0, 3, 6, 7] and d sum(activation) / dx (TF, float64,
    rounded to 12 digits). leaky_relu's alpha is a float32 attribute in TF, hence 0.2000000030."""
    x = tf.constant([-2.0, 0.0, 3.0, 6.0, 7.0], tf.float64)
    expected = {
        tf.nn.leaky_relu: ([-0.40000000596, 0, 3, 6, 7], [0.20000000298, 0.20000000298, 1, 1, 1]),
        tf.nn.elu: ([-0.864664716763, 0, 3, 6, 7], [0.135335283237, 1, 1, 1, 1]),
        tf.nn.selu: ([-1.520166468596, 0, 3.152102962066, 6.304205924133, 7.354906911488],
                     [0.237932872252] + [1.050700987355] * 4),
        tf.nn.relu6: ([0, 0, 3, 6, 6], [0, 0, 1, 0, 0]),
        tf.nn.softsign: ([-0.666666666667, 0, 0.75, 0.857142857143, 0.875],
                         [0.111111111111, 1, 0.0625, 0.020408163265, 0.015625]),
        tf.nn.log_sigmoid: ([-2.126928011043, -0.69314718056, -0.048587351574, -0.002475685138,
                             -0.000911466454],
                            [0.880797077978, 0.5, 0.047425873178, 0.002472623157, 0.000911051194]),
    }
    for fn, (value, grad) in expected.items():
        y = fn(x)
        got_value, got_grad = run(y, tf.gradients(tf.reduce_sum(y), x)[0])
        np.testing.assert_allclose(got_value, value, atol=1e-11, err_msg=fn.__name__)
        np.testing.assert_allclose(got_grad, grad, atol=1e-11, err_msg=fn.__name__)


def test_squared_difference_broadcasts_and_differentiates_both_sides():
    x = tf.constant([-2.0, 0.0, 3.0], tf.float64)
    y = tf.constant([[1.0], [-1.0]], tf.float64)
    d = tf.squared_difference(x, y)
    value, gx, gy = run(d, *tf.gradients(tf.reduce_sum(d), [x, y]))
    np.testing.assert_array_equal(value, [[9, 1, 4], [1, 1, 16]])  # (x - y) ** 2 by hand
    np.testing.assert_array_equal(gx, [-6 - 2, -2 + 2, 4 + 8])  # sum over rows of 2 (x - y)
    np.testing.assert_array_equal(gy, [[-(-6 - 2 + 4)], [-(-2 + 2 + 8)]])


def test_sqrt_rsqrt_reciprocal_gradients_are_zero_where_the_upstream_gradient_is():
    """TF's SqrtGrad/RsqrtGrad/ReciprocalGrad kernels return 0 for dy == 0, even where the
    derivative is infinite (y = 0 or inf), instead of 0 * inf = nan; log has no such guard."""
    x = tf.constant([0.0, 1.0, np.inf, -np.inf])
    zeros = tf.zeros([4])
    for fn in (tf.sqrt, tf.rsqrt, tf.reciprocal):
        (g,) = run(tf.gradients(tf.reduce_sum(fn(x) * zeros), x)[0])
        np.testing.assert_array_equal(g, [0, 0, 0, 0])
        assert not np.signbit(g).any()  # +0.0, as TF
    (g,) = run(tf.gradients(tf.reduce_sum(tf.log(x) * zeros), x)[0])
    np.testing.assert_array_equal(g, [np.nan, 0, 0, 0])
