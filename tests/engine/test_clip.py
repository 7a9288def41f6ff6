"""clip_by_value, clip_by_norm, global_norm, clip_by_global_norm: values and gradients against
TF1 (tf1_train_reference.CLIPPING, derived by tf_reference/derive_train.py) and float64
re-derivations of the formulas."""

import numpy as np
import pytest
import tf1_train_reference as ref

import engine as tf
from engine.framework.registry import FUNCTIONS

REF = ref.CLIPPING


def run(fetches):
    with tf.Session() as sess:
        return sess.run(fetches)


def check(actual, key, rtol=1e-6):
    np.testing.assert_allclose(actual, np.asarray(REF[key], np.float32), rtol=rtol, atol=1e-7)


def test_clip_by_norm_matches_tf1_values_and_gradients():
    with tf.Graph().as_default():
        t = tf.constant([[3.0, 4.0], [6.0, 8.0]])
        w = tf.constant([[1.0, 2.0], [3.0, 4.0]])
        zeros = tf.zeros([2, 2])
        out = run({
            "norm_all": tf.clip_by_norm(t, 5.0),
            "norm_axes1": tf.clip_by_norm(t, 5.0, axes=[1]),
            "norm_axes0": tf.clip_by_norm(t, 5.0, axes=0),
            "norm_noclip": tf.clip_by_norm(t, 20.0),
            "norm_zero": tf.clip_by_norm(zeros, 1.0),
            "norm_grad": tf.gradients(tf.reduce_sum(tf.clip_by_norm(t, 5.0) * w), t)[0],
            "norm_grad_axes1": tf.gradients(
                tf.reduce_sum(tf.clip_by_norm(t, 5.0, axes=[1]) * w), t)[0],
            "norm_grad_noclip": tf.gradients(tf.reduce_sum(tf.clip_by_norm(t, 20.0) * w), t)[0],
            "norm_grad_zero": tf.gradients(tf.reduce_sum(tf.clip_by_norm(zeros, 1.0) * w),
                                           zeros)[0],
        })
    for key, value in out.items():
        check(value, key)


def test_clip_by_norm_formula_float64():
    x = np.array([[1.0, -2.0, 2.0], [0.5, 0.0, -0.25]])
    with tf.Graph().as_default():
        t = tf.constant(x)
        clipped, per_row, negative = run([tf.clip_by_norm(t, 1.5), tf.clip_by_norm(t, 1.5, axes=1),
                                          tf.clip_by_norm(t, -3.0)])
    norm = np.sqrt((x * x).sum())
    np.testing.assert_allclose(clipped, x * 1.5 / max(norm, 1.5), rtol=1e-15)
    rows = np.sqrt((x * x).sum(axis=1, keepdims=True))
    np.testing.assert_allclose(per_row, x * 1.5 / np.maximum(rows, 1.5), rtol=1e-15)
    np.testing.assert_array_equal(negative, np.zeros_like(x))  # a negative clip_norm acts as 0


def test_global_norm_and_clip_by_global_norm_match_tf1():
    with tf.Graph().as_default():
        a = tf.constant([1.0, -2.0, 2.0])
        b = tf.constant([[3.0], [-4.0]])
        inf_t = tf.constant([1.0, np.inf])
        nan_t = tf.constant([np.nan, 1.0])
        clipped, norm = tf.clip_by_global_norm([a, None, b], 2.0)
        assert clipped[1] is None
        inf_clipped, inf_norm = tf.clip_by_global_norm([a, inf_t], 2.0)
        out = run({
            "global_norm": tf.global_norm([a, None, b]),
            "global_clip": clipped[0],
            "global_clip_b": clipped[2],
            "global_clip_norm": norm,
            "global_noclip": tf.clip_by_global_norm([a, b], 10.0)[0][0],
            "global_use_norm": tf.clip_by_global_norm([a, b], 2.0, use_norm=tf.constant(4.0))[0][0],
            "global_inf": inf_clipped[0],
            "global_inf_norm": inf_norm,
            "global_nan": tf.clip_by_global_norm([nan_t, b], 2.0)[0][1],
            "global_grad": tf.gradients(
                tf.reduce_sum(tf.clip_by_global_norm([a, b], 2.0)[0][0] * a), a)[0],
        })
    for key, value in out.items():
        check(value, key)
    assert np.isnan(out["global_inf"]).all() and np.isnan(out["global_nan"]).all()


def test_clip_by_global_norm_formula_float64_and_tuples():
    xs = [np.array([0.3, -1.2]), np.array([[2.0, 0.5], [-0.1, 1.0]])]
    with tf.Graph().as_default():
        # zip(*...) gives tuples, as in seed 001's snippet.
        clipped, norm = tf.clip_by_global_norm(tuple(tf.constant(x) for x in xs), 1.25)
        values, n = run([clipped, norm])
    expected_norm = np.sqrt(sum((x * x).sum() for x in xs))
    assert n == pytest.approx(expected_norm, rel=1e-15)
    scale = 1.25 * min(1.0 / expected_norm, 1.0 / 1.25)
    for v, x in zip(values, xs):
        np.testing.assert_allclose(v, x * scale, rtol=1e-15)


def test_clip_by_global_norm_of_all_zeros_is_zeros():
    with tf.Graph().as_default():
        values, norm = run(tf.clip_by_global_norm([tf.zeros([3])], 1.0))
    np.testing.assert_array_equal(values[0], np.zeros(3, np.float32))
    assert norm == 0.0


def test_global_norm_needs_a_sequence():
    with tf.Graph().as_default():
        with pytest.raises(TypeError, match="should be a sequence of tensors"):
            tf.global_norm(tf.constant([1.0]))
        with pytest.raises(TypeError, match="should be a sequence of tensors"):
            tf.clip_by_global_norm((g for g in [tf.constant([1.0])]), 1.0)


def test_clip_by_value_matches_tf1_values_gradients_and_broadcast_bounds():
    with tf.Graph().as_default():
        v = tf.constant([-2.0, -1.0, 0.0, 0.5, 1.0, 2.0])
        vw = tf.constant([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
        m = tf.constant([[-2.0, 0.5, 3.0], [-0.5, 0.25, 2.0]])
        out = run({
            "value": tf.clip_by_value(v, -1.0, 1.0),
            # at the bounds the gradient passes (TF's minimum/maximum gradient rules)
            "value_grad": tf.gradients(tf.reduce_sum(tf.clip_by_value(v, -1.0, 1.0) * vw), v)[0],
            "value_broadcast_bounds": tf.clip_by_value(m, tf.constant([[-1.0], [0.0]]), 1.0),
        })
    for key, value in out.items():
        check(value, key)


def test_clip_by_value_may_not_broadcast_its_input():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="broadcast"):
            tf.clip_by_value(tf.constant([1.0, 2.0]), tf.zeros([3, 2]), 1.0)


def test_tensor_clip_functions_are_exported_to_the_expression_language():
    for name in ("clip_by_value", "clip_by_norm"):
        assert FUNCTIONS[name] is getattr(tf, name)
    assert "clip_by_global_norm" not in FUNCTIONS  # takes and returns lists


@pytest.mark.parametrize("sizes", [[(34, 128), (128,)], [(1,), (), (7, 3), (100_000,)]])
def test_global_norm_is_one_op_with_the_bits_of_tf_composition(sizes):
    """global_norm is one GlobalNorm op whose value equals, bit for bit in float32, TF's
    composition sqrt(2 * sum(stack(l2_loss(t)))) built from the separate ops."""
    from engine.ops.array import stack
    from engine.ops.nn import l2_loss

    rng = np.random.default_rng(len(sizes))
    arrays = [(rng.standard_normal(s) * 10).astype(np.float32) for s in sizes]
    ts = [tf.constant(a) for a in arrays]
    norm = tf.global_norm(ts)
    composed = tf.sqrt(tf.reduce_sum(stack([l2_loss(t) for t in ts])) * tf.constant(2.0))
    assert norm.op.type == "GlobalNorm" and norm.dtype == tf.float32
    with tf.Session() as sess:
        got, want = sess.run([norm, composed])
    assert got.dtype == np.float32 and got.tobytes() == np.float32(want).tobytes()
    np.testing.assert_allclose(got, np.sqrt(sum((a.astype(np.float64) ** 2).sum()
                                                for a in arrays)), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_global_norm_of_few_tensors_keeps_numpys_sum_bits_for_special_values(dtype):
    """Below 8 tensors the halves are added as scalars: the bits (NaN's sign included) of the
    array sum over the halves, with zeros of both signs, infinities, NaN of both signs,
    subnormals, overflow and values of very different scales."""
    from engine.ops.nn import _global_norm_forward, _l2_loss_forward

    rng = np.random.default_rng(7)
    specials = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-45, 3e38]
    for _ in range(2000):
        arrays = []
        with np.errstate(all="ignore"):
            for _ in range(rng.integers(1, 8)):
                shape = tuple(rng.integers(1, 5, rng.integers(0, 3)))
                a = (rng.standard_normal(shape) * 10.0 ** rng.integers(-30, 30)).astype(dtype)
                if rng.random() < 0.3:
                    a.flat[0] = rng.choice(specials)
                arrays.append(a * 0 if rng.random() < 0.1 else a)
            halves = np.array([_l2_loss_forward(a) for a in arrays], dtype)
            want = np.sqrt(np.asarray(np.add.reduce(halves) * dtype(2)))
            got = _global_norm_forward(*arrays)
        assert got.dtype == want.dtype and got.shape == () and got.tobytes() == want.tobytes()


def test_global_norm_of_mixed_dtypes_is_a_type_error():
    with pytest.raises(TypeError, match="share a dtype"):
        tf.global_norm([tf.constant([1.0], tf.float32), tf.constant([1.0], tf.float64)])
