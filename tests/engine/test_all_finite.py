"""``all_finite``: the one-op gate the runner puts on a step's loss and gradients."""

import numpy as np
import pytest

import engine as tf
from engine.ops.math import all_finite


@pytest.mark.parametrize("second, want", [
    (np.array([1.0, -2.0, 3e38], np.float32), True),
    (np.array([1.0, np.nan, 0.0], np.float32), False),
    (np.array([-np.inf, 1.0, 0.0], np.float32), False),
])
def test_all_finite_is_false_when_any_element_of_any_input_is_nan_or_inf(second, want):
    g = tf.Graph()
    with g.as_default():
        a = tf.placeholder(tf.float32, [2, 2])
        b = tf.placeholder(tf.float32, [None])
        gate = all_finite([a, b])
        reference = tf.reduce_all(tf.stack([tf.reduce_all(tf.is_finite(a)),
                                            tf.reduce_all(tf.is_finite(b))]))
        assert gate.dtype == tf.bool and gate.shape.as_list() == []
        with tf.Session() as sess:
            got = sess.run([gate, reference], {a: np.ones((2, 2), np.float32), b: second})
    assert got == [want, want]


@pytest.mark.parametrize("size", [3, 70_000])  # concatenated, and an input at a time
@pytest.mark.parametrize("bad", [None, np.nan, np.inf, -np.inf])
def test_all_finite_over_mixed_dtypes_and_sizes(size, bad):
    from engine.ops.math import _all_finite

    arrays = [np.float32(2.5), np.arange(4, dtype=np.int64), np.ones((2, 3), np.float64),
              np.full(size, 3e38, np.float32), np.array([True])]
    if bad is not None:
        arrays[3][-1] = bad
    got = _all_finite(*arrays)
    assert type(got) is np.bool_ and got == (bad is None)


def test_a_tensor_given_twice_is_one_input_of_the_gate():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.float32, [2])
        b = tf.placeholder(tf.float32, [2])
        assert all_finite([a, b, a, b]).op.inputs == [a, b]


def test_the_compiled_pass_answers_as_isfinite(monkeypatch):
    """Where numba is loaded, one compiled pass over the inputs (no concatenation) answers as
    numpy's isfinite for NaN of both signs and infinities in any input, numpy scalars, 0-d,
    empty, strided, integer, bool and complex inputs; a type numba does not take (float16)
    leaves numpy's code to answer."""
    from engine.ops import math as math_ops

    numba = pytest.importorskip("numba")  # noqa: F841 - loaded, as the rnn op's loops load it
    monkeypatch.setattr(math_ops, "_ALL_FINITE_LOOP", math_ops._AllFiniteLoop(
        math_ops._all_finite_loop, 0))
    rng = np.random.default_rng(0)
    base = [np.asarray(np.float32(0.3)), rng.random((34, 12), dtype=np.float32),
            rng.random(12), np.float32(0.5), np.ones((3, 4))[:, ::2]]
    cases = []
    for special in (None, np.nan, -np.nan, np.inf, -np.inf):
        for pos in range(len(base)):
            arrays = [np.array(a) if isinstance(a, np.ndarray) else a for a in base]
            if special is not None and isinstance(arrays[pos], np.ndarray):
                arrays[pos].flat[-1] = special
            elif special is not None:
                arrays[pos] = np.float32(special)
            cases.append(arrays)
    cases += [[np.array([1, 2], np.int64), np.array([True])], [np.array([1 + 2j, np.inf])],
              [np.array([1 + 2j, 3j])], [np.array([], np.float32), np.float64(3.0)],
              [np.array([complex(1, np.nan)])]]
    for arrays in cases:
        want = all(np.isfinite(np.asarray(a)).all() for a in arrays)
        got = math_ops._all_finite(*arrays)
        assert type(got) is np.bool_ and got == want, arrays
    assert math_ops._ALL_FINITE_LOOP.compiled  # it answered them
    assert math_ops._all_finite(np.array([np.inf], np.float16)) == np.False_
    assert math_ops._all_finite(np.ones(2, np.float32)) == np.True_  # numpy's code answers
