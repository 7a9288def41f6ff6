"""tf.contrib.seq2seq's monotonic attention (TF 1.15's attention_wrapper.py): hardmax and
safe_cumprod against numpy, monotonic_attention's three modes against the recurrence written out
in Python (and a hand-worked case), its parallel form's gradient against finite differences, and
BahdanauMonotonicAttention / LuongMonotonicAttention in an AttentionWrapper step against their
formulas replayed in numpy with the variables' values."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from tests.engine.numeric import numeric_grad

seq2seq = tf.contrib.seq2seq
pytestmark = pytest.mark.usefixtures("fresh_default_graph")


def _run(t):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(t)


def test_hardmax_is_the_first_maximum_one_hot():
    out = _run(seq2seq.hardmax(tf.constant([[1., 3., 3., 0.], [-1., -2., -5., -1.]])))
    np.testing.assert_array_equal(out, [[0, 1, 0, 0], [1, 0, 0, 0]])


def test_safe_cumprod_is_cumprod_of_values_clipped_to_tiny_and_one():
    x = np.array([[0.5, 0.25, 0.0, 2.0, 0.8]])
    clipped = np.clip(x, np.finfo(np.float64).tiny, 1)
    np.testing.assert_allclose(_run(seq2seq.safe_cumprod(tf.constant(x), axis=1)),
                               np.cumprod(clipped, 1), rtol=1e-12)
    exclusive = np.concatenate([[[1.0]], np.cumprod(clipped, 1)[:, :-1]], 1)
    np.testing.assert_allclose(
        _run(seq2seq.safe_cumprod(tf.constant(x), axis=1, exclusive=True)), exclusive,
        rtol=1e-12)


def _recurrence(p, previous):
    """q_0 = prev_0, q_i = (1 - p_{i-1}) q_{i-1} + prev_i, attention = p q, row by row."""
    out = np.zeros_like(p)
    for b in range(p.shape[0]):
        q = 0.0
        for i in range(p.shape[1]):
            q = (1 - p[b, i - 1]) * q + previous[b, i] if i else previous[b, 0]
            out[b, i] = p[b, i] * q
    return out


def test_monotonic_attention_by_hand():
    # p = [.5, .5], attended row 0 before: stop at 0 with 1/2, else at 1 with 1/2 * 1/2
    for mode in ("recursive", "parallel"):
        out = _run(seq2seq.monotonic_attention(tf.constant([[0.5, 0.5]], tf.float64),
                                               tf.constant([[1.0, 0.0]], tf.float64), mode))
        np.testing.assert_allclose(out, [[0.5, 0.25]], rtol=1e-12)


@pytest.mark.parametrize("mode", ["recursive", "parallel"])
def test_monotonic_attention_is_the_recurrence(mode):
    rng = np.random.RandomState(0)
    p = rng.uniform(0.05, 0.95, (3, 7))
    previous = rng.dirichlet(np.ones(7), 3)
    out = _run(seq2seq.monotonic_attention(tf.constant(p), tf.constant(previous), mode))
    np.testing.assert_allclose(out, _recurrence(p, previous), rtol=1e-9, atol=1e-15)


def test_hard_monotonic_attention_stops_at_the_first_choice_from_the_last_row():
    p = np.array([[0, 1, 0, 1, 1], [1, 0, 0, 0, 1], [0, 0, 0, 0, 0]], np.float64)
    previous = np.eye(5)[[2, 0, 1]]
    out = _run(seq2seq.monotonic_attention(tf.constant(p), tf.constant(previous), "hard"))
    np.testing.assert_array_equal(out, np.eye(5)[[3, 0]].tolist() + [[0] * 5])
    with pytest.raises(ValueError, match="mode must be"):
        seq2seq.monotonic_attention(tf.constant(p), tf.constant(previous), "soft")


def test_parallel_monotonic_attention_gradient_matches_finite_differences():
    rng = np.random.RandomState(1)
    p0, previous = rng.uniform(0.1, 0.9, (2, 5)), rng.dirichlet(np.ones(5), 2)
    weights = rng.uniform(0.5, 1.5, (2, 5))
    p = tf.placeholder(tf.float64, [2, 5])
    loss = tf.reduce_sum(weights * seq2seq.monotonic_attention(p, tf.constant(previous),
                                                               "parallel"))
    grad = tf.gradients(loss, p)[0]
    with tf.Session() as sess:
        analytic = sess.run(grad, {p: p0})
        numeric = numeric_grad(lambda v: sess.run(loss, {p: v}), p0)
    np.testing.assert_allclose(analytic, numeric, rtol=1e-6, atol=1e-9)


B, M, DM, H = 2, 5, 3, 4
LENGTHS = [5, 3]


@pytest.mark.parametrize("kind", ["bahdanau", "luong"])
def test_monotonic_mechanisms_step_is_their_formula(kind):
    rng = np.random.RandomState(2)
    memory, x = rng.randn(B, M, DM), rng.randn(B, 2)
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    if kind == "bahdanau":
        mechanism = seq2seq.BahdanauMonotonicAttention(H, tf.constant(memory), LENGTHS,
                                                       normalize=True, score_bias_init=-0.5)
    else:
        mechanism = seq2seq.LuongMonotonicAttention(H, tf.constant(memory), LENGTHS,
                                                    scale=True, score_bias_init=-0.5)
    wrapper = seq2seq.AttentionWrapper(cell, mechanism)
    state = wrapper.zero_state(B, tf.float64)
    out, next_state = wrapper(tf.constant(x), state)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        initial, alignments, attention = sess.run(
            [state.alignments, next_state.alignments, out])
        values = {"_".join(v.op.name.split("/")[-2:]): sess.run(v)
                  for v in tf.global_variables()}
    np.testing.assert_array_equal(initial, np.eye(M)[[0, 0]])
    mask = np.arange(M)[None, :] < np.array(LENGTHS)[:, None]
    mem = memory * mask[:, :, None]
    keys = mem @ values["memory_layer_kernel"]
    h = np.tanh(np.concatenate([x, np.zeros([B, DM]), np.zeros([B, H])], 1)
                @ values["basic_rnn_cell_kernel"] + values["basic_rnn_cell_bias"])
    if kind == "bahdanau":
        v, g, b = (values["bahdanau_monotonic_attention_attention_" + k] for k in "vgb")
        q = h @ values["query_layer_kernel"]
        score = (g * v / np.sqrt((v ** 2).sum()) * np.tanh(keys + q[:, None] + b)).sum(2)
    else:
        score = values["luong_monotonic_attention_attention_g"] * np.einsum("bu,bmu->bm", h, keys)
    assert values[f"{kind}_monotonic_attention_attention_score_bias"] == -0.5
    p = 1 / (1 + np.exp(-np.where(mask, score - 0.5, -np.inf)))
    # from row 0: stop at row i with p_i times the chance of passing every row before it
    expected = p * np.concatenate([np.ones([B, 1]), np.cumprod(1 - p, 1)[:, :-1]], 1)
    np.testing.assert_allclose(alignments, expected, rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(attention, np.einsum("bm,bmd->bd", expected, mem), rtol=1e-6,
                               atol=1e-12)


@pytest.mark.parametrize("mechanism, options, names", [
    (seq2seq.BahdanauMonotonicAttention, {"normalize": True},
     ["bahdanau_monotonic_attention/" + n for n in (
         "query_layer/kernel", "attention_v", "attention_g", "attention_b",
         "attention_score_bias")]),
    (seq2seq.LuongMonotonicAttention, {"scale": True},
     ["luong_monotonic_attention/attention_g", "luong_monotonic_attention/attention_score_bias"]),
    (seq2seq.BahdanauAttention, {"normalize": True},
     ["bahdanau_attention/" + n for n in (
         "query_layer/kernel", "attention_v", "attention_g", "attention_b")]),
    (seq2seq.LuongAttention, {"scale": True}, ["luong_attention/attention_g"]),
])
def test_mechanisms_variables_are_named_as_tf_names_them(mechanism, options, names):
    """TF 1.15's mechanisms make the query layer and their variables in a scope of their own
    (``bahdanau_monotonic_attention``...) inside the wrapper's, the memory layer outside it:
    the names TF1 programs' checkpoints hold. Two steps of dynamic_rnn make them once."""
    memory = tf.constant(np.ones((B, M, H)))
    wrapper = seq2seq.AttentionWrapper(tf.nn.rnn_cell.BasicRNNCell(H),
                                       mechanism(H, memory, **options))
    tf.nn.dynamic_rnn(wrapper, tf.constant(np.ones((B, 2, H))), dtype=tf.float64)
    inside = "rnn/attention_wrapper/"
    assert [v.op.name for v in tf.global_variables()] == [
        "memory_layer/kernel", inside + "basic_rnn_cell/kernel",
        inside + "basic_rnn_cell/bias"] + [inside + n for n in names]
