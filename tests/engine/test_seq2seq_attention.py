"""tf.contrib.seq2seq.AttentionWrapper with LuongAttention and BahdanauAttention against the
formulas of TF 1.15's attention_wrapper.py replayed in numpy with the variables' values
(outputs, alignments, their history, the final state), gradients against finite differences,
and BeamSearchDecoder over an attention cell: one beam decodes as the greedy decoder."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from tests.engine.numeric import numeric_grad

seq2seq = tf.contrib.seq2seq
pytestmark = pytest.mark.usefixtures("fresh_default_graph")

B, T, D, H, M, DM, A = 2, 3, 3, 4, 5, 4, 3  # batch, steps, input, cell, memory steps/depth, layer
MEMORY_LENGTHS = [5, 3]


def _softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _build(kind, memory, inputs, **kw):
    cell = tf.nn.rnn_cell.BasicRNNCell(H)
    if kind == "luong":
        mechanism = seq2seq.LuongAttention(H, memory, MEMORY_LENGTHS, scale=True)
    else:
        mechanism = seq2seq.BahdanauAttention(H, memory, MEMORY_LENGTHS, normalize=True)
    wrapper = seq2seq.AttentionWrapper(cell, mechanism, attention_layer_size=A,
                                       alignment_history=True, **kw)
    helper = seq2seq.TrainingHelper(inputs, [T] * B)
    decoder = seq2seq.BasicDecoder(wrapper, helper, wrapper.zero_state(B, tf.float64))
    out, state, _ = seq2seq.dynamic_decode(decoder)
    return cell, mechanism, wrapper, out, state


def _replay(kind, memory, inputs, values):
    """The wrapper's steps in numpy (TF 1.15's formulas)."""
    mask = np.arange(M)[None, :] < np.array(MEMORY_LENGTHS)[:, None]
    mem = memory * mask[:, :, None]
    keys = mem @ values["memory_layer"]
    h = np.zeros([B, H])
    attention = np.zeros([B, A])
    outputs, history = [], []
    for t in range(T):
        x = np.concatenate([inputs[:, t], attention], 1)
        h = np.tanh(np.concatenate([x, h], 1) @ values["cell_kernel"] + values["cell_bias"])
        if kind == "luong":
            score = values["g"] * np.einsum("bu,bmu->bm", h, keys)
        else:
            v, g, b = values["v"], values["g"], values["b"]
            q = h @ values["query_layer"]
            score = (g * v / np.sqrt((v ** 2).sum()) * np.tanh(keys + q[:, None] + b)).sum(2)
        alignments = _softmax(np.where(mask, score, -np.inf))
        context = np.einsum("bm,bmd->bd", alignments, mem)
        attention = np.concatenate([h, context], 1) @ values["attention_layer"]
        outputs.append(attention)
        history.append(alignments)
    return np.stack(outputs, 1), np.stack(history), h


def _values(kind, cell, mechanism, wrapper, sess):
    names = {"cell_kernel": cell.kernel, "cell_bias": cell.bias,
             "memory_layer": mechanism.memory_layer.kernel,
             "attention_layer": wrapper._attention_layers[0].kernel}
    if kind == "luong":
        names["g"] = mechanism._g
    else:
        names.update(v=mechanism._v[0], g=mechanism._v[1], b=mechanism._v[2],
                     query_layer=mechanism.query_layer.kernel)
    return sess.run(names)


@pytest.mark.parametrize("kind", ["luong", "bahdanau"])
def test_attention_wrapper_steps_are_tfs_formulas(kind):
    rng = np.random.RandomState(0)
    memory_np, inputs_np = rng.randn(B, M, DM), rng.randn(B, T, D)
    cell, mechanism, wrapper, out, state = _build(kind, tf.constant(memory_np),
                                                  tf.constant(inputs_np))
    assert isinstance(state, seq2seq.AttentionWrapperState)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        if kind == "luong":
            sess.run(mechanism._g.assign(1.7))
        else:
            sess.run([mechanism._v[1].assign(0.8), mechanism._v[2].assign([0.1, -0.2, 0.3, 0])])
        got, history, final = sess.run([out.rnn_output, state.alignment_history.stack(),
                                        state._replace(alignment_history=())])
        values = _values(kind, cell, mechanism, wrapper, sess)
    outputs, ref_history, h = _replay(kind, memory_np, inputs_np, values)
    np.testing.assert_allclose(got, outputs, rtol=1e-10)
    np.testing.assert_allclose(history, ref_history, rtol=1e-10, atol=1e-300)
    assert (history[:, 1, 3:] == 0).all()  # the masked memory rows get no weight
    np.testing.assert_allclose(final.cell_state, h, rtol=1e-10)
    np.testing.assert_allclose(final.attention, outputs[:, -1], rtol=1e-10)
    np.testing.assert_allclose(final.alignments, ref_history[-1], rtol=1e-10, atol=1e-300)
    assert final.time == T


@pytest.mark.parametrize("kind", ["luong", "bahdanau"])
def test_attention_gradients_match_finite_differences(kind):
    rng = np.random.RandomState(1)
    memory_np, inputs_np = rng.randn(B, M, DM), rng.randn(B, T, D)
    memory = tf.placeholder(tf.float64, [B, M, DM])
    inputs = tf.placeholder(tf.float64, [B, T, D])
    _, mechanism, _, out, _ = _build(kind, memory, inputs)
    loss = tf.reduce_sum(tf.sin(out.rnn_output))
    grads = tf.gradients(loss, [memory, inputs])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        feed = {memory: memory_np, inputs: inputs_np}
        g_memory, g_inputs = sess.run(grads, feed)
        f_memory = numeric_grad(lambda m: sess.run(loss, {memory: m, inputs: inputs_np}),
                                memory_np)
        f_inputs = numeric_grad(lambda x: sess.run(loss, {memory: memory_np, inputs: x}),
                                inputs_np)
    np.testing.assert_allclose(g_memory, f_memory, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g_inputs, f_inputs, rtol=1e-6, atol=1e-8)
    assert (g_memory[1, 3:] == 0).all()  # rows past the length reach nothing


def test_one_beam_over_an_attention_cell_decodes_as_the_greedy_decoder():
    rng = np.random.RandomState(3)
    vocab, beam = 6, 1
    memory = tf.constant(rng.randn(B, M, DM))
    embedding = tf.constant(rng.randn(vocab, D))
    cell = tf.nn.rnn_cell.GRUCell(H)
    proj = tf.layers.Dense(vocab, kernel_initializer=tf.constant_initializer(
        rng.randn(A, vocab) * 3))
    mechanism = seq2seq.BahdanauAttention(H, memory, MEMORY_LENGTHS)
    wrapper = seq2seq.AttentionWrapper(cell, mechanism, attention_layer_size=A)
    start = tf.fill([B], 0)
    greedy = seq2seq.BasicDecoder(wrapper, seq2seq.GreedyEmbeddingHelper(embedding, start, 1),
                                  wrapper.zero_state(B, tf.float64), proj)
    g_out, _, g_len = seq2seq.dynamic_decode(greedy, maximum_iterations=7)
    beams = seq2seq.BeamSearchDecoder(wrapper, embedding, start, 1,
                                      wrapper.zero_state(B * beam, tf.float64), beam, proj)
    b_out, b_state, b_len = seq2seq.dynamic_decode(beams, maximum_iterations=7)
    ids, lens, beam_ids, beam_lens = _run([g_out.sample_id, g_len, b_out.predicted_ids, b_len])
    np.testing.assert_array_equal(beam_lens[:, 0], lens)
    for b in range(B):
        np.testing.assert_array_equal(beam_ids[b, :lens[b], 0], ids[b, :lens[b]])


def test_beam_search_over_tiled_attention_states_runs_with_tfs_shapes():
    rng = np.random.RandomState(5)
    vocab, beam = 7, 3
    memory = seq2seq.tile_batch(tf.constant(rng.randn(B, M, DM)), beam)
    lengths = seq2seq.tile_batch(tf.constant(MEMORY_LENGTHS), beam)
    encoder_state = seq2seq.tile_batch(tf.constant(rng.randn(B, H)), beam)
    cell = tf.nn.rnn_cell.GRUCell(H)
    wrapper = seq2seq.AttentionWrapper(cell, seq2seq.LuongAttention(H, memory, lengths),
                                       attention_layer_size=A)
    state = wrapper.zero_state(B * beam, tf.float64).clone(cell_state=encoder_state)
    decoder = seq2seq.BeamSearchDecoder(wrapper, tf.constant(rng.randn(vocab, D)),
                                        tf.fill([B], 0), vocab - 1, state, beam,
                                        tf.layers.Dense(vocab), length_penalty_weight=0.6,
                                        coverage_penalty_weight=0.3)
    out, final, lengths = seq2seq.dynamic_decode(decoder, maximum_iterations=5)
    # TF 1.15: the batch from constant_value(size(start_tokens)), known here
    assert out.predicted_ids.shape.as_list() == [B, None, beam]
    ids, scores, lens, alignments = _run([out.predicted_ids,
                                          out.beam_search_decoder_output.scores, lengths,
                                          final.cell_state.alignments])
    assert ids.shape == scores.shape and ids.shape[0] == B and ids.shape[2] == beam
    assert alignments.shape == (B, beam, M) and (lens <= 5).all()
    assert (np.diff(scores[:, -1], axis=1) <= 0).all()  # beams sorted best first


def _run(fetches):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches)


def test_beam_search_reorders_the_alignment_history_along_each_beams_path():
    tf.set_random_seed(1)  # the cell's weights: some draws leave every beam in place (seed 9 does)
    rng = np.random.RandomState(7)
    vocab, beam = 6, 3
    memory = seq2seq.tile_batch(tf.constant(rng.randn(B, M, DM)), beam)
    lengths = seq2seq.tile_batch(tf.constant(MEMORY_LENGTHS), beam)
    embedding = tf.constant(rng.randn(vocab, D))
    cell = tf.nn.rnn_cell.GRUCell(H)
    mechanism = seq2seq.LuongAttention(H, memory, lengths)
    proj = tf.layers.Dense(vocab, kernel_initializer=tf.constant_initializer(
        rng.randn(A, vocab) * 2))
    wrapper = seq2seq.AttentionWrapper(cell, mechanism, attention_layer_size=A,
                                       alignment_history=True)
    finals = []
    for reorder in (True, False):  # the same weights decoded twice
        decoder = seq2seq.BeamSearchDecoder(
            wrapper, embedding, tf.fill([B], 0), 1, wrapper.zero_state(B * beam, tf.float64),
            beam, proj, reorder_tensor_arrays=reorder)
        out, state, lens = seq2seq.dynamic_decode(decoder, maximum_iterations=5)
        finals.append((state.cell_state.alignment_history.stack(),
                       out.beam_search_decoder_output.parent_ids, lens))
    (ordered, parents, lens), (raw, _, _) = _run(finals)
    raw = raw.reshape(raw.shape[0], B, beam, M)
    ordered = ordered.reshape(raw.shape)
    parents = parents.transpose(1, 0, 2)  # [time, batch, beam]
    assert (parents[1:] != np.arange(beam)).any()  # the beams did move: a reordering to check
    for b in range(B):
        longest = lens[b].max()
        for k in range(beam):
            # TF's gather_tree_from_array: the beam's ancestors read back from the entry's
            # last step; past the beam's own length, the beam itself
            path, parent = [0] * longest, k
            for t in range(longest - 1, -1, -1):
                path[t] = parent
                parent = parents[t, b, parent]
            for t in range(raw.shape[0]):
                source = path[t] if t < lens[b, k] else k
                np.testing.assert_array_equal(ordered[t, b, k], raw[t, b, source])
