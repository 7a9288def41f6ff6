"""Variables: construction, get_variable and variable scopes (reuse, AUTO_REUSE), assignments.

Expected names, values and error types are TF1's, checked with tensorflow.compat.v1 (TF 2.21,
/work/tfref) on the same programs.
"""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


def run(fetches, init=True, **kw):
    with tf.Session() as sess:
        if init:
            sess.run(tf.global_variables_initializer())
        return sess.run(fetches, **kw)


# -- tf.Variable ---------------------------------------------------------------------------


def test_variable_dtype_follows_the_initial_value_or_the_dtype_argument():
    assert tf.Variable(3).dtype == tf.int32
    assert tf.Variable([1, 2.5]).dtype == tf.float32
    assert tf.Variable(3, dtype=tf.float64).dtype == tf.float64
    assert tf.Variable(np.zeros(2)).dtype == tf.float64  # numpy keeps its dtype
    assert tf.Variable(1.0, dtype="float32").dtype == tf.float32


def test_variable_parts_are_named_inside_its_own_scope():
    v = tf.Variable(1.0, name="zz")
    assert (v.name, v.initial_value.name, v.initializer.name) == (
        "zz:0", "zz/initial_value:0", "zz/Assign")
    with tf.name_scope("ns"):
        w = tf.Variable(1.0, name="zz")
        w2 = tf.Variable(1.0, name="zz")
    assert (w.name, w.initial_value.name, w2.name) == ("ns/zz:0", "ns/zz/initial_value:0",
                                                        "ns/zz_1:0")


def test_callable_initial_value_is_called_under_the_initializer_scope():
    v = tf.Variable(lambda: tf.constant([1.0, 2.0]), name="cv")
    assert v.initial_value.name == "cv/Initializer/Const:0"
    np.testing.assert_array_equal(run(v), [1.0, 2.0])


def test_variable_ignores_surrounding_control_dependencies():
    c = tf.constant(1.0)
    with tf.control_dependencies([tf.no_op()]):
        v = tf.Variable(c)
    assert v.op.control_inputs == [] and v.initializer.control_inputs == []


def test_shape_argument_must_fit_the_initial_value():
    assert tf.Variable([1.0, 2.0], shape=[2]).shape.as_list() == [2]
    with pytest.raises(ValueError, match=r"\(3,\)"):
        tf.Variable([1.0, 2.0], shape=[3])
    assert tf.Variable([1.0], validate_shape=False).shape.ndims is None


def test_variable_needs_an_initial_value():
    with pytest.raises(ValueError, match="initial_value"):
        tf.Variable()


def test_variable_from_another_variable_initializes_alone_or_together():
    # TF guards reads of other variables in an initial value: an uninitialized one contributes
    # its own initial value (tf.Variable(w * 2) initializes without w's initializer; TF 2.21
    # gives u == [2, 4] here). Initializing all together is a race in TF; the engine reads the
    # fallbacks before any initializer writes, so z == u + 1 == [3, 5] deterministically.
    w = tf.Variable([1.0, 2.0], name="w")
    u = tf.Variable(w * 2, name="u")
    z = tf.Variable(u + 1, name="z")
    with tf.Session() as sess:
        sess.run(u.initializer)
        np.testing.assert_array_equal(sess.run(u), [2.0, 4.0])
        with pytest.raises(tf.FailedPreconditionError, match="w"):
            sess.run(w)  # u's initializer did not initialize w
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(z), [3.0, 5.0])
        sess.run(tf.assign(w, [5.0, 5.0]))
        sess.run(u.initializer)  # w is initialized now: its current value counts
        np.testing.assert_array_equal(sess.run(u), [10.0, 10.0])


def test_initialized_value_reads_the_value_or_falls_back_without_initializing():
    w = tf.Variable([1.0, 2.0])
    doubled = w.initialized_value() * 2
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(doubled), [2.0, 4.0])
        assert not sess.run(tf.is_variable_initialized(w))
        sess.run(w.initializer)
        sess.run(tf.assign(w, [3.0, 3.0]))
        np.testing.assert_array_equal(sess.run(doubled), [6.0, 6.0])
        assert sess.run(tf.is_variable_initialized(w))


def test_load_and_eval_through_the_default_session():
    v = tf.Variable([1.0, 2.0])
    with tf.Session() as sess:
        sess.run(v.initializer)
        v.load([7.0, 8.0])
        np.testing.assert_array_equal(v.eval(), [7.0, 8.0])


# -- assignments ---------------------------------------------------------------------------


def test_assign_ops_return_the_new_value():
    v = tf.Variable(1.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(tf.assign_add(v, 2.0)) == 3.0
        assert sess.run(tf.assign_sub(v, 0.5)) == 2.5
        assert sess.run(tf.assign(v, 10.0)) == 10.0
        assert sess.run(v.assign(4.0)) == 4.0
        assert sess.run(v.assign_add(1.0)) == 5.0
        assert sess.run(v.assign_sub(2.0)) == 3.0


def test_assign_checks_dtype_and_shape_at_build_time():
    v = tf.Variable([1.0, 2.0])
    with pytest.raises(ValueError, match=r"\(3,\)"):
        tf.assign(v, [1.0, 2.0, 3.0])
    with pytest.raises(TypeError):
        tf.assign(v, tf.constant([1, 2]))
    with pytest.raises(TypeError, match="variable"):  # TF: AttributeError
        tf.assign(tf.constant(1.0), 2.0)


def test_assign_add_before_initialization_names_the_variable():
    v = tf.Variable(1.0, name="counter")
    with tf.Session() as sess, pytest.raises(tf.FailedPreconditionError, match="counter"):
        sess.run(tf.assign_add(v, 1.0))


def test_assign_of_an_uninitialized_variable_initializes_it():
    v = tf.Variable(1.0)
    with tf.Session() as sess:
        assert sess.run(tf.assign(v, 5.0)) == 5.0
        assert sess.run(v) == 5.0


def test_control_dependencies_order_an_update_before_a_read():
    v = tf.Variable(1.0)
    inc = tf.assign_add(v, 1.0)
    with tf.control_dependencies([inc]):
        after = v * 1.0
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(after) == 2.0
        assert sess.run(after) == 3.0


def test_group_runs_all_updates():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    step = tf.group(tf.assign_add(a, 1.0), tf.assign_add(b, 10.0))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(step) is None
        assert sess.run([a, b]) == [2.0, 12.0]


def test_tf_tuple_gates_values_on_all_inputs():
    # TF: the tuple's outputs wait for the control inputs, which run along with it; the value
    # itself (v * 1.0) is read before the update, as any read that does not depend on it.
    v = tf.Variable(1.0)
    inc = tf.assign_add(v, 1.0)
    gated = tf.tuple([v * 1.0], control_inputs=[inc])
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(gated) == [1.0]
        assert sess.run(v) == 2.0


# -- initializers --------------------------------------------------------------------------


def test_initializer_helpers():
    a, b = tf.Variable(1.0), tf.Variable(2.0)
    with tf.Session() as sess:
        sess.run(tf.variables_initializer([a]))
        assert sess.run(a) == 1.0
        with pytest.raises(tf.FailedPreconditionError, match="Variable_1"):
            sess.run(b)
        sess.run(tf.initialize_all_variables())
        assert sess.run(b) == 2.0
        assert sess.run(tf.variables_initializer([])) is None
    assert tf.global_variables_initializer().type == "NoOp"


# -- get_variable and variable_scope -------------------------------------------------------


def test_get_variable_defaults_and_initializer_names():
    w = tf.get_variable("w", [3, 4])
    i = tf.get_variable("i", [2], dtype=tf.int32)
    assert (w.dtype, w.shape.as_list(), i.dtype) == (tf.float32, [3, 4], tf.int32)
    assert w.initial_value.name.startswith("w/Initializer/")
    w_val, i_val = run([w, i])
    limit = np.sqrt(6.0 / (3 + 4))  # glorot_uniform
    assert np.all(np.abs(w_val) <= limit) and w_val.std() > 0
    np.testing.assert_array_equal(i_val, [0, 0])  # zeros for non-floats


def test_get_variable_with_constant_initializers():
    a = tf.get_variable("a", initializer=tf.constant([1.0, 2.0]))
    b = tf.get_variable("b", initializer=[1.0, 2.0, 3.0])
    c = tf.get_variable("c", initializer=np.ones(3))
    d = tf.get_variable("d", [2], initializer=tf.constant_initializer(3.0))
    e = tf.get_variable("e", [2], initializer=tf.zeros_initializer)  # a class is instantiated
    assert (a.shape.as_list(), b.shape.as_list(), c.dtype) == ([2], [3], tf.float64)
    vals = run([a, b, d, e])
    np.testing.assert_array_equal(vals[2], [3.0, 3.0])
    np.testing.assert_array_equal(vals[3], [0.0, 0.0])
    with pytest.raises(ValueError, match="do not specify shape"):
        tf.get_variable("f", shape=[2], initializer=tf.constant([1.0, 2.0]))
    with pytest.raises(ValueError, match="don't match"):
        tf.get_variable("g", initializer=tf.constant([1.0]), dtype=tf.float64)
    with pytest.raises(ValueError, match="shape"):
        tf.get_variable("h")


def test_get_variable_refuses_to_recreate_without_reuse():
    tf.get_variable("w", [1])
    with pytest.raises(ValueError, match="already exists"):
        tf.get_variable("w", [1])


def test_reuse_true_shares_and_checks_shape_and_dtype():
    with tf.variable_scope("s"):
        w = tf.get_variable("w", [2])
    with tf.variable_scope("s", reuse=True):
        assert tf.get_variable("w") is w
        assert tf.get_variable("w", [2]) is w
        with pytest.raises(ValueError, match=r"specified shape \(3,\) and found shape \(2,\)"):
            tf.get_variable("w", [3])
        with pytest.raises(ValueError, match="specified dtype float64"):
            tf.get_variable("w", [2], dtype=tf.float64)
        with pytest.raises(ValueError, match="does not exist"):
            tf.get_variable("missing", [1])


def test_auto_reuse_creates_then_shares():
    def layer():
        with tf.variable_scope("layer", reuse=tf.AUTO_REUSE):
            return tf.get_variable("w", [1])

    assert layer() is layer()
    assert [v.name for v in tf.global_variables()] == ["layer/w:0"]


def test_reuse_is_inherited_and_cannot_be_switched_off_inside():
    with tf.variable_scope("top"):
        tf.get_variable("k", [1])
        tf.get_variable_scope().reuse_variables()
        assert tf.get_variable("k", [1]).name == "top/k:0"
        with tf.variable_scope("child", reuse=False):
            assert tf.get_variable_scope().reuse is True
    assert tf.get_variable_scope().reuse is False


def test_default_name_scopes_are_made_unique():
    names = []
    for _ in range(2):
        with tf.variable_scope(None, default_name="layer"):
            names.append((tf.get_variable("w", [1]).name, tf.constant(0.0).name))
    assert names == [("layer/w:0", "layer/Const:0"), ("layer_1/w:0", "layer_1/Const:0")]
    with pytest.raises(ValueError, match="reuse=True"):
        with tf.variable_scope(None, default_name="x", reuse=True):
            pass


def test_reentering_a_scope_object_keeps_its_name_and_reuse():
    with tf.variable_scope("r") as scope:
        w = tf.get_variable("w", [1])
    scope.reuse_variables()
    with tf.variable_scope("elsewhere"):
        with tf.variable_scope(scope) as again:
            assert again.name == "r" and again.reuse is True
            assert tf.get_variable("w") is w
            assert tf.constant(0.0).name == "elsewhere/r/Const:0"


def test_scope_initializer_and_dtype_apply_to_new_variables():
    with tf.variable_scope("init", initializer=tf.constant_initializer(7.0)):
        a = tf.get_variable("a", [2])
    with tf.variable_scope("dt", dtype=tf.float64):
        b = tf.get_variable("b", [2], initializer=tf.zeros_initializer())
    assert b.dtype == tf.float64
    np.testing.assert_array_equal(run(a), [7.0, 7.0])


def test_get_variable_collections_and_trainable():
    a = tf.get_variable("a", [1], trainable=False)
    b = tf.get_variable("b", [1], collections=["mine", tf.GraphKeys.GLOBAL_VARIABLES])
    assert tf.trainable_variables() == [b]
    assert tf.global_variables() == [a, b] and tf.get_collection("mine") == [b]


def test_regularizer_adds_to_regularization_losses():
    w = tf.get_variable("w", initializer=[1.0, 2.0], regularizer=lambda v: tf.reduce_sum(v * v))
    (loss,) = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert loss.name.startswith("w/Regularizer/")
    assert run(loss) == 5.0 and w.name == "w:0"


def test_variable_from_an_initializer_and_a_shape():
    v = tf.Variable(tf.constant_initializer(2.0), shape=[2, 2], name="k")
    z = tf.Variable(tf.zeros_initializer, shape=[3], dtype=tf.float64)
    assert v.initial_value.name.startswith("k/Initializer/") and z.dtype == tf.float64
    vals = run([v, z])
    np.testing.assert_array_equal(vals[0], np.full((2, 2), 2.0))
    np.testing.assert_array_equal(vals[1], np.zeros(3))
    with pytest.raises(ValueError, match="shape"):
        tf.Variable(tf.ones_initializer())
