"""Graphs: default graphs, TF-style names and scopes, collections, control dependencies.

Expected names and messages are TF1's, checked with tensorflow.compat.v1 (TF 2.21, /work/tfref).
"""

from __future__ import annotations

import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


# -- default graphs ------------------------------------------------------------------------


def test_as_default_routes_new_ops_to_that_graph_and_restores_the_outer_one():
    outer = tf.get_default_graph()
    g = tf.Graph()
    with g.as_default() as entered:
        assert entered is g and tf.get_default_graph() is g
        c = tf.constant(1.0)
    assert c.graph is g and tf.get_default_graph() is outer
    assert c.op in g.get_operations() and c.op not in outer.get_operations()


def test_reset_default_graph_replaces_the_global_graph_but_not_inside_a_graph_context():
    old = tf.get_default_graph()
    tf.constant(1.0)
    tf.reset_default_graph()
    assert tf.get_default_graph() is not old and tf.get_default_graph().get_operations() == []
    with tf.Graph().as_default(), pytest.raises(AssertionError, match="nested graphs"):
        tf.reset_default_graph()


def test_ops_from_two_graphs_cannot_be_combined():
    a = tf.constant(1.0)
    with tf.Graph().as_default():
        b = tf.constant(2.0)
    with pytest.raises(ValueError, match="same graph"):
        a + b


def test_finalized_graph_rejects_new_ops():
    g = tf.Graph()
    g.finalize()
    with g.as_default(), pytest.raises(RuntimeError, match="finalized"):
        tf.constant(1.0)


# -- names ---------------------------------------------------------------------------------


def test_op_names_are_made_unique_with_numeric_suffixes():
    names = [tf.constant(1.0).name, tf.constant(1.0).name, tf.constant(1.0, name="a").name,
             tf.constant(1.0, name="a").name, tf.constant(1.0, name="a_1").name,
             tf.constant(1.0, name="A").name]
    # TF: 'a_1' is taken by the second 'a', so an explicit 'a_1' becomes 'a_1_1'; names are
    # unique case-insensitively ('A' -> 'A_2').
    assert names == ["Const:0", "Const_1:0", "a:0", "a_1:0", "a_1_1:0", "A_2:0"]


def test_variables_are_named_variable_variable_1_and_so_on():
    assert [tf.Variable(0.0).name for _ in range(3)] == ["Variable:0", "Variable_1:0",
                                                         "Variable_2:0"]


def test_name_scope_prefixes_and_uniquifies():
    with tf.name_scope("block") as scope:
        assert scope == "block/"
        c = tf.constant(0.0)
        v = tf.Variable(1.0)
    with tf.name_scope("block"):
        d = tf.constant(0.0)
    with tf.name_scope("block/"):  # a trailing slash re-enters the exact scope
        e = tf.constant(0.0)
    assert (c.name, v.name, d.name, e.name) == ("block/Const:0", "block/Variable:0",
                                                 "block_1/Const:0", "block/Const_1:0")


def test_name_scope_none_or_empty_returns_to_the_top_level():
    with tf.name_scope("outer"):
        with tf.name_scope(None):
            top = tf.constant(0.0)
        with tf.name_scope(""):
            top2 = tf.constant(0.0)
        inner = tf.constant(0.0)
    assert (top.name, top2.name, inner.name) == ("Const:0", "Const_1:0", "outer/Const:0")
    assert tf.get_default_graph().get_name_scope() == ""


def test_nested_name_scopes_and_get_name_scope():
    with tf.name_scope("a"), tf.name_scope("b"):
        assert tf.get_default_graph().get_name_scope() == "a/b"
        assert tf.identity(tf.constant(1.0), name="out").name == "a/b/out:0"


def test_variable_scope_names_variables_and_ops():
    with tf.variable_scope("encoder"):
        w = tf.get_variable("W", shape=[2, 3])
        v = tf.Variable(1.0, name="V")
        m = w * 2.0
    assert (w.name, v.name, w.op.name, w.initializer.name) == (
        "encoder/W:0", "encoder/V:0", "encoder/W", "encoder/W/Assign")
    assert m.name.startswith("encoder/")
    with tf.variable_scope("encoder"):  # re-opened: same variable prefix, new name scope
        assert tf.constant(0.0).name == "encoder_1/Const:0"
        assert tf.get_variable_scope().name == "encoder"


def test_get_variable_ignores_name_scopes_but_tf_variable_does_not():
    with tf.name_scope("ns"):
        g = tf.get_variable("G", shape=[1])
        v = tf.Variable(3.0)
    assert (g.name, v.name) == ("G:0", "ns/Variable:0")
    with tf.variable_scope("vs"), tf.name_scope("inner"):
        assert tf.Variable(1.0, name="x").name == "vs/inner/x:0"
        assert tf.get_variable("y", [1]).name == "vs/y:0"


def test_tensor_repr_and_str_follow_tf():
    p = tf.placeholder(tf.float32, [None, 2], name="x")
    v = tf.Variable(1.0)
    assert repr(p) == "<tf.Tensor 'x:0' shape=(?, 2) dtype=float32>"
    assert str(p) == 'Tensor("x:0", shape=(?, 2), dtype=float32)'
    assert repr(v) == str(v) == "<tf.Variable 'Variable:0' shape=() dtype=float32_ref>"
    assert repr(tf.constant([1.0, 2.0])) == "<tf.Tensor 'Const:0' shape=(2,) dtype=float32>"


def test_lookup_by_name():
    g = tf.get_default_graph()
    c = tf.constant(1.0, name="c")
    assert g.get_tensor_by_name("c:0") is c
    assert g.get_operation_by_name("c") is c.op
    with pytest.raises(KeyError, match="does not exist"):
        g.get_tensor_by_name("nope:0")
    with pytest.raises(KeyError, match="does not exist"):
        g.get_tensor_by_name("c:1")
    with pytest.raises(ValueError, match="Operation name"):
        g.get_tensor_by_name("c")


def test_static_shapes_with_unknown_dims():
    p = tf.placeholder(tf.float32, [None, 3])
    assert p.shape.as_list() == [None, 3] and p.get_shape().ndims == 2
    assert not p.shape.is_fully_defined()
    assert tf.placeholder(tf.float32).shape.ndims is None
    assert (p * 2.0).shape.as_list() == [None, 3]
    with pytest.raises(TypeError):
        bool(p)


# -- collections ---------------------------------------------------------------------------


def test_graph_keys_have_tf_values():
    assert (tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.TRAINABLE_VARIABLES,
            tf.GraphKeys.LOCAL_VARIABLES, tf.GraphKeys.GLOBAL_STEP, tf.GraphKeys.UPDATE_OPS,
            tf.GraphKeys.LOSSES, tf.GraphKeys.REGULARIZATION_LOSSES, tf.GraphKeys.TRAIN_OP) == (
        "variables", "trainable_variables", "local_variables", "global_step", "update_ops",
        "losses", "regularization_losses", "train_op")


def test_variables_land_in_global_and_trainable_collections():
    a = tf.Variable(1.0, name="a")
    b = tf.Variable(1.0, name="b", trainable=False)
    c = tf.Variable(1.0, name="c", collections=["mine"])
    assert tf.global_variables() == [a, b]
    assert tf.trainable_variables() == [a, c]  # trainable joins the given collections
    assert tf.get_collection("mine") == [c]
    assert tf.get_collection(tf.GraphKeys.TRAINABLE_VARIABLES) == [a, c]


def test_get_collection_scope_filters_names_with_re_match():
    with tf.variable_scope("encoder"):
        e = tf.get_variable("W", [1])
    with tf.variable_scope("decoder"):
        d = tf.get_variable("W", [1])
    x = tf.get_variable("encoder_free", [1])
    key = tf.GraphKeys.GLOBAL_VARIABLES
    assert tf.get_collection(key, "encoder") == [e, x]  # re.match: a prefix, not a scope
    assert tf.get_collection(key, "encoder/") == [e]
    assert tf.get_collection(key, ".*W") == [e, d]  # a regular expression
    assert tf.get_collection(key, "W") == []  # match anchors at the start
    assert tf.trainable_variables("decoder") == [d]


def test_get_collection_returns_a_copy_and_skips_unnamed_items_when_scoped():
    tf.add_to_collection("stuff", 3)
    c = tf.constant(1.0, name="layer_c")
    tf.add_to_collections(["stuff", "other"], c)
    items = tf.get_collection("stuff")
    items.append("x")
    assert tf.get_collection("stuff") == [3, c]
    assert tf.get_collection("stuff", "layer") == [c]
    assert tf.get_collection("missing") == []
    ref = tf.get_collection_ref("stuff")
    ref.append(4)
    assert tf.get_collection("stuff") == [3, c, 4]


# -- control dependencies ------------------------------------------------------------------


def test_control_dependencies_attach_to_new_ops_and_nest():
    v = tf.Variable(1.0)
    a, b = tf.assign(v, 2.0), tf.assign(v, 3.0)
    with tf.control_dependencies([a]):
        x = tf.identity(v)
        with tf.control_dependencies([b.op]):
            y = tf.identity(v)
        with tf.control_dependencies(None):
            z = tf.identity(v)
    assert x.op.control_inputs == [a.op]
    assert set(y.op.control_inputs) == {a.op, b.op}
    assert z.op.control_inputs == []


def test_control_dependencies_skip_data_inputs_and_dominated_ops():
    c = tf.constant(1.0)
    v = tf.Variable(1.0)
    with tf.control_dependencies([c]):
        d = tf.identity(c)  # c is already a data input
    with tf.control_dependencies([v.initializer]):
        f = c + 0.0  # the constant 0.0 is made inside and carries the dependency
    assert d.op.control_inputs == []
    assert f.op.control_inputs == []
    assert f.op.inputs[1].op.control_inputs == [v.initializer]


def test_control_dependencies_reject_non_graph_elements():
    with pytest.raises(TypeError, match="int"):
        with tf.control_dependencies([3]):
            pass


def test_group_is_a_noop_after_its_inputs():
    v = tf.Variable(1.0)
    a, b = tf.assign(v, 2.0), tf.assign_add(v, 1.0)
    g = tf.group(a, b, name="updates")
    assert g.type == "NoOp" and g.name == "updates"
    assert set(g.control_inputs) == {a.op, b.op}
    assert tf.group().name == "group_deps"


def test_invalid_names_are_rejected_as_in_tf():
    for bad in ("bad:name", "has space", "_x"):
        with pytest.raises(ValueError, match="not a valid"):
            tf.constant(1.0, name=bad)
    with pytest.raises(ValueError, match="not a valid"):
        tf.Variable(1.0, name="v:0")
    with tf.name_scope("s"):  # inside a scope a leading underscore is fine
        assert tf.constant(1.0, name="_x").name == "s/_x:0"
    assert tf.constant(1.0, name="a-b.c").name == "a-b.c:0"


def test_global_default_graph_is_shared_by_threads_but_graph_contexts_are_not():
    import threading

    main_default = tf.get_default_graph()
    seen = {}
    inner = tf.Graph()

    def worker():
        seen["default"] = tf.get_default_graph()

    with inner.as_default():
        t = threading.Thread(target=worker)
        t.start()
        t.join()
    assert seen["default"] is main_default
