"""Keras optimizers in eager mode with IndexedSlices gradients (a GradientTape over tf.gather):
the sparse branches of TF2's Keras optimizers (2.11+), written here as numpy loops over the
deduplicated rows (``_deduplicate_sparse_grad``), in float64 so the comparisons are tight."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.framework import indexed_slices

ROWS, COLS = 6, 3
IDS = [np.array([4, 1, 4]), np.array([0, 1]), np.array([5, 5, 5, 1])]
_rng = np.random.default_rng(11)
VALUES = [_rng.uniform(-1, 1, (len(i), COLS)) for i in IDS]
INIT = _rng.uniform(-1, 1, (ROWS, COLS))
LR = 0.25


@pytest.fixture(autouse=True)
def eager():
    with tf.eager_mode():  # not engine.v2, whose import turns eager on for the whole process
        yield


def _dedup(ids, values):
    order = list(dict.fromkeys(ids.tolist()))
    summed = np.zeros((len(order), values.shape[1]))
    for i, v in zip(ids, values):
        summed[order.index(i)] += v
    return np.array(order), summed


def _train(opt, steps=3):
    """``steps`` apply_gradients of the gradient of sum(gather(W, ids) * values)."""
    w = tf.Variable(INIT.copy(), name="w")
    for k in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.gather(w, IDS[k]) * VALUES[k])
        (grad,) = tape.gradient(loss, [w])
        assert isinstance(grad, tf.IndexedSlices)
        opt.apply_gradients([(grad, w)])
    return w.numpy(), opt


def _sgd(momentum=0.0, nesterov=False):
    var, m = INIT.copy(), np.zeros_like(INIT)
    for k in range(3):
        ids, g = _dedup(IDS[k], VALUES[k])
        rows = -g * LR
        if momentum == 0:
            var[ids] += rows
            continue
        m *= momentum
        m[ids] += rows
        if nesterov:
            var[ids] += rows
            var += m * momentum
        else:
            var += m
    return var


def _adagrad(eps=1e-7):
    var, acc = INIT.copy(), np.full_like(INIT, 0.1)
    for k in range(3):
        ids, g = _dedup(IDS[k], VALUES[k])
        acc[ids] += g * g
        var[ids] += -LR * g / np.sqrt(acc[ids] + eps)
    return var


def _adam(b1=0.9, b2=0.999, eps=1e-7, weight_decay=None):
    var, m, v = INIT.copy(), np.zeros_like(INIT), np.zeros_like(INIT)
    for k in range(3):
        if weight_decay:
            var -= var * weight_decay * LR
        ids, g = _dedup(IDS[k], VALUES[k])
        t = k + 1
        alpha = LR * np.sqrt(1 - b2 ** t) / (1 - b1 ** t)
        m += -m * (1 - b1)
        m[ids] += g * (1 - b1)
        v += -v * (1 - b2)
        v[ids] += g * g * (1 - b2)
        var -= m * alpha / (np.sqrt(v) + eps)
    return var


def _rmsprop(rho=0.9, momentum=0.0, centered=False, eps=1e-7):
    var, vel, avg, mom = (INIT.copy(), np.zeros_like(INIT), np.zeros_like(INIT),
                          np.zeros_like(INIT))
    for k in range(3):
        ids, g = _dedup(IDS[k], VALUES[k])
        vel *= rho
        vel[ids] += g * g * (1 - rho)
        denominator = vel + eps
        if centered:
            avg *= rho
            avg[ids] += g * (1 - rho)
            denominator = vel - avg * avg + eps
        increment = LR * g / np.sqrt(denominator[ids])
        if momentum > 0:
            mom *= momentum
            mom[ids] += increment
            var -= mom
        else:
            var[ids] -= increment
    return var


CASES = {
    "sgd": (lambda: tf.keras.optimizers.SGD(LR), _sgd, True),
    "sgd_momentum": (lambda: tf.keras.optimizers.SGD(LR, momentum=0.875),
                     lambda: _sgd(0.875), False),
    "sgd_nesterov": (lambda: tf.keras.optimizers.SGD(LR, momentum=0.875, nesterov=True),
                     lambda: _sgd(0.875, True), False),
    "adagrad": (lambda: tf.keras.optimizers.Adagrad(LR), _adagrad, True),
    "adam": (lambda: tf.keras.optimizers.Adam(LR), _adam, False),
    "adamw": (lambda: tf.keras.optimizers.AdamW(LR, weight_decay=0.0625),
              lambda: _adam(weight_decay=0.0625), False),
    "rmsprop": (lambda: tf.keras.optimizers.RMSprop(LR), _rmsprop, True),
    "rmsprop_centered_momentum": (
        lambda: tf.keras.optimizers.RMSprop(LR, momentum=0.5, centered=True),
        lambda: _rmsprop(momentum=0.5, centered=True), False),
}


def _refuse_dense(slices, dtype=None, name=None):
    raise AssertionError(f"IndexedSlices made dense: {slices}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_sparse_branch_follows_tf2_keras(name, monkeypatch):
    """The numbers of TF2 Keras' sparse branch, and no table-sized dense gradient on the way."""
    monkeypatch.setattr(indexed_slices, "_dense_converter", _refuse_dense)
    make, reference, rows_only = CASES[name]
    got, _ = _train(make())
    np.testing.assert_allclose(got, reference(), rtol=1e-12, atol=1e-14)
    # row 4 is looked up at step 1 only: it keeps moving where a slot decaying everywhere moves
    # it (momentum, Adam's m), not where only the rows named change
    after_one, _ = _train(make(), steps=1)
    assert np.array_equal(got[4], after_one[4]) == rows_only


@pytest.mark.parametrize("name", ["sgd", "adagrad", "adam", "rmsprop"])
def test_sparse_equals_dense_up_to_rounding(name):
    """Where a zero gradient row changes nothing (or decays as in the dense step), the sparse
    branch gives the dense numbers."""
    make, _, _ = CASES[name]
    dense = tf.Variable(INIT.copy(), name="d")
    opt = make()
    for k in range(3):
        g = np.zeros_like(INIT)
        np.add.at(g, IDS[k], VALUES[k])
        opt.apply_gradients([(tf.constant(g), dense)])
    got, _ = _train(make())
    np.testing.assert_allclose(got, dense.numpy(), rtol=1e-12, atol=1e-14)


def test_clipping_keeps_slices_and_repeated_rows_are_summed_first():
    """clipnorm clips the IndexedSlices by its norm (repeated rows counted apart, as TF's
    clip_by_norm of slices does), then the rows are deduplicated before the update."""
    w = tf.Variable(INIT.copy(), name="c")
    opt = tf.keras.optimizers.SGD(LR, clipnorm=0.5)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup(w, IDS[2]) * VALUES[2])
    (grad,) = tape.gradient(loss, [w])
    opt.apply_gradients([(grad, w)])
    scale = min(1.0, 0.5 / np.sqrt(np.sum(VALUES[2] ** 2)))
    ids, g = _dedup(IDS[2], VALUES[2] * scale)
    expected = INIT.copy()
    expected[ids] -= LR * g
    np.testing.assert_allclose(w.numpy(), expected, rtol=1e-12)
