"""tf.Assert and the tf.assert_* checks against TF 2.21 compat.v1's behaviour on this machine
(the messages below are what TF printed for the same graphs): the run fails with TF's kernel
message only when the condition is false, a check whose values are known when the graph is
built fails at once, and a check gates what depends on it."""

from __future__ import annotations

import numpy as np
import pytest

import engine as tf

pytestmark = pytest.mark.usefixtures("fresh_default_graph")


def _run_error(fetch, feed=None):
    with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError) as caught:
        sess.run(fetch, feed)
    return caught.value.message


def test_assert_prints_its_data_summarized_when_false_and_passes_when_true():
    x = tf.placeholder(tf.int32, [None])
    y = tf.constant([1, 2, 4])
    check = tf.Assert(tf.reduce_all(tf.equal(x, y)), ["msg", x, y, tf.constant(3.5)])
    assert check.type == "Assert" and not check.outputs
    assert _run_error(check, {x: [1, 2, 3]}) == "assertion failed: [msg] [1 2 3] [1 2 4] [3.5]"
    with tf.Session() as sess:
        assert sess.run(check, {x: [1, 2, 4]}) is None


def test_assert_condition_must_be_a_scalar():
    assert _run_error(tf.Assert(tf.constant([True, False]), [1])) == "In[0] should be a scalar: [2]"


def test_binary_checks_name_their_operands_as_tf():
    x = tf.placeholder(tf.int32, [None])
    y = tf.constant([1, 2, 4])
    equal = tf.assert_equal(x, y, message="custom")
    assert _run_error(equal, {x: [1, 2, 3]}) == (
        "assertion failed: [custom] [Condition x == y did not hold element-wise:] "
        "[x (Placeholder:0) = ] [1 2 3] [y (Const:0) = ] [1 2 4]")
    with tf.control_dependencies([tf.assert_less(x, 10)]):
        gated = tf.identity(x)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(gated, {x: [1, 2]}), [1, 2])
        sess.run(equal, {x: [1, 2, 4]})
    assert _run_error(gated, {x: [1, 20]}) == (
        "assertion failed: [Condition x < y did not hold element-wise:] "
        "[x (Placeholder:0) = ] [1 20] [y (assert_less/y:0) = ] [10]")


@pytest.mark.parametrize("check, good, bad", [
    (tf.assert_none_equal, [3, 5], [2, 7]), (tf.assert_less_equal, [1, 2], [2, 3]),
    (tf.assert_greater, [3, 9], [2, 9]), (tf.assert_greater_equal, [2, 3], [1, 5])])
def test_each_binary_check_against_two(check, good, bad):
    x = tf.placeholder(tf.int32, [2])
    op = check(x, 2)
    with tf.Session() as sess:
        sess.run(op, {x: good})
    assert _run_error(op, {x: bad}).startswith("assertion failed: [Condition x ")


def test_sign_checks_put_an_empty_message_first_and_summarize_three_values():
    p = tf.placeholder(tf.float32, [None], name="p")
    assert _run_error(tf.assert_positive(p), {p: [1, -2, 3, 4, 5]}) == (
        "assertion failed: [] [Condition x > 0 did not hold element-wise:] [x (p:0) = ] "
        "[1 -2 3...]")
    with tf.Session() as sess:
        sess.run([tf.assert_non_negative(p), tf.assert_negative(-p - 1),
                  tf.assert_non_positive(-p)], {p: [0, 1]})
    assert "x <= 0" in _run_error(tf.assert_non_positive(p), {p: [0, 1]})


def test_values_known_when_built_fail_at_once():
    with pytest.raises(tf.errors.InvalidArgumentError) as caught:
        tf.assert_equal(tf.constant([1, 2], name="a"), tf.constant([1, 3], name="b"))
    assert str(caught.value) == ("Condition x == y did not hold element-wise:\n"
                                 "x (a:0) = \n[1 2]\ny (b:0) = \n[1 3]")
    tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 2]))  # holds: builds, no error


def test_rank_and_type_checks():
    with pytest.raises(ValueError, match=r"^Tensor c:0 must have rank 2\.  Received rank 1, "
                                         r"shape \(2,\)$"):
        tf.assert_rank(tf.constant([1, 2], name="c"), 2)
    unknown = tf.placeholder(tf.float32)
    check = tf.assert_rank(unknown, 2)
    assert _run_error(check, {unknown: [1.0]}) == (
        "assertion failed: [Tensor Placeholder:0 must have rank] [2] [Received shape: ] [1]")
    with tf.Session() as sess:
        sess.run(check, {unknown: [[1.0]]})
        assert sess.run(tf.rank(unknown), {unknown: np.zeros((2, 3, 4))}) == 3
    assert tf.rank(tf.zeros([2, 5])).op.type == "Const"
    with pytest.raises(TypeError, match=r"^d:0 must be of type tf.float32; got tf.int32$"):
        tf.assert_type(tf.constant([1, 2], name="d"), tf.float32)
    with pytest.raises(ValueError, match="Expected scalar shape"):
        tf.assert_scalar(tf.constant([1.0]))


def test_eager_checks_raise_at_once():
    with tf.eager_mode():
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"^assertion failed: \[bad\] "
                                                                 r"\[1.5\]$"):
            tf.Assert(tf.constant(False), ["bad", tf.constant([1.5])])
        tf.Assert(tf.constant(True), ["fine"])


def test_the_checks_under_tf_debugging():
    """TF 1.13+'s namespace: the same functions, so a failing check there fails the run."""
    x = tf.placeholder(tf.int32, [None])
    assert tf.debugging.assert_equal is tf.assert_equal
    assert tf.debugging.check_numerics is tf.check_numerics
    assert "x == y" in _run_error(tf.debugging.assert_equal(x, 1), {x: [1, 2]})
