"""Every TF1 optimizer's sparse update (``_apply_sparse``) against TF's formulas.

The references below are written from TF's kernels as loops over the gradient's rows
(training_ops.cc SparseApply*, DeepRec's SparseApplyAdagradDecay, the Python _apply_sparse of
Adam, LazyAdam and AdamW), independently of the engine's kernels. Repeated indices are summed
first wherever TF's optimizer does (``_deduplicate_indexed_slices``); GradientDescent subtracts
each repeated row (scatter_sub). Runs in float64 so the comparisons are tight; hyperparameters
are exact in float32 (TF makes them float32 tensors, then casts them to the variable's dtype).
"""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

ROWS, COLS = 6, 3
IDS = [np.array([4, 1, 4]), np.array([0, 1]), np.array([5, 5, 5, 1])]
_rng = np.random.default_rng(5)
VALUES = [_rng.uniform(-1, 1, (len(i), COLS)) for i in IDS]
INIT = _rng.uniform(-1, 1, (ROWS, COLS))


def _dedup(ids, values):
    """Distinct ids in order of first occurrence, their rows summed (TF's dedup)."""
    order = list(dict.fromkeys(ids.tolist()))
    summed = np.zeros((len(order), values.shape[1]))
    for i, v in zip(ids, values):
        summed[order.index(i)] += v
    return order, summed


def _run_sparse(make_opt, slot_names=(), steps=3, global_step=False):
    """Apply the IDS/VALUES gradients as IndexedSlices for ``steps`` steps; return var, slots."""
    with tf.Graph().as_default():
        var = tf.Variable(INIT, name="W")
        gs = tf.train.get_or_create_global_step() if global_step else None
        opt = make_opt(gs) if global_step else make_opt()
        ids = tf.placeholder(tf.int32, [None])
        values = tf.placeholder(tf.float64, [None, COLS])
        grad = tf.IndexedSlices(values, ids, tf.constant([ROWS, COLS], tf.int64))
        train = opt.apply_gradients([(grad, var)], global_step=gs)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for k in range(steps):
                sess.run(train, {ids: IDS[k], values: VALUES[k]})
            return sess.run(var), [sess.run(opt.get_slot(var, s)) for s in slot_names]


def _per_row(update, state, dedup=True, steps=3):
    """Run ``update(state, row, g, step)`` for each row of each step's (deduplicated) gradient."""
    for k in range(steps):
        ids, values = _dedup(IDS[k], VALUES[k]) if dedup else (IDS[k], VALUES[k])
        for i, g in zip(ids, values):
            update(state, i, g, k + 1)
    return state


def test_gradient_descent_subtracts_every_repeated_row():
    var = _per_row(lambda s, i, g, t: s["var"].__setitem__(i, s["var"][i] - 0.25 * g),
                   {"var": INIT.copy()}, dedup=False)["var"]
    got, _ = _run_sparse(lambda: tf.train.GradientDescentOptimizer(0.25))
    np.testing.assert_allclose(got, var, rtol=1e-13)


@pytest.mark.parametrize("nesterov", [False, True])
def test_momentum_updates_the_rows_named(nesterov):
    lr, mu = 0.25, 0.875

    def update(s, i, g, t):  # SparseApplyMomentum
        s["accum"][i] = s["accum"][i] * mu + g
        if nesterov:
            s["var"][i] -= g * lr + s["accum"][i] * mu * lr
        else:
            s["var"][i] -= s["accum"][i] * lr

    ref = _per_row(update, {"var": INIT.copy(), "accum": np.zeros_like(INIT)})
    got, (accum,) = _run_sparse(lambda: tf.train.MomentumOptimizer(lr, mu, use_nesterov=nesterov),
                                ["momentum"])
    np.testing.assert_allclose(got, ref["var"], rtol=1e-13)
    np.testing.assert_allclose(accum, ref["accum"], rtol=1e-13)
    np.testing.assert_array_equal(got[[2, 3]], INIT[[2, 3]])  # never looked up


def test_adagrad_updates_the_rows_named():
    lr = 0.5

    def update(s, i, g, t):  # SparseApplyAdagrad
        s["accum"][i] += g * g
        s["var"][i] -= lr * g / np.sqrt(s["accum"][i])

    ref = _per_row(update, {"var": INIT.copy(), "accum": np.full_like(INIT, 0.125)})
    got, (accum,) = _run_sparse(lambda: tf.train.AdagradOptimizer(lr, 0.125), ["accumulator"])
    np.testing.assert_allclose(got, ref["var"], rtol=1e-13)
    np.testing.assert_allclose(accum, ref["accum"], rtol=1e-13)


def test_adagrad_decay_follows_deeprecs_sparse_kernel():
    """Decay step 2: steps t = 2, 3 (global_step + 1) are past the first boundary, so each row
    looked up at t >= 2 decays once, when first seen then; its count lives in element i of the
    flattened decay-power slot."""
    lr, rate, base = 0.5, 0.5, 0.125
    power = np.zeros(ROWS * COLS, np.int64)

    def update(s, i, g, t):
        if t // 2 > power[i]:
            s["accum"][i] = np.maximum(s["accum"][i] * rate, base)
            power[i] += 1
        s["accum"][i] += g * g
        s["var"][i] -= lr * g / np.sqrt(s["accum"][i])

    ref = _per_row(update, {"var": INIT.copy(), "accum": np.full_like(INIT, base)})
    got, (accum, got_power) = _run_sparse(
        lambda gs: tf.train.AdagradDecayOptimizer(lr, gs, base, accumulator_decay_step=2,
                                                  accumulator_decay_rate=rate),
        ["accumulator", "accumulator_decay_power"], global_step=True)
    np.testing.assert_allclose(got, ref["var"], rtol=1e-13)
    np.testing.assert_allclose(accum, ref["accum"], rtol=1e-13)
    np.testing.assert_array_equal(got_power.reshape(-1), power)
    assert power[[0, 1, 5]].tolist() == [1, 1, 1] and power[4] == 0


@pytest.mark.parametrize("centered", [False, True])
def test_rmsprop_updates_the_rows_named(centered):
    lr, rho, mu, eps = 0.25, 0.875, 0.5, 2.0 ** -30

    def update(s, i, g, t):  # SparseApply(Centered)RMSProp
        s["ms"][i] = s["ms"][i] * rho + g * g * (1 - rho)
        denom = s["ms"][i] + eps
        if centered:
            s["mg"][i] = s["mg"][i] * rho + g * (1 - rho)
            denom = denom - s["mg"][i] ** 2
        s["mom"][i] = s["mom"][i] * mu + lr * g / np.sqrt(denom)
        s["var"][i] -= s["mom"][i]

    ref = _per_row(update, {"var": INIT.copy(), "ms": np.ones_like(INIT),
                            "mom": np.zeros_like(INIT), "mg": np.zeros_like(INIT)})
    got, (ms, mom) = _run_sparse(
        lambda: tf.train.RMSPropOptimizer(lr, rho, mu, eps, centered=centered), ["rms", "momentum"])
    np.testing.assert_allclose(got, ref["var"], rtol=1e-12)
    np.testing.assert_allclose(ms, ref["ms"], rtol=1e-12)
    np.testing.assert_allclose(mom, ref["mom"], rtol=1e-12)
    np.testing.assert_array_equal(ms[[2, 3]], 1.0)  # rows not looked up: ms does not decay


def test_adadelta_updates_the_rows_named():
    lr, rho, eps = 1.0, 0.9375, 2.0 ** -20

    def update(s, i, g, t):  # SparseApplyAdadelta
        s["accum"][i] = s["accum"][i] * rho + g * g * (1 - rho)
        step = np.sqrt(s["upd"][i] + eps) / np.sqrt(s["accum"][i] + eps) * g
        s["upd"][i] = s["upd"][i] * rho + step * step * (1 - rho)
        s["var"][i] -= step * lr

    ref = _per_row(update, {"var": INIT.copy(), "accum": np.zeros_like(INIT),
                            "upd": np.zeros_like(INIT)})
    got, (accum, upd) = _run_sparse(lambda: tf.train.AdadeltaOptimizer(lr, rho, eps),
                                    ["accum", "accum_update"])
    np.testing.assert_allclose(got, ref["var"], rtol=1e-12)
    np.testing.assert_allclose(upd, ref["upd"], rtol=1e-12)


@pytest.mark.parametrize("shrinkage", [0.0, 2.0 ** -5])
def test_ftrl_updates_the_rows_named(shrinkage):
    lr, l1, l2 = 0.5, 2.0 ** -7, 2.0 ** -6

    def update(s, i, g, t):  # SparseApplyFtrl(V2), lr_power -0.5
        var, accum = s["var"][i], s["accum"][i]
        new_accum = accum + g * g
        g_shrunk = g + 2 * shrinkage * var
        s["linear"][i] += g_shrunk - (np.sqrt(new_accum) - np.sqrt(accum)) / lr * var
        quadratic = np.sqrt(new_accum) / lr + 2 * l2
        lin = s["linear"][i]
        s["var"][i] = np.where(np.abs(lin) > l1, (np.sign(lin) * l1 - lin) / quadratic, 0.0)
        s["accum"][i] = new_accum

    ref = _per_row(update, {"var": INIT.copy(), "accum": np.full_like(INIT, 0.125),
                            "linear": np.zeros_like(INIT)})
    got, (linear,) = _run_sparse(
        lambda: tf.train.FtrlOptimizer(lr, initial_accumulator_value=0.125,
                                       l1_regularization_strength=l1,
                                       l2_regularization_strength=l2,
                                       l2_shrinkage_regularization_strength=shrinkage),
        ["linear"])
    np.testing.assert_allclose(got, ref["var"], rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(linear, ref["linear"], rtol=1e-12)
    np.testing.assert_array_equal(got[[2, 3]], INIT[[2, 3]])


ADAM = {"learning_rate": 0.25, "beta1": 0.875, "beta2": 1 - 2.0 ** -10, "epsilon": 2.0 ** -27}


def _adam_reference(lazy, weight_decay=0.0, steps=3):
    lr, b1, b2, eps = 0.25, 0.875, 1 - 2.0 ** -10, 2.0 ** -27
    var, m, v = INIT.copy(), np.zeros_like(INIT), np.zeros_like(INIT)
    b1_power, b2_power = np.float32(b1), np.float32(b2)  # TF's float32 non-slot variables
    for k in range(steps):
        alpha = lr * np.sqrt(1 - np.float64(b2_power)) / (1 - np.float64(b1_power))
        b1_power, b2_power = b1_power * np.float32(b1), b2_power * np.float32(b2)
        ids, values = _dedup(IDS[k], VALUES[k])
        if weight_decay:  # contrib's _decay_weights_sparse_op: the rows named
            var[ids] += -weight_decay * var[ids]
        if lazy:  # LazyAdam: the rows named only
            m[ids] = b1 * m[ids] + (1 - b1) * values
            v[ids] = b2 * v[ids] + (1 - b2) * values ** 2
            var[ids] -= alpha * m[ids] / (np.sqrt(v[ids]) + eps)
        else:  # TF1 Adam._apply_sparse_shared: m, v decay everywhere, var moves everywhere
            m *= b1
            m[ids] += values * (1 - b1)
            v *= b2
            v[ids] += values * values * (1 - b2)
            var -= alpha * m / (np.sqrt(v) + eps)
    return var, m, v


@pytest.mark.parametrize(("make", "lazy", "wd"), [
    (lambda: tf.train.AdamOptimizer(**ADAM), False, 0.0),
    (lambda: tf.contrib.opt.LazyAdamOptimizer(**ADAM), True, 0.0),
    (lambda: tf.contrib.opt.AdamWOptimizer(2.0 ** -7, **ADAM), False, 2.0 ** -7)],
    ids=["adam", "lazy_adam", "adamw"])
def test_adam_family_sparse_updates(make, lazy, wd):
    var, m, v = _adam_reference(lazy, wd)
    got, (got_m, got_v) = _run_sparse(make, ["m", "v"])
    np.testing.assert_allclose(got, var, rtol=1e-12)
    np.testing.assert_allclose(got_m, m, rtol=1e-12)
    np.testing.assert_allclose(got_v, v, rtol=1e-12)
    # row 4 is looked up at step 1 only: TF1 Adam keeps moving it with its decaying m
    moved = not np.allclose(var[4], _adam_reference(lazy, wd, steps=1)[0][4], rtol=1e-9)
    assert moved != lazy


@pytest.mark.parametrize("base", ["sgd", "momentum"])
def test_decoupled_weight_decay_decays_the_rows_looked_up_once(base):
    """contrib's _decay_weights_sparse_op (var[i] += -weight_decay * var[i]) on each distinct
    row named, before the base's sparse update: GradientDescent's subtracts every repeated
    row, Momentum's sums them first."""
    wd, lr, mu = 2.0 ** -5, 0.25, 0.875
    var, accum = INIT.copy(), np.zeros_like(INIT)
    for k in range(3):
        ids, values = _dedup(IDS[k], VALUES[k])
        var[ids] += -wd * var[ids]
        if base == "sgd":
            for i, g in zip(IDS[k], VALUES[k]):
                var[i] -= lr * g
        else:
            for i, g in zip(ids, values):
                accum[i] = accum[i] * mu + g
                var[i] -= accum[i] * lr
    make = {"sgd": lambda: tf.contrib.opt.extend_with_decoupled_weight_decay(
                tf.train.GradientDescentOptimizer)(wd, learning_rate=lr),
            "momentum": lambda: tf.contrib.opt.extend_with_decoupled_weight_decay(
                tf.train.MomentumOptimizer)(wd, learning_rate=lr, momentum=mu)}[base]
    got, _ = _run_sparse(make)
    np.testing.assert_allclose(got, var, rtol=1e-13)
    assert np.array_equal(got[[2, 3]], INIT[[2, 3]])  # never looked up: neither decayed nor moved


def _train_lookup(make_opt, sparse, steps=3):
    """Train a lookup model with IndexedSlices gradients (sparse) or their dense sum."""
    with tf.Graph().as_default():
        var = tf.Variable(INIT.astype(np.float32), name="W")
        ids = tf.placeholder(tf.int32, [None])
        target = tf.placeholder(tf.float32, [None, COLS])
        loss = tf.reduce_sum(tf.square(tf.nn.embedding_lookup(var, ids) - target))
        opt = make_opt()
        (g, v), = opt.compute_gradients(loss, [var])
        assert isinstance(g, tf.IndexedSlices)
        train = opt.apply_gradients([(g if sparse else tf.convert_to_tensor(g), v)])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for k in range(steps):
                sess.run(train, {ids: IDS[k], target: VALUES[k].astype(np.float32)})
            return sess.run(var)


def test_sparse_equals_dense_where_zero_rows_change_nothing():
    """GD and Adagrad leave a row with a zero gradient as it is, so TF's sparse and dense
    updates agree: Adagrad bit for bit (the same per-element formula on summed rows, float32),
    GD but for rounding (it subtracts repeated rows one by one instead of their sum)."""
    adagrad = lambda: tf.train.AdagradOptimizer(0.5)  # noqa: E731
    np.testing.assert_array_equal(_train_lookup(adagrad, True), _train_lookup(adagrad, False))
    sgd = lambda: tf.train.GradientDescentOptimizer(0.25)  # noqa: E731
    np.testing.assert_allclose(_train_lookup(sgd, True), _train_lookup(sgd, False), rtol=1e-6,
                               atol=1e-7)


def test_tf1_adam_sparse_equals_dense_up_to_rounding():
    """TF1 Adam's sparse form decays m and v everywhere, as the dense one does with zero rows:
    the same numbers but for rounding (m * b1 + g * (1 - b1) against m + (g - m) * (1 - b1))."""
    make = lambda: tf.train.AdamOptimizer(0.1)  # noqa: E731
    np.testing.assert_allclose(_train_lookup(make, True), _train_lookup(make, False), rtol=1e-5,
                               atol=1e-6)


def test_sparse_update_is_written_in_place_and_gated():
    with tf.Graph().as_default():
        var = tf.Variable(INIT, name="W")
        gate = tf.placeholder(tf.bool, [])
        opt = tf.train.AdagradOptimizer(0.5)
        grad = tf.IndexedSlices(tf.constant(VALUES[0]), tf.constant(IDS[0]),
                                tf.constant([ROWS, COLS], tf.int64))
        train = opt.apply_gradients([(grad, var)], gate=gate)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            storage = sess._state.variables[var.op]
            sess.run(train, {gate: False})
            np.testing.assert_array_equal(sess.run(var), INIT)
            sess.run(train, {gate: True})
            assert sess._state.variables[var.op] is storage
            assert not np.array_equal(storage, INIT)
