"""LSTMCell's peepholes, cell clipping and projection, and cells with another activation than
tanh (they run step by step through graph ops): outputs, final states, gradients and variable
names against what TF 2.21 compat.v1 (tf_keras' rnn_cell) printed for the same weights."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")

X = np.random.RandomState(0).randn(3, 4, 5).astype(np.float32)  # batch, time, depth


def _run(cell, fetch_state):
    outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(X), dtype=tf.float32)
    variables = sorted(tf.trainable_variables(), key=lambda v: v.name)
    loss = tf.reduce_sum(outputs ** 2) + (tf.reduce_sum(state.c) if fetch_state else 0.0)
    grads = tf.gradients(loss, variables)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for v in variables:  # the weights TF was given: uniform(-0.5, 0.5) seeded by the name
            value = np.random.RandomState(len(v.name)).uniform(-0.5, 0.5, v.shape.as_list())
            sess.run(v.assign(value.astype(np.float32)))
        out, final, g = sess.run([outputs, state, grads])
    return out, final, {v.name: x for v, x in zip(variables, g)}


# TF 2.21 compat.v1: [sum(out), sum(|out|), sum(c), sum(h)], sum(|grad|) per variable
CASES = {
    "peepholes_clip_projection": (
        dict(use_peepholes=True, cell_clip=0.5, num_proj=3, proj_clip=0.3),
        [-0.961514, 3.319246, 0.554344, -0.035434],
        {"kernel": 26.89849, "bias": 12.13804, "w_f_diag": 0.42315, "w_i_diag": 0.30152,
         "w_o_diag": 0.17114, "projection/kernel": 4.4566}),
    "relu": (dict(activation=tf.nn.relu), [10.592552, 10.592552, 7.130769, 3.122256],
             {"kernel": 123.70009, "bias": 39.45421}),
    "peepholes": (dict(use_peepholes=True), [-1.74425, 11.319302, -0.736466, -0.47997],
                  {"kernel": 65.83086, "bias": 27.00968, "w_f_diag": 1.47375,
                   "w_i_diag": 0.64112, "w_o_diag": 0.88691}),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_lstm_cell_options_match_tf(case):
    kwargs, sums, grad_sums = CASES[case]
    cell = tf.nn.rnn_cell.LSTMCell(6, **kwargs)
    assert not tf.nn.rnn_cell.LSTMCell(6).__class__(6, **kwargs).can_unroll()
    out, final, grads = _run(cell, fetch_state=True)
    units = kwargs.get("num_proj", 6)
    assert out.shape == (3, 4, units) and final.c.shape == (3, 6) and final.h.shape == (3, units)
    assert cell.output_size == units and cell.state_size == (6, units)
    np.testing.assert_allclose([out.sum(), np.abs(out).sum(), final.c.sum(), final.h.sum()], sums,
                               rtol=2e-5, atol=2e-6)
    assert sorted(grads) == sorted(f"rnn/lstm_cell/{n}:0" for n in grad_sums)
    for name, expected in grad_sums.items():
        np.testing.assert_allclose(np.abs(grads[f"rnn/lstm_cell/{name}:0"]).sum(), expected,
                                   rtol=2e-5, atol=1e-5)  # TF's sums printed to 5 decimals
    if "proj_clip" in kwargs:
        assert np.abs(out).max() <= 0.3 + 1e-7 and np.abs(final.c).max() <= 0.5 + 1e-7


def test_basic_rnn_cell_with_relu_matches_tf():
    cell = tf.nn.rnn_cell.BasicRNNCell(4, activation=tf.nn.relu)
    outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(X), dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for v in tf.trainable_variables():
            value = np.random.RandomState(len(v.name)).uniform(-0.5, 0.5, v.shape.as_list())
            sess.run(v.assign(value.astype(np.float32)))
        out, final = sess.run([outputs, state])
    assert out.min() >= 0
    np.testing.assert_allclose([out.sum(), final.sum()], [12.392426, 3.943838], rtol=2e-5)


def test_tanh_cells_still_unroll_as_one_op():
    assert tf.nn.rnn_cell.LSTMCell(3).can_unroll()
    assert tf.nn.rnn_cell.BasicRNNCell(3, activation=tf.tanh).can_unroll()
    assert not tf.nn.rnn_cell.BasicRNNCell(3, activation=tf.nn.relu).can_unroll()
    with pytest.raises(NotImplementedError, match="num_unit_shards"):
        tf.nn.rnn_cell.LSTMCell(3, num_unit_shards=2)
