"""The generated straight-line plans (engine/runtime/codegen.py) and make_callable's feed fast path give
exactly what the plain step loop gives (GRADPIPE_CODEGEN=0), including errors and fetch copies."""

import numpy as np
import pytest

import engine as tf
from engine.framework.errors import InvalidArgumentError
from engine.runtime import codegen


def _sgd_scalar():
    w = tf.Variable(0.5)
    x, y = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
    loss = tf.square(w * x - y)
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return [loss, train, w], [x, y], lambda rng: [2.0, 3.0]


def _mlp(optimizer):
    def build():
        rng = np.random.default_rng(1)
        x = tf.placeholder(tf.float32, [None, 5])
        y = tf.placeholder(tf.float32, [None, 3])
        w1 = tf.Variable(rng.standard_normal((5, 8)).astype(np.float32))
        b1 = tf.Variable(np.zeros(8, np.float32))
        w2 = tf.Variable(rng.standard_normal((8, 3)).astype(np.float32))
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        logits = tf.matmul(h, w2)
        loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
        grads = tf.gradients(loss, [w1, b1, w2])
        clipped, norm = tf.clip_by_global_norm(grads, 0.5)
        train = optimizer().apply_gradients(zip(clipped, [w1, b1, w2]))

        def feeds(r):
            return [r.standard_normal((4, 5)).astype(np.float32),
                    np.eye(3, dtype=np.float32)[r.integers(0, 3, 4)]]

        return [loss, norm, train, w1, b1, w2], [x, y], feeds

    return build


def _assigns_and_multi_output():
    v = tf.Variable(np.arange(6, dtype=np.float32))
    x = tf.placeholder(tf.float32, [6])
    a, b, c = tf.split(x * 2.0 + 1.0, 3)
    bumped = tf.assign_add(v, x)
    u0, u1 = tf.unstack(tf.reshape(bumped, [2, 3]))
    total = tf.reduce_sum(a) + tf.reduce_sum(c) * tf.reduce_sum(u1)
    return [a, b, total, u0, bumped], [x], lambda r: [r.standard_normal(6).astype(np.float32)]


def _fused_chain():
    a, b = tf.Variable(np.float32(0.7)), tf.Variable(np.float32(1.3))
    x, y = tf.placeholder(tf.float32, [100]), tf.placeholder(tf.float32, [100])
    pred = a * tf.tanh(b * x - 0.2) + 0.1 * x * x
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    return [loss, pred, train], [x, y], lambda r: [r.standard_normal(100).astype(np.float32),
                                                   r.standard_normal(100).astype(np.float32)]


GRAPHS = {
    "sgd_scalar": _sgd_scalar,
    "mlp_adam_clip": _mlp(lambda: tf.train.AdamOptimizer(0.01)),
    "mlp_momentum": _mlp(lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True)),
    "mlp_rmsprop": _mlp(lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5)),
    "assigns_multi_output": _assigns_and_multi_output,
    "fused_chain": _fused_chain,
}


def _trajectory(build, monkeypatch, codegen_on, via_callable, steps=5):
    monkeypatch.setenv("GRADPIPE_CODEGEN", "1" if codegen_on else "0")
    g = tf.Graph()
    with g.as_default():
        tf.set_random_seed(0)
        fetches, placeholders, make_feeds = build()
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
    rng = np.random.default_rng(7)
    run = sess.make_callable(fetches, placeholders) if via_callable else None
    plan = sess.plan(fetches, placeholders)
    out = []
    for _ in range(steps):
        feeds = make_feeds(rng)
        if via_callable:
            out.append(run(*feeds))
        else:
            out.append(sess.run(fetches, dict(zip(placeholders, feeds))))
    return out, plan


@pytest.mark.parametrize("via_callable", [True, False])
@pytest.mark.parametrize("name", list(GRAPHS))
def test_generated_plan_matches_plain_loop(name, via_callable, monkeypatch):
    plain, plain_plan = _trajectory(GRAPHS[name], monkeypatch, False, via_callable)
    fast, fast_plan = _trajectory(GRAPHS[name], monkeypatch, True, via_callable)
    assert plain_plan._run == plain_plan.run_plain
    assert hasattr(fast_plan._run, "source")  # the generated function did run
    for step_plain, step_fast in zip(plain, fast):
        assert len(step_plain) == len(step_fast)
        for p, f in zip(step_plain, step_fast):
            if p is None:
                assert f is None
                continue
            assert type(p) is type(f)
            assert np.asarray(p).dtype == np.asarray(f).dtype
            np.testing.assert_array_equal(p, f)


def test_fetched_values_stay_valid_after_later_runs():
    g = tf.Graph()
    with g.as_default():
        v = tf.Variable(np.zeros(3, np.float32))
        x = tf.placeholder(tf.float32, [3])
        bumped = tf.assign_add(v, x)
        doubled = bumped * 2.0
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
    run = sess.make_callable([bumped, v, doubled, x], [x])
    fed = np.ones(3, np.float32)
    first = run(fed)
    run(fed)
    np.testing.assert_array_equal(first[0], [1, 1, 1])
    np.testing.assert_array_equal(first[1], [1, 1, 1])
    np.testing.assert_array_equal(first[2], [2, 2, 2])
    assert first[3] is not fed  # a fed fetch is a copy, as in TF
    fed[:] = 5
    np.testing.assert_array_equal(first[3], [1, 1, 1])
    np.testing.assert_array_equal(sess.run(v), [2, 2, 2])


def test_generated_plan_names_the_failing_op(monkeypatch):
    monkeypatch.setenv("GRADPIPE_CODEGEN", "1")
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [None, None])
        b = tf.placeholder(tf.float32, [None, None])
        c = tf.add(tf.matmul(a, b, name="mm"), 1.0)
        sess = tf.Session()
    run = sess.make_callable(c, [a, b])
    np.testing.assert_array_equal(run(np.ones((2, 3), np.float32), np.ones((3, 1), np.float32)),
                                  np.full((2, 1), 4.0, np.float32))
    with pytest.raises(InvalidArgumentError, match="mm"):
        run(np.ones((2, 3), np.float32), np.ones((2, 3), np.float32))


def test_generated_code_is_straight_line(monkeypatch):
    monkeypatch.setenv("GRADPIPE_CODEGEN", "1")
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.square(x) + 1.0
        sess = tf.Session()
    plan = sess.plan([y], [x])
    source = plan._run.source
    assert "for " not in source and "[vals" not in source
    assert sess.run(y, {x: 3.0}) == np.float32(10.0)


def test_plans_above_the_step_limit_keep_the_plain_loop(monkeypatch):
    monkeypatch.setenv("GRADPIPE_CODEGEN", "1")
    monkeypatch.setattr(codegen, "MAX_STEPS", 1)
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.square(x) + x
        sess = tf.Session()
    plan = sess.plan([y], [x])
    assert plan._run == plan.run_plain
    assert sess.run(y, {x: 2.0}) == np.float32(6.0)


def test_callable_feeds_convert_and_check_as_session_run():
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 2])
        s = tf.placeholder(tf.float32, [])
        y = x * s
        sess = tf.Session()
    run = sess.make_callable(y, [x, s])
    out = run(np.ones((1, 2), np.float64), 2.0)  # float64 converted like session.run does
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, [[2.0, 2.0]])
    np.testing.assert_array_equal(run([[1, 2]], np.float32(3)), [[3.0, 6.0]])
    with pytest.raises(ValueError, match="shape"):
        run(np.ones((1, 3), np.float32), 1.0)
    with pytest.raises(ValueError, match="shape"):
        run(np.ones(2, np.float32), 1.0)
    with pytest.raises(ValueError, match="shape"):
        run(np.ones((1, 2), np.float32), np.ones(2, np.float32))


# -- in-place optimizer kernels: equal to the formulas they replaced (same float32 operations in
# the same order, so equal exactly), whole or in blocks ----------------------------------------

@pytest.fixture(autouse=True)
def small_update_blocks(monkeypatch):
    """Blocks of 16K elements, split over the threads from 64K: the sizes below exercise both."""
    from engine.runtime import update_ops

    monkeypatch.setattr(update_ops, "BLOCK", 16_384)
    monkeypatch.setattr(update_ops, "PARALLEL_MIN", 65_536)


def _old_adam(var, m, v, grad, b1p, b2p, lr, b1, b2, eps):
    one = np.ones((), var.dtype)
    alpha = lr * np.sqrt(one - b2p) / (one - b1p)
    m += (grad - m) * (one - b1)
    v += (np.square(grad) - v) * (one - b2)
    var -= (m * alpha) / (np.sqrt(v) + eps)


def _old_momentum(var, accum, grad, lr, momentum, use_nesterov):
    accum *= momentum
    accum += grad
    if use_nesterov:
        var -= grad * lr + accum * momentum * lr
    else:
        var -= accum * lr


def _old_rmsprop(var, ms, mom, grad, lr, rho, momentum, eps):
    one = np.ones((), var.dtype)
    ms += (np.square(grad) - ms) * (one - rho)
    mom[...] = mom * momentum + (grad * lr) / np.sqrt(ms + eps)
    var -= mom


def _old_centered_rmsprop(var, mg, ms, mom, grad, lr, rho, momentum, eps):
    one = np.ones((), var.dtype)
    ms += (np.square(grad) - ms) * (one - rho)
    mg += (grad - mg) * (one - rho)
    mom[...] = mom * momentum + (grad * lr) / np.sqrt((ms - np.square(mg)) + eps)
    var -= mom


def _f32(*xs):
    return [np.asarray(x, np.float32) for x in xs]


KERNELS = {
    "adam": ("engine.train.adam", "_apply_adam", _old_adam, 3,
             _f32(0.9 ** 3, 0.999 ** 3, 0.01, 0.9, 0.999, 1e-8), {}),
    "momentum": ("engine.train.gradient_descent", "_apply_momentum", _old_momentum, 2,
                 _f32(0.1, 0.9), {"use_nesterov": False}),
    "nesterov": ("engine.train.gradient_descent", "_apply_momentum", _old_momentum, 2,
                 _f32(0.1, 0.9), {"use_nesterov": True}),
    "rmsprop": ("engine.train.rmsprop", "_apply_rms_prop", _old_rmsprop, 3,
                _f32(0.01, 0.9, 0.5, 1e-10), {}),
    "centered_rmsprop": ("engine.train.rmsprop", "_apply_centered_rms_prop",
                         _old_centered_rmsprop, 4, _f32(0.01, 0.9, 0.5, 1e-10), {}),
}


# 20_001 elements run in blocks, 70_001 in blocks split over the update threads
@pytest.mark.parametrize("shape", [(), (3, 4), (20_001,), (70_001,)])
@pytest.mark.parametrize("name", list(KERNELS))
def test_in_place_kernels_equal_the_previous_formulas(name, shape):
    import importlib

    from engine.runtime import update_ops

    module, attr, old, n_refs, hyper, static = KERNELS[name]
    kernel = getattr(importlib.import_module(module), attr)
    rng = np.random.default_rng(3)
    refs = [np.array(rng.random(shape) + 0.5, np.float32) for _ in range(n_refs)]
    expected = [r.copy() for r in refs]
    bufs = update_ops._scratch(object(), None, refs[0], 2)  # a state without a scratch cache
    for _ in range(3):
        grad = np.array(rng.standard_normal(shape), np.float32)
        with np.errstate(all="ignore"):  # centered RMSProp may take sqrt of a negative here
            old(*expected, grad, *hyper, **static)
            update_ops._run_kernel(kernel, refs, grad, hyper, static, bufs)
    for got, want in zip(refs, expected):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)


def test_update_kernels_allocate_their_scratch_once(monkeypatch):
    from engine.runtime import compiled, update_ops

    # the numpy kernel (with numba loaded by earlier tests, a warm compiled small Adam takes it)
    monkeypatch.setattr(compiled, "numba_loaded", lambda: False)

    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.ones(100_000, np.float32))
        x = tf.placeholder(tf.float32, [100_000])
        train = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w * x))
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
    view = sess._state.variables[w.op]
    sess.run(train, {x: np.ones(100_000, np.float32)})
    (bufs,) = sess._state.scratch.values()
    sess.run(train, {x: np.ones(100_000, np.float32)})
    (again,) = sess._state.scratch.values()
    assert again is bufs
    assert all(b.size <= update_ops.BLOCK and b.dtype == np.float32 for w in bufs for b in w)
    assert sess._state.variables[w.op] is view  # updated in place
    # Adam's first steps move each weight by about lr against the gradient's sign
    np.testing.assert_allclose(sess.run(w), np.full(100_000, 0.8, np.float32), rtol=1e-5)


def test_a_small_gradient_seed_is_folded_and_an_unfetched_loss_not_computed():
    """loss = (w x - y)^2; the training op alone needs the loss only for the shape of its
    gradient's seed (OnesLike), which is static: the seed is a constant, the loss is not run."""
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(0.5)
        x, y = tf.placeholder(tf.float32, []), tf.placeholder(tf.float32, [])
        loss = tf.square(w * x - y)
        train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        sess.run(train, {x: 2.0, y: 3.0})
        plan = sess.plan([train], [x, y])
        types = {t for s in plan.steps for t in _op_types(s)}
        assert not {"oneslike", "square"} & types
        # w <- w - lr * 2 (w x - y) x = 0.5 + 0.01 * 2 * 2 * 2
        assert sess.run(w) == np.float32(0.58)
        got_loss, _ = sess.run([loss, train], {x: 2.0, y: 3.0})
        assert got_loss == np.float32((0.58 * 2 - 3) ** 2)
        types = {t for s in sess.plan([loss, train], [x, y]).steps for t in _op_types(s)}
        assert "square" in types


def _op_types(step):
    """The op types a plan step runs, lower-cased (a fused kernel's numpy steps are ufuncs)."""
    fn, op = step[0], step[3]
    inner = getattr(fn, "numpy_steps", None) or ()
    return {op.type.lower()} | {getattr(f, "__name__", "").lower() for f, _ in inner}


# -- compiled one-pass update kernels (numba, the ``fast`` extra): bit-identical to numpy's ----

@pytest.mark.parametrize("scaled", [False, True])
@pytest.mark.parametrize("name", ["adam", "momentum", "nesterov", "rmsprop", "centered_rmsprop"])
def test_compiled_kernels_equal_the_numpy_kernels(name, scaled, monkeypatch):
    import importlib

    from engine.runtime import compiled, update_ops

    if compiled._kernel("adam") is None:
        pytest.skip("numba is not installed (the 'fast' extra)")
    module, attr, _, n_refs, hyper, static = KERNELS[name]
    kernel = getattr(importlib.import_module(module), attr)
    fast = {"adam": compiled.adam, "momentum": compiled.momentum, "nesterov": compiled.momentum,
            "rmsprop": compiled.rms_prop, "centered_rmsprop": compiled.centered_rms_prop}[name]
    rng = np.random.default_rng(4)
    n = 50_001
    refs = [np.array(rng.random(n) + 0.5, np.float32) for _ in range(n_refs)]
    expected = [r.copy() for r in refs]
    bufs = update_ops._scratch(object(), None, refs[0], 2)
    for _ in range(3):
        grad = np.array(rng.standard_normal(n) * 100, np.float32)
        grad[:3] = [np.inf, np.nan, 0.0]
        scale = np.float32(0.37) if scaled else None
        with np.errstate(all="ignore"):
            update_ops._run_kernel(kernel, expected, grad, hyper, static, bufs, scale)
            assert fast(refs, grad, scale, hyper, static)
    for got, want in zip(refs, expected):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got, want)


def test_without_numba_the_numpy_kernels_run(monkeypatch):
    from engine.runtime import compiled

    monkeypatch.setattr(compiled, "_compiled", {})
    monkeypatch.setenv("GRADPIPE_NUMBA", "0")
    assert compiled.adam([np.zeros(3, np.float32)] * 3, np.ones(3, np.float32), None,
                         _f32(0.9, 0.999, 0.1, 0.9, 0.999, 1e-8), {}) is False
    g = tf.Graph()
    with g.as_default():
        w = tf.Variable(np.ones(compiled.MIN_ELEMENTS, np.float32))
        train = tf.train.AdamOptimizer(0.1).minimize(tf.reduce_sum(w))
        sess = tf.Session()
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        np.testing.assert_allclose(sess.run(w), 0.9, rtol=1e-6)


def _small_adam_now(monkeypatch):
    """compiled.small_adam without its warm-up, and a list growing at each run of its loop;
    skips without numba."""
    from engine.framework import jit
    from engine.runtime import compiled

    if compiled._kernel("adam") is None:  # imports numba
        pytest.skip("numba is not installed (the 'fast' extra)")
    kernel, calls = jit.WarmKernel(compiled._small_adam_loop, 0), []
    monkeypatch.setattr(compiled, "_small_adam", lambda *a: calls.append(1) or kernel(*a))
    return compiled, calls


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_compiled_adam_equals_the_numpy_kernel(dtype, monkeypatch):
    """The small loop computes alpha and 1 - beta from the 0-d hyperparameters as _apply_adam
    does, then the same element operations: the same bits, NaN, infinities and zeros included."""
    from engine.runtime import update_ops
    from engine.train.adam import _apply_adam

    compiled, _ = _small_adam_now(monkeypatch)
    rng = np.random.default_rng(5)
    for n in (1, 33, 4480):
        refs = [np.array(rng.random(n) + 0.5, dtype) for _ in range(3)]
        expected = [r.copy() for r in refs]
        bufs = update_ops._scratch(object(), None, refs[0], 2)[0][:-1]
        for step in range(1, 4):
            hyper = [np.asarray(h, dtype) for h in (0.9 ** step, 0.999 ** step, 0.01, 0.9,
                                                    0.999, 1e-8)]
            grad = np.array(rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n), dtype)
            grad[:4] = [np.inf, np.nan, 0.0, -0.0][:n]
            with np.errstate(all="ignore"):
                _apply_adam(*expected, grad, *hyper, scratch=bufs)
                assert compiled.small_adam(refs, grad, hyper)
        for got, want in zip(refs, expected):
            np.testing.assert_array_equal(got, want)
    assert not compiled.small_adam(refs, grad, [*hyper[:5], np.float32(1e-8)])  # not 0-d arrays
    monkeypatch.setattr(compiled, "numba_loaded", lambda: False)
    assert not compiled.small_adam(refs, grad, hyper)  # never the reason numba is imported


def test_a_groups_small_adam_update_runs_compiled_with_the_same_bits(monkeypatch):
    """Two small variables updated as one flat Adam: the compiled loop (numba loaded, warm)
    moves them exactly as the numpy kernel."""
    compiled, calls = _small_adam_now(monkeypatch)

    def train(loaded):
        monkeypatch.setattr(compiled, "numba_loaded", lambda: loaded)
        g = tf.Graph()
        with g.as_default():
            w = tf.Variable(np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4))
            b = tf.Variable(np.float32([0.5, -0.25, 2.0, 1.0]))
            x = tf.placeholder(tf.float32, [5, 3])
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b))
            train = tf.train.AdamOptimizer(0.1).minimize(loss)
            sess = tf.Session()
            sess.run(tf.global_variables_initializer())
            rng = np.random.default_rng(6)
            for _ in range(5):
                sess.run(train, {x: rng.standard_normal((5, 3)).astype(np.float32)})
            return sess.run([w, b])

    fast = train(True)
    assert len(calls) == 5  # one flat update a step, compiled
    slow = train(False)
    assert len(calls) == 5
    for got, want in zip(fast, slow):
        np.testing.assert_array_equal(got, want)
