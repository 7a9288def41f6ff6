"""The seed snippets that use optimizers and clipping (seeds 000, 001, 003, 004), run as written.

Each snippet is the seed's text with ``import engine as tf``, its indentation restored and obvious
typos fixed (``tf.tf.train``, ``tf.Seesion``, ``session.run``, ``grad_vals``); where a seed leaves
the model out (``loss = ...``, ``cost``) a small one is defined before it. Expected numbers are
what the seed prints, or TF1's own numbers for the same program (tf1_train_reference.SEEDS,
derived by tf_reference/derive_train.py).
"""

from __future__ import annotations

import contextlib
import io
import textwrap

import numpy as np
import pytest
import tf1_train_reference as ref

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


def run_snippet(source: str, namespace=None):
    """Exec a snippet as a script; return (its globals, what it printed)."""
    out = io.StringIO()
    namespace = dict(namespace or {})
    with contextlib.redirect_stdout(out):
        exec(compile(textwrap.dedent(source), "<seed snippet>", "exec"), namespace)
    return namespace, out.getvalue()


def values(structure):
    """Printed numpy scalars -> plain floats, for comparing with the seed's printout."""
    if isinstance(structure, list | tuple):
        return type(structure)(values(s) for s in structure)
    return float(structure)


# -- seeds 000 and 004 --------------------------------------------------------------------

MINIMIZE = """
import engine as tf
w = tf.Variable(0.0)
loss = tf.square(w - 3.0)
opt = tf.train.GradientDescentOptimizer(learning_rate=0.1)
train_op = opt.minimize(loss)
init = tf.initialize_all_variables()
with tf.Session() as sess:
    sess.run(init)
    for step in range(10):
        sess.run(train_op)
    final = sess.run(w)
"""


def test_minimize_snippet_trains():
    ns, _ = run_snippet(MINIMIZE)
    # w <- w - 0.1 * 2 (w - 3): the distance to 3 shrinks by 0.8 per step
    assert ns["final"] == pytest.approx(3 * (1 - 0.8 ** 10), rel=1e-6)


COMPUTE_GRADIENTS = """
import engine as tf
x = tf.Variable(initial_value=50., dtype='float32')
w = tf.Variable(initial_value=10., dtype='float32')
y = w*x

opt = tf.train.GradientDescentOptimizer(0.1)
grad = opt.compute_gradients(y, [w,x])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(grad))
    result = sess.run(grad)
"""


def test_compute_gradients_snippet_gives_the_seeds_pairs():
    ns, printed = run_snippet(COMPUTE_GRADIENTS)
    assert values(ns["result"]) == [(50.0, 10.0), (10.0, 50.0)]
    assert printed.count("50.0") == 2 and printed.count("10.0") == 2


COMPUTE_GRADIENTS_REPR = """
import engine as tf
with tf.Graph().as_default():
    x = tf.Variable(initial_value=3., dtype='float32')
    w = tf.Variable(initial_value=4., dtype='float32')
    y = w*x

    grads = tf.gradients(y, [w])
    print(grads)

    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_vals = opt.compute_gradients(y, [w])
    print(grads_vals)
"""


def test_compute_gradients_pairs_print_tensor_and_variable():
    ns, printed = run_snippet(COMPUTE_GRADIENTS_REPR)
    second = printed.splitlines()[1]
    assert second.startswith("[(<tf.Tensor 'gradients_1/")
    assert second.endswith("shape=() dtype=float32>, <tf.Variable 'Variable_1:0' shape=() "
                           "dtype=float32_ref>)]")


CLIP_BY_NORM_EXAMPLE = """
import engine as tf
with tf.Graph().as_default():
    x = tf.Variable(initial_value=3., dtype='float32')
    w = tf.Variable(initial_value=4., dtype='float32')
    y = w*x

    opt = tf.train.GradientDescentOptimizer(0.1)
    grads_vals = opt.compute_gradients(y, [w])
    for i, (g, v) in enumerate(grads_vals):
        if g is not None:
            grads_vals[i] = (tf.clip_by_norm(g, 5), v)  # clip gradients
    train_op = opt.apply_gradients(grads_vals)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        print(sess.run(grads_vals))
        print(sess.run([x,w,y]))
        pairs = sess.run(grads_vals)
        xwy = sess.run([x,w,y])
"""


def test_clip_by_norm_example_prints_the_seeds_numbers():
    ns, printed = run_snippet(CLIP_BY_NORM_EXAMPLE)
    assert values(ns["pairs"]) == [(3.0, 4.0)]
    assert values(ns["xwy"]) == [3.0, 4.0, 12.0]
    assert len(printed.splitlines()) == 2


# -- seed 001: four ways to clip -----------------------------------------------------------

MLP = """
import engine as tf
X = tf.constant([[0.5, -1.0], [1.5, 2.0], [-0.5, 0.25], [1.0, 1.0]])
Y = tf.constant([[1.0], [-2.0], [0.5], [3.0]])
W1 = tf.Variable([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], name="W1")
b1 = tf.Variable([0.05, -0.05, 0.1], name="b1")
W2 = tf.Variable([[0.7], [-0.8], [0.9]], name="W2")
b2 = tf.Variable([0.2], name="b2")
h = tf.tanh(tf.matmul(X, W1) + b1)
cost = tf.reduce_mean(tf.square(tf.matmul(h, W2) + b2 - 10.0 * Y))
loss = cost
learning_rate = 0.01
"""
UNUSED = 'unused = tf.Variable([1.0, 2.0], name="unused")\n'
TRAIN_3 = """
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(TRAIN)
    final = sess.run([W1, b1, W2, b2])
"""


def check_final(ns, key, rtol=2e-5):
    for a, e in zip(ns["final"], ref.SEEDS[key]["final"]):
        np.testing.assert_allclose(a, np.asarray(e, np.float32), rtol=rtol, atol=1e-6)


def test_answer0_clip_by_value_then_apply():
    ns, _ = run_snippet(MLP + """
optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
gvs = optimizer.compute_gradients(cost)
capped_gvs = [(tf.clip_by_value(grad, -1., 1.), var) for grad, var in gvs]
train_op = optimizer.apply_gradients(capped_gvs)
""" + TRAIN_3.replace("TRAIN", "train_op"))
    check_final(ns, "answer0_clip_by_value")


def test_answer1_clip_by_global_norm():
    ns, _ = run_snippet(MLP + """
optimizer = tf.train.AdamOptimizer(1e-3)
gradients, variables = zip(*optimizer.compute_gradients(loss))
gradients, _ = tf.clip_by_global_norm(gradients, 5.0)
optimize = optimizer.apply_gradients(zip(gradients, variables))
""" + TRAIN_3.replace("TRAIN", "optimize"))
    check_final(ns, "answer1_clip_by_global_norm")


def test_answer1_clip_by_norm_each_with_a_none_gradient():
    ns, _ = run_snippet(MLP + UNUSED + """
optimizer = tf.train.AdamOptimizer(1e-3)
gradients, variables = zip(*optimizer.compute_gradients(loss))
gradients = [
    None if gradient is None else tf.clip_by_norm(gradient, 5.0)
    for gradient in gradients]
optimize = optimizer.apply_gradients(zip(gradients, variables))
""" + TRAIN_3.replace("TRAIN", "optimize"))
    assert ns["gradients"][-1] is None
    check_final(ns, "answer1_clip_by_norm_each")


def test_answer2_my_capper():
    ns, _ = run_snippet(MLP + """
MyCapper = lambda g: tf.clip_by_norm(g, 1.0)
# Create an optimizer.
opt = GradientDescentOptimizer(learning_rate=0.1)
# Compute the gradients for a list of variables.
grads_and_vars = opt.compute_gradients(loss, [W1, b1, W2, b2])
# grads_and_vars is a list of tuples (gradient, variable). Do whatever you
# need to the 'gradient' part, for example cap them, etc.
capped_grads_and_vars = [(MyCapper(gv[0]), gv[1]) for gv in grads_and_vars]
# Ask the optimizer to apply the capped gradients.
train = opt.apply_gradients(capped_grads_and_vars)
""" + TRAIN_3.replace("TRAIN", "train"),
        {"GradientDescentOptimizer": tf.train.GradientDescentOptimizer})
    check_final(ns, "answer2_mycapper")


def test_answer4_clip_gradients_by_norm_wrapper_clips_by_the_global_norm():
    ns, _ = run_snippet(MLP + """
original_optimizer = tf.train.AdamOptimizer(learning_rate=learning_rate)
optimizer = tf.contrib.estimator.clip_gradients_by_norm(original_optimizer, clip_norm=5.0)
train_op = optimizer.minimize(loss)
""" + TRAIN_3.replace("TRAIN", "train_op"))
    check_final(ns, "answer4_clip_gradients_by_norm")
    assert ns["optimizer"].get_name() == "ClipByNormAdam"
    assert ns["optimizer"].get_slot(ns["W1"], "m") is ns["original_optimizer"].get_slot(ns["W1"], "m")
    assert ns["optimizer"].get_slot_names() == ["m", "v"]


def test_clip_gradients_by_norm_needs_an_optimizer():
    with pytest.raises(ValueError, match="optimizer must be an instance of tf.train.Optimizer"):
        tf.contrib.estimator.clip_gradients_by_norm("adam", 5.0)


# -- seed 003: slots and two optimizers over collections ------------------------------------

TWO_OPTIMIZERS = """
import engine as tf
X = tf.constant([[0.5, -1.0], [1.5, 2.0], [-0.5, 0.25], [1.0, 1.0]])
Y = tf.constant([[1.0], [-2.0], [0.5], [3.0]])
W1 = tf.Variable([[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]], name="W1")
b1 = tf.Variable([0.05, -0.05, 0.1], name="b1")
W2 = tf.Variable([[0.7], [-0.8], [0.9]], name="W2")
b2 = tf.Variable([0.2], name="b2")
tf.add_to_collection("encoder", W1)
tf.add_to_collection("encoder", b1)
tf.add_to_collection("head", W2)
tf.add_to_collection("head", b2)
h = tf.tanh(tf.matmul(X, W1) + b1)
loss = tf.reduce_mean(tf.square(tf.matmul(h, W2) + b2 - Y))

opt1 = tf.train.AdamOptimizer(0.05)
opt2 = tf.train.GradientDescentOptimizer(0.1)
train_op = tf.group(opt1.minimize(loss, var_list=tf.get_collection("encoder")),
                    opt2.minimize(loss, var_list=tf.get_collection("head")))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    for _ in range(3):
        sess.run(train_op)
    final = sess.run(tf.get_collection("encoder") + tf.get_collection("head"))
    m_W1 = sess.run(opt1.get_slot(W1, "m"))
"""


def test_two_optimizers_over_collections_grouped():
    # Every gradient comes from the values before the step's updates (TF1's own order between
    # two minimize ops is unspecified; the reference computes all gradients first).
    ns, _ = run_snippet(TWO_OPTIMIZERS)
    expected = ref.SEEDS["seed003_two_optimizers"]
    check_final(ns, "seed003_two_optimizers")
    np.testing.assert_allclose(ns["m_W1"], np.asarray(expected["m_W1"], np.float32), rtol=2e-5)
    opt1, W1, b1, W2 = ns["opt1"], ns["W1"], ns["b1"], ns["W2"]
    assert [opt1.get_slot(v, "m").name for v in (W1, b1)] + \
        [opt1.get_slot(v, "v").name for v in (W1, b1)] == expected["slots"]
    assert opt1.get_slot(W2, "m") is None
    assert ns["opt2"].get_slot_names() == []


ADAGRAD_DECAY_SLOTS = """
import engine as tf
with tf.variable_scope("scope_emb/input_from_feature_columns/word_embedding"):
    weights = tf.get_variable("weights", shape=[1000, 10])
loss = tf.reduce_sum(tf.square(weights))
global_step = tf.train.get_or_create_global_step()
with tf.variable_scope("OptimizeLoss"):
    opt = tf.train.AdagradDecayOptimizer(0.1, global_step)
    train_op = opt.minimize(loss, global_step=global_step)
print(opt._slots)
"""


def test_adagrad_decay_slots_are_keyed_and_named_as_the_seed_shows():
    ns, printed = run_snippet(ADAGRAD_DECAY_SLOTS)
    slots, graph = ns["opt"]._slots, tf.get_default_graph()
    key = (graph, "scope_emb/input_from_feature_columns/word_embedding/weights")
    assert sorted(slots) == ["accumulator", "accumulator_decay_power"]
    acc, power = slots["accumulator"][key], slots["accumulator_decay_power"][key]
    assert repr(acc) == ("<tf.Variable 'OptimizeLoss/scope_emb/input_from_feature_columns/"
                         "word_embedding/weights/AdagradDecay:0' shape=(1000, 10) "
                         "dtype=float32_ref>")
    assert repr(power) == ("<tf.Variable 'OptimizeLoss/scope_emb/input_from_feature_columns/"
                           "word_embedding/weights/AdagradDecay_1:0' shape=(1000, 10) "
                           "dtype=int64_ref>")
    assert "'accumulator'" in printed and "'accumulator_decay_power'" in printed


ADAGRAD_SLOT = """
import engine as tf
v = tf.Variable([[1.0, 2.0], [3.0, 4.0]], name="v")
opt = tf.train.AdagradOptimizer(0.1)
opt.minimize(tf.reduce_sum(v))
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    acc = sess.run(opt.get_slot(v, "accumulator"))
"""


def test_adagrad_accumulator_slot_starts_at_its_initial_value():
    ns, _ = run_snippet(ADAGRAD_SLOT)
    assert ns["opt"].get_slot(ns["v"], "accumulator").name == "v/Adagrad:0"
    np.testing.assert_array_equal(ns["acc"], np.full((2, 2), 0.1, np.float32))
