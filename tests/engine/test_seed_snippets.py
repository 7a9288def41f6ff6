"""The engine-only code snippets of the seed documents (../shared/seeds/), run as written.

Each snippet is the seed's text with its import changed to ``import engine as tf`` and its
indentation restored (the blog pages lost it); it runs through ``exec`` with stdout captured, and
the test checks what it printed against what the seed says TF printed. Snippets that need an
optimizer are covered with the optimizers' tests.
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap

import numpy as np
import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


def run_snippet(source: str):
    """Exec a snippet as a script; return (its globals, what it printed)."""
    out = io.StringIO()
    namespace: dict = {}
    with contextlib.redirect_stdout(out):
        exec(compile(textwrap.dedent(source), "<seed snippet>", "exec"), namespace)
    return namespace, out.getvalue()


# 000 / 004: tf.gradients returns symbolic tensors, printed in TF's repr format.
GRADIENTS_REPR = """
import engine as tf
with tf.Graph().as_default():
    x = tf.Variable(initial_value=3., dtype='float32')
    w = tf.Variable(initial_value=4., dtype='float32')
    y = w*x

    grads = tf.gradients(y, [w])
    print(grads)
"""


def test_gradients_print_like_tf_tensors():
    ns, printed = run_snippet(GRADIENTS_REPR)
    # The seed prints [<tf.Tensor 'gradients/mul_grad/Mul:0' shape=() dtype=float32>]; the op
    # inside mul_grad may be named differently, the format and the scope must match.
    assert re.fullmatch(r"\[<tf\.Tensor 'gradients/mul_grad/\w+:0' shape=\(\) dtype=float32>\]\n",
                        printed), printed
    assert repr(ns["w"]) == "<tf.Variable 'Variable_1:0' shape=() dtype=float32_ref>"


# 002: the gradient of matmul(w1, [[9], [10]]) with respect to w1 is [[9, 10]].
MATMUL_GRADIENT = """
import engine as tf
w1=tf.Variable([[1,2]],dtype=tf.float32)
w2=tf.Variable([[3,4]],dtype=tf.float32)
y=tf.matmul(w1,tf.convert_to_tensor([[9],[10]],dtype=tf.float32))
grads=tf.gradients(y,[w1])
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("梯度为:",sess.run(grads))
"""


def test_matmul_gradient_snippet():
    _, printed = run_snippet(MATMUL_GRADIENT)
    assert printed == "梯度为: [array([[ 9., 10.]], dtype=float32)]\n"


# 002: grad_ys weights each y; w3 feeds both ys, so its gradient is the sum of both weights.
GRAD_YS = """
import engine as tf

tf.reset_default_graph()
w1 = tf.get_variable('w1', shape=[2])
w2 = tf.get_variable('w2', shape=[2])

w3 = tf.get_variable('w3', shape=[2])
w4 = tf.get_variable('w4', shape=[2])

y1 = w1 + w2+ w3
y2 = w3 + w4
gradients= tf.gradients([y1, y2], [w1, w2, w3, w4])
gradients1 = tf.gradients([y1, y2], [w1, w2, w3, w4], grad_ys=[tf.convert_to_tensor([1.,2.]),
tf.convert_to_tensor([3.,4.])])

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print(sess.run(w1))
    result_w1 = sess.run(w1)
    result1 = sess.run(gradients1)
    result = sess.run(gradients)
    print(result1)
    print(result)
"""


def test_grad_ys_snippet():
    ns, printed = run_snippet(GRAD_YS)
    assert ns["result_w1"].shape == (2,) and ns["result_w1"].dtype == np.float32
    # d(<g1, y1> + <g2, y2>)/dw: w1, w2 only in y1 -> g1; w3 in both -> g1 + g2; w4 -> g2.
    np.testing.assert_array_equal(np.array(ns["result1"]), [[1, 2], [1, 2], [4, 6], [3, 4]])
    np.testing.assert_array_equal(np.array(ns["result"]), [[1, 1], [1, 1], [2, 2], [1, 1]])
    assert "array([4., 6.], dtype=float32)" in printed


# 002: stop_gradient blocks w1 and w2; fetching their None gradients is a TypeError.
STOP_GRADIENT = """
import engine as tf
tf.reset_default_graph()
w1 = tf.get_variable('w1', shape=[2])
w2 = tf.get_variable('w2', shape=[2])

w3 = tf.get_variable('w3', shape=[2])
w4 = tf.get_variable('w4', shape=[2])

y1 = w1 + w2+ w3
y2 = w3 + w4

a = w1+w2
a_stoped = tf.stop_gradient(a)
y3= a_stoped+w3

gradients = tf.gradients([y1, y2], [w1, w2, w3, w4], grad_ys=[tf.convert_to_tensor([1.,2.]),
tf.convert_to_tensor([3.,4.])])
gradients2 = tf.gradients(y3, [w1, w2, w3], grad_ys=tf.convert_to_tensor([1.,2.]))
print(gradients2)

gradients3 = tf.gradients(y3, [w3], grad_ys=tf.convert_to_tensor([1.,2.]))

with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    result = sess.run(gradients)
    print(result)
    #print(sess.run(gradients2))#报错,因为w1和w2梯度停止了
    result3 = sess.run(gradients3)
    print(result3)
"""


def test_stop_gradient_snippet():
    ns, printed = run_snippet(STOP_GRADIENT)
    first_line = printed.splitlines()[0]
    assert re.fullmatch(r"\[None, None, <tf\.Tensor '[\w/]+:0' shape=\(2,\) dtype=float32>\]",
                        first_line), first_line
    np.testing.assert_array_equal(np.array(ns["result"]), [[1, 2], [1, 2], [4, 6], [3, 4]])
    np.testing.assert_array_equal(np.array(ns["result3"]), [[1, 2]])
    # The commented-out line of the seed: fetching the None gradients of w1 and w2 fails.
    with tf.Session(graph=ns["w1"].graph) as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(TypeError, match="None"):
            sess.run(ns["gradients2"])


# 003: collections are a global store keyed by name, read back with get_collection.
def test_collection_snippet_from_the_optimizer_article():
    ns, _ = run_snippet("""
import engine as tf
a = tf.Variable(1.0, name="a")
tf.add_to_collection("module_a", a)
tf.add_to_collection("module_a", tf.constant(2.0, name="b"))
items = tf.get_collection("module_a")
in_scope = tf.get_collection("module_a", scope="b")
""")
    assert ns["items"][0] is ns["a"] and ns["items"][1].name == "b:0"
    assert [t.name for t in ns["in_scope"]] == ["b:0"]
