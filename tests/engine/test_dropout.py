"""Dropout against its definition: the kept fraction, the 1 / keep_prob scale, noise_shape,
seeding, the training switch; random ops whose parameters are tensors."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.ops import dropout_compiled
from engine.ops.dropout import _kept_from_bits, _mask_compiled, dropout

N = 200_000


def _binomial_bound(p, n=N):
    """Four standard deviations of a kept fraction: a fair mask fails about once in 16,000."""
    return 4 * np.sqrt(p * (1 - p) / n)


@pytest.mark.parametrize("kw", [{"keep_prob": 0.8}, {"rate": 0.2}])
def test_nn_dropout_keeps_a_fraction_and_scales_by_one_over_keep_prob(kw):
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        y = tf.nn.dropout(tf.ones([N], tf.float64), **kw)
        with tf.Session() as sess:
            v = sess.run(y)
    assert set(np.unique(v)) == {0.0, 1.25}
    assert abs((v != 0).mean() - 0.8) < _binomial_bound(0.8)


def test_keep_prob_as_a_fed_tensor():
    with tf.Graph().as_default():
        keep = tf.placeholder(tf.float32, [])
        y = tf.nn.dropout(tf.ones([N]), keep_prob=keep)
        with tf.Session() as sess:
            v = sess.run(y, {keep: 0.25})
            np.testing.assert_array_equal(sess.run(y, {keep: 1.0}), np.ones(N))
    np.testing.assert_allclose(np.unique(v), [0.0, 4.0])
    assert abs((v != 0).mean() - 0.25) < _binomial_bound(0.25)


def test_noise_shape_drops_whole_rows():
    with tf.Graph().as_default():
        y = tf.nn.dropout(tf.ones([1000, 7]), rate=0.5, noise_shape=[1000, 1])
        with tf.Session() as sess:
            v = sess.run(y)
    assert np.all((v == 0).all(axis=1) | (v == 2).all(axis=1))
    assert 0.4 < (v[:, 0] == 0).mean() < 0.6


def test_graph_and_op_seed_fix_the_mask():
    def masks(graph_seed, op_seed):
        with tf.Graph().as_default():
            tf.set_random_seed(graph_seed)
            y = tf.nn.dropout(tf.ones([64]), rate=0.5, seed=op_seed)
            with tf.Session() as sess:
                return sess.run(y), sess.run(y)

    first, second = masks(1, 7)
    assert not np.array_equal(first, second)  # a fresh mask at every run
    for a, b in zip(masks(1, 7), (first, second)):  # the same sequence in a new session
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(masks(1, 8)[0], first)
    assert not np.array_equal(masks(2, 7)[0], first)


def test_gradient_is_the_mask_over_keep_prob():
    with tf.Graph().as_default():
        x = tf.constant(np.linspace(1, 2, 1000))
        y = tf.nn.dropout(x, keep_prob=0.5)
        (g,) = tf.gradients(tf.reduce_sum(y * 3.0), [x])
        with tf.Session() as sess:
            yv, gv = sess.run([y, g])
    np.testing.assert_allclose(gv, np.where(yv != 0, 3.0 * 2.0, 0.0))


def test_switched_dropout_is_off_unless_the_learning_phase_is_fed_true():
    with tf.Graph().as_default():
        tf.set_random_seed(0)
        x = tf.ones([N])
        y = dropout(x, rate=0.5)
        phase = tf.keras.backend.learning_phase()
        assert phase is tf.keras.backend.learning_phase()  # one switch per graph
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(y), np.ones(N))
            v = sess.run(y, {phase: True})
    assert abs((v == 0).mean() - 0.5) < _binomial_bound(0.5)


def test_evaluation_steps_leave_the_random_stream_alone():
    """Training masks do not depend on how many evaluation runs happen between them."""
    def training_masks(evals_between):
        with tf.Graph().as_default():
            tf.set_random_seed(5)
            y = dropout(tf.ones([32]), rate=0.5)
            phase = tf.keras.backend.learning_phase()
            with tf.Session() as sess:
                out = []
                for _ in range(3):
                    out.append(sess.run(y, {phase: True}))
                    for _ in range(evals_between):
                        sess.run(y)
                return out

    for a, b in zip(training_masks(0), training_masks(2)):
        np.testing.assert_array_equal(a, b)


def test_training_argument_bool_and_tensor():
    with tf.Graph().as_default():
        x = tf.ones([1000])
        assert dropout(x, rate=0.5, training=False).op.type == "Identity"
        on = tf.placeholder(tf.bool, [])
        y = dropout(x, rate=0.5, training=on)
        with tf.Session() as sess:
            assert (sess.run(y, {on: True}) == 0).any()
            np.testing.assert_array_equal(sess.run(y, {on: False}), np.ones(1000))


def test_set_learning_phase_fixes_the_switch():
    with tf.Graph().as_default():
        tf.keras.backend.set_learning_phase(1)
        y = dropout(tf.ones([1000]), rate=0.5)
        with tf.Session() as sess:
            assert (sess.run(y) == 0).any()


@pytest.mark.parametrize(("kw", "message"), [
    ({"keep_prob": 0.0}, r"range \(0, 1\]"),
    ({"rate": 1.0}, r"range \[0, 1\)"),
    ({"rate": 0.5, "keep_prob": 0.5}, "exactly one"),
])
def test_bad_rates_are_refused_when_built(kw, message):
    with tf.Graph().as_default(), pytest.raises(ValueError, match=message):
        tf.nn.dropout(tf.ones([3]), **kw)


def test_a_fed_rate_out_of_range_fails_naming_the_op():
    with tf.Graph().as_default():
        rate = tf.placeholder(tf.float32, [])
        y = tf.nn.dropout(tf.ones([3]), rate=rate)
        with tf.Session() as sess, pytest.raises(tf.OpError, match=r"DropoutMask.*\[0, 1\)"):
            sess.run(y, {rate: 1.0})


def test_random_normal_with_tensor_parameters_runs_and_differentiates():
    """TF: random_normal(stddev=<Tensor>) is a unit normal times stddev plus mean."""
    with tf.Graph().as_default():
        tf.set_random_seed(2)
        stddev, mean = tf.Variable(3.0), tf.constant(1.0)
        z = tf.random_normal([N], mean=mean, stddev=stddev)
        u = tf.random_uniform([N], minval=mean, maxval=stddev)
        t = tf.truncated_normal([N], stddev=stddev)
        (g,) = tf.gradients(tf.reduce_sum(z), [stddev])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            zv, uv, tv = sess.run([z, u, t])
            assert sess.run(g) != 0
            init = tf.Variable(tf.random_normal([2, 2], stddev=stddev.initialized_value()))
            sess.run(init.initializer)
    assert abs(zv.mean() - 1.0) < 4 * 3 / np.sqrt(N) and abs(zv.std() - 3.0) < 0.05
    assert uv.min() >= 1.0 and uv.max() < 3.0 and abs(uv.mean() - 2.0) < 0.01
    assert np.abs(tv).max() <= 6.0


@pytest.mark.parametrize("rate", [0.5, 0.1, 0.3, 1 / 3, 0.7, 1e-9, 0.0, 0.99999994])
def test_mask_from_random_bits_is_numpys_uniform_compared_with_the_rate(rate):
    """The float32 mask's fast path reads PCG64's raw bits: the same kept elements as
    ``random(dtype=float32) >= rate``, and the stream left where that leaves it (odd counts
    and a buffered half take numpy's own path)."""
    ours, numpys = np.random.default_rng([3, 7]), np.random.default_rng([3, 7])
    for dims in [(64, 512), (3, 5), (4, 2), (7,), (2, 6)]:
        got = _kept_from_bits(ours, dims, rate)
        if got is None:
            got = ours.random(dims, dtype=np.float32) >= rate
        np.testing.assert_array_equal(got, numpys.random(dims, dtype=np.float32) >= rate)
    np.testing.assert_array_equal(ours.random(9, dtype=np.float32),
                                  numpys.random(9, dtype=np.float32))


@pytest.fixture
def compiled_masks(monkeypatch):
    """dropout_compiled's loop from the first mask on (compiled and checked in this process)."""
    pytest.importorskip("numba")
    monkeypatch.setattr(dropout_compiled, "WARM_RUNS", 0)
    monkeypatch.setattr(dropout_compiled, "_state", {})
    if dropout_compiled.mask_loop() is None:
        pytest.skip("the compiled mask loop is not used here")


@pytest.mark.parametrize("rate", [0.5, 0.1, 1 / 3, 0.7, 1e-9, 0.0, 0.99999994])
def test_compiled_mask_is_the_raw_bits_mask_and_leaves_the_stream_as_numpy(compiled_masks, rate):
    """The compiled PCG64 loop: the mask numpy's raw bits give (its first four outputs one by
    one, then four lanes, then the rest: sizes around those edges), and the generator's state
    afterwards, so that later draws of either kind agree."""
    ours, numpys = np.random.default_rng([3, 7]), np.random.default_rng([3, 7])
    scale = np.float32(1 / (1 - rate))
    for dims in [(64, 512), (4, 2), (2, 6), (0,), (2, 8), (14,), (16,), (18,), (1, 30)]:
        got = _mask_compiled(ours, dims, rate, scale)
        assert got is not None and got.shape == dims and got.dtype == np.float32
        want = np.multiply(numpys.random(dims, dtype=np.float32) >= rate, scale)
        np.testing.assert_array_equal(got, want)
    for key in ("state", "has_uint32"):  # (numpy keeps a stale used half in "uinteger")
        assert ours.bit_generator.state[key] == numpys.bit_generator.state[key]
    np.testing.assert_array_equal(ours.random(9, dtype=np.float32),
                                  numpys.random(9, dtype=np.float32))


def test_compiled_mask_declines_a_buffered_half_and_odd_counts(compiled_masks):
    rng = np.random.default_rng(1)
    rng.random(1, dtype=np.float32)  # leaves the high half of an output for the next draw
    before = rng.bit_generator.state
    assert _mask_compiled(rng, (8,), 0.5, np.float32(2)) is None
    assert _mask_compiled(np.random.default_rng(1), (7,), 0.5, np.float32(2)) is None
    assert rng.bit_generator.state == before


def test_session_masks_are_the_same_with_and_without_the_compiled_loop(monkeypatch):
    """A seeded graph's training masks over several runs: numpy's draws, then the compiled
    loop from the second run on (the switch inside one session changes no mask)."""
    pytest.importorskip("numba")

    def masks(warm_runs):
        monkeypatch.setattr(dropout_compiled, "WARM_RUNS", warm_runs)
        monkeypatch.setattr(dropout_compiled, "_state", {})
        with tf.Graph().as_default():
            tf.set_random_seed(4)
            y = tf.nn.dropout(tf.ones([16, 64]), rate=0.25)
            with tf.Session() as sess:
                return [sess.run(y) for _ in range(4)]

    numpys = masks(10**9)
    for a, b in zip(masks(1), numpys):
        np.testing.assert_array_equal(a, b)
    assert dropout_compiled._state.get("loop") is not None or \
        pytest.skip("the compiled mask loop is not used here")
