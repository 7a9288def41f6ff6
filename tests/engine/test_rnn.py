"""The ``rnn`` op: forward against a plain numpy loop and TF1, BPTT gradients against finite
differences, shape/dtype errors, and the seed's use (an LSTM on the adding problem)."""

import numpy as np
import pytest

import engine as tf
from engine.ops import FUNCTIONS
from engine.ops.rnn import rnn, rnn_states
from tests.engine.numeric import numeric_grad

GATES = {"tanh": 1, "lstm": 4}


def _sigmoid(z):
    return 1 / (1 + np.exp(-z))


def loop_reference(x, kernel, bias, cell, forget_bias=1.0, h0=None, c0=None):
    """TF's BasicRNNCell / BasicLSTMCell step by step: concat([x_t, h]) @ kernel + bias."""
    time, batch, _ = x.shape
    hidden = kernel.shape[1] // GATES[cell]
    h = np.zeros((batch, hidden)) if h0 is None else h0
    c = np.zeros((batch, hidden)) if c0 is None else c0
    hs, cs = [], []
    for t in range(time):
        z = np.concatenate([x[t], h], axis=1) @ kernel + bias
        if cell == "tanh":
            h = np.tanh(z)
        else:
            i, j, f, o = np.split(z, 4, axis=1)
            c = c * _sigmoid(f + forget_bias) + _sigmoid(i) * np.tanh(j)
            h = np.tanh(c) * _sigmoid(o)
        hs.append(h)
        cs.append(c)
    shape = (time, batch, hidden)
    return np.reshape(hs, shape), np.reshape(cs, shape)


def random_inputs(cell, time=4, batch=3, features=2, hidden=3, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "x": rng.normal(size=(time, batch, features)),
        "kernel": rng.normal(scale=0.6, size=(features + hidden, GATES[cell] * hidden)),
        "bias": rng.normal(scale=0.3, size=(GATES[cell] * hidden,)),
        "h0": rng.normal(scale=0.5, size=(batch, hidden)),
        "c0": rng.normal(scale=0.5, size=(batch, hidden)),
    }


def run(fetches, feed_dict=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed_dict)


pytestmark = pytest.mark.usefixtures("fresh_default_graph")


# -- forward -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("with_state", [False, True])
@pytest.mark.parametrize("cell", ["tanh", "lstm"])
def test_forward_matches_numpy_loop(cell, with_state, dtype):
    v = random_inputs(cell)
    state = {"h0": v["h0"]} if with_state else {}
    if with_state and cell == "lstm":
        state["c0"] = v["c0"]
    h, c = rnn_states(*(v[k].astype(dtype) for k in ("x", "kernel", "bias")), cell,
                      forget_bias=0.3, **{k: s.astype(dtype) for k, s in state.items()})
    want_h, want_c = loop_reference(v["x"], v["kernel"], v["bias"], cell, 0.3, **state)
    got = run([h] if c is None else [h, c])
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert h.dtype == tf.as_dtype(dtype) and got[0].dtype == dtype
    np.testing.assert_allclose(got[0], want_h, rtol=tol, atol=tol)
    if c is not None:
        np.testing.assert_allclose(got[1], want_c, rtol=tol, atol=tol)


def test_forget_bias_defaults_to_one():
    v = random_inputs("lstm")
    want, _ = loop_reference(v["x"], v["kernel"], v["bias"], "lstm", forget_bias=1.0)
    np.testing.assert_allclose(run(rnn(v["x"], v["kernel"], v["bias"], "lstm")), want,
                               rtol=1e-12)


def test_lstm_with_only_h0_starts_from_zero_cell_state():
    v = random_inputs("lstm")
    want, _ = loop_reference(v["x"], v["kernel"], v["bias"], "lstm", h0=v["h0"])
    np.testing.assert_allclose(run(rnn(v["x"], v["kernel"], v["bias"], "lstm", h0=v["h0"])),
                               want, rtol=1e-12)


def test_unknown_time_and_batch_take_their_size_from_the_feed():
    v = random_inputs("lstm", features=2, hidden=3)
    x = tf.placeholder(tf.float64, [None, None, 2])
    h = rnn(x, v["kernel"], v["bias"], "lstm")
    assert h.shape.as_list() == [None, None, 3]
    with tf.Session() as sess:
        for time, batch in [(4, 3), (7, 1), (0, 2)]:
            xv = np.random.default_rng(time).normal(size=(time, batch, 2))
            want, _ = loop_reference(xv, v["kernel"], v["bias"], "lstm")
            got = sess.run(h, {x: xv})
            assert got.shape == (time, batch, 3)
            np.testing.assert_allclose(got, want, rtol=1e-12)


# -- TF1 reference ---------------------------------------------------------------------------
# Derived once with TensorFlow 2.21 (tensorflow.compat.v1, TF_USE_LEGACY_KERAS=1,
# TF_ENABLE_ONEDNN_OPTS=0), float64:
#   cell = tf.nn.rnn_cell.BasicRNNCell(2)  or  BasicLSTMCell(2, forget_bias=1.0)
#   out, state = tf.nn.dynamic_rnn(cell, x, initial_state=h0 or LSTMStateTuple(c0, h0),
#                                  time_major=True, dtype=tf.float64)
#   the cell's kernel and bias loaded with the values of tf1_fixture(); loss = sum(out * m)
#   tf.gradients(loss, [x, kernel, bias, h0(, c0)])


def tf1_fixture(cell, time=3, batch=2, features=2, hidden=2):
    gates = GATES[cell]
    x = np.array([[[0.5 * (t + 1) * (-1) ** (b + f) + 0.1 * f for f in range(features)]
                   for b in range(batch)] for t in range(time)])
    kernel = np.array([[0.1 * ((r * 5 + c) % 7 - 3) for c in range(gates * hidden)]
                       for r in range(features + hidden)])
    bias = np.array([0.05 * (c % 5 - 2) for c in range(gates * hidden)])
    h0 = np.array([[0.2, -0.3], [0.4, 0.1]])
    c0 = np.array([[-0.5, 0.25], [0.3, -0.2]])
    m = np.array([[[(1 + t + 2 * b + 3 * h) / 10 for h in range(hidden)] for b in range(batch)]
                  for t in range(time)])
    return x, kernel, bias, h0, c0, m


TF1_TANH = {
    "h_all": [[[-0.2636248355, -0.2165180615], [0.1488850336, 0.2542955326]],
              [[-0.4904831846, -0.4813275359], [0.3532400323, 0.437762053]],
              [[-0.6253447589, -0.6474615199], [0.5244421123, 0.617867129]]],
    "dx": [[[-0.1002804361, 0.1194973834], [-0.1904938223, 0.2009804173]],
           [[-0.1193679692, 0.1344645933], [-0.2114670637, 0.2188565054]],
           [[-0.1245001836, 0.1410794804], [-0.2076625044, 0.2208736977]]],
    "dkernel": [[-0.5923965925, -0.4211514553], [0.7503589491, 0.6610939101],
                [0.2103451349, 0.2272772928], [0.1289638245, 0.0459365502]],
    "dbias": [1.5796235655, 2.399424548],
    "dh0": [[0.0315862556, -0.0563248722], [0.0443907215, -0.1121989743]],
}

TF1_LSTM = {
    "h_all": [[[-0.1671393111, 0.1107063512], [0.0822447982, -0.0571429401]],
              [[-0.1112085831, 0.0949345828], [0.0012410146, -0.1002169395]],
              [[-0.0545122014, 0.0913737022], [-0.087592724, -0.1921912545]]],
    "c_last": [[-0.0975885613, 0.2926977873], [-0.2100620515, -0.287044676]],
    "dx": [[[-0.0264117411, -0.0584759457], [-0.0192447573, -0.1759109202]],
           [[-0.0246557135, -0.0365659534], [-0.0040189541, -0.1784233509]],
           [[-0.0217873808, -0.0118100183], [0.001303345, -0.1240216291]]],
    "dkernel": [[0.0671688217, 0.1052845695, -0.3053370577, -0.9250671669,
                 -0.0634276195, 0.1019785124, -0.0019147695, 0.2055366503],
                [-0.0686773365, -0.1056465237, 0.389072807, 1.0882701922,
                 0.0633080076, -0.1051539081, -0.0014797551, -0.2056450074],
                [-0.0046409323, 0.0025933046, 0.1217323987, 0.2502320879,
                 0.0103771875, -0.0158040625, 0.0090981874, -0.0130932321],
                [0.0013750197, 0.0036298624, -0.0203278974, -0.0462854034,
                 0.0078918381, -0.0051132582, 0.0063437242, 0.0042126551]],
    "dbias": [-1.5085148640e-02, -3.6195425817e-03, 8.3735749263e-01, 1.6320302529e+00,
              -1.1961194912e-03, -3.1753957041e-02, -3.3945245292e-02, -1.0835708895e-03],
    "dh0": [[0.0837218989, 0.0148876049], [0.1974067549, 0.0405278014]],
    "dc0": [[0.2038218141, 0.2921724008], [0.3316665885, 0.6000591112]],
}


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-9), (np.float32, 1e-5)])
@pytest.mark.parametrize("cell, want", [("tanh", TF1_TANH), ("lstm", TF1_LSTM)])
def test_matches_tf1_dynamic_rnn(cell, want, dtype, tol):
    x, kernel, bias, h0, c0, m = (tf.constant(a.astype(dtype)) for a in tf1_fixture(cell))
    lstm = cell == "lstm"
    h, c = rnn_states(x, kernel, bias, cell, forget_bias=1.0, h0=h0, c0=c0 if lstm else None)
    loss = tf.reduce_sum(h * m)
    names = ["dx", "dkernel", "dbias", "dh0"] + (["dc0"] if lstm else [])
    grads = tf.gradients(loss, [x, kernel, bias, h0] + ([c0] if lstm else []))
    got = run({"h_all": h, **({"c_last": c[-1]} if lstm else {}), **dict(zip(names, grads))})
    assert got.keys() == want.keys()
    for key, value in got.items():
        assert value.dtype == dtype, key
        np.testing.assert_allclose(value, want[key], rtol=tol, atol=tol, err_msg=key)


# -- gradients against finite differences ----------------------------------------------------


@pytest.mark.parametrize("cell, state", [("tanh", "none"), ("tanh", "h0"), ("lstm", "none"),
                                         ("lstm", "h0"), ("lstm", "h0_c0")])
def test_gradients_match_finite_differences(cell, state):
    v = random_inputs(cell, time=3, batch=2, features=3, hidden=2, seed=1)
    names = ["x", "kernel", "bias"] + {"none": [], "h0": ["h0"], "h0_c0": ["h0", "c0"]}[state]
    ph = {k: tf.placeholder(tf.float64, v[k].shape, name=k) for k in names}
    h, c = rnn_states(ph["x"], ph["kernel"], ph["bias"], cell, forget_bias=0.7,
                      h0=ph.get("h0"), c0=ph.get("c0"))
    rng = np.random.default_rng(2)
    # weights on every hidden (and LSTM cell) state, so each output's gradient path is checked
    loss = tf.reduce_sum(h * rng.normal(size=h.shape.as_list()))
    if c is not None:
        loss = loss + tf.reduce_sum(c * rng.normal(size=c.shape.as_list()))
    grads = tf.gradients(loss, [ph[k] for k in names])
    feed = {ph[k]: v[k] for k in names}
    with tf.Session() as sess:
        got = sess.run(grads, feed)
        for name, g in zip(names, got):
            def f(value, name=name):
                return sess.run(loss, {**feed, ph[name]: value})

            np.testing.assert_allclose(g, numeric_grad(f, v[name]), rtol=1e-6, atol=1e-8,
                                       err_msg=name)


@pytest.mark.parametrize("cell", ["tanh", "lstm"])
def test_gradient_reuses_the_forward_pass(cell, monkeypatch):
    """One run of the forward pass and its gradient runs the recurrence once: RnnGrad reads
    what Rnn kept (h_all; for the LSTM the reserve of gate activations) instead of repeating it."""
    import engine.ops.rnn as rnn_module

    name = "_tanh_loop" if cell == "tanh" else "_lstm_loop"
    calls = []
    loop = getattr(rnn_module, name)
    monkeypatch.setattr(rnn_module, name, lambda *a: calls.append(1) or loop(*a))
    v = random_inputs(cell)
    kernel = tf.constant(v["kernel"])
    h = rnn(v["x"], kernel, v["bias"], cell)
    outputs = [op for op in h.graph.get_operations() if op.type == "Rnn"][0].outputs
    assert len(outputs) == (1 if cell == "tanh" else 3)  # h_all (, c_all, reserve)
    run([h, tf.gradients(tf.reduce_sum(h), [kernel])[0]])
    assert len(calls) == 1


def test_unread_cell_states_give_rnn_grad_no_zeros_to_read():
    """Nothing reads the LSTM's cell states: RnnGrad does not take the ZerosLike that autodiff
    makes for their gradient (the plan leaves it out), and the gradients are those of a loss
    that reads them with weight zero."""
    v = random_inputs("lstm", seed=6)
    kernel, bias = tf.constant(v["kernel"]), tf.constant(v["bias"])
    h_all, c_all = rnn_states(v["x"], kernel, bias, "lstm", h0=v["h0"], c0=v["c0"])
    loss = tf.reduce_sum(tf.square(h_all))
    unread = tf.gradients(loss, [kernel, bias])
    read = tf.gradients(loss + 0.0 * tf.reduce_sum(c_all), [kernel, bias])
    ops = [op for op in h_all.graph.get_operations() if op.type == "RnnGrad"]
    assert [op.get_attr("zero_dc") for op in ops] == [True, False]
    assert [len(op.inputs) for op in ops] == [9, 10]  # 5 inputs, 3 outputs, dh (, dc)
    with tf.Session() as sess:
        got_unread, got_read = sess.run([unread, read])
        assert "ZerosLike" not in [s[3].type for s in sess.plan(unread).steps]
    for a, b in zip(got_unread, got_read, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cell", ["tanh", "lstm"])
def test_the_gradient_of_x_is_not_computed_when_nothing_reads_it(cell):
    """The plan tells RnnGrad which of its outputs are read (OpDef.skips_unused): with x data,
    its gradient is skipped; the kernel and bias gradients are those of a run that reads all."""
    v = random_inputs(cell, seed=4)
    x = tf.placeholder(tf.float64, v["x"].shape, name="x")
    kernel, bias = tf.constant(v["kernel"]), tf.constant(v["bias"])
    loss = tf.reduce_sum(tf.square(rnn(x, kernel, bias, cell)))
    weights = tf.gradients(loss, [kernel, bias])
    everything = tf.gradients(loss, [x, kernel, bias])
    with tf.Session() as sess:
        alone = sess.run(weights, {x: v["x"]})
        dx, *with_x = sess.run(everything, {x: v["x"]})
        (step,) = [s for s in sess.plan(weights, [x]).steps if s[3].type == "RnnGrad"]
    assert step[0].keywords["needed"][:3] == (False, True, True)
    assert dx.shape == v["x"].shape
    for a, b in zip(alone, with_x, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cell", ["tanh", "lstm"])
def test_an_empty_sequence_has_zero_gradients(cell):
    v = random_inputs(cell, time=0)
    h0 = tf.constant(v["h0"])
    kernel = tf.constant(v["kernel"])
    h, c = rnn_states(v["x"], kernel, v["bias"], cell, h0=h0,
                      c0=v["c0"] if cell == "lstm" else None)
    loss = tf.reduce_sum(h) if c is None else tf.reduce_sum(h) + tf.reduce_sum(c)
    got_h, dk, dh0 = run([h, *tf.gradients(loss, [kernel, h0])])
    assert got_h.shape == (0, 3, 3)
    np.testing.assert_array_equal(dk, np.zeros_like(v["kernel"]))
    np.testing.assert_array_equal(dh0, np.zeros_like(v["h0"]))


def test_float32_gradients_stay_float32():
    v = {k: a.astype(np.float32) for k, a in random_inputs("lstm").items()}
    kernel = tf.Variable(v["kernel"])
    bias = tf.Variable(v["bias"])
    h = rnn(v["x"], kernel, bias, "lstm", h0=v["h0"], c0=v["c0"])
    grads = tf.gradients(tf.reduce_sum(h), [kernel, bias])
    assert [g.dtype for g in grads] == [tf.float32, tf.float32]
    assert [g.dtype for g in run(grads)] == [np.float32, np.float32]


def test_second_order_through_rnn_is_a_clear_error():
    v = random_inputs("tanh")
    kernel = tf.constant(v["kernel"])
    (g,) = tf.gradients(tf.reduce_sum(rnn(v["x"], kernel, v["bias"], "tanh")), [kernel])
    with pytest.raises(LookupError, match="RnnGrad"):
        tf.gradients(tf.reduce_sum(g), [kernel])


# -- the seed's use: an LSTM over the adding problem ------------------------------------------


def adding_batch(rng, time, batch):
    """Inputs [time, batch, 2] (value, marker with two ones) and targets [batch, 1]."""
    values = rng.uniform(size=(time, batch))
    markers = np.zeros((time, batch))
    cols = np.arange(batch)
    first, second = rng.integers(0, time // 2, batch), rng.integers(time // 2, time, batch)
    markers[first, cols] = markers[second, cols] = 1.0
    y = values[first, cols] + values[second, cols]
    return np.stack([values, markers], axis=2).astype(np.float32), y[:, None].astype(np.float32)


def test_lstm_on_adding_problem_gives_gradients_for_all_variables_and_trains():
    time, batch, hidden = 12, 32, 8
    tf.set_random_seed(0)
    x = tf.placeholder(tf.float32, [time, None, 2])
    y = tf.placeholder(tf.float32, [None, 1])
    with tf.variable_scope("lstm"):
        kernel = tf.get_variable("kernel", [2 + hidden, 4 * hidden])
        bias = tf.get_variable("bias", [4 * hidden], initializer=tf.zeros_initializer())
    with tf.variable_scope("head"):
        w = tf.get_variable("w", [hidden, 1])
        b = tf.get_variable("b", [1], initializer=tf.zeros_initializer())
    last = rnn(x, kernel, bias, "lstm", forget_bias=1.0)[-1]
    loss = tf.reduce_mean(tf.square(tf.matmul(last, w) + b - y))
    variables = tf.trainable_variables()
    grads = tf.gradients(loss, variables)
    assert all(g is not None for g in grads)
    step = tf.group(*[tf.assign_sub(v, 0.5 * g) for v, g in zip(variables, grads)])

    xv, yv = adding_batch(np.random.default_rng(0), time, batch)
    feed = {x: xv, y: yv}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        first = sess.run([loss] + grads, feed)
        for g, v in zip(first[1:], variables):
            assert g.shape == tuple(v.shape.as_list()) and g.dtype == np.float32
            assert np.all(np.isfinite(g)) and np.any(g != 0), v.name
        for _ in range(30):
            sess.run(step, feed)
        assert sess.run(loss, feed) < 0.5 * first[0]


# -- errors and registration ---------------------------------------------------------------


@pytest.mark.parametrize("cell, x_shape, kernel_shape, bias_shape, h0_shape, match", [
    ("lstm", [3, 2, 2], [5, 8], [8], None, r"kernel shape \(5, 8\).*x shape \(3, 2, 2\)"),
    ("tanh", [3, 2, 2], [4, 3], [3], None, r"kernel shape \(4, 3\).*x shape \(3, 2, 2\)"),
    ("lstm", [3, 2, 2], [4, 6], [6], None, r"kernel shape \(4, 6\).*multiple of 4"),
    ("lstm", [3, 2, 2], [4, 8], [4], None, r"bias shape \(4,\).*kernel shape \(4, 8\)"),
    ("tanh", [3, 2, 2], [4, 2], [2], [3, 2], r"h0 shape \(3, 2\).*x shape \(3, 2, 2\)"),
    ("tanh", [3, 2], [4, 2], [2], None, r"x must be \[time, batch, features\].*\(3, 2\)"),
])
def test_shape_mismatch_names_the_op_and_both_shapes(cell, x_shape, kernel_shape, bias_shape,
                                                     h0_shape, match):
    x = tf.placeholder(tf.float32, x_shape)
    kernel = tf.zeros(kernel_shape)
    bias = tf.zeros(bias_shape)
    h0 = None if h0_shape is None else tf.zeros(h0_shape)
    with pytest.raises(tf.ShapeError, match=r"Rnn \(my_rnn\).*" + match):
        rnn(x, kernel, bias, cell, h0=h0, name="my_rnn")


def test_features_unknown_until_run_time_are_checked_when_fed():
    x = tf.placeholder(tf.float32, [None, None, None])
    h = rnn(x, tf.zeros([5, 8]), tf.zeros([8]), "lstm", name="my_rnn")
    with tf.Session() as sess, pytest.raises(tf.InvalidArgumentError,
                                             match=r"my_rnn.*\(5, 8\).*\(3, 2, 2\)"):
        sess.run(h, {x: np.zeros((3, 2, 2), np.float32)})


def test_mixed_dtypes_are_a_type_error():
    with pytest.raises(TypeError, match="dtype float32 but x.*float64"):
        rnn(tf.zeros([3, 2, 2], tf.float64), tf.zeros([4, 8]), tf.zeros([8]), "lstm")


def test_unknown_cell_and_misplaced_c0_are_value_errors():
    x, kernel, bias = tf.zeros([3, 2, 2]), tf.zeros([4, 2]), tf.zeros([2])
    with pytest.raises(ValueError, match="'tanh', 'lstm'.*'gru'"):
        rnn(x, kernel, bias, "gru")
    with pytest.raises(ValueError, match="c0"):
        rnn(x, kernel, bias, "tanh", c0=tf.zeros([2, 2]))


def test_rnn_is_published_for_configs_and_the_python_api():
    assert FUNCTIONS["rnn"] is rnn
    assert tf.rnn is rnn


# -- tf.nn.rnn_cell and tf.nn.dynamic_rnn ----------------------------------------------------


def test_dynamic_rnn_names_variables_as_tf1():
    # Names printed by TF 2.21 (compat.v1, TF_USE_LEGACY_KERAS=1) for this same program.
    x = tf.placeholder(tf.float32, [None, 5, 3])
    lstm = tf.nn.rnn_cell.BasicLSTMCell(4)
    outputs, state = tf.nn.dynamic_rnn(lstm, x, dtype=tf.float32)
    with tf.variable_scope("enc"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32)
    tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicRNNCell(4), x, dtype=tf.float32, scope="mine")
    assert [v.name for v in tf.global_variables()] == [
        "rnn/basic_lstm_cell/kernel:0", "rnn/basic_lstm_cell/bias:0",
        "enc/rnn/basic_lstm_cell/kernel:0", "enc/rnn/basic_lstm_cell/bias:0",
        "mine/basic_rnn_cell/kernel:0", "mine/basic_rnn_cell/bias:0"]
    assert lstm.kernel.shape.as_list() == [3 + 4, 16] and lstm.bias.shape.as_list() == [16]
    assert outputs.shape.as_list() == [None, 5, 4]
    assert isinstance(state, tf.nn.rnn_cell.LSTMStateTuple)
    assert state.c.shape.as_list() == state.h.shape.as_list() == [None, 4]
    # a built cell keeps its variables; a second cell in the same scope collides, as in TF
    lstm(tf.zeros([2, 3]), lstm.zero_state(2, tf.float32))
    assert len(tf.global_variables()) == 6
    with pytest.raises(ValueError, match="rnn/basic_lstm_cell/kernel already exists"):
        tf.nn.dynamic_rnn(tf.nn.rnn_cell.BasicLSTMCell(4), x, dtype=tf.float32)


PINNED = {"rtol": 1e-9, "atol": 1e-9}  # the literals carry 10 significant digits


@pytest.mark.parametrize("cell, want", [("tanh", TF1_TANH), ("lstm", TF1_LSTM)])
def test_dynamic_rnn_batch_major_matches_tf1(cell, want):
    # The TF1 numbers above, read batch-major: dynamic_rnn transposes in and out.
    x, kernel, bias, h0, c0, m = tf1_fixture(cell)
    xb = tf.constant(x.transpose(1, 0, 2))
    if cell == "lstm":
        rnn_cell = tf.nn.rnn_cell.BasicLSTMCell(2, forget_bias=1.0)
        initial = tf.nn.rnn_cell.LSTMStateTuple(tf.constant(c0), tf.constant(h0))
    else:
        rnn_cell = tf.nn.rnn_cell.BasicRNNCell(2)
        initial = tf.constant(h0)
    outputs, state = tf.nn.dynamic_rnn(rnn_cell, xb, initial_state=initial)
    loss = tf.reduce_sum(outputs * m.transpose(1, 0, 2))
    grads = tf.gradients(loss, [xb, rnn_cell.kernel, rnn_cell.bias])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        rnn_cell.kernel.load(kernel, sess)
        rnn_cell.bias.load(bias, sess)
        out, final, dx, dkernel, dbias = sess.run([outputs, state] + grads)
    np.testing.assert_allclose(out, np.transpose(want["h_all"], (1, 0, 2)), **PINNED)
    np.testing.assert_allclose(dx, np.transpose(want["dx"], (1, 0, 2)), **PINNED)
    np.testing.assert_allclose(dkernel, want["dkernel"], **PINNED)
    np.testing.assert_allclose(dbias, want["dbias"], **PINNED)
    if cell == "lstm":
        np.testing.assert_allclose(final.c, want["c_last"], **PINNED)
        np.testing.assert_allclose(final.h, want["h_all"][-1], **PINNED)
    else:
        np.testing.assert_allclose(final, want["h_all"][-1], **PINNED)


def test_cell_call_is_one_step_of_the_loop():
    v = random_inputs("lstm", time=1)
    lstm = tf.nn.rnn_cell.BasicLSTMCell(3, forget_bias=0.5)
    out, state = lstm(v["x"][0], tf.nn.rnn_cell.LSTMStateTuple(v["c0"], v["h0"]))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias, got_h, got_state = sess.run([lstm.kernel, lstm.bias, out, state])
    want_h, want_c = loop_reference(v["x"], kernel, bias, "lstm", 0.5, h0=v["h0"], c0=v["c0"])
    np.testing.assert_allclose(got_h, want_h[0], rtol=1e-12)
    np.testing.assert_allclose(got_state.h, want_h[0], rtol=1e-12)
    np.testing.assert_allclose(got_state.c, want_c[0], rtol=1e-12)


def test_dynamic_rnn_refuses_what_it_does_not_implement():
    x = tf.zeros([2, 5, 3])
    cell = tf.nn.rnn_cell.BasicLSTMCell(4)
    with pytest.raises(ValueError, match="dtype"):
        tf.nn.dynamic_rnn(cell, x)
    with pytest.raises(TypeError, match="cell must be an instance of RNNCell"):
        tf.nn.dynamic_rnn(object(), x, dtype=tf.float32)
    # a step-by-step cell over steps unknown when the graph is built runs in a while loop
    # now (test_rnn_api.test_a_step_by_step_cell_over_steps_known_only_when_the_graph_runs)


# -- the compiled loops (numba, the ``fast`` extra) ------------------------------------------


def _forward_and_gradient(cell, v, dtype=np.float32, zero_dc=False):
    """Rnn's outputs and RnnGrad's from the op's functions, for upstream gradients of ones
    on h and of twos on c (with ``zero_dc`` none on c, as when nothing reads the cell states)."""
    from engine.ops import rnn as rnn_module

    state = [v["h0"]] if cell == "tanh" else [v["c0"], v["h0"]]
    args = [v[k].astype(dtype) for k in ("x", "kernel", "bias")] + [s.astype(dtype) for s in state]
    attrs = {"cell": cell, "forget_bias": 0.7, "with_state": True}
    outputs = rnn_module._rnn_forward(*args, **attrs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    upstream = [np.ones_like(outputs[0])] + ([2 * np.ones_like(outputs[1])] if cell == "lstm"
                                             and not zero_dc else [])
    return [*outputs, *rnn_module._rnn_grad_forward(*args, *outputs, *upstream, **attrs,
                                                    zero_dc=zero_dc)]


@pytest.mark.parametrize("cell, zero_dc, time", [("tanh", False, 7), ("lstm", False, 7),
                                                 ("lstm", True, 7), ("lstm", True, 0)])
def test_compiled_loops_equal_the_numpy_loops_bit_for_bit(cell, zero_dc, time, monkeypatch):
    """Same float32 results from both loops and the compiled copies around them (the op may
    switch between them at any run) in the same memory layout, with an initial state that is not
    C-contiguous, sizes that fill no SIMD vector evenly, and an empty sequence."""
    from engine.ops import rnn as rnn_module
    from engine.ops import rnn_compiled

    if rnn_compiled.kernels() is None:
        pytest.skip("no compiled loops here (numba, the 'fast' extra, is not installed)")
    v = random_inputs(cell, time=time, batch=5, features=3, hidden=6, seed=3)
    v["h0"] = np.asfortranarray(v["h0"])
    monkeypatch.setattr(rnn_module, "WARM_RUNS", 10 ** 9)
    ran = []
    monkeypatch.setattr(rnn_compiled, "run", lambda name, *a: ran.append(name))
    numpy_results = _forward_and_gradient(cell, v, zero_dc=zero_dc)
    assert ran == []  # the numpy loops ran
    monkeypatch.undo()
    monkeypatch.setattr(rnn_module, "WARM_RUNS", -1)
    compiled_results = _forward_and_gradient(cell, v, zero_dc=zero_dc)
    assert rnn_compiled.kernels() is not None  # no fallback happened on the way
    for a, b in zip(numpy_results, compiled_results, strict=True):
        np.testing.assert_array_equal(a, b)
        # the same layout too: ops reading the outputs may round otherwise for other strides
        assert (a.strides, a.flags.c_contiguous) == (b.strides, b.flags.c_contiguous)


@pytest.mark.parametrize("features", [1, 2, 3, 4])
def test_the_compiled_input_product_gives_blas_bits(features):
    """The input half of the gates for a few features as fma chains (no BLAS packing): numpy's
    BLAS's bits, signed zeros, infinities, NaN and subnormals included; the op takes it."""
    from engine.ops import rnn as rnn_module
    from engine.ops import rnn_compiled

    k = rnn_compiled.kernels()
    if k is None or not k["thin"]:
        pytest.skip("no compiled input product here (numba, or another BLAS)")
    rng = np.random.default_rng(features)
    x = (rng.standard_normal((203, features))
         * 10.0 ** rng.integers(-44, 38, (203, features))).astype(np.float32)
    w = rng.standard_normal((features, 36)).astype(np.float32)
    x[:6, 0] = [-0.0, 0.0, np.inf, -np.inf, np.nan, 1e-45]
    w[0, :3] = [-0.0, 0.0, 1e-40]
    with np.errstate(all="ignore"):
        want = x @ w
        got = rnn_module._input_product(x, w, np.empty((203, 36), np.float32), k)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_without_numba_the_numpy_loops_run(monkeypatch):
    from engine.ops import rnn_compiled

    monkeypatch.setenv("GRADPIPE_NUMBA", "0")
    monkeypatch.setattr(rnn_compiled, "_state", {})
    assert rnn_compiled.kernels() is None
