"""A convolution's activation chains run as one step (runtime/chain_fusion.py, the compiled
loops of ops/activation_chains.py): the bias add, relu and 2x2 max pool forward, and the pool's
gradient, relu's gradient and the bias's sum, give the unfused ops' numpy bits (NaN, infinities,
signed zeros, ties in a window), float32 and float64; the chains form through a graph's named
Identity nodes; where a chain's pieces do not fit (a fetched intermediate, a 3x3 pool, an odd
image), the ops run as they are."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf
from engine.ops import activation_chains, windows_compiled
from engine.runtime import chain_fusion

pytest.importorskip("numba")

LOOPS = ("_BIAS_RELU", "_BIAS_RELU_POOL", "_POOL_RELU_GRAD", "_RELU_GRAD_SUM")


def _inputs(dtype, shape):
    """An image with NaN, infinities, signed zeros and tied maxima in some 2x2 windows."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(shape).astype(dtype)
    x[0, 0, 0, :3] = [np.nan, np.inf, -np.inf]
    x[1, 2, 2, :] = -0.0
    x[2, :2, :2, 1] = 1.5  # a window of four equal maxima
    x[3, 0, 1, 2] = x[3, 0, 0, 2] = 2.0  # two
    x[4, :2, :2, :] = -3.0  # all negative: relu's zeros tie
    bias = rng.standard_normal(shape[-1]).astype(dtype)
    bias[0] = -0.0
    return x, bias


def _graph(dtype, shape, pool="2x2", fetch_pre=False):
    """relu(x + b), max-pooled, a weighted sum as the loss and its gradients; the fetches."""
    x = tf.placeholder(dtype, shape)
    b = tf.placeholder(dtype, [shape[-1]])
    seed = tf.placeholder(dtype, None)
    pre = x + b
    r = tf.nn.relu(pre)
    h = tf.identity(r, name="h")  # a graph's named node, as the runner makes
    if pool == "2x2":
        top = tf.nn.max_pool(h, [1, 2, 2, 1], [1, 2, 2, 1], "VALID")
    elif pool == "3x3":
        top = tf.nn.max_pool(h, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    else:
        top = h
    loss = tf.reduce_sum(top * seed)
    dx, db = tf.gradients(loss, [x, b])
    fetches = [r, top, dx, db] + ([pre] if fetch_pre else [])
    return (x, b, seed), fetches, top


def _run(dtype, shape, monkeypatch, chains, pool="2x2", fetch_pre=False, threads=1):
    """The fetches' values with the chains fused (their loops compiled at once) or not (every
    op on its numpy code), in a session of ``threads`` intra-op threads."""
    monkeypatch.setenv("GRADPIPE_CHAINS", "1" if chains else "0")
    monkeypatch.setattr(windows_compiled, "WARM_RUNS", 10 ** 9)
    for name in LOOPS:
        monkeypatch.setattr(getattr(activation_chains, name), "after", 0)
    x_val, b_val = _inputs(dtype, shape)
    with tf.Graph().as_default():
        feeds, fetches, top = _graph(dtype, shape, pool, fetch_pre)
        rng = np.random.default_rng(5)
        seed_val = rng.standard_normal(top.shape.as_list()).astype(dtype)
        seed_val[0, 0, 0, 0] = -0.0
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        with tf.Session(config=config) as sess:
            return sess.run(fetches, dict(zip(feeds, (x_val, b_val, seed_val))))


def _same_bits(a, b):
    assert a.shape == b.shape and a.dtype == b.dtype
    nan = np.isnan(a)
    np.testing.assert_array_equal(nan, np.isnan(b))  # NaN payloads may differ, as numpy's loops
    np.testing.assert_array_equal(a[~nan].view(np.uint8), b[~nan].view(np.uint8))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("pool", ["2x2", "none"])
def test_fused_chains_give_the_unfused_bits(dtype, pool, monkeypatch):
    shape = (64, 8, 6, 16)  # above MIN_ELEMENTS
    expected = _run(dtype, shape, monkeypatch, chains=False, pool=pool)
    loops = [getattr(activation_chains, name) for name in LOOPS]
    for loop in loops:
        monkeypatch.setattr(loop, "runs", 0)
    got = _run(dtype, shape, monkeypatch, chains=True, pool=pool)
    ran = [loop.runs > 0 and bool(loop.compiled) for loop in loops]
    assert ran == ([False, True, True, False] if pool == "2x2" else [True, False, False, True])
    for e, g in zip(expected, got):
        _same_bits(e, g)


@pytest.mark.parametrize("pool", ["2x2", "none"])
def test_two_threads_cut_the_chains_by_batch_items(pool, monkeypatch):
    """At two intra-op threads a large image's chain loop is cut by batch items across the
    workers: the images (relu's, the pool's, the input gradient) keep the unfused ops' one-thread
    bits; the bias gradient is the parts' sums added in part order: within float32 rounding of
    one thread's, and the same at every run."""
    monkeypatch.setattr(activation_chains, "SPLIT_MIN", 1024)
    shape = (64, 8, 6, 16)
    expected = _run(np.float32, shape, monkeypatch, chains=False, pool=pool)
    loops = [getattr(activation_chains, name) for name in LOOPS]
    for loop in loops:
        monkeypatch.setattr(loop, "runs", 0)
    calls = []
    real = activation_chains.workers.run_parts
    monkeypatch.setattr(activation_chains.workers, "run_parts",
                        lambda fn, parts, count: calls.append(len(parts)) or real(fn, parts, count))
    runs = [_run(np.float32, shape, monkeypatch, chains=True, pool=pool, threads=2)
            for _ in range(2)]
    assert calls and all(n == 4 for n in calls)  # two parts per thread, 16 items each
    for got in runs:
        for e, g in zip(expected[:3], got[:3]):
            _same_bits(e, g)
        finite = np.isfinite(expected[3])
        np.testing.assert_array_equal(finite, np.isfinite(got[3]))
        np.testing.assert_allclose(got[3][finite], expected[3][finite], rtol=1e-5, atol=1e-4)
    _same_bits(runs[0][3], runs[1][3])


@pytest.mark.parametrize("case", [dict(pool="3x3"), dict(fetch_pre=True),
                                  dict(shape=(64, 7, 6, 16)), dict(shape=(5, 8, 6, 16))])
def test_chains_that_do_not_fit_keep_the_values(case, monkeypatch):
    shape = case.pop("shape", (64, 8, 6, 16))
    expected = _run(np.float32, shape, monkeypatch, chains=False, **case)
    got = _run(np.float32, shape, monkeypatch, chains=True, **case)
    for e, g in zip(expected, got):
        _same_bits(e, g)


def test_the_plan_runs_a_chain_as_one_step(monkeypatch):
    """The forward's bias add, relu and pool are one step, so are the pool's gradient, relu's
    and the bias's sum; the named Identity between relu and the pool is gone."""
    with tf.Graph().as_default():
        feeds, fetches, _ = _graph(np.float32, (64, 8, 6, 16))
        with tf.Session() as sess:
            monkeypatch.setenv("GRADPIPE_CHAINS", "1")
            fused = _op_types(sess, feeds, fetches[1:])
            monkeypatch.setenv("GRADPIPE_CHAINS", "0")
            sess._plans.clear()
            plain = _op_types(sess, feeds, fetches[1:])
    assert {"AddV2", "Relu", "MaxPool", "MaxPoolGrad", "ReluGrad", "Identity"} <= set(plain)
    assert not {"AddV2", "Relu", "MaxPoolGrad", "ReluGrad", "Identity"} & set(fused)
    assert len(plain) - len(fused) == 5


def _op_types(sess, feeds, fetches):
    return [step[3].type for step in sess.plan(fetches, feeds).steps]


def test_no_chains_registered_leaves_the_steps(monkeypatch):
    monkeypatch.setattr(chain_fusion, "CHAINS", {})
    steps = [object()]
    assert chain_fusion.fuse_chains(steps, set(), set()) is steps
