"""A group's updates of small variables run as one kernel call over flat buffers
(``update_ops.FlatUpdate``): the variables, their slots and gradients concatenated.

The results must be the bits of the updates run one by one (``GRADPIPE_FLAT_UPDATES=0``), and
the flat buffers must stay the variables' storage through everything that puts new arrays in
the session: initializers, ``Variable.load``, ``Saver.restore``, an Assign of another shape.
"""

import numpy as np
import pytest

import engine as tf
from engine.runtime.update_ops import FlatStorage, FlatUpdate

SHAPES = [(3, 4), (4,), (4, 1), (1,), ()]

OPTIMIZERS = {
    "adam": lambda: tf.train.AdamOptimizer(0.01),
    "momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
    "rmsprop": lambda: tf.train.RMSPropOptimizer(0.01, momentum=0.5, centered=True),
    "sgd": lambda: tf.train.GradientDescentOptimizer(0.1),
    "adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "adagrad_decay": lambda: tf.train.AdagradDecayOptimizer(  # decays at steps 2 and 4
        0.1, tf.train.get_or_create_global_step(), accumulator_decay_step=2,
        accumulator_decay_rate=0.5),
}

#: the gradient-processing the group's gradients go through before the update
CLIPS = {
    "none": lambda gs: gs,
    "per_tensor": lambda gs: [tf.clip_by_norm(g, 0.5) for g in gs],  # a scale per variable
    "global": lambda gs: tf.clip_by_global_norm(gs, 0.5)[0],  # one scale for all
}


def _model(optimizer, clip, gated=False):
    g = tf.Graph()
    with g.as_default():
        rng = np.random.default_rng(0)
        vs = [tf.Variable((rng.standard_normal(s) + 0.5).astype(np.float32), name=f"v{i}")
              for i, s in enumerate(SHAPES)]
        x = tf.placeholder(tf.float32, [None, 3])
        loss = tf.reduce_mean(tf.square(tf.tanh(x @ vs[0] + vs[1]) @ vs[2] + vs[3] * vs[4]))
        grads = tf.gradients(loss, vs)
        gate = tf.placeholder_with_default(True, []) if gated else None
        kwargs = {"gate": gate} if gated else {}
        if optimizer == "adagrad_decay":
            kwargs["global_step"] = tf.train.get_or_create_global_step()
        train = OPTIMIZERS[optimizer]().apply_gradients(list(zip(CLIPS[clip](grads), vs)),
                                                        **kwargs)
    return g, x, vs, loss, train, gate


def _train(monkeypatch, flat, optimizer, clip, steps=4, gated=False, feeds=None):
    monkeypatch.setenv("GRADPIPE_FLAT_UPDATES", "1" if flat else "0")
    g, x, vs, loss, train, gate = _model(optimizer, clip, gated)
    rng = np.random.default_rng(1)
    with g.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(steps):
            feed = {x: rng.standard_normal((8, 3)).astype(np.float32) * 3}
            if gated:
                feed[gate] = (feeds or [True] * steps)[i]
            sess.run([loss, train], feed)
        flat_steps = _flat_steps(sess, train)
        for f in flat_steps:  # the flat path ran: the variables live in its buffers
            for op in f.ops:
                var = sess._state.variables[op.attrs["var"].op]
                assert np.shares_memory(var, f.storage.flats[0]), op.name
        return sess.run(tf.global_variables()), flat_steps


def _flat_steps(sess, train):
    """The FlatUpdate calls in the plan that runs ``train``."""
    plan = [p for key, p in sess._plans.items() if train in key[0]][0]
    found = []
    for fn, *_ in plan.steps:
        if isinstance(fn, FlatUpdate):  # a batch of one flat update is that update
            found.append(fn)
        for cell in getattr(fn, "__closure__", None) or ():
            contents = cell.cell_contents
            if isinstance(contents, list):
                found += [c[0] for c in contents if isinstance(c, tuple) and c
                          and isinstance(c[0], FlatUpdate)]
    return found


@pytest.mark.parametrize("clip", list(CLIPS))
@pytest.mark.parametrize("optimizer", list(OPTIMIZERS))
def test_a_flat_update_gives_the_bits_of_the_updates_one_by_one(monkeypatch, optimizer, clip):
    want, none = _train(monkeypatch, False, optimizer, clip)
    got, flat = _train(monkeypatch, True, optimizer, clip)
    # a scalar's scaled gradient is not folded into its update, so it may stand alone
    assert not none and sum(len(f.ops) for f in flat) >= len(SHAPES) - 1
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_a_closed_gate_writes_nothing(monkeypatch):
    gates = [True, False, True, False]
    want, _ = _train(monkeypatch, False, "adam", "global", gated=True, feeds=gates)
    got, flat = _train(monkeypatch, True, "adam", "global", gated=True, feeds=gates)
    assert flat
    for a, b in zip(got, want):
        assert a.tobytes() == b.tobytes()


def _variable_arrays(sess, vs):
    return [sess._state.variables[v.op] for v in vs]


def test_the_variables_are_views_of_one_buffer_and_stay_so_through_new_arrays(monkeypatch):
    """Variable.load, Saver.restore and an initializer put new arrays in the session; the next
    step copies them into the flat buffer and trains on them, as the updates one by one do."""

    def run(flat, tmp):
        monkeypatch.setenv("GRADPIPE_FLAT_UPDATES", "1" if flat else "0")
        g, x, vs, loss, train, _ = _model("adam", "per_tensor")
        rng = np.random.default_rng(1)
        with g.as_default(), tf.Session() as sess:
            saver = tf.train.Saver()
            sess.run(tf.global_variables_initializer())

            def step():
                sess.run(train, {x: rng.standard_normal((8, 3)).astype(np.float32)})

            step()
            if flat:
                arrays = _variable_arrays(sess, vs)
                base = arrays[0].base
                assert base is not None and all(a.base is base for a in arrays)
            path = saver.save(sess, str(tmp / "ckpt"))
            step()
            vs[1].load(np.full(4, 7.0, np.float32), sess)  # a new array for one variable
            step()
            saver.restore(sess, path)  # new arrays for every variable and slot
            step()
            if flat:
                arrays = _variable_arrays(sess, vs)
                assert all(a.base is arrays[0].base for a in arrays)
            sess.run(tf.global_variables_initializer())  # back to the initial values
            step()
            return sess.run(tf.global_variables())

    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as a, tempfile.TemporaryDirectory() as b:
        want, got = run(False, Path(a)), run(True, Path(b))
    for p, q in zip(got, want):
        assert p.tobytes() == q.tobytes()


def test_an_assign_of_another_shape_lays_the_buffer_out_anew(monkeypatch):
    """A variable assigned a value of another shape (validate_shape=False) trains at its new
    shape, as its own update would; the flat buffers follow."""
    for flat in (False, True):
        monkeypatch.setenv("GRADPIPE_FLAT_UPDATES", "1" if flat else "0")
        with tf.Graph().as_default():
            a = tf.Variable(np.ones(3, np.float32))
            b = tf.Variable(np.ones(2, np.float32))
            ga = tf.placeholder(tf.float32, None)
            gb = tf.placeholder(tf.float32, None)
            train = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(ga, a), (gb, b)])
            grow = tf.assign(a, np.arange(5, dtype=np.float32), validate_shape=False)
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                sess.run(train, {ga: np.ones(3, np.float32), gb: np.ones(2, np.float32)})
                sess.run(grow)
                sess.run(train, {ga: np.ones(5, np.float32), gb: np.ones(2, np.float32)})
                got = sess.run([a, b])
                with pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
                    sess.run(train, {ga: np.ones(3, np.float32), gb: np.ones(2, np.float32)})
        np.testing.assert_array_equal(got[0], np.arange(5, dtype=np.float32) - 0.5)
        np.testing.assert_array_equal(got[1], np.zeros(2, np.float32))


def _two_variables(optimizer):
    """Variables of 3 and 2 ones, and an update of both with gradients of ones."""
    a = tf.Variable(np.ones(3, np.float32))
    b = tf.Variable(np.ones(2, np.float32))
    return a, b, optimizer.apply_gradients([(tf.ones(3), a), (tf.ones(2), b)])


def test_an_uninitialized_variable_is_still_the_precondition_error(monkeypatch):
    monkeypatch.setenv("GRADPIPE_FLAT_UPDATES", "1")
    with tf.Graph().as_default():
        a, b, train = _two_variables(tf.train.AdamOptimizer(0.5))
        with tf.Session() as sess:
            sess.run(tf.variables_initializer([a] + [v for v in tf.global_variables()
                                                     if v is not a and v is not b]))
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized"):
                sess.run(train)


def test_flat_storage_copies_new_arrays_in_and_puts_its_views_back():
    from engine.framework.graph import Graph

    g = Graph()
    ops = [[g._add_op("VariableV2", f"w{i}", [], {}, [(tf.float32, None)]) for i in range(2)]]
    storage = FlatStorage(ops)
    variables = {ops[0][0]: np.ones((2, 2), np.float32), ops[0][1]: np.full(3, 2, np.float32)}
    (flat,) = storage.arrays(variables)
    np.testing.assert_array_equal(flat, [1, 1, 1, 1, 2, 2, 2])
    assert all(np.shares_memory(v, flat) for v in variables.values())
    variables[ops[0][1]] = np.full(3, 5, np.float32)  # a restore
    (again,) = storage.arrays(variables)
    assert again is flat
    np.testing.assert_array_equal(flat, [1, 1, 1, 1, 5, 5, 5])
    variables[ops[0][0]] = np.zeros(4, np.float32)  # another shape: a new layout
    (relaid,) = storage.arrays(variables)
    np.testing.assert_array_equal(relaid, [0, 0, 0, 0, 5, 5, 5])
    assert variables[ops[0][0]].shape == (4,)
    variables[ops[0][0]] = np.zeros(4, np.float64)  # another dtype: not flat
    assert storage.arrays(variables) is False


def test_a_variable_fetched_with_its_update_reads_as_one_by_one_after_new_arrays(monkeypatch):
    """``sess.run([train, w])`` returns w's array after the run; a restore or initializer put a
    new array in the session, and the run's first step puts the flat view back before w is
    read, so the fetch is the updated value on every step, as one by one."""

    def run(flat):
        monkeypatch.setenv("GRADPIPE_FLAT_UPDATES", "1" if flat else "0")
        with tf.Graph().as_default():
            a, b, train = _two_variables(tf.train.GradientDescentOptimizer(0.5))
            with tf.Session() as sess:
                got = []
                for _ in range(2):
                    sess.run(tf.global_variables_initializer())
                    got += sess.run([train, a, b])[1:] + sess.run([train, a, b])[1:]
                return got

    for p, q in zip(run(True), run(False)):
        np.testing.assert_array_equal(p, q)


def test_concurrent_runs_of_one_session_each_update_with_their_own_gradient(monkeypatch):
    """Two threads running one session's train op with different feeds (as TF allows): each
    run's flat update must use its own gradient, never the other run's, although the members'
    gradients go through one buffer per group. The first run waits (up to half a second) after
    writing its gradient there, for the second to write its own."""
    import threading

    monkeypatch.setenv("GRADPIPE_FLAT_UPDATES", "1")
    with tf.Graph().as_default():
        a = tf.Variable(np.zeros(3, np.float32))
        b = tf.Variable(np.zeros(2, np.float32))
        x = tf.placeholder(tf.float32, [])
        loss = x * (tf.reduce_sum(a) + tf.reduce_sum(b))  # d/da = d/db = x
        train = tf.train.GradientDescentOptimizer(1.0).minimize(loss, var_list=[a, b])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            step = sess.make_callable(train, [x])
            step(1.0)
            assert _flat_steps(sess, train)
            first, second = threading.Event(), threading.Event()
            real = FlatUpdate._gradient

            def gradient(self, values):
                written = real(self, values)
                if not first.is_set():
                    first.set()
                    second.wait(timeout=0.5)  # the other run writes its gradient now, if it can
                else:
                    second.set()
                return written

            monkeypatch.setattr(FlatUpdate, "_gradient", gradient)
            runs = [threading.Thread(target=step, args=(1.0,)),
                    threading.Thread(target=lambda: first.wait(5) and step(4.0))]
            for t in runs:
                t.start()
            for t in runs:
                t.join()
            np.testing.assert_array_equal(sess.run(a), np.full(3, -6.0, np.float32))
            np.testing.assert_array_equal(sess.run(b), np.full(2, -6.0, np.float32))


@pytest.mark.parametrize("assign", ["gated_assign", "gated_assign_add", "gated_assign_sub"])
def test_assignments_run_member_by_member_without_concatenation(monkeypatch, assign):
    """A flat group of assignments (Adam's beta powers) writes each member's value into its view
    (no concatenation into the group's buffer: ``_gradient`` is not called), with the bits of
    the assignments one by one, a closed gate writing nothing."""
    from engine.runtime.update_ops import gated_assign, gated_assign_add, gated_assign_sub

    write = {"gated_assign": gated_assign, "gated_assign_add": gated_assign_add,
             "gated_assign_sub": gated_assign_sub}[assign]
    concatenated = []
    real = FlatUpdate._gradient
    monkeypatch.setattr(FlatUpdate, "_gradient",
                        lambda self, values: concatenated.append(1) or real(self, values))

    def run(flat):
        monkeypatch.setenv("GRADPIPE_FLAT_UPDATES", "1" if flat else "0")
        with tf.Graph().as_default():
            vs = [tf.Variable(np.float32(v), name=f"p{i}") for i, v in enumerate([0.9, 0.999])]
            vs.append(tf.Variable(np.arange(3, dtype=np.float32) - 1.5, name="p2"))
            gate = tf.placeholder_with_default(True, [])
            values = [vs[0] * np.float32(0.9), vs[1] * np.float32(0.999), vs[2] * 1.5]
            train = tf.group(*[write(v, value, gate) for v, value in zip(vs, values)])
            with tf.Session() as sess:
                sess.run(tf.global_variables_initializer())
                for open_gate in (True, False, True):
                    sess.run(train, {gate: open_gate})
                return sess.run(vs), _flat_steps(sess, train)

    want, _ = run(False)
    got, steps = run(True)
    assert steps and not concatenated
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.tobytes() == b.tobytes()
