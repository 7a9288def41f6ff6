"""The sparse softmax cross-entropy's compiled forward (ops/xent_compiled.py) gives its numpy
code's bits (NaN, infinities, signed zeros, one class, float32/64, any integer labels) and
leaves a bad label to the numpy code's error; the chain BroadcastReduced -> ExpandDims -> Mul
(a mean loss's gradient reaching the classes) as one multiply gives the unfused ops' bits and
stays apart where the spread gradient is not a scalar."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.ops import xent_compiled
from engine.ops.nn import _sparse_xent_forward


def _numpy_code(logits, labels, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(xent_compiled, "WARM_RUNS", 10 ** 9)
        with np.errstate(all="ignore"):
            return _sparse_xent_forward(logits, labels)


def _logits(shape, dtype, seed=0):
    """Logits with an infinity of each sign, NaN and zeros of both signs in the first rows."""
    x = (np.random.default_rng(seed).standard_normal(shape) * 10).astype(dtype)
    x.flat[:5] = [np.inf, -np.inf, np.nan, 0.0, -0.0][:x.size]
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(64, 10), (3, 1), (5, 7, 4), (200, 130), (1, 3), (6, 17)])
def test_compiled_forward_gives_the_numpy_codes_bits(monkeypatch, dtype, shape):
    pytest.importorskip("numba")
    monkeypatch.setattr(xent_compiled, "WARM_RUNS", 0)
    rng = np.random.default_rng(1)
    for label_dtype in (np.int32, np.int64, np.uint8):
        logits = _logits(shape, dtype)
        labels = rng.integers(0, shape[-1], shape[:-1]).astype(label_dtype)
        got = xent_compiled.sparse_xent(logits, labels)
        if got is None:
            pytest.skip("the compiled forward is not used here")
        for a, b in zip(got, _numpy_code(logits, labels, monkeypatch)):
            assert a.shape == b.shape and a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)  # NaN where NaN; zeros' signs below
            np.testing.assert_array_equal(np.signbit(a), np.signbit(b))


def test_compiled_forward_leaves_bad_labels_and_other_arrays_to_the_numpy_code(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setattr(xent_compiled, "WARM_RUNS", 0)
    logits = _logits((4, 3), np.float32)
    for labels in (np.array([0, 1, 3, 2]), np.array([0, -1, 2, 2])):
        assert xent_compiled.sparse_xent(logits, labels) is None
        with pytest.raises(ValueError, match="outside the valid range"):
            _sparse_xent_forward(logits, labels)
    labels = np.array([0, 1, 2, 2])
    assert xent_compiled.sparse_xent(logits.astype(np.float16), labels) is None
    assert xent_compiled.sparse_xent(np.asfortranarray(_logits((4, 3, 2), np.float32)),
                                     np.zeros((4, 3), np.int32)) is None


def test_compiled_forward_waits_for_its_warm_up(monkeypatch):
    monkeypatch.setattr(xent_compiled, "WARM_RUNS", 3)
    monkeypatch.setattr(xent_compiled, "_state", {})
    logits, labels = _logits((4, 3), np.float32), np.array([0, 1, 2, 2])
    assert [xent_compiled.sparse_xent(logits, labels) is None for _ in range(3)] == [True] * 3


def _loss_gradient(monkeypatch, chains, reduce="mean", dense=False):
    """The loss and its gradient with respect to the logits, the plan's step count."""
    monkeypatch.setenv("GRADPIPE_CHAINS", "1" if chains else "0")
    with tf.Graph().as_default():
        logits = tf.placeholder(tf.float32, [None, 5])
        labels = tf.placeholder(tf.int32, [None])
        if dense:
            per_example = tf.nn.softmax_cross_entropy_with_logits_v2(
                labels=tf.one_hot(labels, 5), logits=logits)
        else:
            per_example = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels,
                                                                          logits=logits)
        if reduce == "rows":  # a mean over one axis of [n / 2, 2]: a vector gradient spread
            loss = tf.reduce_sum(tf.reduce_mean(tf.reshape(per_example, [-1, 2]), axis=1) * 3.0)
        else:
            loss = (tf.reduce_mean if reduce == "mean" else tf.reduce_sum)(per_example) * 0.7
        (grad,) = tf.gradients(loss, [logits])
        feed = {logits: _logits((6, 5), np.float32, seed=2), labels: [0, 4, 2, 1, 1, 3]}
        with tf.Session() as sess, np.errstate(all="ignore"):
            values = sess.run([loss, grad], feed)
            steps = len(list(sess._plans.values())[-1].steps)
    return values, steps


@pytest.mark.parametrize(("reduce", "dense"), [("mean", False), ("sum", False), ("mean", True),
                                               ("rows", False)])
def test_spread_scale_chain_gives_the_unfused_bits(monkeypatch, reduce, dense):
    fused, fused_steps = _loss_gradient(monkeypatch, True, reduce, dense)
    apart, apart_steps = _loss_gradient(monkeypatch, False, reduce, dense)
    for a, b in zip(fused, apart):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(np.signbit(a), np.signbit(b))
    if reduce != "rows":
        assert fused_steps == apart_steps - 2  # BroadcastReduced, ExpandDims, Mul -> one step
